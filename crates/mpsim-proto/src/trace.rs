//! A run's trace as data, and its writer: Chrome trace-event JSON (opens in Perfetto and
//! `chrome://tracing`).
//!
//! Why here: every backend writes the same format, so the type and the writer are shared; each
//! backend fills a [`Trace`] in its own time base (virtual time under the simulator, host time
//! since the run's start under real backends). Like the rest of this crate it reads no clock
//! and opens no file: times are fields, and the writer writes to whatever `io::Write` the
//! backend gives it.
//!
//! The document has one process (named after the backend, e.g. `mpsim sim`) and one track per
//! rank (`tid` = rank): a complete (`X`) slice per [`TraceEvent::Span`], and per
//! [`TraceEvent::Message`] a flow start (`s`) on the sender's track and a flow end (`f`) on the
//! receiver's, sharing the message's id (an arrow in the viewers). Events are written in the
//! order given, so the same `Trace` gives the same bytes. A span the rank was still in when the
//! run stopped (a deadlock, an error, an interrupt) ends at the stop and says so in its
//! `args` (`"unfinished":true`).

use std::fmt;
use std::io;

/// One recorded event. Times are nanoseconds since the run's start, in the backend's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A span on a rank's track, named after what the rank did (`compute`, `poll`, or the
    /// blocking call it waited in: `recv`, `wait_all`, …). `end_ns` is not before `start_ns`.
    Span {
        /// The rank.
        rank: u32,
        /// What the rank did.
        name: &'static str,
        /// Start.
        start_ns: u64,
        /// End: for an unfinished span, where the run stopped.
        end_ns: u64,
        /// The rank was still in it when the run stopped (a call blocked in a deadlock, a
        /// wait under way at an error or an interrupt): it ends at the stop, not because the
        /// rank left it. Written as `"args":{"unfinished":true}`.
        unfinished: bool,
    },
    /// A message: sent by `from` at `sent_ns`, arriving at `to` at `arrival_ns`.
    Message {
        /// Unique among the trace's messages: pairs the arrow's two ends.
        id: u64,
        /// Sending rank.
        from: u32,
        /// Receiving rank.
        to: u32,
        /// Send time, on the sender.
        sent_ns: u64,
        /// Arrival time, on the receiver; `None` for a message that never arrived while the
        /// trace was recorded (a real run that ended with it still queued): only its start is
        /// written.
        arrival_ns: Option<u64>,
        /// Payload length.
        bytes: usize,
    },
}

/// A recorded run, ready to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    process: &'static str,
    ranks: u32,
    events: Vec<TraceEvent>,
}

impl Trace {
    /// A trace of `ranks` ranks holding `events` (written in this order), under the process
    /// name `process` (`mpsim sim`, `mpsim threads`).
    pub fn new(process: &'static str, ranks: u32, events: Vec<TraceEvent>) -> Self {
        Trace {
            process,
            ranks,
            events,
        }
    }

