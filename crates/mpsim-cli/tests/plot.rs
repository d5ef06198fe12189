//! `mpsim plot` end to end: traces written by simulated runs (and one by a threads run), drawn
//! by the binary, and the SVG read back as XML. What the picture must hold (lanes, rectangles per category, arrows) is
//! counted from the trace itself; malformed traces must fail with one line, not a panic.

mod common;

use common::{mpsim, text};

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mpsim::sim::Model;
use mpsim::{Backend, Comm, Launcher, Source, Tag};
use serde_json::Value;

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plot-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Runs `program` simulated on `ranks` ranks and writes its trace to a scratch file.
fn trace_of<F, Fut>(name: &str, ranks: u32, program: F) -> PathBuf
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let outcome = Launcher::new(ranks)
        .model(Model::worked_examples())
        .trace("recorded-by-simulate.json")
        .simulate(program);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let path = scratch(name);
    let trace = outcome.trace.expect("a trace was asked for");
    fs::write(&path, trace.to_chrome_json()).expect("write the trace");
    path
}

/// A ring where each rank computes for a while, sends right, and polls until its left
/// neighbour's message is there; then rank 0 waits in `recv` for the last rank's `ssend`:
/// compute, poll and blocking spans, and `ranks + 1` messages.
async fn polling_ring(world: Comm) -> mpsim::Result<()> {
    let (me, n) = (world.rank(), world.size());
    world
        .compute(Duration::from_nanos(300 * u64::from(me + 1)))
        .await;
    let send = world.isend(&[u64::from(me)], (me + 1) % n, 1)?;
    while world.iprobe(Source::Any, Tag::Any).await?.is_none() {}
    let mut got = [0u64];
    world.recv(&mut got, (me + n - 1) % n, 1).await?;
    send.wait().await?;
    if me == n - 1 {
        world.compute(Duration::from_micros(1)).await;
        world.ssend(&got, 0, 2).await?;
    } else if me == 0 {
        world.recv(&mut got, n - 1, 2).await?;
    }
    Ok(())
}

