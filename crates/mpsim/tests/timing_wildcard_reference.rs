//! `ANY_SOURCE` receives against a reference simulation of `spec/timing.md` §5 (E5 on random
//! programs): which message each receive takes depends on the times, and the simulator must
//! pick the one the spec says, every time.
//!
//! `timing_reference_model.rs` covers every call, but its wildcards are chosen so that they
//! cannot change what matches. Here they do: programs of eager standard sends (they never
//! block) and blocking receives, some from a named source, some from `ANY_SOURCE` with a tag
//! of their own, `compute` between them. The reference is a discrete-event simulation written
//! from §5 alone, far smaller than the simulator: a message becomes visible to its receiver at
//! its arrival (made monotone per channel); a receive takes the earliest matching message
//! that arrived by its posting, or else the first one to arrive; among arrivals at one
//! instant the lower-ranked sender's comes first, and a rank that resumes at that instant sees
//! them all. Half the programs run on a flat delay table with compute on a coarse grid, so
//! that ties happen often. Half share fewer cores than they have ranks, with X2's wake-ups
//! (`crates/mpsim-sim/EXTENSIONS.md`): every message delivered to a blocked rank starts a
//! wake-up unless one is under way, and the rank resumes when the one under way at its
//! completion ends.
//!
//! Programs are made from one global sequence of messages, each rank's calls in that order:
//! sends never block, and a wildcard receive finds, by the time its own message was sent, at
//! least as many messages of its tag as there were such receives before it, so none deadlock.
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
/// The three-point delay table of the programs that are not flat.
const TABLE: &[(u64, u64)] = &[(4, 900), (64, 1_150), (1_024, 6_000)];

#[derive(Clone, Copy, Debug)]
struct Message {
    from: u32,
    to: u32,
    tag: i32,
    bytes: usize,
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
}

#[derive(Debug)]
struct Program {
    ranks: u32,
    /// Every delay 1000 ns (ties are frequent), or [`TABLE`].
    flat: bool,
    /// X2 of `crates/mpsim-sim/EXTENSIONS.md`: the cores the ranks share (`None`: one each)
    /// and the wake-up latency of a blocked rank when they are fewer than the ranks.
    cores: Option<u32>,
    wake_ns: u64,
    messages: Vec<Message>,
    ops: Vec<Vec<Op>>,
}

impl Program {
    fn delay(&self, bytes: usize) -> u64 {
        if self.flat {
            return 1_000;
        }
        let table = DelayTable::new("bsend", TABLE.to_vec()).expect("a valid table");
        table.delay(bytes as u64)
    }

