//! Intercommunicators (MPI 7.6): `MPI_Intercomm_create`, `MPI_Intercomm_merge`, the calls that
//! make, compare and free communicators on an intercommunicator, and its collectives.
//!
//! An intercommunicator is made of communicators the proxy already has, none of them new to
//! the simulator:
//!
//! - the *union*: both groups as one intracommunicator, the group whose rank 0 has the lower
//!   world rank first (`MPI_Comm_create_group` on the world: no message);
//! - its *point-to-point side*, the handle's own proxy id (`Comm::intercomm` on the union): the
//!   rank is the local one, the ranks a call names are the remote group's, and a status's
//!   source is the sender's rank in its group, so every point-to-point call (sends in every
//!   mode, receives, probes, persistent requests, `MPI_ANY_SOURCE`) works on it unchanged;
//! - a second such side, hidden, for the collectives' traffic between the groups;
//! - the *local* communicator (its group alone, `create_group` on the union), for the
//!   collectives' traffic within a group.
//!
//! The collectives are built from these with this library's own calls (point-to-point between
//! the groups, collectives within one), so the simulator times the messages that really go.
//! Their nonblocking and persistent forms run the blocking form at the call and return a
//! request that is complete (`docs/c.md` says so).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mpsim_door::wire::{Op, class};

use super::{Res, comm, ret};
use crate::abi::*;
use crate::door;
use crate::state::{self, CommInfo, Req, raise};

/// An intercommunicator's parts (module docs).
#[derive(Debug)]
pub struct Inter {
    /// Both groups as one intracommunicator (hidden handle).
    pub union: Handle,
    /// The local group (hidden handle).
    pub local: Handle,
    /// The hidden intercommunicator that carries the collectives' traffic between the groups.
    pub coll: Handle,
    /// World ranks of the remote group, in its rank order.
    pub remote: Vec<u32>,
    /// Whether the local group comes first in the union.
    pub first: bool,
}

/// `MPI_INT`.
const INT: Handle = 0x209;

/// Tags of the `create_group` calls on a union (each is a key of its own, module docs of
/// `mpsim::comm`).
const TAG_LOCAL: i64 = 1;
const TAG_MERGE: i64 = 2;
const TAG_SPLIT: i64 = 3;

fn ok(rc: c_int) -> Res<()> {
    if rc == state::OK { Ok(()) } else { Err(rc) }
}

/// The intercommunicator parts of `c`, if it is one.
pub fn of(c: Handle) -> Option<Arc<Inter>> {
    state::with(|s| s.comms.get(&c).and_then(|i| i.inter.clone()))
}

/// Records a communicator of the proxy's (`v = [id, rank, size]`) under a new handle.
fn record(info: CommInfo) -> Handle {
    state::with(|s| {
        let h = s.handle();
        s.comms.insert(h, info.into());
        h
    })
}

fn le_u32s(list: &[u32]) -> Vec<u8> {
    list.iter().flat_map(|r| r.to_ne_bytes()).collect()
}

/// `MPI_Comm_create_group` at the proxy on `parent` (proxy id) over `members` (its ranks).
fn create_group(call: &str, c: Handle, parent: i64, members: &[u32], tag: i64) -> Res<[i64; 4]> {
    door::simple(Op::CommCreateGroup, &[parent, tag], &[&le_u32s(members)])
        .map(|r| r.v)
        .map_err(|f| state::failed(Some(c), call, f))
}

/// An intercommunicator's point-to-point side on `union` (proxy id).
fn side(call: &str, c: Handle, union: i64, local: &[u32], remote: &[u32]) -> Res<i64> {
    let list: Vec<u32> = local.iter().chain(remote).copied().collect();
    door::simple(
        Op::CommInter,
        &[union, local.len() as i64],
        &[&le_u32s(&list)],
    )
    .map(|r| r.v[0])
    .map_err(|f| state::failed(Some(c), call, f))
}

