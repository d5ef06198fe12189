//! Collectives the backend's library runs itself (`docs/collectives.md` §9): on `--backend mpi`
//! a call runs as MPI's own collective (`MPI_Iallreduce` and kin, completed by the backend's
//! polling) when nothing names its algorithm, rather than as mpsim's algorithm over MPI's
//! point-to-point. What stays mpsim's:
//!
//! - everything on the simulator and the threads backend (their runtimes say no:
//!   `RankRuntime::native_collectives`), so their reports and traces do not change; the
//!   question is asked once per collective call, never per message;
//! - every collective of a run that names `--reproducible` (its reductions' results then hold
//!   on MPI too, and its other collectives run the algorithms `sim` times), and each
//!   collective `--coll` names or a test forces (`Comm::force_algorithm`);
//! - reductions with the program's own operation, `minloc`/`maxloc`, or element types other
//!   than `i8`..`i64`, `u8`..`u64`, `usize`/`isize`, `f32`, `f64` (`reduce_scatter(_block)`
//!   included); the backend may also decline a call whose counts do not fit its library's
//!   (`RankRuntime::start_native` answers `None` on every rank alike);
//! - a nonblocking collective on a communicator other than the world before the first blocking
//!   collective that ran natively on it (next section).
//!
//! # The library's communicator
//!
//! A native collective needs an MPI communicator with the mpsim communicator's group. The
//! world's is made when MPI starts. Another's is made lazily, at the first blocking collective
//! on it that runs natively: its members first meet in a barrier of mpsim's own (point-to-point
//! on the hidden context, which the deadlock watchdog sees: ranks that never come are reported
//! as blocked in that collective), then make it together (`MPI_Comm_create_group`, collective
//! over the members alone). The meeting is what makes the lazy making safe: every member has
//! reached the same collective call on the same communicator (MPI's rule that members call a
//! communicator's collectives in the same order, which mpsim's own algorithms need too), so
//! each goes straight into the making with nothing left to wait for. A nonblocking collective
//! cannot wait for a meeting (a program may start nonblocking collectives on two communicators
//! in different orders on different ranks), so until then it runs mpsim's algorithm.
//!
//! # What differs from mpsim's algorithms
//!
//! The library checks less: ranks whose counts disagree are `Error::CollectiveMismatch` with
//! mpsim's algorithms, MPI's own error (or worse) natively; a floating-point reduction's bits
//! are the library's (use `--reproducible` for mpsim's fixed bracketing); `min`/`max` with a
//! NaN follow the library. The run report lists such calls with the algorithm `mpi_library`;
//! the traffic columns do not count the library's messages.

use std::any::TypeId;

use bytemuck::Pod;
use mpsim_proto::error::Result;
use mpsim_proto::p2p::ReqId;
use mpsim_proto::runtime::{Elem, NativeCall, NativeComm, RankRuntime, ReduceOp};

use super::algo::{Algorithm, Chosen, Collective, Reason};
use super::barrier::dissemination;
use super::ops::Op;
use super::{Ctx, algo};
use crate::Comm;
use crate::request::{Names, Request, stamped};
use crate::runtime::Rt;

/// The library's element type and operation for a reduction of `T`s by `op`, if it has them.
pub(super) fn reduction<T: Pod>(op: &Op<T>) -> Option<(Elem, ReduceOp)> {
    let op = match op.name() {
        "sum" => ReduceOp::Sum,
        "prod" => ReduceOp::Prod,
        "min" => ReduceOp::Min,
        "max" => ReduceOp::Max,
        "band" => ReduceOp::Band,
        "bor" => ReduceOp::Bor,
        "bxor" => ReduceOp::Bxor,
        "land" => ReduceOp::Land,
        "lor" => ReduceOp::Lor,
        "lxor" => ReduceOp::Lxor,
        _ => return None,
    };
    Some((elem::<T>()?, op))
}

/// The library's element type for `T`.
fn elem<T: Pod>() -> Option<Elem> {
    let t = TypeId::of::<T>();
    let is = |u: TypeId| t == u;
    let word = size_of::<usize>() == 8;
    Some(if is(TypeId::of::<i8>()) {
        Elem::I8
    } else if is(TypeId::of::<i16>()) {
        Elem::I16
    } else if is(TypeId::of::<i32>()) || (!word && is(TypeId::of::<isize>())) {
        Elem::I32
    } else if is(TypeId::of::<i64>()) || (word && is(TypeId::of::<isize>())) {
        Elem::I64
    } else if is(TypeId::of::<u8>()) {
        Elem::U8
    } else if is(TypeId::of::<u16>()) {
        Elem::U16
    } else if is(TypeId::of::<u32>()) || (!word && is(TypeId::of::<usize>())) {
        Elem::U32
    } else if is(TypeId::of::<u64>()) || (word && is(TypeId::of::<usize>())) {
        Elem::U64
    } else if is(TypeId::of::<f32>()) {
        Elem::F32
    } else if is(TypeId::of::<f64>()) {
        Elem::F64
    } else {
        return None;
    })
}

