//! Chrome trace-event JSON to a [`Timeline`]: the spans and messages of each rank, in integer
//! nanoseconds.
//!
//! Reads what `mpsim_sim::Trace::to_chrome_json` writes (and any trace of the same shapes):
//! `ph:"M"` metadata (`thread_name` names a rank's track, `tid` = rank), `ph:"X"` spans
//! (`tid`, `name`, `ts`, `dur`), and flow pairs `ph:"s"` / `ph:"f"` sharing an `id` for
//! messages (sender = the start's `tid`, receiver = the end's). Spans may also be written as
//! `ph:"B"` / `ph:"E"` pairs, as other tools write them: a `B` (`tid`, `name`, `ts`) begins a
//! span on its track (`pid`, `tid`) and the next `E` on that track ends the latest span begun
//! there (spans on a track nest); the span keeps the `B`'s name and its place in the file. The
//! document is either an object with a `traceEvents` array or a bare array of events. Other
//! phases and unknown fields are skipped, as Perfetto skips what it does not know; a trace in
//! which nothing can be drawn though it has events is an error, not an empty picture.
//!
//! Times in the format are microseconds written as decimals; they are converted from their text
//! ([`mpsim_sim::decimal`]), never through `f64`, so `12.345` is 12,345 ns exactly. Anything that
//! would make the plot wrong (a span without `ts`, a negative duration, a flow end without a
//! start, an `E` with no `B` open on its track, ...) is an error naming the file and line of the
//! event; a flow start whose end never comes (a message still in flight when the trace stopped)
//! and a `B` never ended are counted, not errors, and not drawn.
//!
//! Not handled: several processes (mpsim writes one): ranks are `tid`s, whatever the `pid`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use mpsim_sim::decimal::{DecimalError, json_rounded};

/// What a trace says each rank did, times in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Number of ranks: one more than the largest `tid` of any event (0 for no events).
    pub ranks: u32,
    /// Span names, each once; [`Span::name`] indexes it.
    pub names: Vec<String>,
    /// Spans in file order.
    pub spans: Vec<Span>,
    /// Messages in the order of their ends (arrivals) in the file.
    pub messages: Vec<Message>,
    /// Flow starts with no end in the file (messages in flight when the trace stopped).
    pub unfinished: usize,
    /// `B` events with no `E` in the file (spans still open when the trace stopped).
    pub unclosed: usize,
    /// Events of phases this reader does not draw.
    pub skipped: usize,
}

/// A span of one rank's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The rank (`tid`).
    pub rank: u32,
    /// Index into [`Timeline::names`].
    pub name: u32,
    /// Start, ns.
    pub start: u64,
    /// End, ns (not before `start`).
    pub end: u64,
}

/// A message: an arrow from its send to its arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sender rank.
    pub from: u32,
    /// Receiver rank.
    pub to: u32,
    /// When it was sent, ns.
    pub sent: u64,
    /// When it arrived, ns.
    pub arrival: u64,
    /// Its size, when the start's `args.bytes` says.
    pub bytes: Option<u64>,
}

/// Why a trace could not be read: one line, naming the file and, where known, the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The trace file as given.
    pub path: String,
    /// 1-based line (and column, for JSON syntax errors) of the problem.
    pub line: Option<(usize, Option<usize>)>,
    /// What is wrong.
    pub what: String,
}

/// One event as written; every field optional so that the checks below can say what is missing.
#[derive(Deserialize)]
#[serde(expecting = "an event object")]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// The object form of a trace.
#[derive(Deserialize)]
#[serde(expecting = "an array of events or an object with a `traceEvents` array")]
struct Document<'a> {
    #[serde(borrow, rename = "traceEvents")]
    trace_events: Vec<&'a RawValue>,
}

/// The `args` of a flow start (mpsim writes `bytes` and `to`).
#[derive(Deserialize)]
struct FlowArgs {
    #[serde(default)]
    bytes: Option<u64>,
}

/// A flow start waiting for its end.
struct Open {
    from: u32,
    sent: u64,
    bytes: Option<u64>,
}

/// A `B` event waiting for its `E`: its span's place in [`Timeline::spans`] (pushed when it
/// begins, so spans stay in file order), its name and where it is in the file (a byte offset:
/// its line is counted only for a message).
struct Begun {
    span: usize,
    name: String,
    offset: usize,
}

