//! Tracing a real run: what each rank records on its own thread, in host time, and how the
//! records become one [`Trace`] at the end of the run.
//!
//! Recorded only when a trace was asked for (`Options::trace`); otherwise a rank holds no
//! [`RankTrace`] and each recording site is one untaken branch (`block_on` picks its traced
//! loop once per run, not per poll). Times are nanoseconds since the run's start
//! (`Shared::start`), read with `Instant`, which is monotonic across threads.
//!
//! What a rank records:
//! - a span per blocking wait, named after the call (`recv`, `send`, `wait_all`, `probe`, …):
//!   from the end of the poll in which the rank found it must wait to the start of the poll in
//!   which it no longer waits there (`block_on`). A wait is identified by its call and request;
//!   request handles carry a generation, so two waits never share an identity. Waits with no
//!   request (blocking probe, `buffer_detach`) end when the runtime reports them ready;
//! - a `compute` span per explicit `compute` / `compute_flops`;
//! - each `Packet::Message` it pushes (destination, time before the push, size) and each it
//!   takes in (source, time after the pop).
//!
//! No message id travels in a packet. A lane carries one ordered pair's packets in FIFO order,
//! so the k-th message `a` pushed to `b` is the k-th message `b` took in from `a`; [`merge`]
//! pairs them that way. A message never taken in (the run ended first) keeps its start only.

use std::collections::{BTreeMap, VecDeque};

use mpsim_proto::error::Error;
use mpsim_proto::p2p::ReqId;
use mpsim_proto::trace::{Trace, TraceEvent};

/// The trace's process name: viewers show it above the rank tracks.
const PROCESS_NAME: &str = "mpsim threads";