impl Comm {
    /// The backend, when it runs collectives itself and the call's algorithm was chosen by
    /// nobody in particular (module docs).
    fn native_rt(&self, chosen: Chosen) -> Option<&dyn RankRuntime> {
        let Rt::Other(rt) = self.rt() else {
            return None;
        };
        let unnamed = matches!(
            chosen.reason,
            Reason::Only | Reason::TableNoModel | Reason::TableRankCounts
        );
        (unnamed && rt.native_collectives() && !self.coll_policy().keeps_own()).then_some(&**rt)
    }

    /// Calls `f` with this communicator as the backend sees it.
    fn as_native<R>(&self, f: impl FnOnce(NativeComm<'_>) -> R) -> R {
        let of = |r: u32| self.world_rank_of(r);
        f(NativeComm {
            context: self.p2p_context(),
            rank: self.rank(),
            size: self.size(),
            world_rank_of: &of,
        })
    }

    /// Whether the blocking collective `call`, whose algorithm is `chosen`, runs natively;
    /// makes the library's communicator first if it has none yet (module docs).
    pub(super) async fn native_blocking(&self, call: &'static str, chosen: Chosen) -> Result<bool> {
        let Some(rt) = self.native_rt(chosen) else {
            return Ok(false);
        };
        if !self.as_native(|c| rt.native_ready(c)) {
            let barrier = Chosen {
                algo: Algorithm::Dissemination,
                reason: Reason::Only,
            };
            let mut cx = Ctx::new(self, call, Collective::Barrier, barrier, 0);
            cx.chosen = None;
            cx.tag = algo::tag(Collective::Barrier, Algorithm::Native, 0);
            dissemination(&cx).await?;
            self.as_native(|c| rt.make_native(c))
                .map_err(|e| stamped(self.rt(), e))?;
        }
        Ok(true)
    }

    /// Whether the nonblocking collective whose algorithm is `chosen` runs natively: only once
    /// the library's communicator is there (module docs).
    pub(super) fn native_nonblocking(&self, chosen: Chosen) -> bool {
        self.native_rt(chosen)
            .is_some_and(|rt| self.as_native(|c| rt.native_ready(c)))
    }

    /// Starts `native` for the program's `call`: its request, or `None` when the backend has
    /// no such collective after all.
    pub(super) fn native_start(
        &self,
        call: &'static str,
        native: NativeCall<'_>,
    ) -> Result<Option<ReqId>> {
        let Rt::Other(rt) = self.rt() else {
            return Ok(None);
        };
        self.as_native(|c| rt.start_native(c, native, call))
            .map_err(|e| stamped(self.rt(), e))
    }

    /// Waits for the native collective `id` of the blocking `call` (the collective `coll`,
    /// begun at `start_ns`), its result copied into `out`, and records it in the run's policy.
    pub(super) async fn native_wait(
        &self,
        (call, coll, chosen): (&'static str, Collective, Chosen),
        start_ns: u64,
        id: ReqId,
        out: Option<&mut [u8]>,
    ) -> Result<()> {
        let names = Names { call, wait: call };
        let done = Request::active(self.rt().clone(), id, names, out)
            .wait()
            .await
            .map(drop);
        self.native_record(coll, chosen, self.now_ns().saturating_sub(start_ns));
        done
    }

    /// The request of the native nonblocking collective `id` of `call` (the collective
    /// `coll`), its result copied into `out` when it completes; recorded in the run's policy
    /// now (with no time: the report counts a nonblocking native call, it does not time it).
    pub(super) fn native_request<'b>(
        &self,
        (call, coll, chosen): (&'static str, Collective, Chosen),
        id: ReqId,
        out: Option<&'b mut [u8]>,
    ) -> Request<'b> {
        self.native_record(coll, chosen, 0);
        Request::active(self.rt().clone(), id, Names { call, wait: call }, out)
    }

    fn native_record(&self, coll: Collective, chosen: Chosen, ns: u64) {
        let chosen = Chosen {
            algo: Algorithm::Native,
            reason: match chosen.reason {
                Reason::Only => Reason::Only,
                _ => Reason::Library,
            },
        };
        self.coll_policy()
            .record(coll, chosen, self.rank() == 0, ns);
    }
}

/// A blocking collective `$call` run natively when it may (module docs): `$native` is the
/// `NativeCall`, `$out` the bytes its result goes to; returns from the enclosing function when
/// it ran.
macro_rules! native_blocking {
    ($comm:expr, ($call:expr, $coll:expr, $chosen:expr), $native:expr, $out:expr) => {
        if $comm.native_blocking($call, $chosen).await? {
            let start = $comm.now_ns();
            if let Some(id) = $comm.native_start($call, $native)? {
                return $comm
                    .native_wait(($call, $coll, $chosen), start, id, $out)
                    .await;
            }
        }
    };
}

/// A nonblocking collective `$call` started natively when it may: returns its request from the
/// enclosing function when it started.
macro_rules! native_nonblocking {
    ($comm:expr, ($call:expr, $coll:expr, $chosen:expr), $native:expr, $out:expr) => {
        if $comm.native_nonblocking($chosen)
            && let Some(id) = $comm.native_start($call, $native)?
        {
            return Ok($comm.native_request(($call, $coll, $chosen), id, $out));
        }
    };
}

pub(super) use {native_blocking, native_nonblocking};
