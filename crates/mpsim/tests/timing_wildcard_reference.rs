//! `ANY_SOURCE` receives against a reference simulation of `spec/timing.md` §5 (E5 on random
//! programs): which message each receive takes depends on the times, and the simulator must
//! pick the one the spec says, every time.
//!
//! `timing_reference_model.rs` covers every call, but its wildcards are chosen so that they
//! cannot change what matches. Here they do: programs of eager standard sends and `ssend`s
//! and blocking receives, some from a named source, some from `ANY_SOURCE` with a tag of
//! their own (whose messages are all eager), directly or after a blocking `probe` from any
//! source, `compute` between them. The reference is a discrete-event simulation written
//! from §5 alone, far smaller than the simulator: a message becomes visible to its receiver at
//! its arrival (made monotone per channel); a receive takes the earliest matching message
//! that arrived by its posting, or else the first one to arrive; among arrivals at one
//! instant the lower-ranked sender's comes first, and a rank that resumes at that instant sees
//! them all; an `ssend` ends when its ack arrives, `ACK_LATENCY` after the match (§3). Half the programs run on a flat delay table with compute on a coarse grid, so
//! that ties happen often. Half share fewer cores than they have ranks, with X2's wake-ups
//! (`crates/mpsim-sim/EXTENSIONS.md`): every message delivered to a blocked rank starts a
//! wake-up unless one is under way, and the rank resumes when the one under way at its
//! completion ends.
//!
//! Programs are made from one global sequence of messages, each rank's calls in that order:
//! a wildcard receive finds, by the time its own message was sent, at least as many messages
//! of its tag as there were such receives before it, and an `ssend`'s receive takes it alone,
//! so none deadlock.
//! Every run is made sequentially, on 2 threads and on one per rank (the parallel simulator
//! must agree, wildcards and all).

mod common;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model};
use mpsim::{ANY_SOURCE, Comm, Launcher};
use proptest::prelude::*;

/// The tag of every message received with `ANY_SOURCE`, and of no other.
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
    /// eager `send`. Never a wildcard's message: a wildcard receive may take another message
    /// of its tag first, and an `ssend` waiting for a later one could then deadlock.
    sync: bool,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Compute(u64),
    Send(usize),
    /// A blocking receive of a message to this rank with `tag`, from `from` or any source.
    Recv {
        from: Option<u32>,
        tag: i32,
    },
    /// A blocking `probe` from any source with `tag`, then a receive from the source it found.
    ProbeRecv {
        tag: i32,
    },
}

#[derive(Debug)]
struct Program {
    ranks: u32,
    /// Every delay 1000 ns (ties are frequent), or [`TABLE`] and [`SSEND`].
    flat: bool,
    /// `ACK_LATENCY`, ns.
    ack_ns: u64,
    /// X2 of `crates/mpsim-sim/EXTENSIONS.md`: the cores the ranks share (`None`: one each)
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

/// What a blocked rank waits for.
#[derive(Clone, Copy, Debug)]
enum Blocked {
    /// A message to it with this source (any if `None`) and tag.
    Recv(Option<u32>, i32),
    /// The acknowledgement of its `ssend` of message `i`.
    Ssend(usize),
    /// A message in a `probe`: every message delivered to the rank resumes it to look again
    /// (§5: `probe` blocks like a receive that does not consume the message).
    Probe,
    /// The same, a message delivered: its resume is scheduled (X2: it is waking up, and what
    /// arrives meanwhile starts no wake-up).
    ProbeWaking,
}

/// The reference's state: §5's simulation of a [`Program`].
struct Des<'p> {
    p: &'p Program,
    clock: Vec<u64>,
    pc: Vec<usize>,
    blocked: Vec<Option<Blocked>>,
    /// Delivered and not yet received, in the order delivered.
    unexpected: Vec<Vec<usize>>,
    /// For every rank, the messages its receives took, in order.
    taken: Vec<Vec<usize>>,
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

