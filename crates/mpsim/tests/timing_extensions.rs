//! The timing extensions X1–X3 of `docs/extensions.md`, one test (at least) per
//! extension, named `timing_xN_...`, each asserting the exact virtual times the extension
//! implies. Models are `Model::worked_examples()` (every delay 1000 ns, ack 200 ns) with a
//! `[cpu]` part set here; with the default `[cpu]` (nothing charged, unlimited cores) every
//! worked example and settled detail of `docs/timing.md` holds unchanged (their own tests run
//! on that default).

mod common;

use std::future::Future;
use std::time::Duration;

use mpsim::sim::{ComputeMode, CpuModel, Model, Outcome};
use mpsim::{Comm, Launcher, wait_all};

/// Simulates `program` on `ranks` ranks of `model`.
fn sim<F, Fut>(ranks: u32, model: Model, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let o = common::simulate_all_ways(Launcher::new(ranks).model(model), ranks, program);
    assert!(o.error.is_none(), "the run failed: {:?}", o.error);
    o
}

/// The final virtual clock of every rank.
fn clocks(o: &Outcome) -> Vec<u64> {
    o.report.ranks.iter().map(|r| r.clock_ns).collect()
}

/// The worked examples' model with `cpu`.
fn with_cpu(cpu: CpuModel) -> Model {
    Model {
        cpu,
        ..Model::worked_examples()
    }
}

/// X1: 50 ns per send request, 30 ns per receive request.
fn x1_model() -> Model {
    with_cpu(CpuModel {
        send_overhead_ns: 50,
        recv_overhead_ns: 30,
        ..CpuModel::default()
    })
}

/// An 8-byte token once around all ranks by blocking standard sends, from rank 0.
async fn token_ring(world: Comm) -> mpsim::Result<()> {
    let (me, n) = (world.rank(), world.size());
    let mut token = [0u8; 8];
    if me == 0 {
        world.send(&token, 1, 0).await?;
        world.recv(&mut token, n - 1, 0).await?;
    } else {
        world.recv(&mut token, me - 1, 0).await?;
        world.send(&token, (me + 1) % n, 0).await?;
    }
    Ok(())
}

/// X1: each nonblocking send costs its caller `send_overhead` before the message leaves, each
/// nonblocking receive `recv_overhead` before it is posted, so a burst of sends leaves one
/// overhead apart and the caller's clock moves by the sum.
#[test]
fn timing_x1_send_overhead_spaces_a_burst_of_requests() {
    let o = sim(2, x1_model(), |world: Comm| async move {
        if world.rank() == 0 {
            let mut reqs = [world.isend(&[1u8; 8], 1, 0)?, world.isend(&[2u8; 8], 1, 1)?];
            assert_eq!(world.now_ns(), 100, "two sends, 50 ns each");
            wait_all(&mut reqs).await?;
            assert_eq!(world.now_ns(), 100, "eager sends are complete at once");
        } else {
            let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
            let mut reqs = [world.irecv(&mut a, 0, 0)?, world.irecv(&mut b, 0, 1)?];
            assert_eq!(world.now_ns(), 60, "two receives, 30 ns each");
            wait_all(&mut reqs).await?;
            assert_eq!(
                world.now_ns(),
                1100,
                "left at 50 and 100, arrived 1000 later"
            );
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![100, 1100]);
}

/// X1: blocking calls post no request the program sees and pay no overhead (their cost is in
/// the delay tables); `sendrecv` is `irecv` + `isend` + `wait_all` (`timing.md` §2) and pays
/// both.
#[test]
fn timing_x1_send_overhead_is_per_request_not_per_blocking_call() {
    let o = sim(2, x1_model(), |world: Comm| async move {
        let mut buf = [0u8; 8];
        let peer = 1 - world.rank();
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 0).await?;
            world.recv(&mut buf, 1, 0).await?;
        } else {
            world.recv(&mut buf, 0, 0).await?;
            world.send(&buf, 0, 0).await?;
        }
        assert_eq!(world.now_ns(), 2000 - 1000 * world.rank() as u64);
        let out = [7u8; 8];
        world.sendrecv(&out, peer, 1, &mut buf, peer, 1).await?;
        Ok(())
    });
    // Rank 1 enters sendrecv at 1000, rank 0 at 2000; each sends at entry + 30 + 50.
    assert_eq!(clocks(&o), vec![2080, 3080]);
}