/// Makes the intercommunicator whose union is `union` (a handle already recorded; its first
/// `n_first` ranks are the first group), this rank's group first or not, with world ranks
/// `local` and `remote`. Returns its handle.
fn build(
    call: &str,
    c: Handle,
    union: Handle,
    first: bool,
    local: Vec<u32>,
    remote: Vec<u32>,
    errors_return: bool,
) -> Res<Handle> {
    let u = comm(call, union)?;
    let (nl, nr) = (local.len() as u32, remote.len() as u32);
    let (lo, ro) = if first { (0, nl) } else { (nr, 0) };
    let lranks: Vec<u32> = (lo..lo + nl).collect();
    let rranks: Vec<u32> = (ro..ro + nr).collect();
    let p2p = side(call, c, u.id, &lranks, &rranks)?;
    let coll = side(call, c, u.id, &lranks, &rranks)?;
    let lv = create_group(call, c, u.id, &lranks, TAG_LOCAL)?;
    let rank = lv[1] as u32;
    let local_h = record(CommInfo {
        members: Some(local.clone()),
        ..CommInfo::intra(lv[0], rank, nl, errors_return)
    });
    let parts = |coll_h| {
        Arc::new(Inter {
            union,
            local: local_h,
            coll: coll_h,
            remote: remote.clone(),
            first,
        })
    };
    let inter_info = |id, inter| CommInfo {
        members: Some(local.clone()),
        peers: nr,
        inter: Some(inter),
        ..CommInfo::intra(id, rank, nl, errors_return)
    };
    let coll_h = record(inter_info(coll, parts(0)));
    let whole = parts(coll_h);
    if errors_return {
        set_errors(call, &whole, true)?;
        door::simple(Op::SetErrhandler, &[p2p, 1], &[])
            .map_err(|f| state::failed(None, call, f))?;
    }
    Ok(record(inter_info(p2p, whole)))
}

/// MPI_ERR_COMM for a call that needs an intracommunicator.
pub fn not_on_inter(call: &str, c: Handle) -> c_int {
    raise(
        Some(c),
        call,
        class::COMM,
        "not defined on an intercommunicator (MPI 7.6)",
    )
}

/// Frees the proxy's side of hidden handle `h`.
fn free_hidden(call: &str, h: Handle) -> Res<()> {
    if let Some(info) = state::with(|s| s.comms.remove(&h)) {
        door::simple(Op::CommFree, &[info.id], &[]).map_err(|f| state::failed(None, call, f))?;
    }
    Ok(())
}

/// `MPI_Comm_free` of intercommunicator `h`'s hidden parts (the caller frees `h`'s own side).
pub fn free_parts(call: &str, x: &Inter) -> Res<()> {
    free_hidden(call, x.coll)?;
    free_hidden(call, x.local)?;
    free_hidden(call, x.union)
}

/// Makes the hidden parts of an intercommunicator return their errors (`errors_return`) or
/// end the run, as the program set for the intercommunicator: an error inside one of its
/// collectives is then returned by that collective, with its class.
pub fn set_errors(call: &str, x: &Inter, errors_return: bool) -> Res<()> {
    for h in [x.union, x.local, x.coll] {
        let Some(id) = state::with(|s| {
            let i = Arc::make_mut(s.comms.get_mut(&h)?);
            i.errors_return = errors_return;
            Some(i.id)
        }) else {
            continue;
        };
        door::simple(Op::SetErrhandler, &[id, errors_return as i64], &[])
            .map_err(|f| state::failed(None, call, f))?;
    }
    Ok(())
}

/// At `MPI_Finalize`: frees the hidden parts of the intercommunicators the program did not
/// free, so that the run's `comm-leak` warning counts each of those once, as the program made it.
pub fn release_hidden(call: &str) -> Res<()> {
    let mut open: Vec<(Handle, Arc<Inter>)> = state::with(|s| {
        s.comms
            .iter()
            .filter_map(|(&h, i)| i.inter.clone().map(|x| (h, x)))
            .filter(|(_, x)| x.coll != 0)
            .collect()
    });
    // In handle order, so that a simulated run makes the same calls every time.
    open.sort_unstable_by_key(|(h, _)| *h);
    for (_, x) in open {
        free_parts(call, &x)?;
    }
    Ok(())
}

/// `MPI_Comm_dup` of an intercommunicator: a dup of the union, and new parts on it.
pub fn dup(call: &str, c: Handle, info: &CommInfo, x: &Inter) -> Res<Handle> {
    let u = comm(call, x.union)?;
    let r = door::simple(Op::CommDup, &[u.id], &[]).map_err(|f| state::failed(Some(c), call, f))?;
    let union = record(CommInfo::intra(r.v[0], r.v[1] as u32, r.v[2] as u32, false));
    let local = info.members.clone().unwrap_or_default();
    build(
        call,
        c,
        union,
        x.first,
        local,
        x.remote.clone(),
        info.errors_return,
    )
}

