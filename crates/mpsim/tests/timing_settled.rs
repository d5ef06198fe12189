//! `docs/timing.md` §9 settled details S1–S17, one test (at least) per detail, named
//! `timing_sN_...`, each asserting the exact virtual times the spec implies. Programs use the
//! public API on `Model::worked_examples()` (every delay 1000 ns, ack 200 ns, `BSEND_OVERHEAD`
//! 0, `poll_cost` 100 ns, 10⁹ flops/s) or on a model built here.

mod common;

use std::future::Future;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model, Outcome};
use mpsim::{
    BSEND_OVERHEAD, Comm, Error, Launcher, PendingRequest, Source, Tag, test_all, test_any,
    test_some, wait_all, wait_any, wait_some,
};

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

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// Both tables the same two points: 8 B → 1000 ns, 1024 B → 9000 ns (E4's model).
fn e4_model() -> Model {
    let table = DelayTable::new("e4", vec![(8, 1000), (1024, 9000)]).expect("a valid table");
    Model {
        ssend: table.clone(),
        bsend: table,
        ..Model::worked_examples()
    }
}

/// S1: posting sends and receives, attaching a buffer, an `iprobe` that finds, a `test` that
/// finds and a `wait` on something already complete take 0 ns; `compute` and the return of a
/// wait that waits (`wait`, `recv`, `buffer_detach`) move the clock.
#[test]
fn timing_s1_only_compute_and_waits_move_the_clock() {
    let o = sim(3, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.buffer_attach(1024)?;
                let eager = world.isend(&[1u8; 8], 1, 0)?;
                let sync = world.issend(&[1u8; 8], 1, 1)?;
                let buffered = world.ibsend(&[1u8; 8], 1, 2)?;
                let mut buf = [0u8; 8];
                let recv = world.irecv(&mut buf, 2, 0)?;
                assert_eq!(world.now_ns(), 0, "posting takes no time");
                world.compute(ns(300)).await;
                assert_eq!(world.now_ns(), 300, "compute moves the clock");
                eager.wait().await?;
                buffered.wait().await?;
                assert_eq!(world.now_ns(), 300, "waits on complete sends take no time");
                sync.wait().await?;
                assert_eq!(world.now_ns(), 1200, "the ssend's wait returns at its ack");
                recv.wait().await?;
                assert_eq!(world.now_ns(), 1200, "arrived at 1000: max(1200, 1000)");
                assert_eq!(world.buffer_detach().await?, 1024);
                assert_eq!(world.now_ns(), 1200, "the bsend's ack came at 1200");
            }
            1 => {
                world.isend(&[9u8; 4], 2, 9)?.wait().await?;
                let (mut a, mut b, mut c) = ([0u8; 8], [0u8; 8], [0u8; 8]);
                let mut reqs = [
                    world.irecv(&mut a, 0, 0)?,
                    world.irecv(&mut b, 0, 1)?,
                    world.irecv(&mut c, 0, 2)?,
                ];
                assert_eq!(world.now_ns(), 0);
                wait_all(&mut reqs).await?;
                assert_eq!(world.now_ns(), 1000, "wait_all returns at the arrivals");
            }
            _ => {
                world.send(&[2u8; 8], 0, 0).await?;
                assert_eq!(world.now_ns(), 0, "an eager send takes no time");
                world.compute(ns(2000)).await;
                let found = world.iprobe(1, 9).await?;
                assert_eq!(found.map(|s| (s.source, s.bytes)), Some((1, 4)));
                assert_eq!(world.now_ns(), 2000, "an iprobe that finds takes no time");
                let mut buf = [0u8; 4];
                let mut r = world.irecv(&mut buf, 1, 9)?;
                assert!(r.test().await?.is_some(), "arrived at 1000");
                assert_eq!(world.now_ns(), 2000, "a test that finds takes no time");
            }
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S1 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![1200, 1000, 2000]);
    let polls: Vec<Option<u64>> = o.report.ranks.iter().map(|r| r.poll_ns).collect();
    assert_eq!(polls, vec![Some(0); 3], "no poll found nothing");
    let computes: Vec<u64> = o.report.ranks.iter().map(|r| r.compute_ns).collect();
    assert_eq!(computes, vec![300, 0, 2000]);
}

/// S2: a `test` loop progresses and ends; each `test` that finds nothing costs exactly
/// `poll_cost` (100 ns), as does an empty `iprobe`, `test_any`, `test_some` and `test_all`.
#[test]
fn timing_s2_polling_costs_poll_cost_and_lets_others_run() {
    let o = sim(3, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.compute(ns(550)).await;
                world.ssend(&[0u8; 8], 1, 0).await?;
                // Arrival 1550, matched by the receive posted at 0: ack at 1750.
                assert_eq!(world.now_ns(), 1750);
            }
            1 => {
                let mut buf = [0u8; 8];
                let mut r = world.irecv(&mut buf, 0, 0)?;
                let mut empty = 0u64;
                while r.test().await?.is_none() {
                    empty += 1;
                }
                // Empty tests at 0, 100, ..., 1500; the one at 1600 finds the 1550 arrival.
                assert_eq!((empty, world.now_ns()), (16, 1600));
                drop(r);

                let mut empty = 0u64;
                while world.iprobe(2, 0).await?.is_none() {
                    empty += 1;
                }
                // Arrival 2650: empty iprobes at 1600, ..., 2600; found at 2700.
                assert_eq!((empty, world.now_ns()), (11, 2700));
                world.recv(&mut buf, 2, 0).await?;
                assert_eq!(world.now_ns(), 2700);

                let mut reqs = [world.irecv(&mut buf, 2, 1)?];
                assert!(test_any(&mut reqs).await?.completed().is_none());
                assert_eq!(world.now_ns(), 2800, "an empty test_any costs poll_cost");
                assert_eq!(test_some(&mut reqs).await?, Some(vec![]));
                assert_eq!(world.now_ns(), 2900, "an empty test_some costs poll_cost");
                assert!(test_all(&mut reqs).await?.is_none());
                assert_eq!(world.now_ns(), 3000, "an empty test_all costs poll_cost");
                wait_all(&mut reqs).await?;
                assert_eq!(world.now_ns(), 4000, "sent at 3000");
            }
            _ => {
                world.compute(ns(1650)).await;
                world.send(&[0u8; 8], 1, 0).await?;
                world.compute(ns(1350)).await;
                world.send(&[0u8; 8], 1, 1).await?;
            }
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S2 program must end: {:?}", o.error);
    assert_eq!(clocks(&o), vec![1750, 4000, 3000]);
    assert_eq!(o.report.ranks[1].poll_ns, Some(1600 + 1100 + 300));
}

