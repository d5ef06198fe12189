//! `--trace` under `--backend threads`: the file `Launcher::run` writes, loaded back with
//! `serde_json` and checked against the Chrome trace-event schema mpsim writes and against what
//! the program did (messages it counted, computes it made, calls it blocked in). Host times
//! vary from run to run, so nothing here depends on how long anything took, only on order.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mpsim::{Backend, Comm, Error, Launcher, Source, Tag};
use serde_json::Value;

/// A scratch file of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("threads-trace-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Runs `program` on `ranks` threads with `--trace` into a scratch file; returns the run's
/// result and the trace's events.
fn run_traced<F, Fut>(name: &str, ranks: u32, program: F) -> (mpsim::Result<()>, Vec<Value>)
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let path = scratch(name);
    let _ = fs::remove_file(&path);
    let result = Launcher::new(ranks)
        .backend(Backend::Threads)
        .trace(&path)
        .run(program);
    let text = fs::read_to_string(&path).expect("the run wrote its trace");
    let v: Value = serde_json::from_str(&text).expect("the trace is valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents").clone();
    (result, events)
}

/// A span in integer nanoseconds.
#[derive(Debug)]
struct Span {
    rank: u64,
    name: String,
    start: u64,
    end: u64,
}

/// What the schema check found.
#[derive(Debug)]
struct Checked {
    spans: Vec<Span>,
    /// Message arrows (complete `s`/`f` pairs).
    arrows: u64,
}

/// Microseconds with three decimals (exact ns) as ns.
fn ns(v: &Value) -> u64 {
    let us = v.as_f64().expect("a number");
    assert!(us >= 0.0, "{v}");
    (us * 1000.0).round() as u64
}