/// X1: overhead still owed when a rank blocks is CPU work before the wait, so it overlaps the
/// wait instead of adding to it.
#[test]
fn timing_x1_send_overhead_overlaps_a_later_wait() {
    let o = sim(2, x1_model(), |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            let req = world.isend(&[1u8; 8], 1, 0)?;
            // Blocks at 50 (the send's overhead first); the answer leaves rank 1 at
            // 2000 + 30 + 50 and arrives at 3080.
            world.recv(&mut buf, 1, 0).await?;
            assert_eq!(world.now_ns(), 3080);
            req.wait().await?;
        } else {
            world.compute(Duration::from_nanos(2000)).await;
            // The message arrived at 1050: the receive finds it, after its own 30 ns.
            world.irecv(&mut buf, 0, 0)?.wait().await?;
            assert_eq!(world.now_ns(), 2030);
            world.isend(&buf, 0, 0)?.wait().await?;
            assert_eq!(world.now_ns(), 2080);
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![3080, 2080]);
}

/// X1 with §3's ack rule: a receive posted by a rank that owes overhead takes effect when it
/// is posted, after the overhead, and a message that arrives meanwhile is acknowledged then:
/// `ack.send_ts = max(m.arrival, req.ts)`. The ack used to leave at the arrival, before the
/// receive existed (`timing_reference_model.rs` found it).
#[test]
fn timing_x1_an_ack_leaves_when_the_owed_receive_is_posted() {
    let model = with_cpu(CpuModel {
        recv_overhead_ns: 500,
        ..CpuModel::default()
    });
    let o = sim(2, model, |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            // Arrives at 1000; the receive takes effect at 800 + 500.
            world.ssend(&[1u8; 8], 1, 0).await?;
            assert_eq!(world.now_ns(), 1500, "ack max(1000, 1300) + 200");
        } else {
            world.compute(Duration::from_nanos(800)).await;
            let req = world.irecv(&mut buf, 0, 0)?;
            assert_eq!(world.now_ns(), 1300);
            req.wait().await?;
            assert_eq!(world.now_ns(), 1300, "the message came at 1000");
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![1500, 1300]);
}

/// X1 with `wait_any`: a rank whose requests are not complete puts the overhead it owes on its
/// clock before it blocks, and looks at its requests once more in the same poll (a wake-up
/// could otherwise be lost), from its new clock. That look failed the simulator's check that
/// a rank calls only at the global time (a debug assertion, so the test suite aborted).
#[test]
fn timing_x1_a_wait_any_that_pays_overhead_looks_again() {
    let model = with_cpu(CpuModel {
        send_overhead_ns: 250,
        ..CpuModel::default()
    });
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            let mut reqs = [world.issend(&[1u8; 8], 1, 0)?];
            assert_eq!(world.now_ns(), 250);
            let done = mpsim::wait_any(&mut reqs).await?;
            assert_eq!(done.map(|(i, _)| i), Some(0));
            assert_eq!(world.now_ns(), 1450, "sent at 250, arrived 1250, ack 1450");
        } else {
            world.recv(&mut [0u8; 8], 0, 0).await?;
            assert_eq!(world.now_ns(), 1250);
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![1450, 1250]);
}

