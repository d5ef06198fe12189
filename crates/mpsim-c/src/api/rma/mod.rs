//! One-sided communication (MPI RMA): windows (`MPI_Win_create`, `MPI_Win_allocate`, ...),
//! `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`, `MPI_Fetch_and_op`,
//! `MPI_Compare_and_swap`, synchronized by `MPI_Win_fence`, by post/start/complete/wait, or by
//! locks (`MPI_Win_lock`/`unlock`, `lock_all`, `flush`).
//!
//! A window's memory lives in its rank's process, so RMA is built here, in the library, over
//! its own point-to-point and collective calls on a hidden duplicate of the window's
//! communicator: the simulator times the messages that really go. An operation is checked and
//! encoded at the origin when the program calls it ([`ops`]) and waits there; the call that
//! completes it sends the target its operations, the target applies them to its memory inside
//! one of its own MPI calls, in the order the origin issued them, and sends back what they
//! fetch. So every operation is complete when the completing call returns, as MPI requires.
//!
//! - `MPI_Win_fence`: an all-to-all of the bytes each rank sends each other, then the
//!   operations (nonblocking sends and receives), applied by origin rank, then the replies.
//! - `MPI_Win_complete` sends each target of its `MPI_Win_start` group its operations (the
//!   length, then the operations) and waits for the replies of those that fetch, serving
//!   meanwhile the origins of its own `MPI_Win_post` epoch whose operations arrive;
//!   `MPI_Win_wait` serves the origins not served yet, by rank; `MPI_Win_test` does so only
//!   when all of them have sent.
//! - Locks: the origin sends a target its batch at `MPI_Win_flush*` or `MPI_Win_unlock*`
//!   (nothing when it issued nothing); the first batch takes the lock at the target, the last
//!   releases it, and a batch the lock does not allow yet waits at the target. The target
//!   serves batches while it waits in `MPI_Win_unlock*`, `MPI_Win_flush*`, `MPI_Win_free`,
//!   `MPI_Recv` or a blocking collective ([`progress`]); a target that waits anywhere else
//!   does not serve them, and a run that needs it to ends in a deadlock report.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use mpsim_door::wire::{ReduceOp, class};

use super::{Res, live, ret};
use crate::abi::*;
use crate::dtype::Datatype;
use crate::state::{self, raise};

pub mod ops;

use ops::{Kind, MPI_BYTE, Queued};

/// MPI's error classes for windows (mpi.h).
const ERR_DISP: c_int = 26;
const ERR_RMA_SYNC: c_int = 50;
const ERR_SIZE: c_int = 52;
const ERR_WIN: c_int = 56;

const MPI_WIN_NULL: Handle = 0x110;
const FLAVOR_CREATE: c_int = 311;
const FLAVOR_ALLOCATE: c_int = 312;
const UNIFIED: c_int = 321;
const WIN_BASE: c_int = 601;
const WIN_DISP_UNIT: c_int = 602;
const WIN_SIZE: c_int = 603;
const WIN_CREATE_FLAVOR: c_int = 604;
const WIN_MODEL: c_int = 605;
const MODE_NOSUCCEED: c_int = 16384;

/// Tags on the hidden communicator: a fence's operations and replies, post/start/complete/
/// wait's.
const TAG_FENCE: c_int = 1;
const TAG_FENCE_REPLY: c_int = 2;
const TAG_PSCW: c_int = 3;
const TAG_PSCW_REPLY: c_int = 4;
const TAG_PSCW_BODY: c_int = 5;
const TAG_LOCK: c_int = 6;
const TAG_LOCK_BODY: c_int = 7;
const TAG_LOCK_REPLY: c_int = 8;
const ERR_LOCKTYPE: c_int = 37;
const LOCK_EXCLUSIVE: c_int = 301;
const LOCK_SHARED: c_int = 302;

/// `MPI_Win_errhandler_function`: `(MPI_Win *, int *, ...)`.
type HandlerFn = unsafe extern "C" fn(*mut Handle, *mut c_int);

/// What `MPI_Win_get_attr` points to: it hands out addresses of these, which live as long as
/// the window.
struct Attrs {
    size: isize,
    disp_unit: c_int,
    flavor: c_int,
    model: c_int,
}

/// A window, as this rank holds it.
struct Win {
    /// The hidden duplicate of the window's communicator its traffic goes on.
    comm: Handle,
    rank: u32,
    size: u32,
    base: usize,
    bytes: usize,
    disp_unit: usize,
    /// Every rank's window size and displacement unit (the origin checks ranges with them).
    peers: Vec<(usize, usize)>,
    /// World ranks of its members (`MPI_Win_get_group`).
    members: Vec<u32>,
    name: String,
    /// `MPI_ERRORS_ARE_FATAL`, `MPI_ERRORS_RETURN`, or a handler of [`Tables::handlers`].
    errh: Handle,
    /// A fence opened an epoch (the last fence was not `MPI_MODE_NOSUCCEED`).
    fence: bool,
    /// The targets of an open `MPI_Win_start` epoch (window ranks).
    access: Option<Vec<u32>>,
    /// The origins of an open `MPI_Win_post` epoch (window ranks).
    exposure: Option<Vec<u32>>,
    /// How this rank serves each origin of its exposure epoch.
    origins: Vec<(u32, Origin)>,
    /// What the served origins' operations fetched, kept until the epoch ends (their sends
    /// read it).
    replies: Vec<Vec<u8>>,
    /// Targets this rank holds a lock on (`MPI_Win_lock`), and their lock types.
    locks: Vec<(u32, c_int)>,
    /// `MPI_Win_lock_all` holds.
    lock_all: bool,
    /// Targets whose lock this rank's epoch took already (a flush sent a batch).
    acquired: Vec<u32>,
    /// As a target: the origins that hold its lock, exclusive or not.
    held: Vec<(u32, bool)>,
    /// As a target: batches received and not yet served (the lock did not allow them yet).
    deferred: Vec<(u32, u64, Vec<u8>)>,
    /// As a target: what the operations of the open exposure epoch reached (conflicts).
    touched: Vec<ops::Touch>,
    /// Sends of `MPI_Win_complete` not completed yet, and the buffers they read.
    inflight: Vec<Handle>,
    inflight_bufs: Vec<Vec<u8>>,
    inflight_heads: Vec<Vec<[u8; 8]>>,
    /// Operations issued and not yet sent.
    queue: Vec<Queued>,
    attrs: Box<Attrs>,
    /// The library allocated the memory (`MPI_Win_allocate`): freed with the window.
    allocated: bool,
}

#[derive(Default)]
struct Tables {
    wins: HashMap<Handle, Win>,
    handlers: Vec<(Handle, HandlerFn)>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    let mut g = TABLES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Tables::default))
}

/// Raises an error of window `w` through its handler: returns the class under
/// `MPI_ERRORS_RETURN` or a program's handler (called first), ends the run otherwise.
fn raise_win(w: Handle, call: &str, cls: c_int, text: &str) -> c_int {
    let (errh, f) = with(|t| {
        let errh = t.wins.get(&w).map_or(MPI_ERRORS_ARE_FATAL, |x| x.errh);
        let f = t.handlers.iter().find(|e| e.0 == errh).map(|e| e.1);
        (errh, f)
    });
    match (errh, f) {
        (MPI_ERRORS_RETURN, _) => cls,
        (_, Some(f)) => {
            let (mut win, mut code) = (w, cls);
            // SAFETY: the program's handler, called as MPI says.
            unsafe { f(&mut win, &mut code) };
            cls
        }
        _ => state::fatal(call, cls, text),
    }
}

/// Checks that `w` is a window; the fields `f` reads of it.
fn win<R>(call: &str, w: Handle, f: impl FnOnce(&mut Win) -> R) -> Res<R> {
    live(call)?;
    with(|t| t.wins.get_mut(&w).map(f)).ok_or_else(|| {
        let what = if w == MPI_WIN_NULL {
            "MPI_WIN_NULL is not a window".to_string()
        } else {
            format!("{w:#x} is not a window")
        };
        raise(None, call, ERR_WIN, &what)
    })
}

