//! The progress observer (`simulate_observed`, the launcher's progress bar): told as a run goes,
//! never going back, sequentially and on several threads, also while one partition runs a
//! long round alone.

mod common;

use common::{Rank, run_observed};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_sim::{Model, Options, Progress};

/// Ranks of the ring: each half is well over the observer's 65,536 events.
const RANKS: u32 = 150_000;

/// One lap of a token: rank 0 sends first, every other rank passes it on.
async fn ring(r: Rank) -> Result<(), Error> {
    let me = r.me();
    let (left, right) = ((me + RANKS - 1) % RANKS, (me + 1) % RANKS);
    if me != 0 {
        let q = r.irecv(Source::Rank(left), Tag::Value(0));
        r.wait(q).await?;
    }
    let s = r.isend(SendMode::Standard, right, 0, 8)?;
    r.wait(s).await?;
    if me == 0 {
        let q = r.irecv(Source::Rank(left), Tag::Value(0));
        r.wait(q).await?;
    }
    Ok(())
}

/// What the observer heard, on `workers` threads.
fn heard(workers: u32) -> (Vec<Progress>, u64) {
    let options = Options {
        workers,
        ..Options::new(RANKS, Model::worked_examples())
    };
    let mut heard = Vec::new();
    let out = run_observed(&options, &mut |p| heard.push(p), ring);
    assert!(out.error.is_none(), "{:?}", out.error);
    (
        heard,
        out.report.events.expect("a simulation counts its events"),
    )
}

#[test]
fn progress_is_told_as_the_run_goes_and_never_goes_back() {
    for workers in [1, 2] {
        let (heard, events) = heard(workers);
        let last = heard.last().expect("told at the end at least");
        assert_eq!(last.events, events, "on {workers} threads");
        assert_eq!(last.finished, RANKS, "on {workers} threads");
        assert!(
            heard.windows(2).all(|w| w[0].events <= w[1].events
                && w[0].virtual_ns <= w[1].virtual_ns
                && w[0].finished <= w[1].finished),
            "on {workers} threads: {heard:?}"
        );
        // On 2 threads the token crosses each half in one round: the observer must hear of
        // it while that round runs, not only between rounds.
        let during = heard.iter().filter(|p| p.events < events).count() as u64;
        assert!(
            during >= events / (1 << 16) - 1,
            "on {workers} threads, {during} reports before the end of {events} events: {heard:?}"
        );
    }
}
