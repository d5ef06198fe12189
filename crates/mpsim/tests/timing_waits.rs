//! `docs/timing.md` §9, what a blocked wait may and may not change: S1 ("what moves a clock":
//! the *return* of a call that waits, nothing else), S15 (a deadlock report gives the clock at
//! which each rank blocked) and S11 (a truncation carries the time the receive completed).
//! A rank blocked in a wait is resumed by the simulator whenever any of its requests
//! completes; these tests make one of its *other* requests complete (an earlier receive
//! matched, the ack of a buffered send, a message a probe does not want) and check that
//! nothing the program or the report can see moves until the wait itself returns. Each run is
//! made sequentially and on several threads (`common::simulate_all_ways`).

mod common;

use std::future::Future;
use std::time::Duration;

use mpsim::sim::{Model, Outcome};
use mpsim::{Comm, Error, Launcher, wait_all, wait_any};

/// Simulates `program` on `ranks` ranks of the worked examples' model (every delay 1000 ns,
/// ack 200 ns, `BSEND_OVERHEAD` 0).
fn sim<F, Fut>(ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let launcher = Launcher::new(ranks).model(Model::worked_examples());
    common::simulate_all_ways(launcher, ranks, program)
}

fn clocks(o: &Outcome) -> Vec<u64> {
    o.report.ranks.iter().map(|r| r.clock_ns).collect()
}

fn blocked(o: &Outcome) -> Vec<u64> {
    o.report.ranks.iter().map(|r| r.blocked_ns).collect()
}

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// The deadlock report's text.
fn deadlock_text(o: &Outcome) -> String {
    match &o.error {
        Some(e @ Error::Deadlock { .. }) => e.to_string(),
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

/// S1 and S15: rank 0 posts a receive from rank 1, then blocks in a receive from rank 2 that
/// never comes. Rank 1's message matches the first receive at 1000 while rank 0 is blocked:
/// its wait does not return, so its clock stays at 0, it is reported blocked since 0, and no
/// time is counted blocked (the wait never ended) or listed among the longest waits.
#[test]
fn timing_s1_a_completion_that_does_not_end_the_wait_moves_no_clock() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                let mut early = [0u8; 8];
                let _first = world.irecv(&mut early, 1, 1)?;
                world.recv(&mut [0u8; 8], 2, 2).await?;
            }
            1 => world.send(&[1u8; 8], 0, 1).await?,
            _ => {
                world.recv(&mut [0u8; 8], 0, 3).await?;
            }
        }
        Ok(())
    });
    let text = deadlock_text(&o);
    assert!(
        text.contains(
            "rank 0 blocked in recv since t=0 ns, waiting for recv (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
    assert!(text.ends_with("cycle 0 → 2 → 0"), "{text}");
    assert_eq!(clocks(&o), vec![0, 0, 0]);
    assert_eq!(blocked(&o), vec![0, 0, 0]);
    assert!(o.report.top_waits.is_empty(), "{:?}", o.report.top_waits);
}

/// S1: the same wait, ended at last by rank 2's message (sent at 5000, arriving at 6000), is one
/// wait of 6000 ns from 0: not one of 1000 ns then one of 5000 ns from the early completion.
#[test]
fn timing_s1_a_wait_woken_early_is_one_wait_from_its_start() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                let mut early = [0u8; 8];
                let first = world.irecv(&mut early, 1, 1)?;
                world.recv(&mut [0u8; 8], 2, 2).await?;
                assert_eq!(world.now_ns(), 6000, "the wait returns at the arrival");
                first.wait().await?;
                assert_eq!(world.now_ns(), 6000, "complete since 1000");
            }
            1 => world.send(&[1u8; 8], 0, 1).await?,
            _ => {
                world.compute(ns(5000)).await;
                world.send(&[2u8; 8], 0, 2).await?;
            }
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![6000, 0, 5000]);
    assert_eq!(blocked(&o), vec![6000, 0, 0]);
    let longest = &o.report.top_waits[0];
    assert_eq!(
        (
            longest.rank,
            longest.call,
            longest.since_ns,
            longest.waited_ns
        ),
        (0, "recv", 0, 6000),
        "{:?}",
        o.report.top_waits
    );
    assert_eq!(o.report.top_waits.len(), 1, "{:?}", o.report.top_waits);
}