/// The spans begun and not yet ended, per track (`pid` as written, `tid`): a stack each,
/// since spans on a track nest and an `E` ends the latest one.
#[derive(Default)]
struct OpenSpans(BTreeMap<(String, u32), Vec<Begun>>);

impl OpenSpans {
    fn begin(&mut self, track: (String, u32), begun: Begun) {
        self.0.entry(track).or_default().push(begun);
    }

    /// The latest span begun on `track` and not yet ended.
    fn end(&mut self, track: &(String, u32)) -> Option<Begun> {
        let stack = self.0.get_mut(track)?;
        let begun = stack.pop();
        if stack.is_empty() {
            self.0.remove(track);
        }
        begun
    }

    /// The places in [`Timeline::spans`] of the spans never ended.
    fn unclosed(&self) -> BTreeSet<usize> {
        self.0.values().flatten().map(|b| b.span).collect()
    }
}

impl Timeline {
    /// Reads the trace `text` of the file `path` (named in errors only).
    pub fn parse(path: &Path, text: &str) -> Result<Timeline, TraceError> {
        let err = |line, what: String| TraceError {
            path: path.display().to_string(),
            line,
            what,
        };
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let events: Vec<&RawValue> = if body.trim_start().starts_with('[') {
            serde_json::from_str(body)
        } else {
            serde_json::from_str::<Document>(body).map(|d| d.trace_events)
        }
        .map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Eof => "truncated JSON",
                serde_json::error::Category::Data => "not a Chrome trace",
                _ => "not valid JSON",
            };
            err(
                Some((e.line(), Some(e.column()))),
                format!("{what}: {}", message_only(&e)),
            )
        })?;

        let mut t = Timeline::default();
        let mut name_ids: BTreeMap<String, u32> = BTreeMap::new();
        let mut open: BTreeMap<(String, String), VecDeque<Open>> = BTreeMap::new();
        let mut begun = OpenSpans::default();
        let mut skipped_phases: BTreeSet<String> = BTreeSet::new();
        let mut max_tid: Option<u32> = None;
        for raw in events {
            // The line is counted only for an error: counting it for every event made
            // parsing quadratic (24,000 messages took 50 s).
            let offset = offset_of(text, raw.get());
            let at = |what: String| err(Some((line_at(text, offset), None)), what);
            let e: RawEvent = serde_json::from_str(raw.get())
                .map_err(|e| at(format!("bad event: {}", message_only(&e))))?;
            let Some(ph) = e.ph.as_deref() else {
                return Err(at("event has no `ph`".into()));
            };
            let name = e.name.as_deref().unwrap_or("");
            let tid = |e: &RawEvent| -> Result<u32, TraceError> {
                let raw = e
                    .tid
                    .ok_or_else(|| at(format!("`{ph}` event has no `tid`")))?;
                raw.get()
                    .parse::<u32>()
                    .map_err(|_| at(format!("`tid` {} is not a rank number", raw.get())))
            };
            let micros = |field: &str, v: Option<&RawValue>| -> Result<u64, TraceError> {
                let v = v.ok_or_else(|| match name {
                    "" => at(format!("`{ph}` event has no `{field}`")),
                    _ => at(format!("`{ph}` event `{name}` has no `{field}`")),
                })?;
                json_rounded(v.get(), 3).map_err(|problem| {
                    let of = match name {
                        "" => String::new(),
                        _ => format!(" of `{name}`"),
                    };
                    at(format!(
                        "`{field}` {}{of} is {}",
                        v.get(),
                        match (problem, field) {
                            (DecimalError::NotANumber, _) => "not a number",
                            (DecimalError::Negative, "dur") => "a negative duration",
                            (DecimalError::Negative, _) => "negative",
                            (DecimalError::TooLarge, _) => "too large",
                        }
                    ))
                })
            };
            let rank = match ph {
                "M" if name == "thread_name" => tid(&e)?,
                "X" => {
                    let rank = tid(&e)?;
                    let start = micros("ts", e.ts)?;
                    let dur = micros("dur", e.dur)?;
                    let end = start
                        .checked_add(dur)
                        .ok_or_else(|| at(format!("span `{name}` ends after the year 2554")))?;
                    let name = intern(&mut name_ids, name);
                    t.spans.push(Span {
                        rank,
                        name,
                        start,
                        end,
                    });
                    rank
                }
                "B" => {
                    let rank = tid(&e)?;
                    let start = micros("ts", e.ts)?;
                    let track = (e.pid.map_or("", RawValue::get).to_owned(), rank);
                    let span = t.spans.len();
                    let name = name.to_owned();
                    begun.begin(track, Begun { span, name, offset });
                    // The name is set when the span ends: a span never ended names nothing.
                    t.spans.push(Span {
                        rank,
                        name: 0,
                        start,
                        end: start,
                    });
                    rank
                }
                "E" => {
                    let rank = tid(&e)?;
                    let end = micros("ts", e.ts)?;
                    let track = (e.pid.map_or("", RawValue::get).to_owned(), rank);
                    let b = begun.end(&track).ok_or_else(|| {
                        at(format!(
                            "`E` event on tid {rank} without a `B` before it on that track"
                        ))
                    })?;
                    let span = &mut t.spans[b.span];
                    if end < span.start {
                        return Err(at(format!(
                            "`E` event at ts {} ends before the `B` `{}` it ends (line {}) \
                             begins",
                            e.ts.map_or("", RawValue::get),
                            b.name,
                            line_at(text, b.offset)
                        )));
                    }
                    span.end = end;
                    span.name = intern(&mut name_ids, &b.name);
                    rank
                }
                "s" | "f" => {
                    let rank = tid(&e)?;
                    let ts = micros("ts", e.ts)?;
                    let id =
                        e.id.ok_or_else(|| at(format!("flow `{ph}` event has no `id`")))?
                            .get();
                    let key = (e.cat.as_deref().unwrap_or("").to_owned(), id.to_owned());
                    if ph == "s" {
                        let bytes = e
                            .args
                            .and_then(|a| serde_json::from_str::<FlowArgs>(a.get()).ok())
                            .and_then(|a| a.bytes);
                        open.entry(key).or_default().push_back(Open {
                            from: rank,
                            sent: ts,
                            bytes,
                        });
                    } else {
                        let waiting = open.get_mut(&key);
                        let start = waiting.and_then(VecDeque::pop_front).ok_or_else(|| {
                            at(format!("flow end (id {id}) without a start before it"))
                        })?;
                        // Only flows in flight stay in the map.
                        if open.get(&key).is_some_and(VecDeque::is_empty) {
                            open.remove(&key);
                        }
                        t.messages.push(Message {
                            from: start.from,
                            to: rank,
                            sent: start.sent,
                            arrival: ts,
                            bytes: start.bytes,
                        });
                    }
                    rank
                }
                "M" => continue,
                _ => {
                    t.skipped += 1;
                    skipped_phases.insert(ph.to_owned());
                    continue;
                }
            };
            max_tid = max_tid.max(Some(rank));
        }
        t.ranks = max_tid.map_or(0, |m| m.saturating_add(1));
        t.unfinished = open.values().map(VecDeque::len).sum();
        let unclosed = begun.unclosed();
        t.unclosed = unclosed.len();
        if !unclosed.is_empty() {
            let mut i = 0;
            t.spans.retain(|_| {
                i += 1;
                !unclosed.contains(&(i - 1))
            });
        }
        if t.spans.is_empty() && t.messages.is_empty() && (t.skipped > 0 || t.unclosed > 0) {
            return Err(err(None, nothing_to_draw(&t, &skipped_phases)));
        }
        t.names = vec![String::new(); name_ids.len()];
        for (name, i) in name_ids {
            t.names[i as usize] = name;
        }
        Ok(t)
    }

    /// The first and last instants any span or message touches, if there is one.
    pub fn extent(&self) -> Option<(u64, u64)> {
        let spans = self.spans.iter().map(|s| (s.start, s.end));
        let messages = self
            .messages
            .iter()
            .map(|m| (m.sent.min(m.arrival), m.sent.max(m.arrival)));
        spans
            .chain(messages)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some((line, Some(col))) => write!(f, "{}:{line}:{col}: {}", self.path, self.what),
            Some((line, None)) => write!(f, "{}:{line}: {}", self.path, self.what),
            None => write!(f, "{}: {}", self.path, self.what),
        }
    }
}

