//! `docs/timing.md` §8 worked examples E1–E6 written with the public API (`Comm`, `Request`,
//! `Launcher::simulate`), exact to the nanosecond on `Model::worked_examples()` (every delay
//! 1000 ns, ack 200 ns, `BSEND_OVERHEAD` 0, compute modeled), and one deadlock test per pattern
//! (`docs/p2p.md` P25, `timing.md` §5 and S15): every one ends with `Error::Deadlock`, names
//! the blocked ranks and calls, and never hangs. E4 and E5 also run with synchronous sends (each
//! send ending at its ack), and E6 with waits on requests. This is the one suite of the worked
//! examples (the simulator's own tests have none).

mod common;

use std::future::Future;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model, Outcome};
use mpsim::{Backend, Comm, Error, Launcher, Source, Tag, wait_all};

/// Simulates `program` on `ranks` ranks of `model`.
fn sim<F, Fut>(ranks: u32, model: Model, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    common::simulate_all_ways(Launcher::new(ranks).model(model), ranks, program)
}

/// The final virtual clock of every rank.
fn clocks(o: &Outcome) -> Vec<u64> {
    o.report.ranks.iter().map(|r| r.clock_ns).collect()
}

/// The deadlock report's text of a run that must have deadlocked.
fn deadlock_report(o: &Outcome) -> String {
    match &o.error {
        Some(Error::Deadlock { report }) => report.to_string(),
        other => panic!("expected Error::Deadlock, got {other:?}"),
    }
}

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// E1: rank 0 `ssend`s at 0, rank 1 `recv`s at 0: arrival 1000, ack 1000 + 200.
#[test]
fn timing_e1_rendezvous_with_an_early_receiver() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u64], 1, 0).await?;
            assert_eq!(world.now_ns(), 1200, "rank 0's ssend ends at the ack");
        } else {
            let mut buf = [0u64];
            let status = world.recv(&mut buf, 0, 0).await?;
            assert_eq!((status.source, status.tag, buf), (0, 0, [7]));
            assert_eq!(world.now_ns(), 1000, "rank 1's recv ends at the arrival");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "E1 must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![1200, 1000]);
    assert_eq!(o.report.predicted_ns(), 1200);
}

/// E2: as E1, but rank 1 computes 5000 ns first: it ends at 5000, the ack leaves at 5000.
#[test]
fn timing_e2_late_receiver() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u64], 1, 0).await?;
            assert_eq!(world.now_ns(), 5200, "ack send_ts = max(1000, 5000)");
        } else {
            world.compute(ns(5000)).await;
            assert_eq!(world.now_ns(), 5000);
            world.recv(&mut [0u64], 0, 0).await?;
            assert_eq!(world.now_ns(), 5000, "max(5000, 1000)");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "E2 must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![5200, 5000]);
}

/// E3 in three runs: a 32-byte bsend into a 64-byte buffer ends at 0; a second one of 40 bytes
/// at t=100 overflows (32 + 40 > 64) and stops the run at rank 0, t=100; at t=6000 (after the
/// release at 5200) it succeeds.
#[test]
fn timing_e3_buffered_send_returns_at_once_and_overflow_stops_the_run() {
    let e3 = |second_at: Option<u64>| {
        sim(2, Model::worked_examples(), move |world: Comm| async move {
            if world.rank() == 0 {
                world.buffer_attach(64)?;
                world.bsend(&[1u8; 32], 1, 0).await?;
                assert_eq!(world.now_ns(), 0, "the bsend ends at 0");
                if let Some(t) = second_at {
                    world.compute(ns(t)).await;
                    world.bsend(&[2u8; 40], 1, 1).await?;
                    assert_eq!(world.now_ns(), t, "the second bsend returns at once");
                }
            } else {
                world.compute(ns(5000)).await;
                let mut buf = [0u8; 64];
                let status = world.recv(&mut buf, 0, 0).await?;
                assert_eq!((status.bytes, world.now_ns()), (32, 5000));
                if second_at.is_some() {
                    let status = world.recv(&mut buf, 0, 1).await?;
                    assert_eq!(status.bytes, 40);
                }
            }
            Ok(())
        })
    };

    let first_only = e3(None);
    assert!(
        first_only.error.is_none(),
        "one bsend must succeed: {:?}",
        first_only.error
    );
    assert_eq!(clocks(&first_only), vec![0, 5000]);

    let early = e3(Some(100));
    match &early.error {
        Some(Error::BufferOverflow {
            site,
            requested,
            attached,
            used,
        }) => {
            assert_eq!((*requested, *attached, *used), (40, 64, 32));
            assert_eq!((site.rank, site.time_ns), (0, Some(100)), "{site:?}");
        }
        other => panic!("expected the overflow at rank 0, t=100, got {other:?}"),
    }
    assert!(
        early.report.stopped.is_some(),
        "the report says why the run stopped"
    );
    // S16: each clock is min(C[r], 100); rank 1 had already computed up to 5000.
    assert_eq!(clocks(&early), vec![100, 100]);

    let late = e3(Some(6000));
    assert!(
        late.error.is_none(),
        "the bsend at 6000 must fit: {:?}",
        late.error
    );
    // The second bsend at 6000 arrives at 7000; rank 1 posted its receive at 5000.
    assert_eq!(clocks(&late), vec![6000, 7000]);
}