/// Fails with `rc` unless it is `MPI_SUCCESS` (an internal call's error, raised already).
fn ok(rc: c_int) -> Res<()> {
    if rc == state::OK { Ok(()) } else { Err(rc) }
}

/// Makes window `out` of `bytes` bytes at `base` over communicator `c` (collective).
unsafe fn create(
    call: &str,
    base: usize,
    size: isize,
    disp_unit: c_int,
    c: Handle,
    flavor: c_int,
    out: *mut Handle,
) -> Res<()> {
    let info = super::comm(call, c)?;
    if info.inter.is_some() {
        return Err(raise(
            Some(c),
            call,
            class::COMM,
            "a window needs an intracommunicator",
        ));
    }
    let bytes = usize::try_from(size).map_err(|_| {
        raise(
            Some(c),
            call,
            ERR_SIZE,
            &format!("negative window size {size}"),
        )
    })?;
    let unit = usize::try_from(disp_unit)
        .ok()
        .filter(|&u| u > 0)
        .ok_or_else(|| {
            raise(
                Some(c),
                call,
                ERR_DISP,
                &format!("displacement unit {disp_unit} is not positive"),
            )
        })?;
    let members = super::comm::members(call, c)?;
    let mut hidden = MPI_COMM_NULL;
    ok(unsafe { super::comm::PMPI_Comm_dup(c, &mut hidden) })?;
    let mine = [bytes as u64, unit as u64];
    let mut all = vec![[0u64; 2]; info.size as usize];
    let mut req = MPI_REQUEST_NULL;
    ok(unsafe {
        super::coll::PMPI_Iallgather(
            mine.as_ptr().cast(),
            16,
            MPI_BYTE,
            all.as_mut_ptr().cast(),
            16,
            MPI_BYTE,
            hidden,
            &mut req,
        )
    })?;
    wait_all(&mut [req])?;
    let w = Win {
        comm: hidden,
        rank: info.rank,
        size: info.size,
        base,
        bytes,
        disp_unit: unit,
        peers: all.iter().map(|p| (p[0] as usize, p[1] as usize)).collect(),
        members,
        name: String::new(),
        errh: MPI_ERRORS_ARE_FATAL,
        fence: false,
        access: None,
        exposure: None,
        origins: Vec::new(),
        replies: Vec::new(),
        locks: Vec::new(),
        lock_all: false,
        acquired: Vec::new(),
        held: Vec::new(),
        deferred: Vec::new(),
        touched: Vec::new(),
        inflight: Vec::new(),
        inflight_bufs: Vec::new(),
        inflight_heads: Vec::new(),
        queue: Vec::new(),
        attrs: Box::new(Attrs {
            size,
            disp_unit,
            flavor,
            model: UNIFIED,
        }),
        allocated: flavor == FLAVOR_ALLOCATE,
    };
    let h = state::with(|s| s.handle());
    with(|t| t.wins.insert(h, w));
    unsafe { *out = h };
    Ok(())
}

/// Sends `msgs[t]` to each rank `t` that has one with tag `tags.0`, and posts the receives of
/// what the fetching operations bring back (`fetched[t]` bytes from rank `t`) with tag
/// `tags.1`; the requests go to `reqs`, the reply buffers come back.
fn send_queued(
    comm: Handle,
    fetched: &[usize],
    msgs: &[Option<Vec<u8>>],
    tags: (c_int, c_int),
    reqs: &mut Vec<Handle>,
) -> Res<Vec<Vec<u8>>> {
    let mut replies: Vec<Vec<u8>> = fetched.iter().map(|&n| vec![0; n]).collect();
    for (t, m) in msgs.iter().enumerate() {
        if let Some(m) = m {
            let req = isend_bytes(m, t as c_int, tags.0, comm)?;
            reqs.push(req);
        }
    }
    for (t, r) in replies.iter_mut().enumerate() {
        if !r.is_empty() {
            let req = irecv_bytes(r, t as c_int, tags.1, comm)?;
            reqs.push(req);
        }
    }
    Ok(replies)
}

/// Bytes the operations of `queue` fetch from each of `n` ranks (none from `skip`).
fn fetched(queue: &[Queued], n: usize, skip: Option<u32>) -> Vec<usize> {
    let mut out = vec![0; n];
    for q in queue.iter().filter(|q| Some(q.target) != skip) {
        out[q.target as usize] += q.result_len();
    }
    out
}

/// A message length as a count of bytes.
fn len(n: usize) -> Res<c_int> {
    c_int::try_from(n).map_err(|_| {
        raise(
            None,
            "MPI_Win_fence",
            class::COUNT,
            &format!("an RMA message of {n} bytes is larger than mpsim handles (2 GiB)"),
        )
    })
}

/// Waits for `reqs` (internal requests).
fn wait_all(reqs: &mut [Handle]) -> Res<()> {
    if reqs.is_empty() {
        return Ok(());
    }
    ok(unsafe {
        super::wait::PMPI_Waitall(reqs.len() as c_int, reqs.as_mut_ptr(), std::ptr::null_mut())
    })
}

/// Puts the replies in the program's buffers, each target's in the order its operations
/// were issued, after checking that the program did not write those buffers, or the origin
/// buffers, before the operations completed (`MPI_ERR_RMA_CONFLICT`).
fn finish(call: &str, h: Handle, queue: &[Queued], replies: &[Vec<u8>]) -> Res<()> {
    let bad = ops::local_conflict(queue).or_else(|| queue.iter().find_map(Queued::written));
    let mut at = vec![0usize; replies.len()];
    for q in queue {
        let t = q.target as usize;
        let n = q.result_len();
        if n > 0 {
            let part = replies[t].get(at[t]..at[t] + n).unwrap_or(&[]);
            unsafe { q.finish(part) };
            at[t] += n;
        }
    }
    match bad {
        Some(text) => Err(raise_win(h, call, ops::RMA_CONFLICT, &text)),
        None => Ok(()),
    }
}

/// Each target's message: its operations, one after another.
fn messages(queue: &[Queued], n: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new(); n];
    for q in queue {
        out[q.target as usize].extend_from_slice(&q.bytes);
    }
    out
}

/// This rank's window, as the operations it applies see it.
fn target_of(w: &Win) -> ops::Target {
    ops::Target {
        base: w.base,
        bytes: w.bytes,
        disp_unit: w.disp_unit,
        rank: w.rank,
    }
}

/// `MPI_Win_fence`: every rank's operations to every other, applied by origin rank.
fn fence(call: &str, h: Handle, assert: c_int) -> Res<()> {
    let (comm, me, n, queue, target, sync) = win(call, h, |w| {
        let sync = w.access.is_some() || w.exposure.is_some() || w.lock_all || !w.locks.is_empty();
        let queue = if sync {
            Vec::new()
        } else {
            std::mem::take(&mut w.queue)
        };
        (w.comm, w.rank, w.size as usize, queue, target_of(w), sync)
    })?;
    if sync {
        return Err(raise_win(
            h,
            call,
            ERR_RMA_SYNC,
            "a post/start or lock epoch is open on this window (MPI_Win_complete, MPI_Win_wait or MPI_Win_unlock first)",
        ));
    }
    let out = messages(&queue, n);
    let send_lens: Vec<i64> = out.iter().map(|m| m.len() as i64).collect();
    let mut recv_lens = vec![0i64; n];
    let mut req = MPI_REQUEST_NULL;
    ok(unsafe {
        super::coll::PMPI_Ialltoall(
            send_lens.as_ptr().cast(),
            8,
            MPI_BYTE,
            recv_lens.as_mut_ptr().cast(),
            8,
            MPI_BYTE,
            comm,
            &mut req,
        )
    })?;
    wait_all(&mut [req])?;
    // Sends to others, receives from others; this rank's own operations apply in place.
    let msgs: Vec<Option<Vec<u8>>> = out
        .iter()
        .enumerate()
        .map(|(t, m)| (t != me as usize && !m.is_empty()).then(|| m.clone()))
        .collect();
    let mut reqs = Vec::new();
    let mut replies = send_queued(
        comm,
        &fetched(&queue, n, Some(me)),
        &msgs,
        (TAG_FENCE, TAG_FENCE_REPLY),
        &mut reqs,
    )?;
    let mut incoming: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut rreqs = Vec::new();
    for (s, &l) in recv_lens.iter().enumerate() {
        if l > 0 && s != me as usize {
            incoming[s] = vec![0; l as usize];
            let req = irecv_bytes(&mut incoming[s], s as c_int, TAG_FENCE, comm)?;
            rreqs.push(req);
        }
    }
    wait_all(&mut rreqs)?;
    incoming[me as usize] = out[me as usize].clone();
    let (back, failure) = apply_all(&target, &incoming);
    let mut sreqs = Vec::new();
    for (s, r) in back.iter().enumerate() {
        if s == me as usize {
            replies[s] = r.clone();
        } else if !r.is_empty() {
            let req = isend_bytes(r, s as c_int, TAG_FENCE_REPLY, comm)?;
            sreqs.push(req);
        }
    }
    wait_all(&mut reqs)?;
    wait_all(&mut sreqs)?;
    finish(call, h, &queue, &replies)?;
    win(call, h, |w| w.fence = assert & MODE_NOSUCCEED == 0)?;
    match failure {
        Some((cls, text)) => Err(raise_win(h, call, cls, &text)),
        None => Ok(()),
    }
}

