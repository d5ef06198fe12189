//! The deadlock watchdog: a rank that has waited a while with nothing arriving joins a round
//! of a nonblocking sum (`MPI_Iallreduce`) on the control communicator, and the run is
//! declared deadlocked when two consecutive rounds find the same totals with every message
//! sent arrived. Every rank sees the same sums, so every rank decides alike, at the same
//! round; the rounds are also how the ranks that finished wait for the others (a round where
//! every rank has finished and every message arrived ends the run).
//!
//! # Why a deadlock it declares is one
//!
//! Each rank counts the messages it sent (`sent`, at each MPI send it starts), the messages
//! that arrived to it (`arrived`: a receive MPI completed, a message it took on the
//! matched-here communicator, or one it took out of MPI's unexpected queue on the world's,
//! so that a message nobody receives is counted too: `rank.rs`, `hold`), and the calls its
//! program made (`acts`: each call started, each wait that ended). A rank joins a round only
//! from a wait that is pending (its program is blocked) or after its program ended, with its
//! counters as they are then; it tests a round it joined until the round completes, and joins
//! the next only in a later wait's nap, after its program polled its wait again.
//!
//! Round k+1 starts at a rank only once round k completed there, which needs every rank to
//! have joined round k: so there is an instant T after every rank's snapshot of round k and
//! before every rank's snapshot of round k+1. The counters only grow, so equal totals in
//! both rounds mean no rank's counters moved between its two snapshots: at T every rank was
//! blocked in the same wait as at its first snapshot (a wait that ends counts an act) or
//! finished, and had taken nothing in since. With `sent == arrived` at T, no message is in
//! flight. A blocked rank's wait can then only end by something arriving, and nothing can:
//! every rank is blocked, nothing is in flight, and what had arrived was there when the
//! rank last polled its wait and found it pending. No timing enters the argument (a
//! message slow on the network keeps `sent > arrived`); the naps only decide how soon it is
//! seen, a few milliseconds after the ranks stop.
//!
//! What the argument takes from MPI: that a send whose message has reached its destination
//! (where it is counted) completes at its sender within the polls the sender makes between
//! two of its snapshots (a millisecond or more of polling apart), as MPI's progress rule
//! requires eventually and Open MPI does at once; and that taking a message out of the
//! unexpected queue with `MPI_Improbe`, without receiving it, does not complete its
//! synchronous send (true of Open MPI 4.1, which acknowledges at the receive: the head-to-head
//! `ssend` tests in `mpi_backend.rs` would pass otherwise).
//!
//! The cost: a counter added to at each send, arrival and call, and nothing else until a
//! rank has napped to the longest nap (about 1.3 ms with nothing arriving).

use std::collections::BTreeSet;

use mpsim_proto::deadlock::{BlockedRank, DeadlockReport, Waiting};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{ContextId, Source, Tag};

use crate::raw::{self, Code, MPI_Comm, MPI_Request};

/// What one rank tells a round.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Snapshot {
    pub sent: u64,
    pub arrived: u64,
    pub acts: u64,
    pub finished: bool,
}

/// The sums of a round: sent, arrived, acts, ranks finished.
const FIELDS: usize = 4;

/// What a completed round says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing yet (a round pending, just joined, or completed without a verdict).
    Undecided,
    /// Every rank blocked or finished, nothing in flight, for two rounds.
    Deadlock,
    /// Every rank finished, every message arrived.
    AllFinished,
}

/// A round this rank joined: the request and the two arrays MPI reads and writes (boxed: they
/// must not move until it completes).
struct Round {
    req: MPI_Request,
    mine: [u64; FIELDS],
    sum: [u64; FIELDS],
}

/// The rounds of one rank.
pub(crate) struct Watch {
    control: MPI_Comm,
    size: u64,
    round: Option<Box<Round>>,
    /// The sums of the last round completed.
    last: Option<[u64; FIELDS]>,
    /// A verdict was reached: no more rounds.
    over: bool,
}

impl Watch {
    pub fn new(control: MPI_Comm, size: u32) -> Self {
        Watch {
            control,
            size: u64::from(size),
            round: None,
            last: None,
            over: false,
        }
    }

