//! One RMA operation as it travels: the origin checks it and encodes it ([`Queued`]) when the
//! program calls `MPI_Put`, `MPI_Get`, `MPI_Accumulate`, ...; the target decodes and applies
//! it to its window memory ([`apply`]) when it synchronizes, and the bytes a fetching
//! operation returns go back to the origin, which puts them in the program's buffer
//! ([`Queued::finish`]).
//!
//! The target datatype is the origin's handle, meaningless at the target: the encoding carries
//! its layout (runs of bytes, extent, size, element type), from which the target rebuilds it.

use std::ffi::c_int;

use mpsim_door::wire::{Elem, Op, ReduceOp, class};

use crate::abi::*;
use crate::dtype::{Datatype, Run, predefined};

/// What an operation does at the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Put = 0,
    Get = 1,
    Acc = 2,
    GetAcc = 3,
    Cas = 4,
}

impl Kind {
    fn from(n: i64) -> Option<Kind> {
        Some(match n {
            0 => Kind::Put,
            1 => Kind::Get,
            2 => Kind::Acc,
            3 => Kind::GetAcc,
            4 => Kind::Cas,
            _ => return None,
        })
    }
}

/// The program's calls, as the target names them in an error.
pub const CALLS: [&str; 6] = [
    "MPI_Put",
    "MPI_Get",
    "MPI_Accumulate",
    "MPI_Get_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
];

/// The name of call number `n` of [`CALLS`].
pub fn call_name(n: i64) -> &'static str {
    CALLS.get(n as usize).copied().unwrap_or("an RMA call")
}

/// An operation queued at the origin: its encoding for the target, and where the bytes it
/// fetches go.
pub struct Queued {
    pub target: u32,
    pub bytes: Vec<u8>,
    /// Bytes the target sends back, and the buffer they are unpacked into.
    pub result: Option<(usize, usize, std::sync::Arc<Datatype>, usize)>,
    /// The call ([`CALLS`]).
    pub call: usize,
    /// The checksums of the origin's buffer (contiguous) and of the result buffer
    /// (contiguous), taken at the call: MPI forbids writing either before the operation
    /// completes.
    pub guards: [Option<crate::state::Guard>; 2],
}

impl Queued {
    /// Unpacks `data` (the bytes the target sent back for this operation) into its buffer.
    ///
    /// # Safety
    /// The result buffer the program gave is still valid (MPI: until the operation completes).
    pub unsafe fn finish(&self, data: &[u8]) {
        if let Some((addr, count, dt, _)) = &self.result {
            if data.is_empty() || *addr == 0 {
                return;
            }
            if dt.is_contiguous() {
                let n = data.len().min(dt.size * count);
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), *addr as *mut u8, n) };
            } else {
                unsafe { dt.unpack(data, *addr as *mut u8, *count) };
            }
        }
    }

    /// What went wrong with this operation's buffers at the origin, if anything: one the
    /// program wrote before the operation completed.
    pub fn written(&self) -> Option<String> {
        let call = CALLS[self.call.min(CALLS.len() - 1)];
        if self.guards[0].is_some_and(|g| !g.unchanged()) {
            return Some(format!(
                "the origin buffer of an {call} to rank {} was written before the operation completed (MPI forbids it: the data it sends is undefined)",
                self.target
            ));
        }
        if self.guards[1].is_some_and(|g| !g.unchanged()) {
            return Some(format!(
                "the result buffer of an {call} from rank {} was written before the operation completed (MPI forbids it)",
                self.target
            ));
        }
        None
    }

    /// Bytes the target sends back.
    pub fn result_len(&self) -> usize {
        self.result.as_ref().map_or(0, |r| r.3)
    }
}

/// The lowest byte `count` elements of `t` touch and one past the highest, from the buffer's
/// start; `None` when they touch none.
pub fn span(t: &Datatype, count: usize) -> Option<(isize, isize)> {
    if count == 0 || t.size == 0 {
        return None;
    }
    let (lo, hi) = t
        .runs
        .iter()
        .map(Run::bounds)
        .fold((isize::MAX, isize::MIN), |(a, b), (l, h)| {
            (a.min(l), b.max(h))
        });
    if lo > hi {
        return None;
    }
    let last = (count as isize - 1).saturating_mul(t.extent);
    Some((
        lo.saturating_add(last.min(0)),
        hi.saturating_add(last.max(0)),
    ))
}

