//! A rank's turn, the runtime's side of the run loop (`Partition::run`): the loop pops a rank's
//! resume and polls its program once; what that means for the rank (its clock, its end, the
//! compute it owes) is decided here, with the rest of the rank's runtime ([`super::SimRank`]).
//!
//! A turn ([`Turn::begin`], [`Turn::end`]) wakes the rank at its resume's time, marks it as the
//! rank being polled (`Kernel::polling`) and, in a run that measures compute, times the poll.
//!
//! Measured compute (`--compute measured`, `docs/timing.md` §7, `docs/extensions.md` X2, X3):
//! the host CPU time of each stretch of a rank's program (one poll of it, between two
//! suspensions, including the simulator's work for the calls it makes, which X3's
//! `measure_overhead` takes off) becomes virtual compute the rank owes (`RankState::debt_ns`),
//! counted as compute at once and put on its clock before its next action ([`pay_owed`]): when
//! the rank resumes to act ([`Turn::begin`]), when a wait it was woken in returns
//! (`SimRank::wait_returns`), at its end ([`settle_end`]). A run that does not measure runs
//! turns compiled without the timer (`MEASURED` false), so modeled and ignored compute pay
//! nothing per event or per call for it.

use crate::event::Key;
use crate::kernel::{Kernel, NOT_POLLING, RankState};
use crate::model::ComputeMode;

/// Whether the run of `k` measures its programs' compute: its turns are then
/// `Turn<true>`.
pub(crate) fn measures(k: &Kernel) -> bool {
    k.model().compute == ComputeMode::Measured
}

/// One poll of a rank's program, under way: the rank at `idx` of the kernel's ranks, and the
/// host CPU time at its start when `MEASURED`.
pub(crate) struct Turn<const MEASURED: bool> {
    pub idx: usize,
    stretch: Option<cpu_time::ThreadTime>,
}

impl<const MEASURED: bool> Turn<MEASURED> {
    /// The rank of the resume `key` is woken at its time and its program is to be polled:
    /// its turn, or `None` when there is nothing to poll (the rank has ended, or it owes
    /// measured compute, which comes first: [`pay_owed`], and it resumes after it).
    ///
    /// A rank woken in a wait runs at the time of its wake, to look whether its wait
    /// returns: if it does, the wait ends there (`SimRank::wait_returns`: its blocked time,
    /// trace span, hand-over and measured compute); if not, the rank blocks on with the clock
    /// it blocked at (`SimRank::suspend`): only a returning wait moves a clock (S1).
    #[inline(always)]
    pub fn begin(k: &mut Kernel, key: Key) -> Option<Self> {
        let rank = key.creator();
        let idx = k.at(rank);
        let r = &mut k.ranks[idx];
        r.resume_scheduled = false;
        if r.done {
            return None;
        }
        r.clock = r.clock.max(key.time);
        if MEASURED && r.wait.is_none() && r.debt_ns > 0 {
            pay_owed(k, idx, rank);
            return None;
        }
        k.polling = idx;
        Some(Turn {
            idx,
            stretch: MEASURED.then(cpu_time::ThreadTime::now),
        })
    }

    /// The poll is over: no rank is polled, and its host time, as the model charges it, is
    /// owed and counted as compute.
    #[inline(always)]
    pub fn end(self, k: &mut Kernel) {
        k.polling = NOT_POLLING;
        if let Some(cpu) = self.stretch {
            charge(k, self.idx, cpu);
        }
    }
}

/// The body of [`Turn::end`] in a run that measures.
#[inline(never)]
fn charge(k: &mut Kernel, idx: usize, cpu: cpu_time::ThreadTime) {
    let host_ns = u64::try_from(cpu.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let ns = k.model().measured_stretch_ns(host_ns, k.total);
    let r = &mut k.ranks[idx];
    r.debt_ns = r.debt_ns.saturating_add(ns);
    r.stats.compute_ns = r.stats.compute_ns.saturating_add(ns);
}

/// The rank at `idx` (`rank`), about to act at its clock (resumed, or its wait returning),
/// owes measured compute: that comes first, as a `compute` span, and the rank resumes after
/// it.
#[inline(never)]
pub(crate) fn pay_owed(k: &mut Kernel, idx: usize, rank: u32) {
    let r = &mut k.ranks[idx];
    let from = r.clock;
    let debt = std::mem::take(&mut r.debt_ns);
    let end = from.saturating_add(debt);
    r.clock = end;
    k.record_span(rank, "compute", from, end);
    k.schedule_resume(rank, end);
}

/// The program of `r` has ended: it is done, and the overhead (X1) and measured compute it
/// still owes go on its clock, which is its end, returned (`u64::MAX`: past virtual time's
/// range).
pub(crate) fn settle_end(r: &mut RankState) -> u64 {
    r.done = true;
    let owed = std::mem::take(&mut r.overhead_ns);
    r.stats.overhead_ns = r.stats.overhead_ns.saturating_add(owed);
    let debt = std::mem::take(&mut r.debt_ns);
    r.clock = r.clock.saturating_add(debt).saturating_add(owed);
    r.clock
}
