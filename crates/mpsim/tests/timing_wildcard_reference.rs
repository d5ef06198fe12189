//! `ANY_SOURCE` receives against a reference simulation of `docs/timing.md` §5 (E5 on random
//! programs): which message each receive takes depends on the times, and the simulator must
//! pick the one the spec says, every time.
//!
//! `timing_reference_model.rs` covers every call, but its wildcards are chosen so that they
//! cannot change what matches. Here they do: programs of eager standard sends and `ssend`s,
//! `compute`, and receives, blocking or `irecv`s waited for at the end of the program. The
//! messages of one tag are received from any source, after a blocking `probe` from any
//! source, or from their sender (which a wildcard receive posted earlier may beat); the others
//! from their sender, with their tag or with `ANY_TAG` (which may take another message of that
//! sender's first).
//!
//! The reference is a discrete-event simulation written from §5 alone, far smaller than the
//! simulator: a message becomes visible to its receiver at its arrival (made monotone per
//! channel) and goes to the first receive posted that matches; a receive takes the earliest
//! matching message that arrived by its posting, or waits; among arrivals at one instant the
//! lower-ranked sender's comes first, and a rank that resumes at that instant sees them all;
//! an `ssend` ends when its ack arrives, `ACK_LATENCY` after the match (§3); a blocked rank
//! resumes to look again when any of its requests completes (or, in a probe, any message
//! arrives). Programs may deadlock (a receive from a sender whose message a wildcard took,
//! an `ssend` to it): the reference finds the ranks left blocked, and the run must end with
//! a deadlock report naming exactly those (S15).
//!
//! Half the programs run on a flat delay table with compute on a coarse grid, so that ties
//! happen often. Half share fewer cores than they have ranks, with X2's wake-ups
//! (`docs/extensions.md`): every message delivered to a blocked rank starts a
//! wake-up unless one is under way, and the rank resumes when the one under way at its
//! completion ends; a rank whose resume is scheduled is waking up, and what arrives by then
//! starts nothing. Every run is made sequentially, on 2 threads and on one per rank (the
//! parallel simulator must agree, wildcards and all).

mod common;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model};
use mpsim::{ANY_SOURCE, ANY_TAG, Comm, Error, Launcher, Request, Source, Tag};
use proptest::prelude::*;

/// The tag of the messages that wildcard receives and probes look for (and some receives
/// from a named sender).
const WILD: i32 = 5;
/// The delay tables of the programs that are not flat: `D_bsend` (eager sends) and `D_ssend`.
const TABLE: &[(u64, u64)] = &[(4, 900), (64, 1_150), (1_024, 6_000)];
const SSEND: &[(u64, u64)] = &[(8, 1_300), (1_024, 9_300)];

#[derive(Clone, Copy, Debug)]
struct Message {
    from: u32,
    to: u32,
    tag: i32,
    bytes: usize,
    /// Sent by `ssend` (timed by `D_ssend`, its sender blocked until the ack), else by an
    /// eager `send`.
    sync: bool,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Compute(u64),
    Send(usize),
    /// The rank's `k`-th receive, of a message with `tag` (any if `None`) from `from` (any if
    /// `None`): blocking, or an `irecv` (`later`) waited for at the end of the program.
    Recv {
        k: usize,
        from: Option<u32>,
        tag: Option<i32>,
        later: bool,
    },
    /// A blocking `probe` from any source with `tag`, then the rank's `k`-th receive, a
    /// blocking one from the source found.
    ProbeRecv {
        k: usize,
        tag: i32,
    },
    /// The wait for the rank's `k`-th receive, an `irecv`.
    Wait(usize),
}

#[derive(Debug)]
struct Program {
    ranks: u32,
    /// Every delay 1000 ns (ties are frequent), or [`TABLE`] and [`SSEND`].
    flat: bool,
    /// `ACK_LATENCY`, ns.
    ack_ns: u64,
    /// X2 of `docs/extensions.md`: the cores the ranks share (`None`: one each)
    /// and the wake-up latency of a blocked rank when they are fewer than the ranks.
    cores: Option<u32>,
    wake_ns: u64,
    messages: Vec<Message>,
    ops: Vec<Vec<Op>>,
}

