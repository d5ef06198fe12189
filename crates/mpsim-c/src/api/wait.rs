//! Completing requests: the wait and test families, freeing, cancelling, and starting
//! persistent requests.
//!
//! A request the rank can settle itself (null, inactive persistent, a transfer with
//! `MPI_PROC_NULL`) never crosses the door; the others are waited for at the proxy, which
//! returns each receive's data with its status.

use std::ffi::c_int;

use mpsim_door::wire::{Op, WireStatus, class};

use super::p2p::{finish_recv, start_persistent};
use super::{Res, live, put_status, ret};
use crate::abi::*;
use crate::door;
use crate::state::{self, Req, raise};

/// What waiting on a handle needs.
enum Pending {
    /// Settled here: null, inactive, or done, with this status (`None`: null or inactive,
    /// which MPI_Waitany/Testany skip).
    Local(Option<MpiStatus>),
    /// At the proxy.
    Proxy(i64),
}

/// The request behind a handle, looking through a persistent one to its current start.
fn pending(call: &str, h: Handle) -> Res<Pending> {
    if h == MPI_REQUEST_NULL {
        return Ok(Pending::Local(None));
    }
    let req = state::with(|s| s.requests.get(&h).cloned()).ok_or_else(|| {
        raise(
            None,
            call,
            class::REQUEST,
            &format!("{h:#x} is not a request"),
        )
    })?;
    Ok(match req {
        Req::Done { status } => Pending::Local(Some(status)),
        Req::Send { proxy, .. } | Req::Recv { proxy, .. } | Req::Coll { proxy, .. } => {
            Pending::Proxy(proxy)
        }
        Req::Persistent(p) => match p.active.as_deref() {
            None => Pending::Local(None),
            Some(Req::Done { status }) => Pending::Local(Some(*status)),
            Some(Req::Send { proxy, .. } | Req::Recv { proxy, .. } | Req::Coll { proxy, .. }) => {
                Pending::Proxy(*proxy)
            }
            Some(Req::Persistent(_)) => Pending::Local(None),
        },
    })
}

/// Marks handle `*h` complete with `data` (a receive's, or a collective's result) and the
/// proxy's `status`: a persistent request goes inactive, any other is freed and the handle set
/// to `MPI_REQUEST_NULL`. Gives the status the program gets: a collective's is MPI's empty
/// status (the proxy's says how long its result was).
unsafe fn complete(h: *mut Handle, data: &[u8], status: MpiStatus) -> MpiStatus {
    let handle = unsafe { *h };
    if handle == MPI_REQUEST_NULL {
        return status;
    }
    let req = state::with(|s| match s.requests.get_mut(&handle) {
        Some(Req::Persistent(p)) => p.active.take().map(|b| *b),
        _ => s.requests.remove(&handle),
    });
    let persistent = state::with(|s| matches!(s.requests.get(&handle), Some(Req::Persistent(_))));
    if !persistent {
        unsafe { *h = MPI_REQUEST_NULL };
    }
    match req {
        Some(req @ Req::Coll { .. }) => {
            unsafe { finish_recv(&req, data) };
            MpiStatus::empty()
        }
        Some(req) => {
            unsafe { finish_recv(&req, data) };
            status
        }
        None => status,
    }
}

/// Completes the receives the program freed while active, delivering their data (at
/// `MPI_Finalize`: MPI lets them complete on their own; one never matched is the program's
/// deadlock, reported as such).
pub fn complete_freed(call: &str) -> Res<()> {
    let mut freed = state::with(|s| std::mem::take(&mut s.freed));
    // The program cannot know when a freed receive completes; its buffer is not checked.
    for r in &mut freed {
        if let Req::Recv { guard, .. } = r {
            *guard = None;
        }
    }
    if freed.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = freed
        .iter()
        .map(|r| match r {
            Req::Recv { proxy, .. } => *proxy,
            _ => 0,
        })
        .collect();
    let (_, bytes) = door::collect(Op::Waitall, &[], &[bytemuck::cast_slice(&ids)])
        .map_err(|f| state::failed(None, call, f))?;
    let (wire, rest) = statuses(&bytes, ids.len());
    let mut at = 0;
    for (req, w) in freed.iter().zip(&wire) {
        let n = w.bytes as usize;
        let data = &rest[at.min(rest.len())..(at + n).min(rest.len())];
        at += n;
        unsafe { finish_recv(req, data) };
    }
    Ok(())
}

