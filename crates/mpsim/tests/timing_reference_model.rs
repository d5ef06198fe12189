//! The simulator against a reference model of `docs/timing.md` §2–§5 and S2, S4, S5, S6, S8,
//! and of the per-request overhead X1 of `docs/extensions.md`, on random
//! programs: every rank's final clock must be the model's, to the nanosecond.
//!
//! The worked examples (E1–E6) check a handful of hand-made cases. Here proptest makes
//! programs of 2 to 5 ranks from:
//! - every blocking and nonblocking send mode (standard, eager and rendezvous, synchronous,
//!   buffered, ready) and persistent standard sends; in strict mode (half the programs), a
//!   ready send that finds no receive posted by the time it was sent stops the run (S13), and
//!   the test checks which one;
//! - blocking, nonblocking and persistent receives, receives after a `probe` or a loop of
//!   `iprobe`s, and matched probes (`mprobe`, a loop of `improbe`s; S12) with their `mrecv`;
//! - receives into a buffer half the message's length, which end in `Truncate` at the time
//!   the receive would have completed, the run going on (S11);
//! - receives that nothing matches, cancelled at once (S12: in 0 ns);
//! - `sendrecv` ring shifts, `compute` between the calls, and `buffer_detach` (S8);
//! - messages on a `dup` of the world beside those on the world: other contexts, the same
//!   FIFO channels;
//! - delay tables that interpolate and extrapolate (§4), channels where a large message is
//!   followed by a small one (the FIFO rule of §5), and a system buffer that is unbounded or
//!   small enough that eager sends fill it and go as `ssend` (S6).
//!
//! A nonblocking call is finished by a `wait` at once, by a loop of `test`s (S2: each that
//! finds nothing costs `poll_cost`), or at the end of the program with its rank's other
//! requests, by `wait` on each, `wait_all`, or `wait_any` or `wait_some` until none is left
//! (S5: the test also checks which requests each returns). Each of X1's two overheads is 0 in
//! half the programs and up to 400 ns a request in the others. Besides the clocks, the test
//! checks every payload and status and the report's accounting (§6).
//!
//! The reference knows nothing of the simulator: it is the spec's arithmetic, evaluated by
//! running each rank's operations as far as they can go, round after round. The k-th receive
//! of rank `r` from `s` with tag `t` takes the k-th message `s` sent `r` with tag `t`
//! (non-overtaking), whatever the times: what matches is known without a simulation, and only
//! the times are to be computed. Half the programs use wildcards that keep it so
//! (`Program::wildcards`): every message has a tag of its own, and the receives of some
//! channels take `ANY_TAG`, some others `ANY_SOURCE`. Programs are made
//! from one global sequence of steps, each rank's calls in that order, which keeps them free
//! of deadlock (by induction along the sequence; the waits kept for the end come after
//! everything else).
//!
//! Every run is also made on 2 threads and on one per rank, which must give the same report
//! (`common::simulate_all_ways`).

mod common;

// For its bounded runs; not its `on_both!`.
#[allow(unused_macros)]
#[path = "common/backends.rs"]
mod backends;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mpsim::sim::{DelayTable, Model, Traffic};
use mpsim::{
    ANY_SOURCE, ANY_TAG, Backend, Comm, Error, Launcher, PersistentRequest, Request, Source, Tag,
    wait_all, wait_any, wait_some,
};
use proptest::prelude::*;

/// `D_ssend`: two points, so sizes between them interpolate and larger ones extrapolate.
const SSEND: &[(u64, u64)] = &[(8, 1_300), (1_024, 9_300)];
/// `D_bsend`: three points, the first above size 0 (sizes below it take its delay).
const BSEND: &[(u64, u64)] = &[(4, 900), (64, 1_150), (1_024, 6_000)];
/// Standard sends above this many bytes go by rendezvous (timed as `ssend`).
const EAGER_THRESHOLD: usize = 256;
/// The tag of receives that are cancelled: no message has it.
const NEVER_SENT: i32 = 7;
/// With wildcards, message `i` has tag `FIRST_OWN_TAG + i`.
const FIRST_OWN_TAG: i32 = 10;

/// A step of SplitMix64: a well-mixed function of `x`.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
/// What each rank that buffers sends attaches: more than any program can fill.
const ATTACHED: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendKind {
    Send,
    Ssend,
    Bsend,
    Isend,
    Issend,
    Ibsend,
    /// Ready sends: timed as `ssend` (§2); in strict mode, S13.
    Rsend,
    Irsend,
    /// A persistent standard send (`send_init`), started once.
    Persistent,
    /// The send half of a `sendrecv` (a standard `isend`, §2).
    Sendrecv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecvKind {
    Recv,
    /// `probe`, then `recv`.
    ProbeRecv,
    /// `iprobe` until it finds the message (S2), then `recv`.
    IprobeRecv,
    /// `mprobe`, then `mrecv` of the message it took (S12).
    MprobeRecv,
    /// `improbe` until it takes the message, then `mrecv`.
    ImprobeRecv,
    Irecv,
    /// A persistent receive (`recv_init`), started once.
    Persistent,
    /// The receive half of a `sendrecv` (an `irecv`).
    Sendrecv,
}

/// How a nonblocking call is finished: `wait` right after it, a loop of `test`s right after
/// it (S2), or with the other requests of its rank at the end of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitAt {
    Now,
    Poll,
    End,
}

/// How a rank finishes the requests it kept for the end (§5, S5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EndStyle {
    /// `wait` on each, in the order they were made.
    OneByOne,
    WaitAll,
    /// `wait_any` until none is active.
    WaitAny,
    /// `wait_some` until none is active.
    WaitSome,
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
    /// Received into a buffer of half its length: `Truncate` (S11).
    short: bool,
    /// Received (and probed) with `ANY_SOURCE` or `ANY_TAG` ([`Program::wildcards`]).
    any_source: bool,
    any_tag: bool,
    /// Sent and received on a `dup` of the world, not the world: another context, which no
    /// receive on the world matches, on the same FIFO channels (§5).
    twin: bool,
}