/// S3: `compute_flops(n)` advances by `ceil(n · 10⁹ / flops_per_s)` ns.
#[test]
fn timing_s3_compute_flops_rounds_up() {
    let run = |flops_per_s: u64, flops: &'static [u64]| {
        let model = Model {
            flops_per_s,
            ..Model::worked_examples()
        };
        sim(1, model, move |world: Comm| async move {
            for &n in flops {
                world.compute_flops(n).await;
            }
            Ok(())
        })
    };
    // 10⁹ flops/s: one ns per flop.
    let o = run(1_000_000_000, &[1234]);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![1234]);
    // 3·10⁹ flops/s: ceil(10/3) + ceil(3/3) + ceil(1/3) = 4 + 1 + 1.
    let o = run(3_000_000_000, &[10, 3, 1]);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![6]);
    assert_eq!(o.report.ranks[0].compute_ns, 6);
    // 3 flops/s: one flop is ceil(10⁹ / 3) ns.
    let o = run(3, &[1]);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![333_333_334]);
}

/// S4: a bsend request and an eager standard send count as complete at their posting time for
/// `test`, `wait_any`, `wait_some` and `wait_all`; the buffer bytes are released only at the
/// ack's `recv_ts` (5200 here): a bsend needing them at 5199 overflows, at 5200 fits.
#[test]
fn timing_s4_locally_complete_sends_for_test_and_the_wait_family() {
    let run = |last_at: u64| {
        sim(2, Model::worked_examples(), move |world: Comm| async move {
            if world.rank() == 0 {
                world.buffer_attach(128)?;
                let mut a = world.ibsend(&[0u8; 64], 1, 0)?;
                assert!(a.test().await?.is_some(), "a bsend is complete at once");
                let mut b = world.isend(&[0u8; 8], 1, 1)?;
                assert!(
                    b.test().await?.is_some(),
                    "an eager send is complete at once"
                );
                assert_eq!(world.now_ns(), 0, "those tests found: no poll cost");

                let mut buf = [0u8; 8];
                let mut pair = [
                    world.irecv(&mut buf, 1, 7)?,
                    world.ibsend(&[0u8; 32], 1, 2)?,
                ];
                let (i, _) = wait_any(&mut pair).await?.expect("one is active");
                assert_eq!((i, world.now_ns()), (1, 0), "wait_any takes the bsend at 0");
                let [recv, _] = pair;
                let mut pair = [recv, world.isend(&[0u8; 8], 1, 3)?];
                let done: Vec<usize> = wait_some(&mut pair).await?.iter().map(|d| d.0).collect();
                assert_eq!((done, world.now_ns()), (vec![1], 0), "wait_some at 0");
                let mut both = [
                    world.ibsend(&[0u8; 16], 1, 4)?,
                    world.isend(&[0u8; 8], 1, 5)?,
                ];
                wait_all(&mut both).await?;
                assert_eq!(world.now_ns(), 0, "wait_all over locally complete sends");
                // 64 + 32 + 16 = 112 of 128 bytes are held until the acks at 5200.
                world.compute(ns(last_at)).await;
                world.bsend(&[0u8; 128], 1, 6).await?;
                assert_eq!(world.now_ns(), last_at);
                let [recv, _] = pair;
                recv.wait().await?;
                assert_eq!(world.now_ns(), last_at, "arrived at 1000");
            } else {
                world.send(&[0u8; 8], 0, 7).await?;
                world.compute(ns(5000)).await;
                let mut buf = [0u8; 128];
                for tag in 0..6 {
                    world.recv(&mut buf, 0, tag).await?;
                }
                assert_eq!(world.now_ns(), 5000);
                // Not blocked in a receive when rank 0 overflows at 5199.
                world.compute(ns(300)).await;
                world.recv(&mut buf, 0, 6).await?;
            }
            Ok(())
        })
    };
    let o = run(5200);
    assert!(o.error.is_none(), "released at 5200: {:?}", o.error);
    assert_eq!(clocks(&o), vec![5200, 6200]);

    let o = run(5199);
    match &o.error {
        Some(Error::BufferOverflow {
            site,
            requested,
            attached,
            used,
        }) => {
            assert_eq!((*requested, *attached, *used), (128, 128, 112));
            assert_eq!((site.rank, site.time_ns), (0, Some(5199)));
        }
        other => panic!("the bytes are still held at 5199, got {other:?}"),
    }
}

/// What S5's program does with its three receives.
#[derive(Clone, Copy)]
enum S5 {
    WaitSome,
    WaitAny,
    TestSomeLate,
}