/// Applies each origin's message (`incoming[origin]`, empty for none) in origin order; the
/// replies for each, and the first failure (a conflict between two of them included).
fn apply_all(t: &ops::Target, incoming: &[Vec<u8>]) -> (Vec<Vec<u8>>, Option<ops::Failure>) {
    let mut first = None;
    let mut touched = Vec::new();
    let back = incoming
        .iter()
        .enumerate()
        .map(|(s, m)| {
            let (r, f) = ops::apply(t, s as u32, m, &mut touched);
            if first.is_none() {
                first = f;
            }
            r
        })
        .collect();
    if first.is_none() {
        first = ops::conflict(&mut touched, t.rank);
    }
    (back, first)
}

/// The window ranks of group `g`'s members, or `MPI_ERR_GROUP`.
fn ranks_of(call: &str, h: Handle, g: Handle) -> Res<Vec<u32>> {
    let list = super::comm::group(call, g)?;
    let members = win(call, h, |w| w.members.clone())?;
    list.iter()
        .map(|m| {
            members
                .iter()
                .position(|x| x == m)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    raise_win(
                        h,
                        call,
                        class::GROUP,
                        &format!("world rank {m} of the group is not in the window"),
                    )
                })
        })
        .collect()
}

/// An origin of an open `MPI_Win_post` epoch, as this rank serves it: the receive of its
/// message's length (posted by `MPI_Win_post`), the length once it came, then served.
enum Origin {
    Waiting { req: Handle, len: Box<[u8; 8]> },
    Arrived(usize),
    Served,
}

/// `MPI_Win_complete`: each target of the start group gets its operations (the length, then
/// the operations). While the replies of its gets are outstanding, this rank serves the
/// origins of its own exposure epoch whose operations arrive: a ring of ranks that each post,
/// start, get and complete before they wait would otherwise wait for each other.
fn complete(call: &str, h: Handle) -> Res<()> {
    // The sends of earlier epochs: their buffers go once all of them completed.
    let mut earlier = win(call, h, |w| std::mem::take(&mut w.inflight))?;
    if !earlier.is_empty() {
        let mut flag = 0;
        ok(unsafe {
            super::wait::PMPI_Testall(
                earlier.len() as c_int,
                earlier.as_mut_ptr(),
                &mut flag,
                std::ptr::null_mut(),
            )
        })?;
        win(call, h, |w| {
            if flag != 0 {
                w.inflight_bufs.clear();
                w.inflight_heads.clear();
            } else {
                w.inflight = earlier;
            }
        })?;
    }
    let (comm, n, queue, targets) = win(call, h, |w| {
        let targets = w.access.take();
        let queue = if targets.is_some() {
            std::mem::take(&mut w.queue)
        } else {
            Vec::new()
        };
        (w.comm, w.size as usize, queue, targets)
    })?;
    let Some(targets) = targets else {
        return Err(raise_win(
            h,
            call,
            ERR_RMA_SYNC,
            "no access epoch is open (MPI_Win_start first)",
        ));
    };
    let out = messages(&queue, n);
    let heads: Vec<[u8; 8]> = out.iter().map(|m| (m.len() as u64).to_le_bytes()).collect();
    let mut sends = Vec::new();
    for &t in &targets {
        let t = t as usize;
        for (buf, tag) in [(&heads[t][..], TAG_PSCW), (&out[t][..], TAG_PSCW_BODY)] {
            if tag == TAG_PSCW_BODY && buf.is_empty() {
                continue;
            }
            let req = isend_bytes(buf, t as c_int, tag, comm)?;
            sends.push(req);
        }
    }
    let mut replies_reqs = Vec::new();
    let replies = send_queued(
        comm,
        &fetched(&queue, n, None),
        &vec![None; n],
        (TAG_PSCW, TAG_PSCW_REPLY),
        &mut replies_reqs,
    )?;
    let mut served = Vec::new();
    loop {
        let pending: Vec<usize> = (0..replies_reqs.len())
            .filter(|&i| replies_reqs[i] != MPI_REQUEST_NULL)
            .collect();
        if pending.is_empty() {
            break;
        }
        // The outstanding replies, then the length receives of the origins not yet served.
        let (origins, mut heads_reqs) = waiting(h)?;
        let mut all: Vec<Handle> = pending.iter().map(|&i| replies_reqs[i]).collect();
        all.append(&mut heads_reqs);
        let mut idx: c_int = -1;
        ok(unsafe {
            super::wait::PMPI_Waitany(
                all.len() as c_int,
                all.as_mut_ptr(),
                &mut idx,
                std::ptr::null_mut(),
            )
        })?;
        let i = idx as usize;
        if i < pending.len() {
            replies_reqs[pending[i]] = MPI_REQUEST_NULL;
        } else {
            let o = origins[i - pending.len()];
            arrived(h, o)?;
            serve(call, h, o, &mut served)?;
        }
    }
    wait_all(&mut served)?;
    // The operations' sends need not complete here (their data is the library's copy): a
    // target may be busy elsewhere until its MPI_Win_wait. They complete by MPI_Win_free.
    win(call, h, |w| {
        w.inflight.append(&mut sends);
        w.inflight_heads.push(heads);
        w.inflight_bufs.extend(out);
    })?;
    finish(call, h, &queue, &replies)?;
    Ok(())
}

/// The origins of `h`'s exposure epoch still waiting for their length, and the receives.
fn waiting(h: Handle) -> Res<(Vec<u32>, Vec<Handle>)> {
    Ok(with(|t| {
        let mut os = Vec::new();
        let mut rs = Vec::new();
        if let Some(w) = t.wins.get(&h) {
            for (o, st) in &w.origins {
                if let Origin::Waiting { req, .. } = st {
                    os.push(*o);
                    rs.push(*req);
                }
            }
        }
        (os, rs)
    }))
}

/// Origin `o`'s length receive completed (its request freed by the wait that saw it).
fn arrived(h: Handle, o: u32) -> Res<()> {
    with(|t| {
        if let Some(w) = t.wins.get_mut(&h)
            && let Some(e) = w.origins.iter_mut().find(|e| e.0 == o)
            && let Origin::Waiting { len, .. } = &e.1
        {
            e.1 = Origin::Arrived(u64::from_le_bytes(**len) as usize);
        }
    });
    Ok(())
}