impl Message {
    /// The source and tag its receive (or probe) names.
    fn pattern(&self) -> (Source, Tag) {
        (
            if self.any_source {
                ANY_SOURCE
            } else {
                Source::Rank(self.from)
            },
            if self.any_tag {
                ANY_TAG
            } else {
                Tag::Value(self.tag)
            },
        )
    }

    /// The receive buffer's length.
    fn capacity(&self) -> usize {
        if self.short {
            self.bytes / 2
        } else {
            self.bytes
        }
    }

    /// A standard send small enough to go eagerly, if the system buffer has room (§2, S6).
    fn may_go_eagerly(&self) -> bool {
        matches!(
            self.send,
            SendKind::Send | SendKind::Isend | SendKind::Persistent | SendKind::Sendrecv
        ) && self.bytes <= EAGER_THRESHOLD
    }

    /// A nonblocking send: it posts a request the program holds, which X1 charges for.
    fn nonblocking_send(&self) -> bool {
        matches!(
            self.send,
            SendKind::Isend
                | SendKind::Issend
                | SendKind::Ibsend
                | SendKind::Irsend
                | SendKind::Persistent
        )
    }

    /// A ready send.
    fn ready_send(&self) -> bool {
        matches!(self.send, SendKind::Rsend | SendKind::Irsend)
    }

    /// A send from the attached buffer.
    fn buffered_send(&self) -> bool {
        matches!(self.send, SendKind::Bsend | SendKind::Ibsend)
    }
}

/// One step of the global sequence the program is made from.
#[derive(Clone, Debug)]
enum Step {
    Compute {
        rank: u32,
        ns: u64,
    },
    Message(Message),
    /// `rank` posts a receive from `from` with [`NEVER_SENT`], which nothing matches, cancels
    /// it and waits for it.
    Cancel {
        rank: u32,
        from: u32,
    },
    /// Every rank `sendrecv`s: to `rank + hop`, from `rank - hop`; rank `r` sends
    /// `bytes[r]`.
    Shift {
        hop: u32,
        tag: i32,
        bytes: Vec<usize>,
    },
}

/// A request, by the message it sends or receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    Send(usize),
    Recv(usize),
}

/// One call of one rank; messages by their index in the program's list.
#[derive(Clone, Copy, Debug)]
enum Op {
    Compute(u64),
    /// The message's send, finished as its `send_wait` says.
    Send(usize),
    /// The message's receive, finished as its `recv_wait` says.
    Recv(usize),
    Sendrecv {
        send: usize,
        recv: usize,
    },
    /// The requests kept for the end, finished in the rank's [`EndStyle`].
    End,
    /// An `irecv` from the rank, cancelled at once (S12: at the caller's time, in 0 ns) and
    /// waited for.
    Cancel(u32),
    /// `buffer_detach`, last, by a rank that made buffered sends.
    Detach,
}

#[derive(Debug)]
struct Program {
    ranks: u32,
    ack_ns: u64,
    poll_ns: u64,
    /// The system buffer's bytes per rank (S6); `None`: unbounded.
    system: Option<usize>,
    /// X1's `send_overhead` and `recv_overhead`, ns.
    send_overhead: u64,
    recv_overhead: u64,
    /// Strict ready sends (`Launcher::strict`, S13).
    strict: bool,
    messages: Vec<Message>,
    ops: Vec<Vec<Op>>,
    /// Per rank: the requests kept for the end, in the order made, and how they end.
    end: Vec<Vec<Req>>,
    end_style: Vec<EndStyle>,
    /// Whether each rank makes buffered sends (it attaches a buffer first).
    buffers: Vec<bool>,
}

impl Program {
    fn new(
        ranks: u32,
        (ack_ns, poll_ns, system): (u64, u64, Option<usize>),
        (send_overhead, recv_overhead, strict): (u64, u64, bool),
        steps: Vec<Step>,
        end_style: Vec<EndStyle>,
        wildcards: Option<u64>,
    ) -> Self {
        let n = ranks as usize;
        let mut ops = vec![Vec::new(); n];
        let (mut messages, mut end, mut buffers) =
            (Vec::new(), vec![Vec::new(); n], vec![false; n]);
        for step in steps {
            match step {
                Step::Compute { rank, ns } => ops[rank as usize].push(Op::Compute(ns)),
                Step::Cancel { rank, from } => ops[rank as usize].push(Op::Cancel(from)),
                Step::Message(mut m) => {
                    // A persistent request is finished where it is made, not kept for the end.
                    if m.send == SendKind::Persistent && m.send_wait == WaitAt::End {
                        m.send_wait = WaitAt::Now;
                    }
                    // So is a receive that truncates (a `wait_all`'s error would hide the others').
                    if (m.recv == RecvKind::Persistent || m.short) && m.recv_wait == WaitAt::End {
                        m.recv_wait = WaitAt::Now;
                    }
                    let i = messages.len();
                    let (from, to) = (m.from as usize, m.to as usize);
                    ops[from].push(Op::Send(i));
                    if m.nonblocking_send() && m.send_wait == WaitAt::End {
                        end[from].push(Req::Send(i));
                    }
                    buffers[from] |= m.buffered_send();
                    ops[to].push(Op::Recv(i));
                    if m.recv == RecvKind::Irecv && m.recv_wait == WaitAt::End {
                        end[to].push(Req::Recv(i));
                    }
                    messages.push(m);
                }
                Step::Shift { hop, tag, bytes } => {
                    let base = messages.len();
                    for (from, &bytes) in bytes.iter().enumerate() {
                        messages.push(Message {
                            from: from as u32,
                            to: (from as u32 + hop) % ranks,
                            tag,
                            bytes,
                            send: SendKind::Sendrecv,
                            send_wait: WaitAt::Now,
                            recv: RecvKind::Sendrecv,
                            recv_wait: WaitAt::Now,
                            short: false,
                            any_source: false,
                            any_tag: false,
                            twin: false,
                        });
                    }
                    for (r, ops) in ops.iter_mut().enumerate() {
                        let from = (r + n - hop as usize) % n;
                        ops.push(Op::Sendrecv {
                            send: base + r,
                            recv: base + from,
                        });
                    }
                }
            }
        }
        if let Some(seed) = wildcards {
            Self::wildcards(&mut messages, seed);
        }
        for (r, ops) in ops.iter_mut().enumerate() {
            if !end[r].is_empty() {
                ops.push(Op::End);
            }
            if buffers[r] {
                ops.push(Op::Detach);
            }
        }
        Program {
            ranks,
            ack_ns,
            poll_ns,
            system,
            send_overhead,
            recv_overhead,
            strict,
            messages,
            ops,
            end,
            end_style,
            buffers,
        }
    }

