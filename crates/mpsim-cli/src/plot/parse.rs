//! Chrome trace-event JSON to a [`Timeline`]: the spans and messages of each rank, in integer
//! nanoseconds.
//!
//! Reads what `mpsim_sim::Trace::to_chrome_json` writes (and any trace of the same shapes):
//! `ph:"M"` metadata (`thread_name` names a rank's track, `tid` = rank), `ph:"X"` spans
//! (`tid`, `name`, `ts`, `dur`), and flow pairs `ph:"s"` / `ph:"f"` sharing an `id` for
//! messages (sender = the start's `tid`, receiver = the end's). The document is either an object
//! with a `traceEvents` array or a bare array of events. Other phases and unknown fields are
//! skipped, as Perfetto skips what it does not know.
//!
//! Times in the format are microseconds written as decimals; they are converted from their text
//! ([`super::decimal`]), never through `f64`, so `12.345` is 12,345 ns exactly. Anything that
//! would make the plot wrong (a span without `ts`, a negative duration, a flow end without a
//! start, ...) is an error naming the file and line of the event; a flow start whose end never
//! comes (a message still in flight when the trace stopped) is counted, not an error.
//!
//! Not handled: `B`/`E` begin/end pairs and several processes (mpsim writes one process, with
//! complete `X` spans); such events are counted as skipped.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::decimal::{DecimalError, decimal_scaled};

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
        let mut max_tid: Option<u32> = None;
        for raw in events {
            let at = |what: String| err(Some((line_of(text, raw.get()), None)), what);
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
                decimal_scaled(v.get(), 3).map_err(|problem| {
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
                    let next = name_ids.len() as u32;
                    let name = *name_ids.entry(name.to_owned()).or_insert(next);
                    t.spans.push(Span {
                        rank,
                        name,
                        start,
                        end,
                    });
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
                    continue;
                }
            };
            max_tid = max_tid.max(Some(rank));
        }
        t.ranks = max_tid.map_or(0, |m| m.saturating_add(1));
        t.unfinished = open.values().map(VecDeque::len).sum();
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

/// The 1-based line of `text` on which `part`, a slice of it, starts.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
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
