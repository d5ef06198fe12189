//! The simulator's outputs for people and scripts: the Chrome trace (`--trace`) and the JSON
//! report (`--report json`), loaded back and checked against the run's own report; and the
//! same trace and the measured report (`--report` under threads, `Launcher::measure`) of a
//! real run.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use mpsim::sim::{Model, Outcome, TimeBase};
use mpsim::{Backend, Comm, Launcher, Source, Tag};
use serde_json::Value;

/// Rank 0 computes, then everyone exchanges with a neighbour; rank 1 also receives a wildcard.
async fn program(world: Comm) -> mpsim::Result<()> {
    let (me, n) = (world.rank(), world.size());
    if me == 0 {
        world.compute(Duration::from_nanos(700)).await;
    }
    let mut got = [0u64];
    world
        .sendrecv(
            &[u64::from(me)],
            (me + 1) % n,
            1,
            &mut got,
            (me + n - 1) % n,
            1,
        )
        .await?;
    if me == 1 {
        world.recv(&mut got, Source::Any, Tag::Any).await?;
    } else if me == 2 {
        world.ssend(&[9u64], 1, 2).await?;
    }
    Ok(())
}

fn traced() -> Outcome {
    let launcher = Launcher::new(3)
        .model(Model::worked_examples())
        .trace("unused-by-simulate.json");
    common::simulate_all_ways(launcher, 3, program)
}

fn events(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).expect("the trace is valid JSON");
    v["traceEvents"]
        .as_array()
        .expect("traceEvents is an array")
        .clone()
}

#[test]
fn sim_trace_is_chrome_trace_json_matching_the_run() {
    let o = traced();
    assert!(o.error.is_none(), "{:?}", o.error);
    let trace = o.trace.as_ref().expect("a trace was asked for");
    let events = events(&trace.to_chrome_json());
    // Every event names its phase, process and thread (rank).
    for e in &events {
        assert!(
            e["ph"].is_string() && e["pid"].is_u64() && e["tid"].is_u64(),
            "{e}"
        );
    }
    // One named track per rank.
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["rank 0", "rank 1", "rank 2"]);
    // Spans have a start and a non-negative length; rank 0's compute is there, 0.7 us long.
    let spans: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(
        spans
            .iter()
            .all(|e| e["ts"].is_f64() && e["dur"].as_f64() >= Some(0.0))
    );
    assert!(
        spans
            .iter()
            .any(|e| e["tid"] == 0 && e["name"] == "compute" && e["dur"] == 0.7)
    );
    assert!(
        spans.iter().any(|e| e["tid"] == 1 && e["name"] == "recv"),
        "rank 1 waited in recv"
    );
    // Message arrows: a start and a finish per message, same id, finish not before start.
    let mut flows: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "message") {
        let id = e["id"].as_u64().expect("flow id");
        let ts = e["ts"].as_f64().expect("flow ts");
        let slot = flows.entry(id).or_default();
        match e["ph"].as_str() {
            Some("s") => slot.0 = Some(ts),
            Some("f") => slot.1 = Some(ts),
            other => panic!("unexpected flow phase {other:?}"),
        }
    }
    let sent: u64 = o.report.total_sent().messages.iter().sum();
    assert_eq!(flows.len() as u64, sent, "one arrow per message");
    for (id, (s, f)) in flows {
        let (s, f) = (s.expect("start"), f.expect("finish"));
        assert!(
            f >= s + 1.0,
            "message {id}: arrives at least one delay after its send"
        );
    }
}

#[test]
fn sim_trace_is_deterministic() {
    let a = traced().trace.expect("trace").to_chrome_json();
    let b = traced().trace.expect("trace").to_chrome_json();
    assert_eq!(a, b);
}