/// E4: tables (8 B, 1000 ns), (1024 B, 9000 ns); 1024 bytes then 8 bytes with the same tag at
/// t=0: arrivals 9000 and max(1000, 9000) = 9000; the first receive gets the 1024 bytes.
#[test]
fn timing_e4_non_overtaking() {
    let table = DelayTable::new("e4", vec![(8, 1000), (1024, 9000)]).expect("a valid table");
    let model = Model {
        ssend: table.clone(),
        bsend: table,
        ..Model::worked_examples()
    };
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            let big = world.isend(&[1u8; 1024], 1, 5)?;
            let small = world.isend(&[2u8; 8], 1, 5)?;
            assert_eq!(world.now_ns(), 0, "isend takes no time");
            big.wait().await?;
            small.wait().await?;
        } else {
            let mut buf = [0u8; 1024];
            let first = world.recv(&mut buf, 0, 5).await?;
            assert_eq!(first.bytes, 1024, "the 1024-byte message first");
            assert_eq!((buf[0], world.now_ns()), (1, 9000));
            let second = world.recv(&mut buf, 0, 5).await?;
            assert_eq!((second.bytes, buf[0], world.now_ns()), (8, 2, 9000));
        }
        Ok(())
    });
    assert!(o.error.is_none(), "E4 must succeed: {:?}", o.error);
    // Standard sends of 1024 and 8 bytes are eager: locally complete at 0.
    assert_eq!(clocks(&o), vec![0, 9000]);
}

/// E4 with synchronous sends (`issend`): the same arrivals, in order, at 9000; each send
/// completes at its ack, 9000 + 200, so rank 0 ends at 9200.
#[test]
fn timing_e4_non_overtaking_with_synchronous_sends() {
    let table = DelayTable::new("e4", vec![(8, 1000), (1024, 9000)]).expect("a valid table");
    let model = Model {
        ssend: table.clone(),
        bsend: table,
        ..Model::worked_examples()
    };
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            let big = world.issend(&[1u8; 1024], 1, 5)?;
            let small = world.issend(&[2u8; 8], 1, 5)?;
            big.wait().await?;
            small.wait().await?;
        } else {
            let mut buf = [0u8; 1024];
            let first = world.recv(&mut buf, 0, 5).await?;
            assert_eq!(first.bytes, 1024, "the 1024-byte message first");
            assert_eq!((buf[0], world.now_ns()), (1, 9000));
            let second = world.recv(&mut buf, 0, 5).await?;
            assert_eq!((second.bytes, buf[0], world.now_ns()), (8, 2, 9000));
        }
        Ok(())
    });
    assert!(
        o.error.is_none(),
        "E4 with issend must succeed: {:?}",
        o.error
    );
    assert_eq!(clocks(&o), vec![9200, 9000]);
}

/// E5: rank 1's `recv(ANY_SOURCE)` at 0 gets rank 2's message (arrival 1000) before rank 3's
/// (sent after 10 ns of compute, arrival 1010), every run, whatever order the ranks are made in.
#[test]
fn timing_e5_wildcard_picks_the_earliest_arrival() {
    let orders = [vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![2, 0, 3, 1]];
    for order in orders {
        let o = Launcher::new(4)
            .model(Model::worked_examples())
            .spawn_order(order.clone())
            .simulate(|world: Comm| async move {
                match world.rank() {
                    1 => {
                        let mut buf = [0u32];
                        let first = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((first.source, buf[0], world.now_ns()), (2, 2, 1000));
                        let second = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((second.source, buf[0], world.now_ns()), (3, 3, 1010));
                    }
                    2 => world.send(&[2u32], 1, 0).await?,
                    3 => {
                        world.compute(ns(10)).await;
                        world.send(&[3u32], 1, 0).await?;
                    }
                    _ => {}
                }
                Ok(())
            });
        assert!(o.error.is_none(), "E5 with order {order:?}: {:?}", o.error);
        assert_eq!(clocks(&o), vec![0, 1010, 0, 10], "order {order:?}");
    }
}

