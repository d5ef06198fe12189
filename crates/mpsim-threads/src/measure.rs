//! What a real run measures for its end-of-run report (`Options::measure`): per rank, the host
//! time in `compute` and blocked in waits, and its longest waits with what each waited for.
//!
//! Kept apart from the trace (`trace`): a trace may keep only part of a run and holds a record
//! per event, while the report's figures are of the whole run and take a few counters per rank.
//! Both see the same waits: a wait lasts from the end of the poll in which the rank found it
//! must wait to the start of the poll in which it no longer waits there (`block_on`), or, for
//! a wait with no request, until the runtime reports it ready.
//!
//! Of its waits each rank keeps the [`LONGEST_WAITS`] longest (longer first, then earlier), so
//! that the run's longest are among them; what a wait on one request waited for is read from
//! the endpoint when the wait begins, while the request is there.

use mpsim_proto::matching::{ContextId, Source, Tag};
use mpsim_proto::p2p::{MessageCounts, ReqId};

/// How many waits each rank keeps, and the run lists (as many as the simulator's report).
pub const LONGEST_WAITS: usize = 10;

/// What a wait on one request waited for: the request's call (`recv`, `ssend`, ...; a
/// communicator call's own name), peer as a world rank, tag and communicator context.
pub type Awaited = (&'static str, Source, Tag, ContextId);

/// One blocking wait of a rank, host ns since the run's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasuredWait {
    /// World rank that waited.
    pub rank: u32,
    /// The call it waited in (`recv`, `wait`, `probe`, ...).
    pub call: &'static str,
    /// When it started waiting.
    pub since_ns: u64,
    /// How long it waited.
    pub waited_ns: u64,
    /// What it waited for, when the wait was on one request.
    pub awaited: Option<Awaited>,
}

/// What one rank of a real run did, for its report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankFigures {
    /// Host time in `compute` / `compute_flops`, ns (0 unless `Options::measure`).
    pub compute_ns: u64,
    /// Host time blocked in waits, ns (0 unless `Options::measure`).
    pub blocked_ns: u64,
    /// Messages it sent, by protocol (`Endpoint::sent_counts`).
    pub sent: MessageCounts,
    /// Messages its receives took, by protocol (`Endpoint::received_counts`).
    pub received: MessageCounts,
    /// Messages that reached it and no receive took, by protocol: those its endpoint held at
    /// its end and those still in its lanes when the run ended.
    pub unreceived: MessageCounts,
}

/// A rank's measurements while it runs (see the module doc).
#[derive(Debug)]
pub(crate) struct RankMeasure {
    rank: u32,
    pub compute_ns: u64,
    pub blocked_ns: u64,
    /// Longest first; at most [`LONGEST_WAITS`].
    longest: Vec<MeasuredWait>,
    /// The wait in progress: its call and request, since when, and what it awaits.
    open: Option<(&'static str, Option<ReqId>, u64, Option<Awaited>)>,
}

impl RankMeasure {
    pub fn new(rank: u32) -> Self {
        RankMeasure {
            rank,
            compute_ns: 0,
            blocked_ns: 0,
            longest: Vec::new(),
            open: None,
        }
    }

    /// A `compute` from `start` to `end`.
    pub fn compute(&mut self, start: u64, end: u64) {
        self.compute_ns = self.compute_ns.saturating_add(end.saturating_sub(start));
    }