/// S5: receives from ranks 3 (arrival 1500), 2 and 1 (arrivals 1000), in that index order.
/// `wait_some` returns every request complete at `max(t, earliest completion)` in index order;
/// `wait_any` the lowest index among them.
#[test]
fn timing_s5_wait_some_returns_all_complete_in_index_order() {
    let run = |how: S5| {
        sim(4, Model::worked_examples(), move |world: Comm| async move {
            match world.rank() {
                0 => {
                    let (mut b3, mut b2, mut b1) = ([0u32], [0u32], [0u32]);
                    let mut reqs = [
                        world.irecv(&mut b3, 3, 0)?,
                        world.irecv(&mut b2, 2, 0)?,
                        world.irecv(&mut b1, 1, 0)?,
                    ];
                    let got = |d: Vec<(usize, mpsim::Status)>| {
                        d.iter().map(|(i, s)| (*i, s.source)).collect::<Vec<_>>()
                    };
                    match how {
                        S5::WaitSome => {
                            let first = got(wait_some(&mut reqs).await?);
                            assert_eq!((first, world.now_ns()), (vec![(1, 2), (2, 1)], 1000));
                            let next = got(wait_some(&mut reqs).await?);
                            assert_eq!((next, world.now_ns()), (vec![(0, 3)], 1500));
                            assert!(wait_some(&mut reqs).await?.is_empty(), "none active");
                        }
                        S5::WaitAny => {
                            let a = wait_any(&mut reqs).await?.map(|(i, s)| (i, s.source));
                            assert_eq!((a, world.now_ns()), (Some((1, 2)), 1000));
                            let b = wait_any(&mut reqs).await?.map(|(i, s)| (i, s.source));
                            assert_eq!((b, world.now_ns()), (Some((2, 1)), 1000));
                            let c = wait_any(&mut reqs).await?.map(|(i, s)| (i, s.source));
                            assert_eq!((c, world.now_ns()), (Some((0, 3)), 1500));
                            assert!(wait_any(&mut reqs).await?.is_none(), "none active");
                        }
                        S5::TestSomeLate => {
                            world.compute(ns(1200)).await;
                            let now = got(test_some(&mut reqs).await?.expect("active"));
                            assert_eq!((now, world.now_ns()), (vec![(1, 2), (2, 1)], 1200));
                            let next = got(wait_some(&mut reqs).await?);
                            assert_eq!((next, world.now_ns()), (vec![(0, 3)], 1500));
                        }
                    }
                }
                3 => {
                    world.compute(ns(500)).await;
                    world.send(&[3u32], 0, 0).await?;
                }
                r => world.send(&[r], 0, 0).await?,
            }
            Ok(())
        })
    };
    for how in [S5::WaitSome, S5::WaitAny, S5::TestSomeLate] {
        let o = run(how);
        assert!(o.error.is_none(), "{:?}", o.error);
        assert_eq!(clocks(&o), vec![1500, 0, 0, 500]);
    }
}

/// S6: a system buffer of 16 bytes (`bsend_overhead` 64 does not apply to it); ssend table
/// 3000 ns, bsend (eager) table 1000 ns. Two 8-byte eager sends fit; the third does not and
/// goes as ssend; the bytes come back at the acks (1200): a send at 1199 still does not fit, a
/// 16-byte one at 1200 does.
#[test]
fn timing_s6_system_buffer_overflow_sends_as_ssend() {
    let model = Model {
        ssend: DelayTable::constant(3000).expect("3000 > 0"),
        bsend: DelayTable::constant(1000).expect("1000 > 0"),
        bsend_overhead: BSEND_OVERHEAD,
        system_buffer: Some(16),
        ..Model::worked_examples()
    };
    assert_eq!(
        Model::default_machine().system_buffer,
        None,
        "capacity default: unbounded"
    );
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            let mut a = world.isend(&[0u8; 8], 1, 0)?;
            let mut b = world.isend(&[0u8; 8], 1, 1)?;
            assert!(a.test().await?.is_some() && b.test().await?.is_some());
            assert_eq!(world.now_ns(), 0, "both fit: complete at once");
            let mut c = world.isend(&[0u8; 8], 1, 2)?;
            assert!(c.test().await?.is_none(), "no room: an ssend");
            assert_eq!(world.now_ns(), 100);
            world.compute(ns(1099)).await;
            let e = world.isend(&[0u8; 8], 1, 3)?; // at 1199: a and b still hold 16 bytes
            world.compute(ns(1)).await;
            let mut f = world.isend(&[0u8; 16], 1, 4)?; // at 1200: released
            assert!(f.test().await?.is_some(), "fits at 1200");
            assert_eq!(world.now_ns(), 1200);
            c.wait().await?;
            assert_eq!(world.now_ns(), 3200, "ssend timing: 0 + 3000 + 200");
            e.wait().await?;
            assert_eq!(world.now_ns(), 4399, "ssend timing: 1199 + 3000 + 200");
        } else {
            let mut bufs = [[0u8; 16]; 5];
            let [b0, b1, b2, b3, b4] = &mut bufs;
            let reqs = [
                world.irecv(b0, 0, 0)?,
                world.irecv(b1, 0, 1)?,
                world.irecv(b2, 0, 2)?,
                world.irecv(b3, 0, 3)?,
                world.irecv(b4, 0, 4)?,
            ];
            let mut times = Vec::new();
            for r in reqs {
                r.wait().await?;
                times.push(world.now_ns());
            }
            // f (eager, 1200 + 1000) arrives behind e (4199) on the FIFO channel.
            assert_eq!(times, vec![1000, 1000, 3000, 4199, 4199]);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S6 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![4399, 4199]);
    // eager: a, b, f; rendezvous (as ssend): c, e.
    assert_eq!(o.report.ranks[0].sent.messages, [3, 0, 2, 0]);
}

