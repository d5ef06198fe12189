//! Reductions of a C rank: the element type and operation from the wire, the typed `Comm`
//! collective, bytes back. An operation a type has no meaning for (`MPI_BAND` on `MPI_DOUBLE`)
//! is `MPI_ERR_OP`, as MPI says.

use bytemuck::Pod;
use mpsim::{Arithmetic, Comm, Error, Integer, Loc, Op, Result};
use mpsim_door::wire::{Elem, Op as Wire, ReduceOp};

use crate::longdouble::{self, Ld, LdInt};
use crate::proxy::{Buf, Held};

/// What a reduction runs: which collective and its root.
#[derive(Clone, Copy)]
enum Kind {
    Reduce(u32),
    Allreduce,
    Scan,
    Exscan,
    ReduceScatter,
}

fn op_error(comm: &Comm, op: ReduceOp, elem: Elem) -> Error {
    let _ = comm;
    Error::InvalidOp {
        site: mpsim::Site::new(comm.world_rank_of(comm.rank()), "reduce"),
        what: format!("{} is not defined on {}", op.name(), elem.name()),
    }
}

fn arith<T: Arithmetic>(op: ReduceOp) -> Option<Op<T>> {
    Some(match op {
        ReduceOp::Sum => Op::sum(),
        ReduceOp::Prod => Op::prod(),
        ReduceOp::Min => Op::min(),
        ReduceOp::Max => Op::max(),
        _ => return None,
    })
}

fn integer<T: Integer>(op: ReduceOp) -> Option<Op<T>> {
    arith(op).or_else(|| match op {
        ReduceOp::Band => Some(Op::band()),
        ReduceOp::Bor => Some(Op::bor()),
        ReduceOp::Bxor => Some(Op::bxor()),
        ReduceOp::Land => Some(Op::land()),
        ReduceOp::Lor => Some(Op::lor()),
        ReduceOp::Lxor => Some(Op::lxor()),
        _ => None,
    })
}

fn loc<V: Arithmetic, I: Integer>(op: ReduceOp) -> Option<Op<Loc<V, I>>> {
    match op {
        ReduceOp::Minloc => Some(Op::minloc()),
        ReduceOp::Maxloc => Some(Op::maxloc()),
        _ => None,
    }
}

async fn typed<T: Pod>(
    comm: &Comm,
    kind: Kind,
    op: Option<Op<T>>,
    err: impl FnOnce() -> Error,
    data: &[u8],
    counts: &[usize],
) -> Result<Vec<u8>> {
    let op = op.ok_or_else(err)?;
    let send = elements::<T>(data);
    let n = send.len();
    let out: Vec<T> = match kind {
        Kind::Reduce(root) => {
            let mut recv = vec![T::zeroed(); if comm.rank() == root { n } else { 0 }];
            comm.reduce(&send, &mut recv, &op, root).await?;
            recv
        }
        Kind::Allreduce => {
            let mut recv = vec![T::zeroed(); n];
            comm.allreduce(&send, &mut recv, &op).await?;
            recv
        }
        Kind::Scan => {
            let mut recv = vec![T::zeroed(); n];
            comm.scan(&send, &mut recv, &op).await?;
            recv
        }
        Kind::Exscan => {
            let mut recv = vec![T::zeroed(); n];
            comm.exscan(&send, &mut recv, &op).await?;
            recv
        }
        Kind::ReduceScatter => {
            let mine = counts.get(comm.rank() as usize).copied().unwrap_or(0);
            let mut recv = vec![T::zeroed(); mine];
            comm.reduce_scatter(&send, &mut recv, counts, &op).await?;
            recv
        }
    };
    Ok(bytemuck::cast_slice(&out).to_vec())
}

/// A reduction's arguments read from the wire.
struct Args {
    kind: Kind,
    elem: Elem,
    op: ReduceOp,
    data: Vec<u8>,
    counts: Vec<usize>,
}

/// Reads the reduction `wire` (blocking form) of arguments `a` and `payload`.
fn args(comm: &Comm, wire: Wire, a: &[i64], payload: Vec<u8>) -> Result<Args> {
    let (kind, e, o) = match wire {
        Wire::Reduce => (Kind::Reduce(a[1] as u32), a[2], a[3]),
        Wire::Allreduce => (Kind::Allreduce, a[1], a[2]),
        Wire::Scan => (Kind::Scan, a[1], a[2]),
        Wire::Exscan => (Kind::Exscan, a[1], a[2]),
        _ => (Kind::ReduceScatter, a[1], a[2]),
    };
    let (counts, data) = if matches!(kind, Kind::ReduceScatter) {
        let k = (comm.size() as usize * 8).min(payload.len());
        let counts = payload[..k]
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])) as usize)
            .collect();
        (counts, payload[k..].to_vec())
    } else {
        (Vec::new(), payload)
    };
    let (elem, op) = elem_and_op(e, o)?;
    Ok(Args {
        kind,
        elem,
        op,
        data,
        counts,
    })
}

/// The element type and operation of wire numbers `e` and `o`.
fn elem_and_op(e: i64, o: i64) -> Result<(Elem, ReduceOp)> {
    let bad = || {
        Error::program(format!(
            "the C library sent an unknown element type or operation ({e}, {o})"
        ))
    };
    Ok((
        Elem::from_u32(e as u32).ok_or_else(bad)?,
        ReduceOp::from_u32(o as u32).ok_or_else(bad)?,
    ))
}

