//! Point-to-point: sends in every mode, receives, probes, `sendrecv`, the attached buffer, and
//! persistent requests (kept here and started as nonblocking calls, reading the buffer at
//! each start, as MPI says).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mpsim_door::check;
use mpsim_door::wire::{Op, SendMode, class};

use super::{Res, comm, count, datatype, live, packed, put_status, ret};
use crate::abi::*;
use crate::door;
use crate::dtype::Datatype;
use crate::state::{self, Persistent, Req, raise};

/// Checks a peer rank: `MPI_PROC_NULL`, a member, or (for a receive) `MPI_ANY_SOURCE`.
fn check_peer(call: &str, c: Handle, size: u32, peer: c_int, receive: bool) -> Res<()> {
    let ok = peer == MPI_PROC_NULL
        || (receive && peer == MPI_ANY_SOURCE)
        || (0..size as c_int).contains(&peer);
    if ok {
        Ok(())
    } else {
        Err(raise(
            Some(c),
            call,
            class::RANK,
            &format!("rank {peer} is not in the communicator of {size} ranks"),
        ))
    }
}

/// Checks a message's peer and tag ([`check_peer`], [`check_tag`]).
fn check_envelope(
    call: &str,
    c: Handle,
    size: u32,
    peer: c_int,
    tag: c_int,
    receive: bool,
) -> Res<()> {
    check_peer(call, c, size, peer, receive)?;
    check_tag(call, c, tag, receive)
}

/// Checks a tag: `0..=MPI_TAG_UB`, or (receive) `MPI_ANY_TAG`.
fn check_tag(call: &str, c: Handle, tag: c_int, receive: bool) -> Res<()> {
    if (0..=TAG_UB).contains(&tag) || (receive && tag == MPI_ANY_TAG) {
        Ok(())
    } else {
        Err(raise(
            Some(c),
            call,
            class::TAG,
            &format!("invalid tag {tag}"),
        ))
    }
}

/// Puts into argument words `a` the type signature of `n` elements of `t` for the run's
/// checks (`mpsim_door::check`): gives the record, which goes at the end of the payload, its
/// length in `a[check::ARG]`.
///
/// A program sends the same count of the same datatype again and again: the last record made
/// is kept and given again when the signature is the same: the same count of the same shared
/// datatype (which cannot change while it is held here: a change to a datatype copies it,
/// `Arc::make_mut`), or of one with the same name, size and kinds (all the signature depends
/// on), so that a loop of calls encodes one record.
fn with_sig(a: &mut [i64; 8], t: &Arc<Datatype>, n: usize) -> std::rc::Rc<[u8]> {
    type Last = Option<(Arc<Datatype>, usize, std::rc::Rc<[u8]>)>;
    thread_local! {
        static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) };
    }
    let record = LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((held, count, record)) = &*last
            && *count == n
            && (Arc::ptr_eq(held, t)
                || (held.size == t.size && held.name == t.name && held.kinds == t.kinds))
        {
            return std::rc::Rc::clone(record);
        }
        let record: std::rc::Rc<[u8]> = check::Record::P2p(t.sig(n)).encode().into();
        *last = Some((Arc::clone(t), n, std::rc::Rc::clone(&record)));
        record
    });
    a[check::ARG] = record.len() as i64;
    record
}