/// `MPI_Comm_split` (and, with a color for members and their position as key,
/// `MPI_Comm_create`) of an intercommunicator: each group splits by color; a color's local
/// and remote members make an intercommunicator, `MPI_COMM_NULL` when either is empty.
pub fn split(
    call: &str,
    c: Handle,
    info: &CommInfo,
    x: &Inter,
    color: c_int,
    key: c_int,
) -> Res<Handle> {
    let u = comm(call, x.union)?;
    let n = u.size as usize;
    let mine = [color, key];
    let mut all = vec![0 as c_int; 2 * n];
    ok(unsafe {
        super::coll::PMPI_Allgather(
            mine.as_ptr().cast(),
            2,
            INT,
            all.as_mut_ptr().cast(),
            2,
            INT,
            x.union,
        )
    })?;
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let (nl, nr) = (info.size as usize, x.remote.len());
    let (lo, ro) = if x.first { (0, nl) } else { (nr, 0) };
    // Union ranks of a group's members of `color`, by (key, rank).
    let pick = |from: usize, len: usize| {
        let mut v: Vec<(c_int, u32)> = (from..from + len)
            .filter(|&r| all[2 * r] == color)
            .map(|r| (all[2 * r + 1], r as u32))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, r)| r).collect::<Vec<u32>>()
    };
    let (lsel, rsel) = (pick(lo, nl), pick(ro, nr));
    if lsel.is_empty() || rsel.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    let members: Vec<u32> = if x.first {
        lsel.iter().chain(&rsel).copied().collect()
    } else {
        rsel.iter().chain(&lsel).copied().collect()
    };
    let union_world = super::comm::members(call, x.union)?;
    let world = |sel: &[u32]| {
        sel.iter()
            .map(|&r| union_world[r as usize])
            .collect::<Vec<u32>>()
    };
    let v = create_group(call, c, u.id, &members, TAG_SPLIT)?;
    let union = record(CommInfo::intra(v[0], v[1] as u32, v[2] as u32, false));
    build(
        call,
        c,
        union,
        x.first,
        world(&lsel),
        world(&rsel),
        info.errors_return,
    )
}

/// Reads the remote group's copy of `mine` (leaders exchange over `coll`, then each group's
/// leader broadcasts it), `n` ints.
fn swap_ints(x: &Inter, info: &CommInfo, mine: &[c_int]) -> Res<Vec<c_int>> {
    let n = mine.len() as c_int;
    let mut theirs = vec![0 as c_int; mine.len()];
    if info.rank == 0 {
        ok(unsafe {
            super::p2p::PMPI_Sendrecv(
                mine.as_ptr().cast(),
                n,
                INT,
                0,
                0,
                theirs.as_mut_ptr().cast(),
                n,
                INT,
                0,
                0,
                x.coll,
                std::ptr::null_mut(),
            )
        })?;
    }
    ok(unsafe { super::coll::PMPI_Bcast(theirs.as_mut_ptr().cast(), n, INT, 0, x.local) })?;
    Ok(theirs)
}

/// Whether error handler `h` (given to a `_from_group` call) returns errors.
fn returns(h: Handle) -> bool {
    h == MPI_ERRORS_RETURN || super::errh::is_program_handler(h)
}

/// Gives `c` the program's handler `h`, if it is one.
fn take_handler(c: Handle, h: Handle) {
    if super::errh::is_program_handler(h) {
        super::errh::set_for(c, Some(h));
    }
}

/// A string tag (`MPI_Comm_create_from_group`) as a tag: FNV-1a of its bytes, in `0..=TAG_UB`.
fn string_tag(p: *const std::ffi::c_char) -> i64 {
    let bytes = if p.is_null() {
        &[][..]
    } else {
        unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes()
    };
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (h & TAG_UB as u64) as i64
}