/// E5 with synchronous sends: the same matches at 1000 and 1010; ranks 2 and 3 end at their
/// acks, 1000 + 200 and 1010 + 200.
#[test]
fn timing_e5_wildcard_with_synchronous_sends() {
    let orders = [vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![2, 0, 3, 1]];
    for order in orders {
        let o = Launcher::new(4)
            .model(Model::worked_examples())
            .spawn_order(order.clone())
            .simulate(|world: Comm| async move {
                match world.rank() {
                    1 => {
                        let mut buf = [0u32];
                        let first = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((first.source, buf[0], world.now_ns()), (2, 2, 1000));
                        let second = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((second.source, buf[0], world.now_ns()), (3, 3, 1010));
                    }
                    2 => world.ssend(&[2u32], 1, 0).await?,
                    3 => {
                        world.compute(ns(10)).await;
                        world.ssend(&[3u32], 1, 0).await?;
                    }
                    _ => {}
                }
                Ok(())
            });
        assert!(o.error.is_none(), "E5 with order {order:?}: {:?}", o.error);
        assert_eq!(clocks(&o), vec![0, 1010, 1200, 1210], "order {order:?}");
    }
}

/// E6: ranks 0 and 1 both `ssend` to each other first, then `recv`: a deadlock report naming
/// both ranks blocked in ssend on each other, cycle 0 → 1 → 0; a non-zero exit status.
#[test]
fn timing_e6_deadlock_report() {
    let program = |world: Comm| async move {
        let peer = 1 - world.rank();
        world.ssend(&[0u8; 8], peer, 0).await?;
        world.recv(&mut [0u8; 8], peer, 0).await?;
        Ok(())
    };
    let o = sim(2, Model::worked_examples(), program);
    let report = deadlock_report(&o);
    assert!(
        report.contains(
            "rank 0 blocked in ssend since t=0 ns, waiting for ssend (peer 1, tag 0, context 0)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rank 1 blocked in ssend since t=0 ns, waiting for ssend (peer 0, tag 0, context 0)"
        ),
        "{report}"
    );
    assert!(report.ends_with("cycle 0 → 1 → 0"), "{report}");
    // The same as data: ranks, calls, peers, tags, times and the cycle.
    let Some(Error::Deadlock { report }) = &o.error else {
        unreachable!("checked above");
    };
    assert_eq!(report.cycle, [0, 1, 0]);
    for (rank, b) in report.blocked.iter().enumerate() {
        assert_eq!(
            (b.rank, b.call, b.since_ns, b.waits_for, b.peer_finished),
            (rank as u32, "ssend", Some(0), Some(1 - rank as u32), false)
        );
        let w = &b.waiting_on[..];
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            (w[0].call, w[0].peer, w[0].tag, w[0].context.0),
            ("ssend", Source::Rank(1 - rank as u32), Tag::Value(0), 0)
        );
    }
    assert!(
        o.report
            .stopped
            .as_deref()
            .is_some_and(|s| s.contains("deadlock")),
        "{:?}",
        o.report.stopped
    );
    // The messages arrived at 1000; the run stopped when no event was left.
    assert_eq!(clocks(&o), vec![0, 0]);

    // Exit status: the launcher's run returns the error (mpsim::run exits non-zero on it).
    let ran = Launcher::new(2)
        .model(Model::worked_examples())
        .backend(Backend::Sim)
        .run(program);
    assert!(
        matches!(ran, Err(Error::Deadlock { .. })),
        "Launcher::run must fail with the deadlock, got {ran:?}"
    );
}