    /// The process name the viewers show.
    pub fn process(&self) -> &'static str {
        self.process
    }

    /// Number of ranks (tracks).
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// The recorded events, in the order they are written.
    pub fn events(&self) -> &[TraceEvent] {
        &self.events
    }

    /// Number of recorded events (spans and messages).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The trace as Chrome trace-event JSON (what [`Trace::write_chrome_json`] writes), in
    /// memory: for tests and small traces.
    pub fn to_chrome_json(&self) -> String {
        let mut out = Vec::new();
        self.write_chrome_json(&mut out)
            .expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("the writer writes UTF-8")
    }

    /// Writes the trace as Chrome trace-event JSON to `out`, one event per line. Times are
    /// microseconds with nanosecond digits. Streamed, so that a trace of millions of events
    /// needs no text of its size in memory; give it a buffered writer.
    pub fn write_chrome_json(&self, mut out: impl io::Write) -> io::Result<()> {
        let process = self.process;
        write!(
            out,
            "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n\
             {{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"{process}\"}}}}"
        )?;
        for rank in 0..self.ranks {
            write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{rank},\"name\":\"thread_name\",\"args\":{{\"name\":\"rank {rank}\"}}}}"
            )?;
        }
        for e in &self.events {
            match *e {
                TraceEvent::Span {
                    rank,
                    name,
                    start_ns,
                    end_ns,
                    unfinished,
                } => {
                    write!(
                        out,
                        ",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{rank},\"name\":\"{name}\",\"ts\":{},\"dur\":{}",
                        Micros(start_ns),
                        Micros(end_ns.saturating_sub(start_ns))
                    )?;
                    if unfinished {
                        out.write_all(b",\"args\":{\"unfinished\":true}")?;
                    }
                    out.write_all(b"}")?;
                }
                TraceEvent::Message {
                    id,
                    from,
                    to,
                    sent_ns,
                    arrival_ns,
                    bytes,
                } => {
                    write!(
                        out,
                        ",\n{{\"ph\":\"s\",\"pid\":0,\"tid\":{from},\"name\":\"message\",\"cat\":\"message\",\"id\":{id},\"ts\":{},\"args\":{{\"bytes\":{bytes},\"to\":{to}}}}}",
                        Micros(sent_ns)
                    )?;
                    if let Some(arrival_ns) = arrival_ns {
                        write!(
                            out,
                            ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":0,\"tid\":{to},\"name\":\"message\",\"cat\":\"message\",\"id\":{id},\"ts\":{}}}",
                            Micros(arrival_ns)
                        )?;
                    }
                }
            }
        }
        out.write_all(b"\n]}\n")
    }
}

/// Nanoseconds shown as microseconds with three decimals, exactly (no float rounding).
struct Micros(u64);

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_process_tracks_spans_and_arrows() {
        let t = Trace::new(
            "mpsim test",
            2,
            vec![
                TraceEvent::Span {
                    rank: 1,
                    name: "recv",
                    start_ns: 1_500,
                    end_ns: 2_001,
                    unfinished: false,
                },
                TraceEvent::Message {
                    id: 1,
                    from: 0,
                    to: 1,
                    sent_ns: 1_600,
                    arrival_ns: Some(2_000),
                    bytes: 8,
                },
                TraceEvent::Message {
                    id: 2,
                    from: 1,
                    to: 0,
                    sent_ns: 2_100,
                    arrival_ns: None,
                    bytes: 0,
                },
            ],
        );
        let want = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[
{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"mpsim test\"}},
{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"rank 0\"}},
{\"ph\":\"M\",\"pid\":0,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"rank 1\"}},
{\"ph\":\"X\",\"pid\":0,\"tid\":1,\"name\":\"recv\",\"ts\":1.500,\"dur\":0.501},
{\"ph\":\"s\",\"pid\":0,\"tid\":0,\"name\":\"message\",\"cat\":\"message\",\"id\":1,\"ts\":1.600,\"args\":{\"bytes\":8,\"to\":1}},
{\"ph\":\"f\",\"bp\":\"e\",\"pid\":0,\"tid\":1,\"name\":\"message\",\"cat\":\"message\",\"id\":1,\"ts\":2.000},
{\"ph\":\"s\",\"pid\":0,\"tid\":1,\"name\":\"message\",\"cat\":\"message\",\"id\":2,\"ts\":2.100,\"args\":{\"bytes\":0,\"to\":0}}
]}
";
        assert_eq!(t.to_chrome_json(), want);
    }

    /// A span still under way at the stop says so in its args; viewers show them as the span's
    /// details.
    #[test]
    fn an_unfinished_span_is_marked_in_its_args() {
        let t = Trace::new(
            "mpsim test",
            1,
            vec![TraceEvent::Span {
                rank: 0,
                name: "ssend",
                start_ns: 0,
                end_ns: 2_000,
                unfinished: true,
            }],
        );
        let json = t.to_chrome_json();
        assert!(
            json.contains(
                "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"ssend\",\"ts\":0.000,\"dur\":2.000,\"args\":{\"unfinished\":true}}\n]}"
            ),
            "{json}"
        );
    }
}
