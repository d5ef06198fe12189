//! Collectives: packed on this side, executed by the proxy with the `Comm` collectives (so the
//! simulator times the algorithm mpsim chose), unpacked here.
//!
//! Reductions need their element type: a datatype made of one primitive type (`MPI_DOUBLE`,
//! a contiguous or vector of `MPI_INT`, the pair types of `MPI_MINLOC`/`MPI_MAXLOC`) crosses as
//! that type. A user operation (`MPI_Op_create`) runs in this process, where its code is: the
//! contributions are gathered (to the root, or to all) and combined here in rank order.

use std::ffi::{c_int, c_void};

use mpsim_door::wire::{Elem, Op, ReduceOp, class};

use super::{Res, comm, count, datatype, packed, ret};
use crate::abi::*;
use crate::door;
use crate::dtype::Datatype;
use crate::state::{self, CommInfo, UserOp, raise};

/// A reduction's operation: built in, or the program's own.
enum Reduction {
    Builtin(ReduceOp),
    User(UserOp),
}

fn reduction(call: &str, c: Handle, op: Handle) -> Res<Reduction> {
    let b = match op {
        MPI_SUM => ReduceOp::Sum,
        MPI_PROD => ReduceOp::Prod,
        MPI_MIN => ReduceOp::Min,
        MPI_MAX => ReduceOp::Max,
        MPI_BAND => ReduceOp::Band,
        MPI_BOR => ReduceOp::Bor,
        MPI_BXOR => ReduceOp::Bxor,
        MPI_LAND => ReduceOp::Land,
        MPI_LOR => ReduceOp::Lor,
        MPI_LXOR => ReduceOp::Lxor,
        MPI_MINLOC => ReduceOp::Minloc,
        MPI_MAXLOC => ReduceOp::Maxloc,
        MPI_REPLACE => ReduceOp::Replace,
        MPI_NO_OP => ReduceOp::NoOp,
        _ => {
            return state::with(|s| s.ops.get(&op).copied())
                .map(Reduction::User)
                .ok_or_else(|| {
                    raise(
                        Some(c),
                        call,
                        class::OP,
                        &format!("{op:#x} is not an operation"),
                    )
                });
        }
    };
    Ok(Reduction::Builtin(b))
}

/// The element type a reduction on `t` works on, and elements per datatype element.
fn elem(call: &str, c: Handle, t: &Datatype) -> Res<(Elem, usize)> {
    t.elem.ok_or_else(|| {
        raise(
            Some(c),
            call,
            class::TYPE,
            &format!(
                "{} is not a type a built-in reduction works on",
                if t.name.is_empty() {
                    "the datatype"
                } else {
                    &t.name
                }
            ),
        )
    })
}

fn in_place(p: *const c_void) -> bool {
    p as usize == MPI_IN_PLACE
}

fn check_root(call: &str, c: Handle, info: &CommInfo, root: c_int) -> Res<()> {
    if (0..info.size as c_int).contains(&root) {
        Ok(())
    } else {
        Err(raise(
            Some(c),
            call,
            class::ROOT,
            &format!(
                "root {root} is not in the communicator of {} ranks",
                info.size
            ),
        ))
    }
}

/// Unpacks `data` into `n` elements of `t` at `buf`.
unsafe fn unpack(data: &[u8], buf: *mut c_void, n: usize, t: &Datatype) {
    if data.is_empty() {
        return;
    }
    if t.is_contiguous() {
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                buf.cast::<u8>(),
                data.len().min(t.size * n),
            )
        };
    } else {
        unsafe { t.unpack(data, buf.cast(), n) };
    }
}

/// Unpacks blocks of `counts[i]` elements of `t` at displacements `displs[i]` (in extents).
unsafe fn unpack_v(
    data: &[u8],
    buf: *mut c_void,
    counts: &[usize],
    displs: &[isize],
    t: &Datatype,
) {
    let mut at = 0;
    for (&n, &d) in counts.iter().zip(displs) {
        let len = n * t.size;
        let part = &data[at.min(data.len())..(at + len).min(data.len())];
        at += len;
        unsafe { unpack(part, buf.cast::<u8>().offset(d * t.extent).cast(), n, t) };
    }
}