    /// Wildcard receives that still match the message they were made for, so that the
    /// reference's pairing holds (the seed picks which): every message gets a tag of its own;
    /// on some channels every receive takes `ANY_TAG` (a channel is FIFO, and its receives come
    /// in the order its messages are sent); on the others some take `ANY_SOURCE` (only one
    /// message has their tag).
    fn wildcards(messages: &mut [Message], seed: u64) {
        let coin = |x: u64| splitmix(seed ^ splitmix(x)) & 1 == 1;
        for (i, m) in messages.iter_mut().enumerate() {
            m.tag = FIRST_OWN_TAG + i as i32;
            m.any_tag = coin(u64::from(m.from) << 32 | u64::from(m.to));
            m.any_source = !m.any_tag && coin(1 << 63 | i as u64);
        }
    }

    fn model(&self) -> Model {
        let mut model = Model::worked_examples();
        model.ssend = DelayTable::new("ssend", SSEND.to_vec()).expect("a valid table");
        model.bsend = DelayTable::new("bsend", BSEND.to_vec()).expect("a valid table");
        model.ack_latency_ns = self.ack_ns;
        model.poll_cost_ns = self.poll_ns;
        model.system_buffer = self.system;
        model.cpu.send_overhead_ns = self.send_overhead;
        model.cpu.recv_overhead_ns = self.recv_overhead;
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

/// What the reference expects of a run: every rank's final clock, and the indices (into the
/// rank's end requests) that each `wait_any` or `wait_some` of its end returns.
#[derive(Debug, Default)]
struct Expected {
    clocks: Vec<u64>,
    groups: Vec<Vec<Vec<usize>>>,
    /// Per rank: its time and what the report adds up ([`Cpu`]).
    cpus: Vec<Cpu>,
    /// Per rank: messages and bytes sent and received, by the report's protocol columns
    /// (eager, buffered, rendezvous, ready).
    sent: Vec<Traffic>,
    received: Vec<Traffic>,
    /// In strict mode, the first ready send that found no receive posted by the time it was
    /// sent (S13), by the key of its arrival `(time, sender, order sent)`: the run stops there
    /// with `ReadyNotPosted`.
    not_ready: Option<usize>,
}

/// The spec's times of every message, filled in as the reference runs.
struct Times<'p> {
    p: &'p Program,
    sent: Vec<Option<u64>>,
    arrival: Vec<Option<u64>>,
    posted: Vec<Option<u64>>,
    /// Whether each message went from a buffer (decided when it is sent): buffered sends and
    /// eager standard sends, timed from `D_bsend` and complete at once (§2, S4).
    buffered: Vec<bool>,
    /// Latest arrival per channel (§5).
    channel: HashMap<(u32, u32), u64>,
}

impl Times<'_> {
    /// Message `i` sent at `t`: `recv_ts = t + D(s)` (§3), its arrival monotone per channel.
    /// Its sender has seen what happened by `seen` (its clock: X1, what arrives while it works
    /// off its overhead is seen later), acks that free its system buffer too. False, doing
    /// nothing, while it cannot be known whether a standard send fits in the system buffer.
    fn send(&mut self, i: usize, t: u64, seen: u64) -> bool {
        if self.sent[i].is_some() {
            return true;
        }
        let m = &self.p.messages[i];
        let buffered = match m.send {
            SendKind::Bsend | SendKind::Ibsend => true,
            _ if m.may_go_eagerly() => match self.system_room(m.from, seen) {
                Some(room) => m.bytes <= room,
                None => return false,
            },
            _ => false,
        };
        self.buffered[i] = buffered;
        let table = if buffered { BSEND } else { SSEND };
        let last = self.channel.entry((m.from, m.to)).or_insert(0);
        *last = (t + delay(table, m.bytes as u64)).max(*last);
        self.arrival[i] = Some(*last);
        self.sent[i] = Some(t);
        true
    }

    /// S6: the bytes of rank `from`'s system buffer free once it has seen what happened by
    /// `t`: each eager standard send holds its bytes until its ack arrives (released at `t` if
    /// it arrives at `t`). `None` while an ack is unknown.
    fn system_room(&self, from: u32, t: u64) -> Option<usize> {
        let Some(capacity) = self.p.system else {
            return Some(usize::MAX);
        };
        let mut used = 0;
        for (j, m) in self.p.messages.iter().enumerate() {
            let held = m.from == from && self.sent[j].is_some() && m.may_go_eagerly();
            if held && self.buffered[j] && self.ack(j)? > t {
                used += m.bytes;
            }
        }
        Some(capacity.saturating_sub(used))
    }

    /// How many sends and receives have been made so far.
    fn made(&self) -> usize {
        self.sent.iter().chain(&self.posted).flatten().count()
    }

    /// When the ack of message `i` arrives back: `max(arrival, posted) + ACK_LATENCY` (§3,
    /// S9); `None` while either is unknown.
    fn ack(&self, i: usize) -> Option<u64> {
        Some(self.arrival[i]?.max(self.posted[i]?) + self.p.ack_ns)
    }

    /// When the event that completes `req` happens (§3, S4): a receive's message arrives, a
    /// synchronous or rendezvous send's ack arrives; a send from a buffer is complete as it
    /// is posted (0: whenever asked). `None` while that is unknown.
    fn event(&self, req: Req) -> Option<u64> {
        match req {
            Req::Send(i) if self.buffered[i] => Some(0),
            Req::Send(i) => self.ack(i),
            Req::Recv(i) => self.arrival[i],
        }
    }