/// A send in `mode`, blocking or not.
#[allow(clippy::too_many_arguments)]
unsafe fn send(
    call: &str,
    buf: *const c_void,
    n: c_int,
    dt: Handle,
    dest: c_int,
    tag: c_int,
    c: Handle,
    mode: SendMode,
    blocking: bool,
) -> Res<Req> {
    let info = comm(call, c)?;
    let n = count(call, c, n)?;
    let t = datatype(call, c, dt)?;
    check_envelope(call, c, info.peers, dest, tag, false)?;
    if dest == MPI_PROC_NULL {
        return Ok(Req::Done {
            status: MpiStatus::proc_null(),
        });
    }
    let data = unsafe { packed(buf, n, &t) };
    let (op, id) = if blocking {
        (Op::Send, 0)
    } else {
        (Op::Isend, door::request_id())
    };
    let mut a = [info.id, dest as i64, tag as i64, mode as i64, 0, 0, 0, id];
    let sig = with_sig(&mut a, &t, n);
    // Its errors (a bad destination, say) would end the run unless they return: then it waits
    // for its answer.
    door::post(op, &a, &[&data, &sig], !info.errors_return)
        .map_err(|f| state::failed(Some(c), call, f))?;
    Ok(if blocking {
        Req::Done {
            status: MpiStatus::empty(),
        }
    } else {
        let guard = guard_of(buf as usize, n, &t);
        Req::Send { proxy: id, guard }
    })
}

/// Receives packed `bytes` into `count` elements of `t` at `buf`.
unsafe fn deliver(bytes: &[u8], buf: usize, n: usize, t: &Datatype) {
    if bytes.is_empty() {
        return;
    }
    if t.is_contiguous() {
        let len = bytes.len().min(t.size * n);
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, len) };
    } else {
        unsafe { t.unpack(bytes, buf as *mut u8, n) };
    }
}

/// A receive's checked arguments: the count, the datatype and the call's argument words
/// (`None` for a receive from `MPI_PROC_NULL`, complete at once).
struct ReceiveArgs {
    n: usize,
    t: Arc<Datatype>,
    a: [i64; 8],
    /// The check record (`a[check::ARG]` says its length), the payload's end.
    sig: std::rc::Rc<[u8]>,
    /// The communicator's errors return to the program.
    errors_return: bool,
}

fn receive_args(
    call: &str,
    n: c_int,
    dt: Handle,
    source: c_int,
    tag: c_int,
    c: Handle,
) -> Res<Option<ReceiveArgs>> {
    let info = comm(call, c)?;
    let n = count(call, c, n)?;
    // A receive from MPI_PROC_NULL moves no data: MPI_DATATYPE_NULL is accepted there (as
    // MPICH does), any other datatype is checked.
    let t = if source == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL {
        None
    } else {
        Some(datatype(call, c, dt)?)
    };
    check_envelope(call, c, info.peers, source, tag, true)?;
    let t = match t {
        Some(t) if source != MPI_PROC_NULL => t,
        _ => return Ok(None),
    };
    let mut a = [
        info.id,
        source as i64,
        tag as i64,
        (t.size * n) as i64,
        0,
        0,
        0,
        0,
    ];
    let sig = with_sig(&mut a, &t, n);
    Ok(Some(ReceiveArgs {
        n,
        t,
        a,
        sig,
        errors_return: info.errors_return,
    }))
}

/// A blocking receive into `buf`.
#[allow(clippy::too_many_arguments)]
unsafe fn recv(
    call: &str,
    buf: *mut c_void,
    n: c_int,
    dt: Handle,
    source: c_int,
    tag: c_int,
    c: Handle,
) -> Res<MpiStatus> {
    if crate::api::rma::any_window() && source != MPI_PROC_NULL {
        // While it waits, the rank serves other ranks' lock epochs (`api/rma`).
        let mut req = MPI_REQUEST_NULL;
        let rc = unsafe { PMPI_Irecv(buf, n, dt, source, tag, c, &mut req) };
        if rc != state::OK {
            return Err(rc);
        }
        let st = crate::api::rma::progress_statuses(call, std::slice::from_mut(&mut req))?;
        return Ok(st.first().copied().unwrap_or_else(MpiStatus::empty));
    }
    let Some(ReceiveArgs { n, t, a, sig, .. }) = receive_args(call, n, dt, source, tag, c)? else {
        return Ok(MpiStatus::proc_null());
    };
    let cap = t.size * n;
    let (r, data) = if t.is_contiguous() {
        let mut at = 0usize;
        let base = buf as *mut u8;
        let r = door::call(Op::Recv, &a, &[&sig], &mut |b| {
            let k = b.len().min(cap - at.min(cap));
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), base.add(at), k) };
            at += k;
        });
        (r, None)
    } else {
        match door::collect(Op::Recv, &a, &[&sig]) {
            Ok((r, d)) => (Ok(r), Some(d)),
            Err(f) => (Err(f), None),
        }
    };
    let r = r.map_err(|f| state::failed(Some(c), call, f))?;
    if let Some(d) = data {
        unsafe { deliver(&d, buf as usize, n, &t) };
    }
    Ok(MpiStatus::from_wire(&r.status))
}

