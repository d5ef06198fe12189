//! [`BspError`]: the errors of BSPlib programs (`mpsim::bsp`, `spec/bsplib.md` §2), inside
//! [`Error::Bsp`](super::Error::Bsp).
//!
//! One boxed struct rather than a dozen variants of [`Error`](super::Error): every BSP error
//! names the same things (the process that reports it, its superstep, the operation, and under
//! the simulator the virtual time), and what differs is the [`BspErrorKind`]. Boxed, so that
//! [`Error`](super::Error) stays as small as it was.
//!
//! Local errors (a bad pid, an unregistered or not yet active area, an offset out of range, a
//! tag of the wrong length, `move` on an empty queue) are reported by the calling process when
//! it makes the call. Collective errors (the processes disagree on their registrations or tag
//! size, some sync while others end) are found during `sync` and reported by *every* process,
//! with the same kind, naming the processes that disagree.

use std::fmt;

use super::ErrorClass;

/// A BSPlib error: who reports it, where, and what ([`BspErrorKind`]).
///
/// ```
/// use mpsim_proto::error::{BspError, BspErrorKind, Error, ErrorClass};
///
/// let kind = BspErrorKind::InvalidPid { target: 4, nprocs: 4 };
/// let e = Error::Bsp(Box::new(BspError::new(1, 3, "bsp_put", None, kind)));
/// assert_eq!(e.class(), ErrorClass::Rank);
/// assert_eq!(e.to_string(), "pid 1 in bsp_put (superstep 3): pid 4 does not exist (nprocs 4)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BspError {
    /// The process that reports the error.
    pub pid: u32,
    /// Its superstep: 0 until the first sync returns, then 1, ...
    pub superstep: u64,
    /// The BSPlib operation: `"bsp_put"`, `"bsp_sync"`, `"bsp_end"`, ...
    pub op: &'static str,
    /// Virtual time of the error, in nanoseconds (simulator only).
    pub time_ns: Option<u64>,
    /// What went wrong.
    pub kind: BspErrorKind,
}

/// What a processes' collective calls disagreed on ([`BspErrorKind::Mismatch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Disagreement {
    /// The number of `push_reg` calls in the superstep.
    PushCount,
    /// The number of `pop_reg` calls in the superstep.
    PopCount,
    /// Which registrations the `pop_reg` calls of the superstep named (their sequence).
    PopRegistrations,
    /// The number of `set_tagsize` calls in the superstep.
    TagsizeCalls,
    /// The tag size the last `set_tagsize` call of the superstep asked for.
    TagsizeValue,
}

impl Disagreement {
    fn what(self) -> &'static str {
        match self {
            Disagreement::PushCount => "push_reg calls",
            Disagreement::PopCount => "pop_reg calls",
            Disagreement::PopRegistrations => "registrations popped (a digest of their sequence)",
            Disagreement::TagsizeCalls => "set_tagsize calls",
            Disagreement::TagsizeValue => "requested tag size",
        }
    }
}

/// The kinds of [`BspError`], with the numbers each names (`spec/bsplib.md` §2).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BspErrorKind {
    /// A put, get or send to a process that does not exist (local, at the call).
    InvalidPid {
        /// The pid given.
        target: i64,
        /// The number of processes.
        nprocs: u32,
    },
    /// A registration that is not (or no longer) registered: popped at an earlier sync, or a
    /// handle of another run (local, at the call).
    NotRegistered {
        /// The registration: its place in the sequence of `push_reg` calls (0 for the first).
        reg: u64,
    },
    /// A registration pushed in this superstep, used for communication before the sync that
    /// makes it active (local, at the call).
    NotActive {
        /// The registration.
        reg: u64,
    },
    /// `offset + n` beyond the size the process `target` registered (local, at the call: every
    /// process knows every process's sizes).
    OutOfBounds {
        /// The registration.
        reg: u64,
        /// The process whose area was named.
        target: u32,
        /// The offset, in bytes.
        offset: u64,
        /// The length, in bytes.
        n: u64,
        /// The size `target` registered, in bytes.
        size: u64,
    },
    /// `move` on an empty queue (local).
    QueueEmpty,
    /// A send whose tag is not as long as the tag size in force (local).
    TagSize {
        /// The tag size in force this superstep, in bytes.
        expected: usize,
        /// The tag's length.
        got: usize,
    },
    /// A get's result read before the sync that delivers it (local).
    NotDelivered {
        /// The superstep the get was issued in.
        issued: u64,
    },
    /// The processes' collective calls of the superstep disagree (at sync, on every process):
    /// `low` and `high` are the first process with the least and the first with the most.
    Mismatch {
        /// What they disagree on.
        what: Disagreement,
        /// The first process with the least value, and that value.
        low: (u32, i64),
        /// The first process with the greatest value, and that value.
        high: (u32, i64),
    },
    /// Some processes called `sync` while others ended their program (at sync and end, on
    /// every process): the first of each.
    SyncEndMismatch {
        /// The first process that called `sync`.
        syncing: u32,
        /// The first process whose program ended.
        ending: u32,
    },
    /// A process called `abort`.
    Aborted {
        /// The process that called it.
        by: u32,
        /// Its message.
        msg: String,
    },
    /// The context was used after an error of an earlier `sync`, which left the processes in
    /// no agreed state.
    Poisoned,
}