/// [`peek`] for the `MPI_Request_get_status_all/any/some` family: `None` for a null or
/// inactive request (which they skip), else whether it is complete, with its status.
pub fn peek_active(h: Handle) -> Res<Option<Option<MpiStatus>>> {
    match pending("MPI_Request_get_status", h)? {
        Pending::Local(None) => Ok(None),
        Pending::Local(Some(s)) => Ok(Some(Some(s))),
        Pending::Proxy(_) => Ok(Some(peek(h)?)),
    }
}

/// `MPI_Request_get_status`: whether the request behind `h` is complete, with its status,
/// without freeing it. One at the proxy is tested there; complete, its data is delivered now
/// (MPI: the operation is complete) and the handle holds a finished request, which the
/// program's wait or free then settles here.
pub fn peek(h: Handle) -> Res<Option<MpiStatus>> {
    let call = "MPI_Request_get_status";
    live(call)?;
    let id = match pending(call, h)? {
        Pending::Local(s) => return Ok(Some(s.unwrap_or_else(MpiStatus::empty))),
        Pending::Proxy(id) => id,
    };
    let (r, data) =
        door::collect(Op::Test, &[0, id], &[]).map_err(|f| state::failed(None, call, f))?;
    if r.v[0] == 0 {
        return Ok(None);
    }
    let wire = MpiStatus::from_wire(&r.status);
    let req = state::with(|s| match s.requests.get_mut(&h) {
        Some(Req::Persistent(p)) => p.active.take().map(|b| *b),
        _ => s.requests.remove(&h),
    });
    let status = match &req {
        Some(Req::Coll { .. }) => MpiStatus::empty(),
        _ => wire,
    };
    if let Some(req) = req {
        unsafe { finish_recv(&req, &data) };
    }
    let done = Req::Done { status };
    state::with(|s| match s.requests.get_mut(&h) {
        Some(Req::Persistent(p)) => p.active = Some(Box::new(done)),
        _ => {
            s.requests.insert(h, done);
        }
    });
    Ok(Some(status))
}

fn statuses(bytes: &[u8], n: usize) -> (Vec<WireStatus>, &[u8]) {
    let size = std::mem::size_of::<WireStatus>();
    let list = bytes[..n * size]
        .chunks_exact(size)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    (list, &bytes[n * size..])
}

/// Waits for (or, `test`, tests) every request of `hs`.
unsafe fn all(call: &str, hs: &mut [Handle], out: *mut MpiStatus, test: bool) -> Res<bool> {
    live(call)?;
    let mut ids = Vec::with_capacity(hs.len());
    let mut locals = Vec::with_capacity(hs.len());
    for &h in hs.iter() {
        match pending(call, h)? {
            Pending::Local(s) => {
                ids.push(0i64);
                locals.push(Some(s.unwrap_or_else(MpiStatus::empty)));
            }
            Pending::Proxy(id) => {
                ids.push(id);
                locals.push(None);
            }
        }
    }
    let (flag, wire, rest) = if ids.iter().all(|&i| i == 0) {
        (true, vec![WireStatus::default(); hs.len()], Vec::new())
    } else {
        let op = if test { Op::Testall } else { Op::Waitall };
        let (r, bytes) = door::collect(op, &[], &[bytemuck::cast_slice(&ids)])
            .map_err(|f| state::failed(None, call, f))?;
        if test && r.v[0] == 0 {
            return Ok(false);
        }
        let (w, rest) = statuses(&bytes, hs.len());
        (true, w, rest.to_vec())
    };
    let mut at = 0;
    for (i, h) in hs.iter_mut().enumerate() {
        let status = match locals[i] {
            Some(s) => s,
            None => MpiStatus::from_wire(&wire[i]),
        };
        let n = if locals[i].is_none() {
            wire[i].bytes as usize
        } else {
            0
        };
        let data = &rest[at.min(rest.len())..(at + n).min(rest.len())];
        at += n;
        unsafe {
            let status = complete(h, data, status);
            if !out.is_null() {
                super::put_status(out.add(i), status);
            }
        }
    }
    Ok(flag)
}

