//! Communicators and groups. Groups are lists of world ranks kept here; making a communicator
//! from a group (`MPI_Comm_create`) is a split at the proxy (color: member or not, key: the
//! position in the group), so every way of making one goes through the same `Comm::split`.

use std::ffi::{c_char, c_int};

use mpsim_door::wire::{Op, class};

use super::{Res, comm, ret};
use crate::abi::*;
use crate::door;
use crate::state::{self, CommInfo, raise};

/// Records a communicator the proxy made (`v = [id, rank, size]`), unless `id` is 0 (none).
fn made(v: [i64; 4], errors_return: bool) -> Handle {
    if v[0] == 0 {
        return MPI_COMM_NULL;
    }
    state::with(|s| {
        let h = s.handle();
        s.comms.insert(
            h,
            CommInfo::intra(v[0], v[1] as u32, v[2] as u32, errors_return).into(),
        );
        h
    })
}

/// Gives `new` (made from `parent`) the program's error handler `parent` has, if any (MPI:
/// a new communicator inherits its parent's handler); returns `new`.
pub(crate) fn inherit(parent: Handle, new: Handle) -> Handle {
    if new != MPI_COMM_NULL
        && let Some(h) = super::errh::handler_of(parent)
    {
        super::errh::set_for(new, Some(h));
    }
    new
}

/// The world ranks of `c`'s members.
pub fn members(call: &str, c: Handle) -> Res<Vec<u32>> {
    let info = comm(call, c)?;
    if let Some(m) = &info.members {
        return Ok(m.clone());
    }
    if c == MPI_COMM_WORLD {
        return Ok((0..info.size).collect());
    }
    let (_, bytes) = door::collect(Op::CommMembers, &[info.id], &[])
        .map_err(|f| state::failed(Some(c), call, f))?;
    let list: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes(b.try_into().unwrap_or([0; 4])))
        .collect();
    state::with(|s| {
        if let Some(i) = s.comms.get_mut(&c) {
            std::sync::Arc::make_mut(i).members = Some(list.clone());
        }
    });
    Ok(list)
}

pub(crate) fn group(call: &str, g: Handle) -> Res<Vec<u32>> {
    if g == MPI_GROUP_EMPTY {
        return Ok(Vec::new());
    }
    state::with(|s| s.groups.get(&g).cloned())
        .ok_or_else(|| raise(None, call, class::GROUP, &format!("{g:#x} is not a group")))
}

pub(crate) fn new_group(list: Vec<u32>) -> Handle {
    if list.is_empty() {
        return MPI_GROUP_EMPTY;
    }
    state::with(|s| {
        let h = s.handle();
        s.groups.insert(h, list);
        h
    })
}

fn compare_lists(a: &[u32], b: &[u32]) -> c_int {
    if a == b {
        MPI_IDENT
    } else if a.len() == b.len() && {
        let (mut x, mut y) = (a.to_vec(), b.to_vec());
        x.sort_unstable();
        y.sort_unstable();
        x == y
    } {
        MPI_SIMILAR
    } else {
        MPI_UNEQUAL
    }
}

unsafe fn ranks<'a>(n: c_int, p: *const c_int) -> &'a [c_int] {
    if n <= 0 || p.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// The group positions `n` triplets `(first, last, stride)` name (`MPI_Group_range_incl`):
/// each in `0..size`, none twice, no stride 0.
unsafe fn expand_ranges(
    call: &str,
    size: usize,
    n: c_int,
    triplets: *const [c_int; 3],
) -> Res<Vec<usize>> {
    let list: &[[c_int; 3]] = if n <= 0 || triplets.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(triplets, n as usize) }
    };
    let mut out: Vec<usize> = Vec::new();
    for &[first, last, stride] in list {
        if stride == 0 {
            return Err(raise(
                None,
                call,
                class::ARG,
                &format!("range ({first}, {last}, 0) has stride 0"),
            ));
        }
        let (first, last, stride) = (first as i64, last as i64, stride as i64);
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            let i = usize::try_from(r)
                .ok()
                .filter(|&i| i < size)
                .ok_or_else(|| {
                    raise(
                        None,
                        call,
                        class::RANK,
                        &format!("rank {r} is not in the group of {size}"),
                    )
                })?;
            if out.contains(&i) {
                return Err(raise(
                    None,
                    call,
                    class::RANK,
                    &format!("rank {r} is named twice"),
                ));
            }
            out.push(i);
            r += stride;
        }
    }
    Ok(out)
}