/// Calls `$f::<T>(comm, kind, op, err, data, counts)` with the `T` of the element type (and
/// awaits it, given `await`).
macro_rules! by_elem {
    ($f:ident, $comm:expr, $x:expr $(, $aw:ident)?) => {{
        let x = $x;
        let (comm, kind, elem, op) = ($comm, x.kind, x.elem, x.op);
        let err = || op_error(comm, op, elem);
        let (d, c) = (&x.data[..], &x.counts[..]);
        match elem {
            Elem::I8 => $f::<i8>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::U8 => $f::<u8>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::I16 => $f::<i16>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::U16 => $f::<u16>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::I32 => $f::<i32>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::U32 => $f::<u32>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::I64 => $f::<i64>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::U64 => $f::<u64>(comm, kind, integer(op), err, d, c)$(.$aw)?,
            Elem::F32 => $f::<f32>(comm, kind, arith(op), err, d, c)$(.$aw)?,
            Elem::F64 => $f::<f64>(comm, kind, arith(op), err, d, c)$(.$aw)?,
            Elem::FloatInt => $f::<Loc<f32, i32>>(comm, kind, loc(op), err, d, c)$(.$aw)?,
            Elem::DoubleInt => $f::<Loc<f64, i32>>(comm, kind, loc(op), err, d, c)$(.$aw)?,
            Elem::LongInt => $f::<Loc<i64, i32>>(comm, kind, loc(op), err, d, c)$(.$aw)?,
            Elem::TwoInt => $f::<Loc<i32, i32>>(comm, kind, loc(op), err, d, c)$(.$aw)?,
            Elem::ShortInt => $f::<Loc<i16, i32>>(comm, kind, loc(op), err, d, c)$(.$aw)?,
            Elem::LongDouble => $f::<Ld>(comm, kind, longdouble::op(op), err, d, c)$(.$aw)?,
            Elem::LongDoubleInt => {
                $f::<LdInt>(comm, kind, longdouble::loc(op), err, d, c)$(.$aw)?
            }
        }
    }};
}

/// `MPI_Reduce_local`: `payload` holds `inbuf` then `inoutbuf`; the new `inoutbuf`.
pub(crate) fn local(comm: &Comm, a: &[i64], payload: Vec<u8>) -> Result<Vec<u8>> {
    let (elem, op) = elem_and_op(a[1], a[2])?;
    let x = Args {
        kind: Kind::Allreduce,
        elem,
        op,
        data: payload,
        counts: Vec::new(),
    };
    by_elem!(local_typed, comm, x)
}

/// [`local`] for elements of type `T`.
fn local_typed<T: Pod>(
    _comm: &Comm,
    _kind: Kind,
    op: Option<Op<T>>,
    err: impl FnOnce() -> Error,
    data: &[u8],
    _counts: &[usize],
) -> Result<Vec<u8>> {
    let op = op.ok_or_else(err)?;
    let (a, b) = data.split_at(data.len() / 2);
    let (a, mut b) = (elements::<T>(a), elements::<T>(b));
    op.reduce_local(&a, &mut b)?;
    Ok(bytemuck::cast_slice(&b).to_vec())
}

/// Runs the reduction `wire` of arguments `a` on `payload`.
pub(crate) async fn run(comm: &Comm, wire: Wire, a: &[i64], payload: Vec<u8>) -> Result<Vec<u8>> {
    let x = args(comm, wire, a, payload)?;
    by_elem!(typed, comm, x, await)
}

/// Starts the nonblocking form of the reduction `wire` (its blocking form named) of
/// arguments `a` on `payload`.
pub(crate) fn start(comm: &Comm, wire: Wire, a: &[i64], payload: Vec<u8>) -> Result<Held> {
    let x = args(comm, wire, a, payload)?;
    by_elem!(start_typed, comm, x)
}

/// [`typed`]'s nonblocking form: the request, holding the buffer of the result.
fn start_typed<T: Pod>(
    comm: &Comm,
    kind: Kind,
    op: Option<Op<T>>,
    err: impl FnOnce() -> Error,
    data: &[u8],
    counts: &[usize],
) -> Result<Held> {
    let op = op.ok_or_else(err)?;
    let send = elements::<T>(data);
    let n = send.len();
    let out = match kind {
        Kind::Reduce(root) if comm.rank() != root => 0,
        Kind::ReduceScatter => counts.get(comm.rank() as usize).copied().unwrap_or(0),
        _ => n,
    };
    let mut buf = Buf::zeroed(out * std::mem::size_of::<T>());
    // SAFETY: the request is held beside the buffer it borrows and dropped first (`Held`).
    let recv: &'static mut [T] = unsafe { buf.view() };
    let req = match kind {
        Kind::Reduce(root) => comm.ireduce(&send, recv, &op, root)?,
        Kind::Allreduce => comm.iallreduce(&send, recv, &op)?,
        Kind::Scan => comm.iscan(&send, recv, &op)?,
        Kind::Exscan => comm.iexscan(&send, recv, &op)?,
        Kind::ReduceScatter => comm.ireduce_scatter(&send, recv, counts, &op)?,
    };
    Ok(Held {
        req: Some(req),
        buf: Some(buf),
        coll: true,
        check: None,
        pair: None,
    })
}

/// The elements of `T` in `data` (a trailing part of one is dropped).
fn elements<T: Pod>(data: &[u8]) -> Vec<T> {
    let mut v = vec![T::zeroed(); data.len() / std::mem::size_of::<T>().max(1)];
    let whole = v.len() * std::mem::size_of::<T>();
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(&data[..whole]);
    v
}