/// Waits for (or tests) any one: `Some(index)` of the one completed, `None` when every
/// handle is null or inactive (MPI_UNDEFINED), `Err` on error; `Ok(Some(usize::MAX))` for
/// "none yet" of a test.
unsafe fn any(
    call: &str,
    hs: &mut [Handle],
    status: *mut MpiStatus,
    test: bool,
) -> Res<Option<usize>> {
    live(call)?;
    let mut ids = Vec::with_capacity(hs.len());
    for (i, &h) in hs.iter().enumerate() {
        match pending(call, h)? {
            Pending::Local(Some(s)) => {
                unsafe {
                    let s = complete(&mut hs[i], &[], s);
                    put_status(status, s);
                }
                return Ok(Some(i));
            }
            Pending::Local(None) => ids.push(0),
            Pending::Proxy(id) => ids.push(id),
        }
    }
    if ids.iter().all(|&i| i == 0) {
        unsafe { put_status(status, MpiStatus::empty()) };
        return Ok(None);
    }
    let op = if test { Op::Testany } else { Op::Waitany };
    let (r, data) = door::collect(op, &[], &[bytemuck::cast_slice(&ids)])
        .map_err(|f| state::failed(None, call, f))?;
    let index = r.v[1];
    if index < 0 {
        return Ok(Some(usize::MAX));
    }
    let i = index as usize;
    unsafe {
        let s = complete(&mut hs[i], &data, MpiStatus::from_wire(&r.status));
        put_status(status, s);
    }
    Ok(Some(i))
}

/// Waits for (or tests) some: the indices completed, in order; `None` when every handle is
/// null or inactive.
unsafe fn some(
    call: &str,
    hs: &mut [Handle],
    out: *mut MpiStatus,
    test: bool,
) -> Res<Option<Vec<usize>>> {
    live(call)?;
    let mut ids = Vec::with_capacity(hs.len());
    let mut done = Vec::new();
    for (i, &h) in hs.iter().enumerate() {
        match pending(call, h)? {
            Pending::Local(Some(s)) => {
                done.push((i, s));
                ids.push(0);
            }
            Pending::Local(None) => ids.push(0),
            Pending::Proxy(id) => ids.push(id),
        }
    }
    if !done.is_empty() {
        let mut list = Vec::new();
        for (k, (i, s)) in done.into_iter().enumerate() {
            unsafe {
                let s = complete(&mut hs[i], &[], s);
                if !out.is_null() {
                    *out.add(k) = s;
                }
            }
            list.push(i);
        }
        return Ok(Some(list));
    }
    if ids.iter().all(|&i| i == 0) {
        return Ok(None);
    }
    let op = if test { Op::Testsome } else { Op::Waitsome };
    let (r, bytes) = door::collect(op, &[], &[bytemuck::cast_slice(&ids)])
        .map_err(|f| state::failed(None, call, f))?;
    let n = r.v[0] as usize;
    let entry = 8 + std::mem::size_of::<WireStatus>();
    let mut list = Vec::with_capacity(n);
    let mut statuses = Vec::with_capacity(n);
    for k in 0..n {
        let e = &bytes[k * entry..(k + 1) * entry];
        let i = i64::from_ne_bytes(e[..8].try_into().unwrap_or([0; 8])) as usize;
        let w: WireStatus = bytemuck::pod_read_unaligned(&e[8..]);
        list.push(i);
        statuses.push(w);
    }
    let mut at = n * entry;
    for (k, (&i, w)) in list.iter().zip(&statuses).enumerate() {
        let len = w.bytes as usize;
        let data = &bytes[at.min(bytes.len())..(at + len).min(bytes.len())];
        at += len;
        unsafe {
            let s = complete(&mut hs[i], data, MpiStatus::from_wire(w));
            if !out.is_null() {
                *out.add(k) = s;
            }
        }
    }
    Ok(Some(list))
}