impl Program {
    /// §3's `D(s)` of message `m`.
    fn delay(&self, m: &Message) -> u64 {
        if self.flat {
            return 1_000;
        }
        let points = if m.sync { SSEND } else { TABLE };
        let table = DelayTable::new("table", points.to_vec()).expect("a valid table");
        table.delay(m.bytes as u64)
    }

    fn model(&self) -> Model {
        let mut model = Model::worked_examples();
        if !self.flat {
            model.bsend = DelayTable::new("bsend", TABLE.to_vec()).expect("a valid table");
            model.ssend = DelayTable::new("ssend", SSEND.to_vec()).expect("a valid table");
        }
        model.ack_latency_ns = self.ack_ns;
        model.cpu.cores = self.cores;
        model.cpu.wake_latency_ns = self.wake_ns;
        model
    }

    /// X2: what a blocked rank's wake-up takes (0 unless the ranks outnumber the cores).
    fn wake_ns(&self) -> u64 {
        match self.cores {
            Some(cores) if self.ranks > cores => self.wake_ns,
            _ => 0,
        }
    }
}

/// An event of the reference, ordered as §5's key `(time, class, creator, n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A packet (class 0), the `n`-th event its creator made: message `i` reaching its
    /// receiver (made by its sender), or its acknowledgement reaching its sender (`ack`; made
    /// by its receiver).
    Packet {
        creator: u32,
        n: u64,
        i: usize,
        ack: bool,
    },
    /// A rank resumes its program (class 1).
    Resume { rank: u32, n: u64 },
}

/// A rank that does not run: blocked in a call, which it makes again once resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocked {
    /// In a wait: any of its requests completing resumes it to look again (the kernel's
    /// "a waiting rank is resumed at the time of any completion of its requests"), as does
    /// any message delivered to it in a `probe` (§5: a probe blocks like a receive that does
    /// not consume the message).
    Waiting { probe: bool },
    /// Its resume is scheduled: it is waking up (X2), and what arrives meanwhile starts no
    /// wake-up and schedules nothing more.
    Waking,
}

/// What the reference says of a run.
#[derive(Debug)]
enum Expected {
    /// Every rank's final clock, and for every rank the message each of its receives took,
    /// by the receives' order in the program.
    Done {
        clocks: Vec<u64>,
        took: Vec<Vec<Option<usize>>>,
    },
    /// Nothing left to happen and these ranks blocked (§5, S15); what each receive took
    /// until then.
    Deadlock {
        blocked: Vec<u32>,
        took: Vec<Vec<Option<usize>>>,
    },
}

impl Expected {
    fn took(&self) -> &Vec<Vec<Option<usize>>> {
        match self {
            Expected::Done { took, .. } | Expected::Deadlock { took, .. } => took,
        }
    }
}

/// A posted receive: its source and tag (any if `None`), and which of its rank's receives it
/// is.
type Posted = (Option<u32>, Option<i32>, usize);

/// The reference's state: §5's simulation of a [`Program`].
struct Des<'p> {
    p: &'p Program,
    clock: Vec<u64>,
    pc: Vec<usize>,
    blocked: Vec<Option<Blocked>>,
    /// Delivered and not yet received, in the order delivered.
    unexpected: Vec<Vec<usize>>,
    /// Receives posted and not yet matched, in the order posted: `(source, tag, k)`.
    posted: Vec<Vec<Posted>>,
    /// Whether each rank's `k`-th receive was posted (a blocking one is made again when its
    /// rank resumes, and posts once).
    posted_once: Vec<Vec<bool>>,
    /// Whether each message was sent, and each `ssend` acknowledged.
    sent: Vec<bool>,
    acked: Vec<bool>,
    /// For every rank, the message each of its receives took.
    took: Vec<Vec<Option<usize>>>,
    arrival: Vec<u64>,
    /// Latest arrival per channel (§5's FIFO rule).
    channel: HashMap<(u32, u32), u64>,
    /// Events each rank made (the `n` of its next).
    made: Vec<u64>,
    /// X2: when the wake-up under way of each blocked rank ends.
    awake_at: Vec<u64>,
    queue: BinaryHeap<Reverse<(u64, Event)>>,
}