    /// Tests the pending round, or (none pending) joins a new one with `snapshot()`: never
    /// both in one step, so that the program polls its wait between two snapshots.
    pub fn step(
        &mut self,
        snapshot: impl FnOnce() -> Result<Snapshot, Error>,
    ) -> Result<Verdict, Error> {
        if self.over {
            return Ok(Verdict::Undecided);
        }
        if let Some(round) = &mut self.round {
            if !raw::test(&mut round.req).map_err(|c| mpi_failed("MPI_Test", c))? {
                return Ok(Verdict::Undecided);
            }
            let sum = round.sum;
            self.round = None;
            let [sent, arrived, _, finished] = sum;
            let verdict = if finished == self.size && sent == arrived {
                Verdict::AllFinished
            } else if finished < self.size && sent == arrived && self.last == Some(sum) {
                Verdict::Deadlock
            } else {
                Verdict::Undecided
            };
            self.last = Some(sum);
            self.over = verdict != Verdict::Undecided;
            return Ok(verdict);
        }
        let s = snapshot()?;
        let mut round = Box::new(Round {
            req: raw::request_null(),
            mine: [s.sent, s.arrived, s.acts, u64::from(s.finished)],
            sum: [0; FIELDS],
        });
        let Round { req, mine, sum } = &mut *round;
        *req = raw::iallreduce_sum(mine, sum, self.control)
            .map_err(|c| mpi_failed("MPI_Iallreduce", c))?;
        self.round = Some(round);
        Ok(Verdict::Undecided)
    }
}

fn mpi_failed(call: &str, code: Code) -> Error {
    Error::Internal {
        what: format!(
            "MPI failed in {call} (the deadlock watchdog): {}",
            raw::describe(code)
        ),
    }
}

/// What one rank is when a deadlock is declared: blocked in `call` on `waiting_on`, or
/// finished.
pub(crate) enum State {
    Blocked {
        call: &'static str,
        waiting_on: Vec<Waiting>,
    },
    Finished,
}

/// Gathers every rank's [`State`] at rank 0 over `control` (every rank calls it, at the same
/// round): the run's report there, this rank's line alone elsewhere.
pub(crate) fn deadlock_report(
    control: MPI_Comm,
    rank: u32,
    size: u32,
    mine: &State,
) -> Result<DeadlockReport, Error> {
    let mut bytes = Vec::new();
    encode(mine, &mut bytes);
    let all = crate::world::gather_at_root(control, &bytes)?;
    let states: Vec<(u32, State)> = match all {
        Some(all) => all
            .iter()
            .enumerate()
            .map(|(r, b)| {
                (
                    r as u32,
                    decode(b).unwrap_or(State::Blocked {
                        call: "?",
                        waiting_on: Vec::new(),
                    }),
                )
            })
            .collect(),
        None => vec![(rank, decode(&bytes).unwrap_or(State::Finished))],
    };
    let finished: BTreeSet<u32> = states
        .iter()
        .filter(|(_, s)| matches!(s, State::Finished))
        .map(|&(r, _)| r)
        .collect();
    let blocked = states
        .into_iter()
        .filter_map(|(r, s)| match s {
            State::Blocked { call, waiting_on } => {
                Some(BlockedRank::new(r, call, None, waiting_on))
            }
            State::Finished => None,
        })
        .collect();
    Ok(DeadlockReport::new(blocked, size, &|r| {
        finished.contains(&r)
    }))
}

/// A [`State`] as bytes: a kind (0 blocked, 1 finished), then for a blocked rank its call and
/// each thing it waits on (call, peer, tag, context).
fn encode(state: &State, out: &mut Vec<u8>) {
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    match state {
        State::Finished => out.push(1),
        State::Blocked { call, waiting_on } => {
            out.push(0);
            text(out, call);
            out.extend_from_slice(&(waiting_on.len() as u32).to_le_bytes());
            for w in waiting_on {
                text(out, w.call);
                let peer = match w.peer {
                    Source::Rank(p) => i64::from(p),
                    Source::Any => -1,
                };
                let tag = match w.tag {
                    Tag::Value(t) => i64::from(t),
                    Tag::Any => i64::MIN,
                };
                out.extend_from_slice(&peer.to_le_bytes());
                out.extend_from_slice(&tag.to_le_bytes());
                out.extend_from_slice(&w.context.0.to_le_bytes());
            }
        }
    }
}

/// The [`State`] [`encode`] wrote, if `bytes` is one.
fn decode(bytes: &[u8]) -> Option<State> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(1)?[0] == 1 {
        return Some(State::Finished);
    }
    let call = r.text()?;
    let n = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let mut waiting_on = Vec::new();
    for _ in 0..n {
        let call = r.text()?;
        let peer = r.i64()?;
        let tag = r.i64()?;
        let context = r.i64()? as u64;
        waiting_on.push(Waiting {
            call,
            peer: u32::try_from(peer).map_or(Source::Any, Source::Rank),
            tag: i32::try_from(tag).map_or(Tag::Any, Tag::Value),
            context: ContextId(context),
        });
    }
    Some(State::Blocked { call, waiting_on })
}

/// Reads what [`encode`] wrote.
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

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn text(&mut self) -> Option<&'static str> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        Some(interned(std::str::from_utf8(self.take(len)?).ok()?))
    }
}

/// `s` as a `&'static str` (the report's types hold the names of calls, which the library
/// writes as constants): each name once per process, kept until it ends (a deadlock ends it).
pub(crate) fn interned(s: &str) -> &'static str {
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}
