//! Deadlock diagnostics every backend shares: the wait-for cycle and the report's text
//! (`spec/timing.md` S15, `spec/p2p.md` §8 `Deadlock`).
//!
//! A backend knows which ranks are blocked and on whom; this module turns that into the one
//! text every backend prints, so a deadlock reads the same on `sim` and on `threads`.

use crate::matching::{ContextId, Source, Tag};

/// What a wait that holds no request waits for (a blocking probe: `probe`, `mprobe`), so
/// that a deadlock report names its peer and tag as it names a receive's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Awaited {
    /// The world rank it waits on, or any.
    pub peer: Source,
    /// The tag it waits for.
    pub tag: Tag,
    /// The communicator context.
    pub context: ContextId,
}

impl Awaited {
    /// [`waiting_for`] of this wait in `call`.
    pub fn waiting_for(&self, call: &str) -> (String, Option<u32>) {
        waiting_for(call, self.peer, self.tag, self.context)
    }
}

/// The call that waits, holding no request, until the buffered messages are received.
pub const BUFFER_DETACH: &str = "buffer_detach";

/// What a blocked rank waits for, as a report names it — `call (peer p, tag t, context c)` —
/// and the rank it waits on, its wait-for edge (none for `ANY_SOURCE`). A communicator call
/// ([`is_communicator_call`]) is named with its peer alone: its tag and context are the
/// library's own, which no program wrote.
pub fn waiting_for(
    call: &str,
    peer: Source,
    tag: Tag,
    context: ContextId,
) -> (String, Option<u32>) {
    let edge = match peer {
        Source::Rank(p) => Some(p),
        Source::Any => None,
    };
    if is_communicator_call(call) {
        return (format!("{call} (peer {peer})"), edge);
    }
    (
        format!("{call} (peer {peer}, tag {tag}, context {})", context.0),
        edge,
    )
}

/// Whether `call` makes or frees communicators (`comm_split`, `comm_dup`, `comm_free`): its
/// messages are the library's, on a context and with a tag of its own.
pub fn is_communicator_call(call: &str) -> bool {
    call.starts_with("comm_")
}

/// Blocked ranks a report names one by one; the rest are counted. A deadlock of a million
/// ranks would otherwise be one line of a hundred megabytes.
pub const LIST_BLOCKED: usize = 16;

/// Ranks a long wait-for cycle is written with at each end, the rest counted.
pub const CYCLE_ENDS: usize = 8;

/// `lines` (of ranks) joined as reports list them, `a; b; c`: the first [`LIST_BLOCKED`], then
/// how many more (`; and 5 more {what}`). The livelock report's list and the deadlock report's.
pub fn listed<S: AsRef<str>>(lines: impl ExactSizeIterator<Item = S>, what: &str) -> String {
    let more = lines.len().saturating_sub(LIST_BLOCKED);
    let shown: Vec<S> = lines.take(LIST_BLOCKED).collect();
    let mut out = shown
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<&str>>()
        .join("; ");
    if more > 0 {
        out.push_str(&format!("; and {more} more {what}"));
    }
    out
}

/// The text of a deadlock report: each blocked rank's line (`blocked`: the rank and its line, in
/// rank order; [`listed`]), with a note when the rank it waits on has `finished`, then the
/// cycle if there is one (`rank 0 blocked in …; rank 1 blocked in …; cycle 0 → 1 → 0`).
/// `edges[r]` is the rank that rank `r` waits on, if one.
pub fn report<'a>(
    blocked: impl ExactSizeIterator<Item = (u32, &'a str)>,
    edges: &[Option<u32>],
    finished: &dyn Fn(u32) -> bool,
) -> String {
    let lines = blocked.map(|(rank, line)| match edges.get(rank as usize) {
        Some(&Some(peer)) if finished(peer) => format!("{line}, and rank {peer} has finished"),
        _ => line.to_string(),
    });
    let mut out = listed(lines, "blocked ranks");
    if let Some(cycle) = wait_for_cycle(edges) {
        out.push_str("; cycle ");
        out.push_str(&written_cycle(&cycle));
    }
    out
}

/// A cycle as a report writes it (`0 → 1 → 0`): one of more than `2 * CYCLE_ENDS` ranks with its
/// first and last [`CYCLE_ENDS`] and how many are left out between.
fn written_cycle(cycle: &[u32]) -> String {
    let arrowed = |ranks: &[u32]| {
        ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" → ")
    };
    if cycle.len() <= 2 * CYCLE_ENDS {
        return arrowed(cycle);
    }
    let (head, tail) = (&cycle[..CYCLE_ENDS], &cycle[cycle.len() - CYCLE_ENDS..]);
    format!(
        "{} → … {} more ranks … → {} ({} ranks)",
        arrowed(head),
        cycle.len() - 2 * CYCLE_ENDS,
        arrowed(tail),
        cycle.len() - 1
    )
}