    /// After a poll of the rank's program that started at `polled_at` and left the rank
    /// `waiting` in a call (or not), at `now`: the wait in progress, if it is not that one,
    /// ended when the poll started; a new one starts at `now`, awaiting what `describe` says
    /// of its request. As `RankTrace::after_poll`, with the same times.
    pub fn after_poll(
        &mut self,
        polled_at: u64,
        waiting: Option<(&'static str, Option<ReqId>)>,
        now: u64,
        describe: impl FnOnce(ReqId) -> Option<Awaited>,
    ) {
        if let Some((call, req, since, awaited)) = self.open {
            if waiting == Some((call, req)) {
                return;
            }
            self.open = None;
            self.ended(call, since, polled_at, awaited);
        }
        if let Some((call, req)) = waiting {
            self.open = Some((call, req, now, req.and_then(describe)));
        }
    }

    /// The wait in progress ended at `at` (a wait with no request, found ready).
    pub fn wait_ended(&mut self, at: u64) {
        if let Some((call, _, since, awaited)) = self.open.take() {
            self.ended(call, since, at, awaited);
        }
    }

    /// A wait in `call` from `since` to `end`: counted, and kept if among the longest.
    fn ended(&mut self, call: &'static str, since: u64, end: u64, awaited: Option<Awaited>) {
        let waited_ns = end.saturating_sub(since);
        if waited_ns == 0 {
            return;
        }
        self.blocked_ns = self.blocked_ns.saturating_add(waited_ns);
        // After every wait at least as long: of equally long ones, the earlier stays ahead.
        let at = self.longest.partition_point(|w| w.waited_ns >= waited_ns);
        if at >= LONGEST_WAITS {
            return;
        }
        self.longest.insert(
            at,
            MeasuredWait {
                rank: self.rank,
                call,
                since_ns: since,
                waited_ns,
                awaited,
            },
        );
        self.longest.truncate(LONGEST_WAITS);
    }

    /// The longest waits, longest first, taken.
    pub fn take_longest(&mut self) -> Vec<MeasuredWait> {
        std::mem::take(&mut self.longest)
    }
}

/// The run's longest waits from each rank's: longest first, then by start, then by rank;
/// at most [`LONGEST_WAITS`].
pub(crate) fn longest_of(ranks: impl IntoIterator<Item = Vec<MeasuredWait>>) -> Vec<MeasuredWait> {
    let mut all: Vec<MeasuredWait> = ranks.into_iter().flatten().collect();
    all.sort_by_key(|w| (std::cmp::Reverse(w.waited_ns), w.since_ns, w.rank));
    all.truncate(LONGEST_WAITS);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rank keeps its longest waits, longer first and earlier first among equals; the
    /// run's are the longest of all, by length, start and rank; waits of no length count for
    /// nothing.
    #[test]
    fn the_longest_waits_are_kept_in_order() {
        let mut ranks: Vec<RankMeasure> = (0..3).map(RankMeasure::new).collect();
        let mut all = Vec::new();
        let mut x: u64 = 7;
        for i in 0..60u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let rank = (x >> 40) as usize % 3;
            let len = x >> 61;
            let since = 100 * i;
            let m = &mut ranks[rank];
            m.after_poll(since, Some(("recv", None)), since, |_| None);
            m.after_poll(since + len, None, since + len, |_| None);
            if len > 0 {
                all.push((len, since, rank as u32));
            }
        }
        let total: u64 = all.iter().map(|w| w.0).sum();
        assert_eq!(ranks.iter().map(|m| m.blocked_ns).sum::<u64>(), total);
        all.sort_by_key(|&(len, since, rank)| (std::cmp::Reverse(len), since, rank));
        all.truncate(LONGEST_WAITS);
        let got = longest_of(ranks.iter_mut().map(RankMeasure::take_longest));
        let got: Vec<(u64, u64, u32)> = got
            .iter()
            .map(|w| (w.waited_ns, w.since_ns, w.rank))
            .collect();
        assert_eq!(got, all);
    }

    /// A wait that goes on over several polls is one wait, from its first poll's end to the
    /// start of the poll that no longer waits there, and names what it was described as when
    /// it began.
    #[test]
    fn a_wait_over_several_polls_is_one_wait() {
        let mut m = RankMeasure::new(4);
        let awaited = ("recv", Source::Rank(1), Tag::Value(3), ContextId(0));
        let req = None;
        m.after_poll(0, Some(("wait", req)), 10, |_| Some(awaited));
        m.after_poll(20, Some(("wait", req)), 25, |_| None);
        m.after_poll(40, None, 45, |_| None);
        assert_eq!(m.blocked_ns, 30);
        let longest = m.take_longest();
        assert_eq!(longest.len(), 1);
        assert_eq!((longest[0].since_ns, longest[0].waited_ns), (10, 30));
        // No request: nothing to describe.
        assert_eq!(longest[0].awaited, None);
    }
}