unsafe fn pack_v(buf: *const c_void, counts: &[usize], displs: &[isize], t: &Datatype) -> Vec<u8> {
    let mut out = Vec::new();
    for (&n, &d) in counts.iter().zip(displs) {
        let p = unsafe { buf.cast::<u8>().offset(d * t.extent) };
        out.extend_from_slice(&unsafe { packed(p.cast(), n, t) });
    }
    out
}

unsafe fn ints(p: *const c_int, n: u32) -> Vec<c_int> {
    if p.is_null() {
        return vec![0; n as usize];
    }
    unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
}

fn counts_of(call: &str, c: Handle, v: &[c_int]) -> Res<Vec<usize>> {
    v.iter().map(|&n| count(call, c, n)).collect()
}

fn u64s(v: &[usize]) -> Vec<u8> {
    v.iter().flat_map(|&n| (n as u64).to_ne_bytes()).collect()
}

fn run(call: &str, c: Handle, op: Op, a: &[i64], payload: &[&[u8]]) -> Res<Vec<u8>> {
    door::collect(op, a, payload)
        .map(|(_, d)| d)
        .map_err(|f| state::failed(Some(c), call, f))
}

/// Applies a user operation: `inout = a ⊕ inout`, `n` elements of `dt`.
unsafe fn apply(f: &UserOp, a: &[u8], inout: &mut [u8], n: usize, dt: Handle) {
    let mut len = n as c_int;
    let mut d = dt;
    let mut a = a.to_vec();
    unsafe {
        (f.f)(
            a.as_mut_ptr().cast(),
            inout.as_mut_ptr().cast(),
            &mut len,
            &mut d,
        )
    };
}

/// Combines the blocks of `all` (one per rank, in rank order) with a user operation, rank
/// order: `x0 ⊕ (x1 ⊕ (... ⊕ x(n-1)))` over the first `upto` blocks.
unsafe fn fold(
    f: &UserOp,
    all: &[u8],
    block: usize,
    upto: usize,
    n: usize,
    t: &Datatype,
    dt: Handle,
) -> Vec<u8> {
    // The operation works on the datatype's own layout: unpack each block into it.
    let span = (t.extent.max(0) as usize) * n.max(1) + t.lb.unsigned_abs() + 64;
    let layout = |bytes: &[u8]| {
        let mut buf = vec![0u8; span];
        unsafe { unpack(bytes, buf.as_mut_ptr().cast(), n, t) };
        buf
    };
    let mut acc = layout(&all[(upto - 1) * block..upto * block]);
    for i in (0..upto - 1).rev() {
        let x = layout(&all[i * block..(i + 1) * block]);
        unsafe { apply(f, &x, &mut acc, n, dt) };
    }
    unsafe { packed(acc.as_ptr().cast(), n, t) }.into_owned()
}

