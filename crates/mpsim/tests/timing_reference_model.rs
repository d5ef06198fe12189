//! The simulator against a reference model of `spec/timing.md` §2–§5 and S4/S8, on random
//! programs: every rank's final clock must be the model's, to the nanosecond.
//!
//! The worked examples (E1–E6) check a handful of hand-made cases. Here proptest makes
//! programs of 2 to 5 ranks from every blocking and nonblocking send mode (standard, eager
//! and rendezvous, synchronous, buffered), blocking and nonblocking receives whose waits come
//! at once or at the end of the program, `compute` between them and `buffer_detach` (S8), on
//! delay tables that interpolate and extrapolate (§4) and channels where a large message is
//! followed by a small one (the FIFO rule of §5).
//!
//! The reference knows nothing of the simulator: it is the spec's arithmetic, evaluated by
//! running each rank's operations as far as they can go, round after round. Every receive
//! names its source and tag, so the k-th receive of rank `r` from `s` with tag `t` takes the
//! k-th message `s` sent `r` with tag `t` (non-overtaking), whatever the times: what matches
//! is known without a simulation, and only the times are to be computed. Programs are made
//! from one global sequence of messages, each rank's calls in that order, which keeps them
//! free of deadlock (by induction along the sequence).
//!
//! Every run is also made on 2 threads and on one per rank, which must give the same report
//! (`common::simulate_all_ways`).

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model};
use mpsim::{Comm, Launcher, Request};
use proptest::prelude::*;

/// `D_ssend`: two points, so sizes between them interpolate and larger ones extrapolate.
const SSEND: &[(u64, u64)] = &[(8, 1_300), (1_024, 9_300)];
/// `D_bsend`: three points, the first above size 0 (sizes below it take its delay).
const BSEND: &[(u64, u64)] = &[(4, 900), (64, 1_150), (1_024, 6_000)];
/// Standard sends above this many bytes go by rendezvous (timed as `ssend`).
const EAGER_THRESHOLD: usize = 256;
/// What each rank that buffers sends attaches: more than any program can fill.
const ATTACHED: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendKind {
    Send,
    Ssend,
    Bsend,
    Isend,
    Issend,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecvKind {
    Recv,
    Irecv,
}

/// When a nonblocking call's wait comes: right after it, or at the end of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitAt {
    Now,
    End,
}

#[derive(Clone, Debug)]
struct Message {
    from: u32,
    to: u32,
    tag: i32,
    bytes: usize,
    send: SendKind,
    send_wait: WaitAt,
    recv: RecvKind,
    recv_wait: WaitAt,
}

impl Message {
    /// Timed from `D_bsend` (a buffered or an eager standard send) rather than `D_ssend`
    /// (§2).
    fn buffered_timing(&self) -> bool {
        match self.send {
            SendKind::Bsend => true,
            SendKind::Send | SendKind::Isend => self.bytes <= EAGER_THRESHOLD,
            SendKind::Ssend | SendKind::Issend => false,
        }
    }

    /// Whether the send's wait lasts until the acknowledgement (§3: SSEND), rather than
    /// returning at once (BSEND and eager standard sends, S4).
    fn waits_for_ack(&self) -> bool {
        !self.buffered_timing()
    }
}

/// One step of the global sequence the program is made from.
#[derive(Clone, Debug)]
enum Step {
    Compute { rank: u32, ns: u64 },
    Message(Message),
}

/// One call of one rank; messages by their index in the program's list.
#[derive(Clone, Copy, Debug)]
enum Op {
    Compute(u64),
    Send(usize),
    Recv(usize),
    WaitSend(usize),
    WaitRecv(usize),
    /// `buffer_detach`, last, by a rank that made buffered sends.
    Detach,
}

#[derive(Debug)]
struct Program {
    ranks: u32,
    ack_ns: u64,
    messages: Vec<Message>,
    ops: Vec<Vec<Op>>,
    /// Whether each rank makes buffered sends (it attaches a buffer first).
    buffers: Vec<bool>,
}