/// Fields of an encoded operation's head (i64 words), before its runs and data.
const HEAD: usize = 12;

/// Encodes an operation: call number `call` ([`CALLS`]), `kind`, reduction `op` (0 for none),
/// target displacement `disp` (in the target's units) and `count` elements of `t` there,
/// `data` the origin's bytes, `result_len` the bytes it fetches.
#[allow(clippy::too_many_arguments)]
pub fn encode(
    call: usize,
    kind: Kind,
    op: Option<ReduceOp>,
    disp: isize,
    count: usize,
    t: &Datatype,
    data: &[u8],
    result_len: usize,
) -> Vec<u8> {
    let (e, k) = t.elem.map_or((0, 0), |(e, k)| (e as i64, k as i64));
    let head: [i64; HEAD] = [
        call as i64,
        kind as i64,
        op.map_or(0, |o| o as i64),
        disp as i64,
        count as i64,
        e,
        k,
        t.extent as i64,
        t.size as i64,
        t.runs.len() as i64,
        data.len() as i64,
        result_len as i64,
    ];
    let mut out = Vec::with_capacity(8 * (HEAD + 4 * t.runs.len()) + data.len());
    for w in head {
        out.extend_from_slice(&w.to_le_bytes());
    }
    for r in &t.runs {
        for w in [r.off as i64, r.len as i64, r.count as i64, r.stride as i64] {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out.extend_from_slice(data);
    out
}

/// A decoded operation, borrowing its data from the message.
struct Decoded<'a> {
    call: i64,
    kind: Kind,
    op: Option<ReduceOp>,
    disp: i64,
    count: usize,
    t: Datatype,
    data: &'a [u8],
    result_len: usize,
}

fn word(b: &[u8], i: usize) -> Option<i64> {
    b.get(8 * i..8 * i + 8)
        .map(|w| i64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
}

/// Decodes the operation at the start of `b`; the rest of `b` after it.
fn decode(b: &[u8]) -> Option<(Decoded<'_>, &[u8])> {
    let h: Vec<i64> = (0..HEAD).map(|i| word(b, i)).collect::<Option<_>>()?;
    let nruns = usize::try_from(h[9]).ok()?;
    let mut runs = Vec::with_capacity(nruns.min(1 << 20));
    for i in 0..nruns {
        let w = |j| word(b, HEAD + 4 * i + j);
        runs.push(Run {
            off: w(0)? as isize,
            len: usize::try_from(w(1)?).ok()?,
            count: usize::try_from(w(2)?).ok()?,
            stride: w(3)? as isize,
        });
    }
    let at = 8 * (HEAD + 4 * nruns);
    let len = usize::try_from(h[10]).ok()?;
    let data = b.get(at..at.checked_add(len)?)?;
    let elem = match h[5] {
        0 => None,
        e => Some((Elem::from_u32(e as u32)?, usize::try_from(h[6]).ok()?)),
    };
    // The layout is all pack and unpack read; the rest is any predefined type's.
    let t = Datatype {
        runs,
        size: usize::try_from(h[8]).ok()?,
        lb: 0,
        extent: h[7] as isize,
        elem,
        ..predefined(MPI_BYTE)?
    };
    let d = Decoded {
        call: h[0],
        kind: Kind::from(h[1])?,
        op: match h[2] {
            0 => None,
            o => Some(ReduceOp::from_u32(o as u32)?),
        },
        disp: h[3],
        count: usize::try_from(h[4]).ok()?,
        t,
        data,
        result_len: usize::try_from(h[11]).ok()?,
    };
    Some((d, &b[at + len..]))
}

/// `MPI_BYTE`'s handle (mpi.h).
pub const MPI_BYTE: Handle = 0x247;

/// A target's window: its memory and displacement unit, and its rank.
pub struct Target {
    pub base: usize,
    pub bytes: usize,
    pub disp_unit: usize,
    pub rank: u32,
}

/// An error an operation met at the target: class and text.
pub type Failure = (c_int, String);

/// Applies the operations of `msg`, which rank `origin` sent, to the window `w`, in order;
/// returns the bytes the fetching ones send back (zeros for one that failed, so the origin
/// still gets its reply) and the first failure.
pub fn apply(
    w: &Target,
    origin: u32,
    msg: &[u8],
    touched: &mut Vec<Touch>,
) -> (Vec<u8>, Option<Failure>) {
    let mut reply = Vec::new();
    let mut first = None;
    let mut rest = msg;
    while !rest.is_empty() {
        let Some((d, more)) = decode(rest) else {
            first.get_or_insert((
                class::INTERN,
                format!("an RMA message from rank {origin} could not be read"),
            ));
            break;
        };
        rest = more;
        let at = reply.len();
        if let Err(f) = unsafe { one(w, origin, &d, &mut reply, touched) } {
            first.get_or_insert(f);
        }
        reply.resize(at + d.result_len, 0);
    }
    (reply, first)
}

/// Applies one operation; what it fetches goes to `reply`.
///
/// # Safety
/// `w` describes this rank's window memory.
unsafe fn one(
    w: &Target,
    origin: u32,
    d: &Decoded,
    reply: &mut Vec<u8>,
    touched: &mut Vec<Touch>,
) -> Result<(), Failure> {
    let call = call_name(d.call);
    let Some((lo, hi)) = span(&d.t, d.count) else {
        return Ok(());
    };
    let off = d
        .disp
        .checked_mul(w.disp_unit as i64)
        .and_then(|o| isize::try_from(o).ok());
    let inside = off.and_then(|o| Some((o.checked_add(lo)?, o.checked_add(hi)?)));
    let Some(off) = off.filter(|_| inside.is_some_and(|(a, b)| a >= 0 && b <= w.bytes as isize))
    else {
        return Err((
            RMA_RANGE,
            format!(
                "{call} from rank {origin}: {} bytes at displacement {} are outside rank {}'s window of {} bytes",
                hi - lo,
                d.disp,
                w.rank,
                w.bytes
            ),
        ));
    };
    let addr = (w.base as isize + off) as *mut u8;
    if d.t.is_contiguous() {
        touched.push(Touch {
            lo: off + lo,
            hi: off + hi,
            origin,
            call: d.call,
            kind: d.kind,
        });
    }
    let fetch = |reply: &mut Vec<u8>| unsafe { d.t.pack(addr, d.count, reply) };
    match d.kind {
        Kind::Put => unsafe { d.t.unpack(d.data, addr, d.count) },
        Kind::Get => fetch(reply),
        Kind::Acc | Kind::GetAcc => {
            if d.kind == Kind::GetAcc {
                fetch(reply);
            }
            accumulate(call, origin, d, addr)?;
        }
        Kind::Cas => {
            let mut old = Vec::new();
            fetch(&mut old);
            let (value, compare) = d.data.split_at(d.data.len() / 2);
            if old == compare {
                unsafe { d.t.unpack(value, addr, d.count) };
            }
            reply.extend_from_slice(&old);
        }
    }
    Ok(())
}

/// `MPI_ERR_RMA_RANGE`.
pub const RMA_RANGE: c_int = 48;

/// Combines the origin's data into the target's elements at `addr` with the operation.
fn accumulate(call: &str, origin: u32, d: &Decoded, addr: *mut u8) -> Result<(), Failure> {
    match d.op {
        None | Some(ReduceOp::NoOp) => Ok(()),
        Some(ReduceOp::Replace) => {
            unsafe { d.t.unpack(d.data, addr, d.count) };
            Ok(())
        }
        Some(op) => {
            let Some((e, k)) = d.t.elem else {
                return Err((
                    class::TYPE,
                    format!(
                        "{call} from rank {origin}: the target datatype is not made of one predefined type"
                    ),
                ));
            };
            let mut payload = d.data.to_vec();
            unsafe { d.t.pack(addr, d.count, &mut payload) };
            let world =
                crate::state::with(|s| s.comms.get(&MPI_COMM_WORLD).map(|c| c.id)).unwrap_or(0);
            let a = [world, e as i64, op as i64, (d.count * k) as i64];
            let (_, out) = crate::door::collect(Op::ReduceLocal, &a, &[&payload])
                .map_err(|f| (f.class, format!("{call} from rank {origin}: {}", f.text)))?;
            unsafe { d.t.unpack(&out, addr, d.count) };
            Ok(())
        }
    }
}

/// Whether the built-in operation `op` is defined on elements `e` (MPI 6.9.2's table), so
/// that the origin refuses what the target could not do.
pub fn defined(op: ReduceOp, e: Elem) -> bool {
    use ReduceOp::*;
    let pair = matches!(
        e,
        Elem::FloatInt
            | Elem::DoubleInt
            | Elem::LongInt
            | Elem::TwoInt
            | Elem::ShortInt
            | Elem::LongDoubleInt
    );
    let float = matches!(e, Elem::F32 | Elem::F64 | Elem::LongDouble);
    match op {
        Replace | NoOp => true,
        Minloc | Maxloc => pair,
        Sum | Prod | Min | Max => !pair,
        Band | Bor | Bxor | Land | Lor | Lxor => !pair && !float,
    }
}

/// The bytes of the target's window an operation reached (contiguous target datatypes only: a
/// derived one's gaps may be another operation's to reach), for [`conflict`].
#[derive(Clone, Copy, Debug)]
pub struct Touch {
    pub lo: isize,
    pub hi: isize,
    pub origin: u32,
    pub call: i64,
    pub kind: Kind,
}

/// MPI's access classes: a get reads, a put writes, the accumulates update atomically (any
/// number of them may reach one place, MPI 11.7.1).
fn class_of(k: Kind) -> usize {
    match k {
        Kind::Get => 0,
        Kind::Put => 1,
        Kind::Acc | Kind::GetAcc | Kind::Cas => 2,
    }
}

/// Two operations of one epoch that reach a byte of the target's window where MPI forbids it
/// (a put and anything else, a get and an accumulate), named, or `None`: one sweep over the
/// ranges sorted by start, keeping for each access class the range that reaches furthest.
pub fn conflict(touched: &mut [Touch], target: u32) -> Option<Failure> {
    touched.sort_by_key(|t| (t.lo, t.hi));
    let mut furthest: [Option<Touch>; 3] = [None; 3];
    for &x in touched.iter() {
        let cx = class_of(x.kind);
        for (cy, y) in furthest.iter().enumerate() {
            let Some(y) = y else { continue };
            let allowed = cx == cy && cx != 1;
            if !allowed && y.hi > x.lo {
                let (a, b) = (x.lo.max(y.lo), x.hi.min(y.hi));
                return Some((
                    RMA_CONFLICT,
                    format!(
                        "{} from rank {} and {} from rank {} both reach bytes {a}..{b} of rank {target}'s window in one epoch (MPI forbids it: their result is undefined)",
                        call_name(y.call),
                        y.origin,
                        call_name(x.call),
                        x.origin
                    ),
                ));
            }
        }
        if furthest[cx].is_none_or(|f| f.hi < x.hi) {
            furthest[cx] = Some(x);
        }
    }
    None
}

/// `MPI_ERR_RMA_CONFLICT`.
pub const RMA_CONFLICT: c_int = 47;

/// Two operations of one epoch whose buffers at the origin overlap where one of them is
/// written by MPI (a get's result buffer): the result is undefined, as MPI says. Contiguous
/// buffers only, as [`Queued::guards`].
pub fn local_conflict(queue: &[Queued]) -> Option<String> {
    // (start, end, written, call)
    let mut spans: Vec<(usize, usize, bool, usize)> = Vec::new();
    for q in queue {
        for (i, g) in q.guards.iter().enumerate() {
            if let Some(g) = g {
                spans.push((g.addr, g.addr + g.len, i == 1, q.call));
            }
        }
    }
    spans.sort_unstable();
    let mut furthest: [Option<(usize, usize, bool, usize)>; 2] = [None; 2];
    for &x in &spans {
        for y in furthest.iter().flatten() {
            if (x.2 || y.2) && y.1 > x.0 {
                return Some(format!(
                    "an {} and an {} of one epoch use overlapping buffers at the origin, which MPI writes into (the result is undefined)",
                    CALLS[y.3.min(CALLS.len() - 1)],
                    CALLS[x.3.min(CALLS.len() - 1)]
                ));
            }
        }
        let k = usize::from(x.2);
        if furthest[k].is_none_or(|f| f.1 < x.1) {
            furthest[k] = Some(x);
        }
    }
    None
}
