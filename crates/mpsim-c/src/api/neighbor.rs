//! Neighbourhood collectives (`MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v/w)`) on
//! Cartesian and graph communicators, and the graphs themselves (`MPI_Dist_graph_create_adjacent`,
//! `MPI_Dist_graph_create`, MPI-1's `MPI_Graph_create`, their queries). Stencil codes
//! exchange halos this way.
//!
//! They are built here from the door's own point-to-point calls, one nonblocking send and
//! receive per neighbour and a wait for all, on a hidden duplicate of the communicator (made by
//! the first neighbourhood collective, which every member calls): the simulator times the
//! messages that really go, and the program's own traffic on the communicator never meets them.
//!
//! Neighbour order is MPI's: on a Cartesian grid, for each dimension the neighbour at -1 then
//! at +1 (`MPI_PROC_NULL` off a non-periodic edge, whose block is left alone); on a graph, the
//! sources and destinations in the order given. Where one rank is a neighbour twice (a periodic
//! dimension of size 1 or 2), a Cartesian exchange tells the two apart by tag (the direction);
//! a graph's relies on MPI's order of messages between two ranks.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use mpsim_door::wire::class;

use super::{Res, comm, ret};
use crate::abi::*;
use crate::state::{self, raise};

/// A distributed graph: this rank's sources and destinations (ranks of the communicator), and
/// their weights when given.
#[derive(Clone, Debug, Default)]
struct Graph {
    sources: Vec<c_int>,
    source_weights: Option<Vec<c_int>>,
    dests: Vec<c_int>,
    dest_weights: Option<Vec<c_int>>,
    /// An MPI-1 graph (`MPI_Graph_create`): its whole `index` and `edges` arrays.
    general: Option<(Vec<c_int>, Vec<c_int>)>,
}

#[derive(Default)]
struct Tables {
    graphs: HashMap<Handle, Graph>,
    /// The hidden duplicate each topology communicator's neighbourhood traffic goes on.
    hidden: HashMap<Handle, Handle>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    let mut g = TABLES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Tables::default))
}

/// `MPI_INT`'s handle (mpi.h).
const MPI_INT: Handle = 0x209;

/// `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` (mpi.h).
const UNWEIGHTED: usize = 10;
const WEIGHTS_EMPTY: usize = 11;

/// `c`'s graph topology for `MPI_Topo_test`: `MPI_GRAPH`, `MPI_DIST_GRAPH`, or `None`.
pub fn graph_kind(c: Handle) -> Option<c_int> {
    with(|t| {
        t.graphs.get(&c).map(|g| match g.general {
            Some(_) => MPI_GRAPH,
            None => MPI_DIST_GRAPH,
        })
    })
}

/// `c`'s MPI-1 graph (`index`, `edges`), or `MPI_ERR_TOPOLOGY`.
fn general(call: &str, c: Handle) -> Res<(Vec<c_int>, Vec<c_int>)> {
    comm(call, c)?;
    with(|t| t.graphs.get(&c).and_then(|g| g.general.clone())).ok_or_else(|| {
        raise(
            Some(c),
            call,
            class::TOPOLOGY,
            "the communicator has no graph topology (MPI_Graph_create)",
        )
    })
}

/// Rank `r`'s neighbours in an MPI-1 graph.
fn general_neighbours(index: &[c_int], edges: &[c_int], r: usize) -> Vec<c_int> {
    let lo = if r == 0 {
        0
    } else {
        index[r - 1].max(0) as usize
    };
    let hi = (index[r].max(0) as usize).min(edges.len());
    edges.get(lo..hi).map(<[c_int]>::to_vec).unwrap_or_default()
}

/// Gives `new`, a duplicate of `old`, `old`'s graph (MPI: a duplicate keeps the topology).
pub fn copy_graph(old: Handle, new: Handle) {
    with(|t| {
        if let Some(g) = t.graphs.get(&old).cloned() {
            t.graphs.insert(new, g);
        }
    });
}