/// The index of span name `name`, added to `ids` if new.
fn intern(ids: &mut BTreeMap<String, u32>, name: &str) -> u32 {
    if let Some(&id) = ids.get(name) {
        return id;
    }
    let id = ids.len() as u32;
    ids.insert(name.to_owned(), id);
    id
}

/// Why a trace with events gives nothing to draw: what it holds instead.
fn nothing_to_draw(t: &Timeline, skipped_phases: &BTreeSet<String>) -> String {
    let mut held = Vec::new();
    if t.skipped > 0 {
        let phases: Vec<String> = skipped_phases
            .iter()
            .take(6)
            .map(|p| format!("`{}`", p.escape_debug()))
            .collect();
        let more = if skipped_phases.len() > 6 {
            ", ..."
        } else {
            ""
        };
        held.push(format!(
            "{} events of phase {}{more}, which it skips",
            t.skipped,
            phases.join(", ")
        ));
    }
    if t.unclosed > 0 {
        held.push(format!("{} `B` events never ended by an `E`", t.unclosed));
    }
    format!(
        "nothing to draw: mpsim plot draws `X` spans, `B`/`E` pairs and `s`/`f` message flows, \
         and this trace has {}",
        held.join(" and ")
    )
}

/// Where `part`, a slice of `text`, starts in it: a byte offset.
fn offset_of(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// The 1-based line of byte `offset` of `text`.
fn line_at(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// A serde_json error's message without its " at line L column C" (given separately).
fn message_only(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    s.strip_suffix(&suffix).unwrap_or(&s).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Timeline, String> {
        Timeline::parse(Path::new("t.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_spans_messages_and_both_document_forms() {
        let events = r#"[
{"ph":"M","pid":0,"tid":3,"name":"thread_name","args":{"name":"rank 3"}},
{"ph":"X","pid":0,"tid":0,"name":"compute","ts":0.000,"dur":0.700,"extra":[1,{"a":2}]},
{"ph":"s","tid":0,"name":"message","cat":"message","id":7,"ts":0.700,"args":{"bytes":8,"to":1}},
{"ph":"i","tid":9,"name":"marker","ts":1},
{"ph":"f","bp":"e","tid":1,"name":"message","cat":"message","id":7,"ts":1.701},
{"ph":"s","tid":1,"cat":"message","id":8,"ts":2}
]"#;
        let t = parse(events).expect("parses");
        assert_eq!(t.ranks, 4, "rank 3 is named by metadata");
        assert_eq!(t.names, ["compute"]);
        assert_eq!(
            t.spans,
            [Span {
                rank: 0,
                name: 0,
                start: 0,
                end: 700
            }]
        );
        assert_eq!(
            t.messages,
            [Message {
                from: 0,
                to: 1,
                sent: 700,
                arrival: 1_701,
                bytes: Some(8)
            }]
        );
        assert_eq!((t.unfinished, t.skipped), (1, 1));
        assert_eq!(
            t.extent(),
            Some((0, 1_701)),
            "unfinished flows are not drawn"
        );
        let object = format!("{{\"displayTimeUnit\":\"ns\",\"traceEvents\":{events}}}");
        assert_eq!(parse(&object), Ok(t));
    }

    #[test]
    fn begin_end_pairs_are_spans_that_nest_per_track() {
        let events = r#"{"traceEvents":[
{"ph":"B","pid":1,"tid":0,"name":"compute","ts":0},
{"ph":"B","pid":1,"tid":1,"name":"recv","ts":0.5},
{"ph":"B","pid":1,"tid":0,"name":"inner","ts":0.25},
{"ph":"E","pid":1,"tid":0,"ts":0.75},
{"ph":"E","pid":1,"tid":0,"ts":1.5},
{"ph":"E","pid":1,"tid":1,"ts":2},
{"ph":"B","pid":1,"tid":2,"name":"never ended","ts":3}
]}"#;
        let t = parse(events).expect("parses");
        assert_eq!(t.ranks, 3);
        assert_eq!(t.names, ["inner", "compute", "recv"]);
        let span = |rank, name, start, end| Span {
            rank,
            name,
            start,
            end,
        };
        assert_eq!(
            t.spans,
            [
                span(0, 1, 0, 1_500),
                span(1, 2, 500, 2_000),
                span(0, 0, 250, 750)
            ],
            "in the order they begin"
        );
        assert_eq!((t.unclosed, t.skipped), (1, 0));
        assert_eq!(t.extent(), Some((0, 2_000)));
    }

    #[test]
    fn begin_end_problems_name_the_line() {
        let cases = [
            (
                "[{\"ph\":\"B\",\"tid\":0,\"name\":\"a\",\"ts\":1},\n{\"ph\":\"E\",\"tid\":1,\"ts\":2}]",
                "t.json:2: `E` event on tid 1 without a `B` before it on that track",
            ),
            (
                "[{\"ph\":\"B\",\"pid\":1,\"tid\":0,\"ts\":1},\n{\"ph\":\"E\",\"pid\":2,\"tid\":0,\"ts\":2}]",
                "t.json:2: `E` event on tid 0 without a `B`",
            ),
            (
                "[{\"ph\":\"B\",\"tid\":0,\"name\":\"a\",\"ts\":5},\n{\"ph\":\"E\",\"tid\":0,\"ts\":2}]",
                "t.json:2: `E` event at ts 2 ends before the `B` `a` it ends (line 1) begins",
            ),
            (
                "[{\"ph\":\"B\",\"tid\":0,\"name\":\"a\"}]",
                "t.json:1: `B` event `a` has no `ts`",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).expect_err(text);
            assert!(
                got.starts_with(want),
                "{text:?}: got {got:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn events_with_nothing_to_draw_are_an_error_not_an_empty_picture() {
        let got = parse(r#"[{"ph":"i","tid":0,"ts":1},{"ph":"C","tid":0,"ts":2}]"#)
            .expect_err("nothing drawable");
        assert_eq!(
            got,
            "t.json: nothing to draw: mpsim plot draws `X` spans, `B`/`E` pairs and `s`/`f` \
             message flows, and this trace has 2 events of phase `C`, `i`, which it skips"
        );
        let got = parse(r#"[{"ph":"B","tid":0,"ts":1}]"#).expect_err("never ended");
        assert!(got.ends_with("1 `B` events never ended by an `E`"), "{got}");
        assert_eq!(
            parse("[]").map(|t| t.ranks),
            Ok(0),
            "no events: an empty picture"
        );
    }

    #[test]
    fn problems_name_file_line_and_what() {
        let cases = [
            ("", "t.json:1:0: truncated JSON: EOF while parsing a value"),
            ("[{\"ph\":\"X\"", "t.json:1:10: truncated JSON"),
            ("hello", "t.json:1:1: not valid JSON: expected value"),
            (
                "{\"a\":1}",
                "t.json:1:7: not a Chrome trace: missing field `traceEvents`",
            ),
            (
                "3",
                "t.json:1:1: not a Chrome trace: invalid type: integer `3`, expected an array",
            ),
            (
                "[\n3]",
                "t.json:2: bad event: invalid type: integer `3`, expected an event",
            ),
            ("[{}]", "t.json:1: event has no `ph`"),
            (
                "[\n{\"ph\":\"X\",\"tid\":0,\"name\":\"recv\",\"dur\":1}]",
                "t.json:2: `X` event `recv` has no `ts`",
            ),
            (
                "[{\"ph\":\"X\",\"tid\":0,\"name\":\"recv\",\"ts\":1,\"dur\":-1}]",
                "t.json:1: `dur` -1 of `recv` is a negative duration",
            ),
            (
                "[{\"ph\":\"X\",\"tid\":0,\"name\":\"recv\",\"ts\":\"1\",\"dur\":1}]",
                "t.json:1: `ts` \"1\" of `recv` is not a number",
            ),
            (
                "[{\"ph\":\"X\",\"tid\":-2,\"ts\":1,\"dur\":1}]",
                "t.json:1: `tid` -2 is not a rank number",
            ),
            (
                "[{\"ph\":\"s\",\"tid\":0,\"id\":1,\"ts\":1},\n{\"ph\":\"f\",\"tid\":1,\"id\":2,\"ts\":2}]",
                "t.json:2: flow end (id 2) without a start before it",
            ),
            (
                "[{\"ph\":\"f\",\"tid\":1,\"ts\":2}]",
                "t.json:1: flow `f` event has no `id`",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).expect_err(text);
            assert!(
                got.starts_with(want),
                "{text:?}: got {got:?}, want {want:?}"
            );
            assert_eq!(got.lines().count(), 1, "{got}");
        }
    }
}