#[test]
fn sim_report_json_matches_the_report() {
    let o = traced();
    let v: Value = serde_json::from_str(&o.report.to_json()).expect("valid JSON");
    assert_eq!(v["predicted_ns"].as_u64(), Some(o.report.predicted_ns()));
    assert_eq!(v["compute"], "modeled");
    let ranks = v["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 3);
    for (r, json) in o.report.ranks.iter().zip(ranks) {
        assert_eq!(json["clock_ns"].as_u64(), Some(r.clock_ns));
        assert_eq!(json["blocked_ns"].as_u64(), Some(r.blocked_ns));
    }
    assert_eq!(v["protocols"][2], "rendezvous");
}

/// The same program traced on threads: the same tracks and the same messages (one arrow
/// each), under the process name of its backend. (`threads_trace.rs` checks threads traces in
/// depth.)
#[test]
fn trace_on_threads_has_the_sims_tracks_and_arrows() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sim-outputs-threads-{}.json", std::process::id()));
    Launcher::new(3)
        .backend(Backend::Threads)
        .trace(&path)
        .run(program)
        .expect("the program runs on threads");
    let threads = events(&std::fs::read_to_string(&path).expect("the trace was written"));
    let sim = events(&traced().trace.expect("trace").to_chrome_json());
    let shape = |events: &[Value]| {
        let meta: Vec<Value> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .cloned()
            .collect();
        let process = events
            .iter()
            .find(|e| e["name"] == "process_name")
            .map(|e| e["args"]["name"].clone());
        let mut arrows: Vec<(u64, u64)> = events
            .iter()
            .filter(|e| e["ph"] == "s")
            .map(|e| {
                (
                    e["tid"].as_u64().expect("from"),
                    e["args"]["to"].as_u64().expect("to"),
                )
            })
            .collect();
        arrows.sort_unstable();
        let ends = events.iter().filter(|e| e["ph"] == "f").count();
        (meta, process, arrows, ends)
    };
    let (sim_meta, sim_process, sim_arrows, sim_ends) = shape(&sim);
    let (meta, process, arrows, ends) = shape(&threads);
    assert_eq!(meta, sim_meta);
    assert_eq!(arrows, sim_arrows);
    assert_eq!((ends, sim_ends), (arrows.len(), sim_arrows.len()));
    assert_eq!(sim_process, Some(Value::from("mpsim sim")));
    assert_eq!(process, Some(Value::from("mpsim threads")));
}