/// Starts a nonblocking receive.
unsafe fn irecv(
    call: &str,
    buf: *mut c_void,
    n: c_int,
    dt: Handle,
    source: c_int,
    tag: c_int,
    c: Handle,
) -> Res<Req> {
    let Some(ReceiveArgs {
        n,
        t,
        mut a,
        sig,
        errors_return,
    }) = receive_args(call, n, dt, source, tag, c)?
    else {
        return Ok(Req::Done {
            status: MpiStatus::proc_null(),
        });
    };
    let id = door::request_id();
    a[7] = id;
    door::post(Op::Irecv, &a, &[&sig], !errors_return)
        .map_err(|f| state::failed(Some(c), call, f))?;
    let guard = guard_of(buf as usize, n, &t);
    Ok(Req::Recv {
        proxy: id,
        buf: buf as usize,
        count: n,
        dt: t,
        guard,
    })
}

/// `MPI_Isendrecv` (MPI-4): the library's own nonblocking send and receive, made one request
/// at the proxy (`Op::PairRequests`), the receive's, which completes when both have. The send's
/// data is packed at the call, so `MPI_Isendrecv_replace` receives into the buffer it sends
/// from. With `MPI_PROC_NULL` on one side the request is the other side's.
#[allow(clippy::too_many_arguments)]
unsafe fn isendrecv(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    source: c_int,
    rtag: c_int,
    c: Handle,
) -> Res<Req> {
    let sent = unsafe {
        send(
            call,
            sbuf,
            scount,
            sdt,
            dest,
            stag,
            c,
            SendMode::Standard,
            false,
        )
    }?;
    let received = match unsafe { irecv(call, rbuf, rcount, rdt, source, rtag, c) } {
        Ok(r) => r,
        Err(code) => {
            // The program gets the error (MPI_ERRORS_RETURN) and no request: the send posted
            // first is let go, as MPI_Request_free would.
            if let Req::Send { proxy, .. } = sent {
                door::post(Op::RequestFree, &[0, proxy], &[], false)
                    .map_err(|f| state::failed(Some(c), call, f))?;
            }
            return Err(code);
        }
    };
    match (sent, received) {
        (
            Req::Send { proxy: s, .. },
            Req::Recv {
                proxy: r,
                buf,
                count,
                dt,
                guard,
            },
        ) => {
            let info = comm(call, c)?;
            door::simple(Op::PairRequests, &[info.id, s, r], &[])
                .map_err(|f| state::failed(Some(c), call, f))?;
            Ok(Req::Recv {
                proxy: r,
                buf,
                count,
                dt,
                guard,
            })
        }
        (Req::Done { .. }, received) => Ok(received),
        (sent, _) => Ok(sent),
    }
}

/// Stores a new request and gives its handle.
pub fn store(req: Req) -> Handle {
    state::with(|s| {
        let h = s.handle();
        s.requests.insert(h, req);
        h
    })
}

/// Puts the result of a nonblocking start into `*request`.
unsafe fn started(r: Res<Req>, request: *mut Handle) -> c_int {
    match r {
        Ok(req) => {
            unsafe { *request = store(req) };
            0
        }
        Err(c) => c,
    }
}