    fn model(&self) -> Model {
        let mut model = Model::worked_examples();
        if !self.flat {
            model.bsend = DelayTable::new("bsend", TABLE.to_vec()).expect("a valid table");
        }
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
    /// Message `i` arrives (class 0), sent by `from` as its `n`-th message.
    Arrival { from: u32, n: u64, i: usize },
    /// A rank resumes its program (class 1).
    Resume { rank: u32, n: u64 },
}

/// Every rank's final clock, and for every rank the messages its receives took, in order.
fn reference(p: &Program) -> (Vec<u64>, Vec<Vec<usize>>) {
    let n = p.ranks as usize;
    let mut clock = vec![0u64; n];
    let mut pc = vec![0usize; n];
    let mut blocked: Vec<Option<(Option<u32>, i32)>> = vec![None; n];
    // Delivered and not yet received, in the order delivered.
    let mut unexpected: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut taken: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut arrival = vec![0u64; p.messages.len()];
    let mut channel: HashMap<(u32, u32), u64> = HashMap::new();
    let mut made = vec![0u64; n];
    // X2: when the wake-up under way of each blocked rank ends.
    let mut awake_at = vec![0u64; n];
    let wake_ns = p.wake_ns();
    let mut queue = BinaryHeap::new();
    for rank in 0..p.ranks {
        queue.push(Reverse((0, Event::Resume { rank, n: 0 })));
        made[rank as usize] = 1;
    }
    let matches = |pattern: (Option<u32>, i32), m: &Message| {
        pattern.0.is_none_or(|s| s == m.from) && pattern.1 == m.tag
    };
    while let Some(Reverse((t, event))) = queue.pop() {
        match event {
            Event::Arrival { i, .. } => {
                let r = p.messages[i].to as usize;
                // X2: every message delivered to a blocked rank starts a wake-up, unless one
                // is under way; the rank resumes when the one under way at its completion
                // ends.
                if blocked[r].is_some() && wake_ns > 0 && t >= awake_at[r] {
                    awake_at[r] = t + wake_ns;
                }
                match blocked[r] {
                    Some(pattern) if matches(pattern, &p.messages[i]) => {
                        blocked[r] = None;
                        taken[r].push(i);
                        clock[r] = clock[r].max(t.max(awake_at[r]));
                        let k = made[r];
                        made[r] += 1;
                        queue.push(Reverse((
                            clock[r],
                            Event::Resume {
                                rank: r as u32,
                                n: k,
                            },
                        )));
                    }
                    _ => unexpected[r].push(i),
                }
            }
            Event::Resume { rank, .. } => {
                let r = rank as usize;
                while let Some(&op) = p.ops[r].get(pc[r]) {
                    pc[r] += 1;
                    match op {
                        Op::Compute(ns) => {
                            clock[r] += ns;
                            let k = made[r];
                            made[r] += 1;
                            queue.push(Reverse((clock[r], Event::Resume { rank, n: k })));
                            break;
                        }
                        Op::Send(i) => {
                            let m = &p.messages[i];
                            let last = channel.entry((m.from, m.to)).or_insert(0);
                            *last = (clock[r] + p.delay(m.bytes)).max(*last);
                            arrival[i] = *last;
                            let k = made[r];
                            made[r] += 1;
                            let event = Event::Arrival {
                                from: rank,
                                n: k,
                                i,
                            };
                            queue.push(Reverse((arrival[i], event)));
                        }
                        Op::Recv { from, tag } => {
                            let pattern = (from, tag);
                            let found = unexpected[r]
                                .iter()
                                .position(|&i| matches(pattern, &p.messages[i]));
                            match found {
                                Some(at) => {
                                    let i = unexpected[r].remove(at);
                                    taken[r].push(i);
                                    clock[r] = clock[r].max(arrival[i]);
                                }
                                None => {
                                    blocked[r] = Some(pattern);
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        blocked.iter().all(Option::is_none),
        "the generated program deadlocks: {p:?}"
    );
    (clock, taken)
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
                world.send(&payload(i, m.bytes), m.to, m.tag).await?;
            }
            Op::Recv { from, tag } => {
                let i = *expected.next().expect("the reference took as many");
                let m = &p.messages[i];
                let mut buf = vec![0u8; 2_048];
                let status = world
                    .recv(&mut buf, from.unwrap_or(ANY_SOURCE), tag)
                    .await?;
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
    (2u32..=6, any::<bool>(), x2).prop_flat_map(|(ranks, flat, (cores, wake_ns))| {
        // On a grid of 500 ns when flat: many sends at one instant, many arrivals at another.
        let compute = (0..ranks, 0u64..8).prop_map(move |(rank, k)| {
            let ns = if flat { k * 500 } else { k * 437 };
            (rank, None, ns)
        });
        let message = (0..ranks, 1..ranks, any::<bool>(), 0i32..3, 0usize..=1_500).prop_map(
            move |(from, hop, wild, tag, bytes)| {
                let tag = if wild { WILD } else { tag };
                (from, Some(((from + hop) % ranks, tag, bytes)), 0)
            },
        );
        let step = prop_oneof![1 => compute, 3 => message];
        proptest::collection::vec(step, 1..40).prop_map(move |steps| {
            let mut ops = vec![Vec::new(); ranks as usize];
            let mut messages = Vec::new();
            for (rank, message, ns) in steps {
                let Some((to, tag, bytes)) = message else {
                    ops[rank as usize].push(Op::Compute(ns));
                    continue;
                };
                ops[rank as usize].push(Op::Send(messages.len()));
                let from = (tag != WILD).then_some(rank);
                ops[to as usize].push(Op::Recv { from, tag });
                messages.push(Message {
                    from: rank,
                    to,
                    tag,
                    bytes,
                });
            }
            Program {
                ranks,
                flat,
                cores,
                wake_ns,
                messages,
                ops,
            }
        })
    })
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