/// One rank's records, owned by its thread (no lock, no atomic).
#[derive(Debug, Default)]
pub(crate) struct RankTrace {
    /// Finished spans: `(name, start, end)`.
    spans: Vec<(&'static str, u64, u64)>,
    /// Messages pushed: `(to, time, bytes)`, in push order.
    sent: Vec<(u32, u64, usize)>,
    /// Messages taken in: `(from, time)`, in pop order.
    taken: Vec<(u32, u64)>,
    /// The blocking wait in progress: `(call, request, since)`.
    open: Option<(&'static str, Option<ReqId>, u64)>,
    /// Records dropped because the memory to keep them could not be had ([`keep`]).
    lost: u64,
}

/// Pushes `record` onto `records`, growing it fallibly: a trace is held until the run ends and
/// grows by doubling, one block twice its size, which a process under a memory limit may be
/// refused (the allocator would then abort the whole process). A record that does not fit is
/// counted in `lost` instead; the run reports it at its end ([`merge`]).
fn keep<T>(records: &mut Vec<T>, record: T, lost: &mut u64) {
    if records.len() == records.capacity() && records.try_reserve(1).is_err() {
        *lost += 1;
        return;
    }
    records.push(record);
}

impl RankTrace {
    /// A span of `name` from `start` to `end` (an empty one is dropped, as the simulator does).
    pub fn span(&mut self, name: &'static str, start: u64, end: u64) {
        if end > start {
            keep(&mut self.spans, (name, start, end), &mut self.lost);
        }
    }

    /// A message pushed to `to` at `at`.
    pub fn sent(&mut self, to: u32, at: u64, bytes: usize) {
        keep(&mut self.sent, (to, at, bytes), &mut self.lost);
    }

    /// A message from `from` taken in at `at`.
    pub fn taken(&mut self, from: u32, at: u64) {
        keep(&mut self.taken, (from, at), &mut self.lost);
    }

    /// After a poll of the rank's program that started at `polled_at` and left the rank
    /// `waiting` in a call (or not): the wait in progress, if it is not that one, ended when
    /// the poll started; a new wait starts at `now()`.
    pub fn after_poll(
        &mut self,
        polled_at: u64,
        waiting: Option<(&'static str, Option<ReqId>)>,
        now: impl FnOnce() -> u64,
    ) {
        if let Some((call, req, since)) = self.open {
            if waiting == Some((call, req)) {
                return;
            }
            self.open = None;
            self.span(call, since, polled_at);
        }
        if let Some((call, req)) = waiting {
            self.open = Some((call, req, now()));
        }
    }

    /// The wait in progress ended at `at` (a wait with no request, found ready).
    pub fn wait_ended(&mut self, at: u64) {
        if let Some((call, _, since)) = self.open.take() {
            self.span(call, since, at);
        }
    }
}

/// The ranks' records (indexed by rank) as one trace: spans and messages in order of their
/// start (ties by rank), messages numbered from 1 in that order. An error when records were
/// lost for want of memory, or the trace cannot be put together for the same reason: the
/// trace then holds what could be kept, or nothing.
pub(crate) fn merge(ranks: Vec<RankTrace>) -> (Trace, Option<Error>) {
    let lost: u64 = ranks.iter().map(|r| r.lost).sum();
    let records: usize = ranks.iter().map(|r| r.spans.len() + r.sent.len()).sum();
    let mut events = Vec::new();
    if events.try_reserve_exact(records).is_err() {
        let error = Error::NoMemory {
            what: format!(
                "the trace's {records} records do not fit in memory together; no trace is \
                 written. Trace a shorter run"
            ),
        };
        return (
            Trace::new(PROCESS_NAME, ranks.len() as u32, Vec::new()),
            Some(error),
        );
    }
    let error = (lost > 0).then(|| Error::NoMemory {
        what: format!(
            "{lost} trace records were dropped for want of memory; the trace written misses \
             them. Trace a shorter run"
        ),
    });
    (merge_into(ranks, events), error)
}

/// [`merge`] into `events`, which has room for every record.
fn merge_into(ranks: Vec<RankTrace>, mut events: Vec<TraceEvent>) -> Trace {
    // Arrival times per ordered pair, in FIFO order.
    let mut arrivals: BTreeMap<(u32, u32), VecDeque<u64>> = BTreeMap::new();
    for (to, r) in (0u32..).zip(&ranks) {
        for &(from, at) in &r.taken {
            arrivals.entry((from, to)).or_default().push_back(at);
        }
    }
    for (rank, r) in (0u32..).zip(&ranks) {
        events.extend(
            r.spans
                .iter()
                .map(|&(name, start_ns, end_ns)| TraceEvent::Span {
                    rank,
                    name,
                    start_ns,
                    end_ns,
                    unfinished: false,
                }),
        );
        events.extend(
            r.sent
                .iter()
                .map(|&(to, sent_ns, bytes)| TraceEvent::Message {
                    id: 0,
                    from: rank,
                    to,
                    sent_ns,
                    arrival_ns: arrivals.get_mut(&(rank, to)).and_then(VecDeque::pop_front),
                    bytes,
                }),
        );
    }
    events.sort_by_key(|e| match *e {
        TraceEvent::Span { rank, start_ns, .. } => (start_ns, rank),
        TraceEvent::Message { from, sent_ns, .. } => (sent_ns, from),
    });
    let mut next = 0;
    for e in &mut events {
        if let TraceEvent::Message { id, .. } = e {
            next += 1;
            *id = next;
        }
    }
    Trace::new(PROCESS_NAME, ranks.len() as u32, events)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two messages 0 -> 1 and one 1 -> 0: arrivals pair with sends by lane and order; the
    /// last one never arrived.
    #[test]
    fn merge_pairs_the_kth_send_with_the_kth_arrival_per_lane() {
        let mut r0 = RankTrace::default();
        r0.sent(1, 10, 8);
        r0.taken(1, 45);
        r0.sent(1, 20, 16);
        r0.span("compute", 50, 60);
        let mut r1 = RankTrace::default();
        r1.taken(0, 15);
        r1.sent(0, 40, 4);
        r1.taken(0, 30);
        r1.sent(0, 70, 4);
        let (t, error) = merge(vec![r0, r1]);
        assert!(error.is_none());
        let msg = |id, from, to, sent_ns, arrival_ns, bytes| TraceEvent::Message {
            id,
            from,
            to,
            sent_ns,
            arrival_ns,
            bytes,
        };
        assert_eq!(
            t.events(),
            [
                msg(1, 0, 1, 10, Some(15), 8),
                msg(2, 0, 1, 20, Some(30), 16),
                msg(3, 1, 0, 40, Some(45), 4),
                TraceEvent::Span {
                    rank: 0,
                    name: "compute",
                    start_ns: 50,
                    end_ns: 60,
                    unfinished: false,
                },
                msg(4, 1, 0, 70, None, 4),
            ]
        );
        assert_eq!((t.process(), t.ranks()), ("mpsim threads", 2));
    }

    /// A wait stays open while the rank is blocked in the same call on the same request, and
    /// ends when a poll starts in which it is not.
    #[test]
    fn a_wait_spans_from_blocking_to_the_poll_that_passes_it() {
        let mut t = RankTrace::default();
        let wait = Some(("recv", None));
        t.after_poll(0, wait, || 5);
        t.after_poll(10, wait, || unreachable!("still the same wait"));
        t.after_poll(20, Some(("send", None)), || 25);
        t.after_poll(30, None, || unreachable!("not waiting"));
        t.after_poll(40, Some(("probe", None)), || 41);
        t.wait_ended(50);
        t.after_poll(60, None, || unreachable!());
        assert_eq!(
            t.spans,
            [("recv", 5, 20), ("send", 25, 30), ("probe", 41, 50)]
        );
    }

    /// Records a rank could not keep (the memory for them was refused) make the run's error,
    /// with the trace of the rest.
    #[test]
    fn records_lost_for_want_of_memory_are_an_error_with_the_rest_kept() {
        let mut r0 = RankTrace::default();
        r0.span("compute", 5, 10);
        r0.lost = 3;
        let (t, error) = merge(vec![r0]);
        assert_eq!(t.len(), 1);
        match error {
            Some(Error::NoMemory { what }) => {
                assert!(what.starts_with("3 trace records were dropped"), "{what}")
            }
            other => panic!("expected NoMemory, got {other:?}"),
        }
    }
}
