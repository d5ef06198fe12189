//! Collectives, blocking and nonblocking: packed on this side, executed by the proxy with the
//! `Comm` collectives (so the simulator times the algorithm mpsim chose), unpacked here.
//!
//! Each collective is one function for both forms: a blocking call unpacks the result at once;
//! a nonblocking one (`MPI_Iallreduce`, ...) gets a request ([`Req::Coll`]) that remembers how
//! to unpack it ([`Finish`]), which the wait or test that completes it does. The input is
//! packed when the call is made (MPI forbids changing it before completion anyway).
//!
//! Reductions need their element type: a datatype made of one primitive type (`MPI_DOUBLE`,
//! a contiguous or vector of `MPI_INT`, the pair types of `MPI_MINLOC`/`MPI_MAXLOC`) crosses as
//! that type. A user operation (`MPI_Op_create`) runs in this process, where its code is: the
//! contributions are gathered (to the root, or to all) and combined here in rank order.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

pub mod persistent;

use mpsim_door::check::{ARG, Blocks, Coll, Record};
use mpsim_door::wire::{Elem, Op, ReduceOp, class};

use super::p2p::store;
use super::{Res, comm, count, datatype, ret};
use crate::abi::*;
use crate::door;
use crate::dtype::Datatype;
use crate::state::{self, CommInfo, Req, UserOp, raise};

thread_local! {
    /// The program's buffers the collective being issued packed its data from (address,
    /// bytes; contiguous ones only): a nonblocking collective guards them until it completes
    /// ([`issue`] takes them; a call that fails before that drops them, [`forget_sent`]).
    static SENT: std::cell::RefCell<Vec<(usize, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`super::packed`], noting a contiguous buffer of the program's in [`SENT`].
///
/// # Safety
/// As [`super::packed`]; `buf` is the program's own buffer.
unsafe fn packed<'a>(buf: *const c_void, n: usize, dt: &Datatype) -> std::borrow::Cow<'a, [u8]> {
    if dt.is_contiguous() && n > 0 && dt.size > 0 && !buf.is_null() {
        SENT.with(|s| s.borrow_mut().push((buf as usize, n * dt.size)));
    }
    unsafe { super::packed(buf, n, dt) }
}

/// Drops what a failed call noted in [`SENT`].
pub fn forget_sent() {
    SENT.with(|s| s.borrow_mut().clear());
}

/// A reduction's operation: built in, or the program's own.
enum Reduction {
    Builtin(ReduceOp),
    User(UserOp),
}

/// The built-in operation a handle names, if it names one (reductions and one-sided
/// accumulates share it).
pub(crate) fn builtin_op(op: Handle) -> Option<ReduceOp> {
    Some(match op {
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
        _ => return None,
    })
}

fn reduction(call: &str, c: Handle, op: Handle) -> Res<Reduction> {
    if let Some(b) = builtin_op(op) {
        return Ok(Reduction::Builtin(b));
    }
    state::with(|s| s.ops.get(&op).copied())
        .map(Reduction::User)
        .ok_or_else(|| {
            raise(
                Some(c),
                call,
                class::OP,
                &format!("{op:#x} is not an operation"),
            )
        })
}

impl Reduction {
    /// How the checks name it (`MPI_SUM`; a user operation by its function, whose address is
    /// the same in every rank, all forked from one program, shown relative to its file, so
    /// that reports are the same from run to run).
    fn name(&self) -> String {
        let b = match self {
            Reduction::User(u) => return function_name(u.f as usize),
            Reduction::Builtin(b) => b,
        };
        let s = match b {
            ReduceOp::Sum => "MPI_SUM",
            ReduceOp::Prod => "MPI_PROD",
            ReduceOp::Min => "MPI_MIN",
            ReduceOp::Max => "MPI_MAX",
            ReduceOp::Band => "MPI_BAND",
            ReduceOp::Bor => "MPI_BOR",
            ReduceOp::Bxor => "MPI_BXOR",
            ReduceOp::Land => "MPI_LAND",
            ReduceOp::Lor => "MPI_LOR",
            ReduceOp::Lxor => "MPI_LXOR",
            ReduceOp::Minloc => "MPI_MINLOC",
            ReduceOp::Maxloc => "MPI_MAXLOC",
            ReduceOp::Replace => "MPI_REPLACE",
            ReduceOp::NoOp => "MPI_NO_OP",
        };
        s.to_string()
    }
}

/// The name of the function at `addr`: its symbol if the dynamic linker knows it, else its
/// offset in its file.
fn function_name(addr: usize) -> String {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `dladdr` reads the address only.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return "a user operation".into();
    }
    if !info.dli_sname.is_null() {
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_sname) };
        return format!("user operation {}", name.to_string_lossy());
    }
    let file = if info.dli_fname.is_null() {
        String::new()
    } else {
        let f = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
        f.rsplit('/').next().unwrap_or("").to_string()
    };
    format!(
        "user operation at {file}+{:#x}",
        addr.wrapping_sub(info.dli_fbase as usize)
    )
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