/// Starts a persistent request's call.
pub fn start_persistent(p: &Persistent) -> Res<Req> {
    if let Some(coll) = &p.coll {
        unsafe { coll.start() }
    } else if p.op == Op::Irecv {
        start_recv(p)
    } else {
        let mode = SendMode::from_u32(p.mode as u32).unwrap_or(SendMode::Standard);
        unsafe { send_typed(p, mode) }
    }
}

/// A persistent send, with its datatype already resolved.
unsafe fn send_typed(p: &Persistent, mode: SendMode) -> Res<Req> {
    let info = comm("MPI_Start", p.comm)?;
    if p.peer == MPI_PROC_NULL {
        return Ok(Req::Done {
            status: MpiStatus::proc_null(),
        });
    }
    let data = unsafe { packed(p.buf as *const c_void, p.count, &p.dt) };
    let id = door::request_id();
    let mut a = [
        info.id,
        p.peer as i64,
        p.tag as i64,
        mode as i64,
        0,
        0,
        0,
        id,
    ];
    let sig = with_sig(&mut a, &p.dt, p.count);
    door::post(Op::Isend, &a, &[&data, &sig], !info.errors_return)
        .map_err(|f| state::failed(Some(p.comm), "MPI_Start", f))?;
    let guard = guard_of(p.buf, p.count, &p.dt);
    Ok(Req::Send { proxy: id, guard })
}

/// Makes a persistent request.
#[allow(clippy::too_many_arguments)]
unsafe fn persistent(
    call: &str,
    op: Op,
    mode: SendMode,
    buf: *const c_void,
    n: c_int,
    dt: Handle,
    peer: c_int,
    tag: c_int,
    c: Handle,
    request: *mut Handle,
) -> c_int {
    ret((|| {
        let info = comm(call, c)?;
        let count = count(call, c, n)?;
        let t = datatype(call, c, dt)?;
        let receive = op == Op::Irecv;
        check_envelope(call, c, info.peers, peer, tag, receive)?;
        let p = Persistent {
            op,
            mode: mode as i64,
            buf: buf as usize,
            count,
            dt: t,
            peer,
            tag,
            comm: c,
            active: None,
            coll: None,
        };
        unsafe { *request = store(Req::Persistent(Box::new(p))) };
        Ok(())
    })())
}