mpi! {
    fn MPI_Intercomm_create / PMPI_Intercomm_create(
        local_comm: Handle, local_leader: c_int, peer_comm: Handle, remote_leader: c_int,
        tag: c_int, out: *mut Handle,
    ) -> c_int {
        let call = "MPI_Intercomm_create";
        ret((|| {
            let info = comm(call, local_comm)?;
            if info.inter.is_some() {
                return Err(not_on_inter(call, local_comm));
            }
            if !(0..info.size as c_int).contains(&local_leader) {
                return Err(raise(Some(local_comm), call, class::RANK,
                    &format!("local leader {local_leader} is not in the local communicator of {}", info.size)));
            }
            let local = super::comm::members(call, local_comm)?;
            // The leaders swap their groups over the peer communicator, with the program's tag
            // (real messages, as MPI has them), then each tells its group.
            let mut counts = [local.len() as c_int, 0];
            if info.rank as c_int == local_leader {
                comm(call, peer_comm)?;
                let (a, b) = counts.split_at_mut(1);
                ok(unsafe { super::p2p::PMPI_Sendrecv(a.as_ptr().cast(), 1, INT, remote_leader, tag,
                    b.as_mut_ptr().cast(), 1, INT, remote_leader, tag, peer_comm, std::ptr::null_mut()) })?;
            }
            ok(unsafe { super::coll::PMPI_Bcast(counts[1..].as_mut_ptr().cast(), 1, INT, local_leader, local_comm) })?;
            let nr = usize::try_from(counts[1]).unwrap_or(0);
            let mut remote = vec![0u32; nr];
            if info.rank as c_int == local_leader {
                ok(unsafe { super::p2p::PMPI_Sendrecv(local.as_ptr().cast(), local.len() as c_int, INT, remote_leader, tag,
                    remote.as_mut_ptr().cast(), nr as c_int, INT, remote_leader, tag, peer_comm, std::ptr::null_mut()) })?;
            }
            ok(unsafe { super::coll::PMPI_Bcast(remote.as_mut_ptr().cast(), nr as c_int, INT, local_leader, local_comm) })?;
            if remote.is_empty() || remote.iter().any(|w| local.contains(w)) {
                return Err(raise(Some(local_comm), call, class::ARG,
                    "the two groups must be disjoint and not empty"));
            }
            let first = local[0] < remote[0];
            let union_list: Vec<u32> = if first {
                local.iter().chain(&remote).copied().collect()
            } else {
                remote.iter().chain(&local).copied().collect()
            };
            let v = create_group(call, local_comm, MPI_COMM_WORLD as i64, &union_list, i64::from(tag & TAG_UB))?;
            let union = record(CommInfo::intra(v[0], v[1] as u32, v[2] as u32, false));
            let h = build(call, local_comm, union, first, local, remote, info.errors_return)?;
            unsafe { *out = super::comm::inherit(local_comm, h) };
            Ok(())
        })())
    }

    // MPI-4's form from groups: both groups are known here, so no message is needed at all;
    // the string tag, hashed, keys the union as `MPI_Intercomm_create`'s tag does.
    fn MPI_Intercomm_create_from_groups / PMPI_Intercomm_create_from_groups(
        local_group: Handle, _local_leader: c_int, remote_group: Handle, _remote_leader: c_int,
        stringtag: *const std::ffi::c_char, _info: Handle, errhandler: Handle, out: *mut Handle,
    ) -> c_int {
        let call = "MPI_Intercomm_create_from_groups";
        ret((|| {
            super::live(call)?;
            let local = super::comm::group(call, local_group)?;
            let remote = super::comm::group(call, remote_group)?;
            let me = state::with(|s| s.rank);
            if !local.contains(&me) || remote.is_empty() || remote.iter().any(|w| local.contains(w)) {
                return Err(raise(None, call, class::GROUP,
                    "the local group must hold the caller, and the two groups be disjoint and not empty"));
            }
            let first = local[0] < remote[0];
            let union_list: Vec<u32> = if first {
                local.iter().chain(&remote).copied().collect()
            } else {
                remote.iter().chain(&local).copied().collect()
            };
            let tag = string_tag(stringtag);
            let v = create_group(call, MPI_COMM_WORLD, MPI_COMM_WORLD as i64, &union_list, tag)?;
            let union = record(CommInfo::intra(v[0], v[1] as u32, v[2] as u32, false));
            let errors_return = returns(errhandler);
            let h = build(call, MPI_COMM_WORLD, union, first, local, remote, errors_return)?;
            take_handler(h, errhandler);
            unsafe { *out = h };
            Ok(())
        })())
    }

    fn MPI_Comm_create_from_group / PMPI_Comm_create_from_group(
        g: Handle, stringtag: *const std::ffi::c_char, _info: Handle, errhandler: Handle, out: *mut Handle,
    ) -> c_int {
        let call = "MPI_Comm_create_from_group";
        ret((|| {
            super::live(call)?;
            let list = super::comm::group(call, g)?;
            let me = state::with(|s| s.rank);
            if !list.contains(&me) {
                return Err(raise(None, call, class::GROUP, "the calling process is not in the group"));
            }
            let v = create_group(call, MPI_COMM_WORLD, MPI_COMM_WORLD as i64, &list, string_tag(stringtag))?;
            let errors_return = returns(errhandler);
            let h = record(CommInfo {
                members: Some(list),
                ..CommInfo::intra(v[0], v[1] as u32, v[2] as u32, errors_return)
            });
            if errors_return {
                door::simple(Op::SetErrhandler, &[v[0], 1], &[]).map_err(|f| state::failed(None, call, f))?;
            }
            take_handler(h, errhandler);
            unsafe { *out = h };
            Ok(())
        })())
    }

    fn MPI_Intercomm_merge / PMPI_Intercomm_merge(c: Handle, high: c_int, out: *mut Handle) -> c_int {
        let call = "MPI_Intercomm_merge";
        ret((|| {
            let info = comm(call, c)?;
            let Some(x) = info.inter.clone() else {
                return Err(raise(Some(c), call, class::COMM, "not an intercommunicator"));
            };
            let mine = c_int::from(high != 0);
            let theirs = swap_ints(&x, &info, &[mine])?[0];
            // The group that passed `high` false comes first; when both passed the same, the
            // union's order decides (MPI leaves that choice to the implementation).
            let local_first = if mine == theirs { x.first } else { mine == 0 };
            let (nl, nr) = (info.size, x.remote.len() as u32);
            let (lo, ro) = if x.first { (0, nl) } else { (nr, 0) };
            let (l, r): (Vec<u32>, Vec<u32>) = ((lo..lo + nl).collect(), (ro..ro + nr).collect());
            let members: Vec<u32> = if local_first { [l, r].concat() } else { [r, l].concat() };
            let u = comm(call, x.union)?;
            let v = create_group(call, c, u.id, &members, TAG_MERGE)?;
            let h = record(CommInfo::intra(v[0], v[1] as u32, v[2] as u32, info.errors_return));
            unsafe { *out = super::comm::inherit(c, h) };
            Ok(())
        })())
    }

    fn MPI_Comm_remote_size / PMPI_Comm_remote_size(c: Handle, size: *mut c_int) -> c_int {
        let call = "MPI_Comm_remote_size";
        ret(comm(call, c).and_then(|info| match &info.inter {
            Some(x) => {
                unsafe { *size = x.remote.len() as c_int };
                Ok(())
            }
            None => Err(raise(Some(c), call, class::COMM, "not an intercommunicator")),
        }))
    }

    fn MPI_Comm_remote_group / PMPI_Comm_remote_group(c: Handle, g: *mut Handle) -> c_int {
        let call = "MPI_Comm_remote_group";
        ret(comm(call, c).and_then(|info| match &info.inter {
            Some(x) => {
                unsafe { *g = super::comm::new_group(x.remote.clone()) };
                Ok(())
            }
            None => Err(raise(Some(c), call, class::COMM, "not an intercommunicator")),
        }))
    }

    fn MPI_Comm_create_group / PMPI_Comm_create_group(c: Handle, g: Handle, tag: c_int, out: *mut Handle) -> c_int {
        let call = "MPI_Comm_create_group";
        ret((|| {
            let info = comm(call, c)?;
            if info.inter.is_some() {
                return Err(not_on_inter(call, c));
            }
            if !(0..=TAG_UB).contains(&tag) {
                return Err(raise(Some(c), call, class::TAG, &format!("tag {tag} is not in 0..={TAG_UB}")));
            }
            let list = super::comm::group(call, g)?;
            let members = super::comm::members(call, c)?;
            let me = state::with(|s| s.rank);
            if !list.contains(&me) {
                return Err(raise(Some(c), call, class::GROUP, "the calling process is not in the group"));
            }
            let mut ranks = Vec::with_capacity(list.len());
            for w in &list {
                let r = members.iter().position(|m| m == w).ok_or_else(|| raise(Some(c), call, class::GROUP,
                    &format!("world rank {w} of the group is not in the communicator")))?;
                ranks.push(r as u32);
            }
            let v = create_group(call, c, info.id, &ranks, i64::from(tag))?;
            let h = record(CommInfo {
                members: Some(list),
                ..CommInfo::intra(v[0], v[1] as u32, v[2] as u32, info.errors_return)
            });
            unsafe { *out = super::comm::inherit(c, h) };
            Ok(())
        })())
    }
}