/// The `n` displacements at `p` (zeros if `p` is NULL).
unsafe fn displs_of(p: *const c_int, n: u32) -> Vec<isize> {
    unsafe { ints(p, n) }
        .into_iter()
        .map(|d| d as isize)
        .collect()
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
    unsafe { super::packed(acc.as_ptr().cast(), n, t) }.into_owned()
}

/// What completing a collective does with its result on this rank.
#[derive(Clone, Debug)]
pub enum Finish {
    /// Nothing (a barrier, a rank with no result).
    Nothing,
    /// `n` elements of `dt` at `buf`.
    Unpack {
        buf: usize,
        n: usize,
        dt: Arc<Datatype>,
    },
    /// Blocks of `counts[i]` elements of `dt` at `buf` + `displs[i]` extents.
    UnpackV {
        buf: usize,
        counts: Vec<usize>,
        displs: Vec<isize>,
        dt: Arc<Datatype>,
    },
    /// Blocks of `counts[i]` elements of `dts[i]` at `buf` + `displs[i]` bytes
    /// (`MPI_Alltoallw`).
    UnpackW {
        buf: usize,
        counts: Vec<usize>,
        displs: Vec<isize>,
        dts: Vec<Arc<Datatype>>,
    },
    /// A user operation's reduction: the result is every rank's contribution (`block` bytes
    /// each, packed); the first `upto` are combined here in rank order, `n` elements of `dt`
    /// (handle `dth`) each, and the elements `part` = (first, how many) of the outcome go to
    /// `buf` (all `n` when `None`).
    Fold {
        f: UserOp,
        block: usize,
        upto: usize,
        n: usize,
        dt: Arc<Datatype>,
        dth: Handle,
        buf: usize,
        part: Option<(usize, usize)>,
    },
}

impl Finish {
    /// The guards of the contiguous buffers the result goes to ([`state::Guard`]), taken when
    /// a nonblocking collective is posted and checked at its completion.
    pub fn guards(&self) -> Vec<state::Guard> {
        let at = |buf: usize, off: isize| buf.wrapping_add_signed(off);
        match self {
            Finish::Nothing => Vec::new(),
            Finish::Unpack { buf, n, dt } => {
                state::Guard::contiguous(*buf, *n, dt).into_iter().collect()
            }
            Finish::UnpackV {
                buf,
                counts,
                displs,
                dt,
            } => counts
                .iter()
                .zip(displs)
                .filter_map(|(&n, &d)| state::Guard::contiguous(at(*buf, d * dt.extent), n, dt))
                .collect(),
            Finish::UnpackW {
                buf,
                counts,
                displs,
                dts,
            } => counts
                .iter()
                .zip(displs)
                .zip(dts)
                .filter_map(|((&n, &d), t)| state::Guard::contiguous(at(*buf, d), n, t))
                .collect(),
            Finish::Fold {
                buf, n, dt, part, ..
            } => state::Guard::contiguous(*buf, part.map_or(*n, |p| p.1), dt)
                .into_iter()
                .collect(),
        }
    }

    /// Puts `data`, the collective's result, where it goes.
    ///
    /// # Safety
    /// The buffers named are the program's, still valid (MPI: until the collective completes).
    pub unsafe fn apply(&self, data: &[u8]) {
        match self {
            Finish::Nothing => {}
            Finish::Unpack { buf, n, dt } => unsafe { unpack(data, *buf as *mut c_void, *n, dt) },
            Finish::UnpackV {
                buf,
                counts,
                displs,
                dt,
            } => unsafe { unpack_v(data, *buf as *mut c_void, counts, displs, dt) },
            Finish::UnpackW {
                buf,
                counts,
                displs,
                dts,
            } => {
                let mut at = 0;
                for ((&n, &d), t) in counts.iter().zip(displs).zip(dts) {
                    let len = n * t.size;
                    let part = &data[at.min(data.len())..(at + len).min(data.len())];
                    at += len;
                    let p = unsafe { (*buf as *mut u8).offset(d) };
                    unsafe { unpack(part, p.cast(), n, t) };
                }
            }
            Finish::Fold {
                f,
                block,
                upto,
                n,
                dt,
                dth,
                buf,
                part,
            } => {
                if *upto == 0 || *block == 0 || data.len() < upto * block {
                    return;
                }
                let out = unsafe { fold(f, data, *block, *upto, *n, dt, *dth) };
                let (first, k) = part.unwrap_or((0, *n));
                let start = (first * dt.size).min(out.len());
                let end = (start + k * dt.size).min(out.len());
                unsafe { unpack(&out[start..end], *buf as *mut c_void, k, dt) };
            }
        }
    }
}

