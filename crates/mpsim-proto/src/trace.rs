//! A run's trace as data, and its writers: Chrome trace-event JSON (opens in Perfetto and
//! `chrome://tracing`, and `mpsim plot` draws it) and Perfetto's protobuf format ([`perfetto`]:
//! about 40% of the JSON's size, for Perfetto only).
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
//!
//! A trace may keep only part of a run ([`TraceFilter`]: a window of time, a set of ranks);
//! it then has tracks for the ranks traced and for the other ends of their messages only.

mod filter;
pub mod perfetto;

use std::collections::BTreeSet;
use std::fmt;
use std::io::{self, Write as _};

pub use filter::{RankSet, TraceFilter};

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
    /// What the events were recorded under (the default: everything).
    filter: TraceFilter,
}

/// The size of a JSON trace as written ([`Trace::write_chrome_json_sized`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonSize {
    /// Bytes written.
    pub bytes: u64,
    /// Events (spans and messages) written wholly or partly past the limit given.
    pub events_past_limit: u64,
}

impl Trace {
    /// The largest JSON trace `mpsim plot` reads (it reads a trace whole): 4 GiB.
    pub const PLOT_MAX_BYTES: u64 = 4 << 30;

    /// A trace of `ranks` ranks holding `events` (written in this order), under the process
    /// name `process` (`mpsim sim`, `mpsim threads`).
    pub fn new(process: &'static str, ranks: u32, events: Vec<TraceEvent>) -> Self {
        Trace {
            process,
            ranks,
            events,
            filter: TraceFilter::default(),
        }
    }

    /// Notes that the events were recorded under `filter` (the backend applied it as it
    /// recorded): the writers then give tracks only to the ranks traced and to the other ends
    /// of their messages.
    pub fn with_filter(mut self, filter: TraceFilter) -> Self {
        self.filter = filter;
        self
    }

    /// This trace as if recorded under `filter` (the rules of [`TraceFilter`]): spans clipped
    /// to the window, messages kept by their ends, renumbered from 1 in order. For a trace
    /// recorded whole because something else needed all of it.
    ///
    /// ```
    /// use mpsim_proto::trace::{Trace, TraceEvent, TraceFilter};
    ///
    /// let span = |rank, start_ns, end_ns| TraceEvent::Span { rank, name: "recv", start_ns, end_ns, unfinished: false };
    /// let t = Trace::new("mpsim test", 2, vec![span(0, 0, 50), span(1, 40, 90)]);
    /// let window = TraceFilter { from_ns: 45, to_ns: 100, ranks: Some("1".parse().unwrap()) };
    /// assert_eq!(t.filtered(window).events(), [span(1, 45, 90)]);
    /// ```
    pub fn filtered(self, filter: TraceFilter) -> Trace {
        let mut events = self.events;
        let mut id = 0;
        events.retain_mut(|e| match e {
            TraceEvent::Span {
                rank,
                start_ns,
                end_ns,
                ..
            } => match filter.clip(*rank, *start_ns, *end_ns) {
                Some((start, end)) => {
                    (*start_ns, *end_ns) = (start, end);
                    true
                }
                None => false,
            },
            TraceEvent::Message {
                id: m,
                from,
                to,
                sent_ns,
                arrival_ns,
                ..
            } => {
                let kept = filter.keeps_message(*from, *to, *sent_ns, *arrival_ns);
                if kept {
                    id += 1;
                    *m = id;
                }
                kept
            }
        });
        Trace {
            process: self.process,
            ranks: self.ranks,
            events,
            filter,
        }
    }

    /// What the events were recorded under.
    pub fn filter(&self) -> &TraceFilter {
        &self.filter
    }

    /// The ranks that have a track, in increasing order: every rank, or under a set of ranks
    /// ([`TraceFilter::ranks`]) those of the set and the other ends of their messages.
    pub fn tracks(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        let Some(set) = &self.filter.ranks else {
            return Box::new(0..self.ranks);
        };
        let mut ends = BTreeSet::new();
        for e in &self.events {
            if let TraceEvent::Message { from, to, .. } = *e {
                for end in [from, to] {
                    if !set.contains(end) {
                        ends.insert(end);
                    }
                }
            }
        }
        let set = set.iter().filter(|&r| r < self.ranks);
        let mut merged: Vec<u32> = set.chain(ends).collect();
        merged.sort_unstable();
        Box::new(merged.into_iter())
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
    pub fn write_chrome_json(&self, out: impl io::Write) -> io::Result<()> {
        self.write_chrome_json_sized(out, u64::MAX).map(|_| ())
    }

    /// [`Trace::write_chrome_json`], counting the bytes written and the events that end past
    /// `limit` bytes (with [`Trace::PLOT_MAX_BYTES`]: those `mpsim plot` could not read).
    pub fn write_chrome_json_sized(&self, out: impl io::Write, limit: u64) -> io::Result<JsonSize> {
        let mut out = Counting {
            inner: out,
            bytes: 0,
        };
        let mut past = 0;
        let process = self.process;
        write!(
            out,
            "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n\
             {{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"{process}\"}}}}"
        )?;
        for rank in self.tracks() {
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
            past += u64::from(out.bytes > limit);
        }
        out.write_all(b"\n]}\n")?;
        Ok(JsonSize {
            bytes: out.bytes,
            events_past_limit: past,
        })
    }

    /// Writes the trace in Perfetto's protobuf format ([`perfetto`]) to `out`: about 40%
    /// of the JSON's size, opened by Perfetto (not by `mpsim plot`). Streamed; give it a
    /// buffered writer.
    pub fn write_perfetto(&self, out: impl io::Write) -> io::Result<()> {
        perfetto::write(self, out)
    }
}

/// A writer that counts the bytes it passes on.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: io::Write> io::Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
        let mut out = Vec::new();
        let size = t.write_chrome_json_sized(&mut out, u64::MAX).unwrap();
        assert_eq!(size.bytes, want.len() as u64);
        assert_eq!(size.events_past_limit, 0);
        // The limit falls inside the second event: it and the third are past it.
        let second = want.find("\n{\"ph\":\"s\"").unwrap() as u64;
        let size = t.write_chrome_json_sized(io::sink(), second + 5).unwrap();
        assert_eq!(size.events_past_limit, 2);
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