/// S7: the overflow report: `requested = s + BSEND_OVERHEAD`, attached and used bytes, rank,
/// call and virtual time.
#[test]
fn timing_s7_overflow_report_fields() {
    let model = Model {
        bsend_overhead: BSEND_OVERHEAD,
        ..Model::worked_examples()
    };
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(200)?;
            world.bsend(&[0u8; 100], 1, 0).await?;
            world.compute(ns(300)).await;
            world.bsend(&[0u8; 10], 1, 1).await?;
        } else {
            world.compute(ns(1000)).await;
            world.recv(&mut [0u8; 100], 0, 0).await?;
            world.recv(&mut [0u8; 10], 0, 1).await?;
        }
        Ok(())
    });
    let Some(
        err @ Error::BufferOverflow {
            site,
            requested,
            attached,
            used,
        },
    ) = &o.error
    else {
        panic!("expected BufferOverflow, got {:?}", o.error);
    };
    assert_eq!(*requested, 10 + BSEND_OVERHEAD);
    assert_eq!((*attached, *used), (200, 100 + BSEND_OVERHEAD));
    assert_eq!(
        (site.rank, site.call, site.time_ns),
        (0, "bsend", Some(300))
    );
    assert_eq!(
        (site.peer, site.tag),
        (Some(Source::Rank(1)), Some(Tag::Value(1)))
    );
    let text = err.to_string();
    assert!(
        text.contains("74 bytes requested") && text.contains("200 attached"),
        "{text}"
    );
    assert!(
        text.contains("164 in use") && text.contains("t=300 ns"),
        "{text}"
    );
    assert_eq!(o.report.stopped.as_deref(), Some(text.as_str()));
    assert_eq!(clocks(&o), vec![300, 300], "S16: min(C[r], 300)");
}

/// S8: `buffer_detach` at `t` returns at `max(t, latest ack.recv_ts of the rank's buffered
/// messages)`: the first bsend's ack (3200) is the latest, not the last one's (1200).
#[test]
fn timing_s8_detach_waits_for_the_latest_ack() {
    let o = sim(3, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.buffer_attach(1000)?;
                world.bsend(&[0u8; 10], 1, 0).await?;
                world.bsend(&[0u8; 10], 2, 0).await?;
                assert_eq!(world.buffer_detach().await?, 1000);
                assert_eq!(world.now_ns(), 3200, "rank 1 received at 3000: ack 3200");
                world.buffer_attach(1000)?;
                world.bsend(&[0u8; 10], 2, 1).await?; // arrival 4200, ack 4400
                world.compute(ns(1800)).await;
                assert_eq!(world.buffer_detach().await?, 1000);
                assert_eq!(world.now_ns(), 5000, "max(5000, 4400)");
            }
            1 => {
                world.compute(ns(3000)).await;
                world.recv(&mut [0u8; 10], 0, 0).await?;
            }
            _ => {
                world.compute(ns(500)).await;
                world.recv(&mut [0u8; 10], 0, 0).await?;
                assert_eq!(world.now_ns(), 1000, "ack 1200");
                world.recv(&mut [0u8; 10], 0, 1).await?;
            }
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S8 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![5000, 3000, 4200]);
}

/// S8 for a buffered message that holds no bytes (zero bytes, no `BSEND_OVERHEAD` in the
/// worked examples' model): the detach still waits for its ack. It used to return at once,
/// as it waited for the buffer's bytes to come free rather than for its messages
/// (`timing_reference_model.rs` found it).
#[test]
fn timing_s8_detach_waits_for_a_zero_byte_bsend() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(100)?;
            world.bsend::<u8>(&[], 1, 0).await?;
            assert_eq!(world.now_ns(), 0, "a bsend returns at once");
            assert_eq!(world.buffer_detach().await?, 100);
            assert_eq!(world.now_ns(), 2200, "ack send_ts max(1000, 2000) + 200");
        } else {
            world.compute(ns(2000)).await;
            world.recv::<u8>(&mut [], 0, 0).await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S8 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![2200, 2000]);
}

/// S9: an ack arrives at exactly `send_ts + ACK_LATENCY`, even when a message on the same
/// channel (rank 1 → rank 0: 1024 bytes, arrival 9000) is still in flight.
#[test]
fn timing_s9_acks_are_not_held_behind_messages() {
    let o = sim(2, e4_model(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[0u8; 8], 1, 0).await?;
            assert_eq!(world.now_ns(), 1200, "ack at 1000 + 200, not behind 9000");
            world.recv(&mut [0u8; 1024], 1, 1).await?;
            assert_eq!(world.now_ns(), 9000);
        } else {
            let big = world.isend(&[0u8; 1024], 0, 1)?;
            world.recv(&mut [0u8; 8], 0, 0).await?;
            assert_eq!(world.now_ns(), 1000);
            big.wait().await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S9 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![9000, 1000]);
}

