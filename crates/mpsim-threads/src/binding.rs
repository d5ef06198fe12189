//! Placing rank threads on cores, so that how long a run takes does not depend on where the
//! OS happened to put its threads.
//!
//! - **A core per rank.** A waiting rank spins on its mailbox (`WaitPolicy::Spin`), which
//!   assumes its peer runs elsewhere meanwhile. The OS often starts a new thread on its
//!   parent's core, and two ranks left on one core spin in each other's place until the load
//!   balancer moves one, which on the 2-core reference machine took milliseconds: of 25
//!   2-rank rings of 1,000 trips, 14 took 1-65 ms instead of about 0.6 ms, and none did with
//!   the ranks bound (`bench/threads-bind.sh`, 2026-11-24). So the cores the process may use
//!   are dealt out: rank `r` of `R` may run on the `r`-th, `r + R`-th, `r + 2R`-th ... of
//!   them, where the OS still places it. No two ranks share a core, and runs side by side on
//!   a large machine still spread over all of it (binding each rank to one fixed core, as Open
//!   MPI does for 2 processes by default, would pile every concurrent 2-rank run onto cores 0
//!   and 1).
//! - **Up to two ranks per core.** Waiting ranks yield their core (`WaitPolicy::Yield`), and
//!   which ranks share a core decides how long a message takes to be seen: a 4-rank ring on 2
//!   cores took 38-83 ms over 8 runs as the OS paired its ranks one way or another, and a
//!   4-rank halo exchange 15-24 ms. Rank `r` is bound to core `r mod C` of the `C` it may use:
//!   39-48 ms and 15-16 ms (3 ranks: 25 ms either way, the exchange 14-15 ms).
//! - **More ranks per core** are left to the OS: they park while they wait, and bound to fixed
//!   cores an 8-rank ring on 2 cores took 54-216 ms against 35-47 ms.

use crate::rank::WaitPolicy;

/// Whether rank threads are bound to cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Rank `r` of `R` runs only on every `R`-th core the process may use, from its `r`-th;
    /// with fewer cores than ranks, on core `r mod C` of the `C` it may use.
    Cores,
    /// The OS places the threads.
    None,
}

impl Binding {
    /// The binding for `ranks` ranks on `cores` cores (what [`Options::bind`] `None` picks):
    /// bound while waiting ranks spin or yield ([`WaitPolicy::for_run`]: up to two ranks per
    /// core), left to the OS when they park.
    ///
    /// [`Options::bind`]: crate::Options::bind
    pub fn for_run(ranks: usize, cores: usize) -> Self {
        match WaitPolicy::for_run(ranks, cores) {
            WaitPolicy::Spin | WaitPolicy::Yield => Binding::Cores,
            WaitPolicy::Park => Binding::None,
        }
    }
}

/// The cores rank `rank` of `ranks` may run on, out of the process's `allowed` ones (in
/// order): every `ranks`-th from the `rank`-th; with fewer allowed cores than ranks, the
/// `rank mod C`-th alone.
fn share(allowed: &[usize], rank: u32, ranks: u32) -> Vec<usize> {
    if allowed.len() < ranks as usize {
        return vec![allowed[rank as usize % allowed.len()]];
    }
    allowed
        .iter()
        .skip(rank as usize)
        .step_by(ranks as usize)
        .copied()
        .collect()
}

/// The cores the launching thread may run on, which rank threads are dealt from; empty when
/// the binding is [`Binding::None`] or the host does not say.
pub(crate) fn allowed_cores(binding: Binding) -> Vec<usize> {
    match binding {
        Binding::Cores => os::allowed_cores(),
        Binding::None => Vec::new(),
    }
}

/// Keeps the calling thread, rank `rank` of `ranks`, to its share of `allowed` (nothing when
/// `allowed` is empty). A host that refuses leaves the thread where the OS puts it: binding
/// is an optimisation, and the run is correct either way.
pub(crate) fn bind_rank(rank: u32, ranks: u32, allowed: &[usize]) {
    if !allowed.is_empty() {
        let _bound = os::run_on(&share(allowed, rank, ranks));
    }
}

/// Keeps the calling thread to the first core it may run on now; false where that cannot be
/// done (the host does not say, or refuses). A threads run launched from this thread then
/// runs all its ranks on that core, as ranks are dealt out of the launching thread's cores
/// (`mpsim calibrate` times a hand-over between two ranks on one core so).
pub fn bind_to_one_core() -> bool {
    os::allowed_cores()
        .first()
        .is_some_and(|&core| os::run_on(&[core]))
}

#[cfg(target_os = "linux")]
mod os {
    use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
    use nix::unistd::Pid;

    /// The cores the calling thread may run on, by number.
    pub fn allowed_cores() -> Vec<usize> {
        let Ok(set) = sched_getaffinity(Pid::from_raw(0)) else {
            return Vec::new();
        };
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect()
    }

    /// Lets the calling thread run on `cores` only; whether the host agreed.
    pub fn run_on(cores: &[usize]) -> bool {
        let mut set = CpuSet::new();
        for &c in cores {
            // Below `CpuSet::count()`: the cores came from such a set.
            let _in_range = set.set(c);
        }
        sched_setaffinity(Pid::from_raw(0), &set).is_ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    /// Not known here: nothing is bound.
    pub fn allowed_cores() -> Vec<usize> {
        Vec::new()
    }

    pub fn run_on(_cores: &[usize]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_bound_with_up_to_two_per_core() {
        assert_eq!(Binding::for_run(1, 2), Binding::Cores);
        assert_eq!(Binding::for_run(2, 2), Binding::Cores);
        assert_eq!(Binding::for_run(4, 2), Binding::Cores);
        assert_eq!(Binding::for_run(5, 2), Binding::None);
        assert_eq!(Binding::for_run(64, 2), Binding::None);
    }

    #[test]
    fn cores_are_dealt_out_to_ranks() {
        let allowed = [0, 1, 2, 3, 4, 5, 8, 9];
        assert_eq!(share(&allowed, 0, 2), [0, 2, 4, 8]);
        assert_eq!(share(&allowed, 1, 2), [1, 3, 5, 9]);
        assert_eq!(share(&allowed, 2, 3), [2, 5]);
        assert_eq!(share(&allowed[..2], 1, 2), [1]);
        // Fewer cores than ranks: rank r on core r mod C.
        assert_eq!(share(&allowed[..2], 2, 3), [0]);
        assert_eq!(share(&allowed[..2], 3, 4), [1]);
    }

    #[test]
    fn unbound_runs_look_up_no_cores() {
        assert!(allowed_cores(Binding::None).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_bound_thread_runs_on_its_share_only() {
        let allowed = allowed_cores(Binding::Cores);
        assert!(
            !allowed.is_empty(),
            "this host lists the cores a thread may use"
        );
        let ranks = allowed.len().min(2) as u32;
        let last = ranks - 1;
        let seen = std::thread::spawn(move || {
            bind_rank(last, ranks, &allowed);
            (allowed, os::allowed_cores())
        })
        .join()
        .unwrap();
        assert_eq!(seen.1, share(&seen.0, last, ranks));
    }
}