mpi! {
    fn MPI_Send / PMPI_Send(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle) -> c_int {
        ret(unsafe { send("MPI_Send", buf, n, dt, dest, tag, c, SendMode::Standard, true) }.map(drop))
    }
    fn MPI_Ssend / PMPI_Ssend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle) -> c_int {
        ret(unsafe { send("MPI_Ssend", buf, n, dt, dest, tag, c, SendMode::Synchronous, true) }.map(drop))
    }
    fn MPI_Bsend / PMPI_Bsend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle) -> c_int {
        ret(unsafe { send("MPI_Bsend", buf, n, dt, dest, tag, c, SendMode::Buffered, true) }.map(drop))
    }
    fn MPI_Rsend / PMPI_Rsend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle) -> c_int {
        ret(unsafe { send("MPI_Rsend", buf, n, dt, dest, tag, c, SendMode::Ready, true) }.map(drop))
    }
    fn MPI_Isend / PMPI_Isend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { started(send("MPI_Isend", buf, n, dt, dest, tag, c, SendMode::Standard, false), request) }
    }
    fn MPI_Issend / PMPI_Issend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { started(send("MPI_Issend", buf, n, dt, dest, tag, c, SendMode::Synchronous, false), request) }
    }
    fn MPI_Ibsend / PMPI_Ibsend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { started(send("MPI_Ibsend", buf, n, dt, dest, tag, c, SendMode::Buffered, false), request) }
    }
    fn MPI_Irsend / PMPI_Irsend(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { started(send("MPI_Irsend", buf, n, dt, dest, tag, c, SendMode::Ready, false), request) }
    }
    fn MPI_Recv / PMPI_Recv(buf: *mut c_void, n: c_int, dt: Handle, source: c_int, tag: c_int, c: Handle, status: *mut MpiStatus) -> c_int {
        ret(unsafe { recv("MPI_Recv", buf, n, dt, source, tag, c) }.map(|s| unsafe { put_status(status, s) }))
    }
    fn MPI_Irecv / PMPI_Irecv(buf: *mut c_void, n: c_int, dt: Handle, source: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { started(irecv("MPI_Irecv", buf, n, dt, source, tag, c), request) }
    }

    fn MPI_Sendrecv / PMPI_Sendrecv(
        sbuf: *const c_void, scount: c_int, sdt: Handle, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: c_int, rdt: Handle, source: c_int, rtag: c_int,
        c: Handle, status: *mut MpiStatus,
    ) -> c_int {
        ret(unsafe { sendrecv("MPI_Sendrecv", sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, c) }
            .map(|s| unsafe { put_status(status, s) }))
    }

    fn MPI_Isendrecv / PMPI_Isendrecv(
        sbuf: *const c_void, scount: c_int, sdt: Handle, dest: c_int, stag: c_int,
        rbuf: *mut c_void, rcount: c_int, rdt: Handle, source: c_int, rtag: c_int,
        c: Handle, request: *mut Handle,
    ) -> c_int {
        unsafe { started(isendrecv("MPI_Isendrecv", sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, c), request) }
    }

    fn MPI_Isendrecv_replace / PMPI_Isendrecv_replace(
        buf: *mut c_void, n: c_int, dt: Handle, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, c: Handle, request: *mut Handle,
    ) -> c_int {
        unsafe { started(isendrecv("MPI_Isendrecv_replace", buf, n, dt, dest, stag, buf, n, dt, source, rtag, c), request) }
    }

    fn MPI_Sendrecv_replace / PMPI_Sendrecv_replace(
        buf: *mut c_void, n: c_int, dt: Handle, dest: c_int, stag: c_int,
        source: c_int, rtag: c_int, c: Handle, status: *mut MpiStatus,
    ) -> c_int {
        ret((|| {
            let count = count("MPI_Sendrecv_replace", c, n)?;
            let t = datatype("MPI_Sendrecv_replace", c, dt)?;
            let copy = unsafe { packed(buf, count, &t) }.into_owned();
            let s = unsafe {
                sendrecv_packed("MPI_Sendrecv_replace", &copy, dest, stag, buf, n, dt, source, rtag, c)
            }?;
            unsafe { put_status(status, s) };
            Ok(())
        })())
    }

    fn MPI_Probe / PMPI_Probe(source: c_int, tag: c_int, c: Handle, status: *mut MpiStatus) -> c_int {
        ret(probe("MPI_Probe", Op::Probe, source, tag, c).map(|(_, _, s)| unsafe { put_status(status, s) }))
    }
    fn MPI_Iprobe / PMPI_Iprobe(source: c_int, tag: c_int, c: Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret(probe("MPI_Iprobe", Op::Iprobe, source, tag, c).map(|(f, _, s)| unsafe {
            *flag = f as c_int;
            if f {
                put_status(status, s);
            }
        }))
    }
    fn MPI_Mprobe / PMPI_Mprobe(source: c_int, tag: c_int, c: Handle, message: *mut Handle, status: *mut MpiStatus) -> c_int {
        ret(probe("MPI_Mprobe", Op::Mprobe, source, tag, c).map(|(_, m, s)| unsafe {
            *message = m;
            put_status(status, s);
        }))
    }
    fn MPI_Improbe / PMPI_Improbe(source: c_int, tag: c_int, c: Handle, flag: *mut c_int, message: *mut Handle, status: *mut MpiStatus) -> c_int {
        ret(probe("MPI_Improbe", Op::Improbe, source, tag, c).map(|(f, m, s)| unsafe {
            *flag = f as c_int;
            if f {
                *message = m;
                put_status(status, s);
            }
        }))
    }
    fn MPI_Mrecv / PMPI_Mrecv(buf: *mut c_void, n: c_int, dt: Handle, message: *mut Handle, status: *mut MpiStatus) -> c_int {
        ret(unsafe { mrecv("MPI_Mrecv", buf, n, dt, message) }.map(|s| unsafe { put_status(status, s) }))
    }
    fn MPI_Imrecv / PMPI_Imrecv(buf: *mut c_void, n: c_int, dt: Handle, message: *mut Handle, request: *mut Handle) -> c_int {
        ret((|| {
            let m = unsafe { *message };
            if m == MPI_MESSAGE_NO_PROC {
                unsafe { *message = MPI_MESSAGE_NULL; *request = store(Req::Done { status: MpiStatus::proc_null() }) };
                return Ok(());
            }
            let (id, _) = take_message("MPI_Imrecv", m)?;
            let count = count("MPI_Imrecv", MPI_COMM_WORLD, n)?;
            let t = datatype("MPI_Imrecv", MPI_COMM_WORLD, dt)?;
            let r = door::simple(Op::Imrecv, &[id, (t.size * count) as i64], &[])
                .map_err(|f| state::failed(None, "MPI_Imrecv", f))?;
            unsafe {
                *message = MPI_MESSAGE_NULL;
                let guard = guard_of(buf as usize, count, &t);
                *request = store(Req::Recv { proxy: r.v[0], buf: buf as usize, count, dt: t, guard });
            }
            Ok(())
        })())
    }

    fn MPI_Get_count / PMPI_Get_count(status: *const MpiStatus, dt: Handle, out: *mut c_int) -> c_int {
        ret((|| {
            let t = datatype("MPI_Get_count", MPI_COMM_WORLD, dt)?;
            let bytes = unsafe { (*status).bytes() } as usize;
            let n = if t.size == 0 {
                if bytes == 0 { 0 } else { MPI_UNDEFINED }
            } else if bytes.is_multiple_of(t.size) {
                c_int::try_from(bytes / t.size).unwrap_or(MPI_UNDEFINED)
            } else {
                MPI_UNDEFINED
            };
            unsafe { *out = n };
            Ok(())
        })())
    }

    fn MPI_Get_elements / PMPI_Get_elements(status: *const MpiStatus, dt: Handle, out: *mut c_int) -> c_int {
        ret((|| {
            let t = datatype("MPI_Get_elements", MPI_COMM_WORLD, dt)?;
            let bytes = unsafe { (*status).bytes() } as usize;
            let n = t.elements_in(bytes).map_or(MPI_UNDEFINED, |n| c_int::try_from(n).unwrap_or(MPI_UNDEFINED));
            unsafe { *out = n };
            Ok(())
        })())
    }

    fn MPI_Buffer_attach / PMPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
        ret((|| {
            live("MPI_Buffer_attach")?;
            let bytes = count("MPI_Buffer_attach", MPI_COMM_WORLD, size)?;
            door::simple(Op::BufferAttach, &[bytes as i64], &[])
                .map_err(|f| state::failed(None, "MPI_Buffer_attach", f))?;
            state::with(|s| s.buffer = Some((buf as usize, bytes)));
            Ok(())
        })())
    }

    fn MPI_Buffer_detach / PMPI_Buffer_detach(buf: *mut *mut c_void, size: *mut c_int) -> c_int {
        ret((|| {
            live("MPI_Buffer_detach")?;
            door::simple(Op::BufferDetach, &[], &[]).map_err(|f| state::failed(None, "MPI_Buffer_detach", f))?;
            let (addr, bytes) = state::with(|s| s.buffer.take()).unwrap_or((0, 0));
            unsafe {
                if !buf.is_null() {
                    *buf = addr as *mut c_void;
                }
                if !size.is_null() {
                    *size = bytes as c_int;
                }
            }
            Ok(())
        })())
    }

    fn MPI_Send_init / PMPI_Send_init(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { persistent("MPI_Send_init", Op::Isend, SendMode::Standard, buf, n, dt, dest, tag, c, request) }
    }
    fn MPI_Ssend_init / PMPI_Ssend_init(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { persistent("MPI_Ssend_init", Op::Isend, SendMode::Synchronous, buf, n, dt, dest, tag, c, request) }
    }
    fn MPI_Bsend_init / PMPI_Bsend_init(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { persistent("MPI_Bsend_init", Op::Isend, SendMode::Buffered, buf, n, dt, dest, tag, c, request) }
    }
    fn MPI_Rsend_init / PMPI_Rsend_init(buf: *const c_void, n: c_int, dt: Handle, dest: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { persistent("MPI_Rsend_init", Op::Isend, SendMode::Ready, buf, n, dt, dest, tag, c, request) }
    }
    fn MPI_Recv_init / PMPI_Recv_init(buf: *mut c_void, n: c_int, dt: Handle, source: c_int, tag: c_int, c: Handle, request: *mut Handle) -> c_int {
        unsafe { persistent("MPI_Recv_init", Op::Irecv, SendMode::Standard, buf, n, dt, source, tag, c, request) }
    }
}