    /// The rank's time after finishing `req` from `cpu` as `how` says; `None` while its
    /// completion is unknown.
    fn finish(&self, req: Req, how: WaitAt, cpu: Cpu) -> Option<Cpu> {
        match how {
            WaitAt::End => Some(cpu),
            WaitAt::Now => Some(cpu.wait(self.event(req)?)),
            WaitAt::Poll => Some(cpu.poll(self.event(req)?, self.p.poll_ns)),
        }
    }
}

/// A rank's time: its clock, and the per-request overhead it owes (X1 of
/// `docs/extensions.md`). It acts at `clock + owed`, and pays what it owes when it
/// is about to block, computes, polls without success, or finishes. With no overhead (the
/// spec's own model), `owed` stays 0. Also what the report adds up: the time charged to polls
/// that found nothing, and the overhead charged.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    clock: u64,
    owed: u64,
    poll_ns: u64,
    overhead_ns: u64,
}

impl Cpu {
    /// When the rank acts: its calls, sends and postings (X1: "Owing").
    fn now(self) -> u64 {
        self.clock + self.owed
    }

    /// A wait for what happens at `event`: satisfied if it happened by the rank's clock (what
    /// happens while it works off its overhead is seen when it next suspends); otherwise it
    /// pays what it owes, blocks, and its clock becomes `max(now, event)` (§3's
    /// `C = max(C, ...)`).
    fn wait(self, event: u64) -> Cpu {
        if event <= self.clock {
            return self;
        }
        Cpu {
            clock: self.now().max(event),
            owed: 0,
            ..self
        }
    }

    /// A loop of polls (`test`, `iprobe`) for what happens at `event` (S2): a poll at or after
    /// it finds it; each before it pays what is owed and costs `poll_ns`.
    fn poll(self, event: u64, poll_ns: u64) -> Cpu {
        if event <= self.clock {
            return self;
        }
        let from = self.now();
        let polls = event.saturating_sub(from).div_ceil(poll_ns).max(1);
        Cpu {
            clock: from + polls * poll_ns,
            owed: 0,
            poll_ns: self.poll_ns + polls * poll_ns,
            ..self
        }
    }

    /// `compute(ns)`: what is owed, then the compute's own time.
    fn compute(self, ns: u64) -> Cpu {
        Cpu {
            clock: self.now() + ns,
            owed: 0,
            ..self
        }
    }

    /// X1: a request's overhead, owed from now on.
    fn charge(&mut self, ns: u64) {
        self.owed += ns;
        self.overhead_ns += ns;
    }
}

/// What a rank's end makes of its requests whose completing events happen at `events` (in
/// the order made), starting from `cpu`: its time after it, and the indices each `wait_any` /
/// `wait_some` returns.
fn end_of_rank(style: EndStyle, events: &[u64], mut cpu: Cpu) -> (Cpu, Vec<Vec<usize>>) {
    let mut groups = Vec::new();
    match style {
        EndStyle::OneByOne => {
            for &e in events {
                cpu = cpu.wait(e);
            }
        }
        // Satisfied when every request is; otherwise blocked until the last.
        EndStyle::WaitAll => cpu = cpu.wait(events.iter().copied().fold(0, u64::max)),
        // S5: the requests complete by the time the call returns (if none is, it blocks until
        // the earliest), in index order; `wait_any` the lowest index of them.
        EndStyle::WaitAny | EndStyle::WaitSome => {
            let mut active: Vec<usize> = (0..events.len()).collect();
            while !active.is_empty() {
                let earliest = active.iter().map(|&k| events[k]).min().expect("active");
                cpu = cpu.wait(earliest);
                let ready: Vec<usize> = active
                    .iter()
                    .copied()
                    .filter(|&k| events[k] <= cpu.clock)
                    .collect();
                let group = if style == EndStyle::WaitAny {
                    vec![ready[0]]
                } else {
                    ready
                };
                active.retain(|k| !group.contains(k));
                groups.push(group);
            }
        }
    }
    (cpu, groups)
}