/// S1 and S15: the ack of rank 0's buffered send frees its buffer bytes at 1200 while rank 0 is
/// blocked in a receive that never comes: its clock stays where it blocked (0).
#[test]
fn timing_s15_a_bsend_ack_during_a_wait_leaves_blocked_since() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                world.buffer_attach(64)?;
                world.bsend(&[1u8; 8], 1, 1).await?;
                world.recv(&mut [0u8; 8], 2, 2).await?;
            }
            1 => {
                world.recv(&mut [0u8; 8], 0, 1).await?;
            }
            _ => {
                world.recv(&mut [0u8; 8], 0, 3).await?;
            }
        }
        Ok(())
    });
    let text = deadlock_text(&o);
    assert!(
        text.contains(
            "rank 0 blocked in recv since t=0 ns, waiting for recv (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
    assert_eq!(clocks(&o), vec![0, 1000, 0]);
}

/// S1 and S15 for `wait_all`: its first request completes at 1000, after the call began (at
/// 0); it has not returned, so rank 0 is blocked in it since 0, at clock 0.
#[test]
fn timing_s15_wait_all_blocked_since_its_call_not_its_first_completion() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                let (mut a, mut b) = ([0u8], [0u8]);
                let mut reqs = [world.irecv(&mut a, 1, 1)?, world.irecv(&mut b, 2, 2)?];
                wait_all(&mut reqs).await?;
            }
            1 => world.send(&[1u8], 0, 1).await?,
            _ => {
                world.recv(&mut [0u8], 0, 3).await?;
            }
        }
        Ok(())
    });
    let text = deadlock_text(&o);
    assert!(
        text.contains(
            "rank 0 blocked in wait_all since t=0 ns, waiting for recv (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
    assert_eq!(clocks(&o), vec![0, 0, 0]);
}

/// S1 and S15 for a blocking probe: a message it does not want (from rank 1) arrives at 1000
/// and wakes it to look; it has not returned, so its clock and "blocked since" stay at 0.
#[test]
fn timing_s15_a_probe_woken_by_another_message_stays_blocked_since_its_call() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                world.probe(2, 2).await?;
            }
            1 => world.send(&[1u8], 0, 1).await?,
            _ => {
                world.recv(&mut [0u8], 0, 3).await?;
            }
        }
        Ok(())
    });
    let text = deadlock_text(&o);
    assert!(
        text.contains(
            "rank 0 blocked in probe since t=0 ns, waiting for probe (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
    assert_eq!(clocks(&o), vec![0, 0, 0]);
}

/// S1 for `wait_any`: a request outside the set completes at 1000 while rank 0 waits; the
/// wait returns at 3000 with the only request of its set, and its clock reads 3000, blocked
/// for 3000 ns in one wait.
#[test]
fn timing_s1_wait_any_returns_once_at_its_own_completion() {
    let o = sim(3, |world: Comm| async move {
        match world.rank() {
            0 => {
                let (mut a, mut b) = ([0u8], [0u8]);
                let _other = world.irecv(&mut a, 1, 1)?;
                let mut set = [world.irecv(&mut b, 2, 2)?];
                let (index, _) = wait_any(&mut set).await?.expect("one is active");
                assert_eq!((index, world.now_ns()), (0, 3000));
            }
            1 => world.send(&[1u8], 0, 1).await?,
            _ => {
                world.compute(ns(2000)).await;
                world.send(&[2u8], 0, 2).await?;
            }
        }
        Ok(())
    });
    // Rank 0 lets go of a receive that had matched a message: a warning, not an error.
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![3000, 0, 2000]);
    assert_eq!(blocked(&o), vec![3000, 0, 0]);
    assert_eq!(o.report.top_waits.len(), 1, "{:?}", o.report.top_waits);
}

/// S11: a receive posted at 0 is matched by a 16-byte message at its arrival (1000), which
/// truncates into its 8 bytes: "truncation completes the receive at max(m.arrival, req.ts)
/// with the error, carrying that time". The program waits for it only at 3000: the wait
/// returns then (the clock reads 3000), and the error carries 1000.
#[test]
fn timing_s11_truncation_carries_the_completion_time_not_the_waits() {
    let o = sim(2, |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u8; 16], 1, 0).await?;
            assert_eq!(world.now_ns(), 1200, "acked at max(1000, 0) + 200");
        } else {
            let mut buf = [0u8; 8];
            let r = world.irecv(&mut buf, 0, 0)?;
            world.compute(ns(3000)).await;
            let err = r.wait().await.expect_err("16 bytes into 8");
            let Error::Truncate { site, .. } = &err else {
                panic!("expected Truncate, got {err}");
            };
            assert_eq!(site.time_ns, Some(1000), "{err}");
            assert_eq!(world.now_ns(), 3000);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![1200, 3000]);
}

/// S11 through `test`: the test that finds the truncated receive at 3000 gives the error of
/// 1000, when the receive completed.
#[test]
fn timing_s11_a_test_finds_the_truncation_with_its_completion_time() {
    let o = sim(2, |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[7u8; 16], 1, 0).await?;
        } else {
            let mut buf = [0u8; 8];
            let mut r = world.irecv(&mut buf, 0, 0)?;
            world.compute(ns(3000)).await;
            let err = r.test().await.expect_err("16 bytes into 8");
            assert_eq!(err.site().and_then(|s| s.time_ns), Some(1000), "{err}");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
}