/// S10: an arrival at `t` is seen by a rank that resumes at `t` (deliveries come before
/// resumes); among arrivals at the same instant the lower-ranked sender's is seen first,
/// whatever the order in which they were created or the ranks spawned.
#[test]
fn timing_s10_arrivals_at_t_are_seen_at_t_and_ties_go_to_the_lower_sender() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 0).await?;
            world.send(&[2u8; 8], 1, 1).await?;
        } else {
            let mut buf = [0u8; 8];
            let mut r = world.irecv(&mut buf, 0, 0)?;
            world.compute(ns(1000)).await;
            assert!(r.test().await?.is_some(), "arrived at 1000, seen at 1000");
            let found = world.iprobe(0, 1).await?;
            assert!(found.is_some(), "iprobe at 1000 sees arrival <= 1000");
            assert_eq!(world.now_ns(), 1000);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![0, 1000]);
    assert_eq!(
        o.report.ranks[1].poll_ns,
        Some(0),
        "nothing was polled in vain"
    );

    // Delay 1000 + s ns: rank 3's 500 bytes at 0 and rank 2's 0 bytes at 500 both arrive at
    // 1500; rank 3's was made first in virtual (and host) time.
    let table = DelayTable::new("linear", vec![(0, 1000), (1000, 2000)]).expect("valid");
    let model = Model {
        ssend: table.clone(),
        bsend: table,
        ..Model::worked_examples()
    };
    for order in [vec![0, 1, 2, 3], vec![3, 2, 1, 0]] {
        let o = Launcher::new(4)
            .model(model.clone())
            .spawn_order(order.clone())
            .simulate(|world: Comm| async move {
                match world.rank() {
                    1 => {
                        let mut buf = [0u8; 500];
                        let a = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((a.source, a.bytes, world.now_ns()), (2, 0, 1500));
                        let b = world.recv(&mut buf, Source::Any, Tag::Any).await?;
                        assert_eq!((b.source, b.bytes, world.now_ns()), (3, 500, 1500));
                    }
                    2 => {
                        world.compute(ns(500)).await;
                        world.send::<u8>(&[], 1, 0).await?;
                    }
                    3 => world.send(&[0u8; 500], 1, 0).await?,
                    _ => {}
                }
                Ok(())
            });
        assert!(o.error.is_none(), "order {order:?}: {:?}", o.error);
        assert_eq!(clocks(&o), vec![0, 1500, 500, 0], "order {order:?}");
    }
}

/// S11: a truncated receive completes at `max(m.arrival, req.ts)` with `Truncate` (both sizes,
/// the first bytes written); the sender's ack goes back as usual.
#[test]
fn timing_s11_truncation_completes_at_max_arrival_req_ts_and_acks_as_usual() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u8; 16], 1, 0).await?;
            assert_eq!(world.now_ns(), 3200, "late receiver: ack from 3000");
            world.ssend(&[8u8; 16], 1, 1).await?;
            assert_eq!(world.now_ns(), 4400, "early receiver: ack from 4200");
        } else {
            world.compute(ns(3000)).await;
            let mut buf = [0u8; 8];
            let err = world
                .recv(&mut buf, 0, 0)
                .await
                .expect_err("16 bytes into 8");
            let Error::Truncate {
                message_bytes,
                buffer_bytes,
                ..
            } = err
            else {
                panic!("expected Truncate, got {err}");
            };
            assert_eq!((message_bytes, buffer_bytes, buf), (16, 8, [7; 8]));
            assert_eq!(world.now_ns(), 3000, "max(1000, 3000)");
            let err = world
                .recv(&mut buf, 0, 1)
                .await
                .expect_err("16 bytes into 8");
            assert!(matches!(err, Error::Truncate { .. }), "{err}");
            assert_eq!((buf, world.now_ns()), ([8; 8], 4200), "max(4200, 3000)");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S11 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![4400, 4200]);
}

/// S12 (cancel), as amended by D1 (`docs/extensions.md`): cancelling a receive is
/// decided at the caller's `t` and takes 0 ns; cancelling a send asks its receiver, like an ack
/// (`ACK_LATENCY` each way, behind the channel's messages): an arrived, unmatched send is
/// cancelled there, and the send's wait returns with the answer, 2 x 200 ns later; a send
/// already matched is not cancelled, and its wait returns at once.
#[test]
fn timing_s12_cancel_of_a_receive_is_local_and_of_a_send_asks_the_receiver() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            let mut buf = [0u8; 8];
            let mut r = world.irecv(&mut buf, 1, 9)?;
            world.compute(ns(500)).await;
            r.cancel()?;
            assert_eq!(world.now_ns(), 500, "cancel takes no time");
            let status = r.wait().await?;
            assert!(status.cancelled, "an unmatched receive is cancelled");
            assert_eq!(world.now_ns(), 500);

            let mut s = world.issend(&[1u8; 8], 1, 1)?; // arrival 1500, never received
            world.compute(ns(1500)).await;
            s.cancel()?;
            assert_eq!(world.now_ns(), 2000, "the call takes no time");
            let status = s.wait().await?;
            assert!(status.cancelled, "an unmatched send is cancelled");
            assert_eq!(
                world.now_ns(),
                2400,
                "decided at the receiver at 2200, answer at 2400"
            );

            let mut m = world.issend(&[2u8; 8], 1, 2)?; // matched at 3400, ack 3600
            world.compute(ns(2000)).await;
            m.cancel()?;
            let status = m.wait().await?;
            assert!(!status.cancelled, "a matched send completes normally");
            assert_eq!(world.now_ns(), 4400);
        } else {
            let mut buf = [0u8; 8];
            world.recv(&mut buf, 0, 2).await?;
            assert_eq!((buf, world.now_ns()), ([2; 8], 3400));
            world.compute(ns(3000)).await;
            assert!(
                world.iprobe(0, 1).await?.is_none(),
                "the cancelled message is gone"
            );
        }
        Ok(())
    });
    assert!(
        o.error.is_none(),
        "S12 cancel program must succeed: {:?}",
        o.error
    );
    assert_eq!(clocks(&o), vec![4400, 6500]);
    assert!(o.report.warnings.is_empty(), "{:?}", o.report.warnings);
}

/// S12 (matched probe): rank 0 `ssend`s at 0 (arrival 1000); rank 1 `improbe`s at 3000 and
/// `mrecv`s at 4000. The probe is the match: the ack leaves at `max(1000, 3000)` and rank 0's
/// ssend ends at 3200, not 4200; the `mrecv` completes at once.
#[test]
fn timing_s12_matched_probe_is_the_match() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[5u8; 8], 1, 3).await?;
            assert_eq!(world.now_ns(), 3200, "ack send_ts = max(1000, 3000)");
        } else {
            world.compute(ns(3000)).await;
            let message = world.improbe(0, 3).await?.expect("arrived at 1000");
            let status = message.status();
            assert_eq!((status.source, status.tag, status.bytes), (0, 3, 8));
            assert_eq!(world.now_ns(), 3000, "an improbe that finds takes no time");
            world.compute(ns(1000)).await;
            let mut buf = [0u8; 8];
            message.mrecv(&mut buf).await?;
            assert_eq!(
                (buf, world.now_ns()),
                ([5; 8], 4000),
                "mrecv completes at once"
            );
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S12 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![3200, 4000]);
}