impl Des<'_> {
    /// The `n` of the next event rank `r` makes.
    fn next_n(&mut self, r: usize) -> u64 {
        self.made[r] += 1;
        self.made[r] - 1
    }

    fn push(&mut self, t: u64, event: Event) {
        self.queue.push(Reverse((t, event)));
    }

    /// Rank `r`'s `k`-th receive takes message `i` at `t` (its arrival, or the posting if
    /// later); the sender of an `ssend` is acknowledged then (§3: `max(m.arrival, req.ts)`).
    fn take(&mut self, r: usize, k: usize, i: usize, t: u64) {
        self.took[r][k] = Some(i);
        if self.p.messages[i].sync {
            let n = self.next_n(r);
            let creator = r as u32;
            self.push(
                t + self.p.ack_ns,
                Event::Packet {
                    creator,
                    n,
                    i,
                    ack: true,
                },
            );
        }
    }

    /// X2: something reaches blocked rank `r` at `t`: a wake-up starts unless one is under
    /// way. Returns when the rank can run.
    fn wake(&mut self, r: usize, t: u64) -> u64 {
        let wake_ns = self.p.wake_ns();
        if wake_ns > 0 && t >= self.awake_at[r] {
            self.awake_at[r] = t + wake_ns;
        }
        t.max(self.awake_at[r])
    }

    /// Something blocked rank `r` may wait for happened at `t`: it resumes (X2: once awake)
    /// to make its call again. Nothing more while its resume is scheduled.
    fn resume(&mut self, r: usize, t: u64) {
        if !matches!(self.blocked[r], Some(Blocked::Waiting { .. })) {
            return;
        }
        self.blocked[r] = Some(Blocked::Waking);
        let at = self.wake(r, t);
        self.clock[r] = self.clock[r].max(at);
        let n = self.next_n(r);
        self.push(self.clock[r], Event::Resume { rank: r as u32, n });
    }

    /// Rank `r` blocks in the call it is making, which it makes again once resumed.
    fn block(&mut self, r: usize, probe: bool) {
        self.pc[r] -= 1;
        self.blocked[r] = Some(Blocked::Waiting { probe });
    }

    fn matches(&self, pattern: (Option<u32>, Option<i32>), i: usize) -> bool {
        let m = &self.p.messages[i];
        pattern.0.is_none_or(|s| s == m.from) && pattern.1.is_none_or(|t| t == m.tag)
    }

    /// Packet `i` (or its ack) reaches its destination at `t`.
    fn deliver(&mut self, i: usize, ack: bool, t: u64) {
        let m = self.p.messages[i];
        if ack {
            // Completes the `ssend` its sender is blocked in.
            self.acked[i] = true;
            self.resume(m.from as usize, t);
            return;
        }
        let r = m.to as usize;
        // X2: every message delivered to a blocked rank starts a wake-up, unless one is under
        // way (or its resume is scheduled: it is waking up).
        let blocked = self.blocked[r];
        if matches!(blocked, Some(Blocked::Waiting { .. })) {
            self.wake(r, t);
        }
        // The first receive posted that matches takes it.
        let posted = self.posted[r]
            .iter()
            .position(|&(from, tag, _)| self.matches((from, tag), i));
        match posted {
            Some(at) => {
                let (_, _, k) = self.posted[r].remove(at);
                self.take(r, k, i, t);
                self.resume(r, t);
            }
            None => {
                self.unexpected[r].push(i);
                if blocked == Some(Blocked::Waiting { probe: true }) {
                    self.resume(r, t);
                }
            }
        }
    }

    /// Rank `r` posts its `k`-th receive: it takes the earliest matching message delivered,
    /// or waits in the posted queue.
    fn post(&mut self, r: usize, k: usize, from: Option<u32>, tag: Option<i32>) {
        if std::mem::replace(&mut self.posted_once[r][k], true) {
            return;
        }
        let found = self.unexpected[r]
            .iter()
            .position(|&i| self.matches((from, tag), i));
        match found {
            Some(at) => {
                let i = self.unexpected[r].remove(at);
                self.take(r, k, i, self.clock[r]);
            }
            None => self.posted[r].push((from, tag, k)),
        }
    }

    /// Rank `r` runs from its clock until it blocks, computes or ends.
    fn run(&mut self, r: usize) {
        let p = self.p;
        // Resumed: it makes the call it blocked in again.
        self.blocked[r] = None;
        while let Some(&op) = p.ops[r].get(self.pc[r]) {
            self.pc[r] += 1;
            let now = self.clock[r];
            match op {
                Op::Compute(ns) => {
                    self.clock[r] += ns;
                    let n = self.next_n(r);
                    self.push(self.clock[r], Event::Resume { rank: r as u32, n });
                    return;
                }
                Op::Send(i) => {
                    let m = &p.messages[i];
                    if !std::mem::replace(&mut self.sent[i], true) {
                        let last = self.channel.entry((m.from, m.to)).or_insert(0);
                        *last = (now + p.delay(m)).max(*last);
                        self.arrival[i] = *last;
                        let n = self.next_n(r);
                        let creator = r as u32;
                        let packet = Event::Packet {
                            creator,
                            n,
                            i,
                            ack: false,
                        };
                        self.push(self.arrival[i], packet);
                    }
                    if m.sync && !self.acked[i] {
                        self.block(r, false);
                        return;
                    }
                }
                Op::Recv {
                    k,
                    from,
                    tag,
                    later,
                } => {
                    self.post(r, k, from, tag);
                    if !later && self.took[r][k].is_none() {
                        self.block(r, false);
                        return;
                    }
                }
                Op::Wait(k) => {
                    if self.took[r][k].is_none() {
                        self.block(r, false);
                        return;
                    }
                }
                Op::ProbeRecv { k, tag } => {
                    let found = self.unexpected[r]
                        .iter()
                        .find(|&&i| self.matches((None, Some(tag)), i));
                    let Some(&i) = found else {
                        self.block(r, true);
                        return;
                    };
                    // The receive from the source found takes the probed message: the
                    // earliest delivered from there with the tag.
                    self.post(r, k, Some(p.messages[i].from), Some(tag));
                    debug_assert_eq!(self.took[r][k], Some(i));
                }
            }
        }
    }
}