mpi! {
    fn MPI_Barrier / PMPI_Barrier(c: Handle) -> c_int {
        ret((|| {
            let info = comm("MPI_Barrier", c)?;
            run("MPI_Barrier", c, Op::Barrier, &[info.id], &[]).map(drop)
        })())
    }

    fn MPI_Bcast / PMPI_Bcast(buf: *mut c_void, n: c_int, dt: Handle, root: c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Bcast";
            let info = comm(call, c)?;
            let n = count(call, c, n)?;
            let t = datatype(call, c, dt)?;
            check_root(call, c, &info, root)?;
            let mine = info.rank as c_int == root;
            let data = if mine { unsafe { packed(buf, n, &t) }.into_owned() } else { Vec::new() };
            let got = run(call, c, Op::Bcast, &[info.id, root as i64, (t.size * n) as i64], &[&data])?;
            if !mine {
                unsafe { unpack(&got, buf, n, &t) };
            }
            Ok(())
        })())
    }

    fn MPI_Reduce / PMPI_Reduce(sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, root: c_int, c: Handle) -> c_int {
        ret(unsafe { reduce("MPI_Reduce", sbuf, rbuf, n, dt, op, Some(root), c, Op::Reduce) })
    }

    fn MPI_Allreduce / PMPI_Allreduce(sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) -> c_int {
        ret(unsafe { reduce("MPI_Allreduce", sbuf, rbuf, n, dt, op, None, c, Op::Allreduce) })
    }

    fn MPI_Scan / PMPI_Scan(sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) -> c_int {
        ret(unsafe { reduce("MPI_Scan", sbuf, rbuf, n, dt, op, None, c, Op::Scan) })
    }

    fn MPI_Exscan / PMPI_Exscan(sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) -> c_int {
        ret(unsafe { reduce("MPI_Exscan", sbuf, rbuf, n, dt, op, None, c, Op::Exscan) })
    }

    fn MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block(sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Reduce_scatter_block";
            let info = comm(call, c)?;
            let n = count(call, c, n)?;
            let counts = vec![n as c_int; info.size as usize];
            unsafe { reduce_scatter(call, sbuf, rbuf, &counts, dt, op, c, &info) }
        })())
    }

    fn MPI_Reduce_scatter / PMPI_Reduce_scatter(sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: Handle, op: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Reduce_scatter";
            let info = comm(call, c)?;
            let counts = unsafe { ints(counts, info.size) };
            unsafe { reduce_scatter(call, sbuf, rbuf, &counts, dt, op, c, &info) }
        })())
    }

    fn MPI_Gather / PMPI_Gather(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Gather";
            let info = comm(call, c)?;
            check_root(call, c, &info, root)?;
            let at_root = info.rank as c_int == root;
            let data = if at_root && in_place(sbuf) {
                let rn = count(call, c, rcount)?;
                let rt = datatype(call, c, rdt)?;
                let mine = unsafe { rbuf.cast::<u8>().offset(info.rank as isize * rn as isize * rt.extent) };
                unsafe { packed(mine.cast(), rn, &rt) }.into_owned()
            } else {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                unsafe { packed(sbuf, sn, &st) }.into_owned()
            };
            let got = run(call, c, Op::Gather, &[info.id, root as i64, data.len() as i64], &[&data])?;
            if at_root {
                let rn = count(call, c, rcount)?;
                let rt = datatype(call, c, rdt)?;
                unsafe { unpack(&got, rbuf, rn * info.size as usize, &rt) };
            }
            Ok(())
        })())
    }

    fn MPI_Gatherv / PMPI_Gatherv(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, root: c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Gatherv";
            let info = comm(call, c)?;
            check_root(call, c, &info, root)?;
            let at_root = info.rank as c_int == root;
            let (counts, disp, rt) = if at_root {
                let rt = datatype(call, c, rdt)?;
                let counts = counts_of(call, c, &unsafe { ints(rcounts, info.size) })?;
                let disp: Vec<isize> = unsafe { ints(displs, info.size) }.into_iter().map(|d| d as isize).collect();
                (counts, disp, Some(rt))
            } else {
                (Vec::new(), Vec::new(), None)
            };
            let data = if at_root && in_place(sbuf) {
                let rt = rt.as_ref().expect("root has its type");
                let me = info.rank as usize;
                let p = unsafe { rbuf.cast::<u8>().offset(disp[me] * rt.extent) };
                unsafe { packed(p.cast(), counts[me], rt) }.into_owned()
            } else {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                unsafe { packed(sbuf, sn, &st) }.into_owned()
            };
            let byte_counts: Vec<usize> = match &rt { Some(rt) => counts.iter().map(|&n| n * rt.size).collect(), None => Vec::new() };
            let got = run(call, c, Op::Gatherv, &[info.id, root as i64, data.len() as i64], &[&data, &u64s(&byte_counts)])?;
            if let Some(rt) = rt {
                unsafe { unpack_v(&got, rbuf, &counts, &disp, &rt) };
            }
            Ok(())
        })())
    }

    fn MPI_Scatter / PMPI_Scatter(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Scatter";
            let info = comm(call, c)?;
            check_root(call, c, &info, root)?;
            let at_root = info.rank as c_int == root;
            let place = at_root && in_place(rbuf);
            let (data, block) = if at_root {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                (unsafe { packed(sbuf, sn * info.size as usize, &st) }.into_owned(), sn * st.size)
            } else {
                let rn = count(call, c, rcount)?;
                let rt = datatype(call, c, rdt)?;
                (Vec::new(), rn * rt.size)
            };
            let got = run(call, c, Op::Scatter, &[info.id, root as i64, block as i64], &[&data])?;
            if !place {
                let rn = count(call, c, rcount)?;
                let rt = datatype(call, c, rdt)?;
                unsafe { unpack(&got, rbuf, rn, &rt) };
            }
            Ok(())
        })())
    }

    fn MPI_Scatterv / PMPI_Scatterv(sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Scatterv";
            let info = comm(call, c)?;
            check_root(call, c, &info, root)?;
            let at_root = info.rank as c_int == root;
            let place = at_root && in_place(rbuf);
            let (rn, rt) = if place { (0, None) } else { (count(call, c, rcount)?, Some(datatype(call, c, rdt)?)) };
            let mut payload = Vec::new();
            if at_root {
                let st = datatype(call, c, sdt)?;
                let counts = counts_of(call, c, &unsafe { ints(scounts, info.size) })?;
                let disp: Vec<isize> = unsafe { ints(displs, info.size) }.into_iter().map(|d| d as isize).collect();
                let bytes: Vec<usize> = counts.iter().map(|&n| n * st.size).collect();
                payload.extend_from_slice(&u64s(&bytes));
                payload.extend_from_slice(&unsafe { pack_v(sbuf, &counts, &disp, &st) });
            }
            let recv_bytes = rt.as_ref().map_or_else(
                || {
                    // In place: the root keeps its block; it receives its own count.
                    let mine = unsafe { ints(scounts, info.size) }[info.rank as usize].max(0) as usize;
                    mine * state::with(|s| s.datatype(sdt)).map_or(0, |t| t.size)
                },
                |t| rn * t.size,
            );
            let got = run(call, c, Op::Scatterv, &[info.id, root as i64, recv_bytes as i64], &[&payload])?;
            if let Some(rt) = rt {
                unsafe { unpack(&got, rbuf, rn, &rt) };
            }
            Ok(())
        })())
    }

    fn MPI_Allgather / PMPI_Allgather(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Allgather";
            let info = comm(call, c)?;
            let rn = count(call, c, rcount)?;
            let rt = datatype(call, c, rdt)?;
            let data = if in_place(sbuf) {
                let mine = unsafe { rbuf.cast::<u8>().offset(info.rank as isize * rn as isize * rt.extent) };
                unsafe { packed(mine.cast(), rn, &rt) }.into_owned()
            } else {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                unsafe { packed(sbuf, sn, &st) }.into_owned()
            };
            let got = run(call, c, Op::Allgather, &[info.id], &[&data])?;
            unsafe { unpack(&got, rbuf, rn * info.size as usize, &rt) };
            Ok(())
        })())
    }

    fn MPI_Allgatherv / PMPI_Allgatherv(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Allgatherv";
            let info = comm(call, c)?;
            let rt = datatype(call, c, rdt)?;
            let counts = counts_of(call, c, &unsafe { ints(rcounts, info.size) })?;
            let disp: Vec<isize> = unsafe { ints(displs, info.size) }.into_iter().map(|d| d as isize).collect();
            let data = if in_place(sbuf) {
                let me = info.rank as usize;
                let p = unsafe { rbuf.cast::<u8>().offset(disp[me] * rt.extent) };
                unsafe { packed(p.cast(), counts[me], &rt) }.into_owned()
            } else {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                unsafe { packed(sbuf, sn, &st) }.into_owned()
            };
            let bytes: Vec<usize> = counts.iter().map(|&n| n * rt.size).collect();
            let got = run(call, c, Op::Allgatherv, &[info.id, data.len() as i64], &[&data, &u64s(&bytes)])?;
            unsafe { unpack_v(&got, rbuf, &counts, &disp, &rt) };
            Ok(())
        })())
    }

    fn MPI_Alltoall / PMPI_Alltoall(sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Alltoall";
            let info = comm(call, c)?;
            let rn = count(call, c, rcount)?;
            let rt = datatype(call, c, rdt)?;
            let data = if in_place(sbuf) {
                unsafe { packed(rbuf, rn * info.size as usize, &rt) }.into_owned()
            } else {
                let sn = count(call, c, scount)?;
                let st = datatype(call, c, sdt)?;
                unsafe { packed(sbuf, sn * info.size as usize, &st) }.into_owned()
            };
            let got = run(call, c, Op::Alltoall, &[info.id], &[&data])?;
            unsafe { unpack(&got, rbuf, rn * info.size as usize, &rt) };
            Ok(())
        })())
    }

    fn MPI_Alltoallv / PMPI_Alltoallv(sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Alltoallv";
            let info = comm(call, c)?;
            let rt = datatype(call, c, rdt)?;
            let rc = counts_of(call, c, &unsafe { ints(rcounts, info.size) })?;
            let rd: Vec<isize> = unsafe { ints(rdispls, info.size) }.into_iter().map(|d| d as isize).collect();
            let (sc, data) = if in_place(sbuf) {
                (rc.iter().map(|&n| n * rt.size).collect::<Vec<_>>(), unsafe { pack_v(rbuf, &rc, &rd, &rt) })
            } else {
                let st = datatype(call, c, sdt)?;
                let sc = counts_of(call, c, &unsafe { ints(scounts, info.size) })?;
                let sd: Vec<isize> = unsafe { ints(sdispls, info.size) }.into_iter().map(|d| d as isize).collect();
                (sc.iter().map(|&n| n * st.size).collect(), unsafe { pack_v(sbuf, &sc, &sd, &st) })
            };
            let rb: Vec<usize> = rc.iter().map(|&n| n * rt.size).collect();
            let got = run(call, c, Op::Alltoallv, &[info.id, data.len() as i64], &[&u64s(&sc), &u64s(&rb), &data])?;
            unsafe { unpack_v(&got, rbuf, &rc, &rd, &rt) };
            Ok(())
        })())
    }
}

