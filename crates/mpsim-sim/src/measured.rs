//! Measured compute (`--compute measured`, `docs/timing.md` §7, `docs/extensions.md` X2, X3):
//! the host CPU time of each stretch of a rank's program (one poll of it, between two
//! suspensions, including the simulator's work for the calls it makes, which X3's
//! `measure_overhead` takes off) becomes virtual compute the rank owes (`RankState::debt_ns`),
//! counted as compute at once and put on its clock before its next action: by the run loop when
//! the rank resumes to act ([`pay_owed`]), by its runtime when a wait it was woken in returns
//! (`SimRank::wait_returns`), at its end (`Partition::end_rank`).
//!
//! The run loop brackets each poll with a [`Stretch`] only in a run that measures: a run that
//! does not runs a loop compiled without it (`Partition::run`), so modeled and ignored compute
//! pay nothing per event or per call for it.

use crate::kernel::Kernel;

/// The host CPU time of one poll of a rank's program, timed when `MEASURED` (the run measures
/// compute); otherwise nothing, at no cost.
pub(crate) struct Stretch(Option<cpu_time::ThreadTime>);

impl Stretch {
    /// The timer of a poll about to begin.
    #[inline(always)]
    pub fn start<const MEASURED: bool>() -> Self {
        Stretch(MEASURED.then(cpu_time::ThreadTime::now))
    }

    /// The poll of the rank at `idx` is over: its host time, as the model charges it, is owed
    /// and counted as compute.
    #[inline(always)]
    pub fn charge(self, k: &mut Kernel, idx: usize) {
        if let Some(cpu) = self.0 {
            charge(k, idx, cpu);
        }
    }
}

/// The body of [`Stretch::charge`].
#[inline(never)]
fn charge(k: &mut Kernel, idx: usize, cpu: cpu_time::ThreadTime) {
    let host_ns = u64::try_from(cpu.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let ns = k.model().measured_stretch_ns(host_ns, k.total);
    let r = &mut k.ranks[idx];
    r.debt_ns = r.debt_ns.saturating_add(ns);
    r.stats.compute_ns = r.stats.compute_ns.saturating_add(ns);
}

/// The rank at `idx` (`rank`), resumed at `clock` to act (not in a wait), owes measured compute:
/// that comes first, as a `compute` span, and the rank resumes after it.
#[inline(never)]
pub(crate) fn pay_owed(k: &mut Kernel, idx: usize, rank: u32, clock: u64) {
    let r = &mut k.ranks[idx];
    let debt = std::mem::take(&mut r.debt_ns);
    let end = clock.saturating_add(debt);
    r.clock = end;
    k.record_span(rank, "compute", clock, end);
    k.schedule_resume(rank, end);
}