/// S13 (strict): an rsend whose receive was posted before it (at 0 ≤ send_ts 500) delivers and
/// behaves as ssend; one with no receive posted at its arrival (1500) stops the run with
/// `ReadyNotPosted` at 1500 (S16: clocks min(C, 1500)).
#[test]
fn timing_s13_strict_rsend_delivers_when_posted_and_fails_when_not() {
    let strict = |ranks| {
        Launcher::new(ranks)
            .model(Model::worked_examples())
            .strict(true)
    };
    let o = strict(2).simulate(|world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(500)).await;
            world.rsend(&[1u8; 8], 1, 0).await?;
            assert_eq!(world.now_ns(), 1700, "as ssend: arrival 1500, ack 1700");
        } else {
            world.recv(&mut [0u8; 8], 0, 0).await?;
            assert_eq!(world.now_ns(), 1500);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "posted in time: {:?}", o.error);
    assert_eq!(clocks(&o), vec![1700, 1500]);

    let o = strict(2).simulate(|world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(500)).await;
            drop(world.irsend(&[1u8; 8], 1, 0)?); // completes in the background
            world.compute(ns(5000)).await;
        } else {
            world.compute(ns(2000)).await;
            world.recv(&mut [0u8; 8], 0, 0).await?;
        }
        Ok(())
    });
    match &o.error {
        Some(Error::ReadyNotPosted { site, receiver }) => {
            assert_eq!((site.rank, site.call, *receiver), (0, "rsend", 1));
            assert_eq!(site.time_ns, Some(1500), "decided at the arrival");
        }
        other => panic!("expected ReadyNotPosted, got {other:?}"),
    }
    assert_eq!(clocks(&o), vec![1500, 1500]);
}

/// S14: finalize does not move the clock and does not wait for the acks of locally complete
/// sends; a message nobody received is a warning naming destination, source and tag; a
/// request never waited for is `PendingAtExit` at the rank's final clock.
#[test]
fn timing_s14_end_of_rank() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(64)?;
            world.bsend(&[0u8; 8], 1, 0).await?; // ack at 5200
            world.send(&[0u8; 8], 1, 9).await?; // never received
        } else {
            world.compute(ns(5000)).await;
            world.recv(&mut [0u8; 8], 0, 0).await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(
        clocks(&o),
        vec![0, 5000],
        "rank 0 ends at 0, not at its ack"
    );
    assert_eq!(o.report.warnings.len(), 1, "{:?}", o.report.warnings);
    let w = &o.report.warnings[0];
    assert!(
        w.contains("from rank 0") && w.contains("to rank 1") && w.contains("tag 9"),
        "{w}"
    );

    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(300)).await;
            let mut buf = [0u8; 8];
            std::mem::forget(world.irecv(&mut buf, 1, 3)?);
            std::mem::forget(world.issend(&[0u8; 8], 1, 4)?);
        } else {
            world.compute(ns(1000)).await;
        }
        Ok(())
    });
    match &o.error {
        Some(Error::PendingAtExit {
            rank,
            time_ns,
            requests,
        }) => {
            assert_eq!((*rank, *time_ns), (0, Some(300)));
            let expected = vec![
                PendingRequest {
                    call: "irecv",
                    peer: Source::Rank(1),
                    tag: Tag::Value(3),
                },
                PendingRequest {
                    call: "issend",
                    peer: Source::Rank(1),
                    tag: Tag::Value(4),
                },
            ];
            assert_eq!(requests, &expected);
            assert!(
                o.error.as_ref().is_some_and(|e| e
                    .to_string()
                    .starts_with("rank 0 finished at t=300 ns with 2 active request(s)")),
                "{:?}",
                o.error
            );
        }
        other => panic!("expected PendingAtExit, got {other:?}"),
    }
    assert_eq!(clocks(&o), vec![300, 300]);
}

/// S15: a deadlock report lists each blocked rank's call, its first incomplete request (call,
/// peer, tag, comm) and the clock at which it blocked; wildcard receives have no wait-for edge;
/// the cycle is the one through the lowest rank on a cycle, written from it.
#[test]
fn timing_s15_deadlock_report_lists_blocked_ranks_and_the_cycle() {
    let o = sim(4, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.recv(&mut [0u8], Source::Any, 7).await?;
            }
            1 => {
                world.compute(ns(200)).await;
                world.recv(&mut [0u8], 3, 1).await?;
            }
            2 => {
                world.compute(ns(100)).await;
                world.recv(&mut [0u8], 1, 2).await?;
            }
            _ => world.ssend(&[0u8], 2, 3).await?,
        }
        Ok(())
    });
    let Some(Error::Deadlock { report }) = &o.error else {
        panic!("expected a deadlock, got {:?}", o.error);
    };
    let report = report.to_string();
    for line in [
        "rank 0 blocked in recv since t=0 ns, waiting for recv (peer ANY_SOURCE, tag 7, context 0)",
        "rank 1 blocked in recv since t=200 ns, waiting for recv (peer 3, tag 1, context 0)",
        "rank 2 blocked in recv since t=100 ns, waiting for recv (peer 1, tag 2, context 0)",
        "rank 3 blocked in ssend since t=0 ns, waiting for ssend (peer 2, tag 3, context 0)",
    ] {
        assert!(report.contains(line), "missing `{line}` in: {report}");
    }
    assert!(report.ends_with("cycle 1 → 3 → 2 → 1"), "{report}");
    assert_eq!(clocks(&o), vec![0, 200, 100, 0]);
}