/// X2: with more ranks than cores, a rank blocked when its message arrives resumes
/// `wake_latency` later; one that has not blocked yet pays nothing.
#[test]
fn timing_x2_oversubscribed_blocked_ranks_wake_late() {
    let cpu = |cores| CpuModel {
        cores: Some(cores),
        wake_latency_ns: 500,
        ..CpuModel::default()
    };
    // 3 ranks on 2 cores: every hop is 1000 ns + 500 ns of wake-up.
    assert_eq!(
        clocks(&sim(3, with_cpu(cpu(2)), token_ring)),
        vec![4500, 1500, 3000]
    );
    // 3 ranks on 3 cores: not oversubscribed, nothing changes.
    assert_eq!(
        clocks(&sim(3, with_cpu(cpu(3)), token_ring)),
        vec![3000, 1000, 2000]
    );
    // A receiver that comes late finds its message and does not block.
    let o = sim(3, with_cpu(cpu(2)), |world: Comm| async move {
        let mut buf = [0u8; 8];
        match world.rank() {
            0 => world.send(&buf, 1, 0).await?,
            1 => {
                world.compute(Duration::from_nanos(5000)).await;
                world.recv(&mut buf, 0, 0).await?;
                assert_eq!(world.now_ns(), 5000);
            }
            _ => {}
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![0, 5000, 0]);
}

/// X2 hand-over: under measured compute, a rank that resumes from a wait on an
/// oversubscribed run owes a hand-over from each other rank of the busiest core before it
/// acts (3 ranks on 2 cores: one); under modeled compute, nothing. (Measured stretches are
/// made 0 by a `measure_overhead` longer than any of them, so the times are exact.)
#[test]
fn timing_x2_oversubscribed_measured_ranks_wait_for_a_handover() {
    let model = |compute, cores| Model {
        compute,
        ..with_cpu(CpuModel {
            cores: Some(cores),
            wake_latency_ns: 500,
            handover_ns: 300,
            measure_overhead_ns: 10_000_000_000,
            ..CpuModel::default()
        })
    };
    // Every hop: 1000 ns + 500 ns of wake-up + 300 ns of hand-over before the next send.
    assert_eq!(
        clocks(&sim(3, model(ComputeMode::Measured, 2), token_ring)),
        vec![5400, 1800, 3600]
    );
    // 5 ranks on 2 cores: two core mates, two hand-overs per resume.
    assert_eq!(
        clocks(&sim(5, model(ComputeMode::Measured, 2), token_ring)),
        vec![5 * 2100, 2100, 2 * 2100, 3 * 2100, 4 * 2100]
    );
    // Pure communication, or a core per rank: no hand-over.
    assert_eq!(
        clocks(&sim(3, model(ComputeMode::Modeled, 2), token_ring)),
        vec![4500, 1500, 3000]
    );
    assert_eq!(
        clocks(&sim(3, model(ComputeMode::Measured, 3), token_ring)),
        vec![3000, 1000, 2000]
    );
}

/// X1 with X2: request overhead is CPU work, shared like measured compute: on an
/// oversubscribed run each request costs `ceil(ranks / cores)` times its overhead (5 ranks on
/// 2 cores: 3 times).
#[test]
fn timing_x2_oversubscribed_request_overhead_is_shared_like_compute() {
    let burst = |world: Comm| async move {
        match world.rank() {
            0 => {
                let mut reqs = [world.isend(&[1u8; 8], 1, 0)?, world.isend(&[2u8; 8], 1, 1)?];
                wait_all(&mut reqs).await?;
            }
            1 => {
                let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
                let mut reqs = [world.irecv(&mut a, 0, 0)?, world.irecv(&mut b, 0, 1)?];
                wait_all(&mut reqs).await?;
            }
            _ => {}
        }
        Ok(())
    };
    let model = |cores| {
        with_cpu(CpuModel {
            cores: Some(cores),
            ..x1_model().cpu
        })
    };
    // Sends leave at 150 and 300 (50 ns x 3 each); the receives are posted by 180 (30 x 3 x 2),
    // before the messages arrive at 1150 and 1300.
    assert_eq!(clocks(&sim(5, model(2), burst)), vec![300, 1300, 0, 0, 0]);
    // 5 ranks on 5 cores: the overheads of X1 alone (100, then arrivals at 1050 and 1100).
    assert_eq!(clocks(&sim(5, model(5), burst)), vec![100, 1100, 0, 0, 0]);
}

/// X2: every message that reaches a blocked rank wakes it; a completion during a wake-up
/// under way resumes the rank when that wake-up ends, a later one takes a wake-up of its own.
#[test]
fn timing_x2_oversubscribed_each_arrival_wakes_a_blocked_rank() {
    let model = with_cpu(CpuModel {
        cores: Some(2),
        wake_latency_ns: 500,
        ..CpuModel::default()
    });
    // Rank 2 sends `late` ns after rank 0 (both arrive 1000 ns after they leave).
    let gather = |late: u64| {
        move |world: Comm| async move {
            match world.rank() {
                0 => world.send(&[1u8; 8], 1, 0).await?,
                2 => {
                    world.compute(Duration::from_nanos(late)).await;
                    world.send(&[2u8; 8], 1, 0).await?;
                }
                _ => {
                    let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
                    let mut reqs = [world.irecv(&mut a, 0, 0)?, world.irecv(&mut b, 2, 0)?];
                    wait_all(&mut reqs).await?;
                }
            }
            Ok(())
        }
    };
    // Arrivals at 1000 and 1200: the second comes while the first wake-up (to 1500) is under
    // way.
    assert_eq!(clocks(&sim(3, model.clone(), gather(200)))[1], 1500);
    // Arrivals at 1000 and 5000: woken (to 1500) for nothing, then again at 5000.
    assert_eq!(clocks(&sim(3, model, gather(4000)))[1], 5500);
}

/// X2: a message that arrives as a rank's wake-up ends, when the rank resumes, finds it awake:
/// it starts no wake-up of its own. It used to, and the rank's next wait took that phantom
/// wake-up for one under way and resumed before its own wake-up could have ended
/// (`timing_wildcard_reference.rs` found it).
#[test]
fn timing_x2_a_message_at_the_end_of_a_wake_up_wakes_nothing() {
    let model = with_cpu(CpuModel {
        cores: Some(2),
        wake_latency_ns: 300,
        ..CpuModel::default()
    });
    let o = sim(3, model, |world: Comm| async move {
        let mut buf = [0u8; 8];
        match world.rank() {
            0 => {
                // Arrive at 2000 and 2500.
                world.compute(Duration::from_nanos(1000)).await;
                world.send(&[1u8; 8], 1, 0).await?;
                world.compute(Duration::from_nanos(500)).await;
                world.send(&[3u8; 8], 1, 0).await?;
            }
            2 => {
                // Arrives at 2300, as rank 1's wake-up ends.
                world.compute(Duration::from_nanos(1300)).await;
                world.send(&[2u8; 8], 1, 0).await?;
            }
            _ => {
                world.recv(&mut buf, 0, 0).await?;
                assert_eq!(world.now_ns(), 2300, "arrival 2000, woken at 2300");
                world.recv(&mut buf, 2, 0).await?;
                assert_eq!(world.now_ns(), 2300, "rank 2's message was there");
                world.recv(&mut buf, 0, 0).await?;
                assert_eq!(world.now_ns(), 2800, "arrival 2500, a wake-up of its own");
            }
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![1500, 2800, 1300]);
}

/// X2: a blocking probe woken by an arrival on an oversubscribed run wakes late too.
#[test]
fn timing_x2_oversubscribed_probe_wakes_late() {
    let model = with_cpu(CpuModel {
        cores: Some(1),
        wake_latency_ns: 700,
        ..CpuModel::default()
    });
    let o = sim(2, model, |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 3).await?;
        } else {
            let status = world.probe(0, 3).await?;
            assert_eq!(status.bytes, 8);
            assert_eq!(world.now_ns(), 1700, "arrived at 1000, woke 700 later");
            let mut buf = [0u8; 8];
            world.recv(&mut buf, 0, 3).await?;
        }
        Ok(())
    });
    assert_eq!(clocks(&o), vec![0, 1700]);
}

/// X1 and X2 at their defaults (nothing charged, unlimited cores) leave `docs/timing.md`'s E1
/// exact, whatever the rank count.
#[test]
fn timing_x1_x2_defaults_change_nothing() {
    assert_eq!(Model::worked_examples().cpu, CpuModel::default());
    let o = sim(64, Model::worked_examples(), |world: Comm| async move {
        match world.rank() {
            0 => world.ssend(&[1u8; 8], 1, 0).await?,
            1 => {
                let mut buf = [0u8; 8];
                world.recv(&mut buf, 0, 0).await?;
            }
            _ => {}
        }
        Ok(())
    });
    assert_eq!(&clocks(&o)[..2], &[1200, 1000], "E1");
}
