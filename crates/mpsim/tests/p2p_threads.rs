//! The threads-only parts of `docs/p2p.md` §9 (every behaviour runs on both backends in
//! `p2p_backends.rs`): P23 for a request leaked with `mem::forget` (its endpoint still reports it
//! at exit), and P28's progress check with real concurrency (the sender spins outside the library
//! until the receiver says its receive completed).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mpsim::{Backend, Comm, Error, Launcher, Source, Tag, Wait};

fn threads(ranks: u32) -> Launcher {
    Launcher::new(ranks).backend(Backend::Threads)
}

#[test]
fn p2p_p23_request_active_at_end_is_pending_at_exit() {
    let err = threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let mut buf = [0u8; 4];
                let r = world.irecv(&mut buf, 1, 9)?;
                std::mem::forget(r); // never waited for, never dropped
            }
            Ok(())
        })
        .expect_err("a request was left active");
    match err {
        Error::PendingAtExit {
            rank: 0, requests, ..
        } => {
            assert_eq!(requests.len(), 1);
            let r = &requests[0];
            assert_eq!(
                (r.call, r.peer, r.tag),
                ("irecv", Source::Rank(1), Tag::Value(9))
            );
        }
        other => panic!("expected PendingAtExit, got {other}"),
    }
}

#[test]
fn p2p_p28_progress_while_the_sender_computes() {
    // Rank 0 isends 1 MiB, then computes without calling the library until rank 1 says its
    // blocking receive completed. Without progress outside library calls this never ends; the
    // 10 s cap turns that into a failure instead of a hang.
    static RECEIVED: AtomicBool = AtomicBool::new(false);
    threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let r = world.isend(&vec![3u8; 1 << 20], 1, 0)?;
                let start = Instant::now();
                while !RECEIVED.load(Ordering::Acquire) {
                    assert!(start.elapsed() < Duration::from_secs(10), "no progress");
                    std::hint::spin_loop();
                }
                r.wait().await?;
            } else {
                let mut buf = vec![0u8; 1 << 20];
                world.recv(&mut buf, 0, 0).await?;
                assert!(buf.iter().all(|&b| b == 3));
                RECEIVED.store(true, Ordering::Release);
            }
            Ok(())
        })
        .expect("progress");
}