/// A receive of a persistent request (its datatype resolved at init).
pub fn start_recv(p: &Persistent) -> Res<Req> {
    let info = comm("MPI_Start", p.comm)?;
    if p.peer == MPI_PROC_NULL {
        return Ok(Req::Done {
            status: MpiStatus::proc_null(),
        });
    }
    let id = door::request_id();
    let mut a = [
        info.id,
        p.peer as i64,
        p.tag as i64,
        (p.dt.size * p.count) as i64,
        0,
        0,
        0,
        id,
    ];
    let sig = with_sig(&mut a, &p.dt, p.count);
    door::post(Op::Irecv, &a, &[&sig], !info.errors_return)
        .map_err(|f| state::failed(Some(p.comm), "MPI_Start", f))?;
    Ok(Req::Recv {
        proxy: id,
        buf: p.buf,
        count: p.count,
        dt: p.dt.clone(),
        guard: guard_of(p.buf, p.count, &p.dt),
    })
}

/// Probes: `(flag, message handle, status)`.
fn probe(
    call: &str,
    op: Op,
    source: c_int,
    tag: c_int,
    c: Handle,
) -> Res<(bool, Handle, MpiStatus)> {
    let info = comm(call, c)?;
    check_envelope(call, c, info.peers, source, tag, true)?;
    if source == MPI_PROC_NULL {
        return Ok((true, MPI_MESSAGE_NO_PROC, MpiStatus::proc_null()));
    }
    let r = door::simple(op, &[info.id, source as i64, tag as i64], &[])
        .map_err(|f| state::failed(Some(c), call, f))?;
    let status = MpiStatus::from_wire(&r.status);
    let (flag, id) = match op {
        Op::Probe => (true, 0),
        Op::Iprobe => (r.v[0] != 0, 0),
        Op::Mprobe => (true, r.v[0]),
        _ => (r.v[0] != 0, r.v[1]),
    };
    let handle = if matches!(op, Op::Mprobe | Op::Improbe) && flag {
        state::with(|s| {
            let h = s.handle();
            s.messages.insert(h, (id, status));
            h
        })
    } else {
        MPI_MESSAGE_NULL
    };
    Ok((flag, handle, status))
}

