//! What a rank measures for `--report` and `--trace` (host time since the run's clock
//! started, `World::rank`), and how rank 0 merges the ranks' at the end of the run: each
//! rank's [`RankEnd`] as bytes, gathered over the control communicator.
//!
//! Measured only when asked ([`MpiRank::measure`](crate::MpiRank::measure)); otherwise a rank
//! holds no [`Measure`] and each site is one untaken branch.
//!
//! - Time: a wait lasts from the first poll that found it pending to the poll that found it
//!   over; a `compute` is its spin.
//! - Traffic: each message sent, by protocol as the sender's call says (`bsend` buffered,
//!   `rsend` ready, `ssend` rendezvous, a standard send eager up to mpsim's default eager
//!   threshold and rendezvous above: MPI does not say which protocol it chose); each message
//!   received, by the same threshold on its size (the receiver does not see the sender's
//!   mode); messages that arrived and no receive took, at the end.
//! - Trace: spans of waits and computes; each message's send time and the time its receive
//!   completed. Messages are paired by their order among those of the same sender,
//!   destination, context and tag, which MPI's non-overtaking rule keeps (and the backend's
//!   own matching on other contexts too).

use std::collections::HashMap;

use mpsim_proto::matching::{ContextId, Source, Tag};
use mpsim_proto::p2p::{Config, MessageCounts, Protocol};
use mpsim_proto::trace::{Trace, TraceEvent};

/// How many waits each rank keeps for the report's longest waits.
pub const LONGEST_WAITS: usize = 10;

/// One wait of a rank: its call, start, length, and what it waited for (when one request or
/// probe: call, peer, tag, context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The call it waited in.
    pub call: &'static str,
    /// Host ns since the run's start.
    pub since_ns: u64,
    /// How long.
    pub waited_ns: u64,
    /// What it waited for.
    pub awaited: Option<(&'static str, Source, Tag, ContextId)>,
}

/// What one rank measured, at its end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankEnd {
    /// When its program ended.
    pub finish_ns: u64,
    /// Time in `compute`.
    pub compute_ns: u64,
    /// Time blocked in waits.
    pub blocked_ns: u64,
    /// Messages sent, received, and arrived but never received.
    pub sent: MessageCounts,
    /// See `sent`.
    pub received: MessageCounts,
    /// See `sent`.
    pub unreceived: MessageCounts,
    /// Its longest waits, longest first.
    pub longest: Vec<Wait>,
    /// Its warnings.
    pub warnings: Vec<String>,
    /// Trace: spans `(name, start, end)`.
    pub spans: Vec<(&'static str, u64, u64)>,
    /// Trace: messages sent `(to, context, tag, time, bytes)`.
    pub sends: Vec<(u32, u64, i32, u64, u64)>,
    /// Trace: messages received `(from, context, tag, time)`.
    pub receives: Vec<(u32, u64, i32, u64)>,
}

