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
//!   takes in (source, time after the pop), numbered per peer.
//!
//! No message id travels in a packet. A lane carries one ordered pair's packets in FIFO order,
//! so the k-th message `a` pushed to `b` is the k-th message `b` took in from `a`: both ends
//! number their messages per peer, and [`merge`] pairs them by number. A message never taken
//! in (the run ended first) keeps its start only.
//!
//! What is recorded follows the run's [`TraceFilter`] (its rules are the trace's): a rank
//! outside the set records no spans, and only the messages it exchanges with ranks in the
//! set; spans are clipped to the window as they end. A message's two ends are recorded by two
//! threads, neither of which knows the other's time, so each keeps what may be in the window:
//! a send after the window is dropped (its arrival is later still), an arrival before it too
//! (its send is earlier still). Sends before the window are kept for their arrival, per peer
//! the last [`EDGE_MESSAGES`] only, and arrivals after it for their send, per peer the first
//! [`EDGE_MESSAGES`] only (FIFO: the messages in flight across an edge are those); a trace
//! of a window thus takes memory for the window, not the run, and misses a message only
//! where more than that many were in flight between two ranks across an edge. [`merge`]
//! then keeps those the filter keeps.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use mpsim_proto::error::Error;
use mpsim_proto::p2p::ReqId;
use mpsim_proto::trace::{Trace, TraceEvent, TraceFilter};

/// The trace's process name: viewers show it above the rank tracks.
const PROCESS_NAME: &str = "mpsim threads";

/// Messages per peer kept at a window's edges for their other end (module doc).
pub(crate) const EDGE_MESSAGES: usize = 1024;