impl Program {
    fn new(ranks: u32, ack_ns: u64, steps: Vec<Step>) -> Self {
        let n = ranks as usize;
        let (mut ops, mut at_end) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let (mut messages, mut buffers) = (Vec::new(), vec![false; n]);
        for step in steps {
            match step {
                Step::Compute { rank, ns } => ops[rank as usize].push(Op::Compute(ns)),
                Step::Message(m) => {
                    let i = messages.len();
                    let (from, to) = (m.from as usize, m.to as usize);
                    ops[from].push(Op::Send(i));
                    if matches!(m.send, SendKind::Isend | SendKind::Issend) {
                        match m.send_wait {
                            WaitAt::Now => ops[from].push(Op::WaitSend(i)),
                            WaitAt::End => at_end[from].push(Op::WaitSend(i)),
                        }
                    }
                    buffers[from] |= m.send == SendKind::Bsend;
                    ops[to].push(Op::Recv(i));
                    if m.recv == RecvKind::Irecv {
                        match m.recv_wait {
                            WaitAt::Now => ops[to].push(Op::WaitRecv(i)),
                            WaitAt::End => at_end[to].push(Op::WaitRecv(i)),
                        }
                    }
                    messages.push(m);
                }
            }
        }
        for (r, ops) in ops.iter_mut().enumerate() {
            ops.append(&mut at_end[r]);
            if buffers[r] {
                ops.push(Op::Detach);
            }
        }
        Program {
            ranks,
            ack_ns,
            messages,
            ops,
            buffers,
        }
    }

    fn model(&self) -> Model {
        let mut model = Model::worked_examples();
        model.ssend = DelayTable::new("ssend", SSEND.to_vec()).expect("a valid table");
        model.bsend = DelayTable::new("bsend", BSEND.to_vec()).expect("a valid table");
        model.ack_latency_ns = self.ack_ns;
        model.eager_threshold = EAGER_THRESHOLD;
        model
    }
}

/// `D(s)` as §4 defines it, from the spec's formula alone.
fn delay(points: &[(u64, u64)], s: u64) -> u64 {
    let (x0, y0) = points[0];
    if s <= x0 || points.len() == 1 {
        return y0;
    }
    let k = points
        .windows(2)
        .position(|w| s <= w[1].0)
        .unwrap_or(points.len() - 2);
    let ((x0, y0), (x1, y1)) = (points[k], points[k + 1]);
    let d = y0 as i128
        + (2 * (y1 as i128 - y0 as i128) * (s as i128 - x0 as i128) + (x1 - x0) as i128)
            .div_euclid(2 * (x1 - x0) as i128);
    let d = d as u64;
    if s > x1 { d.max(y1) } else { d }
}

/// Every rank's final clock by the spec's rules, evaluated rank by rank as far as each can
/// go until all are done.
fn reference_clocks(p: &Program) -> Vec<u64> {
    let n = p.ranks as usize;
    let m = p.messages.len();
    let (mut arrival, mut posted) = (vec![None; m], vec![None::<u64>; m]);
    let mut sent = vec![false; m];
    let mut channel: HashMap<(u32, u32), u64> = HashMap::new();
    let (mut pc, mut clock) = (vec![0; n], vec![0u64; n]);
    // The ack of message `i` arrives back at `max(arrival, posted) + ACK_LATENCY` (§3, S9).
    let ack = |i: usize, arrival: &[Option<u64>], posted: &[Option<u64>]| {
        Some(arrival[i]?.max(posted[i]?) + p.ack_ns)
    };
    loop {
        let mut moved = false;
        for r in 0..n {
            while let Some(&op) = p.ops[r].get(pc[r]) {
                let c = &mut clock[r];
                match op {
                    Op::Compute(ns) => *c += ns,
                    Op::Send(i) => {
                        let msg = &p.messages[i];
                        if !sent[i] {
                            // §3: recv_ts = t + D(s); §5: arrivals monotone per channel.
                            let table = if msg.buffered_timing() { BSEND } else { SSEND };
                            let recv_ts = *c + delay(table, msg.bytes as u64);
                            let last = channel.entry((msg.from, msg.to)).or_insert(0);
                            *last = recv_ts.max(*last);
                            arrival[i] = Some(*last);
                            sent[i] = true;
                        }
                        let blocking = matches!(msg.send, SendKind::Send | SendKind::Ssend);
                        if blocking && msg.waits_for_ack() {
                            let Some(a) = ack(i, &arrival, &posted) else {
                                break;
                            };
                            *c = (*c).max(a);
                        }
                    }
                    Op::Recv(i) => {
                        let t = *posted[i].get_or_insert(*c);
                        if p.messages[i].recv == RecvKind::Recv {
                            let Some(a) = arrival[i] else { break };
                            *c = t.max(a);
                        }
                    }
                    Op::WaitSend(i) => {
                        if p.messages[i].waits_for_ack() {
                            let Some(a) = ack(i, &arrival, &posted) else {
                                break;
                            };
                            *c = (*c).max(a);
                        }
                    }
                    Op::WaitRecv(i) => {
                        let Some(a) = arrival[i] else { break };
                        *c = (*c).max(a);
                    }
                    Op::Detach => {
                        // S8: the latest ack of the rank's buffered messages.
                        let mine = p.messages.iter().enumerate().filter(|(_, msg)| {
                            msg.from as usize == r && msg.send == SendKind::Bsend
                        });
                        let acks: Option<Vec<u64>> =
                            mine.map(|(i, _)| ack(i, &arrival, &posted)).collect();
                        let Some(acks) = acks else { break };
                        *c = acks.into_iter().fold(*c, u64::max);
                    }
                }
                pc[r] += 1;
                moved = true;
            }
        }
        if (0..n).all(|r| pc[r] == p.ops[r].len()) {
            return clock;
        }
        assert!(moved, "the generated program deadlocks: {p:?}");
    }
}