/// The schema mpsim writes: every event has `ph`, `pid`, `tid`; one `process_name` saying
/// `mpsim threads` and one `thread_name` per rank; `X` spans with `ts` and `dur` >= 0 on a
/// rank's track, not overlapping on that track; flows in `s`/`f` pairs sharing an id, the end
/// not before the start, no phase mpsim does not write.
fn check_schema(events: &[Value], ranks: u64) -> Checked {
    let mut threads = Vec::new();
    let mut process = Vec::new();
    let mut spans = Vec::new();
    let mut flows: BTreeMap<u64, (Option<u64>, Option<u64>)> = BTreeMap::new();
    for e in events {
        assert!(
            e["ph"].is_string() && e["pid"].is_u64() && e["tid"].is_u64(),
            "{e}"
        );
        let tid = e["tid"].as_u64().expect("tid");
        assert!(tid < ranks, "{e}");
        match e["ph"].as_str().expect("ph") {
            "M" if e["name"] == "process_name" => process.push(e["args"]["name"].clone()),
            "M" if e["name"] == "thread_name" => threads.push((tid, e["args"]["name"].clone())),
            "X" => {
                assert!(e["ts"].is_number() && e["dur"].is_number(), "{e}");
                let start = ns(&e["ts"]);
                spans.push(Span {
                    rank: tid,
                    name: e["name"].as_str().expect("a span name").to_owned(),
                    start,
                    end: start + ns(&e["dur"]),
                });
            }
            ph @ ("s" | "f") => {
                assert_eq!(e["cat"], "message", "{e}");
                let id = e["id"].as_u64().expect("a flow id");
                let at = Some(ns(&e["ts"]));
                let slot = flows.entry(id).or_default();
                let end = if ph == "s" { &mut slot.0 } else { &mut slot.1 };
                assert!(end.is_none(), "flow {id} has two {ph} events");
                *end = at;
            }
            other => panic!("unexpected event {other}: {e}"),
        }
    }
    assert_eq!(process, ["mpsim threads"]);
    let want: Vec<(u64, Value)> = (0..ranks)
        .map(|r| (r, Value::from(format!("rank {r}"))))
        .collect();
    assert_eq!(threads, want, "one named track per rank");
    for (id, (s, f)) in &flows {
        let (sent, arrived) = (s.expect("a start"), f.expect("an end"));
        assert!(arrived >= sent, "message {id} arrives before it is sent");
    }
    // A rank does one thing at a time: its spans do not overlap.
    for r in 0..ranks {
        let mut own: Vec<&Span> = spans.iter().filter(|s| s.rank == r).collect();
        own.sort_by_key(|s| s.start);
        for w in own.windows(2) {
            assert!(
                w[0].end <= w[1].start,
                "rank {r}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
    }
    Checked {
        spans,
        arrows: flows.len() as u64,
    }
}

#[test]
fn threads_trace_of_a_ring_has_an_arrow_per_message_and_a_span_per_compute() {
    const RANKS: u32 = 4;
    const TRIPS: u32 = 20;
    const COMPUTE: Duration = Duration::from_micros(5);
    let sent = AtomicU64::new(0);
    let (result, events) = run_traced("ring.json", RANKS, |world: Comm| {
        let sent = &sent;
        async move {
            let (me, n) = (world.rank(), world.size());
            let (left, right) = ((me + n - 1) % n, (me + 1) % n);
            let mut token = [0u64];
            for _ in 0..TRIPS {
                if me == 0 {
                    world.send(&token, right, 7).await?;
                    sent.fetch_add(1, Ordering::Relaxed);
                    world.recv(&mut token, left, 7).await?;
                } else {
                    world.recv(&mut token, left, 7).await?;
                    world.send(&token, right, 7).await?;
                    sent.fetch_add(1, Ordering::Relaxed);
                }
                world.compute(COMPUTE).await;
            }
            Ok(())
        }
    });
    result.expect("the ring runs");
    let checked = check_schema(&events, RANKS.into());
    assert_eq!(checked.arrows, sent.load(Ordering::Relaxed));
    assert_eq!(checked.arrows, u64::from(RANKS * TRIPS));
    let computes: Vec<&Span> = checked
        .spans
        .iter()
        .filter(|s| s.name == "compute")
        .collect();
    assert_eq!(computes.len() as u32, RANKS * TRIPS, "one span per compute");
    assert!(
        computes.iter().all(|s| s.end - s.start >= 5_000),
        "a compute spins at least its duration"
    );
    // An 8 B send is eager: it never waits. Receives are the only waits.
    for s in &checked.spans {
        assert!(["compute", "recv"].contains(&s.name.as_str()), "{s:?}");
    }
}

#[test]
fn threads_trace_of_a_pingpong_pairs_every_message() {
    const ITERS: u64 = 200;
    let sent = AtomicU64::new(0);
    let (result, events) = run_traced("pingpong.json", 2, |world: Comm| {
        let sent = &sent;
        async move {
            let peer = 1 - world.rank();
            let mut buf = [0u8; 8];
            for _ in 0..ITERS {
                if world.rank() == 0 {
                    world.send(&buf, peer, 1).await?;
                    sent.fetch_add(1, Ordering::Relaxed);
                    world.recv(&mut buf, peer, 1).await?;
                } else {
                    world.recv(&mut buf, peer, 1).await?;
                    world.send(&buf, peer, 1).await?;
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        }
    });
    result.expect("the ping-pong runs");
    let checked = check_schema(&events, 2);
    assert_eq!(checked.arrows, sent.load(Ordering::Relaxed));
    assert_eq!(checked.arrows, 2 * ITERS);
    // Rank 0's receive can complete only after rank 1 answered: for it never to wait, every
    // answer would have to come within the few instructions between its send and its receive.
    assert!(
        checked
            .spans
            .iter()
            .any(|s| s.rank == 0 && s.name == "recv"),
        "rank 0 waited in recv"
    );
    assert!(checked.spans.iter().all(|s| s.name == "recv"));
}

/// Every rank blocks for good, each in a different call: the watchdog ends the run, and the
/// trace (still written) shows each rank's one wait, named after its call, up to the end.
#[test]
fn threads_trace_of_a_deadlock_names_each_rank_s_wait() {
    let (result, events) = run_traced("deadlock.json", 3, |world: Comm| async move {
        match world.rank() {
            0 => {
                world.probe(1, Tag::Any).await?;
            }
            1 => world.ssend(&[1u32], 2, 5).await?,
            _ => {
                let mut buf = [0u32];
                let mut reqs = [world.irecv(&mut buf, Source::Rank(0), Tag::Any)?];
                mpsim::wait_all(&mut reqs).await?;
            }
        }
        Ok(())
    });
    assert!(matches!(result, Err(Error::Deadlock { .. })), "{result:?}");
    let checked = check_schema(&events, 3);
    let names: Vec<(u64, &str)> = checked
        .spans
        .iter()
        .map(|s| (s.rank, s.name.as_str()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names, [(0, "probe"), (1, "ssend"), (2, "wait_all")]);
    // The ssend's envelope reached rank 2 (which never matches it).
    assert_eq!(checked.arrows, 1);
}