/// The intercommunicator forms of the collectives (MPI 6.2.2), each with the arguments of its
/// intracommunicator form in `api/coll.rs`. A request argument gets a request complete
/// already: the collective ran at the call.
pub mod coll {
    use super::*;
    use crate::api::{coll as c, p2p, wait};

    /// The request of a nonblocking form, complete.
    unsafe fn done(r: Option<*mut Handle>) {
        if let Some(r) = r {
            unsafe {
                *r = p2p::store(Req::Done {
                    status: MpiStatus::empty(),
                })
            };
        }
    }

    fn parts(call: &str, comm_h: Handle) -> Res<(Arc<CommInfo>, Arc<Inter>)> {
        let info = comm(call, comm_h)?;
        let x = info.inter.clone().ok_or_else(|| {
            raise(
                Some(comm_h),
                call,
                class::INTERN,
                "not an intercommunicator",
            )
        })?;
        Ok((info, x))
    }

    /// What `root` means on this rank: `Some(true)` the root, `Some(false)` the root's group
    /// but not the root, `None` the other group (then the root is remote rank `root`).
    fn role(call: &str, c_h: Handle, x: &Inter, root: c_int) -> Res<Option<bool>> {
        match root {
            MPI_ROOT => Ok(Some(true)),
            MPI_PROC_NULL => Ok(Some(false)),
            r if (0..x.remote.len() as c_int).contains(&r) => Ok(None),
            r => Err(raise(
                Some(c_h),
                call,
                class::ROOT,
                &format!(
                    "root {r} is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of {}",
                    x.remote.len()
                ),
            )),
        }
    }