mpi! {
    fn MPI_Comm_dup / PMPI_Comm_dup(c: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let info = comm("MPI_Comm_dup", c)?;
            let new = match &info.inter {
                Some(x) => super::inter::dup("MPI_Comm_dup", c, &info, x)?,
                None => {
                    let r = door::simple(Op::CommDup, &[info.id], &[]).map_err(|f| state::failed(Some(c), "MPI_Comm_dup", f))?;
                    made(r.v, info.errors_return)
                }
            };
            inherit(c, new);
            // A duplicate keeps the topology.
            state::with(|s| {
                if let Some(grid) = s.carts.get(&c).cloned() {
                    s.carts.insert(new, grid);
                }
            });
            super::neighbor::copy_graph(c, new);
            super::attr::copy_all("MPI_Comm_dup", c, new)?;
            unsafe { *out = new };
            Ok(())
        })())
    }

    fn MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info(c: Handle, _info: Handle, out: *mut Handle) -> c_int {
        unsafe { PMPI_Comm_dup(c, out) }
    }

    // Complete at once: making a communicator takes no message here (its context id is
    // derived from its parent's, docs/p2p.md §6), so there is nothing to wait for.
    fn MPI_Comm_idup / PMPI_Comm_idup(c: Handle, out: *mut Handle, request: *mut Handle) -> c_int {
        let rc = unsafe { PMPI_Comm_dup(c, out) };
        if rc == state::OK {
            unsafe { *request = super::p2p::store(crate::state::Req::Done { status: MpiStatus::empty() }) };
        }
        rc
    }

    fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info(c: Handle, _info: Handle, out: *mut Handle, request: *mut Handle) -> c_int {
        unsafe { PMPI_Comm_idup(c, out, request) }
    }

    fn MPI_Comm_split / PMPI_Comm_split(c: Handle, color: c_int, key: c_int, out: *mut Handle) -> c_int {
        ret((|| {
            let info = comm("MPI_Comm_split", c)?;
            if color < 0 && color != MPI_UNDEFINED {
                return Err(raise(Some(c), "MPI_Comm_split", class::ARG, &format!("color {color} is negative")));
            }
            if let Some(x) = &info.inter {
                let new = super::inter::split("MPI_Comm_split", c, &info, x, color, key)?;
                unsafe { *out = inherit(c, new) };
                return Ok(());
            }
            let color = if color == MPI_UNDEFINED { -1 } else { color as i64 };
            let r = door::simple(Op::CommSplit, &[info.id, color, key as i64], &[])
                .map_err(|f| state::failed(Some(c), "MPI_Comm_split", f))?;
            unsafe { *out = inherit(c, made(r.v, info.errors_return)) };
            Ok(())
        })())
    }

    fn MPI_Comm_create / PMPI_Comm_create(c: Handle, g: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let info = comm("MPI_Comm_create", c)?;
            let list = group("MPI_Comm_create", g)?;
            let me = state::with(|s| s.rank);
            // Ranks may pass different groups if they are disjoint (MPI 7.4.2): each group's
            // lowest world rank is its color.
            let (color, key) = match list.iter().position(|&w| w == me) {
                Some(i) => (list.iter().copied().min().map_or(0, i64::from), i as i64),
                None => (-1, 0),
            };
            if let Some(x) = &info.inter {
                // The group names this rank's side; the remote side's call names the other.
                let color = if color >= 0 { 0 } else { MPI_UNDEFINED };
                let new = super::inter::split("MPI_Comm_create", c, &info, x, color, key as c_int)?;
                unsafe { *out = inherit(c, new) };
                return Ok(());
            }
            let r = door::simple(Op::CommSplit, &[info.id, color, key], &[])
                .map_err(|f| state::failed(Some(c), "MPI_Comm_create", f))?;
            unsafe { *out = inherit(c, made(r.v, info.errors_return)) };
            Ok(())
        })())
    }

    fn MPI_Comm_free / PMPI_Comm_free(c: *mut Handle) -> c_int {
        ret((|| {
            let h = unsafe { *c };
            let info = comm("MPI_Comm_free", h)?;
            if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
                return Err(raise(Some(h), "MPI_Comm_free", class::COMM, "a predefined communicator cannot be freed"));
            }
            super::attr::delete_all("MPI_Comm_free", h)?;
            super::neighbor::forget(h)?;
            door::simple(Op::CommFree, &[info.id], &[]).map_err(|f| state::failed(Some(h), "MPI_Comm_free", f))?;
            if let Some(x) = &info.inter {
                super::inter::free_parts("MPI_Comm_free", x)?;
            }
            state::with(|s| s.comms.remove(&h));
            super::errh::set_for(h, None);
            unsafe { *c = MPI_COMM_NULL };
            Ok(())
        })())
    }

    fn MPI_Comm_compare / PMPI_Comm_compare(a: Handle, b: Handle, result: *mut c_int) -> c_int {
        ret((|| {
            let (ia, ib) = (comm("MPI_Comm_compare", a)?, comm("MPI_Comm_compare", b)?);
            let r = if ia.id == ib.id {
                MPI_IDENT
            } else if ia.inter.is_some() != ib.inter.is_some() {
                MPI_UNEQUAL
            } else if let (Some(xa), Some(xb)) = (&ia.inter, &ib.inter) {
                // Both groups must compare alike; the weaker of the two results holds.
                let local = compare_lists(&members("MPI_Comm_compare", a)?, &members("MPI_Comm_compare", b)?);
                let remote = compare_lists(&xa.remote, &xb.remote);
                match local.max(remote) {
                    MPI_IDENT => MPI_CONGRUENT,
                    other => other,
                }
            } else {
                match compare_lists(&members("MPI_Comm_compare", a)?, &members("MPI_Comm_compare", b)?) {
                    MPI_IDENT => MPI_CONGRUENT,
                    other => other,
                }
            };
            unsafe { *result = r };
            Ok(())
        })())
    }

    fn MPI_Comm_group / PMPI_Comm_group(c: Handle, g: *mut Handle) -> c_int {
        ret(members("MPI_Comm_group", c).map(|m| unsafe { *g = new_group(m) }))
    }

    fn MPI_Comm_set_name / PMPI_Comm_set_name(c: Handle, name: *const c_char) -> c_int {
        ret((|| {
            comm("MPI_Comm_set_name", c)?;
            let text = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned();
            state::with(|s| {
                if let Some(i) = s.comms.get_mut(&c) {
                    std::sync::Arc::make_mut(i).name = text;
                }
            });
            Ok(())
        })())
    }

    fn MPI_Comm_get_name / PMPI_Comm_get_name(c: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
        ret(comm("MPI_Comm_get_name", c).map(|info| unsafe {
            let n = info.name.len().min(MPI_MAX_OBJECT_NAME - 1);
            std::ptr::copy_nonoverlapping(info.name.as_ptr().cast(), name, n);
            *name.add(n) = 0;
            *len = n as c_int;
        }))
    }

    fn MPI_Comm_test_inter / PMPI_Comm_test_inter(c: Handle, flag: *mut c_int) -> c_int {
        ret(comm("MPI_Comm_test_inter", c).map(|i| unsafe { *flag = c_int::from(i.inter.is_some()) }))
    }

    fn MPI_Group_size / PMPI_Group_size(g: Handle, size: *mut c_int) -> c_int {
        ret(group("MPI_Group_size", g).map(|l| unsafe { *size = l.len() as c_int }))
    }

    fn MPI_Group_rank / PMPI_Group_rank(g: Handle, rank: *mut c_int) -> c_int {
        ret(group("MPI_Group_rank", g).map(|l| unsafe {
            let me = state::with(|s| s.rank);
            *rank = l.iter().position(|&w| w == me).map_or(MPI_UNDEFINED, |i| i as c_int);
        }))
    }

    fn MPI_Group_free / PMPI_Group_free(g: *mut Handle) -> c_int {
        let h = unsafe { *g };
        state::with(|s| s.groups.remove(&h));
        unsafe { *g = MPI_GROUP_NULL };
        0
    }

    fn MPI_Group_incl / PMPI_Group_incl(g: Handle, n: c_int, list: *const c_int, out: *mut Handle) -> c_int {
        ret((|| {
            let l = group("MPI_Group_incl", g)?;
            let mut sel = Vec::new();
            for &r in unsafe { ranks(n, list) } {
                let w = usize::try_from(r).ok().and_then(|i| l.get(i)).copied()
                    .ok_or_else(|| raise(None, "MPI_Group_incl", class::RANK, &format!("rank {r} is not in the group of {}", l.len())))?;
                sel.push(w);
            }
            unsafe { *out = new_group(sel) };
            Ok(())
        })())
    }

    fn MPI_Group_excl / PMPI_Group_excl(g: Handle, n: c_int, list: *const c_int, out: *mut Handle) -> c_int {
        ret((|| {
            let l = group("MPI_Group_excl", g)?;
            let drop: Vec<c_int> = unsafe { ranks(n, list) }.to_vec();
            if let Some(&r) = drop.iter().find(|&&r| r < 0 || r as usize >= l.len()) {
                return Err(raise(None, "MPI_Group_excl", class::RANK, &format!("rank {r} is not in the group of {}", l.len())));
            }
            let kept = l.iter().enumerate().filter(|(i, _)| !drop.contains(&(*i as c_int))).map(|(_, &w)| w).collect();
            unsafe { *out = new_group(kept) };
            Ok(())
        })())
    }

    fn MPI_Group_range_incl / PMPI_Group_range_incl(g: Handle, n: c_int, triplets: *const [c_int; 3], out: *mut Handle) -> c_int {
        ret((|| {
            let l = group("MPI_Group_range_incl", g)?;
            let picked = unsafe { expand_ranges("MPI_Group_range_incl", l.len(), n, triplets) }?;
            unsafe { *out = new_group(picked.into_iter().map(|i| l[i]).collect()) };
            Ok(())
        })())
    }

    fn MPI_Group_range_excl / PMPI_Group_range_excl(g: Handle, n: c_int, triplets: *const [c_int; 3], out: *mut Handle) -> c_int {
        ret((|| {
            let l = group("MPI_Group_range_excl", g)?;
            let drop = unsafe { expand_ranges("MPI_Group_range_excl", l.len(), n, triplets) }?;
            let kept = l.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &w)| w).collect();
            unsafe { *out = new_group(kept) };
            Ok(())
        })())
    }

    fn MPI_Comm_split_type / PMPI_Comm_split_type(c: Handle, kind: c_int, key: c_int, _info: Handle, out: *mut Handle) -> c_int {
        let color = match kind {
            // One shared-memory node holds every rank: the threads backend runs on one host, and
            // a machine model has no nodes to tell apart (docs/c.md).
            MPI_COMM_TYPE_SHARED | MPI_COMM_TYPE_HW_UNGUIDED | MPI_COMM_TYPE_HW_GUIDED
            | MPI_COMM_TYPE_RESOURCE_GUIDED => 0,
            MPI_UNDEFINED => MPI_UNDEFINED,
            other => {
                if let Err(e) = comm("MPI_Comm_split_type", c) {
                    return e;
                }
                return raise(Some(c), "MPI_Comm_split_type", class::ARG, &format!("{other} is not a split type"));
            }
        };
        unsafe { PMPI_Comm_split(c, color, key, out) }
    }

    fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks(a: Handle, n: c_int, ra: *const c_int, b: Handle, rb: *mut c_int) -> c_int {
        ret((|| {
            let (la, lb) = (group("MPI_Group_translate_ranks", a)?, group("MPI_Group_translate_ranks", b)?);
            for (k, &r) in unsafe { ranks(n, ra) }.iter().enumerate() {
                let t = if r == MPI_PROC_NULL {
                    MPI_PROC_NULL
                } else {
                    let w = usize::try_from(r).ok().and_then(|i| la.get(i)).copied()
                        .ok_or_else(|| raise(None, "MPI_Group_translate_ranks", class::RANK, &format!("rank {r} is not in the group")))?;
                    lb.iter().position(|&x| x == w).map_or(MPI_UNDEFINED, |i| i as c_int)
                };
                unsafe { *rb.add(k) = t };
            }
            Ok(())
        })())
    }

    fn MPI_Group_compare / PMPI_Group_compare(a: Handle, b: Handle, result: *mut c_int) -> c_int {
        ret((|| {
            let r = compare_lists(&group("MPI_Group_compare", a)?, &group("MPI_Group_compare", b)?);
            unsafe { *result = r };
            Ok(())
        })())
    }

    fn MPI_Group_union / PMPI_Group_union(a: Handle, b: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let (la, lb) = (group("MPI_Group_union", a)?, group("MPI_Group_union", b)?);
            let mut l = la.clone();
            l.extend(lb.into_iter().filter(|w| !la.contains(w)));
            unsafe { *out = new_group(l) };
            Ok(())
        })())
    }

    fn MPI_Group_intersection / PMPI_Group_intersection(a: Handle, b: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let (la, lb) = (group("MPI_Group_intersection", a)?, group("MPI_Group_intersection", b)?);
            unsafe { *out = new_group(la.into_iter().filter(|w| lb.contains(w)).collect()) };
            Ok(())
        })())
    }

    fn MPI_Group_difference / PMPI_Group_difference(a: Handle, b: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let (la, lb) = (group("MPI_Group_difference", a)?, group("MPI_Group_difference", b)?);
            unsafe { *out = new_group(la.into_iter().filter(|w| !lb.contains(w)).collect()) };
            Ok(())
        })())
    }
}
