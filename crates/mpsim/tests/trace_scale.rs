//! Traces at scale: a window of time and a set of ranks (`--trace-from`, `--trace-to`,
//! `--trace-ranks`), recorded as the rules of `TraceFilter` say on both backends, and the
//! Perfetto protobuf format (`--trace x.pftrace`), read back with `prost` and compared with
//! the JSON trace of the same run.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use mpsim::sim::perfetto::{BYTES_ANNOTATION, EventType, PerfettoTrace, TO_ANNOTATION, rank_track};
use mpsim::sim::{Model, RankSet, Trace, TraceEvent, TraceFilter};
use mpsim::{Backend, Comm, Error, LaunchArgs, Launcher};
use prost::Message;
use serde_json::Value;

/// A scratch file of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("trace-scale-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// A token ring of `TRIPS` trips, each rank computing 1 us before it passes the token on, and
/// an eager message from every rank to rank 0 at the end.
async fn ring(world: Comm) -> mpsim::Result<()> {
    const TRIPS: u32 = 5;
    let (me, n) = (world.rank(), world.size());
    let mut token = [0u8; 8];
    for _ in 0..TRIPS {
        if me != 0 {
            world.recv(&mut token, me - 1, 0).await?;
        }
        world.compute(Duration::from_micros(1)).await;
        world.send(&token, (me + 1) % n, 0).await?;
        if me == 0 {
            world.recv(&mut token, n - 1, 0).await?;
        }
    }
    if me != 0 {
        world.send(&[1u8], 0, 1).await?;
    } else {
        for from in 1..n {
            world.recv(&mut [0u8], from, 1).await?;
        }
    }
    Ok(())
}

fn filter(from_ns: u64, to_ns: u64, ranks: Option<&str>) -> TraceFilter {
    TraceFilter {
        from_ns,
        to_ns,
        ranks: ranks.map(|r| r.parse().expect("a rank list")),
    }
}

/// `launcher` with `filter`'s flags.
fn with_filter(launcher: Launcher, f: &TraceFilter) -> Launcher {
    let launcher = launcher.trace_from_ns(f.from_ns).trace_to_ns(f.to_ns);
    match &f.ranks {
        Some(ranks) => launcher.trace_ranks(ranks.clone()),
        None => launcher,
    }
}

/// The sim's trace of the ring on 6 ranks, recorded under `f` (the same sequential and on
/// several threads).
fn sim_ring(f: &TraceFilter) -> Trace {
    let launcher = Launcher::new(6)
        .model(Model::worked_examples())
        .trace("unused-by-simulate.json");
    let o = common::simulate_all_ways(with_filter(launcher, f), 6, ring);
    assert!(o.error.is_none(), "{:?}", o.error);
    o.trace.expect("a trace was asked for")
}

/// Recording under a window and a set of ranks gives the trace recorded whole, filtered
/// afterwards: spans clipped to the window, messages kept when sent or arriving in it with a
/// traced end, byte for byte in JSON (and so sequential or parallel alike).
#[test]
fn trace_window_records_what_the_filter_of_the_whole_trace_keeps() {
    let whole = sim_ring(&TraceFilter::default());
    let (first, last) = extent(&whole);
    let third = (last - first) / 3;
    for f in [
        filter(first + third, last - third, None),
        filter(first + third, last - third, Some("1-2,5")),
        filter(0, u64::MAX, Some("3")),
        filter(last + 1, u64::MAX, None),
    ] {
        let recorded = sim_ring(&f);
        assert_eq!(
            recorded.to_chrome_json(),
            whole.clone().filtered(f.clone()).to_chrome_json(),
            "{f:?}"
        );
        check_kept(&recorded, &f);
    }
    // The window in the middle cut spans at both edges and dropped messages on both sides.
    let f = filter(first + third, last - third, None);
    let cut = sim_ring(&f);
    let spans = |t: &Trace| t.events().iter().filter(|e| is_span(e)).count();
    assert!(spans(&cut) > 0 && spans(&cut) < spans(&whole));
    assert!(cut.events().iter().any(|e| match *e {
        TraceEvent::Span {
            start_ns, end_ns, ..
        } => start_ns == f.from_ns || end_ns == f.to_ns,
        TraceEvent::Message { .. } => false,
    }));
}