/// Every way a simulated rank's clock moves: modeled compute, blocking calls that wait,
/// nonblocking requests with their CPU overhead (X1), a `test` loop that polls, and a send
/// that finishes at once.
async fn busy_program(world: Comm) -> mpsim::Result<()> {
    let (me, n) = (world.rank(), world.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    world
        .compute(Duration::from_nanos(300 * u64::from(me)))
        .await;
    let mut got = [0u32; 4];
    let mut recv = world.irecv(&mut got, left, 1)?;
    let send = world.isend(&[me; 4], right, 1)?;
    while recv.test().await?.is_none() {}
    send.wait().await?;
    if me == 0 {
        world.compute(Duration::from_micros(5)).await;
        world.ssend(&[1u8], 1, 2).await?;
    } else if me == 1 {
        world.recv(&mut [0u8], 0, 2).await?;
    }
    Ok(())
}

/// A model with every kind of charge: the worked examples' delays plus X1 overheads.
fn busy_model() -> Model {
    Model {
        cpu: mpsim::sim::CpuModel {
            send_overhead_ns: 50,
            recv_overhead_ns: 30,
            ..mpsim::sim::CpuModel::default()
        },
        ..Model::worked_examples()
    }
}

/// The report's communication time is the time in communication calls (blocked, polling,
/// request overhead), and with compute it makes up a finished rank's whole clock.
#[test]
fn sim_report_comm_time_and_compute_make_up_the_clock() {
    let o = Launcher::new(4).model(busy_model()).simulate(busy_program);
    assert!(o.error.is_none(), "{:?}", o.error);
    for r in &o.report.ranks {
        let (Some(comm), Some(poll), Some(overhead)) = (r.comm_ns, r.poll_ns, r.overhead_ns) else {
            panic!("the simulator measures every figure: {r:?}");
        };
        assert_eq!(comm, r.blocked_ns + poll + overhead, "rank {}", r.rank);
        assert_eq!(r.clock_ns, r.compute_ns + comm, "rank {}: {r:?}", r.rank);
        // One irecv and one isend each.
        assert_eq!(overhead, 80, "rank {}", r.rank);
    }
    assert!(
        o.report.ranks.iter().any(|r| r.poll_ns > Some(0)),
        "a test loop polled"
    );
    assert!(
        o.report.ranks[1].blocked_ns >= 5_000,
        "rank 1 waits for rank 0's compute"
    );
}

/// The top waits are the longest blocking waits, longest first, each naming the rank, the
/// call, when it started, and what it waited for; the text and JSON reports both show them.
#[test]
fn sim_report_top_waits_name_the_longest_waits() {
    let o = Launcher::new(4).model(busy_model()).simulate(busy_program);
    let waits = &o.report.top_waits;
    assert!(!waits.is_empty() && waits.len() <= mpsim::sim::TOP_WAITS);
    assert!(waits.windows(2).all(|w| w[0].waited_ns >= w[1].waited_ns));
    // The longest: rank 1's receive from rank 0, which computes 5 us before it sends.
    let top = &waits[0];
    assert_eq!((top.rank, top.call), (1, "recv"), "{waits:?}");
    assert!(top.waited_ns >= 5_000, "{top:?}");
    assert_eq!(
        top.waiting_for.as_deref(),
        Some("recv (peer 0, tag 2, context 0)")
    );
    // No rank blocked longer in all than its longest wait says.
    for w in waits {
        assert!(w.waited_ns <= o.report.ranks[w.rank as usize].blocked_ns);
    }
    let text = o.report.to_string();
    assert!(text.contains("top waits"), "{text}");
    assert!(text.contains("recv (peer 0, tag 2, context 0)"), "{text}");
    let v: Value = serde_json::from_str(&o.report.to_json()).expect("valid JSON");
    assert_eq!(v["top_waits"][0]["rank"], 1);
    assert_eq!(v["top_waits"][0]["waited_ns"].as_u64(), Some(top.waited_ns));
    assert_eq!(v["ranks"][1]["comm_ns"].as_u64(), o.report.ranks[1].comm_ns);
}

/// Messages and bytes per rank, by protocol, are those the simulator counts for the same
/// program; compute is at least what the program asked for; blocked time fits in the rank's
/// run; the top waits are sorted and name what they waited for; what a real run cannot
/// measure is `None`; the text and JSON say the same, in the simulator's shape.
#[test]
fn threads_report_counts_what_each_rank_did() {
    let (report, error) = Launcher::new(3).measure(program);
    assert!(error.is_none(), "{error:?}");
    let sim = Launcher::new(3).simulate(program);
    assert_eq!(report.backend, "threads");
    assert_eq!(report.time_base, TimeBase::Host);
    assert_eq!(
        (report.events, report.compute, &report.stopped),
        (None, None, &None)
    );
    assert_eq!(report.ranks.len(), 3);
    for (m, s) in report.ranks.iter().zip(&sim.report.ranks) {
        assert_eq!(m.rank, s.rank);
        assert_eq!(m.sent, s.sent, "rank {}", m.rank);
        assert_eq!(m.received, s.received, "rank {}", m.rank);
        assert_eq!(m.unreceived, s.unreceived, "rank {}", m.rank);
        assert_eq!((m.poll_ns, m.overhead_ns, m.comm_ns), (None, None, None));
        assert!(m.blocked_ns + m.compute_ns <= m.clock_ns, "{m:?}");
        assert!(m.clock_ns > 0, "{m:?}");
    }
    assert!(report.ranks[0].compute_ns >= 700, "{:?}", report.ranks[0]);
    assert_eq!(report.ranks[1].compute_ns, 0);
    let waits = &report.top_waits;
    assert!(waits.len() <= mpsim::sim::TOP_WAITS);
    assert!(waits.windows(2).all(|w| w[0].waited_ns >= w[1].waited_ns));
    assert!(waits.iter().all(|w| w.waited_ns > 0));
    // Rank 1's wildcard receive, if it waited, names what it waited for as the simulator does.
    for w in waits.iter().filter(|w| (w.rank, w.call) == (1, "recv")) {
        assert_eq!(
            w.waiting_for.as_deref(),
            Some("recv (peer ANY_SOURCE, tag ANY_TAG, context 0)"),
            "{w:?}"
        );
    }
    let text = report.to_string();
    assert!(
        text.starts_with("mpsim threads report (measured, host time)"),
        "{text}"
    );
    assert!(text.contains("\nevents           -\n"), "{text}");
    assert!(text.contains("\n  rendezvous   "), "{text}");
    let v: Value = serde_json::from_str(&report.to_json()).expect("valid JSON");
    assert_eq!(v["run_ns"].as_u64(), Some(report.run_ns()));
    assert!(v["predicted_ns"].is_null() && v["events"].is_null());
    assert_eq!(v["time_base"], "host");
    assert_eq!(
        v["ranks"][2]["sent"],
        serde_json::to_value(report.ranks[2].sent).expect("JSON")
    );
    assert!(v["ranks"][0]["comm_ns"].is_null());
    // The same keys as the simulator's, at the top and in each rank.
    let sim: Value = serde_json::from_str(&sim.report.to_json()).expect("valid JSON");
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("an object").keys().cloned().collect() };
    assert_eq!(keys(&v), keys(&sim));
    assert_eq!(keys(&v["ranks"][0]), keys(&sim["ranks"][0]));
}

