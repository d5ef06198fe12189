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

/// The text of a deadlock report: each blocked rank's line, then the cycle if there is one
/// (`rank 0 blocked in …; rank 1 blocked in …; cycle 0 → 1 → 0`).
pub fn report(lines: &[String], edges: &[Option<u32>]) -> String {
    let mut out = lines.join("; ");
    if let Some(cycle) = wait_for_cycle(edges) {
        let path: Vec<String> = cycle.iter().map(u32::to_string).collect();
        out.push_str("; cycle ");
        out.push_str(&path.join(" → "));
    }
    out
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
    use super::wait_for_cycle;

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
