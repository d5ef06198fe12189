//! The longest blocking waits of a run, for the report's "top waits": where ranks were held up
//! longest, and by what (the call, its peer and tag), which per-rank totals cannot tell.
//!
//! A run makes a wait per blocking call that does not complete at once (millions), so only the
//! [`TOP_WAITS`] longest are kept, sorted, and the run loop compares each ended wait with the
//! shortest kept ([`TopWaits::floor`]) before anything else: one comparison per wait. What a
//! kept wait waited for is read from the rank's endpoint when it ends (its request is still
//! there then), only for those that enter, and put in words at the end of the run (waits
//! that grow all along, as in a ring's first round, enter one after the other).
//!
//! Order: longer first; of equally long waits, the one that ended first (the run ends waits in
//! event order, which is deterministic, so the list is too).

use mpsim_proto::deadlock;
use mpsim_proto::matching::{ContextId, Source, Tag};
use mpsim_proto::p2p::ReqId;

use crate::event::Key;
use crate::kernel::Kernel;

/// How many waits the report lists.
pub const TOP_WAITS: usize = 10;

/// One blocking wait of a rank, as the report lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WaitReport {
    /// World rank that waited.
    pub rank: u32,
    /// The call it waited in (`recv`, `wait`, `ssend`, ...).
    pub call: &'static str,
    /// Virtual time it started waiting, ns.
    pub since_ns: u64,
    /// How long it waited, ns.
    pub waited_ns: u64,
    /// What it waited for when that is one request: the request's call, peer, tag and
    /// communicator context (`recv (peer 3, tag 7, context 0)`).
    pub waiting_for: Option<String>,
}

/// A kept wait: its report but for what it waited for, which is in words only at the end.
#[derive(Debug)]
struct Kept {
    rank: u32,
    call: &'static str,
    since_ns: u64,
    waited_ns: u64,
    /// The request's call, peer, tag and context.
    request: Option<(&'static str, Source, Tag, ContextId)>,
    /// The event that ended the wait (lists of partitions merge by it, `TopWaits::merge`).
    ended: Key,
}

/// The longest waits so far (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct TopWaits {
    /// Longest first; at most [`TOP_WAITS`].
    list: Vec<Kept>,
    /// A wait must be longer than this to enter: 0 until the list is full, then the shortest
    /// kept (a field, read on every wait's end, rather than looked up in the list).
    floor: u64,
}

impl TopWaits {
    /// A wait must be longer than this to enter.
    #[inline(always)]
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// The longest waits of `lists` (of a run's partitions): as one list would have kept them,
    /// since each is sorted as [`offer`] sorts (longer first, then by the event that ended it).
    pub fn merge(mut lists: Vec<TopWaits>) -> TopWaits {
        if lists.len() == 1 {
            // A sequential run's (whose waits do not know the keys of their events).
            return lists.pop().unwrap_or_default();
        }
        let mut list: Vec<Kept> = lists.into_iter().flat_map(|l| l.list).collect();
        list.sort_by(|a, b| b.waited_ns.cmp(&a.waited_ns).then(a.ended.cmp(&b.ended)));
        list.truncate(TOP_WAITS);
        let floor = if list.len() == TOP_WAITS {
            list[TOP_WAITS - 1].waited_ns
        } else {
            0
        };
        TopWaits { list, floor }
    }

    /// The kept waits, longest first.
    pub fn into_list(self) -> Vec<WaitReport> {
        self.list
            .into_iter()
            .map(|w| WaitReport {
                rank: w.rank,
                call: w.call,
                since_ns: w.since_ns,
                waited_ns: w.waited_ns,
                waiting_for: w.request.map(|(call, peer, tag, context)| {
                    deadlock::waiting_for(call, peer, tag, context).0
                }),
            })
            .collect()
    }
}

/// Offers the wait of `rank` in `call` from `since` to `end`, for request `req` (completed but
/// not yet taken by the program), to the kernel's list; out of line, as few waits get past
/// [`TopWaits::floor`] (which the caller checked) once the list is full.
#[cold]
#[inline(never)]
pub(crate) fn offer(
    k: &mut Kernel,
    rank: u32,
    call: &'static str,
    since: u64,
    end: u64,
    req: Option<ReqId>,
) {
    let waited_ns = end - since;
    let list = &mut k.report.top_waits.list;
    // After every wait at least as long: equally long ones that ended earlier stay ahead.
    let at = list.partition_point(|w| w.waited_ns >= waited_ns);
    if at >= TOP_WAITS {
        return;
    }
    let request = req.and_then(|q| k.describe_request(rank, q, call));
    let list = &mut k.report.top_waits.list;
    list.insert(
        at,
        Kept {
            rank,
            call,
            since_ns: since,
            waited_ns,
            request,
            ended: k.round.current,
        },
    );
    list.truncate(TOP_WAITS);
    if list.len() == TOP_WAITS {
        k.report.top_waits.floor = list[TOP_WAITS - 1].waited_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;

    fn offered(waits: &[(u32, u64, u64)]) -> Vec<(u32, u64)> {
        let mut k = Kernel::new(Model::default_machine(), 64, false).expect("64 ranks fit");
        for &(rank, since, end) in waits {
            if end - since > k.report.top_waits.floor() {
                offer(&mut k, rank, "recv", since, end, None);
            }
        }
        std::mem::take(&mut k.report.top_waits)
            .into_list()
            .into_iter()
            .map(|w| (w.rank, w.waited_ns))
            .collect()
    }

    /// The list is the `TOP_WAITS` longest, longest first, ties in the order they ended,
    /// whatever the order they are offered in: compared with sorting all of them.
    #[test]
    fn top_waits_are_the_longest_sorted_stably() {
        let mut waits = Vec::new();
        let mut x: u64 = 12345;
        for rank in 0..40u32 {
            // A small range of lengths, so that ties are common.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (x >> 60);
            waits.push((rank, 100 * u64::from(rank), 100 * u64::from(rank) + len));
        }
        let mut reference: Vec<(u32, u64)> = waits.iter().map(|&(r, s, e)| (r, e - s)).collect();
        // Stable: equal lengths keep the order they were offered (ended) in.
        reference.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
        reference.truncate(TOP_WAITS);
        assert_eq!(offered(&waits), reference);
    }

    /// Waits of no length are not listed, and fewer than `TOP_WAITS` waits are all listed.
    #[test]
    fn top_waits_skip_empty_waits() {
        assert_eq!(
            offered(&[(0, 5, 5), (1, 5, 9), (2, 0, 2)]),
            [(1, 4), (2, 2)]
        );
    }
}