/// Frees what `c` had here (its hidden duplicate), before `c` itself is freed.
pub fn forget(c: Handle) -> Res<()> {
    let hidden = with(|t| {
        t.graphs.remove(&c);
        t.hidden.remove(&c)
    });
    if let Some(mut h) = hidden {
        let rc = unsafe { super::comm::PMPI_Comm_free(&mut h) };
        if rc != state::OK {
            return Err(rc);
        }
    }
    Ok(())
}

/// How a neighbourhood exchange pairs messages.
enum Pairing {
    /// Cartesian: the send to direction `j` has tag `j`; the receive from direction `i` takes
    /// tag `i ^ 1` (what that neighbour sent the other way).
    Directions,
    /// Graph: one tag, in order.
    InOrder,
}

/// `c`'s neighbours: sources, destinations, and how their messages pair.
fn neighbours(call: &str, c: Handle) -> Res<(Vec<c_int>, Vec<c_int>, Pairing)> {
    let info = comm(call, c)?;
    if let Some(g) = with(|t| t.graphs.get(&c).cloned()) {
        return Ok((g.sources, g.dests, Pairing::InOrder));
    }
    let Some(grid) = state::with(|s| s.carts.get(&c).cloned()) else {
        return Err(raise(
            Some(c),
            call,
            class::TOPOLOGY,
            "the communicator has no Cartesian or distributed-graph topology",
        ));
    };
    let me = grid.coords(info.rank as c_int);
    let mut list = Vec::with_capacity(2 * me.len());
    for d in 0..me.len() {
        for step in [-1, 1] {
            let mut at = me.clone();
            at[d] += step;
            list.push(grid.rank(&at).unwrap_or(MPI_PROC_NULL));
        }
    }
    Ok((list.clone(), list, Pairing::Directions))
}

/// The hidden duplicate of `c` (made on first use: every member makes its first neighbourhood
/// collective on `c` at the same point of `c`'s collective order, as MPI requires).
fn hidden(call: &str, c: Handle) -> Res<Handle> {
    if let Some(h) = with(|t| t.hidden.get(&c).copied()) {
        return Ok(h);
    }
    let mut h = MPI_COMM_NULL;
    let rc = unsafe { super::comm::PMPI_Comm_dup(c, &mut h) };
    if rc != state::OK {
        return Err(rc);
    }
    let _ = call;
    with(|t| t.hidden.insert(c, h));
    Ok(h)
}

/// One block of an exchange: buffer address, count, datatype.
type Block = (usize, c_int, Handle);

/// Sends `sends[j]` to destination `j` and receives `recvs[i]` from source `i`, then waits.
fn exchange(call: &str, c: Handle, sends: &[Block], recvs: &[Block]) -> Res<()> {
    let (sources, dests, pairing) = neighbours(call, c)?;
    if sends.len() != dests.len() || recvs.len() != sources.len() {
        return Err(raise(
            Some(c),
            call,
            class::ARG,
            "the block counts do not match the neighbours",
        ));
    }
    let h = hidden(call, c)?;
    let mut reqs = vec![MPI_REQUEST_NULL; sources.len() + dests.len()];
    let tag_in = |i: usize| match pairing {
        Pairing::Directions => (i ^ 1) as c_int,
        Pairing::InOrder => 0,
    };
    let tag_out = |j: usize| match pairing {
        Pairing::Directions => j as c_int,
        Pairing::InOrder => 0,
    };
    for (i, (&src, &(buf, n, dt))) in sources.iter().zip(recvs).enumerate() {
        let rc = unsafe {
            super::p2p::PMPI_Irecv(buf as *mut c_void, n, dt, src, tag_in(i), h, &mut reqs[i])
        };
        if rc != state::OK {
            return Err(rc);
        }
    }
    for (j, (&dst, &(buf, n, dt))) in dests.iter().zip(sends).enumerate() {
        let k = sources.len() + j;
        let rc = unsafe {
            super::p2p::PMPI_Isend(
                buf as *const c_void,
                n,
                dt,
                dst,
                tag_out(j),
                h,
                &mut reqs[k],
            )
        };
        if rc != state::OK {
            return Err(rc);
        }
    }
    let rc = unsafe {
        super::wait::PMPI_Waitall(reqs.len() as c_int, reqs.as_mut_ptr(), std::ptr::null_mut())
    };
    if rc != state::OK {
        return Err(rc);
    }
    Ok(())
}