/// The outcome of `p` by §5's rules.
fn reference(p: &Program) -> Expected {
    let n = p.ranks as usize;
    let receives = |ops: &Vec<Op>| {
        ops.iter()
            .filter(|op| matches!(op, Op::Recv { .. } | Op::ProbeRecv { .. }))
            .count()
    };
    let mut des = Des {
        p,
        clock: vec![0; n],
        pc: vec![0; n],
        blocked: vec![None; n],
        unexpected: vec![Vec::new(); n],
        posted: vec![Vec::new(); n],
        posted_once: p.ops.iter().map(|ops| vec![false; receives(ops)]).collect(),
        sent: vec![false; p.messages.len()],
        acked: vec![false; p.messages.len()],
        took: p.ops.iter().map(|ops| vec![None; receives(ops)]).collect(),
        arrival: vec![0; p.messages.len()],
        channel: HashMap::new(),
        made: vec![0; n],
        awake_at: vec![0; n],
        queue: BinaryHeap::new(),
    };
    for r in 0..n {
        let n = des.next_n(r);
        des.push(0, Event::Resume { rank: r as u32, n });
    }
    while let Some(Reverse((t, event))) = des.queue.pop() {
        match event {
            Event::Packet { i, ack, .. } => des.deliver(i, ack, t),
            Event::Resume { rank, .. } => des.run(rank as usize),
        }
    }
    let blocked: Vec<u32> = (0..p.ranks)
        .filter(|&r| des.blocked[r as usize].is_some())
        .collect();
    if blocked.is_empty() {
        Expected::Done {
            clocks: des.clock,
            took: des.took,
        }
    } else {
        Expected::Deadlock {
            blocked,
            took: des.took,
        }
    }
}