/// The bytes of message `i`: different for every message and every position.
fn payload(i: usize, bytes: usize) -> Vec<u8> {
    (0..bytes).map(|k| (i * 31 + k * 7) as u8).collect()
}

/// Rank `world.rank()`'s part of `p`: its calls in order, each received message checked.
async fn run_rank(world: Comm, p: Arc<Program>) -> mpsim::Result<()> {
    let me = world.rank() as usize;
    let ops = &p.ops[me];
    let receives: Vec<usize> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::Recv(i) => Some(i),
            _ => None,
        })
        .collect();
    let mut buffers: Vec<Vec<u8>> = receives
        .iter()
        .map(|&i| vec![0u8; p.messages[i].bytes])
        .collect();
    if p.buffers[me] {
        world.buffer_attach(ATTACHED)?;
    }
    {
        let mut free = buffers.iter_mut();
        let mut sends: HashMap<usize, Request<'static>> = HashMap::new();
        let mut recvs: HashMap<usize, Request<'_>> = HashMap::new();
        for &op in ops {
            match op {
                Op::Compute(ns) => world.compute(Duration::from_nanos(ns)).await,
                Op::Send(i) => {
                    let m = &p.messages[i];
                    let data = payload(i, m.bytes);
                    let (to, tag) = (m.to, m.tag);
                    match m.send {
                        SendKind::Send => world.send(&data, to, tag).await?,
                        SendKind::Ssend => world.ssend(&data, to, tag).await?,
                        SendKind::Bsend => world.bsend(&data, to, tag).await?,
                        SendKind::Isend => drop(sends.insert(i, world.isend(&data, to, tag)?)),
                        SendKind::Issend => drop(sends.insert(i, world.issend(&data, to, tag)?)),
                    }
                }
                Op::Recv(i) => {
                    let m = &p.messages[i];
                    let buf = free.next().expect("a buffer per receive");
                    match m.recv {
                        RecvKind::Recv => {
                            let status = world.recv(buf, m.from, m.tag).await?;
                            check(&p, i, status);
                        }
                        RecvKind::Irecv => drop(recvs.insert(i, world.irecv(buf, m.from, m.tag)?)),
                    }
                }
                Op::WaitSend(i) => {
                    sends.remove(&i).expect("sent").wait().await?;
                }
                Op::WaitRecv(i) => {
                    let status = recvs.remove(&i).expect("posted").wait().await?;
                    check(&p, i, status);
                }
                Op::Detach => {
                    world.buffer_detach().await?;
                }
            }
        }
        assert!(
            sends.is_empty() && recvs.is_empty(),
            "every request waited for"
        );
    }
    for (&i, buf) in receives.iter().zip(&buffers) {
        assert_eq!(buf, &payload(i, p.messages[i].bytes), "message {i}'s data");
    }
    Ok(())
}