impl BspError {
    /// The error `kind` of `op` on process `pid` in `superstep`, at `time_ns` (simulator).
    pub fn new(
        pid: u32,
        superstep: u64,
        op: &'static str,
        time_ns: Option<u64>,
        kind: BspErrorKind,
    ) -> Self {
        BspError {
            pid,
            superstep,
            op,
            time_ns,
            kind,
        }
    }

    /// The MPI error class: a bad pid `MPI_ERR_RANK`; a bad registration or offset
    /// `MPI_ERR_ARG`; a tag of the wrong length `MPI_ERR_COUNT`; an abort
    /// `MPI_ERR_PROC_ABORTED`; the rest (empty queue, a result read early, processes that
    /// disagree, a poisoned context) `MPI_ERR_OTHER`.
    pub fn class(&self) -> ErrorClass {
        match self.kind {
            BspErrorKind::InvalidPid { .. } => ErrorClass::Rank,
            BspErrorKind::NotRegistered { .. }
            | BspErrorKind::NotActive { .. }
            | BspErrorKind::OutOfBounds { .. } => ErrorClass::Arg,
            BspErrorKind::TagSize { .. } => ErrorClass::Count,
            BspErrorKind::Aborted { .. } => ErrorClass::ProcAborted,
            BspErrorKind::QueueEmpty
            | BspErrorKind::NotDelivered { .. }
            | BspErrorKind::Mismatch { .. }
            | BspErrorKind::SyncEndMismatch { .. }
            | BspErrorKind::Poisoned => ErrorClass::Other,
        }
    }
}

impl fmt::Display for BspError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pid {} in {} (superstep {}",
            self.pid, self.op, self.superstep
        )?;
        if let Some(t) = self.time_ns {
            write!(f, ", t={t} ns")?;
        }
        f.write_str("): ")?;
        match &self.kind {
            BspErrorKind::InvalidPid { target, nprocs } => {
                write!(f, "pid {target} does not exist (nprocs {nprocs})")
            }
            BspErrorKind::NotRegistered { reg } => {
                write!(f, "registration {reg} is not registered")
            }
            BspErrorKind::NotActive { reg } => write!(
                f,
                "registration {reg} was pushed in this superstep: not active until next sync"
            ),
            BspErrorKind::OutOfBounds {
                reg,
                target,
                offset,
                n,
                size,
            } => write!(
                f,
                "bytes {offset}..{} of registration {reg} on pid {target}, which registered \
                 {size} bytes",
                offset.saturating_add(*n)
            ),
            BspErrorKind::QueueEmpty => f.write_str("the message queue is empty"),
            BspErrorKind::TagSize { expected, got } => write!(
                f,
                "a tag of {got} bytes, but the tag size of this superstep is {expected}"
            ),
            BspErrorKind::NotDelivered { issued } => write!(
                f,
                "the get of superstep {issued} is delivered by the sync that ends it, not before"
            ),
            BspErrorKind::Mismatch { what, low, high } => write!(
                f,
                "the processes disagree on their {}: pid {} has {}, pid {} has {}",
                what.what(),
                low.0,
                low.1,
                high.0,
                high.1
            ),
            BspErrorKind::SyncEndMismatch { syncing, ending } => write!(
                f,
                "pid {syncing} called sync while pid {ending} ended its program (every process \
                 must sync the same number of times)"
            ),
            BspErrorKind::Aborted { by, msg } => write!(f, "aborted by pid {by}: {msg}"),
            BspErrorKind::Poisoned => f.write_str(
                "an earlier sync failed; the processes are in no agreed state (return its error)",
            ),
        }
    }
}