/// E6 written with requests: each rank `issend`s and waits on it, once with the request's
/// own `wait` (a wait is named after its operation, `ssend`) and once with `wait_all` (named
/// after the call, S15), then `recv`s. The report names that call and what it waits for, the
/// ssend; both messages arrived (t=1000) and were never received, one warning each.
#[test]
fn timing_e6_deadlock_report_names_the_wait_on_requests() {
    for all in [false, true] {
        let o = sim(2, Model::worked_examples(), move |world: Comm| async move {
            let peer = 1 - world.rank();
            let req = world.issend(&[0u8; 8], peer, 0)?;
            if all {
                wait_all(&mut [req]).await?;
            } else {
                req.wait().await?;
            }
            world.recv(&mut [0u8; 8], peer, 0).await?;
            Ok(())
        });
        let report = deadlock_report(&o);
        let call = if all { "wait_all" } else { "ssend" };
        for (rank, peer) in [(0, 1), (1, 0)] {
            let line = format!(
                "rank {rank} blocked in {call} since t=0 ns, waiting for ssend (peer {peer}, \
                 tag 0, context 0)"
            );
            assert!(report.contains(&line), "{report}");
        }
        assert!(report.ends_with("cycle 0 → 1 → 0"), "{report}");
        assert_eq!(o.report.warnings.len(), 2, "{:?}", o.report.warnings);
        assert_eq!(clocks(&o), vec![0, 0]);
    }
}

/// Head-to-head `ssend` with distinct tags and blocking times: both ranks, their call, tag and
/// clock, and the cycle written from rank 0.
#[test]
fn sim_deadlock_head_to_head_ssend() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(100)).await;
            world.ssend(&[1u8], 1, 3).await?;
            world.recv(&mut [0u8], 1, 4).await?;
        } else {
            world.ssend(&[1u8], 0, 4).await?;
            world.recv(&mut [0u8], 0, 3).await?;
        }
        Ok(())
    });
    let report = deadlock_report(&o);
    assert!(
        report.contains(
            "rank 0 blocked in ssend since t=100 ns, waiting for ssend (peer 1, tag 3, context 0)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rank 1 blocked in ssend since t=0 ns, waiting for ssend (peer 0, tag 4, context 0)"
        ),
        "{report}"
    );
    assert!(report.ends_with("; cycle 0 → 1 → 0"), "{report}");
    assert_eq!(clocks(&o), vec![100, 0]);
}

/// A receive from a rank that has finished: rank 0 is blocked in recv on rank 1, which the
/// report says has finished (it is not blocked), and there is no cycle.
#[test]
fn sim_deadlock_recv_from_finished_rank() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(300)).await;
            world.recv(&mut [0u8; 4], 1, 2).await?;
        } else {
            world.compute(ns(50)).await;
        }
        Ok(())
    });
    let report = deadlock_report(&o);
    assert!(
        report.contains(
            "rank 0 blocked in recv since t=300 ns, waiting for recv (peer 1, tag 2, context 0), \
             and rank 1 has finished"
        ),
        "{report}"
    );
    assert!(
        !report.contains("rank 1 blocked"),
        "rank 1 finished, it is not blocked: {report}"
    );
    assert!(
        !report.contains("cycle"),
        "no wait-for cycle through a finished rank: {report}"
    );
    assert_eq!(clocks(&o), vec![300, 50]);
}

/// A wildcard receive that no message satisfies: rank 0 waits on ANY_SOURCE for tag 5 (no
/// wait-for edge), rank 1 sent tag 6 and then waits on rank 0: both blocked, no cycle.
#[test]
fn sim_deadlock_wildcard_receive_nothing_satisfies() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.recv(&mut [0u8; 4], Source::Any, 5).await?;
        } else {
            world.send(&[6u8; 4], 0, 6).await?;
            world.recv(&mut [0u8; 4], 0, 7).await?;
        }
        Ok(())
    });
    let report = deadlock_report(&o);
    assert!(
        report.contains(
            "rank 0 blocked in recv since t=0 ns, waiting for recv (peer ANY_SOURCE, tag 5, \
             context 0)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rank 1 blocked in recv since t=0 ns, waiting for recv (peer 0, tag 7, context 0)"
        ),
        "{report}"
    );
    assert!(
        !report.contains("cycle"),
        "a wildcard receive has no wait-for edge, so no cycle: {report}"
    );
    // The tag-6 message arrived and nobody took it.
    assert!(
        o.report
            .warnings
            .iter()
            .any(|w| w.contains("from rank 1 to rank 0 (tag 6")),
        "{:?}",
        o.report.warnings
    );
}