/// One rank's records, owned by its thread (no lock, no atomic).
#[derive(Debug)]
pub(crate) struct RankTrace {
    rank: u32,
    filter: Arc<TraceFilter>,
    /// Finished spans: `(name, start, end)`.
    spans: Vec<(&'static str, u64, u64)>,
    /// Messages pushed: `(to, number, time, bytes)`, in push order.
    sent: Vec<(u32, u64, u64, usize)>,
    /// Messages taken in: `(from, number, time)`, in pop order.
    taken: Vec<(u32, u64, u64)>,
    /// By peer: the messages exchanged with it so far, and those at the window's edges.
    peers: HashMap<u32, Peer>,
    /// The blocking wait in progress: `(call, request, since)`.
    open: Option<(&'static str, Option<ReqId>, u64)>,
    /// Records dropped because the memory to keep them could not be had ([`keep`]).
    lost: u64,
}

/// What a rank keeps about one peer.
#[derive(Debug, Default)]
struct Peer {
    /// Messages pushed to it so far (the next one's number).
    sent: u64,
    /// Messages taken in from it so far.
    taken: u64,
    /// The last sends to it before the window: `(number, time, bytes)`.
    early: VecDeque<(u64, u64, usize)>,
    /// Arrivals from it after the window recorded so far.
    late: usize,
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
    /// The records of `rank`, under `filter`.
    pub fn new(rank: u32, filter: Arc<TraceFilter>) -> Self {
        RankTrace {
            rank,
            filter,
            spans: Vec::new(),
            sent: Vec::new(),
            taken: Vec::new(),
            peers: HashMap::new(),
            open: None,
            lost: 0,
        }
    }

    /// The records so far, leaving none.
    pub fn take(&mut self) -> RankTrace {
        let empty = RankTrace::new(self.rank, Arc::clone(&self.filter));
        std::mem::replace(self, empty)
    }

    /// A span of `name` from `start` to `end`, clipped to the window (an empty one is
    /// dropped, as the simulator does).
    pub fn span(&mut self, name: &'static str, start: u64, end: u64) {
        if let Some((start, end)) = self.filter.clip(self.rank, start, end) {
            keep(&mut self.spans, (name, start, end), &mut self.lost);
        }
    }

    /// Whether messages between this rank and `peer` are recorded.
    fn traces_lane(&self, peer: u32) -> bool {
        self.filter.traces(self.rank) || self.filter.traces(peer)
    }

    /// A message pushed to `to` at `at`.
    pub fn sent(&mut self, to: u32, at: u64, bytes: usize) {
        if !self.traces_lane(to) {
            return;
        }
        let peer = self.peers.entry(to).or_default();
        let number = peer.sent;
        peer.sent += 1;
        if at > self.filter.to_ns {
            return;
        }
        if at < self.filter.from_ns {
            if peer.early.len() == EDGE_MESSAGES {
                peer.early.pop_front();
            }
            peer.early.push_back((number, at, bytes));
            return;
        }
        keep(&mut self.sent, (to, number, at, bytes), &mut self.lost);
    }

    /// A message from `from` taken in at `at`.
    pub fn taken(&mut self, from: u32, at: u64) {
        if !self.traces_lane(from) {
            return;
        }
        let peer = self.peers.entry(from).or_default();
        let number = peer.taken;
        peer.taken += 1;
        if at < self.filter.from_ns {
            return;
        }
        if at > self.filter.to_ns {
            if peer.late == EDGE_MESSAGES {
                return;
            }
            peer.late += 1;
        }
        keep(&mut self.taken, (from, number, at), &mut self.lost);
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

    /// The sends kept before the window, with the others.
    fn with_early_sends(&mut self) {
        let mut peers: Vec<_> = self.peers.iter_mut().collect();
        peers.sort_unstable_by_key(|(to, _)| **to);
        for (&to, peer) in peers {
            for (number, at, bytes) in std::mem::take(&mut peer.early) {
                keep(&mut self.sent, (to, number, at, bytes), &mut self.lost);
            }
        }
    }
}

/// The ranks' records (indexed by rank) as one trace under `filter`: spans and messages in
/// order of their start (ties by rank), messages numbered from 1 in that order. An error when
/// records were lost for want of memory, or the trace cannot be put together for the same
/// reason: the trace then holds what could be kept, or nothing.
pub(crate) fn merge(mut ranks: Vec<RankTrace>, filter: &TraceFilter) -> (Trace, Option<Error>) {
    for r in &mut ranks {
        r.with_early_sends();
    }
    let lost: u64 = ranks.iter().map(|r| r.lost).sum();
    let records: usize = ranks.iter().map(|r| r.spans.len() + r.sent.len()).sum();
    let n = ranks.len() as u32;
    let mut events = Vec::new();
    if events.try_reserve_exact(records).is_err() {
        let error = Error::NoMemory {
            what: format!(
                "the trace's {records} records do not fit in memory together; no trace is \
                 written. Trace a shorter run"
            ),
        };
        return (
            Trace::new(PROCESS_NAME, n, Vec::new()).with_filter(filter.clone()),
            Some(error),
        );
    }
    let error = (lost > 0).then(|| Error::NoMemory {
        what: format!(
            "{lost} trace records were dropped for want of memory; the trace written misses \
             them. Trace a shorter run"
        ),
    });
    let trace = merge_into(ranks, events, filter).with_filter(filter.clone());
    (trace, error)
}

/// [`merge`] into `events`, which has room for every record.
fn merge_into(ranks: Vec<RankTrace>, mut events: Vec<TraceEvent>, filter: &TraceFilter) -> Trace {
    // Arrival times by ordered pair and number.
    let mut arrivals: HashMap<(u32, u32, u64), u64> = HashMap::new();
    for (to, r) in (0u32..).zip(&ranks) {
        for &(from, number, at) in &r.taken {
            arrivals.insert((from, to, number), at);
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
        events.extend(r.sent.iter().filter_map(|&(to, number, sent_ns, bytes)| {
            let arrival_ns = arrivals.get(&(rank, to, number)).copied();
            filter
                .keeps_message(rank, to, sent_ns, arrival_ns)
                .then_some(TraceEvent::Message {
                    id: 0,
                    from: rank,
                    to,
                    sent_ns,
                    arrival_ns,
                    bytes,
                })
        }));
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

    /// Rank `rank`'s records under `filter`.
    fn rank(rank: u32, filter: &TraceFilter) -> RankTrace {
        RankTrace::new(rank, Arc::new(filter.clone()))
    }

    fn msg(
        id: u64,
        from: u32,
        to: u32,
        sent_ns: u64,
        arrival_ns: Option<u64>,
        bytes: usize,
    ) -> TraceEvent {
        TraceEvent::Message {
            id,
            from,
            to,
            sent_ns,
            arrival_ns,
            bytes,
        }
    }

    /// Two messages 0 -> 1 and one 1 -> 0: arrivals pair with sends by lane and order; the
    /// last one never arrived.
    #[test]
    fn merge_pairs_the_kth_send_with_the_kth_arrival_per_lane() {
        let all = TraceFilter::default();
        let mut r0 = rank(0, &all);
        r0.sent(1, 10, 8);
        r0.taken(1, 45);
        r0.sent(1, 20, 16);
        r0.span("compute", 50, 60);
        let mut r1 = rank(1, &all);
        r1.taken(0, 15);
        r1.sent(0, 40, 4);
        r1.taken(0, 30);
        r1.sent(0, 70, 4);
        let (t, error) = merge(vec![r0, r1], &all);
        assert!(error.is_none());
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
        let mut t = rank(0, &TraceFilter::default());
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
        let mut r0 = rank(0, &TraceFilter::default());
        r0.span("compute", 5, 10);
        r0.lost = 3;
        let (t, error) = merge(vec![r0], &TraceFilter::default());
        assert_eq!(t.len(), 1);
        match error {
            Some(Error::NoMemory { what }) => {
                assert!(what.starts_with("3 trace records were dropped"), "{what}")
            }
            other => panic!("expected NoMemory, got {other:?}"),
        }
    }

    /// Under a window and a set of ranks, each end keeps what may be in the window, and the
    /// merge keeps what the filter keeps: the messages sent or arriving in the window with a
    /// traced end, paired by number though earlier ones were dropped.
    #[test]
    fn a_window_keeps_messages_sent_or_arriving_in_it() {
        let filter = TraceFilter {
            from_ns: 100,
            to_ns: 200,
            ranks: Some("0-1".parse().unwrap()),
        };
        let (mut r0, mut r1, mut r2) = (rank(0, &filter), rank(1, &filter), rank(2, &filter));
        // 0 -> 1: before the window (dropped), across its start, inside, across its end,
        // after it (dropped).
        for (sent, taken) in [(10, 20), (90, 110), (150, 160), (190, 250), (300, 310)] {
            r0.sent(1, sent, 4);
            r1.taken(0, taken);
        }
        // 2 (untraced) -> 1 in the window: kept; 2 -> 2's own peer 3: nothing recorded.
        r2.sent(1, 120, 8);
        r1.taken(2, 130);
        r2.sent(3, 120, 8);
        r0.span("recv", 50, 150);
        r2.span("recv", 50, 150);
        assert!(r2.spans.is_empty() && !r2.peers.contains_key(&3));
        assert_eq!((r0.sent.len(), r1.taken.len()), (2, 5), "edges aside");
        let (t, error) = merge(vec![r0, r1, r2], &filter);
        assert!(error.is_none());
        assert_eq!(
            t.events(),
            [
                msg(1, 0, 1, 90, Some(110), 4),
                TraceEvent::Span {
                    rank: 0,
                    name: "recv",
                    start_ns: 100,
                    end_ns: 150,
                    unfinished: false,
                },
                msg(2, 2, 1, 120, Some(130), 8),
                msg(3, 0, 1, 150, Some(160), 4),
                msg(4, 0, 1, 190, Some(250), 4),
            ]
        );
        assert_eq!(t.tracks().collect::<Vec<_>>(), [0, 1, 2]);
    }

    /// Sends before the window are kept per peer up to [`EDGE_MESSAGES`], the last ones:
    /// those in flight at its start.
    #[test]
    fn sends_before_the_window_keep_the_last_per_peer() {
        let filter = TraceFilter {
            from_ns: 1_000_000,
            ..TraceFilter::default()
        };
        let mut r0 = rank(0, &filter);
        for t in 0..10 * EDGE_MESSAGES as u64 {
            r0.sent(1, t, 1);
        }
        assert!(r0.sent.is_empty());
        let early = &r0.peers[&1].early;
        assert_eq!(early.len(), EDGE_MESSAGES);
        assert_eq!(early[0].0, 9 * EDGE_MESSAGES as u64);
    }
}