/// Every `--wait` policy, whatever the ranks per core: a ring's token comes back intact, and a
/// receive nothing answers ends in `Deadlock` (waiting ranks park in the end, so the watchdog
/// sees them), not in a hang.
#[test]
fn p2p_every_wait_policy_delivers_and_reports_deadlock() {
    for wait in [Wait::Auto, Wait::Spin, Wait::Yield, Wait::Park] {
        for ranks in [2, 3, 5] {
            threads(ranks)
                .wait(wait)
                .run(|world: Comm| async move {
                    let (me, n) = (world.rank(), world.size());
                    let mut token = [0u32; 1];
                    for trip in 0..50 {
                        if me == 0 {
                            world.send(&[trip * n], 1, 0).await?;
                            world.recv(&mut token, n - 1, 0).await?;
                            assert_eq!(token[0], trip * n + n - 1, "token damaged");
                        } else {
                            world.recv(&mut token, me - 1, 0).await?;
                            world.send(&[token[0] + 1], (me + 1) % n, 0).await?;
                        }
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{wait:?} on {ranks} ranks: {e}"));
            let err = threads(ranks)
                .wait(wait)
                .run(|world: Comm| async move {
                    if world.rank() == 0 {
                        world.recv(&mut [0u8; 1], 1, 99).await?;
                    }
                    Ok(())
                })
                .expect_err("nothing answers rank 0");
            assert!(
                matches!(err, Error::Deadlock { .. }),
                "{wait:?} on {ranks} ranks: {err}"
            );
        }
    }
}

/// §8: a failed rank ends the run on every rank, never a hang, also for ranks that only poll or
/// compute in a loop (they see the abort when they yield, not only when they wait): the run
/// returns the first error.
#[test]
fn p2p_abort_reaches_ranks_that_only_poll_or_compute() {
    for looping in ["iprobe", "test", "compute"] {
        let err = threads(3)
            .run(|world: Comm| async move {
                match world.rank() {
                    0 => {
                        world.compute(Duration::from_micros(50)).await;
                        return Err(world.send(&[1u8], 9, 0).await.expect_err("rank 9"));
                    }
                    1 => loop {
                        match looping {
                            "iprobe" => drop(world.iprobe(2, 5).await?),
                            "compute" => world.compute(Duration::from_micros(10)).await,
                            _ => {
                                let mut buf = [0u8; 1];
                                let mut r = world.irecv(&mut buf, 2, 5)?;
                                for _ in 0..100 {
                                    if r.test().await?.is_some() {
                                        break;
                                    }
                                }
                                r.cancel()?;
                            }
                        }
                    },
                    _ => Ok(()),
                }
            })
            .expect_err("rank 0 fails");
        assert!(
            matches!(err, Error::InvalidRank { rank: 9, .. }),
            "{looping}: {err}"
        );
    }
}

/// §8: once the run has aborted, a rank that goes on sending (after the wait that told it so,
/// say) gets `Aborted` from every send, blocking, nonblocking, buffered or persistent, and
/// sends nothing: every rank stops at its next call. Its sends used to succeed, and another
/// rank could even receive one.
#[test]
fn p2p_sends_after_an_abort_fail_with_aborted() {
    // Counted outside the run: a failed assertion in rank 0 would only make it fail, and the
    // run reports rank 1's error, which comes first.
    static ABORTED_SENDS: AtomicUsize = AtomicUsize::new(0);
    let err = threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 1 {
                return Err(world.send(&[1u8], 9, 0).await.expect_err("rank 9"));
            }
            let waited = world.recv(&mut [0u8; 1], 1, 0).await;
            assert!(
                matches!(waited, Err(Error::Aborted { rank: 0, .. })),
                "{waited:?}"
            );
            let aborted = |what: &str, e: Error| {
                assert!(matches!(e, Error::Aborted { rank: 0, .. }), "{what}: {e}");
                assert!(e.to_string().contains("invalid rank 9"), "{what}: {e}");
                ABORTED_SENDS.fetch_add(1, Ordering::Relaxed);
            };
            aborted("send", world.send(&[1u8], 1, 3).await.unwrap_err());
            aborted("ssend", world.ssend(&[1u8], 1, 3).await.unwrap_err());
            aborted("isend", world.isend(&[1u8], 1, 3).unwrap_err());
            aborted("irsend", world.irsend(&[1u8], 1, 3).unwrap_err());
            let mut data = [1u8];
            let mut persistent = world.send_init(&mut data, 1, 3)?;
            aborted("start", persistent.start().unwrap_err());
            Ok(())
        })
        .expect_err("rank 1 fails");
    assert!(matches!(err, Error::InvalidRank { rank: 9, .. }), "{err}");
    assert_eq!(
        ABORTED_SENDS.load(Ordering::Relaxed),
        5,
        "every send failed"
    );
}

/// `compute` of a duration the run's clock cannot count (2^64 ns from its start, as under the
/// simulator, which ends it with `TimeOverflow`) ends the run with an error naming the rank and
/// the call, where it panicked inside the library (`Duration::MAX`) or spun for 35,000 years
/// (2^40 s, which `Instant` holds).
#[test]
fn threads_compute_longer_than_the_clock_is_an_error_not_a_panic() {
    for d in [Duration::MAX, Duration::from_secs(1 << 40)] {
        threads_compute_too_long(d);
    }
}

fn threads_compute_too_long(d: Duration) {
    let err = threads(2)
        .run(move |world: Comm| async move {
            if world.rank() == 1 {
                world.compute(d).await;
            }
            Ok(())
        })
        .expect_err("compute too long");
    match err {
        Error::InvalidArgument { what } => {
            assert!(what.starts_with("rank 1: compute("), "{what}");
            assert!(
                what.contains("longer than the host's clock can count"),
                "{what}"
            );
        }
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

/// Strict mode (`ReadyNotPosted`) on threads judges a ready send as the simulator does: one
/// that arrived while its receiver computed, before the receive was posted, is reported, not
/// matched by the receive posted after it. (The receiver learns outside the library that the
/// irsend was made, so its packet is in the lane when the receive is posted.)
#[test]
fn p2p_strict_ready_send_arrived_before_its_receive_is_reported() {
    static RSENT: AtomicBool = AtomicBool::new(false);
    RSENT.store(false, Ordering::SeqCst);
    let err = threads(2)
        .strict(true)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                // Nonblocking: a ready send completes only when it is matched.
                let r = world.irsend(&[1u8; 8], 1, 1)?;
                RSENT.store(true, Ordering::SeqCst);
                r.wait().await?;
            } else {
                while !RSENT.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                world.recv(&mut [0u8; 8], 0, 1).await?;
            }
            Ok(())
        })
        .expect_err("the rsend arrived before its receive");
    assert!(
        matches!(err, Error::ReadyNotPosted { receiver: 1, .. }),
        "{err}"
    );
}
