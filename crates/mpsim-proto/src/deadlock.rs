//! Deadlock diagnostics every backend shares: the wait-for cycle, and the reports of a run that
//! cannot go on as typed data ([`DeadlockReport`], [`LivelockReport`]) whose `Display` is the
//! text every backend prints (`docs/timing.md` S15, `docs/p2p.md` §8 `Deadlock`).
//!
//! A backend knows which ranks are blocked and on what; this module turns that into one report,
//! so a deadlock reads the same on `sim` and on `threads`, and a program (a test that expects
//! a deadlock, say) can look at which ranks, calls, peers and cycle it names, not only at text.
//!
//! Departure from S15, on purpose: S15 names a blocked rank's *first* incomplete request. A
//! rank blocked in a wait on several requests (`wait_all`, `wait_any`, `wait_some`,
//! `sendrecv`) is reported with *every* request it still waits on
//! ([`BlockedRank::waiting_on`], in the program's order): a `wait_any` on three receives is
//! stuck only if none of the three can come, and a report naming one hides the other two. Its
//! wait-for edge (for the cycle) is still the first one's peer, as S15 says.

use std::fmt;

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

/// What a rank in an external wait waits for (the simulator's `ExternalWake`: an event outside
/// the simulation, such as a C program's next call): a report names it as it is, with no peer.
pub const EXTERNAL_EVENT: &str = "an external event";

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
    if call == EXTERNAL_EVENT {
        return (call.to_string(), edge);
    }
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

/// One thing a blocked rank waits on: a request (its operation, peer, tag and communicator),
/// what a blocking probe waits for, or the buffered message a `buffer_detach` waits to see
/// received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The operation: `recv`, `send`, `ssend`, `bsend`, `rsend`, `probe`, `mprobe`; for a
    /// communicator call's own requests, the call (`comm_split`).
    pub call: &'static str,
    /// The world rank it waits on, or any (`ANY_SOURCE`).
    pub peer: Source,
    /// The tag.
    pub tag: Tag,
    /// The communicator context.
    pub context: ContextId,
}

impl Waiting {
    /// `call` on `awaited` (a probe's, or a detach's buffered message).
    pub fn new(call: &'static str, awaited: Awaited) -> Self {
        Waiting {
            call,
            peer: awaited.peer,
            tag: awaited.tag,
            context: awaited.context,
        }
    }

    /// A request as `Endpoint::describe` gives it (`(operation, peer, tag, context)`),
    /// waited for in `wait_call`: a communicator call's requests are the library's, named
    /// after the call ([`is_communicator_call`]).
    pub fn of_request(
        wait_call: &'static str,
        (call, peer, tag, context): (&'static str, Source, Tag, ContextId),
    ) -> Self {
        let call = if is_communicator_call(wait_call) {
            wait_call
        } else {
            call
        };
        Waiting {
            call,
            peer,
            tag,
            context,
        }
    }

    /// The world rank it waits on, if one (a wait-for edge: none for `ANY_SOURCE`).
    pub fn peer_rank(&self) -> Option<u32> {
        match self.peer {
            Source::Rank(p) => Some(p),
            Source::Any => None,
        }
    }
}

impl fmt::Display for Waiting {
    /// `recv (peer 1, tag 7, context 0)`; a communicator call with its peer alone
    /// (`comm_split (peer 0)`): its tag and context are the library's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&waiting_for(self.call, self.peer, self.tag, self.context).0)
    }
}

/// The call a [`BlockedRank`] has when the simulator found it suspended neither in a wait nor
/// in a poll (an `await` of something that is not an mpsim call).
pub const SUSPENDED: &str = "(suspended)";