/// Makes collective `op` (its blocking form) named `call`, with arguments `a` and `payload`:
/// blocking (`request` `None`), its result is put in place now; nonblocking, `*request` gets
/// a request that does it when completed.
///
/// `check` is what the call was, for the run's check that every rank made the same collective
/// with matching arguments (`mpsim_door::check`): it crosses the door beside the data.
#[allow(clippy::too_many_arguments)]
unsafe fn issue(
    call: &str,
    c: Handle,
    op: Op,
    a: &[i64],
    payload: &[&[u8]],
    finish: Finish,
    check: Coll,
    request: Option<*mut Handle>,
) -> Res<()> {
    let sent = SENT.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let record = Record::Coll(Coll {
        call: call.to_string(),
        ..check
    })
    .encode();
    let mut args = [0i64; ARG + 1];
    args[..a.len()].copy_from_slice(a);
    args[ARG] = record.len() as i64;
    let mut parts = payload.to_vec();
    parts.push(&record);
    let (a, payload) = (&args[..], &parts[..]);
    match request {
        None => {
            let got = run(call, c, op, a, payload)?;
            unsafe { finish.apply(&got) };
        }
        Some(r) => {
            let nb = op.nonblocking().unwrap_or(op);
            let reply =
                door::simple(nb, a, payload).map_err(|f| state::failed(Some(c), call, f))?;
            let mut guards = finish.guards();
            guards.extend(sent.iter().map(|&(addr, len)| state::Guard::of(addr, len)));
            crate::door::checked(guards.iter().map(|g| g.len).sum());
            let h = store(Req::Coll {
                proxy: reply.v[0],
                finish,
                guards,
            });
            unsafe { *r = h };
        }
    }
    Ok(())
}

/// A collective's record for the checks: `root`, what it sends and expects (the call's name
/// is added by [`issue`]).
fn coll(root: Option<c_int>, sends: Blocks, expects: Blocks) -> Coll {
    Coll {
        root: root.map(i64::from),
        sends,
        expects,
        ..Coll::default()
    }
}

/// Per-rank signatures of `counts[i]` elements of `t`.
fn each(counts: &[usize], t: &Datatype) -> Blocks {
    Blocks::Each(counts.iter().map(|&n| t.sig(n)).collect())
}

/// Checks a nonblocking call's request pointer.
fn request_ptr(call: &str, c: Handle, r: *mut Handle) -> Res<Option<*mut Handle>> {
    if r.is_null() {
        Err(raise(
            Some(c),
            call,
            class::ARG,
            "the request argument is NULL",
        ))
    } else {
        Ok(Some(r))
    }
}

unsafe fn barrier(call: &str, c: Handle, r: Option<*mut Handle>) -> Res<()> {
    let info = comm(call, c)?;
    unsafe {
        issue(
            call,
            c,
            Op::Barrier,
            &[info.id],
            &[],
            Finish::Nothing,
            Coll::default(),
            r,
        )
    }
}