/// Receives origin `o`'s operations (its length arrived), applies them and sends back what
/// they fetch (the send's request goes to `sends`).
fn serve(call: &str, h: Handle, o: u32, sends: &mut Vec<Handle>) -> Res<()> {
    let (comm, target, n) = win(call, h, |w| {
        let n = w.origins.iter().find(|e| e.0 == o).and_then(|e| match e.1 {
            Origin::Arrived(n) => Some(n),
            _ => None,
        });
        (w.comm, target_of(w), n)
    })?;
    let Some(n) = n else { return Ok(()) };
    let mut msg = vec![0u8; n];
    if n > 0 {
        ok(unsafe {
            recv_plain(
                msg.as_mut_ptr().cast(),
                len(n)?,
                MPI_BYTE,
                o as c_int,
                TAG_PSCW_BODY,
                comm,
                std::ptr::null_mut(),
            )
        })?;
    }
    let mut touched = win(call, h, |w| std::mem::take(&mut w.touched))?;
    let (back, failure) = ops::apply(&target, o, &msg, &mut touched);
    // Kept in the window until the epoch ends: the reply's send reads it meanwhile.
    let (at, n) = win(call, h, |w| {
        w.touched = touched;
        if let Some(e) = w.origins.iter_mut().find(|e| e.0 == o) {
            e.1 = Origin::Served;
        }
        let at = (back.as_ptr() as usize, back.len());
        w.replies.push(back);
        at
    })?;
    if n > 0 {
        let mut req = MPI_REQUEST_NULL;
        ok(unsafe {
            super::p2p::PMPI_Isend(
                at as *const c_void,
                len(n)?,
                MPI_BYTE,
                o as c_int,
                TAG_PSCW_REPLY,
                comm,
                &mut req,
            )
        })?;
        sends.push(req);
    }
    match failure {
        Some((cls, text)) => Err(raise_win(h, call, cls, &text)),
        None => Ok(()),
    }
}

/// `MPI_Win_wait` (`test`: `MPI_Win_test`, which returns false unless every origin's
/// operations are there): serves the origins not served yet, by origin rank.
fn wait(call: &str, h: Handle, test: bool) -> Res<bool> {
    let open = win(call, h, |w| w.exposure.is_some())?;
    if !open {
        return Err(raise_win(
            h,
            call,
            ERR_RMA_SYNC,
            "no exposure epoch is open (MPI_Win_post first)",
        ));
    }
    let (origins, mut reqs) = waiting(h)?;
    if test {
        for (&o, req) in origins.iter().zip(reqs.iter_mut()) {
            let mut flag = 0;
            ok(unsafe { super::wait::PMPI_Test(req, &mut flag, std::ptr::null_mut()) })?;
            if flag != 0 {
                arrived(h, o)?;
            }
        }
        if !waiting(h)?.0.is_empty() {
            return Ok(false);
        }
    } else {
        wait_all(&mut reqs)?;
        for &o in &origins {
            arrived(h, o)?;
        }
    }
    let all: Vec<u32> = win(call, h, |w| w.origins.iter().map(|e| e.0).collect())?;
    let mut sends = Vec::new();
    let mut first = Ok(());
    for o in all {
        let r = serve(call, h, o, &mut sends);
        if first.is_ok() {
            first = r;
        }
    }
    wait_all(&mut sends)?;
    let (mut touched, me) = win(call, h, |w| {
        w.exposure = None;
        w.origins.clear();
        w.replies.clear();
        (std::mem::take(&mut w.touched), w.rank)
    })?;
    first?;
    match ops::conflict(&mut touched, me) {
        Some((cls, text)) => Err(raise_win(h, call, cls, &text)),
        None => Ok(true),
    }
}

/// `MPI_Win_post`: opens the exposure epoch for `origins` and posts the receive of each one's
/// length.
fn post(call: &str, h: Handle, origins: Vec<u32>) -> Res<()> {
    let comm = win(call, h, |w| w.comm)?;
    let mut list = Vec::with_capacity(origins.len());
    for &o in &origins {
        let mut len = Box::new([0u8; 8]);
        let req = irecv_bytes(&mut len[..], o as c_int, TAG_PSCW, comm)?;
        list.push((o, Origin::Waiting { req, len }));
    }
    win(call, h, |w| {
        w.exposure = Some(origins);
        w.origins = list;
        w.fence = false;
    })
}

/// A lock epoch's message flags: the first batch takes the lock at the target, the last
/// releases it; exclusive or shared.
const ACQUIRE: u64 = 1;
const RELEASE: u64 = 2;
const EXCLUSIVE: u64 = 4;

/// Waits for `reqs` (internal requests) while serving the lock epochs other ranks (and this
/// one) send this rank on any of its windows: the target of a passive-target epoch applies it
/// inside its own MPI calls (those that wait here: `MPI_Win_unlock`, `MPI_Win_flush`,
/// `MPI_Win_unlock_all`, `MPI_Win_free`, and, on a rank with a window, `MPI_Recv` and the
/// blocking collectives on intracommunicators), as MPI's weak progress allows.
pub fn progress(call: &str, reqs: &mut [Handle]) -> Res<()> {
    progress_statuses(call, reqs).map(drop)
}

/// [`progress`], giving the status each request completed with.
pub fn progress_statuses(call: &str, reqs: &mut [Handle]) -> Res<Vec<MpiStatus>> {
    let mut statuses = vec![MpiStatus::empty(); reqs.len()];
    let comms: Vec<(Handle, Handle)> = with(|t| {
        let mut v: Vec<(Handle, Handle)> = t.wins.iter().map(|(h, w)| (*h, w.comm)).collect();
        v.sort_unstable();
        v
    });
    let mut heads: Vec<Box<[u8; 16]>> = comms.iter().map(|_| Box::new([0u8; 16])).collect();
    let mut listens = vec![MPI_REQUEST_NULL; comms.len()];
    let listen = |i: usize, head: &mut [u8; 16], req: &mut Handle| {
        ok(unsafe {
            super::p2p::PMPI_Irecv(
                head.as_mut_ptr().cast(),
                16,
                MPI_BYTE,
                MPI_ANY_SOURCE,
                TAG_LOCK,
                comms[i].1,
                req,
            )
        })
    };
    for i in 0..comms.len() {
        listen(i, &mut heads[i], &mut listens[i])?;
    }
    let mut result = Ok(());
    let mut keep = |r: Res<()>| {
        if result.is_ok() {
            result = r;
        }
    };
    loop {
        let pending: Vec<usize> = (0..reqs.len())
            .filter(|&i| reqs[i] != MPI_REQUEST_NULL)
            .collect();
        if pending.is_empty() {
            break;
        }
        let mut all: Vec<Handle> = pending.iter().map(|&i| reqs[i]).collect();
        all.extend_from_slice(&listens);
        let mut idx: c_int = -1;
        let mut st = MpiStatus::default();
        ok(unsafe {
            super::wait::PMPI_Waitany(all.len() as c_int, all.as_mut_ptr(), &mut idx, &mut st)
        })?;
        let i = idx as usize;
        if i < pending.len() {
            reqs[pending[i]] = MPI_REQUEST_NULL;
            statuses[pending[i]] = st;
            continue;
        }
        let k = i - pending.len();
        keep(arrived_lock(call, comms[k].0, st.source as u32, &heads[k]));
        listen(k, &mut heads[k], &mut listens[k])?;
    }
    // Stops listening; a request that came meanwhile is served.
    for k in 0..comms.len() {
        ok(unsafe { super::wait::PMPI_Cancel(&mut listens[k]) })?;
        let mut st = MpiStatus::default();
        ok(unsafe { super::wait::PMPI_Wait(&mut listens[k], &mut st) })?;
        if st.cancelled == 0 {
            keep(arrived_lock(call, comms[k].0, st.source as u32, &heads[k]));
        }
    }
    result.map(|()| statuses)
}

/// A lock epoch's batch from `origin` on window `h` announced itself (`head`: its length and
/// flags): receives it, then serves it now if the lock allows, else when the lock is
/// released.
fn arrived_lock(call: &str, h: Handle, origin: u32, head: &[u8; 16]) -> Res<()> {
    let n = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8])) as usize;
    let flags = u64::from_le_bytes(head[8..].try_into().unwrap_or([0; 8]));
    let comm = win(call, h, |w| w.comm)?;
    let mut msg = vec![0u8; n];
    if n > 0 {
        ok(unsafe {
            recv_plain(
                msg.as_mut_ptr().cast(),
                len(n)?,
                MPI_BYTE,
                origin as c_int,
                TAG_LOCK_BODY,
                comm,
                std::ptr::null_mut(),
            )
        })?;
    }
    win(call, h, |w| w.deferred.push((origin, flags, msg)))?;
    serve_deferred(call, h)
}