/// A rank blocked in a call that waits, in a [`DeadlockReport`] or a [`LivelockReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedRank {
    /// World rank.
    pub rank: u32,
    /// The program's call it is blocked in: `recv`, `ssend`, `wait`'s request's operation,
    /// `wait_all`, `wait_any`, `probe`, `buffer_detach`, `comm_split`, ...
    pub call: &'static str,
    /// Virtual time at which it blocked (simulator; `None` on threads).
    pub since_ns: Option<u64>,
    /// What it waits on: its request, or every request a wait on several still waits on, in
    /// the program's order (see the module docs: more than S15's first one). Empty when the
    /// backend does not know it.
    pub waiting_on: Vec<Waiting>,
    /// Any one of `waiting_on` completing would end the wait (`wait_any`, `wait_some`);
    /// otherwise it needs them all.
    pub any_of: bool,
    /// The rank it waits on, its edge in the wait-for graph: the peer of the first of
    /// `waiting_on`, if that names a rank.
    pub waits_for: Option<u32>,
    /// The rank it waits on has finished (so nothing it waits for can come from there).
    pub peer_finished: bool,
}

impl BlockedRank {
    /// Rank `rank` blocked in `call` (since `since_ns`, simulator) waiting on `waiting_on`;
    /// its wait-for edge is the first one's peer.
    pub fn new(
        rank: u32,
        call: &'static str,
        since_ns: Option<u64>,
        waiting_on: Vec<Waiting>,
    ) -> Self {
        let waits_for = waiting_on.first().and_then(Waiting::peer_rank);
        BlockedRank {
            rank,
            call,
            since_ns,
            waiting_on,
            any_of: matches!(call, "wait_any" | "wait_some"),
            waits_for,
            peer_finished: false,
        }
    }
}

/// The requests a line names one by one; the rest are counted.
pub const LIST_REQUESTS: usize = 8;

impl fmt::Display for BlockedRank {
    /// `rank 0 blocked in recv since t=5 ns, waiting for recv (peer 1, tag 7, context 0)`
    /// (simulator), `rank 0 blocked in recv (peer 1, tag 7, context 0)` (threads); several
    /// requests joined by `and` (all needed) or `or` (`wait_any`, `wait_some`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rank = self.rank;
        if self.call == SUSPENDED {
            return write!(
                f,
                "rank {rank} suspended at t={} ns",
                self.since_ns.unwrap_or(0)
            );
        }
        match (self.since_ns, self.waiting_on.as_slice()) {
            (None, [one]) if one.call == self.call => {
                return write!(f, "rank {rank} blocked in {one}");
            }
            (None, _) => write!(f, "rank {rank} blocked in {}", self.call)?,
            (Some(since), _) => {
                write!(f, "rank {rank} blocked in {} since t={since} ns", self.call)?
            }
        }
        if self.waiting_on.is_empty() {
            return Ok(());
        }
        f.write_str(", waiting for ")?;
        let join = if self.any_of { " or " } else { " and " };
        for (i, w) in self.waiting_on.iter().take(LIST_REQUESTS).enumerate() {
            if i > 0 {
                f.write_str(join)?;
            }
            write!(f, "{w}")?;
        }
        let more = self.waiting_on.len().saturating_sub(LIST_REQUESTS);
        if more > 0 {
            write!(f, "{join}{more} more")?;
        }
        Ok(())
    }
}