/// The reductions (`Reduce` with a root, `Allreduce`, `Scan`, `Exscan`).
#[allow(clippy::too_many_arguments)]
unsafe fn reduce(
    call: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    n: c_int,
    dt: Handle,
    op: Handle,
    root: Option<c_int>,
    c: Handle,
    wire: Op,
) -> Res<()> {
    let info = comm(call, c)?;
    let n = count(call, c, n)?;
    let t = datatype(call, c, dt)?;
    if let Some(root) = root {
        check_root(call, c, &info, root)?;
    }
    let receives = root.is_none_or(|r| r == info.rank as c_int);
    let from = if in_place(sbuf) {
        rbuf as *const c_void
    } else {
        sbuf
    };
    let data = unsafe { packed(from, n, &t) }.into_owned();
    match reduction(call, c, op)? {
        Reduction::Builtin(b) => {
            let (e, k) = elem(call, c, &t)?;
            let a = match root {
                Some(r) => vec![info.id, r as i64, e as i64, b as i64, (n * k) as i64],
                None => vec![info.id, e as i64, b as i64, (n * k) as i64],
            };
            let got = run(call, c, wire, &a, &[&data])?;
            if receives && !(wire == Op::Exscan && info.rank == 0) {
                unsafe { unpack(&got, rbuf, n, &t) };
            }
        }
        Reduction::User(f) => {
            // Gather every contribution here (to all: the calls stay collective), combine
            // in rank order.
            let block = data.len();
            let all = run(call, c, Op::Allgather, &[info.id], &[&data])?;
            let me = info.rank as usize;
            let upto = match wire {
                Op::Scan => me + 1,
                Op::Exscan => me,
                _ => info.size as usize,
            };
            if receives && upto > 0 && block > 0 {
                let out = unsafe { fold(&f, &all, block, upto, n, &t, dt) };
                unsafe { unpack(&out, rbuf, n, &t) };
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(
    call: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: &[c_int],
    dt: Handle,
    op: Handle,
    c: Handle,
    info: &CommInfo,
) -> Res<()> {
    let counts = counts_of(call, c, counts)?;
    let t = datatype(call, c, dt)?;
    let total: usize = counts.iter().sum();
    let from = if in_place(sbuf) {
        rbuf as *const c_void
    } else {
        sbuf
    };
    let data = unsafe { packed(from, total, &t) }.into_owned();
    let me = info.rank as usize;
    match reduction(call, c, op)? {
        Reduction::Builtin(b) => {
            let (e, k) = elem(call, c, &t)?;
            let elems: Vec<usize> = counts.iter().map(|&n| n * k).collect();
            let got = run(
                call,
                c,
                Op::ReduceScatter,
                &[info.id, e as i64, b as i64],
                &[&u64s(&elems), &data],
            )?;
            unsafe { unpack(&got, rbuf, counts[me], &t) };
        }
        Reduction::User(f) => {
            let all = run(call, c, Op::Allgather, &[info.id], &[&data])?;
            let block = data.len();
            if block > 0 {
                let out = unsafe { fold(&f, &all, block, info.size as usize, total, &t, dt) };
                let start: usize = counts[..me].iter().sum::<usize>() * t.size;
                let part = &out[start..start + counts[me] * t.size];
                unsafe { unpack(part, rbuf, counts[me], &t) };
            }
        }
    }
    Ok(())
}