    /// Rank `r`'s receive takes message `i` at `t` (its arrival, or its posting if later);
    /// the sender of an `ssend` is acknowledged then (§3: `max(m.arrival, req.ts)`).
    fn take(&mut self, r: usize, i: usize, t: u64) {
        self.taken[r].push(i);
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

    /// What blocked rank `r` waits for happened at `t`: it resumes (X2: once awake).
    fn complete(&mut self, r: usize, t: u64) {
        self.blocked[r] = None;
        let at = self.wake(r, t);
        self.clock[r] = self.clock[r].max(at);
        let n = self.next_n(r);
        self.push(self.clock[r], Event::Resume { rank: r as u32, n });
    }

    fn matches(&self, pattern: (Option<u32>, i32), i: usize) -> bool {
        let m = &self.p.messages[i];
        pattern.0.is_none_or(|s| s == m.from) && pattern.1 == m.tag
    }

    /// Packet `i` (or its ack) reaches its destination at `t`.
    fn deliver(&mut self, i: usize, ack: bool, t: u64) {
        let m = self.p.messages[i];
        if ack {
            let s = m.from as usize;
            assert!(matches!(self.blocked[s], Some(Blocked::Ssend(k)) if k == i));
            self.complete(s, t);
            return;
        }
        let r = m.to as usize;
        // X2: every message delivered to a blocked rank starts a wake-up, unless one is under
        // way (or its resume is scheduled: it is waking up).
        if self.blocked[r].is_some_and(|b| !matches!(b, Blocked::ProbeWaking)) {
            self.wake(r, t);
        }
        match self.blocked[r] {
            Some(Blocked::Recv(from, tag)) if self.matches((from, tag), i) => {
                self.take(r, i, t);
                self.complete(r, t);
            }
            Some(Blocked::Probe) => {
                self.unexpected[r].push(i);
                self.complete(r, t);
                self.blocked[r] = Some(Blocked::ProbeWaking);
            }
            _ => self.unexpected[r].push(i),
        }
    }

    /// Rank `r` runs from its clock until it blocks, computes or ends.
    fn run(&mut self, r: usize) {
        let p = self.p;
        // A probe resumed by a delivery looks again.
        if matches!(self.blocked[r], Some(Blocked::ProbeWaking)) {
            self.blocked[r] = None;
        }
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
                    let last = self.channel.entry((m.from, m.to)).or_insert(0);
                    *last = (now + p.delay(m)).max(*last);
                    self.arrival[i] = *last;
                    let n = self.next_n(r);
                    let creator = r as u32;
                    self.push(
                        self.arrival[i],
                        Event::Packet {
                            creator,
                            n,
                            i,
                            ack: false,
                        },
                    );
                    if m.sync {
                        self.blocked[r] = Some(Blocked::Ssend(i));
                        return;
                    }
                }
                Op::Recv { from, tag } => {
                    let found = self.unexpected[r]
                        .iter()
                        .position(|&i| self.matches((from, tag), i));
                    let Some(at) = found else {
                        self.blocked[r] = Some(Blocked::Recv(from, tag));
                        return;
                    };
                    let i = self.unexpected[r].remove(at);
                    // It arrived by now: taken now.
                    self.take(r, i, now);
                }
                Op::ProbeRecv { tag } => {
                    let found = self.unexpected[r]
                        .iter()
                        .position(|&i| self.matches((None, tag), i));
                    let Some(at) = found else {
                        // The probe is made again when the rank resumes.
                        self.pc[r] -= 1;
                        self.blocked[r] = Some(Blocked::Probe);
                        return;
                    };
                    // The receive from the source found takes the probed message: the
                    // earliest from there with the tag.
                    let i = self.unexpected[r].remove(at);
                    self.take(r, i, now);
                }
            }
        }
    }
}