/// The extent of datatype `dt` (0 if unknown: the exchange then reports the type).
fn extent(dt: Handle) -> isize {
    state::with(|s| s.datatype(dt)).map_or(0, |t| t.extent)
}

unsafe fn list<'a, T>(n: usize, p: *const T) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// Weights as given: `None` for `MPI_UNWEIGHTED` (or null), empty for `MPI_WEIGHTS_EMPTY`.
unsafe fn weights(n: usize, p: *const c_int) -> Option<Vec<c_int>> {
    match p as usize {
        0 | UNWEIGHTED => None,
        WEIGHTS_EMPTY => Some(Vec::new()),
        _ => Some(unsafe { list(n, p) }.to_vec()),
    }
}

/// Makes `out`, a duplicate of `old` with graph `g` (its ranks checked against the size).
fn make_graph(call: &str, old: Handle, g: Graph, out: *mut Handle) -> Res<()> {
    let size = comm(call, old)?.size as c_int;
    if let Some(&r) = g
        .sources
        .iter()
        .chain(&g.dests)
        .find(|&&r| r < 0 || r >= size)
    {
        return Err(raise(
            Some(old),
            call,
            class::RANK,
            &format!("neighbour {r} is not a rank of the communicator of {size}"),
        ));
    }
    let mut h = MPI_COMM_NULL;
    let rc = unsafe { super::comm::PMPI_Comm_dup(old, &mut h) };
    if rc != state::OK {
        return Err(rc);
    }
    with(|t| t.graphs.insert(h, g));
    unsafe { *out = h };
    Ok(())
}

fn count(call: &str, c: Handle, n: c_int) -> Res<usize> {
    super::count(call, c, n)
}