fn check(p: &Program, i: usize, status: mpsim::Status) {
    let m = &p.messages[i];
    assert_eq!(
        (status.source, status.tag, status.bytes),
        (m.from, m.tag, m.bytes),
        "message {i}'s status"
    );
}

fn message(ranks: u32) -> impl Strategy<Value = Step> {
    let send = prop_oneof![
        Just(SendKind::Send),
        Just(SendKind::Ssend),
        Just(SendKind::Bsend),
        Just(SendKind::Isend),
        Just(SendKind::Issend),
    ];
    let recv = prop_oneof![Just(RecvKind::Recv), Just(RecvKind::Irecv)];
    let wait = || prop_oneof![Just(WaitAt::Now), Just(WaitAt::End)];
    // Sizes around both tables' points and the eager threshold, and past the last points.
    let bytes = prop_oneof![0usize..=16, 48usize..=300, 900usize..=2_000];
    (
        0..ranks,
        1..ranks,
        0i32..3,
        bytes,
        send,
        wait(),
        recv,
        wait(),
    )
        .prop_map(
            move |(from, hop, tag, bytes, send, send_wait, recv, recv_wait)| {
                Step::Message(Message {
                    from,
                    to: (from + hop) % ranks,
                    tag,
                    bytes,
                    send,
                    send_wait,
                    recv,
                    recv_wait,
                })
            },
        )
}

fn program() -> impl Strategy<Value = Program> {
    (2u32..=5).prop_flat_map(|ranks| {
        let compute = (0..ranks, 0u64..4_000).prop_map(|(rank, ns)| Step::Compute { rank, ns });
        let step = prop_oneof![1 => compute, 4 => message(ranks)];
        (
            Just(ranks),
            1u64..=500,
            proptest::collection::vec(step, 1..30),
        )
            .prop_map(|(ranks, ack_ns, steps)| Program::new(ranks, ack_ns, steps))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// `spec/timing.md` §2–§5, S4 and S8 on random programs: every final clock is the
    /// reference's, every message arrives intact, the compute and message counts add up.
    #[test]
    fn timing_reference_model_agrees_on_random_programs(p in program()) {
        let expected = reference_clocks(&p);
        let launcher = Launcher::new(p.ranks).model(p.model());
        let p = Arc::new(p);
        let outcome = common::simulate_all_ways(launcher, p.ranks, |world: Comm| {
            run_rank(world, Arc::clone(&p))
        });
        prop_assert!(outcome.error.is_none(), "the run failed: {:?}", outcome.error);
        let clocks: Vec<u64> = outcome.report.ranks.iter().map(|r| r.clock_ns).collect();
        prop_assert_eq!(&clocks, &expected, "final clocks of {:?}", p);
        for (r, report) in outcome.report.ranks.iter().enumerate() {
            let computed: u64 = p.ops[r]
                .iter()
                .map(|op| if let Op::Compute(ns) = op { *ns } else { 0 })
                .sum();
            prop_assert_eq!(report.compute_ns, computed, "rank {}'s compute", r);
            let sent = p.messages.iter().filter(|m| m.from as usize == r).count() as u64;
            let received = p.messages.iter().filter(|m| m.to as usize == r).count() as u64;
            prop_assert_eq!(report.sent.messages.iter().sum::<u64>(), sent);
            prop_assert_eq!(report.received.messages.iter().sum::<u64>(), received);
        }
    }
}

/// The reference's delay lookup is the spec's (§4), on the doc example of `DelayTable` and at
/// the edges: below the first point, between points (halves round up), past the last.
#[test]
fn timing_reference_model_delay_lookup() {
    let t = &[(8, 1_000), (1_024, 9_000)];
    assert_eq!(
        [0, 8, 516, 1_024, 2_040].map(|s| delay(t, s)),
        [1_000, 1_000, 5_000, 9_000, 17_000]
    );
    // 1 + (2·1·1 + 2) / 4 = 1 + 1: a half rounds up.
    assert_eq!(delay(&[(0, 1), (2, 2)], 1), 2);
    // Past the last point, never below its value, even on a falling line.
    assert_eq!(delay(&[(0, 10), (10, 5)], 20), 5);
    assert_eq!(delay(&[(4, 7)], 1_000), 7);
}