/// S16 as amended by D2 (`docs/extensions.md`): rank 0's overflow at 2000 (a
/// resume, class 1, creator 0) stops the run one lookahead after it, at 2200 (L = 200): rank
/// 4's resume at 2000 (after it by key) and rank 5's at 2199 still run and send; rank 1's at
/// 2200 does not. Every clock is reported as `min(C[r], 2000)`.
#[test]
fn timing_s16_a_stopped_run_reports_clocks_capped_at_the_stop() {
    let o = sim(6, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.buffer_attach(16)?;
                world.compute(ns(2000)).await;
                world.bsend(&[0u8; 32], 1, 0).await?;
            }
            1 => {
                world.compute(ns(2200)).await;
                world.send(&[0u8; 8], 2, 7).await?;
            }
            2 => {
                world.recv(&mut [0u8; 8], 3, 0).await?;
                assert_eq!(world.now_ns(), 1500);
                world.recv(&mut [0u8; 8], 0, 5).await?; // never
            }
            3 => {
                world.compute(ns(500)).await;
                world.ssend(&[0u8; 8], 2, 0).await?;
                assert_eq!(world.now_ns(), 1700);
                world.compute(ns(10_000)).await;
            }
            4 => {
                world.compute(ns(2000)).await;
                world.send(&[0u8; 8], 2, 9).await?;
            }
            _ => {
                world.compute(ns(1000)).await;
                world.send(&[0u8; 8], 2, 8).await?;
                world.compute(ns(1199)).await;
                world.send(&[0u8; 8], 2, 8).await?;
            }
        }
        Ok(())
    });
    match &o.error {
        Some(Error::BufferOverflow { site, .. }) => {
            assert_eq!((site.rank, site.time_ns), (0, Some(2000)));
        }
        other => panic!("expected the overflow at 2000, got {other:?}"),
    }
    assert_eq!(clocks(&o), vec![2000, 2000, 1500, 2000, 2000, 2000]);
    // Two messages reached rank 2 by the stop: rank 3's at 1500, which its receive took, and
    // rank 5's at 2000 (class 0), which none took.
    let received: u64 = o.report.ranks[2].received.messages.iter().sum();
    assert_eq!(received, 1, "rank 3's at 1500, taken by its receive");
    let unreceived: u64 = o.report.ranks[2].unreceived.messages.iter().sum();
    assert_eq!(unreceived, 1, "rank 5's at 2000 (class 0), taken by none");
    let sent = |r: usize| -> u64 { o.report.ranks[r].sent.messages.iter().sum() };
    assert_eq!(
        sent(4),
        1,
        "rank 4's resume at 2000 is before the stop's end"
    );
    assert_eq!(
        sent(5),
        2,
        "rank 5's resume at 2199 is before the stop's end"
    );
    assert_eq!(sent(1), 0, "rank 1's resume at 2200 is not");
}

/// S16 as amended by D2: the stop ends one lookahead after the error's event, not at the end
/// of a window counted from an earlier event. Rank 1's resume at 1000 comes first; rank 0's
/// overflow at 1100 stops the run at 1100 + L = 1300 (L = 200): rank 1's resume at 1299
/// still runs and sends, rank 2's at 1300 does not.
#[test]
fn timing_s16_a_stop_ends_one_lookahead_after_the_errors_event() {
    let o = sim(4, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => {
                world.buffer_attach(16)?;
                world.compute(ns(1100)).await;
                world.bsend(&[0u8; 32], 3, 0).await?;
            }
            1 => {
                world.compute(ns(1000)).await;
                world.compute(ns(299)).await;
                world.send(&[0u8; 8], 3, 1).await?;
            }
            2 => {
                world.compute(ns(1300)).await;
                world.send(&[0u8; 8], 3, 2).await?;
            }
            _ => world.recv(&mut [0u8; 8], 0, 9).await.map(drop)?,
        }
        Ok(())
    });
    match &o.error {
        Some(Error::BufferOverflow { site, .. }) => {
            assert_eq!((site.rank, site.time_ns), (0, Some(1100)));
        }
        other => panic!("expected the overflow at 1100, got {other:?}"),
    }
    let sent = |r: usize| -> u64 { o.report.ranks[r].sent.messages.iter().sum() };
    assert_eq!(sent(1), 1, "rank 1's resume at 1299 is before 1300");
    assert_eq!(sent(2), 0, "rank 2's resume at 1300 is not");
    assert_eq!(clocks(&o), vec![1100, 1100, 1100, 0]);
}

/// S17 (E4-like): the 8-byte message's raw `recv_ts` is 1000, but it arrives behind the
/// 1024-byte one at 9000; a receive for it (another tag, posted at 0) ends at 9000 and the ack
/// leaves at 9000, not 1000.
#[test]
fn timing_s17_receive_and_ack_timed_from_the_fifo_arrival() {
    let o = sim(2, e4_model(), |world: Comm| async move {
        if world.rank() == 0 {
            let big = world.issend(&[0u8; 1024], 1, 5)?;
            let small = world.issend(&[0u8; 8], 1, 6)?;
            small.wait().await?;
            assert_eq!(world.now_ns(), 9200, "ack from the FIFO arrival 9000");
            big.wait().await?;
            assert_eq!(world.now_ns(), 9200);
        } else {
            world.recv(&mut [0u8; 8], 0, 6).await?;
            assert_eq!(world.now_ns(), 9000, "the small one arrives at 9000");
            world.recv(&mut [0u8; 1024], 0, 5).await?;
            assert_eq!(world.now_ns(), 9000);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "S17 program must succeed: {:?}", o.error);
    assert_eq!(clocks(&o), vec![9200, 9000]);
}

// FAILING against the current implementation:

/// S1 / §5: `probe` blocks like a receive: `C[r] = max(C[r], m.arrival)`, with no poll cost
/// (it is not an `iprobe`).
#[test]
fn timing_s1_probe_returns_at_the_arrival() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(50)).await;
            world.send(&[0u8; 8], 1, 0).await?; // arrival 1050
        } else {
            let status = world.probe(0, 0).await?;
            assert_eq!(status.bytes, 8);
            assert_eq!(world.now_ns(), 1050, "probe returns at the arrival");
            world.recv(&mut [0u8; 8], 0, 0).await?;
            assert_eq!(world.now_ns(), 1050);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![50, 1050]);
    assert_eq!(
        o.report.ranks[1].poll_ns,
        Some(0),
        "a blocking probe is not a poll"
    );
}

