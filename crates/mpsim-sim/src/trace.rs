//! The simulator's trace: what each rank did in virtual time, as Chrome trace-event JSON
//! (opens in Perfetto and `chrome://tracing`).
//!
//! One track per rank (`tid` = rank): `compute` and `poll` slices, a slice per blocking wait
//! named after the call (`recv`, `wait_all`, …), and an arrow per message from its send to its
//! arrival (a flow event pair sharing an id). Recorded only when asked for (a trace costs memory
//! per event); written in event order, so the same run gives the same bytes.

use std::fmt::Write as _;

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TraceEvent {
    /// A span on a rank's track.
    Span {
        rank: u32,
        name: &'static str,
        start_ns: u64,
        end_ns: u64,
    },
    /// A message: sent by `from` at `sent_ns`, arriving at `to` at `arrival_ns`.
    Message {
        id: u64,
        from: u32,
        to: u32,
        sent_ns: u64,
        arrival_ns: u64,
        bytes: usize,
    },
}

/// A recorded run, ready to write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub(crate) ranks: u32,
    pub(crate) events: Vec<TraceEvent>,
}

impl Trace {
    /// Number of recorded events (spans and messages).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The trace as Chrome trace-event JSON. Times are microseconds with nanosecond digits.
    pub fn to_chrome_json(&self) -> String {
        let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        let mut first = true;
        let mut push = |out: &mut String, line: String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            out.push_str(&line);
        };
        push(
            &mut out,
            "{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"mpsim sim\"}}".into(),
        );
        for rank in 0..self.ranks {
            push(
                &mut out,
                format!(
                    "{{\"ph\":\"M\",\"pid\":0,\"tid\":{rank},\"name\":\"thread_name\",\"args\":{{\"name\":\"rank {rank}\"}}}}"
                ),
            );
        }
        for e in &self.events {
            match *e {
                TraceEvent::Span {
                    rank,
                    name,
                    start_ns,
                    end_ns,
                } => push(
                    &mut out,
                    format!(
                        "{{\"ph\":\"X\",\"pid\":0,\"tid\":{rank},\"name\":\"{name}\",\"ts\":{},\"dur\":{}}}",
                        micros(start_ns),
                        micros(end_ns - start_ns)
                    ),
                ),
                TraceEvent::Message {
                    id,
                    from,
                    to,
                    sent_ns,
                    arrival_ns,
                    bytes,
                } => {
                    let mut s = String::new();
                    let _ = write!(
                        s,
                        "{{\"ph\":\"s\",\"pid\":0,\"tid\":{from},\"name\":\"message\",\"cat\":\"message\",\"id\":{id},\"ts\":{},\"args\":{{\"bytes\":{bytes},\"to\":{to}}}}}",
                        micros(sent_ns)
                    );
                    push(&mut out, s);
                    push(
                        &mut out,
                        format!(
                            "{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":0,\"tid\":{to},\"name\":\"message\",\"cat\":\"message\",\"id\":{id},\"ts\":{}}}",
                            micros(arrival_ns)
                        ),
                    );
                }
            }
        }
        out.push_str("\n]}\n");
        out
    }
}

/// Nanoseconds as microseconds with three decimals, exactly (no float rounding).
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}