/// The wait-for cycle through the lowest rank that lies on one, written from that rank and
/// closed (`0 → 1 → 0` is `[0, 1, 0]`). `edges[r]` is the rank that rank `r` waits for, if one.
pub fn wait_for_cycle(edges: &[Option<u32>]) -> Option<Vec<u32>> {
    // Visit ranks in ascending order; mark each rank's walk so every rank is walked once.
    let mut seen = vec![false; edges.len()];
    let mut best: Option<Vec<u32>> = None;
    for start in 0..edges.len() {
        if seen[start] {
            continue;
        }
        let mut path: Vec<usize> = Vec::new();
        let mut at = start;
        let mut on_path = std::collections::BTreeMap::new();
        loop {
            if let Some(&i) = on_path.get(&at) {
                let cycle = &path[i..];
                let lowest = *cycle.iter().min().expect("non-empty cycle");
                let pos = cycle.iter().position(|&x| x == lowest).expect("present");
                let mut c: Vec<u32> = cycle[pos..]
                    .iter()
                    .chain(&cycle[..pos])
                    .map(|&x| x as u32)
                    .collect();
                c.push(lowest as u32);
                if best.as_ref().is_none_or(|b| c[0] < b[0]) {
                    best = Some(c);
                }
                break;
            }
            if seen[at] {
                break;
            }
            seen[at] = true;
            on_path.insert(at, path.len());
            path.push(at);
            match edges[at] {
                Some(next) if (next as usize) < edges.len() => at = next as usize,
                _ => break,
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::{LIST_BLOCKED, report, wait_for_cycle};

    /// S15 at scale: a deadlock of many ranks names the first `LIST_BLOCKED` and counts the
    /// rest, and writes a long cycle by its ends (a ring of 100,000 ranks all receiving from
    /// their left made a report of megabytes on one line).
    #[test]
    fn timing_s15_a_report_of_many_ranks_stays_short() {
        let n = 100_000u32;
        let blocked: Vec<(u32, String)> = (0..n)
            .map(|r| {
                (
                    r,
                    format!("rank {r} blocked in recv (peer {})", (r + n - 1) % n),
                )
            })
            .collect();
        let edges: Vec<Option<u32>> = (0..n).map(|r| Some((r + n - 1) % n)).collect();
        let text = report(
            blocked.iter().map(|(r, l)| (*r, l.as_str())),
            &edges,
            &|_| false,
        );
        assert!(text.len() < 2_000, "{} bytes", text.len());
        assert!(text.starts_with("rank 0 blocked in recv (peer 99999); rank 1 blocked"));
        let more = n as usize - LIST_BLOCKED;
        assert!(
            text.contains(&format!("; and {more} more blocked ranks; cycle ")),
            "{text}"
        );
        assert!(
            text.ends_with(
                "cycle 0 → 99999 → 99998 → 99997 → 99996 → 99995 → 99994 → 99993 → … 99985 \
                 more ranks … → 7 → 6 → 5 → 4 → 3 → 2 → 1 → 0 (100000 ranks)"
            ),
            "{text}"
        );
    }

    /// A rank that waits on a rank that has finished is told so (`recv` from a finished rank,
    /// one of the three deadlock patterns of issue 6); short cycles are written whole.
    #[test]
    fn timing_s15_a_wait_on_a_finished_rank_says_so() {
        let text = report(
            [(0, "rank 0 blocked in recv (peer 2)")].into_iter(),
            &[Some(2), None, None],
            &|r| r == 2,
        );
        assert_eq!(
            text,
            "rank 0 blocked in recv (peer 2), and rank 2 has finished"
        );
        let blocked = [
            (0, "rank 0 blocked in ssend (peer 1)"),
            (1, "rank 1 blocked in ssend (peer 0)"),
        ];
        let text = report(blocked.into_iter(), &[Some(1), Some(0)], &|_| false);
        assert!(text.ends_with("; cycle 0 → 1 → 0"), "{text}");
    }

    #[test]
    fn timing_s15_cycle_written_from_its_lowest_rank() {
        assert_eq!(wait_for_cycle(&[Some(1), Some(0)]), Some(vec![0, 1, 0]));
        assert_eq!(
            wait_for_cycle(&[None, Some(2), Some(3), Some(1)]),
            Some(vec![1, 2, 3, 1])
        );
        assert_eq!(wait_for_cycle(&[Some(1), Some(2), None]), None);
        assert_eq!(
            wait_for_cycle(&[Some(2), Some(3), Some(3), Some(1)]),
            Some(vec![1, 3, 1])
        );
    }

    #[test]
    fn cycle_is_written_from_its_lowest_rank() {
        assert_eq!(wait_for_cycle(&[Some(1), Some(0)]), Some(vec![0, 1, 0]));
        assert_eq!(
            wait_for_cycle(&[Some(2), Some(2), Some(1)]),
            Some(vec![1, 2, 1])
        );
        assert_eq!(wait_for_cycle(&[None, Some(0)]), None);
    }
}