/// Serves the waiting batches the lock allows, in the order they came (a batch that takes an
/// exclusive lock waits until every holder released it; a shared one, until no exclusive
/// holder is left).
fn serve_deferred(call: &str, h: Handle) -> Res<()> {
    let mut result = Ok(());
    loop {
        let next = win(call, h, |w| {
            let i = w.deferred.iter().position(|(o, f, _)| {
                if f & ACQUIRE == 0 || w.held.iter().any(|x| x.0 == *o) {
                    return true;
                }
                if f & EXCLUSIVE != 0 {
                    w.held.is_empty()
                } else {
                    !w.held.iter().any(|x| x.1)
                }
            })?;
            let (o, f, msg) = w.deferred.remove(i);
            if f & ACQUIRE != 0 && !w.held.iter().any(|x| x.0 == o) {
                w.held.push((o, f & EXCLUSIVE != 0));
            }
            if f & RELEASE != 0 {
                w.held.retain(|x| x.0 != o);
            }
            Some((o, msg, w.comm, target_of(w)))
        })?;
        let Some((origin, msg, comm, target)) = next else {
            return result;
        };
        // A lock epoch's batches are not compared with each other's (locks order them).
        let (back, failure) = ops::apply(&target, origin, &msg, &mut Vec::new());
        ok(unsafe {
            super::p2p::PMPI_Send(
                back.as_ptr().cast(),
                len(back.len())?,
                MPI_BYTE,
                origin as c_int,
                TAG_LOCK_REPLY,
                comm,
            )
        })?;
        if let (Some((cls, text)), true) = (failure, result.is_ok()) {
            result = Err(raise_win(h, call, cls, &text));
        }
    }
}

/// Completes the operations queued for `targets` (every target when `None`) in a lock epoch,
/// and releases the lock at each of them when `release`: each target concerned gets a batch
/// (its operations, the lock's flags) and replies once it applied it (served in its MPI calls,
/// [`progress`]; this rank's own batches go the same way, so that its lock counts as any
/// other's).
fn flush(call: &str, h: Handle, targets: Option<&[u32]>, release: bool) -> Res<()> {
    let (comm, n, queue, batches) = win(call, h, |w| {
        let n = w.size as usize;
        let chosen = |t: u32| targets.is_none_or(|l| l.contains(&t));
        let (mine, rest): (Vec<Queued>, Vec<Queued>) = std::mem::take(&mut w.queue)
            .into_iter()
            .partition(|q| chosen(q.target));
        w.queue = rest;
        let mut batches = Vec::new();
        for t in 0..n as u32 {
            let has_ops = mine.iter().any(|q| q.target == t);
            let acquired = w.acquired.contains(&t);
            if !chosen(t) || !(has_ops || release && acquired) {
                continue;
            }
            let excl = !w.lock_all && w.locks.iter().any(|l| l.0 == t && l.1 == LOCK_EXCLUSIVE);
            let mut flags = if excl { EXCLUSIVE } else { 0 };
            if !acquired {
                flags |= ACQUIRE;
            }
            if release {
                flags |= RELEASE;
                w.acquired.retain(|&x| x != t);
            } else if !acquired {
                w.acquired.push(t);
            }
            batches.push((t, flags));
        }
        (w.comm, n, mine, batches)
    })?;
    if batches.is_empty() {
        return Ok(());
    }
    let out = messages(&queue, n);
    let heads: Vec<(u32, [u8; 16])> = batches
        .iter()
        .map(|&(t, f)| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&(out[t as usize].len() as u64).to_le_bytes());
            b[8..].copy_from_slice(&f.to_le_bytes());
            (t, b)
        })
        .collect();
    let mut reqs = Vec::new();
    for (t, head) in &heads {
        let t = *t as usize;
        for (buf, tag) in [(&head[..], TAG_LOCK), (&out[t][..], TAG_LOCK_BODY)] {
            if tag == TAG_LOCK_BODY && buf.is_empty() {
                continue;
            }
            let req = isend_bytes(buf, t as c_int, tag, comm)?;
            reqs.push(req);
        }
    }
    // Every target of a batch replies, if only to say it is done.
    let sizes = fetched(&queue, n, None);
    let mut replies: Vec<Vec<u8>> = sizes.iter().map(|&k| vec![0u8; k]).collect();
    for (t, _) in &heads {
        let t = *t as usize;
        let req = irecv_bytes(&mut replies[t], t as c_int, TAG_LOCK_REPLY, comm)?;
        reqs.push(req);
    }
    progress(call, &mut reqs)?;
    finish(call, h, &queue, &replies)?;
    Ok(())
}

/// What an RMA call gives: the call's number in [`ops::CALLS`], what it does, and its
/// buffers.
struct Call {
    n: usize,
    kind: Kind,
    /// Origin data: address, count, datatype (ignored for gets and `MPI_NO_OP`).
    origin: (usize, c_int, Handle),
    /// Where fetched data goes: address, count, datatype.
    result: (usize, c_int, Handle),
    /// `MPI_Compare_and_swap`'s compare value.
    compare: usize,
    target: c_int,
    disp: isize,
    tcount: c_int,
    tdt: Handle,
    op: Handle,
}

/// The built-in operation `op` for an accumulate, or `MPI_ERR_OP`.
fn acc_op(call: &str, h: Handle, op: Handle) -> Res<ReduceOp> {
    match super::coll::builtin_op(op) {
        Some(b) => Ok(b),
        None => {
            let user = state::with(|s| s.ops.contains_key(&op));
            let what = if user {
                "a user-defined operation cannot accumulate (MPI allows only built-in ones)"
                    .to_string()
            } else {
                format!("{op:#x} is not an operation")
            };
            Err(raise_win(h, call, class::OP, &what))
        }
    }
}

/// Starts the library's own send of the bytes `buf` to `to` with `tag` on `comm` (the window's
/// hidden communicator): its request. `buf` must stay in place until the request completes.
fn isend_bytes(buf: &[u8], to: c_int, tag: c_int, comm: Handle) -> Res<Handle> {
    let mut req = MPI_REQUEST_NULL;
    // SAFETY: `buf` is valid for its length, kept by the caller until the request completes.
    ok(unsafe {
        super::p2p::PMPI_Isend(
            buf.as_ptr().cast(),
            len(buf.len())?,
            MPI_BYTE,
            to,
            tag,
            comm,
            &mut req,
        )
    })?;
    Ok(req)
}

/// Starts the library's own receive into the bytes `buf` from `from` with `tag` on `comm`: its
/// request. `buf` must stay in place until the request completes.
fn irecv_bytes(buf: &mut [u8], from: c_int, tag: c_int, comm: Handle) -> Res<Handle> {
    let mut req = MPI_REQUEST_NULL;
    // SAFETY: `buf` is valid and writable for its length, kept by the caller until the
    // request completes.
    ok(unsafe {
        super::p2p::PMPI_Irecv(
            buf.as_mut_ptr().cast(),
            len(buf.len())?,
            MPI_BYTE,
            from,
            tag,
            comm,
            &mut req,
        )
    })?;
    Ok(req)
}

/// A datatype of an RMA call, committed, or `MPI_ERR_TYPE` through the window's handler.
fn dtype(call: &str, h: Handle, dt: Handle) -> Res<std::sync::Arc<Datatype>> {
    match state::with(|s| s.datatype(dt)) {
        Some(t) if t.committed => Ok(t),
        Some(_) => Err(raise_win(
            h,
            call,
            class::TYPE,
            "the datatype is not committed (MPI_Type_commit)",
        )),
        None => Err(raise_win(
            h,
            call,
            class::TYPE,
            &format!("{dt:#x} is not a datatype"),
        )),
    }
}

fn count_of(call: &str, h: Handle, n: c_int) -> Res<usize> {
    usize::try_from(n).map_err(|_| raise_win(h, call, class::COUNT, &format!("negative count {n}")))
}