    /// Posts a send of each of `sends` to remote rank `i` (its index) and a receive of each of
    /// `recvs` from remote rank `i`, with `tag` (the collective's own), then waits for all.
    #[allow(clippy::too_many_arguments)]
    unsafe fn exchange(
        x: &Inter,
        tag: c_int,
        sends: &[(*const c_void, c_int, Handle)],
        recvs: &[(*mut c_void, c_int, Handle)],
    ) -> Res<()> {
        let mut reqs = Vec::with_capacity(sends.len() + recvs.len());
        for (i, &(b, n, t)) in recvs.iter().enumerate() {
            let mut r = MPI_REQUEST_NULL;
            ok(unsafe { p2p::PMPI_Irecv(b, n, t, i as c_int, tag, x.coll, &mut r) })?;
            reqs.push(r);
        }
        for (i, &(b, n, t)) in sends.iter().enumerate() {
            let mut r = MPI_REQUEST_NULL;
            ok(unsafe { p2p::PMPI_Isend(b, n, t, i as c_int, tag, x.coll, &mut r) })?;
            reqs.push(r);
        }
        ok(unsafe {
            wait::PMPI_Waitall(reqs.len() as c_int, reqs.as_mut_ptr(), std::ptr::null_mut())
        })
    }

    fn extent(call: &str, ch: Handle, t: Handle) -> Res<isize> {
        Ok(super::super::datatype(call, ch, t)?.extent)
    }

    fn at<T>(p: *const T, bytes: isize) -> *mut c_void {
        unsafe { (p as *const u8).offset(bytes) as *mut c_void }
    }

    unsafe fn ints(p: *const c_int, n: usize) -> Vec<c_int> {
        if p.is_null() || n == 0 {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
        }
    }

    pub unsafe fn barrier(call: &str, ch: Handle, r: Option<*mut Handle>) -> Res<()> {
        let (info, x) = parts(call, ch)?;
        ok(unsafe { c::PMPI_Barrier(x.local) })?;
        let _ = swap_ints(&x, &info, &[0])?;
        unsafe { done(r) };
        Ok(())
    }

