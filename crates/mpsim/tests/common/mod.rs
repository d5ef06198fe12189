//! Shared by the simulator's timing tests: every simulated run is made sequentially and on
//! several threads, and must come out the same (`docs/timing.md` §5: "the parallel simulator
//! must print the same report, byte for byte").
#![allow(dead_code)]

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
    let mut threads = vec![2, ranks];
    threads.dedup();
    threads.retain(|&n| n > 1 && n <= ranks);
    simulate_on_threads(launcher, &threads, "", program)
}

/// Simulates `program` with `launcher` on one thread, then on each of `threads`; checks that
/// the outcomes (report, error, trace) are the same (`case` begins each failure's message)
/// and returns the sequential one.
pub fn simulate_on_threads<F, Fut>(
    launcher: Launcher,
    threads: &[u32],
    case: &str,
    program: F,
) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let sequential = launcher.clone().sim_threads(1).simulate(&program);
    for &n in threads {
        let parallel = launcher.clone().sim_threads(n).simulate(&program);
        assert_eq!(
            format!("{:?}", parallel.report),
            format!("{:?}", sequential.report),
            "{case}the report on {n} threads differs from the sequential one"
        );
        assert_eq!(
            format!("{:?}", parallel.error),
            format!("{:?}", sequential.error),
            "{case}the error on {n} threads differs from the sequential one"
        );
        assert_eq!(
            format!("{:?}", parallel.trace),
            format!("{:?}", sequential.trace),
            "{case}the trace on {n} threads differs from the sequential one"
        );
    }
    sequential
}

/// The bytes of message `i` of a generated program (the reference-model tests): different for
/// every message and every position.
pub fn payload(i: usize, bytes: usize) -> Vec<u8> {
    (0..bytes).map(|k| (i * 31 + k * 7) as u8).collect()
}