/// Checks an RMA call and queues it for its target.
fn issue(h: Handle, c: Call) -> Res<()> {
    let call = ops::CALLS[c.n];
    let (me, size, fence, access, peers, locked) = win(call, h, |w| {
        let locked = w.lock_all || w.locks.iter().any(|l| l.0 as c_int == c.target);
        (
            w.rank,
            w.size,
            w.fence,
            w.access.clone(),
            w.peers.clone(),
            locked,
        )
    })?;
    if c.target == MPI_PROC_NULL {
        return Ok(());
    }
    if !(0..size as c_int).contains(&c.target) {
        return Err(raise_win(
            h,
            call,
            class::RANK,
            &format!(
                "target rank {} is not in the window's group of {size} ranks",
                c.target
            ),
        ));
    }
    let target = c.target as u32;
    let open = fence || locked || access.as_ref().is_some_and(|a| a.contains(&target));
    if !open {
        let what = match access {
            Some(_) => format!("rank {target} is not in the group of this rank's MPI_Win_start"),
            None => format!(
                "no access epoch is open at rank {me} for rank {target} (MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)"
            ),
        };
        return Err(raise_win(h, call, ERR_RMA_SYNC, &what));
    }
    let tcount = count_of(call, h, c.tcount)?;
    let tt = dtype(call, h, c.tdt)?;
    let op = match c.kind {
        Kind::Acc | Kind::GetAcc => Some(acc_op(call, h, c.op)?),
        _ => None,
    };
    let takes_origin = match c.kind {
        Kind::Put | Kind::Cas => true,
        Kind::Get => false,
        Kind::Acc | Kind::GetAcc => op != Some(ReduceOp::NoOp),
    };
    let mut data = Vec::new();
    if takes_origin {
        let n = count_of(call, h, c.origin.1)?;
        let ot = dtype(call, h, c.origin.2)?;
        if n * ot.size != tcount * tt.size {
            return Err(raise_win(
                h,
                call,
                class::TYPE,
                &format!(
                    "the origin gives {} bytes and the target datatype holds {} (their type signatures must match)",
                    n * ot.size,
                    tcount * tt.size
                ),
            ));
        }
        let differ = |a: &Datatype, b: &Datatype| match (a.elem, b.elem) {
            (Some((x, _)), Some((y, _))) => x != y,
            _ => false,
        };
        if op.is_some_and(|o| o != ReduceOp::Replace) && differ(&ot, &tt) {
            return Err(raise_win(
                h,
                call,
                class::TYPE,
                "the origin and target datatypes of an accumulate must be made of the same predefined type",
            ));
        }
        data = unsafe { super::packed(c.origin.0 as *const c_void, n, &ot) }.into_owned();
        if c.kind == Kind::Cas {
            data.extend_from_slice(&unsafe { super::packed(c.compare as *const c_void, n, &ot) });
        }
    }
    if let Some(op) = op.filter(|o| !matches!(o, ReduceOp::Replace | ReduceOp::NoOp)) {
        match tt.elem {
            Some((e, _)) if ops::defined(op, e) => {}
            Some((e, _)) => {
                return Err(raise_win(
                    h,
                    call,
                    class::OP,
                    &format!("{} is not defined on {}", op.name(), e.name()),
                ));
            }
            None => {
                return Err(raise_win(
                    h,
                    call,
                    class::TYPE,
                    "an accumulate's target datatype must be made of one predefined type",
                ));
            }
        }
    }
    if c.disp < 0 {
        return Err(raise_win(
            h,
            call,
            ERR_DISP,
            &format!("negative target displacement {}", c.disp),
        ));
    }
    // The range at the target, checked here with the sizes every rank gave at creation (and
    // again at the target when it applies the operation).
    let (tbytes, unit) = peers[target as usize];
    if let Some((lo, hi)) = ops::span(&tt, tcount) {
        let off = (c.disp as i128) * unit as i128;
        if off + (lo as i128) < 0 || off + (hi as i128) > tbytes as i128 {
            return Err(raise_win(
                h,
                call,
                ops::RMA_RANGE,
                &format!(
                    "bytes {}..{} of rank {target}'s window (displacement {} x unit {unit}) are outside it: it has {tbytes} bytes",
                    off + lo as i128,
                    off + hi as i128,
                    c.disp
                ),
            ));
        }
    }
    let result = match c.kind {
        Kind::Put | Kind::Acc => None,
        Kind::Get => {
            let n = count_of(call, h, c.origin.1)?;
            let ot = dtype(call, h, c.origin.2)?;
            check_fetch(call, h, n * ot.size, tcount * tt.size)?;
            Some((c.origin.0, n, ot, tcount * tt.size))
        }
        Kind::GetAcc | Kind::Cas => {
            let n = count_of(call, h, c.result.1)?;
            let rt = dtype(call, h, c.result.2)?;
            check_fetch(call, h, n * rt.size, tcount * tt.size)?;
            Some((c.result.0, n, rt, tcount * tt.size))
        }
    };
    let fetched = result.as_ref().map_or(0, |r| r.3);
    let guards = [
        if takes_origin {
            let ot = dtype(call, h, c.origin.2)?;
            state::Guard::contiguous(c.origin.0, c.origin.1.max(0) as usize, &ot)
        } else {
            None
        },
        result
            .as_ref()
            .and_then(|(addr, n, dt, _)| state::Guard::contiguous(*addr, *n, dt)),
    ];
    let bytes = ops::encode(c.n, c.kind, op, c.disp, tcount, &tt, &data, fetched);
    win(call, h, |w| {
        w.queue.push(Queued {
            target,
            bytes,
            result,
            call: c.n,
            guards,
        })
    })?;
    Ok(())
}

/// Checks that a buffer of `have` bytes takes the `want` a fetch brings back.
fn check_fetch(call: &str, h: Handle, have: usize, want: usize) -> Res<()> {
    if have == want {
        return Ok(());
    }
    Err(raise_win(
        h,
        call,
        class::TYPE,
        &format!(
            "the result buffer holds {have} bytes and the target datatype {want} (their type signatures must match)"
        ),
    ))
}