/// The spec's outcome of `p`, evaluated rank by rank as far as each can go until all are
/// done.
fn reference(p: &Program) -> Expected {
    let n = p.ranks as usize;
    let m = p.messages.len();
    let mut times = Times {
        p,
        sent: vec![None; m],
        arrival: vec![None; m],
        posted: vec![None; m],
        buffered: vec![false; m],
        channel: HashMap::new(),
    };
    let mut pc = vec![0; n];
    let mut cpus = vec![Cpu::default(); n];
    let mut groups = vec![Vec::new(); n];
    loop {
        // A round moves when a rank gets past a call, or a call that waits has sent or posted.
        let before = (pc.clone(), times.made());
        for (r, pc) in pc.iter_mut().enumerate() {
            let cpu = &mut cpus[r];
            while let Some(&op) = p.ops[r].get(*pc) {
                // Each arm may be taken up again after it could not finish (`None`): what it
                // did first (a send, a posting, their X1 charge) is done once.
                let after = match op {
                    Op::Compute(ns) => Some(cpu.compute(ns)),
                    // X1 charges the receive; its cancel completes it at once.
                    Op::Cancel(_) => {
                        cpu.charge(p.recv_overhead);
                        Some(*cpu)
                    }
                    Op::Send(i) => {
                        let m = &p.messages[i];
                        if times.sent[i].is_none() {
                            let o = if m.nonblocking_send() {
                                p.send_overhead
                            } else {
                                0
                            };
                            if !times.send(i, cpu.now() + o, cpu.clock) {
                                break;
                            }
                            cpu.charge(o);
                        }
                        match m.send {
                            // A blocking send from a buffer completes as it is made.
                            SendKind::Send
                            | SendKind::Ssend
                            | SendKind::Bsend
                            | SendKind::Rsend => times.event(Req::Send(i)).map(|e| cpu.wait(e)),
                            _ => times.finish(Req::Send(i), m.send_wait, *cpu),
                        }
                    }
                    Op::Recv(i) => {
                        let m = &p.messages[i];
                        match m.recv {
                            RecvKind::Recv => {
                                times.posted[i].get_or_insert(cpu.now());
                                times.finish(Req::Recv(i), WaitAt::Now, *cpu)
                            }
                            RecvKind::Irecv | RecvKind::Persistent => {
                                if times.posted[i].is_none() {
                                    cpu.charge(p.recv_overhead);
                                    times.posted[i] = Some(cpu.now());
                                }
                                times.finish(Req::Recv(i), m.recv_wait, *cpu)
                            }
                            // §5: a probe waits for the message like a receive and leaves it;
                            // the receive is posted once it returns (the ack's `send_ts`). S12:
                            // a matched probe is the match, then. The message probed is the
                            // next from its source with its tag: `i`.
                            RecvKind::ProbeRecv
                            | RecvKind::IprobeRecv
                            | RecvKind::MprobeRecv
                            | RecvKind::ImprobeRecv => times.arrival[i].map(|arrival| {
                                let found = match m.recv {
                                    RecvKind::ProbeRecv | RecvKind::MprobeRecv => cpu.wait(arrival),
                                    _ => cpu.poll(arrival, p.poll_ns),
                                };
                                times.posted[i] = Some(found.now());
                                found
                            }),
                            RecvKind::Sendrecv => unreachable!("sendrecv is its own op"),
                        }
                    }
                    Op::Sendrecv { send, recv } => {
                        // §2: irecv + isend + waitall; X1: both pay.
                        if times.posted[recv].is_none() {
                            cpu.charge(p.recv_overhead);
                            times.posted[recv] = Some(cpu.now());
                        }
                        if times.sent[send].is_none() {
                            if !times.send(send, cpu.now() + p.send_overhead, cpu.clock) {
                                break;
                            }
                            cpu.charge(p.send_overhead);
                        }
                        times
                            .event(Req::Send(send))
                            .zip(times.event(Req::Recv(recv)))
                            .map(|(a, b)| cpu.wait(a.max(b)))
                    }
                    Op::End => {
                        let events: Option<Vec<u64>> =
                            p.end[r].iter().map(|&req| times.event(req)).collect();
                        events.map(|events| {
                            let (after, returned) = end_of_rank(p.end_style[r], &events, *cpu);
                            groups[r] = returned;
                            after
                        })
                    }
                    Op::Detach => {
                        // S8: the latest ack of the rank's buffered messages.
                        let acks: Option<Vec<u64>> = p
                            .messages
                            .iter()
                            .enumerate()
                            .filter(|(_, m)| m.from as usize == r && m.buffered_send())
                            .map(|(i, _)| times.ack(i))
                            .collect();
                        acks.map(|acks| cpu.wait(acks.into_iter().fold(0, u64::max)))
                    }
                };
                let Some(after) = after else { break };
                *cpu = after;
                *pc += 1;
            }
        }
        if pc.iter().zip(&p.ops).all(|(&pc, ops)| pc == ops.len()) {
            // X1: a rank that finishes pays what it owes.
            let clocks = cpus.iter().map(|c| c.now()).collect();
            let (mut sent, mut received) =
                (vec![Traffic::default(); n], vec![Traffic::default(); n]);
            for (i, m) in p.messages.iter().enumerate() {
                let column = if m.ready_send() {
                    3
                } else if m.buffered_send() {
                    1
                } else if times.buffered[i] {
                    0
                } else {
                    2
                };
                for t in [&mut sent[m.from as usize], &mut received[m.to as usize]] {
                    t.messages[column] += 1;
                    t.bytes[column] += m.bytes as u64;
                }
            }
            let not_ready = (0..m)
                .filter(|&i| {
                    p.strict && p.messages[i].ready_send() && times.posted[i] > times.sent[i]
                })
                .min_by_key(|&i| (times.arrival[i], p.messages[i].from, i));
            return Expected {
                clocks,
                groups,
                cpus,
                sent,
                received,
                not_ready,
            };
        }
        assert!(
            (pc.clone(), times.made()) != before,
            "the generated program deadlocks: {p:?}"
        );
    }
}

/// Finishes `req` as `how` says, or keeps it for the end.
async fn finish<'b>(
    p: &Program,
    req: Request<'b>,
    key: Req,
    how: WaitAt,
    end: &mut Vec<Request<'b>>,
) -> mpsim::Result<()> {
    match how {
        WaitAt::Now => settle(p, key, req.wait().await),
        WaitAt::Poll => {
            let mut req = req;
            loop {
                if let Some(outcome) = req.test().await.transpose() {
                    return settle(p, key, outcome);
                }
            }
        }
        WaitAt::End => {
            end.push(req);
            Ok(())
        }
    }
}

/// Finishes a started persistent request as `how` says (at once: it is not kept for the end).
async fn finish_persistent(
    p: &Program,
    req: &mut PersistentRequest<'_>,
    key: Req,
    how: WaitAt,
) -> mpsim::Result<()> {
    let outcome = match how {
        WaitAt::Poll => loop {
            if let Some(outcome) = req.test().await.transpose() {
                break outcome;
            }
        },
        _ => req.wait().await,
    };
    settle(p, key, outcome)
}