fn take_message(call: &str, m: Handle) -> Res<(i64, MpiStatus)> {
    state::with(|s| s.messages.remove(&m)).ok_or_else(|| {
        raise(
            None,
            call,
            class::REQUEST,
            &format!("{m:#x} is not a matched message"),
        )
    })
}

unsafe fn mrecv(
    call: &str,
    buf: *mut c_void,
    n: c_int,
    dt: Handle,
    message: *mut Handle,
) -> Res<MpiStatus> {
    live(call)?;
    let m = unsafe { *message };
    if m == MPI_MESSAGE_NO_PROC {
        unsafe { *message = MPI_MESSAGE_NULL };
        return Ok(MpiStatus::proc_null());
    }
    let (id, _) = take_message(call, m)?;
    let count = count(call, MPI_COMM_WORLD, n)?;
    let t = datatype(call, MPI_COMM_WORLD, dt)?;
    let (r, data) = door::collect(Op::Mrecv, &[id, (t.size * count) as i64], &[])
        .map_err(|f| state::failed(None, call, f))?;
    unsafe {
        deliver(&data, buf as usize, count, &t);
        *message = MPI_MESSAGE_NULL;
    }
    Ok(MpiStatus::from_wire(&r.status))
}

#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    source: c_int,
    rtag: c_int,
    c: Handle,
) -> Res<MpiStatus> {
    let n = count(call, c, scount)?;
    let t = datatype(call, c, sdt)?;
    let data = unsafe { packed(sbuf, n, &t) };
    unsafe { sendrecv_packed(call, &data, dest, stag, rbuf, rcount, rdt, source, rtag, c) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv_packed(
    call: &str,
    data: &[u8],
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    source: c_int,
    rtag: c_int,
    c: Handle,
) -> Res<MpiStatus> {
    let info = comm(call, c)?;
    let rn = count(call, c, rcount)?;
    let rt = datatype(call, c, rdt)?;
    check_envelope(call, c, info.peers, dest, stag, false)?;
    check_envelope(call, c, info.peers, source, rtag, true)?;
    let a = [
        info.id,
        dest as i64,
        stag as i64,
        source as i64,
        rtag as i64,
        (rt.size * rn) as i64,
    ];
    let (r, got) =
        door::collect(Op::Sendrecv, &a, &[data]).map_err(|f| state::failed(Some(c), call, f))?;
    unsafe { deliver(&got, rbuf as usize, rn, &rt) };
    Ok(if source == MPI_PROC_NULL {
        MpiStatus::proc_null()
    } else {
        MpiStatus::from_wire(&r.status)
    })
}

/// The guard of a nonblocking call's buffer, taken at its post ([`state::Guard`]).
pub(crate) fn guard_of(buf: usize, n: usize, dt: &crate::dtype::Datatype) -> Option<state::Guard> {
    let guard = state::Guard::contiguous(buf, n, dt);
    door::checked(guard.map_or(0, |g| g.len));
    guard
}

/// Completes a request at its wait: its buffers are checked unchanged since the post (else the
/// run ends: the program wrote one while the call was in flight), then a receive's data goes
/// to its buffer, a collective's result in place.
pub unsafe fn finish_recv(req: &Req, data: &[u8]) {
    let (guards, what, why): (&[state::Guard], _, _) = match req {
        Req::Send { guard, .. } => (
            guard.as_slice(),
            "send",
            "a real MPI may send the new bytes, or a mix",
        ),
        Req::Recv { guard, .. } => (
            guard.as_slice(),
            "receive",
            "a real MPI may be writing it, and the message overwrites what was written",
        ),
        Req::Coll { guards, .. } => (
            guards.as_slice(),
            "collective",
            "a real MPI may be reading or writing it",
        ),
        _ => (&[], "", ""),
    };
    for g in guards {
        if !g.unchanged() {
            state::raise(
                None,
                "MPI_Wait",
                class::BUFFER,
                &format!(
                    "the buffer of {} bytes was written while its nonblocking {what} was in flight (MPI forbids it: {why})",
                    g.len
                ),
            );
        }
    }
    door::checked(guards.iter().map(|g| g.len).sum());
    match req {
        Req::Recv { buf, count, dt, .. } => unsafe { deliver(data, *buf, *count, dt) },
        Req::Coll { finish, .. } => unsafe { finish.apply(data) },
        _ => {}
    }
}