mpi! {
    fn MPI_Win_create / PMPI_Win_create(base: *mut c_void, size: isize, disp_unit: c_int, _info: Handle, c: Handle, out: *mut Handle) -> c_int {
        ret(unsafe { create("MPI_Win_create", base as usize, size, disp_unit, c, FLAVOR_CREATE, out) })
    }

    fn MPI_Win_allocate / PMPI_Win_allocate(size: isize, disp_unit: c_int, _info: Handle, c: Handle, baseptr: *mut c_void, out: *mut Handle) -> c_int {
        let call = "MPI_Win_allocate";
        if size < 0 {
            return raise(Some(c), call, ERR_SIZE, &format!("negative window size {size}"));
        }
        let p = unsafe { libc::calloc(size.max(1) as usize, 1) };
        if p.is_null() {
            return raise(Some(c), call, class::NO_MEM, &format!("{size} bytes"));
        }
        let rc = ret(unsafe { create(call, p as usize, size, disp_unit, c, FLAVOR_ALLOCATE, out) });
        if rc == state::OK {
            unsafe { *(baseptr as *mut *mut c_void) = p };
        } else {
            unsafe { libc::free(p) };
        }
        rc
    }

    fn MPI_Win_free / PMPI_Win_free(h: *mut Handle) -> c_int {
        let call = "MPI_Win_free";
        ret((|| {
            let w = unsafe { *h };
            let open = win(call, w, |x| {
                if x.access.is_some() {
                    Some("an access epoch is open (MPI_Win_complete first)")
                } else if x.exposure.is_some() {
                    Some("an exposure epoch is open (MPI_Win_wait first)")
                } else if !x.locks.is_empty() || x.lock_all {
                    Some("a lock is held (MPI_Win_unlock or MPI_Win_unlock_all first)")
                } else if !x.queue.is_empty() {
                    Some("RMA operations are pending (a closing MPI_Win_fence first)")
                } else {
                    None
                }
            })?;
            if let Some(what) = open {
                return Err(raise_win(w, call, ERR_RMA_SYNC, what));
            }
            let comm = win(call, w, |x| x.comm)?;
            // Collective: no rank frees its memory while another may still reach it; meanwhile
            // this rank serves the lock epochs of ranks that have not reached it yet.
            let mut reqs = win(call, w, |x| std::mem::take(&mut x.inflight))?;
            let mut req = MPI_REQUEST_NULL;
            ok(unsafe { super::coll::PMPI_Ibarrier(comm, &mut req) })?;
            reqs.push(req);
            progress(call, &mut reqs)?;
            let Some(x) = with(|t| t.wins.remove(&w)) else {
                return Ok(());
            };
            let mut comm = x.comm;
            ok(unsafe { super::comm::PMPI_Comm_free(&mut comm) })?;
            if x.allocated {
                unsafe { libc::free(x.base as *mut c_void) };
            }
            unsafe { *h = MPI_WIN_NULL };
            Ok(())
        })())
    }

    fn MPI_Win_get_group / PMPI_Win_get_group(h: Handle, g: *mut Handle) -> c_int {
        ret(win("MPI_Win_get_group", h, |w| w.members.clone())
            .map(|m| unsafe { *g = super::comm::new_group(m) }))
    }

    fn MPI_Win_get_attr / PMPI_Win_get_attr(h: Handle, key: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
        ret(win("MPI_Win_get_attr", h, |w| {
            let p: *mut c_void = match key {
                WIN_BASE => w.base as *mut c_void,
                WIN_SIZE => (&mut w.attrs.size as *mut isize).cast(),
                WIN_DISP_UNIT => (&mut w.attrs.disp_unit as *mut c_int).cast(),
                WIN_CREATE_FLAVOR => (&mut w.attrs.flavor as *mut c_int).cast(),
                WIN_MODEL => (&mut w.attrs.model as *mut c_int).cast(),
                _ => std::ptr::null_mut(),
            };
            let known = matches!(key, WIN_BASE | WIN_SIZE | WIN_DISP_UNIT | WIN_CREATE_FLAVOR | WIN_MODEL);
            unsafe {
                if known {
                    *(val as *mut *mut c_void) = p;
                }
                *flag = c_int::from(known);
            }
        }))
    }

    fn MPI_Win_set_name / PMPI_Win_set_name(h: Handle, name: *const c_char) -> c_int {
        let text = if name.is_null() {
            String::new()
        } else {
            unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
        };
        ret(win("MPI_Win_set_name", h, |w| w.name = text))
    }

    fn MPI_Win_get_name / PMPI_Win_get_name(h: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
        ret(win("MPI_Win_get_name", h, |w| unsafe {
            let n = w.name.len().min(MPI_MAX_OBJECT_NAME - 1);
            std::ptr::copy_nonoverlapping(w.name.as_ptr().cast(), name, n);
            *name.add(n) = 0;
            *len = n as c_int;
        }))
    }

    fn MPI_Win_create_errhandler / PMPI_Win_create_errhandler(f: Option<HandlerFn>, out: *mut Handle) -> c_int {
        let Some(f) = f else {
            return raise(None, "MPI_Win_create_errhandler", class::ARG, "the handler function is NULL");
        };
        let h = state::with(|s| s.handle());
        with(|t| t.handlers.push((h, f)));
        unsafe { *out = h };
        0
    }

    fn MPI_Win_set_errhandler / PMPI_Win_set_errhandler(h: Handle, e: Handle) -> c_int {
        let call = "MPI_Win_set_errhandler";
        let known = matches!(e, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN)
            || with(|t| t.handlers.iter().any(|x| x.0 == e));
        if !known {
            return ret(win(call, h, |_| ()).and_then(|_| {
                Err(raise_win(h, call, class::ARG, &format!("{e:#x} is not a window error handler")))
            }));
        }
        ret(win(call, h, |w| w.errh = e))
    }

    fn MPI_Win_get_errhandler / PMPI_Win_get_errhandler(h: Handle, e: *mut Handle) -> c_int {
        ret(win("MPI_Win_get_errhandler", h, |w| unsafe { *e = w.errh }))
    }

    fn MPI_Win_call_errhandler / PMPI_Win_call_errhandler(h: Handle, code: c_int) -> c_int {
        let call = "MPI_Win_call_errhandler";
        ret(win(call, h, |_| ()).map(|_| {
            raise_win(h, call, code, &format!("error code {code} raised by the program"));
        }))
    }

    fn MPI_Win_fence / PMPI_Win_fence(assert: c_int, h: Handle) -> c_int {
        ret(fence("MPI_Win_fence", h, assert))
    }

    fn MPI_Win_post / PMPI_Win_post(g: Handle, _assert: c_int, h: Handle) -> c_int {
        let call = "MPI_Win_post";
        ret((|| {
            let ranks = ranks_of(call, h, g)?;
            let open = win(call, h, |w| w.exposure.is_some() || w.fence && !w.queue.is_empty())?;
            if open {
                return Err(raise_win(h, call, ERR_RMA_SYNC, "an exposure epoch is open already (MPI_Win_wait first)"));
            }
            post(call, h, ranks)
        })())
    }

    fn MPI_Win_start / PMPI_Win_start(g: Handle, _assert: c_int, h: Handle) -> c_int {
        let call = "MPI_Win_start";
        ret((|| {
            let ranks = ranks_of(call, h, g)?;
            let open = win(call, h, |w| w.access.is_some() || w.fence && !w.queue.is_empty())?;
            if open {
                return Err(raise_win(h, call, ERR_RMA_SYNC, "an access epoch is open already (MPI_Win_complete first)"));
            }
            win(call, h, |w| {
                w.access = Some(ranks);
                w.fence = false;
            })
        })())
    }

    fn MPI_Win_complete / PMPI_Win_complete(h: Handle) -> c_int {
        ret(complete("MPI_Win_complete", h))
    }

    fn MPI_Win_wait / PMPI_Win_wait(h: Handle) -> c_int {
        ret(wait("MPI_Win_wait", h, false).map(drop))
    }

    fn MPI_Win_test / PMPI_Win_test(h: Handle, flag: *mut c_int) -> c_int {
        ret(wait("MPI_Win_test", h, true).map(|done| unsafe { *flag = c_int::from(done) }))
    }

    fn MPI_Win_lock / PMPI_Win_lock(kind: c_int, target: c_int, _assert: c_int, h: Handle) -> c_int {
        let call = "MPI_Win_lock";
        ret((|| {
            if target == MPI_PROC_NULL {
                return win(call, h, |_| ());
            }
            let (size, held, other) = win(call, h, |w| {
                let held = w.lock_all || w.locks.iter().any(|l| l.0 as c_int == target);
                (w.size, held, w.access.is_some() || w.fence && !w.queue.is_empty())
            })?;
            if kind != LOCK_EXCLUSIVE && kind != LOCK_SHARED {
                return Err(raise_win(h, call, ERR_LOCKTYPE, &format!("{kind} is not MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED")));
            }
            if !(0..size as c_int).contains(&target) {
                return Err(raise_win(h, call, class::RANK, &format!("target rank {target} is not in the window's group of {size} ranks")));
            }
            if held || other {
                return Err(raise_win(h, call, ERR_RMA_SYNC, &format!("an access epoch to rank {target} is open already")));
            }
            win(call, h, |w| {
                w.locks.push((target as u32, kind));
                w.fence = false;
            })
        })())
    }

    fn MPI_Win_unlock / PMPI_Win_unlock(target: c_int, h: Handle) -> c_int {
        let call = "MPI_Win_unlock";
        ret((|| {
            if target == MPI_PROC_NULL {
                return win(call, h, |_| ());
            }
            let held = win(call, h, |w| w.locks.iter().any(|l| l.0 as c_int == target))?;
            if !held {
                return Err(raise_win(h, call, ERR_RMA_SYNC, &format!("this rank holds no lock on rank {target} (MPI_Win_lock first)")));
            }
            let r = flush(call, h, Some(&[target as u32]), true);
            win(call, h, |w| w.locks.retain(|l| l.0 as c_int != target))?;
            r
        })())
    }

    fn MPI_Win_lock_all / PMPI_Win_lock_all(_assert: c_int, h: Handle) -> c_int {
        let call = "MPI_Win_lock_all";
        ret((|| {
            let open = win(call, h, |w| w.lock_all || !w.locks.is_empty() || w.access.is_some() || w.fence && !w.queue.is_empty())?;
            if open {
                return Err(raise_win(h, call, ERR_RMA_SYNC, "an access epoch is open already"));
            }
            win(call, h, |w| {
                w.lock_all = true;
                w.fence = false;
            })
        })())
    }

    fn MPI_Win_unlock_all / PMPI_Win_unlock_all(h: Handle) -> c_int {
        let call = "MPI_Win_unlock_all";
        ret((|| {
            if !win(call, h, |w| w.lock_all)? {
                return Err(raise_win(h, call, ERR_RMA_SYNC, "no MPI_Win_lock_all epoch is open"));
            }
            let r = flush(call, h, None, true);
            win(call, h, |w| w.lock_all = false)?;
            r
        })())
    }

    fn MPI_Win_flush / PMPI_Win_flush(target: c_int, h: Handle) -> c_int {
        ret(flush_checked("MPI_Win_flush", h, Some(target)))
    }

    fn MPI_Win_flush_local / PMPI_Win_flush_local(target: c_int, h: Handle) -> c_int {
        ret(flush_checked("MPI_Win_flush_local", h, Some(target)))
    }

    fn MPI_Win_flush_all / PMPI_Win_flush_all(h: Handle) -> c_int {
        ret(flush_checked("MPI_Win_flush_all", h, None))
    }

    fn MPI_Win_flush_local_all / PMPI_Win_flush_local_all(h: Handle) -> c_int {
        ret(flush_checked("MPI_Win_flush_local_all", h, None))
    }

    fn MPI_Win_sync / PMPI_Win_sync(h: Handle) -> c_int {
        // The window is the rank's own memory (MPI_WIN_UNIFIED): nothing to synchronize.
        ret(win("MPI_Win_sync", h, |_| ()))
    }

    // Request-based operations (valid in lock epochs, as MPI says): each completes at once,
    // flushed to its target, and its request is complete already.
    fn MPI_Rput / PMPI_Rput(o: *const c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, h: Handle, request: *mut Handle) -> c_int {
        ret(requested(h, request, Call {
            n: 0, kind: Kind::Put, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op: MPI_REPLACE,
        }))
    }

    fn MPI_Rget / PMPI_Rget(o: *mut c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, h: Handle, request: *mut Handle) -> c_int {
        ret(requested(h, request, Call {
            n: 1, kind: Kind::Get, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op: MPI_NO_OP,
        }))
    }

    fn MPI_Raccumulate / PMPI_Raccumulate(o: *const c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, op: Handle, h: Handle, request: *mut Handle) -> c_int {
        ret(requested(h, request, Call {
            n: 2, kind: Kind::Acc, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op,
        }))
    }

    fn MPI_Rget_accumulate / PMPI_Rget_accumulate(o: *const c_void, on: c_int, ot: Handle, r: *mut c_void, rn: c_int, rt: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, op: Handle, h: Handle, request: *mut Handle) -> c_int {
        ret(requested(h, request, Call {
            n: 3, kind: Kind::GetAcc, origin: (o as usize, on, ot), result: (r as usize, rn, rt), compare: 0,
            target, disp, tcount: tn, tdt: tt, op,
        }))
    }

    fn MPI_Put / PMPI_Put(o: *const c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 0, kind: Kind::Put, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op: MPI_REPLACE,
        }))
    }

    fn MPI_Get / PMPI_Get(o: *mut c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 1, kind: Kind::Get, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op: MPI_NO_OP,
        }))
    }

    fn MPI_Accumulate / PMPI_Accumulate(o: *const c_void, on: c_int, ot: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, op: Handle, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 2, kind: Kind::Acc, origin: (o as usize, on, ot), result: (0, 0, MPI_BYTE), compare: 0,
            target, disp, tcount: tn, tdt: tt, op,
        }))
    }

    fn MPI_Get_accumulate / PMPI_Get_accumulate(o: *const c_void, on: c_int, ot: Handle, r: *mut c_void, rn: c_int, rt: Handle, target: c_int, disp: isize, tn: c_int, tt: Handle, op: Handle, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 3, kind: Kind::GetAcc, origin: (o as usize, on, ot), result: (r as usize, rn, rt), compare: 0,
            target, disp, tcount: tn, tdt: tt, op,
        }))
    }

    fn MPI_Fetch_and_op / PMPI_Fetch_and_op(o: *const c_void, r: *mut c_void, dt: Handle, target: c_int, disp: isize, op: Handle, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 4, kind: Kind::GetAcc, origin: (o as usize, 1, dt), result: (r as usize, 1, dt), compare: 0,
            target, disp, tcount: 1, tdt: dt, op,
        }))
    }

    fn MPI_Compare_and_swap / PMPI_Compare_and_swap(o: *const c_void, cmp: *const c_void, r: *mut c_void, dt: Handle, target: c_int, disp: isize, h: Handle) -> c_int {
        ret(issue(h, Call {
            n: 5, kind: Kind::Cas, origin: (o as usize, 1, dt), result: (r as usize, 1, dt), compare: cmp as usize,
            target, disp, tcount: 1, tdt: dt, op: MPI_REPLACE,
        }))
    }
}