unsafe fn bcast(
    call: &str,
    buf: *mut c_void,
    n: c_int,
    dt: Handle,
    root: c_int,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let n = count(call, c, n)?;
    let t = datatype(call, c, dt)?;
    check_root(call, c, &info, root)?;
    let mine = info.rank as c_int == root;
    let data = if mine {
        unsafe { packed(buf, n, &t) }.into_owned()
    } else {
        Vec::new()
    };
    let a = [info.id, root as i64, (t.size * n) as i64];
    let check = if mine {
        coll(Some(root), Blocks::All(t.sig(n)), Blocks::None)
    } else {
        coll(Some(root), Blocks::None, Blocks::All(t.sig(n)))
    };
    let finish = if mine {
        Finish::Nothing
    } else {
        Finish::Unpack {
            buf: buf as usize,
            n,
            dt: t,
        }
    };
    unsafe { issue(call, c, Op::Bcast, &a, &[&data], finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gather(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    root: c_int,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    check_root(call, c, &info, root)?;
    let at_root = info.rank as c_int == root;
    let (data, sends) = if at_root && in_place(sbuf) {
        let rn = count(call, c, rcount)?;
        let rt = datatype(call, c, rdt)?;
        let mine = unsafe {
            rbuf.cast::<u8>()
                .offset(info.rank as isize * rn as isize * rt.extent)
        };
        (
            unsafe { packed(mine.cast(), rn, &rt) }.into_owned(),
            Blocks::None,
        )
    } else {
        let sn = count(call, c, scount)?;
        let st = datatype(call, c, sdt)?;
        (
            unsafe { packed(sbuf, sn, &st) }.into_owned(),
            Blocks::All(st.sig(sn)),
        )
    };
    let (finish, expects) = if at_root {
        let rn = count(call, c, rcount)?;
        let rt = datatype(call, c, rdt)?;
        let sig = rt.sig(rn);
        (
            Finish::Unpack {
                buf: rbuf as usize,
                n: rn * info.size as usize,
                dt: rt,
            },
            Blocks::All(sig),
        )
    } else {
        (Finish::Nothing, Blocks::None)
    };
    let a = [info.id, root as i64, data.len() as i64];
    let check = coll(Some(root), sends, expects);
    unsafe { issue(call, c, Op::Gather, &a, &[&data], finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: Handle,
    root: c_int,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    check_root(call, c, &info, root)?;
    let at_root = info.rank as c_int == root;
    let (counts, disp, rt) = if at_root {
        let rt = datatype(call, c, rdt)?;
        let counts = counts_of(call, c, &unsafe { ints(rcounts, info.size) })?;
        let disp: Vec<isize> = unsafe { displs_of(displs, info.size) };
        (counts, disp, Some(rt))
    } else {
        (Vec::new(), Vec::new(), None)
    };
    let (data, sends) = match &rt {
        Some(rt) if in_place(sbuf) => {
            let me = info.rank as usize;
            let p = unsafe { rbuf.cast::<u8>().offset(disp[me] * rt.extent) };
            (
                unsafe { packed(p.cast(), counts[me], rt) }.into_owned(),
                Blocks::None,
            )
        }
        _ => {
            let sn = count(call, c, scount)?;
            let st = datatype(call, c, sdt)?;
            (
                unsafe { packed(sbuf, sn, &st) }.into_owned(),
                Blocks::All(st.sig(sn)),
            )
        }
    };
    let byte_counts: Vec<usize> = match &rt {
        Some(rt) => counts.iter().map(|&n| n * rt.size).collect(),
        None => Vec::new(),
    };
    let expects = rt.as_ref().map_or(Blocks::None, |rt| each(&counts, rt));
    let check = coll(Some(root), sends, expects);
    let finish = match rt {
        Some(dt) => Finish::UnpackV {
            buf: rbuf as usize,
            counts,
            displs: disp,
            dt,
        },
        None => Finish::Nothing,
    };
    let a = [info.id, root as i64, data.len() as i64];
    let payload: [&[u8]; 2] = [&data, &u64s(&byte_counts)];
    unsafe { issue(call, c, Op::Gatherv, &a, &payload, finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatter(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    root: c_int,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    check_root(call, c, &info, root)?;
    let at_root = info.rank as c_int == root;
    let place = at_root && in_place(rbuf);
    let (data, block, sends) = if at_root {
        let sn = count(call, c, scount)?;
        let st = datatype(call, c, sdt)?;
        (
            unsafe { packed(sbuf, sn * info.size as usize, &st) }.into_owned(),
            sn * st.size,
            Blocks::All(st.sig(sn)),
        )
    } else {
        let rn = count(call, c, rcount)?;
        let rt = datatype(call, c, rdt)?;
        (Vec::new(), rn * rt.size, Blocks::None)
    };
    let (finish, expects) = if place {
        (Finish::Nothing, Blocks::None)
    } else {
        let (n, dt) = (count(call, c, rcount)?, datatype(call, c, rdt)?);
        let sig = dt.sig(n);
        (
            Finish::Unpack {
                buf: rbuf as usize,
                n,
                dt,
            },
            Blocks::All(sig),
        )
    };
    let a = [info.id, root as i64, block as i64];
    let check = coll(Some(root), sends, expects);
    unsafe { issue(call, c, Op::Scatter, &a, &[&data], finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv(
    call: &str,
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    root: c_int,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    check_root(call, c, &info, root)?;
    let at_root = info.rank as c_int == root;
    let place = at_root && in_place(rbuf);
    let (rn, rt) = if place {
        (0, None)
    } else {
        (count(call, c, rcount)?, Some(datatype(call, c, rdt)?))
    };
    let mut payload = Vec::new();
    let mut sends = Blocks::None;
    if at_root {
        let st = datatype(call, c, sdt)?;
        let counts = counts_of(call, c, &unsafe { ints(scounts, info.size) })?;
        let disp: Vec<isize> = unsafe { displs_of(displs, info.size) };
        let bytes: Vec<usize> = counts.iter().map(|&n| n * st.size).collect();
        payload.extend_from_slice(&u64s(&bytes));
        payload.extend_from_slice(&unsafe { pack_v(sbuf, &counts, &disp, &st) });
        sends = each(&counts, &st);
    }
    let expects = rt.as_ref().map_or(Blocks::None, |t| Blocks::All(t.sig(rn)));
    let recv_bytes = rt.as_ref().map_or_else(
        || {
            // In place: the root keeps its block; it receives its own count.
            let mine = unsafe { ints(scounts, info.size) }[info.rank as usize].max(0) as usize;
            mine * state::with(|s| s.datatype(sdt)).map_or(0, |t| t.size)
        },
        |t| rn * t.size,
    );
    let finish = match rt {
        Some(dt) => Finish::Unpack {
            buf: rbuf as usize,
            n: rn,
            dt,
        },
        None => Finish::Nothing,
    };
    let a = [info.id, root as i64, recv_bytes as i64];
    let check = coll(Some(root), sends, expects);
    unsafe { issue(call, c, Op::Scatterv, &a, &[&payload], finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgather(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let rn = count(call, c, rcount)?;
    let rt = datatype(call, c, rdt)?;
    let (data, sends) = if in_place(sbuf) {
        let mine = unsafe {
            rbuf.cast::<u8>()
                .offset(info.rank as isize * rn as isize * rt.extent)
        };
        (
            unsafe { packed(mine.cast(), rn, &rt) }.into_owned(),
            rt.sig(rn),
        )
    } else {
        let sn = count(call, c, scount)?;
        let st = datatype(call, c, sdt)?;
        (unsafe { packed(sbuf, sn, &st) }.into_owned(), st.sig(sn))
    };
    let check = coll(None, Blocks::All(sends), Blocks::All(rt.sig(rn)));
    let finish = Finish::Unpack {
        buf: rbuf as usize,
        n: rn * info.size as usize,
        dt: rt,
    };
    unsafe {
        issue(
            call,
            c,
            Op::Allgather,
            &[info.id],
            &[&data],
            finish,
            check,
            r,
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let rt = datatype(call, c, rdt)?;
    let counts = counts_of(call, c, &unsafe { ints(rcounts, info.size) })?;
    let disp: Vec<isize> = unsafe { displs_of(displs, info.size) };
    let (data, sends) = if in_place(sbuf) {
        let me = info.rank as usize;
        let p = unsafe { rbuf.cast::<u8>().offset(disp[me] * rt.extent) };
        (
            unsafe { packed(p.cast(), counts[me], &rt) }.into_owned(),
            rt.sig(counts[me]),
        )
    } else {
        let sn = count(call, c, scount)?;
        let st = datatype(call, c, sdt)?;
        (unsafe { packed(sbuf, sn, &st) }.into_owned(), st.sig(sn))
    };
    let check = coll(None, Blocks::All(sends), each(&counts, &rt));
    let bytes: Vec<usize> = counts.iter().map(|&n| n * rt.size).collect();
    let a = [info.id, data.len() as i64];
    let payload: [&[u8]; 2] = [&data, &u64s(&bytes)];
    let finish = Finish::UnpackV {
        buf: rbuf as usize,
        counts,
        displs: disp,
        dt: rt,
    };
    unsafe { issue(call, c, Op::Allgatherv, &a, &payload, finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoall(
    call: &str,
    sbuf: *const c_void,
    scount: c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let rn = count(call, c, rcount)?;
    let rt = datatype(call, c, rdt)?;
    let (data, sends) = if in_place(sbuf) {
        (
            unsafe { packed(rbuf, rn * info.size as usize, &rt) }.into_owned(),
            rt.sig(rn),
        )
    } else {
        let sn = count(call, c, scount)?;
        let st = datatype(call, c, sdt)?;
        (
            unsafe { packed(sbuf, sn * info.size as usize, &st) }.into_owned(),
            st.sig(sn),
        )
    };
    let check = coll(None, Blocks::All(sends), Blocks::All(rt.sig(rn)));
    let finish = Finish::Unpack {
        buf: rbuf as usize,
        n: rn * info.size as usize,
        dt: rt,
    };
    unsafe {
        issue(
            call,
            c,
            Op::Alltoall,
            &[info.id],
            &[&data],
            finish,
            check,
            r,
        )
    }
}

/// One side of an all-to-all with a block per peer: `counts[i]` elements of `types[i]` at
/// `buf` + `displs[i]` bytes.
struct PeerBlocks {
    buf: *const c_void,
    counts: Vec<usize>,
    displs: Vec<isize>,
    types: Vec<Arc<Datatype>>,
}

impl PeerBlocks {
    /// Their signatures, for the checks.
    fn sigs(&self) -> Blocks {
        Blocks::Each(
            self.counts
                .iter()
                .zip(&self.types)
                .map(|(&k, t)| t.sig(k))
                .collect(),
        )
    }

    /// Bytes of data per peer.
    fn bytes(&self) -> Vec<usize> {
        self.counts
            .iter()
            .zip(&self.types)
            .map(|(&k, t)| k * t.size)
            .collect()
    }

    /// The blocks packed one after the other.
    unsafe fn pack(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for ((&k, &d), t) in self.counts.iter().zip(&self.displs).zip(&self.types) {
            let p = unsafe { self.buf.cast::<u8>().offset(d) };
            out.extend_from_slice(&unsafe { packed(p.cast(), k, t) });
        }
        out
    }
}

/// `MPI_Alltoallv` and `MPI_Alltoallw` once their blocks are known (`send` `None`: in place,
/// the receive blocks are sent): packed here per peer, so the proxy runs an alltoallv of bytes.
unsafe fn alltoall_blocks(
    call: &str,
    c: Handle,
    info: &CommInfo,
    send: Option<PeerBlocks>,
    recv: PeerBlocks,
    r: Option<*mut Handle>,
) -> Res<()> {
    let send = send.as_ref().unwrap_or(&recv);
    let data = unsafe { send.pack() };
    let a = [info.id, data.len() as i64];
    let payload: [&[u8]; 3] = [&u64s(&send.bytes()), &u64s(&recv.bytes()), &data];
    let check = coll(None, send.sigs(), recv.sigs());
    let finish = Finish::UnpackW {
        buf: recv.buf as usize,
        counts: recv.counts,
        displs: recv.displs,
        dts: recv.types,
    };
    unsafe { issue(call, c, Op::Alltoallv, &a, &payload, finish, check, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv(
    call: &str,
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: Handle,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    // Displacements in extents of the one datatype, made bytes.
    let blocks =
        |buf: *const c_void, counts: *const c_int, displs: *const c_int, dt| -> Res<PeerBlocks> {
            let t = datatype(call, c, dt)?;
            Ok(PeerBlocks {
                buf,
                counts: counts_of(call, c, &unsafe { ints(counts, info.size) })?,
                displs: unsafe { displs_of(displs, info.size) }
                    .into_iter()
                    .map(|d| d * t.extent)
                    .collect(),
                types: vec![t; info.size as usize],
            })
        };
    let recv = blocks(rbuf, rcounts, rdispls, rdt)?;
    let send = if in_place(sbuf) {
        None
    } else {
        Some(blocks(sbuf, scounts, sdispls, sdt)?)
    };
    unsafe { alltoall_blocks(call, c, &info, send, recv, r) }
}

/// `MPI_Alltoallw`: a datatype per peer and displacements in bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw(
    call: &str,
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdts: *const Handle,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdts: *const Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let blocks = |buf: *const c_void,
                  counts: *const c_int,
                  displs: *const c_int,
                  dts: *const Handle|
     -> Res<PeerBlocks> {
        if dts.is_null() {
            return Err(raise(
                Some(c),
                call,
                class::ARG,
                "the datatype array is NULL",
            ));
        }
        Ok(PeerBlocks {
            buf,
            counts: counts_of(call, c, &unsafe { ints(counts, info.size) })?,
            displs: unsafe { displs_of(displs, info.size) },
            types: unsafe { std::slice::from_raw_parts(dts, info.size as usize) }
                .iter()
                .map(|&h| datatype(call, c, h))
                .collect::<Res<_>>()?,
        })
    };
    let recv = blocks(rbuf, rcounts, rdispls, rdts)?;
    let send = if in_place(sbuf) {
        None
    } else {
        Some(blocks(sbuf, scounts, sdispls, sdts)?)
    };
    unsafe { alltoall_blocks(call, c, &info, send, recv, r) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_block(
    call: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    n: c_int,
    dt: Handle,
    op: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let n = count(call, c, n)?;
    let counts = vec![n as c_int; info.size as usize];
    unsafe { reduce_scatter_counts(call, sbuf, rbuf, &counts, dt, op, c, &info, r) }
}

/// `MPI_Reduce_scatter`: `counts`, one per rank, says how much of the result each gets.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(
    call: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: Handle,
    op: Handle,
    c: Handle,
    r: Option<*mut Handle>,
) -> Res<()> {
    let info = comm(call, c)?;
    let counts = unsafe { ints(counts, info.size) };
    unsafe { reduce_scatter_counts(call, sbuf, rbuf, &counts, dt, op, c, &info, r) }
}

/// Defines each collective's three entry points from one argument list and one implementation
/// (`$imp(call, args..., request)`): the blocking form (`MPI_Bcast`, no request), the
/// nonblocking one (`MPI_Ibcast`, a request) and the persistent one (`MPI_Bcast_init`, which
/// keeps the arguments, [`persistent::Keep`], and runs the nonblocking form with them at each
/// start, on a duplicate `$c` of its communicator). So the three check and pack their
/// arguments in the same code.
macro_rules! collectives {
    ($(
        $call:ident / $pcall:ident, $icall:ident / $picall:ident, $init:ident / $pinit:ident
        ( $($arg:ident : $ty:ty),* ) on $c:ident => $imp:ident ( $($e:expr),* );
    )*) => {
        mpi! {$(
            fn $call / $pcall($($arg: $ty),*) -> c_int {
                if crate::api::inter::coll::is($c) {
                    return ret(unsafe { crate::api::inter::coll::$imp(stringify!($call), $($e,)* None) });
                }
                if crate::api::rma::any_window() {
                    // While it waits, the rank serves other ranks' lock epochs (`api/rma`).
                    let call = stringify!($call);
                    let mut req = MPI_REQUEST_NULL;
                    return ret(unsafe { $imp(call, $($e,)* Some(&mut req)) }
                        .and_then(|()| crate::api::rma::progress(call, &mut [req])));
                }
                ret(unsafe { $imp(stringify!($call), $($e,)* None) })
            }

            fn $icall / $picall($($arg: $ty,)* request: *mut Handle) -> c_int {
                let call = stringify!($icall);
                if crate::api::inter::coll::is($c) {
                    return ret(request_ptr(call, $c, request)
                        .and_then(|r| unsafe { crate::api::inter::coll::$imp(call, $($e,)* r) }));
                }
                ret(request_ptr(call, $c, request).and_then(|r| unsafe { $imp(call, $($e,)* r) }))
            }

            fn $init / $pinit($($arg: $ty,)* _info: Handle, request: *mut Handle) -> c_int {
                let n = persistent::size($c);
                $(let $arg = <$ty as persistent::Keep>::keep($arg, n);)*
                let first = $c;
                let run = move |dup: Handle, r: Option<*mut Handle>| {
                    let call = concat!("MPI_Start (", stringify!($init), ")");
                    $(let $arg = <$ty as persistent::Keep>::lend(&$arg);)*
                    let _ = $c;
                    let $c = dup;
                    if crate::api::inter::coll::is($c) {
                        return unsafe { crate::api::inter::coll::$imp(call, $($e,)* r) };
                    }
                    unsafe { $imp(call, $($e,)* r) }
                };
                unsafe { persistent::init(stringify!($init), first, request, run) }
            }
        )*}
    };
}

collectives! {
    MPI_Barrier / PMPI_Barrier, MPI_Ibarrier / PMPI_Ibarrier, MPI_Barrier_init / PMPI_Barrier_init
        (c: Handle) on c => barrier(c);
    MPI_Bcast / PMPI_Bcast, MPI_Ibcast / PMPI_Ibcast, MPI_Bcast_init / PMPI_Bcast_init
        (buf: *mut c_void, n: c_int, dt: Handle, root: c_int, c: Handle) on c
        => bcast(buf, n, dt, root, c);
    MPI_Reduce / PMPI_Reduce, MPI_Ireduce / PMPI_Ireduce, MPI_Reduce_init / PMPI_Reduce_init
        (sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, root: c_int, c: Handle) on c
        => reduce(sbuf, rbuf, n, dt, op, Some(root), c, Op::Reduce);
    MPI_Allreduce / PMPI_Allreduce, MPI_Iallreduce / PMPI_Iallreduce, MPI_Allreduce_init / PMPI_Allreduce_init
        (sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) on c
        => reduce(sbuf, rbuf, n, dt, op, None, c, Op::Allreduce);
    MPI_Scan / PMPI_Scan, MPI_Iscan / PMPI_Iscan, MPI_Scan_init / PMPI_Scan_init
        (sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) on c
        => reduce(sbuf, rbuf, n, dt, op, None, c, Op::Scan);
    MPI_Exscan / PMPI_Exscan, MPI_Iexscan / PMPI_Iexscan, MPI_Exscan_init / PMPI_Exscan_init
        (sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) on c
        => reduce(sbuf, rbuf, n, dt, op, None, c, Op::Exscan);
    MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block, MPI_Ireduce_scatter_block / PMPI_Ireduce_scatter_block,
    MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init
        (sbuf: *const c_void, rbuf: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle) on c
        => reduce_scatter_block(sbuf, rbuf, n, dt, op, c);
    MPI_Reduce_scatter / PMPI_Reduce_scatter, MPI_Ireduce_scatter / PMPI_Ireduce_scatter,
    MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init
        (sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: Handle, op: Handle, c: Handle) on c
        => reduce_scatter(sbuf, rbuf, counts, dt, op, c);
    MPI_Gather / PMPI_Gather, MPI_Igather / PMPI_Igather, MPI_Gather_init / PMPI_Gather_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) on c
        => gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    MPI_Gatherv / PMPI_Gatherv, MPI_Igatherv / PMPI_Igatherv, MPI_Gatherv_init / PMPI_Gatherv_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, root: c_int, c: Handle) on c
        => gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
    MPI_Scatter / PMPI_Scatter, MPI_Iscatter / PMPI_Iscatter, MPI_Scatter_init / PMPI_Scatter_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) on c
        => scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    MPI_Scatterv / PMPI_Scatterv, MPI_Iscatterv / PMPI_Iscatterv, MPI_Scatterv_init / PMPI_Scatterv_init
        (sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, root: c_int, c: Handle) on c
        => scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
    MPI_Allgather / PMPI_Allgather, MPI_Iallgather / PMPI_Iallgather, MPI_Allgather_init / PMPI_Allgather_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, c: Handle) on c
        => allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    MPI_Allgatherv / PMPI_Allgatherv, MPI_Iallgatherv / PMPI_Iallgatherv, MPI_Allgatherv_init / PMPI_Allgatherv_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, c: Handle) on c
        => allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    MPI_Alltoall / PMPI_Alltoall, MPI_Ialltoall / PMPI_Ialltoall, MPI_Alltoall_init / PMPI_Alltoall_init
        (sbuf: *const c_void, scount: c_int, sdt: Handle, rbuf: *mut c_void, rcount: c_int, rdt: Handle, c: Handle) on c
        => alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    MPI_Alltoallv / PMPI_Alltoallv, MPI_Ialltoallv / PMPI_Ialltoallv, MPI_Alltoallv_init / PMPI_Alltoallv_init
        (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: Handle, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: Handle, c: Handle) on c
        => alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c);
    MPI_Alltoallw / PMPI_Alltoallw, MPI_Ialltoallw / PMPI_Ialltoallw, MPI_Alltoallw_init / PMPI_Alltoallw_init
        (sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdts: *const Handle, rbuf: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdts: *const Handle, c: Handle) on c
        => alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c);
}

/// The reductions (`Reduce` with a root, `Allreduce`, `Scan`, `Exscan`), blocking or not.
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
    request: Option<*mut Handle>,
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
    let red = reduction(call, c, op)?;
    let check = Coll {
        op: Some(red.name()),
        ..coll(root, Blocks::All(t.sig(n)), Blocks::All(t.sig(n)))
    };
    match red {
        Reduction::Builtin(b) => {
            let (e, k) = elem(call, c, &t)?;
            let a = match root {
                Some(r) => vec![info.id, r as i64, e as i64, b as i64, (n * k) as i64],
                None => vec![info.id, e as i64, b as i64, (n * k) as i64],
            };
            let finish = if receives && !(wire == Op::Exscan && info.rank == 0) {
                Finish::Unpack {
                    buf: rbuf as usize,
                    n,
                    dt: t,
                }
            } else {
                Finish::Nothing
            };
            unsafe { issue(call, c, wire, &a, &[&data], finish, check, request) }
        }
        Reduction::User(f) => {
            // Gather every contribution here (to all: the calls stay collective), combine
            // in rank order.
            let me = info.rank as usize;
            let upto = match wire {
                Op::Scan => me + 1,
                Op::Exscan => me,
                _ => info.size as usize,
            };
            let finish = if receives {
                Finish::Fold {
                    f,
                    block: data.len(),
                    upto,
                    n,
                    dt: t,
                    dth: dt,
                    buf: rbuf as usize,
                    part: None,
                }
            } else {
                Finish::Nothing
            };
            unsafe {
                issue(
                    call,
                    c,
                    Op::Allgather,
                    &[info.id],
                    &[&data],
                    finish,
                    check,
                    request,
                )
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_counts(
    call: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: &[c_int],
    dt: Handle,
    op: Handle,
    c: Handle,
    info: &CommInfo,
    request: Option<*mut Handle>,
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
    let red = reduction(call, c, op)?;
    let check = Coll {
        op: Some(red.name()),
        ..coll(None, Blocks::All(t.sig(total)), Blocks::All(t.sig(total)))
    };
    match red {
        Reduction::Builtin(b) => {
            let (e, k) = elem(call, c, &t)?;
            let elems: Vec<usize> = counts.iter().map(|&n| n * k).collect();
            let finish = Finish::Unpack {
                buf: rbuf as usize,
                n: counts[me],
                dt: t,
            };
            let a = [info.id, e as i64, b as i64];
            let payload: [&[u8]; 2] = [&u64s(&elems), &data];
            unsafe {
                issue(
                    call,
                    c,
                    Op::ReduceScatter,
                    &a,
                    &payload,
                    finish,
                    check,
                    request,
                )
            }
        }
        Reduction::User(f) => {
            let first: usize = counts[..me].iter().sum();
            let finish = Finish::Fold {
                f,
                block: data.len(),
                upto: info.size as usize,
                n: total,
                dt: t,
                dth: dt,
                buf: rbuf as usize,
                part: Some((first, counts[me])),
            };
            unsafe {
                issue(
                    call,
                    c,
                    Op::Allgather,
                    &[info.id],
                    &[&data],
                    finish,
                    check,
                    request,
                )
            }
        }
    }
}

mpi! {
    fn MPI_Reduce_local / PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, n: c_int, dt: Handle, op: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Reduce_local";
            let c = MPI_COMM_WORLD;
            super::live(call)?;
            let n = count(call, c, n)?;
            let t = datatype(call, c, dt)?;
            if n == 0 {
                return Ok(());
            }
            match reduction(call, c, op)? {
                // The program's function, on its own buffers, as MPI calls it.
                Reduction::User(f) => {
                    let mut len = n as c_int;
                    let mut d = dt;
                    unsafe { (f.f)(inbuf as *mut c_void, inoutbuf.cast(), &mut len, &mut d) };
                    Ok(())
                }
                Reduction::Builtin(b) => {
                    let (e, k) = elem(call, c, &t)?;
                    let world = comm(call, c)?;
                    let mut data = unsafe { super::packed(inbuf, n, &t) }.into_owned();
                    data.extend_from_slice(&unsafe { super::packed(inoutbuf, n, &t) });
                    let a = [world.id, e as i64, b as i64, (n * k) as i64];
                    let out = run(call, c, Op::ReduceLocal, &a, &[&data])?;
                    unsafe { unpack(&out, inoutbuf, n, &t) };
                    Ok(())
                }
            }
        })())
    }
}
