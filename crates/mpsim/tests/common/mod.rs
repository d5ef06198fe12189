//! Shared by the simulator's timing tests: every simulated run is made sequentially and on
//! several threads, and must come out the same (`spec/timing.md` §5: "the parallel simulator
//! must print the same report, byte for byte").

use std::future::Future;

use mpsim::sim::Outcome;
use mpsim::{Comm, Launcher};

/// Simulates `program` with `launcher` on one thread, then on 2 and on one per rank; checks
/// that the outcomes (report, error, trace) are the same and returns the sequential one.
pub fn simulate_all_ways<F, Fut>(launcher: Launcher, ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let sequential = launcher.clone().sim_threads(1).simulate(&program);
    let mut threads = vec![2, ranks];
    threads.dedup();
    for n in threads.into_iter().filter(|&n| n > 1 && n <= ranks) {
        let parallel = launcher.clone().sim_threads(n).simulate(&program);
        assert_eq!(
            format!("{:?}", parallel.report),
            format!("{:?}", sequential.report),
            "the report on {n} threads differs from the sequential one"
        );
        assert_eq!(
            format!("{:?}", parallel.error),
            format!("{:?}", sequential.error),
            "the error on {n} threads differs from the sequential one"
        );
        assert_eq!(
            format!("{:?}", parallel.trace),
            format!("{:?}", sequential.trace),
            "the trace on {n} threads differs from the sequential one"
        );
    }
    sequential
}