/// Under a set of ranks, tracks are the set's and those of the other ends of its messages;
/// no span of another rank is recorded.
#[test]
fn trace_ranks_give_tracks_to_the_set_and_its_peers_only() {
    let t = sim_ring(&filter(0, u64::MAX, Some("2")));
    // Rank 2 receives from 1 and sends to 3 in the ring, and to 0 at the end.
    assert_eq!(t.tracks().collect::<Vec<_>>(), [0, 1, 2, 3]);
    let json: Value = serde_json::from_str(&t.to_chrome_json()).expect("valid JSON");
    let names: Vec<u64> = json["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["tid"].as_u64().expect("tid"))
        .collect();
    assert_eq!(names, [0, 1, 2, 3]);
    for e in t.events() {
        match *e {
            TraceEvent::Span { rank, .. } => assert_eq!(rank, 2),
            TraceEvent::Message { from, to, .. } => assert!(from == 2 || to == 2, "{e:?}"),
        }
    }
}

/// Every event of `t` is one `f` keeps, clipped.
fn check_kept(t: &Trace, f: &TraceFilter) {
    for e in t.events() {
        match *e {
            TraceEvent::Span {
                rank,
                start_ns,
                end_ns,
                ..
            } => assert_eq!(
                f.clip(rank, start_ns, end_ns),
                Some((start_ns, end_ns)),
                "{e:?}"
            ),
            TraceEvent::Message {
                from,
                to,
                sent_ns,
                arrival_ns,
                ..
            } => assert!(f.keeps_message(from, to, sent_ns, arrival_ns), "{e:?}"),
        }
    }
}

fn is_span(e: &TraceEvent) -> bool {
    matches!(e, TraceEvent::Span { .. })
}

/// The first and last time in `t`.
fn extent(t: &Trace) -> (u64, u64) {
    let times = t.events().iter().flat_map(|e| match *e {
        TraceEvent::Span {
            start_ns, end_ns, ..
        } => vec![start_ns, end_ns],
        TraceEvent::Message {
            sent_ns,
            arrival_ns,
            ..
        } => [Some(sent_ns), arrival_ns].into_iter().flatten().collect(),
    });
    let (min, max) = times.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
    assert!(min < max, "the trace has events");
    (min, max)
}

/// On threads, in host time: a window of the run and a set of ranks keep only what the filter
/// keeps, and the messages kept pair their two ends (arrival not before send) though each end
/// dropped records the other kept.
#[test]
fn trace_window_on_threads_keeps_what_the_filter_keeps() {
    // Each trip computes 1 ms per rank: a run of about 20 ms, whose middle is traced.
    async fn slow_ring(world: Comm) -> mpsim::Result<()> {
        let (me, n) = (world.rank(), world.size());
        let mut token = [0u8; 8];
        for _ in 0..5 {
            if me != 0 {
                world.recv(&mut token, me - 1, 0).await?;
            }
            world.compute(Duration::from_millis(1)).await;
            world.send(&token, (me + 1) % n, 0).await?;
            if me == 0 {
                world.recv(&mut token, n - 1, 0).await?;
            }
        }
        Ok(())
    }
    let f = filter(4_000_000, 12_000_000, Some("0-1"));
    let path = scratch("threads-window.json");
    let result = with_filter(Launcher::new(4).backend(Backend::Threads), &f)
        .trace(&path)
        .run(slow_ring);
    assert!(result.is_ok(), "{result:?}");
    let (spans, messages) = read_json(&path);
    assert!(!spans.is_empty(), "compute spans overlap the window");
    let events: Vec<TraceEvent> = spans.into_iter().chain(messages).collect();
    check_kept(&Trace::new("mpsim threads", 4, events.clone()), &f);
    for e in &events {
        if let TraceEvent::Message {
            sent_ns,
            arrival_ns: Some(arrival),
            ..
        } = *e
        {
            assert!(arrival >= sent_ns, "{e:?}");
        }
    }
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

fn parse(args: &[&str]) -> Result<LaunchArgs, String> {
    Cli::try_parse_from(["prog"].iter().chain(args))
        .map(|c| c.launch)
        .map_err(|e| e.to_string())
}

/// The flags take times as model files write them and rank lists; bad values are refused by
/// the command line, naming what is wrong.
#[test]
fn trace_flags_take_times_and_rank_lists() {
    let a = parse(&[
        "--trace-from",
        "500us",
        "--trace-to",
        "2s",
        "--trace-ranks",
        "64,0-3",
    ])
    .expect("parses");
    assert_eq!(
        (a.trace_from, a.trace_to),
        (Some(500_000), Some(2_000_000_000))
    );
    assert_eq!(
        a.trace_ranks.map(|r| r.to_string()).as_deref(),
        Some("0-3,64")
    );
    let e = parse(&["--trace-ranks", "3-1"]).unwrap_err();
    assert!(e.contains("`3-1` is an empty range"), "{e}");
    let e = parse(&["--trace-ranks", "0,x"]).unwrap_err();
    assert!(e.contains("`x` is not a rank"), "{e}");
    assert!(parse(&["--trace-from", "soon"]).is_err());
}

/// Under threads, `--report` counts the whole run (it is measured, not made from the trace)
/// while the file keeps what the filter keeps.
#[test]
fn trace_window_on_threads_leaves_the_report_whole() {
    let f = filter(0, 0, Some("1"));
    let launcher = with_filter(Launcher::new(3).backend(Backend::Threads), &f);
    let (report, error) = launcher.trace("unused.json").measure(ring);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        report.ranks[1].sent.messages.iter().sum::<u64>(),
        6,
        "5 trips and the last message"
    );
    let path = scratch("threads-report.json");
    let path_text = path.display().to_string();
    let args = parse(&[
        "--ranks",
        "3",
        "--backend",
        "threads",
        "--report",
        "json",
        "--trace",
        &path_text,
        "--trace-ranks",
        "1",
    ])
    .expect("parses");
    let result = Launcher::try_from_args(args).expect("no model").run(ring);
    assert!(result.is_ok(), "{result:?}");
    let (spans, messages) = read_json(&path);
    assert!(!spans.is_empty());
    for e in spans.iter().chain(&messages) {
        match *e {
            TraceEvent::Span { rank, .. } => assert_eq!(rank, 1),
            TraceEvent::Message { from, to, .. } => assert!(from == 1 || to == 1, "{e:?}"),
        }
    }
    assert_eq!(messages.len(), 5 + 6, "rank 1's 5 arrivals and 6 sends");
}

/// Bad windows and rank sets are refused before the run, naming the flags, on both backends
/// (and by `simulate`).
#[test]
fn trace_filters_that_do_not_fit_the_run_are_refused_early() {
    for backend in [Backend::Sim, Backend::Threads] {
        let path = scratch("refused.json");
        let _ = fs::remove_file(&path);
        let run = |l: Launcher| l.backend(backend).trace(&path).run(ring);
        match run(Launcher::new(2).trace_from_ns(10).trace_to_ns(5)) {
            Err(Error::InvalidArgument { what }) => {
                assert!(
                    what.contains("--trace-from is 10 ns, --trace-to 5 ns"),
                    "{what}"
                )
            }
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        let ranks: RankSet = "0,2".parse().expect("a rank list");
        match run(Launcher::new(2).trace_ranks(ranks)) {
            Err(Error::InvalidArgument { what }) => assert_eq!(
                what,
                "--trace-ranks names rank 2, but the run has 2 ranks (0 to 1)"
            ),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        assert!(!path.exists(), "refused before the trace file is made");
    }
    let o = Launcher::new(2)
        .trace("unused.json")
        .trace_from_ns(3)
        .trace_to_ns(2)
        .simulate(ring);
    assert!(
        matches!(&o.error, Some(Error::InvalidArgument { what }) if what.contains("ends before it starts")),
        "{:?}",
        o.error
    );
}

/// A `.pftrace` file decodes (with `prost`, into the same message types) to the spans and
/// messages of the JSON trace of the same run, at a fraction of its size.
#[test]
fn perfetto_trace_holds_the_spans_and_messages_of_the_json_trace() {
    for (name, f) in [
        ("whole", TraceFilter::default()),
        ("ranks", filter(0, u64::MAX, Some("4-5"))),
    ] {
        let json = scratch(&format!("{name}.json"));
        let pftrace = scratch(&format!("{name}.pftrace"));
        for path in [&json, &pftrace] {
            let launcher = Launcher::new(6).model(Model::worked_examples());
            let result = with_filter(launcher, &f).trace(path).run(ring);
            assert!(result.is_ok(), "{result:?}");
        }
        let (mut json_spans, json_messages) = read_json(&json);
        let bytes = fs::read(&pftrace).expect("the run wrote its trace");
        let (tracks, mut spans, messages) = read_perfetto(&bytes);
        json_spans.sort_by_key(span_key);
        spans.sort_by_key(span_key);
        assert_eq!(spans, json_spans, "{name}");
        assert_eq!(messages, json_messages, "{name}");
        let json_tracks = json_track_names(&json);
        assert_eq!(tracks, json_tracks, "{name}");
        let json_len = fs::metadata(&json).expect("written").len();
        assert!(
            (bytes.len() as u64) * 2 < json_len,
            "{name}: {} bytes of protobuf, {json_len} of JSON",
            bytes.len()
        );
    }
}

/// A trace file name picks the format; anything but `.pftrace` and `.perfetto-trace` is JSON.
#[test]
fn trace_format_follows_the_file_name() {
    use mpsim::TraceFormat;
    for (name, format) in [
        ("a.pftrace", TraceFormat::Perfetto),
        ("a.PFTRACE", TraceFormat::Perfetto),
        ("dir/a.perfetto-trace", TraceFormat::Perfetto),
        ("a.json", TraceFormat::ChromeJson),
        ("a.pftrace.json", TraceFormat::ChromeJson),
        ("pftrace", TraceFormat::ChromeJson),
    ] {
        assert_eq!(TraceFormat::for_path(name.as_ref()), format, "{name}");
    }
}

fn span_key(e: &TraceEvent) -> (u32, u64, u64) {
    match *e {
        TraceEvent::Span {
            rank,
            start_ns,
            end_ns,
            ..
        } => (rank, start_ns, end_ns),
        TraceEvent::Message { .. } => unreachable!("spans only"),
    }
}

/// Microseconds with three decimals, as written, to exact ns.
fn ns(v: &Value) -> u64 {
    let text = v.to_string();
    let (whole, frac) = text.split_once('.').expect("three decimals");
    whole.parse::<u64>().expect("us") * 1000 + frac.parse::<u64>().expect("ns")
}

/// Spans (in file order) and messages (by id) of a JSON trace.
fn read_json(path: &PathBuf) -> (Vec<TraceEvent>, Vec<TraceEvent>) {
    let text = fs::read_to_string(path).expect("the run wrote its trace");
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    let mut spans = Vec::new();
    let mut messages: BTreeMap<u64, TraceEvent> = BTreeMap::new();
    for e in v["traceEvents"].as_array().expect("events") {
        let tid = e["tid"].as_u64().expect("tid") as u32;
        match e["ph"].as_str().expect("ph") {
            "X" => {
                let start_ns = ns(&e["ts"]);
                spans.push(TraceEvent::Span {
                    rank: tid,
                    name: leak(e["name"].as_str().expect("name")),
                    start_ns,
                    end_ns: start_ns + ns(&e["dur"]),
                    unfinished: e["args"]["unfinished"] == Value::Bool(true),
                });
            }
            "s" => {
                let id = e["id"].as_u64().expect("id");
                messages.insert(
                    id,
                    TraceEvent::Message {
                        id,
                        from: tid,
                        to: e["args"]["to"].as_u64().expect("to") as u32,
                        sent_ns: ns(&e["ts"]),
                        arrival_ns: None,
                        bytes: e["args"]["bytes"].as_u64().expect("bytes") as usize,
                    },
                );
            }
            "f" => {
                let id = e["id"].as_u64().expect("id");
                if let Some(TraceEvent::Message { arrival_ns, .. }) = messages.get_mut(&id) {
                    *arrival_ns = Some(ns(&e["ts"]));
                }
            }
            _ => {}
        }
    }
    (spans, messages.into_values().collect())
}

/// The track names of a JSON trace: the process, then its ranks.
fn json_track_names(path: &PathBuf) -> Vec<String> {
    let text = fs::read_to_string(path).expect("written");
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    v["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| e["args"]["name"].as_str().expect("a name").to_string())
        .collect()
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// Track names, spans and messages (by id) of a Perfetto trace, read as Perfetto reads it:
/// packets ordered by time, then place in the file; an end closes its track's innermost open
/// slice; a flow goes from the instant that starts it to the one that ends it.
fn read_perfetto(bytes: &[u8]) -> (Vec<String>, Vec<TraceEvent>, Vec<TraceEvent>) {
    let t = PerfettoTrace::decode(bytes).expect("a Perfetto trace");
    let mut tracks = Vec::new();
    let mut ranks = HashMap::new();
    let mut timed = Vec::new();
    let mut names = HashMap::new();
    for (i, p) in t.packet.iter().enumerate() {
        for n in p.interned_data.iter().flat_map(|d| &d.event_names) {
            names.insert(
                n.iid.expect("a number"),
                leak(n.name.as_deref().expect("a name")),
            );
        }
        if let Some(d) = &p.track_descriptor {
            let name = d.name.clone().expect("named");
            if let Some(rank) = name.strip_prefix("rank ") {
                let rank: u32 = rank.parse().expect("rank N");
                assert_eq!(d.uuid, Some(rank_track(rank)));
                ranks.insert(rank_track(rank), rank);
            }
            tracks.push(name);
        }
        if let Some(e) = &p.track_event {
            timed.push((p.timestamp.expect("timed"), i, e));
        }
    }
    timed.sort_by_key(|&(at, i, _)| (at, i));
    let mut open: HashMap<u32, Vec<(&'static str, u64)>> = HashMap::new();
    let mut spans = Vec::new();
    let mut messages: BTreeMap<u64, TraceEvent> = BTreeMap::new();
    for (at, _, e) in timed {
        let rank = ranks[&e.track_uuid.expect("on a track")];
        match e.r#type() {
            EventType::SliceBegin => open
                .entry(rank)
                .or_default()
                .push((names[&e.name_iid.expect("named")], at)),
            EventType::SliceEnd => {
                let (name, start_ns) = open
                    .get_mut(&rank)
                    .and_then(Vec::pop)
                    .expect("an open slice");
                spans.push(TraceEvent::Span {
                    rank,
                    name,
                    start_ns,
                    end_ns: at,
                    unfinished: false,
                });
            }
            EventType::Instant => {
                assert_eq!(names[&e.name_iid.expect("named")], "message");
                let arg = |n: u64| {
                    e.debug_annotations
                        .iter()
                        .find(|a| a.name_iid == Some(n))
                        .and_then(|a| a.uint_value)
                        .expect("annotated")
                };
                for &id in &e.flow_ids {
                    messages.insert(
                        id,
                        TraceEvent::Message {
                            id,
                            from: rank,
                            to: arg(TO_ANNOTATION) as u32,
                            sent_ns: at,
                            arrival_ns: None,
                            bytes: arg(BYTES_ANNOTATION) as usize,
                        },
                    );
                }
                for id in &e.terminating_flow_ids {
                    match messages.get_mut(id) {
                        Some(TraceEvent::Message { to, arrival_ns, .. }) => {
                            assert_eq!(*to, rank);
                            *arrival_ns = Some(at);
                        }
                        _ => panic!("flow {id} ends before it starts"),
                    }
                }
            }
            EventType::Unspecified => panic!("an event of no type"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "every slice ends");
    (tracks, spans, messages.into_values().collect())
}