/// Checks that a receive (or probe) of rank `me` met the message the reference says its
/// `k`-th receive took.
fn check(p: &Program, me: usize, k: usize, took: Option<usize>, status: mpsim::Status) {
    let i = took.unwrap_or_else(|| panic!("rank {me}'s receive {k} never ends in the reference"));
    let m = &p.messages[i];
    assert_eq!(
        (status.source, status.tag, status.bytes),
        (m.from, m.tag, m.bytes),
        "rank {me}'s receive {k} met another message than message {i}"
    );
}

/// Rank `world.rank()`'s part of `p`; each receive must take the message the reference says.
async fn run_rank(world: Comm, p: Arc<Program>, expected: Arc<Expected>) -> mpsim::Result<()> {
    let me = world.rank() as usize;
    let took = &expected.took()[me];
    let mut buffers = vec![vec![0u8; 2_048]; took.len()];
    {
        // Receive `k` uses `buffers[k]`: receives come in their order.
        let mut free = buffers.iter_mut();
        let mut pending: Vec<(usize, Request<'_>)> = Vec::new();
        for &op in &p.ops[me] {
            match op {
                Op::Compute(ns) => world.compute(Duration::from_nanos(ns)).await,
                Op::Send(i) => {
                    let m = &p.messages[i];
                    let data = common::payload(i, m.bytes);
                    if m.sync {
                        world.ssend(&data, m.to, m.tag).await?;
                    } else {
                        world.send(&data, m.to, m.tag).await?;
                    }
                }
                Op::Recv {
                    k,
                    from,
                    tag,
                    later,
                } => {
                    let buf = free.next().expect("a buffer per receive");
                    let source = from.map_or(ANY_SOURCE, Source::Rank);
                    let tag = tag.map_or(ANY_TAG, Tag::Value);
                    if later {
                        pending.push((k, world.irecv(buf, source, tag)?));
                    } else {
                        check(&p, me, k, took[k], world.recv(buf, source, tag).await?);
                    }
                }
                Op::ProbeRecv { k, tag } => {
                    let buf = free.next().expect("a buffer per receive");
                    let probed = world.probe(ANY_SOURCE, tag).await?;
                    check(&p, me, k, took[k], probed);
                    check(
                        &p,
                        me,
                        k,
                        took[k],
                        world.recv(buf, probed.source, tag).await?,
                    );
                }
                Op::Wait(k) => {
                    let at = pending.iter().position(|&(j, _)| j == k).expect("posted");
                    let (_, req) = pending.remove(at);
                    check(&p, me, k, took[k], req.wait().await?);
                }
            }
        }
    }
    for (k, buf) in buffers.iter().enumerate() {
        let i = took[k].expect("a rank that finished took a message with every receive");
        let m = &p.messages[i];
        assert_eq!(
            &buf[..m.bytes],
            &common::payload(i, m.bytes)[..],
            "message {i}'s data"
        );
    }
    Ok(())
}

fn program() -> impl Strategy<Value = Program> {
    let x2 = (proptest::option::weighted(0.5, 1u32..=4), 1u64..=700);
    (2u32..=6, any::<bool>(), 1u64..=500, x2).prop_flat_map(
        |(ranks, flat, ack_ns, (cores, wake_ns))| {
            // On a grid of 500 ns when flat: many sends at one instant, many arrivals at another.
            let compute = (0..ranks, 0u64..8).prop_map(move |(rank, k)| {
                let ns = if flat { k * 500 } else { k * 437 };
                (rank, None, ns)
            });
            let message = (
                (0..ranks, 1..ranks),
                (any::<bool>(), 0i32..3),
                0usize..=1_500,
                (proptest::bool::weighted(0.3), 0u8..4),
            )
                .prop_map(move |((from, hop), (wild, tag), bytes, (sync, how))| {
                    let tag = if wild { WILD } else { tag };
                    (from, Some(((from + hop) % ranks, tag, bytes, sync, how)), 0)
                });
            let step = prop_oneof![1 => compute, 3 => message];
            proptest::collection::vec(step, 1..40).prop_map(move |steps| {
                let mut ops = vec![Vec::new(); ranks as usize];
                let mut waits = vec![Vec::new(); ranks as usize];
                let mut messages = Vec::new();
                for (rank, message, ns) in steps {
                    let Some((to, tag, bytes, sync, how)) = message else {
                        ops[rank as usize].push(Op::Compute(ns));
                        continue;
                    };
                    ops[rank as usize].push(Op::Send(messages.len()));
                    let receiver = &mut ops[to as usize];
                    let k = receiver
                        .iter()
                        .filter(|op| matches!(op, Op::Recv { .. } | Op::ProbeRecv { .. }))
                        .count();
                    // A message of the wildcards' tag is received from any source, after a
                    // probe, or from its sender (which wildcards posted earlier may beat);
                    // others from their sender, with their tag or `ANY_TAG` (which may take
                    // another message of that sender's first). Some receives are `irecv`s
                    // waited for last.
                    let from = match how {
                        _ if tag != WILD => Some(rank),
                        0 => Some(rank),
                        _ => None,
                    };
                    let any_tag = tag != WILD && how == 1;
                    let later = how == 3;
                    receiver.push(if tag == WILD && how == 1 {
                        Op::ProbeRecv { k, tag }
                    } else {
                        Op::Recv {
                            k,
                            from,
                            tag: (!any_tag).then_some(tag),
                            later,
                        }
                    });
                    if later {
                        waits[to as usize].push(Op::Wait(k));
                    }
                    messages.push(Message {
                        from: rank,
                        to,
                        tag,
                        bytes,
                        sync,
                    });
                }
                for (ops, waits) in ops.iter_mut().zip(waits) {
                    ops.extend(waits);
                }
                Program {
                    ranks,
                    flat,
                    ack_ns,
                    cores,
                    wake_ns,
                    messages,
                    ops,
                }
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// §5 and E5: every receive takes the message the reference's simulation says, and every
    /// final clock is the reference's, sequential and parallel; or, when the reference finds
    /// ranks blocked with nothing left to happen, the run ends in a deadlock naming exactly
    /// those (S15).
    #[test]
    fn timing_e5_wildcards_take_the_earliest_arrival_on_random_programs(p in program()) {
        let expected = Arc::new(reference(&p));
        let launcher = Launcher::new(p.ranks).model(p.model());
        let p = Arc::new(p);
        let outcome = common::simulate_all_ways(launcher, p.ranks, |world: Comm| {
            run_rank(world, Arc::clone(&p), Arc::clone(&expected))
        });
        match &*expected {
            Expected::Done { clocks, .. } => {
                prop_assert!(outcome.error.is_none(), "the run failed: {:?}", outcome.error);
                let simulated: Vec<u64> =
                    outcome.report.ranks.iter().map(|r| r.clock_ns).collect();
                prop_assert_eq!(&simulated, clocks, "final clocks of {:?}", p);
            }
            Expected::Deadlock { blocked, .. } => {
                let Some(Error::Deadlock { report }) = &outcome.error else {
                    return Err(TestCaseError::fail(format!(
                        "expected a deadlock of ranks {blocked:?}, got {:?}",
                        outcome.error
                    )));
                };
                let report = report.to_string();
                for r in 0..p.ranks {
                    prop_assert_eq!(
                        report.contains(&format!("rank {r} blocked")),
                        blocked.contains(&r),
                        "rank {} in the report of a deadlock of {:?}: {}",
                        r,
                        blocked,
                        report
                    );
                }
            }
        }
    }
}