/// Every unfinished rank blocked and nothing in flight: the run cannot go on
/// ([`Error::Deadlock`](crate::error::Error::Deadlock)). `Display` lists the first
/// [`LIST_BLOCKED`] ranks and counts the rest, notes a wait on a rank that has finished, and
/// writes the cycle (a long one by its ends).
///
/// ```
/// use mpsim_proto::deadlock::{BlockedRank, DeadlockReport, Waiting};
/// use mpsim_proto::matching::{ContextId, Source, Tag};
///
/// let ssend_to = |peer| Waiting {
///     call: "ssend",
///     peer: Source::Rank(peer),
///     tag: Tag::Value(0),
///     context: ContextId(0),
/// };
/// let blocked = vec![
///     BlockedRank::new(0, "ssend", Some(0), vec![ssend_to(1)]),
///     BlockedRank::new(1, "ssend", Some(0), vec![ssend_to(0)]),
/// ];
/// let report = DeadlockReport::new(blocked, 2, &|_| false);
/// assert_eq!(report.cycle, [0, 1, 0]);
/// assert_eq!(
///     report.to_string(),
///     "rank 0 blocked in ssend since t=0 ns, waiting for ssend (peer 1, tag 0, context 0); \
///      rank 1 blocked in ssend since t=0 ns, waiting for ssend (peer 0, tag 0, context 0); \
///      cycle 0 → 1 → 0"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockReport {
    /// Every blocked rank, in rank order.
    pub blocked: Vec<BlockedRank>,
    /// The wait-for cycle through the lowest rank that lies on one, written from that rank
    /// and closed (`[0, 1, 0]`); empty when there is none.
    pub cycle: Vec<u32>,
    /// What the report adds to the waits, printed last: for a rank blocked in a
    /// communicator call (`comm_split`), that such calls are collective, which MPI requires
    /// of every member of the communicator, in the same order.
    pub note: Option<String>,
}

impl DeadlockReport {
    /// The report of `blocked` (in rank order) in a run of `ranks` ranks: each one whose
    /// wait-for edge goes to a rank that has `finished` is noted so, and the cycle is found.
    pub fn new(mut blocked: Vec<BlockedRank>, ranks: u32, finished: &dyn Fn(u32) -> bool) -> Self {
        let mut edges: Vec<Option<u32>> = vec![None; ranks as usize];
        for b in &mut blocked {
            if let Some(edge) = edges.get_mut(b.rank as usize) {
                *edge = b.waits_for;
            }
            b.peer_finished = b.waits_for.is_some_and(finished);
        }
        let note = blocked
            .iter()
            .find(|b| is_communicator_call(b.call))
            .map(|b| {
                format!(
                    "{} is collective: MPI requires every member of a communicator to make \
                     its collective calls on it, in the same order",
                    b.call
                )
            });
        DeadlockReport {
            blocked,
            cycle: wait_for_cycle(&edges).unwrap_or_default(),
            note,
        }
    }

    /// The blocked rank `rank`, if it is blocked.
    pub fn rank(&self, rank: u32) -> Option<&BlockedRank> {
        self.blocked
            .binary_search_by_key(&rank, |b| b.rank)
            .ok()
            .map(|i| &self.blocked[i])
    }
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.blocked.iter().map(|b| match b.waits_for {
            Some(peer) if b.peer_finished => format!("{b}, and rank {peer} has finished"),
            _ => b.to_string(),
        });
        f.write_str(&listed(lines, "blocked ranks"))?;
        if !self.cycle.is_empty() {
            write!(f, "; cycle {}", written_cycle(&self.cycle))?;
        }
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}

/// A rank that polls for something that cannot come, in a [`LivelockReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollingRank {
    /// World rank.
    pub rank: u32,
    /// The call it polls in: `test`, `test_any`, `iprobe`, ...
    pub call: &'static str,
    /// Virtual time at which its polls began (its first since it last did or was given
    /// anything).
    pub since_ns: u64,
}

impl fmt::Display for PollingRank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} polling in {}", self.rank, self.call)
    }
}

/// An unfinished rank of a livelocked run: polling or blocked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StuckRank {
    /// It polls (a `test` loop).
    Polling(PollingRank),
    /// It is blocked in a wait.
    Blocked(BlockedRank),
}

impl StuckRank {
    /// Its world rank.
    pub fn rank(&self) -> u32 {
        match self {
            StuckRank::Polling(p) => p.rank,
            StuckRank::Blocked(b) => b.rank,
        }
    }
}

impl fmt::Display for StuckRank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StuckRank::Polling(p) => p.fmt(f),
            StuckRank::Blocked(b) => b.fmt(f),
        }
    }
}

