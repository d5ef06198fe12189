//! The trace of a simulated run that stopped before its end (a deadlock, a panic, an error)
//! draws what happened up to the stop, as the report counts it: the calls the ranks were
//! still blocked in are spans open until the stop, marked `"unfinished":true`, and nothing
//! runs past it (`mpsim_sim`'s `end_at_stop`). Each run is simulated sequentially and in
//! parallel, with the same trace (`common::simulate_all_ways`).

mod common;

use std::time::Duration;

use mpsim::sim::{Model, Outcome};
use mpsim::{Comm, Error, Launcher};
use serde_json::Value;

/// Simulates `program` with a trace on the worked examples' model (every delay 1000 ns).
fn traced<F, Fut>(ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let launcher = Launcher::new(ranks)
        .model(Model::worked_examples())
        .trace("unused.json");
    common::simulate_all_ways(launcher, ranks, program)
}

/// The trace's spans as `(rank, name, start_ns, end_ns, unfinished)`, read back from its JSON
/// (microseconds with three decimals).
fn spans(o: &Outcome) -> Vec<(u64, String, u64, u64, bool)> {
    let json = o.trace.as_ref().expect("a trace").to_chrome_json();
    let doc: Value = serde_json::from_str(&json).expect("the trace is JSON");
    let ns = |v: &Value| (v.as_f64().expect("a time") * 1000.0).round() as u64;
    doc["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let start = ns(&e["ts"]);
            (
                e["tid"].as_u64().expect("tid"),
                e["name"].as_str().expect("name").to_owned(),
                start,
                start + ns(&e["dur"]),
                e["args"]["unfinished"] == true,
            )
        })
        .collect()
}

/// E6 (`docs/timing.md` §8): both ranks `ssend` to each other first. The run stops when the
/// messages have arrived, at 1000 ns, with nothing left to do; both ranks' `ssend` is a span
/// from 0 to that stop, unfinished (the trace used to have no span at all).
#[test]
fn timing_e6_deadlock_trace_has_both_ssends_open_until_the_stop() {
    let o = traced(2, |world: Comm| async move {
        let peer = 1 - world.rank();
        world.ssend(&[0u8; 8], peer, 0).await?;
        world.recv(&mut [0u8; 8], peer, 0).await?;
        Ok(())
    });
    assert!(
        matches!(o.error, Some(Error::Deadlock { .. })),
        "{:?}",
        o.error
    );
    assert_eq!(
        spans(&o),
        [
            (0, "ssend".into(), 0, 1000, true),
            (1, "ssend".into(), 0, 1000, true)
        ]
    );
}

/// A rank that panics stops the run (S16 as amended by D2: at its time, 500 ns): the rank
/// waiting for it shows its `recv` open until then, the panicking rank's compute whole.
#[test]
fn timing_s16_panic_trace_shows_the_wait_open_until_the_stop() {
    let o = traced(2, |world: Comm| async move {
        if world.rank() == 0 {
            world.recv(&mut [0u8; 8], 1, 0).await?;
        } else {
            world.compute(Duration::from_nanos(500)).await;
            panic!("the program's own bug");
        }
        Ok(())
    });
    assert!(
        matches!(o.error, Some(Error::Aborted { .. })),
        "{:?}",
        o.error
    );
    assert_eq!(
        spans(&o),
        [
            (1, "compute".into(), 0, 500, false),
            (0, "recv".into(), 0, 500, true)
        ]
    );
}

/// An error stops the run at its time (300 ns), and the report caps each clock there (S16):
/// a compute under way on another rank ends at the stop too, unfinished, and what ran in the
/// lookahead after the error (D2) is not drawn: rank 2's send at 1000 ns and the message.
#[test]
fn timing_s16_error_trace_ends_at_the_stop_like_the_report() {
    let o = traced(3, |world: Comm| async move {
        match world.rank() {
            0 => world.compute(Duration::from_nanos(5_000)).await,
            1 => {
                world.compute(Duration::from_nanos(300)).await;
                world.send(&[1u8], 7, 0).await?;
            }
            _ => {
                world.compute(Duration::from_nanos(1_000)).await;
                world.send(&[1u8], 0, 0).await?;
            }
        }
        Ok(())
    });
    assert!(
        matches!(o.error, Some(Error::InvalidRank { .. })),
        "{:?}",
        o.error
    );
    let clocks: Vec<u64> = o.report.ranks.iter().map(|r| r.clock_ns).collect();
    assert_eq!(clocks, [300, 300, 300]);
    let mut got = spans(&o);
    got.sort();
    assert_eq!(
        got,
        [
            (0, "compute".into(), 0, 300, true),
            (1, "compute".into(), 0, 300, false),
            (2, "compute".into(), 0, 300, true)
        ]
    );
    let json = o.trace.as_ref().expect("a trace").to_chrome_json();
    assert!(
        !json.contains("\"ph\":\"s\""),
        "no message: rank 2 sends after the stop: {json}"
    );
}