    pub unsafe fn bcast(
        call: &str,
        buf: *mut c_void,
        n: c_int,
        dt: Handle,
        root: c_int,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (info, x) = parts(call, ch)?;
        match role(call, ch, &x, root)? {
            Some(true) => ok(unsafe { p2p::PMPI_Send(buf, n, dt, 0, 2, x.coll) })?,
            Some(false) => {}
            None => {
                if info.rank == 0 {
                    ok(unsafe {
                        p2p::PMPI_Recv(buf, n, dt, root, 2, x.coll, std::ptr::null_mut())
                    })?;
                }
                ok(unsafe { c::PMPI_Bcast(buf, n, dt, 0, x.local) })?;
            }
        }
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gather(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: Handle,
        root: c_int,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        match role(call, ch, &x, root)? {
            Some(true) => {
                let e = extent(call, ch, rdt)? * rcount as isize;
                let recvs: Vec<_> = (0..x.remote.len())
                    .map(|i| (at(rbuf, i as isize * e), rcount, rdt))
                    .collect();
                unsafe { exchange(&x, 3, &[], &recvs) }?;
            }
            Some(false) => {}
            None => ok(unsafe { p2p::PMPI_Send(sbuf, scount, sdt, root, 3, x.coll) })?,
        }
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gatherv(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: Handle,
        root: c_int,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        match role(call, ch, &x, root)? {
            Some(true) => {
                let e = extent(call, ch, rdt)?;
                let n = x.remote.len();
                let (counts, displs) = unsafe { (ints(rcounts, n), ints(displs, n)) };
                let recvs: Vec<_> = (0..n)
                    .map(|i| (at(rbuf, displs[i] as isize * e), counts[i], rdt))
                    .collect();
                unsafe { exchange(&x, 3, &[], &recvs) }?;
            }
            Some(false) => {}
            None => ok(unsafe { p2p::PMPI_Send(sbuf, scount, sdt, root, 3, x.coll) })?,
        }
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn scatter(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: Handle,
        root: c_int,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        match role(call, ch, &x, root)? {
            Some(true) => {
                let e = extent(call, ch, sdt)? * scount as isize;
                let sends: Vec<_> = (0..x.remote.len())
                    .map(|i| (at(sbuf, i as isize * e) as *const c_void, scount, sdt))
                    .collect();
                unsafe { exchange(&x, 4, &sends, &[]) }?;
            }
            Some(false) => {}
            None => ok(unsafe {
                p2p::PMPI_Recv(rbuf, rcount, rdt, root, 4, x.coll, std::ptr::null_mut())
            })?,
        }
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn scatterv(
        call: &str,
        sbuf: *const c_void,
        scounts: *const c_int,
        displs: *const c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: Handle,
        root: c_int,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        match role(call, ch, &x, root)? {
            Some(true) => {
                let e = extent(call, ch, sdt)?;
                let n = x.remote.len();
                let (counts, displs) = unsafe { (ints(scounts, n), ints(displs, n)) };
                let sends: Vec<_> = (0..n)
                    .map(|i| {
                        (
                            at(sbuf, displs[i] as isize * e) as *const c_void,
                            counts[i],
                            sdt,
                        )
                    })
                    .collect();
                unsafe { exchange(&x, 4, &sends, &[]) }?;
            }
            Some(false) => {}
            None => ok(unsafe {
                p2p::PMPI_Recv(rbuf, rcount, rdt, root, 4, x.coll, std::ptr::null_mut())
            })?,
        }
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn allgather(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        let n = x.remote.len();
        let e = extent(call, ch, rdt)? * rcount as isize;
        let sends: Vec<_> = (0..n).map(|_| (sbuf, scount, sdt)).collect();
        let recvs: Vec<_> = (0..n)
            .map(|i| (at(rbuf, i as isize * e), rcount, rdt))
            .collect();
        unsafe { exchange(&x, 1, &sends, &recvs) }?;
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn allgatherv(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        let n = x.remote.len();
        let e = extent(call, ch, rdt)?;
        let (counts, displs) = unsafe { (ints(rcounts, n), ints(displs, n)) };
        let sends: Vec<_> = (0..n).map(|_| (sbuf, scount, sdt)).collect();
        let recvs: Vec<_> = (0..n)
            .map(|i| (at(rbuf, displs[i] as isize * e), counts[i], rdt))
            .collect();
        unsafe { exchange(&x, 1, &sends, &recvs) }?;
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn alltoall(
        call: &str,
        sbuf: *const c_void,
        scount: c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        let n = x.remote.len();
        let (se, re) = (
            extent(call, ch, sdt)? * scount as isize,
            extent(call, ch, rdt)? * rcount as isize,
        );
        let sends: Vec<_> = (0..n)
            .map(|i| (at(sbuf, i as isize * se) as *const c_void, scount, sdt))
            .collect();
        let recvs: Vec<_> = (0..n)
            .map(|i| (at(rbuf, i as isize * re), rcount, rdt))
            .collect();
        unsafe { exchange(&x, 1, &sends, &recvs) }?;
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn alltoallv(
        call: &str,
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdt: Handle,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdt: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        let n = x.remote.len();
        let (se, re) = (extent(call, ch, sdt)?, extent(call, ch, rdt)?);
        let (sc, sd, rc, rd) = unsafe {
            (
                ints(scounts, n),
                ints(sdispls, n),
                ints(rcounts, n),
                ints(rdispls, n),
            )
        };
        let sends: Vec<_> = (0..n)
            .map(|i| (at(sbuf, sd[i] as isize * se) as *const c_void, sc[i], sdt))
            .collect();
        let recvs: Vec<_> = (0..n)
            .map(|i| (at(rbuf, rd[i] as isize * re), rc[i], rdt))
            .collect();
        unsafe { exchange(&x, 1, &sends, &recvs) }?;
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn alltoallw(
        call: &str,
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdts: *const Handle,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdts: *const Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (_, x) = parts(call, ch)?;
        let n = x.remote.len();
        let (sc, sd, rc, rd) = unsafe {
            (
                ints(scounts, n),
                ints(sdispls, n),
                ints(rcounts, n),
                ints(rdispls, n),
            )
        };
        let handles = |p: *const Handle| {
            if p.is_null() {
                vec![MPI_DATATYPE_NULL; n]
            } else {
                unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
            }
        };
        let (st, rt) = (handles(sdts), handles(rdts));
        let sends: Vec<_> = (0..n)
            .map(|i| (at(sbuf, sd[i] as isize) as *const c_void, sc[i], st[i]))
            .collect();
        let recvs: Vec<_> = (0..n)
            .map(|i| (at(rbuf, rd[i] as isize), rc[i], rt[i]))
            .collect();
        unsafe { exchange(&x, 1, &sends, &recvs) }?;
        unsafe { done(r) };
        Ok(())
    }

    /// A scratch buffer for `n` elements of `dt` (with room for its lower bound).
    fn scratch(call: &str, ch: Handle, n: c_int, dt: Handle) -> Res<(Vec<u8>, isize)> {
        let t = super::super::datatype(call, ch, dt)?;
        let span =
            t.extent.unsigned_abs().max(t.size) * (n.max(1) as usize) + t.lb.unsigned_abs() + 64;
        Ok((vec![0u8; span], -t.lb.min(0)))
    }

    /// `MPI_Reduce` (root) and `MPI_Allreduce` (no root); `MPI_Scan` and `MPI_Exscan` are not
    /// defined on intercommunicators.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce(
        call: &str,
        sbuf: *const c_void,
        rbuf: *mut c_void,
        n: c_int,
        dt: Handle,
        op: Handle,
        root: Option<c_int>,
        ch: Handle,
        kind: Op,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (info, x) = parts(call, ch)?;
        match (kind, root) {
            (Op::Reduce, Some(root)) => match role(call, ch, &x, root)? {
                Some(true) => {
                    ok(unsafe { p2p::PMPI_Recv(rbuf, n, dt, 0, 5, x.coll, std::ptr::null_mut()) })?
                }
                Some(false) => {}
                None => {
                    let (mut tmp, off) = scratch(call, ch, n, dt)?;
                    let t = at(tmp.as_mut_ptr(), off);
                    ok(unsafe { c::PMPI_Reduce(sbuf, t, n, dt, op, 0, x.local) })?;
                    if info.rank == 0 {
                        ok(unsafe { p2p::PMPI_Send(t, n, dt, root, 5, x.coll) })?;
                    }
                }
            },
            (Op::Allreduce, _) => {
                // Each group reduces its own data to its rank 0, the leaders swap, and each
                // broadcasts what it got: the remote group's reduction.
                let (mut tmp, off) = scratch(call, ch, n, dt)?;
                let t = at(tmp.as_mut_ptr(), off);
                ok(unsafe { c::PMPI_Reduce(sbuf, t, n, dt, op, 0, x.local) })?;
                if info.rank == 0 {
                    ok(unsafe {
                        p2p::PMPI_Sendrecv(
                            t,
                            n,
                            dt,
                            0,
                            6,
                            rbuf,
                            n,
                            dt,
                            0,
                            6,
                            x.coll,
                            std::ptr::null_mut(),
                        )
                    })?;
                }
                ok(unsafe { c::PMPI_Bcast(rbuf, n, dt, 0, x.local) })?;
            }
            _ => return Err(not_on_inter(call, ch)),
        }
        unsafe { done(r) };
        Ok(())
    }

    /// `MPI_Reduce_scatter` with this group's `counts`: the other group's data, reduced, is
    /// scattered over this group.
    #[allow(clippy::too_many_arguments)]
    unsafe fn reduce_scatter_counts(
        call: &str,
        sbuf: *const c_void,
        rbuf: *mut c_void,
        counts: &[c_int],
        dt: Handle,
        op: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let (info, x) = parts(call, ch)?;
        let total: c_int = counts.iter().sum();
        let (mut mine, moff) = scratch(call, ch, total, dt)?;
        let (mut got, goff) = scratch(call, ch, total, dt)?;
        let (m, g) = (at(mine.as_mut_ptr(), moff), at(got.as_mut_ptr(), goff));
        ok(unsafe { c::PMPI_Reduce(sbuf, m, total, dt, op, 0, x.local) })?;
        if info.rank == 0 {
            ok(unsafe {
                p2p::PMPI_Sendrecv(
                    m,
                    total,
                    dt,
                    0,
                    7,
                    g,
                    total,
                    dt,
                    0,
                    7,
                    x.coll,
                    std::ptr::null_mut(),
                )
            })?;
        }
        let mut displs = Vec::with_capacity(counts.len());
        let mut at_ = 0;
        for &k in counts {
            displs.push(at_);
            at_ += k;
        }
        let me = info.rank as usize;
        ok(unsafe {
            c::PMPI_Scatterv(
                g,
                counts.as_ptr(),
                displs.as_ptr(),
                dt,
                rbuf,
                counts[me],
                dt,
                0,
                x.local,
            )
        })?;
        unsafe { done(r) };
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce_scatter_block(
        call: &str,
        sbuf: *const c_void,
        rbuf: *mut c_void,
        n: c_int,
        dt: Handle,
        op: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let info = comm(call, ch)?;
        let counts = vec![n; info.size as usize];
        unsafe { reduce_scatter_counts(call, sbuf, rbuf, &counts, dt, op, ch, r) }
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce_scatter(
        call: &str,
        sbuf: *const c_void,
        rbuf: *mut c_void,
        counts: *const c_int,
        dt: Handle,
        op: Handle,
        ch: Handle,
        r: Option<*mut Handle>,
    ) -> Res<()> {
        let info = comm(call, ch)?;
        let counts = unsafe { ints(counts, info.size as usize) };
        unsafe { reduce_scatter_counts(call, sbuf, rbuf, &counts, dt, op, ch, r) }
    }

    /// Whether `c` is an intercommunicator (the collectives' entry points ask).
    pub fn is(ch: Handle) -> bool {
        of(ch).is_some()
    }
}