/// Simulator: for the run's livelock limit of virtual time nothing but polls ran, and nothing
/// could change that ([`Error::Livelock`](crate::error::Error::Livelock)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivelockReport {
    /// Virtual time since which nothing but polls ran (when the polls began).
    pub from_ns: u64,
    /// Virtual time at which the run was stopped.
    pub to_ns: u64,
    /// The limit: a run stops after this long like this (`Options::livelock_after_ns`).
    pub limit_ns: u64,
    /// Every unfinished rank, polling or blocked, in rank order.
    pub ranks: Vec<StuckRank>,
}

impl LivelockReport {
    /// The polling ranks.
    pub fn polling(&self) -> impl Iterator<Item = &PollingRank> {
        self.ranks.iter().filter_map(|r| match r {
            StuckRank::Polling(p) => Some(p),
            StuckRank::Blocked(_) => None,
        })
    }

    /// The blocked ranks.
    pub fn blocked(&self) -> impl Iterator<Item = &BlockedRank> {
        self.ranks.iter().filter_map(|r| match r {
            StuckRank::Blocked(b) => Some(b),
            StuckRank::Polling(_) => None,
        })
    }
}

impl fmt::Display for LivelockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = listed(self.ranks.iter().map(ToString::to_string), "ranks");
        write!(
            f,
            "from t={} ns to t={} ns nothing but polls ran and no message was in flight, so no \
             poll could find anything; {lines}; a run stops after {} ns of virtual time like \
             this (Options::livelock_after_ns, --livelock-after; 0 never stops)",
            self.from_ns, self.to_ns, self.limit_ns
        )
    }
}

/// One rank's communicator-creating calls on a communicator, in a [`CommOrder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatingCalls {
    /// World rank.
    pub rank: u32,
    /// Its communicator-creating calls on the communicator (`comm_dup`, `comm_split`), in
    /// order, the last one the `comm_split` that met the others'; when it had made more than
    /// [`CreatingCalls::KNOWN`] before it, that one alone.
    pub calls: Vec<&'static str>,
    /// How many it had made before the last one.
    pub before: u64,
}

impl CreatingCalls {
    /// The most calls before a `comm_split` that it tells the others one by one.
    pub const KNOWN: u64 = 29;
}

impl fmt::Display for CreatingCalls {
    /// `rank 1 made comm_dup, comm_split`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} made {}", self.rank, self.calls.join(", "))?;
        if self.calls.len() as u64 != self.before + 1 {
            write!(f, " after {} others", self.before)?;
        }
        Ok(())
    }
}

/// Members of a communicator made their communicator-creating calls on it (`dup`, `split`) in
/// different orders, so that one rank's `split` met another's `dup` or another `split`: what
/// MPI forbids (every member makes its collective calls on a communicator in the same order),
/// and what left the ranks with communicators of different contexts, whose traffic never
/// meets ([`Error::CommOrder`](crate::error::Error::CommOrder)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommOrder {
    /// The calls of the communicator's rank 0 (which gathers a `split`), then those of the
    /// ranks whose order differs from it, in rank order.
    pub ranks: Vec<CreatingCalls>,
}