/// Rank `world.rank()`'s part of `p`: its calls in order, each received message checked.
/// `expected`: what the reference says `wait_any` and `wait_some` return (`None` on the threads
/// backend, where that depends on the host's timing).
async fn run_rank(
    world: Comm,
    p: Arc<Program>,
    expected: Option<Arc<Expected>>,
) -> mpsim::Result<()> {
    let me = world.rank() as usize;
    let ops = &p.ops[me];
    let receives: Vec<usize> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::Recv(i) | Op::Sendrecv { recv: i, .. } => Some(i),
            _ => None,
        })
        .collect();
    let mut buffers: Vec<Vec<u8>> = receives
        .iter()
        .map(|&i| vec![0u8; p.messages[i].capacity()])
        .collect();
    if p.buffers[me] {
        world.buffer_attach(ATTACHED)?;
    }
    let twin = world.dup()?;
    {
        let mut free = buffers.iter_mut();
        let mut end: Vec<Request<'_>> = Vec::new();
        for &op in ops {
            match op {
                Op::Compute(ns) => world.compute(Duration::from_nanos(ns)).await,
                Op::Cancel(from) => {
                    let mut nothing = [0u8; 8];
                    let mut req = world.irecv(&mut nothing, from, NEVER_SENT)?;
                    req.cancel()?;
                    assert!(req.wait().await?.cancelled, "the receive was cancelled");
                }
                Op::Send(i) => {
                    let m = &p.messages[i];
                    let data = common::payload(i, m.bytes);
                    let (to, tag) = (m.to, m.tag);
                    let comm = if m.twin { &twin } else { &world };
                    let req = match m.send {
                        SendKind::Send => comm.send(&data, to, tag).await.map(|()| None)?,
                        SendKind::Ssend => comm.ssend(&data, to, tag).await.map(|()| None)?,
                        SendKind::Bsend => comm.bsend(&data, to, tag).await.map(|()| None)?,
                        SendKind::Isend => Some(comm.isend(&data, to, tag)?),
                        SendKind::Issend => Some(comm.issend(&data, to, tag)?),
                        SendKind::Ibsend => Some(comm.ibsend(&data, to, tag)?),
                        SendKind::Rsend => comm.rsend(&data, to, tag).await.map(|()| None)?,
                        SendKind::Irsend => Some(comm.irsend(&data, to, tag)?),
                        SendKind::Persistent => {
                            let mut data = data;
                            let mut req = comm.send_init(&mut data, to, tag)?;
                            req.start()?;
                            finish_persistent(&p, &mut req, Req::Send(i), m.send_wait).await?;
                            None
                        }
                        SendKind::Sendrecv => unreachable!("sendrecv is its own op"),
                    };
                    if let Some(req) = req {
                        finish(&p, req, Req::Send(i), m.send_wait, &mut end).await?;
                    }
                }
                Op::Recv(i) => {
                    let m = &p.messages[i];
                    let buf = free.next().expect("a buffer per receive");
                    let (from, tag) = m.pattern();
                    let comm = if m.twin { &twin } else { &world };
                    match m.recv {
                        RecvKind::Irecv => {
                            let req = comm.irecv(buf, from, tag)?;
                            finish(&p, req, Req::Recv(i), m.recv_wait, &mut end).await?;
                        }
                        RecvKind::Persistent => {
                            let mut req = comm.recv_init(buf, from, tag)?;
                            req.start()?;
                            finish_persistent(&p, &mut req, Req::Recv(i), m.recv_wait).await?;
                        }
                        RecvKind::MprobeRecv | RecvKind::ImprobeRecv => {
                            let message = if m.recv == RecvKind::MprobeRecv {
                                comm.mprobe(from, tag).await?
                            } else {
                                loop {
                                    if let Some(message) = comm.improbe(from, tag).await? {
                                        break message;
                                    }
                                }
                            };
                            check(&p, Req::Recv(i), message.status());
                            settle(&p, Req::Recv(i), message.mrecv(buf).await)?;
                        }
                        RecvKind::ProbeRecv | RecvKind::IprobeRecv => {
                            let status = if m.recv == RecvKind::ProbeRecv {
                                comm.probe(from, tag).await?
                            } else {
                                loop {
                                    if let Some(status) = comm.iprobe(from, tag).await? {
                                        break status;
                                    }
                                }
                            };
                            check(&p, Req::Recv(i), status);
                            settle(&p, Req::Recv(i), comm.recv(buf, from, tag).await)?;
                        }
                        _ => settle(&p, Req::Recv(i), comm.recv(buf, from, tag).await)?,
                    }
                }
                Op::Sendrecv { send, recv } => {
                    let (s, r) = (&p.messages[send], &p.messages[recv]);
                    let buf = free.next().expect("a buffer per receive");
                    let data = common::payload(send, s.bytes);
                    let status = world
                        .sendrecv(&data, s.to, s.tag, buf, r.pattern().0, r.pattern().1)
                        .await?;
                    check(&p, Req::Recv(recv), status);
                }
                Op::End => {
                    let keys = &p.end[me];
                    let mut groups = Vec::new();
                    match p.end_style[me] {
                        EndStyle::OneByOne => {
                            for (req, &key) in end.drain(..).zip(keys) {
                                check(&p, key, req.wait().await?);
                            }
                        }
                        EndStyle::WaitAll => {
                            for (status, &key) in wait_all(&mut end).await?.into_iter().zip(keys) {
                                check(&p, key, status);
                            }
                        }
                        EndStyle::WaitAny => {
                            while let Some((k, status)) = wait_any(&mut end).await? {
                                check(&p, keys[k], status);
                                groups.push(vec![k]);
                            }
                        }
                        EndStyle::WaitSome => loop {
                            let done = wait_some(&mut end).await?;
                            if done.is_empty() {
                                break;
                            }
                            for &(k, status) in &done {
                                check(&p, keys[k], status);
                            }
                            groups.push(done.iter().map(|&(k, _)| k).collect());
                        },
                    }
                    if let Some(expected) = &expected {
                        assert_eq!(
                            groups, expected.groups[me],
                            "rank {me}'s wait_any/wait_some"
                        );
                    }
                    end.clear();
                }
                Op::Detach => {
                    world.buffer_detach().await?;
                }
            }
        }
        assert!(end.is_empty(), "every request finished");
    }
    for (&i, buf) in receives.iter().zip(&buffers) {
        let m = &p.messages[i];
        assert_eq!(
            buf,
            &common::payload(i, m.bytes)[..m.capacity()],
            "message {i}'s data"
        );
    }
    Ok(())
}

/// What receiving (or sending) `req` ended with: its status, or, for a message longer than its
/// buffer, `Truncate` naming both lengths (S11; the rest of the run goes on). Any other error
/// is the run's.
fn settle(p: &Program, req: Req, outcome: mpsim::Result<mpsim::Status>) -> mpsim::Result<()> {
    match (req, outcome) {
        (
            Req::Recv(i),
            Err(Error::Truncate {
                message_bytes,
                buffer_bytes,
                ..
            }),
        ) if p.messages[i].short => {
            let m = &p.messages[i];
            assert_eq!(
                (message_bytes, buffer_bytes),
                (m.bytes, m.capacity()),
                "message {i}"
            );
            Ok(())
        }
        (req, Ok(status)) => {
            if let Req::Recv(i) = req {
                let m = &p.messages[i];
                assert!(!m.short, "message {i} fits its buffer of {}", m.capacity());
            }
            check(p, req, status);
            Ok(())
        }
        (_, Err(e)) => Err(e),
    }
}

