//! Simulated timing of BSP programs (`spec/bsplib.md` §3, `docs/bsplib.md` §4): the cost
//! model `w + h·g + l` per superstep (5.27's cost of an empty superstep, 5.30's h of a put, a
//! get and a send), the table in the report, the point-to-point timing, determinism.

#[path = "common/bsp.rs"]
mod harness;

use std::time::Duration;

use mpsim::bsp::{BspTiming, Ctx, Superstep};
use mpsim::sim::{Model, TraceEvent};
use mpsim::{Launcher, Result};

use harness::simulate;

/// g = 2 ns/byte, l = 5 us, cost timing.
fn cost_model() -> Model {
    Model {
        bsp_g_ps_per_byte: Some(2000),
        bsp_l_ns: Some(5000),
        bsp_timing: BspTiming::Cost,
        ..Model::default_machine()
    }
}

fn cost_launcher(p: u32) -> Launcher {
    Launcher::new(p).model(cost_model())
}

/// The (w, h bytes, h messages, cost) of each superstep.
fn rows(steps: &[Superstep]) -> Vec<(u64, u64, u64, u64)> {
    steps
        .iter()
        .map(|s| (s.w_ns, s.h_bytes, s.h_msgs, s.cost_ns))
        .collect()
}

/// 5.27 (cost): p = 1, an empty superstep costs l; the predicted time is the sum of the
/// supersteps' costs.
#[test]
fn bsp_5_27_an_empty_superstep_costs_l() {
    let outcome = simulate(cost_launcher(1), |mut ctx: Ctx| async move {
        ctx.sync().await?;
        ctx.sync().await
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let bsp = outcome.report.bsp.clone().expect("a BSP table");
    assert_eq!(bsp.timing, BspTiming::Cost);
    assert_eq!(rows(&bsp.supersteps), [(0, 0, 0, 5000); 3]);
    assert_eq!(bsp.total_ns(), 15_000);
    assert_eq!(outcome.report.predicted_ns(), 15_000);
}

/// 5.30: P0 puts 100 B to P1: h = 100, T = w + 100 g + l; a get of 100 B: h = 100; a send of
/// an 8-byte tag and 100 bytes: h = 108. Each superstep ends at the same instant everywhere.
#[test]
fn bsp_5_30_h_of_a_put_a_get_and_a_send() {
    let outcome = simulate(cost_launcher(2), |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u8>(100)?;
        ctx.set_tagsize(8);
        ctx.sync().await?; // superstep 0: w 0, h 0
        if ctx.pid() == 0 {
            ctx.compute(Duration::from_nanos(700)).await;
            ctx.put(1, &x, 0, &[7u8; 100])?;
        }
        ctx.sync().await?; // 1: put
        if ctx.pid() == 0 {
            ctx.get_into(1, &x, 0, &x, 0, 100)?;
        }
        ctx.sync().await?; // 2: get
        if ctx.pid() == 1 {
            ctx.send(0, &[1u8; 8], &[2u8; 100])?;
        }
        ctx.sync().await?; // 3: send
        Ok(())
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let bsp = outcome.report.bsp.clone().expect("a BSP table");
    let (g, l) = (2, 5000);
    assert_eq!(
        rows(&bsp.supersteps),
        [
            (0, 0, 0, l),
            (700, 100, 1, 700 + 100 * g + l),
            (0, 100, 1, 100 * g + l),
            (0, 108, 1, 108 * g + l),
            (0, 0, 0, l),
        ]
    );
    // Which process set h: both sent or received 100 (the first), P1 the 108 it sent.
    let who: Vec<u32> = bsp.supersteps.iter().map(|s| s.h_pid).collect();
    assert_eq!(who, [0, 0, 0, 0, 0]);
    let total = bsp.total_ns();
    assert_eq!(total, 5000 + 5900 + 5200 + 5216 + 5000);
    // Both processes end at the total: the clocks follow the formula, not the messages.
    for r in &outcome.report.ranks {
        assert_eq!(r.clock_ns, total, "rank {}", r.rank);
    }
    // The communication is blocked time, not compute; the text report has the table.
    assert_eq!(outcome.report.ranks[0].compute_ns, 700);
    let text = outcome.report.to_string();
    assert!(text.contains("bsp              5 supersteps, total 26316 ns, timing cost: w + h*g + l, g = 2.000 ns/byte, l = 5000 ns"), "{text}");
    assert!(
        text.contains("\n1     sync       700        100        1      0          5900"),
        "{text}"
    );
}

/// The process that set h is named: the one receiving the most.
#[test]
fn bsp_timing_names_the_process_that_set_h() {
    let outcome = simulate(cost_launcher(4), |mut ctx: Ctx| async move {
        // Everyone sends 10 bytes to pid 2: it receives 40 (30 from others), each sends 10.
        ctx.send(2, &[], &[0u8; 10])?;
        ctx.sync().await?;
        Ok(())
    });
    let bsp = outcome.report.bsp.expect("a table");
    assert_eq!(
        (
            bsp.supersteps[0].h_bytes,
            bsp.supersteps[0].h_msgs,
            bsp.supersteps[0].h_pid
        ),
        (30, 3, 2)
    );
}

async fn traffic(mut ctx: Ctx) -> Result<()> {
    let (s, p) = (ctx.pid(), ctx.nprocs());
    let x = ctx.push_reg::<u64>(p as usize)?;
    ctx.sync().await?;
    for step in 0..3u64 {
        ctx.compute(Duration::from_nanos(100 * u64::from(s + 1)))
            .await;
        for t in 0..p {
            ctx.put(t, &x, s as usize, &[step])?;
            ctx.send(t, &[], &[s as u8; 16])?;
        }
        ctx.sync().await?;
    }
    Ok(())
}

/// Point-to-point timing: the supersteps take what their messages take on the model, the
/// table says so, and the run is the same on 1 and 2 simulator threads, byte for byte.
#[test]
fn bsp_timing_p2p_is_the_messages_and_deterministic() {
    let one = simulate(Launcher::new(6), traffic);
    assert!(one.error.is_none(), "{:?}", one.error);
    let bsp = one.report.bsp.clone().expect("a table");
    assert_eq!(bsp.timing, BspTiming::P2p);
    assert_eq!(bsp.supersteps.len(), 5);
    // Each superstep took longer than its w: its messages took time.
    for s in &bsp.supersteps[1..4] {
        assert_eq!(s.w_ns, 600);
        assert_eq!((s.h_bytes, s.h_msgs), (5 * 8 + 5 * 16, 10));
        assert!(s.cost_ns > s.w_ns, "{s:?}");
    }
    assert_eq!(
        bsp.supersteps.last().unwrap().end_ns,
        one.report.ranks[0].clock_ns
    );
    let two = simulate(Launcher::new(6).sim_threads(2), traffic);
    assert_eq!(one.report.to_string(), two.report.to_string());
    assert_eq!(one.report.to_json(), two.report.to_json());
    // Cost timing too.
    let one = simulate(cost_launcher(6), traffic);
    let two = simulate(cost_launcher(6).sim_threads(2), traffic);
    assert_eq!(one.report.to_json(), two.report.to_json());
}

/// The trace shows each process's syncs: `bsp_sync` spans (the sync's waits; under the cost
/// model, its charge).
#[test]
fn bsp_timing_the_trace_shows_the_syncs() {
    let outcome = simulate(cost_launcher(2).trace("unused.json"), traffic);
    let trace = outcome.trace.expect("a trace");
    let syncs = trace
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e,
                TraceEvent::Span {
                    name: "bsp_sync",
                    rank: 0,
                    ..
                }
            )
        })
        .count();
    assert!(syncs >= 5, "{syncs} bsp_sync spans");
}