unsafe fn handles<'a>(n: c_int, hs: *mut Handle) -> &'a mut [Handle] {
    if n <= 0 || hs.is_null() {
        &mut []
    } else {
        unsafe { std::slice::from_raw_parts_mut(hs, n as usize) }
    }
}

mpi! {
    fn MPI_Wait / PMPI_Wait(h: *mut Handle, status: *mut MpiStatus) -> c_int {
        ret((|| {
            live("MPI_Wait")?;
            match pending("MPI_Wait", unsafe { *h })? {
                Pending::Local(s) => unsafe {
                    let s = complete(h, &[], s.unwrap_or_else(MpiStatus::empty));
                    put_status(status, s);
                },
                Pending::Proxy(id) => {
                    let (r, data) = door::collect(Op::Wait, &[0, id], &[])
                        .map_err(|f| state::failed(None, "MPI_Wait", f))?;
                    unsafe {
                        let s = complete(h, &data, MpiStatus::from_wire(&r.status));
                        put_status(status, s);
                    }
                }
            }
            Ok(())
        })())
    }

    fn MPI_Test / PMPI_Test(h: *mut Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret((|| {
            live("MPI_Test")?;
            match pending("MPI_Test", unsafe { *h })? {
                Pending::Local(s) => unsafe {
                    let s = complete(h, &[], s.unwrap_or_else(MpiStatus::empty));
                    *flag = 1;
                    put_status(status, s);
                },
                Pending::Proxy(id) => {
                    let (r, data) = door::collect(Op::Test, &[0, id], &[])
                        .map_err(|f| state::failed(None, "MPI_Test", f))?;
                    unsafe {
                        *flag = (r.v[0] != 0) as c_int;
                        if r.v[0] != 0 {
                            let s = complete(h, &data, MpiStatus::from_wire(&r.status));
                            put_status(status, s);
                        }
                    }
                }
            }
            Ok(())
        })())
    }

    fn MPI_Waitall / PMPI_Waitall(n: c_int, hs: *mut Handle, statuses: *mut MpiStatus) -> c_int {
        ret(unsafe { all("MPI_Waitall", handles(n, hs), statuses, false) }.map(drop))
    }

    fn MPI_Testall / PMPI_Testall(n: c_int, hs: *mut Handle, flag: *mut c_int, statuses: *mut MpiStatus) -> c_int {
        ret(unsafe { all("MPI_Testall", handles(n, hs), statuses, true) }.map(|f| unsafe { *flag = f as c_int }))
    }

    fn MPI_Waitany / PMPI_Waitany(n: c_int, hs: *mut Handle, index: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret(unsafe { any("MPI_Waitany", handles(n, hs), status, false) }.map(|i| unsafe {
            *index = i.map_or(MPI_UNDEFINED, |i| i as c_int);
        }))
    }

    fn MPI_Testany / PMPI_Testany(n: c_int, hs: *mut Handle, index: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret(unsafe { any("MPI_Testany", handles(n, hs), status, true) }.map(|i| unsafe {
            match i {
                Some(usize::MAX) => {
                    *flag = 0;
                    *index = MPI_UNDEFINED;
                }
                Some(i) => {
                    *flag = 1;
                    *index = i as c_int;
                }
                None => {
                    *flag = 1;
                    *index = MPI_UNDEFINED;
                }
            }
        }))
    }

    fn MPI_Waitsome / PMPI_Waitsome(n: c_int, hs: *mut Handle, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MpiStatus) -> c_int {
        ret(unsafe { some("MPI_Waitsome", handles(n, hs), statuses, false) }.map(|l| unsafe { put_some(l, outcount, indices) }))
    }

    fn MPI_Testsome / PMPI_Testsome(n: c_int, hs: *mut Handle, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MpiStatus) -> c_int {
        ret(unsafe { some("MPI_Testsome", handles(n, hs), statuses, true) }.map(|l| unsafe { put_some(l, outcount, indices) }))
    }

    fn MPI_Request_free / PMPI_Request_free(h: *mut Handle) -> c_int {
        ret((|| {
            live("MPI_Request_free")?;
            let handle = unsafe { *h };
            let req = state::with(|s| s.requests.remove(&handle))
                .ok_or_else(|| raise(None, "MPI_Request_free", class::REQUEST, &format!("{handle:#x} is not a request")))?;
            let coll = match &req {
                Req::Persistent(p) => matches!(p.active.as_deref(), Some(Req::Coll { .. })),
                r => matches!(r, Req::Coll { .. }),
            };
            if coll {
                state::with(|s| s.requests.insert(handle, req));
                return Err(raise(None, "MPI_Request_free", class::REQUEST, "the request of a nonblocking collective cannot be freed (MPI makes it erroneous); complete it with a wait or test"));
            }
            let proxy = match &req {
                Req::Send { proxy, .. } | Req::Recv { proxy, .. } => Some(*proxy),
                Req::Persistent(p) => match p.active.as_deref() {
                    Some(Req::Send { proxy, .. } | Req::Recv { proxy, .. }) => Some(*proxy),
                    _ => None,
                },
                Req::Done { .. } | Req::Coll { .. } => None,
            };
            if let Some(Req::Recv { .. }) = match &req {
                Req::Persistent(p) => p.active.as_deref(),
                r => Some(r),
            } {
                // Its data must still reach the buffer: MPI_Finalize completes it.
                let active = match req {
                    Req::Persistent(p) => p.active.map(|b| *b),
                    r => Some(r),
                };
                state::with(|s| s.freed.extend(active));
                unsafe { *h = MPI_REQUEST_NULL };
                return Ok(());
            }
            if let Req::Persistent(p) = &req
                && let Some(coll) = &p.coll
            {
                // The persistent collective's own communicator goes with it.
                let mut c = coll.comm();
                unsafe { crate::api::comm::PMPI_Comm_free(&mut c) };
            }
            if let Some(id) = proxy {
                door::post(Op::RequestFree, &[0, id], &[], true).map_err(|f| state::failed(None, "MPI_Request_free", f))?;
            }
            unsafe { *h = MPI_REQUEST_NULL };
            Ok(())
        })())
    }

    fn MPI_Cancel / PMPI_Cancel(h: *mut Handle) -> c_int {
        ret((|| {
            live("MPI_Cancel")?;
            if let Pending::Proxy(id) = pending("MPI_Cancel", unsafe { *h })? {
                door::simple(Op::Cancel, &[0, id], &[]).map_err(|f| state::failed(None, "MPI_Cancel", f))?;
            }
            Ok(())
        })())
    }

    fn MPI_Test_cancelled / PMPI_Test_cancelled(status: *const MpiStatus, flag: *mut c_int) -> c_int {
        unsafe { *flag = (*status).cancelled };
        0
    }

    fn MPI_Start / PMPI_Start(h: *mut Handle) -> c_int {
        ret(unsafe { start("MPI_Start", *h) })
    }

    fn MPI_Startall / PMPI_Startall(n: c_int, hs: *mut Handle) -> c_int {
        ret((|| {
            for &h in unsafe { handles(n, hs) }.iter() {
                unsafe { start("MPI_Startall", h) }?;
            }
            Ok(())
        })())
    }
}

unsafe fn put_some(list: Option<Vec<usize>>, outcount: *mut c_int, indices: *mut c_int) {
    match list {
        None => unsafe { *outcount = MPI_UNDEFINED },
        Some(l) => unsafe {
            *outcount = l.len() as c_int;
            for (k, i) in l.into_iter().enumerate() {
                *indices.add(k) = i as c_int;
            }
        },
    }
}

unsafe fn start(call: &str, h: Handle) -> Res<()> {
    live(call)?;
    let p = match state::with(|s| s.requests.get(&h).cloned()) {
        Some(Req::Persistent(p)) => p,
        _ => {
            return Err(raise(
                None,
                call,
                class::REQUEST,
                &format!("{h:#x} is not a persistent request"),
            ));
        }
    };
    if p.active.is_some() {
        return Err(raise(
            Some(p.comm),
            call,
            class::REQUEST,
            "the persistent request is active (started and not completed)",
        ));
    }
    let req = start_persistent(&p)?;
    state::with(|s| {
        if let Some(Req::Persistent(p)) = s.requests.get_mut(&h) {
            p.active = Some(Box::new(req));
        }
    });
    Ok(())
}