/// A receive's (or probe's) status names its message; a send's is empty.
fn check(p: &Program, req: Req, status: mpsim::Status) {
    match req {
        Req::Recv(i) => {
            let m = &p.messages[i];
            assert_eq!(
                (status.source, status.tag, status.bytes),
                (m.from, m.tag, m.bytes),
                "message {i}'s status"
            );
        }
        Req::Send(i) => assert_eq!(status, mpsim::Status::default(), "send {i}'s status"),
    }
}

/// Sizes around both tables' points and the eager threshold, and past the last points.
fn bytes() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..=16, 48usize..=300, 900usize..=2_000]
}

fn message(ranks: u32) -> impl Strategy<Value = Step> {
    let send = prop_oneof![
        Just(SendKind::Send),
        Just(SendKind::Ssend),
        Just(SendKind::Bsend),
        Just(SendKind::Isend),
        Just(SendKind::Issend),
        Just(SendKind::Ibsend),
        Just(SendKind::Rsend),
        Just(SendKind::Irsend),
        Just(SendKind::Persistent),
    ];
    let recv = prop_oneof![
        2 => Just(RecvKind::Recv),
        1 => Just(RecvKind::ProbeRecv),
        1 => Just(RecvKind::IprobeRecv),
        1 => Just(RecvKind::MprobeRecv),
        1 => Just(RecvKind::ImprobeRecv),
        3 => Just(RecvKind::Irecv),
        1 => Just(RecvKind::Persistent),
    ];
    let wait = || prop_oneof![Just(WaitAt::Now), Just(WaitAt::Poll), Just(WaitAt::End)];
    (
        0..ranks,
        1..ranks,
        0i32..3,
        bytes(),
        send,
        wait(),
        recv,
        wait(),
        proptest::bool::weighted(0.1),
        proptest::bool::weighted(0.3),
    )
        .prop_map(
            move |(from, hop, tag, bytes, send, send_wait, recv, recv_wait, short, twin)| {
                Step::Message(Message {
                    from,
                    to: (from + hop) % ranks,
                    tag,
                    bytes,
                    send,
                    send_wait,
                    recv,
                    recv_wait,
                    // Half of 0 or 1 byte is not shorter.
                    short: short && bytes >= 2,
                    any_source: false,
                    any_tag: false,
                    twin,
                })
            },
        )
}