/// A plain token ring, `trips` times around.
async fn ring(world: Comm, trips: u32) -> mpsim::Result<()> {
    let (me, n) = (world.rank(), world.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let mut token = [0u64];
    for _ in 0..trips {
        if me == 0 {
            world.send(&token, right, 7).await?;
            world.recv(&mut token, left, 7).await?;
        } else {
            world.recv(&mut token, left, 7).await?;
            world.send(&token, right, 7).await?;
        }
        world.compute(Duration::from_nanos(200)).await;
    }
    Ok(())
}

/// Runs `mpsim plot TRACE -o OUT extra...`; returns stdout and the SVG, asserting success.
fn plot(trace: &Path, out_name: &str, extra: &[&str]) -> (String, String) {
    let out = scratch(out_name);
    let mut args = vec![
        "plot",
        trace.to_str().expect("UTF-8 path"),
        "-o",
        out.to_str().expect("UTF-8 path"),
    ];
    args.extend(extra);
    let run = mpsim(&args);
    assert!(run.status.success(), "{}", text(&run.stderr));
    (
        text(&run.stdout),
        fs::read_to_string(&out).expect("the SVG"),
    )
}

/// The trace's events.
fn events(trace: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_str(&fs::read_to_string(trace).expect("read")).expect("JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

/// The elements of `svg` named `tag` inside a `<g class="group">`.
fn in_group<'a>(
    svg: &'a roxmltree::Document<'a>,
    group: &str,
    tag: &str,
) -> Vec<roxmltree::Node<'a, 'a>> {
    svg.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some(group))
        .flat_map(|g| g.children().filter(|n| n.has_tag_name(tag)))
        .collect()
}

/// The text of the lane labels, top to bottom.
fn lane_labels(svg: &roxmltree::Document) -> Vec<String> {
    in_group(svg, "lanes", "text")
        .iter()
        .map(|n| n.text().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn plot_ring_has_a_lane_per_rank_a_rect_per_span_and_an_arrow_per_message() {
    let trace = trace_of("polling-ring.json", 4, polling_ring);
    let (stdout, svg_text) = plot(&trace, "polling-ring.svg", &[]);
    let svg = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    assert_eq!(svg.root_element().tag_name().name(), "svg");

    // Expectations from the trace.
    let events = events(&trace);
    let spans: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let count = |pred: &dyn Fn(&str) -> bool| {
        spans
            .iter()
            .filter(|e| pred(e["name"].as_str().expect("name")))
            .count()
    };
    let compute = count(&|n| n == "compute");
    let poll = count(&|n| n == "poll");
    let blocked = count(&|n| n != "compute" && n != "poll");
    let messages = events.iter().filter(|e| e["ph"] == "s").count();
    assert!(
        compute >= 4 && poll >= 1 && blocked >= 1,
        "{compute} {poll} {blocked}"
    );
    assert_eq!(messages, 5);

    assert_eq!(lane_labels(&svg), ["rank 0", "rank 1", "rank 2", "rank 3"]);
    let rects = in_group(&svg, "spans", "rect");
    let of_class = |c: &str| {
        rects
            .iter()
            .filter(|r| r.attribute("class") == Some(c))
            .count()
    };
    assert_eq!(rects.len(), spans.len());
    assert_eq!(
        (of_class("compute"), of_class("poll"), of_class("blocked")),
        (compute, poll, blocked)
    );
    // Every rectangle has a tooltip; rank 0's first is its 300 ns of compute from 0.
    assert!(
        rects
            .iter()
            .all(|r| r.children().any(|c| c.has_tag_name("title")))
    );
    let first = rects[0].first_child().and_then(|c| c.text());
    assert_eq!(first, Some("rank 0: compute at 0 ns for 300 ns"));
    let arrows = in_group(&svg, "messages", "line");
    assert_eq!(arrows.len(), messages);
    assert!(
        arrows
            .iter()
            .all(|a| a.attribute("marker-end") == Some("url(#arrow)"))
    );
    assert!(
        svg_text.contains("blocked ("),
        "the legend names the blocking calls"
    );
    assert!(
        stdout.starts_with(&format!(
            "wrote {}: 4 ranks, {} spans, 5 messages, 0 ns to ",
            scratch("polling-ring.svg").display(),
            spans.len()
        )),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 1);

    // Same input, same bytes.
    let (_, again) = plot(&trace, "polling-ring-again.svg", &[]);
    assert_eq!(svg_text, again);
}

#[test]
fn plot_window_keeps_what_overlaps_it() {
    let trace = trace_of("ring-window.json", 3, |w| ring(w, 10));
    let (_, all) = plot(&trace, "ring-all.svg", &[]);
    let (stdout, part) = plot(&trace, "ring-part.svg", &["--from", "1us", "--to", "2000"]);
    let (all, part) = (
        roxmltree::Document::parse(&all).expect("XML"),
        roxmltree::Document::parse(&part).expect("XML"),
    );
    let overlapping = events(&trace)
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter(|e| {
            let ts = e["ts"].as_f64().expect("ts") * 1000.0;
            let end = ts + e["dur"].as_f64().expect("dur") * 1000.0;
            ts < 2000.0 && end > 1000.0
        })
        .count();
    assert!(overlapping > 0);
    assert_eq!(in_group(&part, "spans", "rect").len(), overlapping);
    assert!(in_group(&all, "spans", "rect").len() > overlapping);
    assert!(stdout.contains("1 us to 2 us"), "{stdout}");
}

#[test]
fn plot_200_ranks_are_at_most_64_bands() {
    let trace = trace_of("ring-200.json", 200, |w| ring(w, 2));
    let (stdout, svg_text) = plot(&trace, "ring-200.svg", &["--width", "800"]);
    let svg = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    let labels = lane_labels(&svg);
    assert!(labels.len() <= 64, "{}", labels.len());
    // Bands are consecutive, cover every rank, and say so.
    let mut next = 0;
    for l in &labels {
        let range = l.strip_prefix("ranks ").expect("a band of ranks");
        let (a, b) = range.split_once('-').expect("first-last");
        assert_eq!(a.parse::<u32>(), Ok(next), "{labels:?}");
        next = b.parse::<u32>().expect("last") + 1;
    }
    assert_eq!(next, 200);
    assert_eq!(in_group(&svg, "spans", "rect").len(), 0, "no span by span");
    let bands: Vec<_> = svg
        .descendants()
        .filter(|n| n.attribute("class") == Some("band"))
        .collect();
    assert_eq!(bands.len(), labels.len());
    assert!(
        bands[0]
            .children()
            .any(|p| p.attribute("class") == Some("blocked"))
    );
    assert_eq!(in_group(&svg, "messages", "line").len(), 0, "no arrows");
    assert!(svg_text.contains("class=\"sends\""), "messages are counted");
    let title = svg
        .root_element()
        .first_element_child()
        .and_then(|t| t.text());
    assert!(title.is_some_and(|t| t.contains("bands of")), "{title:?}");
    assert!(
        stdout.contains(&format!("200 ranks in {} bands of", labels.len())),
        "{stdout}"
    );
}

#[test]
fn plot_many_messages_are_sampled_arrows() {
    // 2 ranks, 1,500 trips: 3,000 messages, more than the 2,000 arrows drawn at most.
    let trace = trace_of("ring-1500.json", 2, |w| ring(w, 1_500));
    let (stdout, svg_text) = plot(&trace, "ring-1500.svg", &[]);
    let svg = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    assert_eq!(lane_labels(&svg), ["rank 0", "rank 1"]);
    let spans = events(&trace).iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(in_group(&svg, "spans", "rect").len(), spans);
    let arrows = in_group(&svg, "messages", "line").len();
    assert_eq!(arrows, 1_500, "one in 2");
    assert!(svg_text.contains("1500 of 3000 messages drawn (one in 2, in file order)"));
    assert!(stdout.contains("3000 messages (1500 drawn)"), "{stdout}");
}

#[test]
fn plot_a_long_run_draws_density_and_counts_messages() {
    // 2 ranks, 12,000 trips: 24,000 messages and more spans than are drawn one by one.
    let trace = trace_of("ring-long.json", 2, |w| ring(w, 12_000));
    let (stdout, svg_text) = plot(&trace, "ring-long.svg", &[]);
    let svg = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    assert_eq!(lane_labels(&svg), ["rank 0", "rank 1"]);
    assert_eq!(in_group(&svg, "spans", "rect").len(), 0);
    assert_eq!(in_group(&svg, "messages", "line").len(), 0);
    let bands = in_group(&svg, "band", "path");
    assert!(
        bands
            .iter()
            .any(|p| p.attribute("class") == Some("compute"))
    );
    assert!(
        bands
            .iter()
            .any(|p| p.attribute("class") == Some("blocked"))
    );
    assert_eq!(in_group(&svg, "sends", "path").len(), 1);
    assert!(svg_text.len() < 1_000_000, "{} bytes", svg_text.len());
    assert!(
        stdout.contains("(as density), 24000 messages (as counts)"),
        "{stdout}"
    );
}

/// A trace in host time, as `--backend threads --trace` writes it: the same lanes, one
/// rectangle per span and one arrow per message (counted from the trace: host times vary).
#[test]
fn plot_draws_a_threads_trace() {
    let path = scratch("threads-ring.json");
    Launcher::new(3)
        .backend(Backend::Threads)
        .trace(&path)
        .run(|w| ring(w, 10))
        .expect("the ring runs on threads");
    let (stdout, svg_text) = plot(&path, "threads-ring.svg", &[]);
    let svg = roxmltree::Document::parse(&svg_text).expect("the SVG is XML");
    assert_eq!(lane_labels(&svg), ["rank 0", "rank 1", "rank 2"]);
    let events = events(&path);
    let spans = events.iter().filter(|e| e["ph"] == "X").count();
    let messages = events.iter().filter(|e| e["ph"] == "s").count();
    assert_eq!(messages, 30);
    assert_eq!(in_group(&svg, "spans", "rect").len(), spans);
    assert_eq!(in_group(&svg, "messages", "line").len(), messages);
    assert!(
        stdout.contains(&format!("3 ranks, {spans} spans, 30 messages")),
        "{stdout}"
    );
}

/// Runs `mpsim plot` on a trace file holding `content`; returns the error line.
fn plot_fails(name: &str, content: Option<&str>) -> (String, String) {
    let path = scratch(name);
    match content {
        Some(c) => fs::write(&path, c).expect("write"),
        None => {
            let _ = fs::remove_file(&path);
        }
    }
    let path = path.to_str().expect("UTF-8 path").to_owned();
    let out = mpsim(&["plot", &path, "-o", &format!("{path}.svg")]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{name}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    (path, err)
}

#[test]
fn plot_malformed_traces_fail_with_one_line_naming_the_problem() {
    let good = fs::read_to_string(trace_of("good.json", 3, |w| ring(w, 1))).expect("read");
    let lines: Vec<&str> = good.lines().collect();
    let first = |ph: &str| {
        lines
            .iter()
            .position(|l| l.contains(&format!("\"ph\":\"{ph}\"")))
            .expect("such an event")
    };
    // The first span without its `ts` (renamed, so the JSON stays valid).
    let x = first("X");
    let mut no_ts = lines.clone();
    let renamed = lines[x].replacen("\"ts\":", "\"tx\":", 1);
    no_ts[x] = &renamed;
    // The first message without its start: its end, right after, names the flow's id.
    let s = first("s");
    let id = serde_json::from_str::<Value>(lines[s].trim_end_matches(','))
        .expect("one event per line")["id"]
        .clone();
    let mut no_start = lines.clone();
    no_start.remove(s);
    let negative = good.replacen("\"dur\":", "\"dur\":-", 1);
    let cases: [(&str, Option<String>, Vec<String>); 6] = [
        (
            "not-json.json",
            Some("this is not JSON\n".into()),
            vec![":1:2: not valid JSON".into()],
        ),
        (
            "truncated.json",
            Some(good[..good.len() / 2].into()),
            vec![": truncated JSON: EOF while parsing".into()],
        ),
        (
            "no-ts.json",
            Some(no_ts.join("\n")),
            vec![format!(":{}: `X` event", x + 1), "has no `ts`".into()],
        ),
        (
            "no-start.json",
            Some(no_start.join("\n")),
            vec![format!(":{}: flow end (id {id}) without a start", s + 1)],
        ),
        (
            "negative.json",
            Some(negative),
            vec!["is a negative duration".into()],
        ),
        ("missing.json", None, vec!["cannot read ".into()]),
    ];
    for (name, content, wants) in cases {
        let (path, err) = plot_fails(name, content.as_deref());
        assert!(err.starts_with("mpsim: "), "{err}");
        assert!(err.contains(&path), "{name}: {err}");
        for want in wants {
            assert!(err.contains(&want), "{name}: {err} lacks {want:?}");
        }
    }
}

/// The trace at `trace` with each complete span (`X`) written as a `B`/`E` pair, as tools that
/// do not write `X` events write spans.
fn as_begin_end(trace: &Path, name: &str) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&fs::read_to_string(trace).expect("read")).expect("JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut pairs = Vec::new();
    for e in events {
        if e["ph"] != "X" {
            pairs.push(e.clone());
            continue;
        }
        // The simulator writes microseconds with three decimals: whole nanoseconds.
        let ns = |field: &str| (e[field].as_f64().expect("a time") * 1000.0).round() as u64;
        let (start, end) = (ns("ts"), ns("ts") + ns("dur"));
        let mut begin = e.clone();
        let fields = begin.as_object_mut().expect("an event object");
        fields.remove("dur");
        fields.insert("ph".into(), "B".into());
        let end = serde_json::json!({
            "ph": "E",
            "pid": e["pid"],
            "tid": e["tid"],
            "ts": serde_json::Number::from_f64(end as f64 / 1000.0),
        });
        assert_eq!(
            begin["ts"].as_f64().map(|t| (t * 1000.0).round() as u64),
            Some(start)
        );
        pairs.extend([begin, end]);
    }
    doc["traceEvents"] = Value::Array(pairs);
    let path = scratch(name);
    fs::write(&path, doc.to_string()).expect("write");
    path
}

#[test]
fn plot_draws_begin_end_pairs_as_the_spans_they_make() {
    let trace = trace_of("be-complete.json", 3, polling_ring);
    let pairs = as_begin_end(&trace, "be-pairs.json");
    let (complete_out, complete) = plot(&trace, "be-complete.svg", &[]);
    let (pairs_out, paired) = plot(&pairs, "be-pairs.svg", &[]);
    let rects = |svg: &str| -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("XML");
        in_group(&doc, "spans", "rect")
            .iter()
            .map(|r| {
                let title = r.first_child().and_then(|c| c.text()).unwrap_or_default();
                format!("{:?} {:?} {title}", r.attribute("x"), r.attribute("width"))
            })
            .collect()
    };
    let spans = events(&trace).iter().filter(|e| e["ph"] == "X").count();
    assert!(spans > 0);
    assert_eq!(rects(&paired), rects(&complete));
    assert_eq!(rects(&paired).len(), spans);
    let summary = |out: &str| out.split_once(": ").map(|(_, s)| s.to_owned());
    assert_eq!(summary(&pairs_out), summary(&complete_out));
}

#[test]
fn plot_a_trace_with_nothing_to_draw_says_so() {
    let (path, err) = plot_fails(
        "instants.json",
        Some(r#"{"traceEvents":[{"ph":"i","pid":1,"tid":0,"ts":1,"name":"mark"}]}"#),
    );
    assert_eq!(
        err,
        format!(
            "mpsim: {path}: nothing to draw: mpsim plot draws `X` spans, `B`/`E` pairs and \
             `s`/`f` message flows, and this trace has 1 events of phase `i`, which it skips\n"
        )
    );
    assert!(!Path::new(&format!("{path}.svg")).exists(), "no picture");
    let (path, err) = plot_fails("empty.json", Some(r#"{"traceEvents":[]}"#));
    assert_eq!(
        err,
        format!("mpsim: {path}: nothing to show: the trace has no spans or messages\n")
    );
    assert!(!Path::new(&format!("{path}.svg")).exists(), "no picture");
}

/// A Perfetto protobuf trace (`--trace x.pftrace`) is named as such, with where to open it.
#[test]
fn plot_names_a_perfetto_trace_it_does_not_read() {
    let (path, err) = plot_fails("ring.pftrace", Some("\n\u{2}binary"));
    assert_eq!(
        err,
        format!(
            "mpsim: {path} is a Perfetto protobuf trace (by its name), which mpsim plot does \
             not read: open it in Perfetto (ui.perfetto.dev), or trace the run again to a \
             .json file\n"
        )
    );
}

#[cfg(target_os = "linux")]
#[test]
fn plot_dev_zero_is_refused_at_once() {
    let out = scratch("zero.svg");
    let run = mpsim(&["plot", "/dev/zero", "-o", out.to_str().expect("UTF-8")]);
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(
        text(&run.stderr),
        "mpsim: /dev/zero: binary data (a NUL byte on line 1), not a trace\n"
    );
}

#[test]
fn plot_window_in_fractions_of_a_nanosecond_is_refused_in_the_flags_terms() {
    let trace = trace_of("ring-fraction.json", 2, |w| ring(w, 1));
    let path = trace.to_str().expect("UTF-8");
    let out = scratch("fraction.svg");
    let out = out.to_str().expect("UTF-8");
    let run = mpsim(&["plot", path, "-o", out, "--from", "1.5", "--to", "1.6"]);
    let err = text(&run.stderr);
    // A bad flag value is a usage error (clap's exit status 2) naming the flag.
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--from <FROM>': `1.5` is not a whole number of nanoseconds"),
        "{err}"
    );
    let run = mpsim(&["plot", path, "-o", out, "--from", "2us", "--to", "1us"]);
    assert_eq!(
        text(&run.stderr),
        "mpsim: nothing to show: --to 1 us is not after --from 2 us\n"
    );
}

/// `-o` naming the trace itself is refused, the trace left whole (it was overwritten by its
/// own picture); `-o -` writes the SVG to standard output and the summary to standard error,
/// where it used to make a file named `-`.
#[test]
fn plot_refuses_to_overwrite_its_trace_and_draws_to_stdout_on_dash() {
    let trace = trace_of("self.json", 2, |w| ring(w, 1));
    let before = fs::read_to_string(&trace).expect("read");
    let path = trace.to_str().expect("UTF-8 path");
    let run = mpsim(&["plot", path, "-o", path]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("is both the trace and the output"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(fs::read_to_string(&trace).expect("read"), before);
    let run = mpsim(&["plot", path, "-o", "-"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let svg = text(&run.stdout);
    roxmltree::Document::parse(&svg).expect("standard output is the SVG alone");
    assert!(text(&run.stderr).starts_with("wrote standard output: 2 ranks"));
}