/// Every rank's final clock, and for every rank the messages its receives took, in order.
fn reference(p: &Program) -> (Vec<u64>, Vec<Vec<usize>>) {
    let n = p.ranks as usize;
    let mut des = Des {
        p,
        clock: vec![0; n],
        pc: vec![0; n],
        blocked: vec![None; n],
        unexpected: vec![Vec::new(); n],
        taken: vec![Vec::new(); n],
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
    assert!(
        des.blocked.iter().all(Option::is_none),
        "the generated program deadlocks: {p:?}"
    );
    (des.clock, des.taken)
}

/// The bytes of message `i`.
fn payload(i: usize, bytes: usize) -> Vec<u8> {
    (0..bytes).map(|k| (i * 31 + k * 7) as u8).collect()
}

/// Rank `world.rank()`'s part of `p`; each receive must take the message `taken` names.
async fn run_rank(world: Comm, p: Arc<Program>, taken: Arc<Vec<Vec<usize>>>) -> mpsim::Result<()> {
    let me = world.rank() as usize;
    let mut expected = taken[me].iter();
    for &op in &p.ops[me] {
        match op {
            Op::Compute(ns) => world.compute(Duration::from_nanos(ns)).await,
            Op::Send(i) => {
                let m = &p.messages[i];
                let data = payload(i, m.bytes);
                if m.sync {
                    world.ssend(&data, m.to, m.tag).await?;
                } else {
                    world.send(&data, m.to, m.tag).await?;
                }
            }
            Op::Recv { .. } | Op::ProbeRecv { .. } => {
                let i = *expected.next().expect("the reference took as many");
                let m = &p.messages[i];
                let mut buf = vec![0u8; 2_048];
                let (from, tag) = match op {
                    Op::Recv { from, tag } => (from.unwrap_or(ANY_SOURCE), tag),
                    Op::ProbeRecv { tag } => {
                        let probed = world.probe(ANY_SOURCE, tag).await?;
                        assert_eq!(
                            (probed.source, probed.bytes),
                            (m.from, m.bytes),
                            "rank {me}'s probe found another message than message {i}"
                        );
                        (probed.source, tag)
                    }
                    _ => unreachable!(),
                };
                let status = world.recv(&mut buf, from, tag).await?;
                assert_eq!(
                    (status.source, status.tag, status.bytes),
                    (m.from, m.tag, m.bytes),
                    "rank {me}'s receive took another message than message {i}"
                );
                assert_eq!(
                    &buf[..m.bytes],
                    &payload(i, m.bytes)[..],
                    "message {i}'s data"
                );
            }
        }
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
                any::<bool>(),
                0i32..3,
                0usize..=1_500,
                (proptest::bool::weighted(0.3), any::<bool>()),
            )
                .prop_map(move |((from, hop), wild, tag, bytes, (sync, probe))| {
                    let tag = if wild { WILD } else { tag };
                    // Only wildcard messages are probed (from any source).
                    let (sync, probe) = (sync && !wild, probe && wild);
                    (
                        from,
                        Some(((from + hop) % ranks, tag, bytes, sync, probe)),
                        0,
                    )
                });
            let step = prop_oneof![1 => compute, 3 => message];
            proptest::collection::vec(step, 1..40).prop_map(move |steps| {
                let mut ops = vec![Vec::new(); ranks as usize];
                let mut messages = Vec::new();
                for (rank, message, ns) in steps {
                    let Some((to, tag, bytes, sync, probe)) = message else {
                        ops[rank as usize].push(Op::Compute(ns));
                        continue;
                    };
                    ops[rank as usize].push(Op::Send(messages.len()));
                    let from = (tag != WILD).then_some(rank);
                    let receive = if probe {
                        Op::ProbeRecv { tag }
                    } else {
                        Op::Recv { from, tag }
                    };
                    ops[to as usize].push(receive);
                    messages.push(Message {
                        from: rank,
                        to,
                        tag,
                        bytes,
                        sync,
                    });
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
    /// final clock is the reference's, sequential and parallel.
    #[test]
    fn timing_e5_wildcards_take_the_earliest_arrival_on_random_programs(p in program()) {
        let (clocks, taken) = reference(&p);
        let launcher = Launcher::new(p.ranks).model(p.model());
        let (p, taken) = (Arc::new(p), Arc::new(taken));
        let outcome = common::simulate_all_ways(launcher, p.ranks, |world: Comm| {
            run_rank(world, Arc::clone(&p), Arc::clone(&taken))
        });
        prop_assert!(outcome.error.is_none(), "the run failed: {:?}", outcome.error);
        let simulated: Vec<u64> = outcome.report.ranks.iter().map(|r| r.clock_ns).collect();
        prop_assert_eq!(simulated, clocks, "final clocks of {:?}", p);
    }
}