/// The threads report's longest wait names what it waited for, in the simulator's words:
/// rank 1 waits in `recv` for rank 0, which computes 20 ms before it sends.
#[test]
fn threads_report_top_waits_say_what_they_waited_for() {
    let program = |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(Duration::from_millis(20)).await;
            world.send(&[1u8; 4], 1, 3).await?;
        } else {
            world.recv(&mut [0u8; 4], 0, 3).await?;
        }
        Ok(())
    };
    let (report, error) = Launcher::new(2).measure(program);
    assert!(error.is_none(), "{error:?}");
    let top = &report.top_waits[0];
    assert_eq!((top.rank, top.call), (1, "recv"), "{:?}", report.top_waits);
    assert!(top.waited_ns >= 15_000_000, "{top:?}");
    assert_eq!(
        top.waiting_for.as_deref(),
        Some("recv (peer 0, tag 3, context 0)")
    );
    let sim = Launcher::new(2).simulate(program).report;
    assert_eq!(sim.top_waits[0].waiting_for, top.waiting_for);
    assert!(
        report
            .to_string()
            .contains("recv (peer 0, tag 3, context 0)")
    );
}

/// A run that could not start measures nothing and says why.
#[test]
fn threads_report_of_no_ranks_is_an_error() {
    let (report, error) = Launcher::new(0).measure(program);
    assert!(matches!(error, Some(mpsim::Error::InvalidArgument { .. })));
    assert!(report.ranks.is_empty());
}

/// S14's warning on both backends: the threads report lists the messages no receive took in
/// the simulator's words, the same list for the same program (here: one taken in by a probe
/// before its receiver ended, one that arrived after).
/// `program` on 3 ranks under sim and under threads, both without error: the threads
/// backend's measured report, whose warnings must be the simulator's.
fn threads_report_warning_as_sim_does<F, Fut>(program: F) -> mpsim::sim::Report
where
    F: Fn(Comm) -> Fut + Sync + Copy,
    Fut: std::future::Future<Output = mpsim::Result<()>>,
{
    let sim = Launcher::new(3).simulate(program);
    assert!(sim.error.is_none(), "{:?}", sim.error);
    let (report, error) = Launcher::new(3).backend(Backend::Threads).measure(program);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(report.warnings, sim.report.warnings);
    report
}

#[test]
fn threads_report_warns_of_messages_never_received_as_sim_does() {
    let program = |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 5).await?;
            world.send(&[2u8; 3], 2, 6).await?;
        } else if world.rank() == 1 {
            world.probe(0, 5).await?;
        }
        Ok(())
    };
    let report = threads_report_warning_as_sim_does(program);
    assert_eq!(
        report.warnings,
        [
            "a message of 8 bytes from rank 0 to rank 1 (tag 5, context 0) was never received",
            "a message of 3 bytes from rank 0 to rank 2 (tag 6, context 0) was never received",
        ]
    );
    assert!(
        report
            .to_string()
            .contains("\nwarning: a message of 8 bytes")
    );
    let v: Value = serde_json::from_str(&report.to_json()).expect("valid JSON");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(2));
}