/// `MPI_Win_flush` and its forms (`target`: one, or all): in a lock epoch only.
fn flush_checked(call: &str, h: Handle, target: Option<c_int>) -> Res<()> {
    if target == Some(MPI_PROC_NULL) {
        return win(call, h, |_| ());
    }
    let held = win(call, h, |w| {
        w.lock_all
            || target.is_none_or(|t| w.locks.iter().any(|l| l.0 as c_int == t))
                && (target.is_some() || !w.locks.is_empty())
    })?;
    if !held {
        return Err(raise_win(
            h,
            call,
            ERR_RMA_SYNC,
            "no lock epoch is open for the target (MPI_Win_lock first)",
        ));
    }
    match target {
        Some(t) => flush(call, h, Some(&[t as u32]), false),
        None => flush(call, h, None, false),
    }
}

/// Whether this rank has a window (its `MPI_Recv` and blocking collectives then serve lock
/// epochs).
pub fn any_window() -> bool {
    with(|t| !t.wins.is_empty())
}

/// A request-based operation (`MPI_Rput`, ...): in a lock epoch only; issued, flushed to its
/// target, and its request complete.
fn requested(h: Handle, request: *mut Handle, c: Call) -> Res<()> {
    let call = ops::CALLS[c.n];
    let r_call = [
        "MPI_Rput",
        "MPI_Rget",
        "MPI_Raccumulate",
        "MPI_Rget_accumulate",
    ][c.n.min(3)];
    let target = c.target;
    let locked = win(r_call, h, |w| {
        w.lock_all || w.locks.iter().any(|l| l.0 as c_int == target)
    })?;
    if !locked && target != MPI_PROC_NULL {
        return Err(raise_win(
            h,
            r_call,
            ERR_RMA_SYNC,
            &format!(
                "{r_call} needs a lock epoch on rank {target} (MPI_Win_lock or MPI_Win_lock_all first)"
            ),
        ));
    }
    issue(h, c)?;
    if target != MPI_PROC_NULL {
        flush(call, h, Some(&[target as u32]), false)?;
    }
    unsafe {
        *request = super::p2p::store(state::Req::Done {
            status: MpiStatus::empty(),
        })
    };
    Ok(())
}

/// A blocking receive of the library's own (an internal receive does not serve lock epochs,
/// as `MPI_Recv` does when the rank has windows: it is made while serving one).
unsafe fn recv_plain(
    buf: *mut c_void,
    n: c_int,
    dt: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    _status: *mut MpiStatus,
) -> c_int {
    let mut req = MPI_REQUEST_NULL;
    let rc = unsafe { super::p2p::PMPI_Irecv(buf, n, dt, source, tag, comm, &mut req) };
    if rc != state::OK {
        return rc;
    }
    unsafe { super::wait::PMPI_Wait(&mut req, std::ptr::null_mut()) }
}