fn program() -> impl Strategy<Value = Program> {
    (2u32..=5).prop_flat_map(|ranks| {
        let compute = (0..ranks, 0u64..4_000).prop_map(|(rank, ns)| Step::Compute { rank, ns });
        let shift = (
            1..ranks,
            0i32..3,
            proptest::collection::vec(bytes(), ranks as usize),
        )
            .prop_map(|(hop, tag, bytes)| Step::Shift { hop, tag, bytes });
        let cancel = (0..ranks, 1..ranks).prop_map(move |(rank, hop)| Step::Cancel {
            rank,
            from: (rank + hop) % ranks,
        });
        let step = prop_oneof![2 => compute, 8 => message(ranks), 1 => shift, 1 => cancel];
        let style = prop_oneof![
            Just(EndStyle::OneByOne),
            Just(EndStyle::WaitAll),
            Just(EndStyle::WaitAny),
            Just(EndStyle::WaitSome),
        ];
        // Small enough that eager sends fill it; or unbounded, as by default.
        let system = proptest::option::weighted(0.5, 0usize..=600);
        // X1 off (the spec's own model) or on, up to a few hundred ns a request.
        let overhead = || prop_oneof![Just(0u64), 1u64..=400];
        (
            Just(ranks),
            (1u64..=500, 1u64..=300, system),
            (overhead(), overhead(), any::<bool>()),
            proptest::collection::vec(step, 1..30),
            proptest::collection::vec(style, ranks as usize),
            proptest::option::weighted(0.5, any::<u64>()),
        )
            .prop_map(|(ranks, constants, overheads, steps, styles, wildcards)| {
                Program::new(ranks, constants, overheads, steps, styles, wildcards)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The module's programs: every final clock is the reference's, `wait_any` and
    /// `wait_some` return what it says, every message arrives intact with its status, the
    /// report's accounting adds up; or, in strict mode, the run stops at the ready send the
    /// reference says (S13).
    #[test]
    fn timing_reference_model_agrees_on_random_programs(p in program()) {
        let expected = Arc::new(reference(&p));
        // A bug that leaves a rank polling for ever shows as a livelock after 50 us of nothing
        // but polls, not after the default 1 s (up to a billion polls).
        let launcher = Launcher::new(p.ranks)
            .model(p.model())
            .strict(p.strict)
            .livelock_after_ns(50_000);
        let p = Arc::new(p);
        let outcome = common::simulate_all_ways(launcher, p.ranks, |world: Comm| {
            run_rank(world, Arc::clone(&p), Some(Arc::clone(&expected)))
        });
        if let Some(i) = expected.not_ready {
            let m = &p.messages[i];
            let stopped = match &outcome.error {
                Some(Error::ReadyNotPosted { site, receiver }) => Some((site.rank, *receiver)),
                _ => None,
            };
            prop_assert_eq!(stopped, Some((m.from, m.to)), "{:?}", outcome.error);
            return Ok(());
        }
        prop_assert!(outcome.error.is_none(), "the run failed: {:?}", outcome.error);
        let clocks: Vec<u64> = outcome.report.ranks.iter().map(|r| r.clock_ns).collect();
        prop_assert_eq!(&clocks, &expected.clocks, "final clocks of {:?}", p);
        for (r, report) in outcome.report.ranks.iter().enumerate() {
            let computed: u64 = p.ops[r]
                .iter()
                .map(|op| if let Op::Compute(ns) = op { *ns } else { 0 })
                .sum();
            prop_assert_eq!(report.compute_ns, computed, "rank {}'s compute", r);
            let cpu = expected.cpus[r];
            prop_assert_eq!(report.poll_ns, Some(cpu.poll_ns), "rank {}'s polls", r);
            prop_assert_eq!(report.overhead_ns, Some(cpu.overhead_ns), "rank {}'s overhead", r);
            // §6: all of a finished rank's time is compute or communication.
            prop_assert_eq!(
                report.comm_ns.map(|comm| report.compute_ns + comm),
                Some(report.clock_ns)
            );
            prop_assert_eq!(&report.sent, &expected.sent[r], "rank {}'s sends", r);
            prop_assert_eq!(&report.received, &expected.received[r], "rank {}'s receives", r);
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The same programs run for real on the threads backend: every run ends, and every
    /// message arrives intact with its status (the times are the host's, not compared).
    #[test]
    fn random_programs_run_on_threads(p in program()) {
        let p = Arc::new(p);
        let launcher = Launcher::new(p.ranks).backend(Backend::Threads);
        backends::run_ok(launcher, move |world: Comm| run_rank(world, Arc::clone(&p), None));
    }
}

/// `p` without the send of one message, picked by `pick` among those last on their channel
/// and communicator with their tag (or last on a channel received with `ANY_TAG`: no receive
/// takes another message in its place) and not half of a `sendrecv`: its receive waits for
/// ever. `None` when no message qualifies.
fn without_a_send(mut p: Program, pick: prop::sample::Index) -> Option<(Program, usize)> {
    let last_of_its_kind = |k: usize| {
        let m = &p.messages[k];
        let later = &p.messages[k + 1..];
        // On a channel received with `ANY_TAG`, the last message of the channel.
        let same = |n: &Message| {
            (n.from, n.to, n.twin) == (m.from, m.to, m.twin) && (m.any_tag || n.tag == m.tag)
        };
        m.send != SendKind::Sendrecv && !later.iter().any(same)
    };
    let candidates: Vec<usize> = (0..p.messages.len())
        .filter(|&k| last_of_its_kind(k))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let k = candidates[pick.index(candidates.len())];
    let from = p.messages[k].from as usize;
    p.ops[from].retain(|op| !matches!(op, Op::Send(i) if *i == k));
    p.end[from].retain(|&req| req != Req::Send(k));
    Some((p, k))
}

/// Whether some rank of `p` polls (a loop of `test`s or `iprobe`s), which never blocks.
fn polls(p: &Program) -> bool {
    p.messages.iter().any(|m| {
        m.send_wait == WaitAt::Poll
            || m.recv_wait == WaitAt::Poll
            || matches!(m.recv, RecvKind::IprobeRecv | RecvKind::ImprobeRecv)
    })
}

/// `p` with every loop of polls made the blocking call it waits for (`wait`, `probe`).
fn without_polls(mut p: Program) -> Program {
    for m in &mut p.messages {
        for wait in [&mut m.send_wait, &mut m.recv_wait] {
            if *wait == WaitAt::Poll {
                *wait = WaitAt::Now;
            }
        }
        m.recv = match m.recv {
            RecvKind::IprobeRecv => RecvKind::ProbeRecv,
            RecvKind::ImprobeRecv => RecvKind::MprobeRecv,
            other => other,
        };
    }
    p
}

/// Simulates `p` with a send left out, as the deadlock tests below do.
fn simulate_without_a_send(p: &Arc<Program>) -> mpsim::sim::Outcome {
    // A livelock is declared after 50 us of nothing but polls rather than 1 s: a poll of 1 ns
    // would otherwise make a billion events first.
    let launcher = Launcher::new(p.ranks)
        .model(p.model())
        .livelock_after_ns(50_000);
    common::simulate_all_ways(launcher, p.ranks, |world: Comm| {
        run_rank(world, Arc::clone(p), None)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// §5 and S15 on the same programs, their polls made blocking calls, with one send left
    /// out: the simulated run stops with a deadlock report that names the rank whose receive
    /// waits for ever; never a hang or a panic, sequential or parallel.
    #[test]
    fn timing_s15_a_missing_send_ends_the_run_with_a_deadlock(
        p in program(),
        pick in any::<prop::sample::Index>(),
    ) {
        let Some((p, k)) = without_a_send(without_polls(p), pick) else {
            return Ok(());
        };
        let to = p.messages[k].to;
        let outcome = simulate_without_a_send(&Arc::new(p));
        match &outcome.error {
            Some(Error::Deadlock { report }) => prop_assert!(
                report.to_string().contains(&format!("rank {to}")),
                "the report does not name rank {}: {}",
                to,
                report
            ),
            other => prop_assert!(false, "expected a deadlock, got {:?}", other),
        }
    }

    /// The same with the polls kept: a rank that polls for ever makes a livelock
    /// (`Launcher::livelock_after_ns`) where it would block; the run ends either way.
    #[test]
    fn timing_s15_a_missing_send_with_polls_ends_the_run(
        p in program(),
        pick in any::<prop::sample::Index>(),
    ) {
        let Some((p, _)) = without_a_send(p, pick) else {
            return Ok(());
        };
        let p = Arc::new(p);
        match &simulate_without_a_send(&p).error {
            Some(Error::Deadlock { .. }) => {}
            Some(Error::Livelock { .. }) => prop_assert!(polls(&p), "a livelock with no poll"),
            other => prop_assert!(false, "expected a deadlock or a livelock, got {:?}", other),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// The same on the threads backend, polls made blocking calls (a real rank that polls for
    /// a message never sent spins, as it would under MPI): its watchdog reports the deadlock.
    #[test]
    fn a_missing_send_is_a_deadlock_on_threads(
        p in program(),
        pick in any::<prop::sample::Index>(),
    ) {
        let Some((p, _)) = without_a_send(without_polls(p), pick) else {
            return Ok(());
        };
        let p = Arc::new(p);
        let launcher = Launcher::new(p.ranks).backend(Backend::Threads);
        let err = backends::run_err(launcher, move |world: Comm| {
            run_rank(world, Arc::clone(&p), None)
        });
        prop_assert!(matches!(err, Error::Deadlock { .. }), "expected a deadlock, got {err}");
    }
}