mpi! {
    fn MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent(old: Handle, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, dests: *const c_int, destweights: *const c_int, _info: Handle, _reorder: c_int, out: *mut Handle) -> c_int {
        let call = "MPI_Dist_graph_create_adjacent";
        ret((|| {
            let (i, o) = (count(call, old, indegree)?, count(call, old, outdegree)?);
            let g = unsafe { Graph {
                sources: list(i, sources).to_vec(),
                source_weights: weights(i, sourceweights),
                dests: list(o, dests).to_vec(),
                dest_weights: weights(o, destweights),
                general: None,
            } };
            make_graph(call, old, g, out)
        })())
    }

    fn MPI_Dist_graph_create / PMPI_Dist_graph_create(old: Handle, n: c_int, sources: *const c_int, degrees: *const c_int, dests: *const c_int, weights_in: *const c_int, _info: Handle, _reorder: c_int, out: *mut Handle) -> c_int {
        let call = "MPI_Dist_graph_create";
        ret((|| {
            let info = comm(call, old)?;
            let size = info.size as usize;
            let n = count(call, old, n)?;
            let (src, deg) = unsafe { (list(n, sources), list(n, degrees)) };
            let total = deg.iter().try_fold(0usize, |a, &d| Ok::<usize, c_int>(a + count(call, old, d)?))?;
            let dst = unsafe { list(total, dests) };
            let w = unsafe { weights(total, weights_in) };
            // Every edge this rank names goes to both its ends: (source, dest, weight) triples,
            // sent to the source (an out-edge there) and to the destination (an in-edge).
            let mut to: Vec<Vec<c_int>> = vec![Vec::new(); size];
            let mut k = 0;
            for (&s, &d) in src.iter().zip(deg) {
                for _ in 0..d {
                    let (t, wt) = (dst[k], w.as_ref().and_then(|w| w.get(k).copied()).unwrap_or(1));
                    let ends: &[c_int] = if s == t { &[s] } else { &[s, t] };
                    for &end in ends {
                        let end = usize::try_from(end).ok().filter(|&e| e < size).ok_or_else(|| {
                            raise(Some(old), call, class::RANK, &format!("edge ({s}, {t}) names a rank outside the communicator of {size}"))
                        })?;
                        to[end].extend_from_slice(&[s, t, wt]);
                    }
                    k += 1;
                }
            }
            let send_counts: Vec<c_int> = to.iter().map(|v| v.len() as c_int).collect();
            let mut recv_counts = vec![0 as c_int; size];
            let rc = unsafe { super::coll::PMPI_Alltoall(send_counts.as_ptr().cast(), 1, MPI_INT, recv_counts.as_mut_ptr().cast(), 1, MPI_INT, old) };
            if rc != state::OK {
                return Err(rc);
            }
            let displs = |c: &[c_int]| c.iter().scan(0, |a, &x| { let d = *a; *a += x; Some(d) }).collect::<Vec<c_int>>();
            let (sd, rd) = (displs(&send_counts), displs(&recv_counts));
            let flat: Vec<c_int> = to.concat();
            let mut got = vec![0 as c_int; recv_counts.iter().map(|&x| x as usize).sum()];
            let rc = unsafe { super::coll::PMPI_Alltoallv(flat.as_ptr().cast(), send_counts.as_ptr(), sd.as_ptr(), MPI_INT, got.as_mut_ptr().cast(), recv_counts.as_ptr(), rd.as_ptr(), MPI_INT, old) };
            if rc != state::OK {
                return Err(rc);
            }
            // In the order the triples came: by the rank that named them, then as named.
            let me = info.rank as c_int;
            let mut g = Graph { source_weights: w.as_ref().map(|_| Vec::new()), dest_weights: w.as_ref().map(|_| Vec::new()), ..Graph::default() };
            for e in got.chunks_exact(3) {
                let (s, t, wt) = (e[0], e[1], e[2]);
                if s == me {
                    g.dests.push(t);
                    if let Some(v) = g.dest_weights.as_mut() { v.push(wt) }
                }
                if t == me {
                    g.sources.push(s);
                    if let Some(v) = g.source_weights.as_mut() { v.push(wt) }
                }
            }
            make_graph(call, old, g, out)
        })())
    }

    fn MPI_Graph_create / PMPI_Graph_create(old: Handle, nnodes: c_int, index: *const c_int, edges: *const c_int, _reorder: c_int, out: *mut Handle) -> c_int {
        let call = "MPI_Graph_create";
        ret((|| {
            let info = comm(call, old)?;
            let n = count(call, old, nnodes)?;
            if n > info.size as usize {
                return Err(raise(Some(old), call, class::ARG, &format!("a graph of {n} nodes on {} ranks", info.size)));
            }
            let index = unsafe { list(n, index) }.to_vec();
            if index.windows(2).any(|w| w[1] < w[0]) || index.first().is_some_and(|&i| i < 0) {
                return Err(raise(Some(old), call, class::ARG, "index is not increasing"));
            }
            let edges = unsafe { list(index.last().copied().unwrap_or(0) as usize, edges) }.to_vec();
            if let Some(&e) = edges.iter().find(|&&e| e < 0 || e as usize >= n) {
                return Err(raise(Some(old), call, class::RANK, &format!("edge to {e} in a graph of {n} nodes")));
            }
            // The ranks beyond the graph get MPI_COMM_NULL, as for a Cartesian grid.
            let color = if (info.rank as usize) < n { 0 } else { MPI_UNDEFINED };
            let mut h = MPI_COMM_NULL;
            let rc = unsafe { super::comm::PMPI_Comm_split(old, color, info.rank as c_int, &mut h) };
            if rc != state::OK {
                return Err(rc);
            }
            if h != MPI_COMM_NULL {
                let mine = general_neighbours(&index, &edges, info.rank as usize);
                let g = Graph { sources: mine.clone(), dests: mine, general: Some((index, edges)), ..Graph::default() };
                with(|t| t.graphs.insert(h, g));
            }
            unsafe { *out = h };
            Ok(())
        })())
    }

    fn MPI_Graphdims_get / PMPI_Graphdims_get(c: Handle, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
        ret(general("MPI_Graphdims_get", c).map(|(index, edges)| unsafe {
            *nnodes = index.len() as c_int;
            *nedges = edges.len() as c_int;
        }))
    }

    fn MPI_Graph_get / PMPI_Graph_get(c: Handle, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int {
        ret(general("MPI_Graph_get", c).map(|(ix, ed)| unsafe {
            for (k, &v) in ix.iter().take(maxindex.max(0) as usize).enumerate() {
                *index.add(k) = v;
            }
            for (k, &v) in ed.iter().take(maxedges.max(0) as usize).enumerate() {
                *edges.add(k) = v;
            }
        }))
    }

    fn MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count(c: Handle, rank: c_int, n: *mut c_int) -> c_int {
        let call = "MPI_Graph_neighbors_count";
        ret(general(call, c).and_then(|(ix, ed)| {
            let r = usize::try_from(rank).ok().filter(|&r| r < ix.len()).ok_or_else(|| raise(Some(c), call, class::RANK, &format!("rank {rank} is not a node")))?;
            unsafe { *n = general_neighbours(&ix, &ed, r).len() as c_int };
            Ok(())
        }))
    }

    fn MPI_Graph_neighbors / PMPI_Graph_neighbors(c: Handle, rank: c_int, max: c_int, out: *mut c_int) -> c_int {
        let call = "MPI_Graph_neighbors";
        ret(general(call, c).and_then(|(ix, ed)| {
            let r = usize::try_from(rank).ok().filter(|&r| r < ix.len()).ok_or_else(|| raise(Some(c), call, class::RANK, &format!("rank {rank} is not a node")))?;
            for (k, &v) in general_neighbours(&ix, &ed, r).iter().take(max.max(0) as usize).enumerate() {
                unsafe { *out.add(k) = v };
            }
            Ok(())
        }))
    }

    fn MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count(c: Handle, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int {
        let call = "MPI_Dist_graph_neighbors_count";
        ret(comm(call, c).and_then(|_| {
            let g = with(|t| t.graphs.get(&c).cloned()).ok_or_else(|| raise(Some(c), call, class::TOPOLOGY, "the communicator has no distributed-graph topology"))?;
            unsafe {
                *indegree = g.sources.len() as c_int;
                *outdegree = g.dests.len() as c_int;
                *weighted = g.source_weights.is_some() as c_int;
            }
            Ok(())
        }))
    }

    fn MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors(c: Handle, maxin: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxout: c_int, dests: *mut c_int, destweights: *mut c_int) -> c_int {
        let call = "MPI_Dist_graph_neighbors";
        ret(comm(call, c).and_then(|_| {
            let g = with(|t| t.graphs.get(&c).cloned()).ok_or_else(|| raise(Some(c), call, class::TOPOLOGY, "the communicator has no distributed-graph topology"))?;
            let put = |n: c_int, out: *mut c_int, from: &[c_int]| {
                if out.is_null() || out as usize == UNWEIGHTED || out as usize == WEIGHTS_EMPTY {
                    return;
                }
                for (k, &v) in from.iter().take(n.max(0) as usize).enumerate() {
                    unsafe { *out.add(k) = v };
                }
            };
            put(maxin, sources, &g.sources);
            put(maxout, dests, &g.dests);
            put(maxin, sourceweights, g.source_weights.as_deref().unwrap_or(&[]));
            put(maxout, destweights, g.dest_weights.as_deref().unwrap_or(&[]));
            Ok(())
        }))
    }

    fn MPI_Neighbor_allgather / PMPI_Neighbor_allgather(sendbuf: *const c_void, sc: c_int, st: Handle, recvbuf: *mut c_void, rc: c_int, rt: Handle, c: Handle) -> c_int {
        let call = "MPI_Neighbor_allgather";
        ret((|| {
            let (sources, dests, _) = neighbours(call, c)?;
            let sends = vec![(sendbuf as usize, sc, st); dests.len()];
            let step = rc as isize * extent(rt);
            let recvs: Vec<Block> = (0..sources.len()).map(|i| ((recvbuf as isize + i as isize * step) as usize, rc, rt)).collect();
            exchange(call, c, &sends, &recvs)
        })())
    }

    fn MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv(sendbuf: *const c_void, sc: c_int, st: Handle, recvbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rt: Handle, c: Handle) -> c_int {
        let call = "MPI_Neighbor_allgatherv";
        ret((|| {
            let (sources, dests, _) = neighbours(call, c)?;
            let sends = vec![(sendbuf as usize, sc, st); dests.len()];
            let (rcs, ds) = unsafe { (list(sources.len(), rcounts), list(sources.len(), displs)) };
            let e = extent(rt);
            let recvs: Vec<Block> = rcs.iter().zip(ds).map(|(&n, &d)| ((recvbuf as isize + d as isize * e) as usize, n, rt)).collect();
            exchange(call, c, &sends, &recvs)
        })())
    }

    fn MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall(sendbuf: *const c_void, sc: c_int, st: Handle, recvbuf: *mut c_void, rc: c_int, rt: Handle, c: Handle) -> c_int {
        let call = "MPI_Neighbor_alltoall";
        ret((|| {
            let (sources, dests, _) = neighbours(call, c)?;
            let (ss, rs) = (sc as isize * extent(st), rc as isize * extent(rt));
            let sends: Vec<Block> = (0..dests.len()).map(|j| ((sendbuf as isize + j as isize * ss) as usize, sc, st)).collect();
            let recvs: Vec<Block> = (0..sources.len()).map(|i| ((recvbuf as isize + i as isize * rs) as usize, rc, rt)).collect();
            exchange(call, c, &sends, &recvs)
        })())
    }

    fn MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv(sendbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, st: Handle, recvbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rt: Handle, c: Handle) -> c_int {
        let call = "MPI_Neighbor_alltoallv";
        ret((|| {
            let (sources, dests, _) = neighbours(call, c)?;
            let (sc, sd) = unsafe { (list(dests.len(), scounts), list(dests.len(), sdispls)) };
            let (rc, rd) = unsafe { (list(sources.len(), rcounts), list(sources.len(), rdispls)) };
            let (se, re) = (extent(st), extent(rt));
            let sends: Vec<Block> = sc.iter().zip(sd).map(|(&n, &d)| ((sendbuf as isize + d as isize * se) as usize, n, st)).collect();
            let recvs: Vec<Block> = rc.iter().zip(rd).map(|(&n, &d)| ((recvbuf as isize + d as isize * re) as usize, n, rt)).collect();
            exchange(call, c, &sends, &recvs)
        })())
    }

    fn MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw(sendbuf: *const c_void, scounts: *const c_int, sdispls: *const isize, sts: *const Handle, recvbuf: *mut c_void, rcounts: *const c_int, rdispls: *const isize, rts: *const Handle, c: Handle) -> c_int {
        let call = "MPI_Neighbor_alltoallw";
        ret((|| {
            let (sources, dests, _) = neighbours(call, c)?;
            let (sc, sd, st) = unsafe { (list(dests.len(), scounts), list(dests.len(), sdispls), list(dests.len(), sts)) };
            let (rc, rd, rt) = unsafe { (list(sources.len(), rcounts), list(sources.len(), rdispls), list(sources.len(), rts)) };
            let sends: Vec<Block> = (0..sc.len()).map(|j| ((sendbuf as isize + sd[j]) as usize, sc[j], st[j])).collect();
            let recvs: Vec<Block> = (0..rc.len()).map(|i| ((recvbuf as isize + rd[i]) as usize, rc[i], rt[i])).collect();
            exchange(call, c, &sends, &recvs)
        })())
    }
}