/// S7 / §3.2: on an overflow "the whole simulation stops", also when the program handles the
/// error and goes on.
#[test]
fn timing_s7_overflow_stops_the_run_even_if_the_program_goes_on() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(16)?;
            world.compute(ns(300)).await;
            let err = world.bsend(&[0u8; 32], 1, 0).await.expect_err("32 > 16");
            assert!(matches!(err, Error::BufferOverflow { .. }), "{err}");
            world.compute(ns(1000)).await;
        } else {
            world.compute(ns(2000)).await;
        }
        Ok(())
    });
    match &o.error {
        Some(Error::BufferOverflow {
            site,
            requested,
            attached,
            used,
        }) => {
            assert_eq!((*requested, *attached, *used), (32, 16, 0));
            assert_eq!((site.rank, site.time_ns), (0, Some(300)));
        }
        other => panic!(
            "the run must stop at the overflow, got {other:?} (clocks {:?})",
            clocks(&o)
        ),
    }
    assert_eq!(clocks(&o), vec![300, 300]);
}

/// S11: the `Truncate` error carries the time the receive completed.
#[test]
fn timing_s11_truncation_error_carries_its_time() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u8; 16], 1, 0).await?;
        } else {
            world.compute(ns(3000)).await;
            let err = world
                .recv(&mut [0u8; 8], 0, 0)
                .await
                .expect_err("16 bytes into 8");
            let Error::Truncate { site, .. } = &err else {
                panic!("expected Truncate, got {err}");
            };
            assert_eq!(site.time_ns, Some(3000), "{err}");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![3200, 3000]);
}

/// S12: a blocking `mprobe` called at 0 takes the message at its arrival (1050): the call
/// returns at 1050 and the ack's `send_ts = max(1050, 0)`, so rank 0's ssend ends at 1250.
#[test]
fn timing_s12_blocking_mprobe_matches_at_the_arrival() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(50)).await;
            world.ssend(&[5u8; 8], 1, 3).await?;
            assert_eq!(world.now_ns(), 1250, "ack send_ts = max(1050, 0)");
        } else {
            let message = world.mprobe(0, 3).await?;
            assert_eq!(world.now_ns(), 1050, "mprobe returns at the arrival");
            message.mrecv(&mut [0u8; 8]).await?;
            assert_eq!(world.now_ns(), 1050);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![1250, 1050]);
}

/// S13: a receive posted after the rsend left (700 > send_ts 500), though before its arrival
/// (1500), does not make it ready: `ReadyNotPosted` at 1500. The run stops one lookahead
/// later, at 1700 (S16 as amended by D2): the receive has taken the message at 1500 by then.
#[test]
fn timing_s13_strict_rsend_receive_posted_after_the_send_is_not_ready() {
    let o = Launcher::new(2)
        .model(Model::worked_examples())
        .strict(true)
        .simulate(|world: Comm| async move {
            if world.rank() == 0 {
                world.compute(ns(500)).await;
                drop(world.irsend(&[1u8; 8], 1, 0)?);
                world.compute(ns(5000)).await;
            } else {
                world.compute(ns(700)).await;
                world.recv(&mut [0u8; 8], 0, 0).await?;
            }
            Ok(())
        });
    match &o.error {
        Some(Error::ReadyNotPosted { site, receiver }) => {
            assert_eq!((site.rank, site.call, *receiver), (0, "rsend", 1));
            assert_eq!(site.time_ns, Some(1500));
        }
        other => panic!(
            "expected ReadyNotPosted (req.ts 700 > send_ts 500), got {other:?} (clocks {:?})",
            clocks(&o)
        ),
    }
    assert_eq!(clocks(&o), vec![1500, 1500]);
}

/// S15: the user call of a rank blocked in `wait_all` is `wait_all`, and the request named is
/// its first incomplete one.
#[test]
fn timing_s15_deadlock_report_names_wait_all_and_its_first_incomplete_request() {
    let o = sim(2, Model::worked_examples(), |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(ns(1000)).await;
            let (mut a, mut b) = ([0u8], [0u8]);
            let mut reqs = [world.irecv(&mut a, 1, 6)?, world.irecv(&mut b, 1, 7)?];
            wait_all(&mut reqs).await?;
        } else {
            world.send(&[6u8], 0, 6).await?;
            world.compute(ns(1000)).await;
            world.recv(&mut [0u8], 0, 9).await?;
        }
        Ok(())
    });
    let Some(Error::Deadlock { report }) = &o.error else {
        panic!("expected a deadlock, got {:?}", o.error);
    };
    let report = report.to_string();
    assert!(
        report.contains(
            "rank 0 blocked in wait_all since t=1000 ns, waiting for recv (peer 1, tag 7, \
             context 0)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rank 1 blocked in recv since t=1000 ns, waiting for recv (peer 0, tag 9, context 0)"
        ),
        "{report}"
    );
    assert!(report.ends_with("cycle 0 → 1 → 0"), "{report}");
}