/// A receive the program drops after it matched a message (a request dropped once its message
/// is in, not taken by a wait or test) loses the message's data; the
/// run's warnings say so, in the same words under both backends, each rank's before its
/// messages never received. A receive dropped before anything matched it is withdrawn and
/// warns of nothing; the message it would have taken is then never received.
#[test]
fn dropped_matched_receives_are_warnings_on_both_backends() {
    let program = |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 5).await?;
            world.ssend(&[2u8; 3], 1, 6).await?;
            world.send(&[3u8; 2], 1, 7).await?;
        } else if world.rank() == 1 {
            let mut a = [0u8; 8];
            let r = world.irecv(&mut a, 0, 5)?;
            // Tag 6 comes after tag 5 (FIFO): once it is in, so is tag 5.
            world.probe(0, 6).await?;
            drop(r);
            let mut b = [0u8; 3];
            let mut r = world.irecv(&mut b, 0, 6)?;
            while r.test().await?.is_none() {}
            drop(r);
            // Posted for a tag nobody sends, and dropped unmatched: withdrawn.
            let mut c = [0u8; 2];
            drop(world.irecv(&mut c, 0, 99)?);
        }
        Ok(())
    };
    let report = threads_report_warning_as_sim_does(program);
    assert_eq!(
        report.warnings,
        [
            "rank 1 dropped a receive that had matched a message of 8 bytes (source 0, tag 5, \
             context 0): its data was discarded (wait for or test a receive to completion to \
             get its data)",
            "a message of 2 bytes from rank 0 to rank 1 (tag 7, context 0) was never received",
        ]
    );
}

/// A text report lists the first `LIST_WARNINGS` warnings and counts the rest, on both
/// backends (a run of 100,000 ranks that each left a message printed 100,000 lines); the JSON
/// report keeps them all.
#[test]
fn reports_list_the_first_warnings_and_count_the_rest() {
    let program = |world: Comm| async move {
        if world.rank() != 0 {
            world.send(&[1u8], 0, 5).await?;
        }
        Ok(())
    };
    let ranks = mpsim::sim::LIST_WARNINGS as u32 + 8;
    let sim = Launcher::new(ranks).simulate(program);
    let (measured, error) = Launcher::new(ranks)
        .backend(Backend::Threads)
        .measure(program);
    assert!(
        sim.error.is_none() && error.is_none(),
        "{:?} {error:?}",
        sim.error
    );
    for text in [sim.report.to_string(), measured.to_string()] {
        let warned: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .collect();
        assert_eq!(warned.len(), mpsim::sim::LIST_WARNINGS + 1, "{text}");
        assert_eq!(
            warned.last().copied(),
            Some("warning: ... and 7 more warnings (`--report json` lists them all)")
        );
    }
    let v: Value = serde_json::from_str(&sim.report.to_json()).expect("valid JSON");
    assert_eq!(
        v["warnings"].as_array().map(Vec::len),
        Some(ranks as usize - 1)
    );
}

/// A message a matched probe took and the program dropped without `mrecv` is warned of, as a
/// dropped receive that had matched is, on both backends alike (it was lost without a word).
#[test]
fn a_matched_message_dropped_unreceived_is_warned_of() {
    let program = |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 6], 1, 4).await?;
        } else if world.rank() == 1 {
            let message = world.mprobe(0, 4).await?;
            assert_eq!(message.status().bytes, 6);
            drop(message);
        }
        Ok(())
    };
    let report = threads_report_warning_as_sim_does(program);
    assert_eq!(
        report.warnings,
        [
            "rank 1 dropped a message of 6 bytes (source 0, tag 4) that a matched probe had taken, \
          without receiving it: its data was discarded (receive it with mrecv or imrecv)"
        ]
    );
}