/// A rank's measurements while it runs.
#[derive(Debug, Default)]
pub(crate) struct Measure {
    pub end: RankEnd,
    pub trace: bool,
    /// The wait under way: its call, start, and what it awaits.
    pub open: Option<(&'static str, u64, Option<Awaited>)>,
}

/// What a wait awaits: the call, source, tag and context of its receive.
pub(crate) type Awaited = (&'static str, Source, Tag, ContextId);

impl Measure {
    /// A wait from `start` to `end`.
    pub fn wait(&mut self, call: &'static str, start: u64, end: u64, awaited: Option<Awaited>) {
        let waited = end.saturating_sub(start);
        self.end.blocked_ns = self.end.blocked_ns.saturating_add(waited);
        if self.trace {
            self.end.spans.push((call, start, end));
        }
        let w = Wait {
            call,
            since_ns: start,
            waited_ns: waited,
            awaited,
        };
        let longest = &mut self.end.longest;
        let at = longest
            .iter()
            .position(|o| {
                (o.waited_ns, std::cmp::Reverse(o.since_ns)) < (waited, std::cmp::Reverse(start))
            })
            .unwrap_or(longest.len());
        if at < LONGEST_WAITS {
            longest.insert(at, w);
            longest.truncate(LONGEST_WAITS);
        }
    }

    /// A `compute` from `start` to `end`.
    pub fn compute(&mut self, start: u64, end: u64) {
        self.end.compute_ns = self
            .end
            .compute_ns
            .saturating_add(end.saturating_sub(start));
        if self.trace {
            self.end.spans.push(("compute", start, end));
        }
    }
}

/// The protocol a message of `bytes` counts under when nothing else says (see the module
/// docs).
pub(crate) fn by_size(bytes: usize) -> Protocol {
    if bytes <= Config::default().eager_threshold {
        Protocol::Eager
    } else {
        Protocol::Rendezvous
    }
}

impl RankEnd {
    /// As bytes, for the gather.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.u64(self.finish_ns);
        w.u64(self.compute_ns);
        w.u64(self.blocked_ns);
        for c in [&self.sent, &self.received, &self.unreceived] {
            for i in 0..4 {
                w.u64(c.messages[i]);
                w.u64(c.bytes[i]);
            }
        }
        w.u64(self.longest.len() as u64);
        for l in &self.longest {
            w.text(l.call);
            w.u64(l.since_ns);
            w.u64(l.waited_ns);
            match l.awaited {
                None => w.u64(0),
                Some((call, peer, tag, context)) => {
                    w.u64(1);
                    w.text(call);
                    w.u64(match peer {
                        Source::Rank(p) => u64::from(p),
                        Source::Any => u64::MAX,
                    });
                    w.u64(match tag {
                        Tag::Value(t) => t as u32 as u64,
                        Tag::Any => u64::MAX,
                    });
                    w.u64(context.0);
                }
            }
        }
        w.u64(self.warnings.len() as u64);
        for s in &self.warnings {
            w.text(s);
        }
        w.u64(self.spans.len() as u64);
        for &(name, a, b) in &self.spans {
            w.text(name);
            w.u64(a);
            w.u64(b);
        }
        w.u64(self.sends.len() as u64);
        for &(to, context, tag, time, bytes) in &self.sends {
            w.u64(u64::from(to));
            w.u64(context);
            w.u64(tag as u32 as u64);
            w.u64(time);
            w.u64(bytes);
        }
        w.u64(self.receives.len() as u64);
        for &(from, context, tag, time) in &self.receives {
            w.u64(u64::from(from));
            w.u64(context);
            w.u64(tag as u32 as u64);
            w.u64(time);
        }
        w.0
    }

    /// What [`RankEnd::encode`] wrote, if `bytes` is one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<RankEnd> {
        let mut r = Reader { bytes, at: 0 };
        let mut end = RankEnd {
            finish_ns: r.u64()?,
            compute_ns: r.u64()?,
            blocked_ns: r.u64()?,
            ..RankEnd::default()
        };
        for c in [&mut end.sent, &mut end.received, &mut end.unreceived] {
            for i in 0..4 {
                c.messages[i] = r.u64()?;
                c.bytes[i] = r.u64()?;
            }
        }
        for _ in 0..r.u64()? {
            let call = r.text()?;
            let since_ns = r.u64()?;
            let waited_ns = r.u64()?;
            let awaited = match r.u64()? {
                0 => None,
                _ => {
                    let call = r.text()?;
                    let peer = u32::try_from(r.u64()?).map_or(Source::Any, Source::Rank);
                    let tag = r.u64()?;
                    let tag = if tag == u64::MAX {
                        Tag::Any
                    } else {
                        Tag::Value(tag as u32 as i32)
                    };
                    Some((call, peer, tag, ContextId(r.u64()?)))
                }
            };
            end.longest.push(Wait {
                call,
                since_ns,
                waited_ns,
                awaited,
            });
        }
        for _ in 0..r.u64()? {
            end.warnings.push(r.owned()?);
        }
        for _ in 0..r.u64()? {
            end.spans.push((r.text()?, r.u64()?, r.u64()?));
        }
        for _ in 0..r.u64()? {
            end.sends.push((
                r.u64()? as u32,
                r.u64()?,
                r.u64()? as u32 as i32,
                r.u64()?,
                r.u64()?,
            ));
        }
        for _ in 0..r.u64()? {
            end.receives
                .push((r.u64()? as u32, r.u64()?, r.u64()? as u32 as i32, r.u64()?));
        }
        Some(end)
    }
}

/// The trace of a run whose ranks measured `ends` (by rank): every rank's spans, then its
/// messages, each sent one paired with its receive (module docs) or, never received, with
/// its start alone.
pub fn merge_trace(ends: &[RankEnd]) -> Trace {
    let mut events = Vec::new();
    for (rank, end) in ends.iter().enumerate() {
        for &(name, start_ns, end_ns) in &end.spans {
            events.push(TraceEvent::Span {
                rank: rank as u32,
                name,
                start_ns,
                end_ns: end_ns.max(start_ns),
                unfinished: false,
            });
        }
    }
    // The receives of each (from, to, context, tag), in order.
    let mut arrivals: HashMap<(u32, u32, u64, i32), std::collections::VecDeque<u64>> =
        HashMap::new();
    for (to, end) in ends.iter().enumerate() {
        for &(from, context, tag, time) in &end.receives {
            arrivals
                .entry((from, to as u32, context, tag))
                .or_default()
                .push_back(time);
        }
    }
    let mut id = 0;
    for (from, end) in ends.iter().enumerate() {
        for &(to, context, tag, sent_ns, bytes) in &end.sends {
            let arrival_ns = arrivals
                .get_mut(&(from as u32, to, context, tag))
                .and_then(|q| q.pop_front())
                .map(|t| t.max(sent_ns));
            events.push(TraceEvent::Message {
                id,
                from: from as u32,
                to,
                sent_ns,
                arrival_ns,
                bytes: bytes as usize,
            });
            id += 1;
        }
    }
    Trace::new("mpsim mpi", ends.len() as u32, events)
}

struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn text(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let part = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(part)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn owned(&mut self) -> Option<String> {
        let len = usize::try_from(self.u64()?).ok()?;
        Some(std::str::from_utf8(self.take(len)?).ok()?.to_owned())
    }

    fn text(&mut self) -> Option<&'static str> {
        let len = usize::try_from(self.u64()?).ok()?;
        Some(crate::watch::interned(
            std::str::from_utf8(self.take(len)?).ok()?,
        ))
    }
}