impl fmt::Display for CommOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = listed(self.ranks.iter().map(ToString::to_string), "ranks");
        write!(
            f,
            "ranks made their communicator-creating calls on this communicator in different \
             orders ({lines}): MPI requires every member of a communicator to make its \
             collective calls on it (comm_dup, comm_split) in the same order"
        )
    }
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
    use super::{
        BlockedRank, DeadlockReport, LIST_BLOCKED, LivelockReport, PollingRank, StuckRank, Waiting,
        wait_for_cycle,
    };
    use crate::matching::{ContextId, Source, Tag};

    fn recv_from(peer: u32) -> Waiting {
        Waiting {
            call: "recv",
            peer: Source::Rank(peer),
            tag: Tag::Value(0),
            context: ContextId(0),
        }
    }

    /// S15 at scale: a deadlock of many ranks names the first `LIST_BLOCKED` and counts the
    /// rest, and writes a long cycle by its ends (a ring of 100,000 ranks all receiving from
    /// their left made a report of megabytes on one line). The data holds them all.
    #[test]
    fn timing_s15_a_report_of_many_ranks_stays_short() {
        let n = 100_000u32;
        let blocked = (0..n)
            .map(|r| BlockedRank::new(r, "recv", None, vec![recv_from((r + n - 1) % n)]))
            .collect();
        let report = DeadlockReport::new(blocked, n, &|_| false);
        assert_eq!(
            (report.blocked.len(), report.cycle.len()),
            (n as usize, n as usize + 1)
        );
        let text = report.to_string();
        assert!(text.len() < 2_000, "{} bytes", text.len());
        assert!(
            text.starts_with(
                "rank 0 blocked in recv (peer 99999, tag 0, context 0); rank 1 blocked"
            ),
            "{text}"
        );
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
        let report = DeadlockReport::new(
            vec![BlockedRank::new(0, "recv", None, vec![recv_from(2)])],
            3,
            &|r| r == 2,
        );
        assert!(report.blocked[0].peer_finished && report.cycle.is_empty());
        assert_eq!(
            report.to_string(),
            "rank 0 blocked in recv (peer 2, tag 0, context 0), and rank 2 has finished"
        );
        let blocked = vec![
            BlockedRank::new(0, "recv", None, vec![recv_from(1)]),
            BlockedRank::new(1, "recv", None, vec![recv_from(0)]),
        ];
        let text = DeadlockReport::new(blocked, 2, &|_| false).to_string();
        assert!(text.ends_with("; cycle 0 → 1 → 0"), "{text}");
    }

    /// A wait on several requests names them all, joined by what ends it; its edge is the
    /// first one's peer; a wait on `ANY_SOURCE` has none.
    #[test]
    fn timing_s15_a_wait_on_several_requests_names_each() {
        let any = BlockedRank::new(3, "wait_any", Some(5), vec![recv_from(1), recv_from(2)]);
        assert_eq!((any.any_of, any.waits_for), (true, Some(1)));
        assert_eq!(
            any.to_string(),
            "rank 3 blocked in wait_any since t=5 ns, waiting for recv (peer 1, tag 0, context \
             0) or recv (peer 2, tag 0, context 0)"
        );
        let all = BlockedRank::new(3, "wait_all", None, vec![recv_from(1), recv_from(2)]);
        assert_eq!(
            all.to_string(),
            "rank 3 blocked in wait_all, waiting for recv (peer 1, tag 0, context 0) and recv \
             (peer 2, tag 0, context 0)"
        );
        let many = BlockedRank::new(0, "wait_all", None, (1..=10).map(recv_from).collect());
        assert!(many.to_string().ends_with(" and 2 more"), "{many}");
        let mut wild = recv_from(0);
        wild.peer = Source::Any;
        assert_eq!(
            BlockedRank::new(0, "recv", None, vec![wild]).waits_for,
            None
        );
    }

    /// A livelock report lists its polling and blocked ranks in rank order, as text and as data.
    #[test]
    fn livelock_report_lists_polling_and_blocked_ranks() {
        let report = LivelockReport {
            from_ns: 0,
            to_ns: 100,
            limit_ns: 90,
            ranks: vec![
                StuckRank::Polling(PollingRank {
                    rank: 0,
                    call: "test",
                    since_ns: 0,
                }),
                StuckRank::Blocked(BlockedRank::new(1, "recv", Some(0), vec![recv_from(0)])),
            ],
        };
        assert_eq!(report.polling().map(|p| p.rank).collect::<Vec<_>>(), [0]);
        assert_eq!(report.blocked().map(|b| b.rank).collect::<Vec<_>>(), [1]);
        assert_eq!(
            report.to_string(),
            "from t=0 ns to t=100 ns nothing but polls ran and no message was in flight, so no \
             poll could find anything; rank 0 polling in test; rank 1 blocked in recv since t=0 \
             ns, waiting for recv (peer 0, tag 0, context 0); a run stops after 90 ns of \
             virtual time like this (Options::livelock_after_ns, --livelock-after; 0 never \
             stops)"
        );
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
