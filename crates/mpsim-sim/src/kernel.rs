//! The simulation state and how packets and completions become timed events
//! (`docs/timing.md` §3, §5).
//!
//! State per rank: its virtual clock, its protocol endpoint (the same `Endpoint` the real
//! backends run), what it waits for, and counters. Invariants:
//! - a kernel holds the ranks of one partition (all of them in a sequential run, a block per
//!   thread in a parallel one, `parallel.rs`); packets for other partitions' ranks wait in
//!   `remote` until the partition's round ends;
//! - a rank executes program code only when its clock equals the global time `now` (calls take
//!   0 ns; `compute` and polls that find nothing schedule a resume and yield), or, in the poll
//!   of a wait that put its overhead on its clock (X1 below), at the resume that scheduled;
//! - every packet a rank emits while it runs or while a packet is delivered to it is sent at
//!   that instant: messages arrive at `t + D(mode, size)` made monotone per channel
//!   (`fifo`), acks at `t + ACK_LATENCY` exactly (S9), cancel traffic like acks, but behind
//!   the channel's last message (D1 of `docs/extensions.md`);
//! - a waiting rank is resumed at the time of any completion of its requests and looks whether
//!   its wait returns: if so its clock becomes `max(clock, now)` and the wait ends there; if not
//!   it blocks on with the clock and "blocked since" it had (`docs/timing.md` S1: only a
//!   returning wait moves a clock), and nothing it or a report can observe has changed.
//! - extensions (`docs/extensions.md`, all off by default): per-request CPU overhead (X1) piles up
//!   in `overhead_ns` and goes on the clock when the rank next suspends, a running rank acting
//!   at `clock + overhead_ns`; on an oversubscribed run every message that reaches a blocked
//!   rank wakes it, taking `wake_latency`, and it resumes when the wake-up under way at its
//!   completion ends (X2).

use std::sync::Arc;

use mpsim_proto::deadlock::{self, Awaited, BlockedRank, Waiting};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{ContextId, Source, Tag};
use mpsim_proto::p2p::{Config, Endpoint, Event, Outbox, Packet, ReqId, Transmit};
use mpsim_proto::runtime::Payload;
use mpsim_proto::trace::TraceEvent;

use crate::event::{Body, DELIVERY, Key, Queue, RESUME};
use crate::fifo::LastSend;
use crate::model::{ComputeMode, Model};
use crate::stats::Stats;

mod state;
pub(crate) use state::{
    Counts, Externals, Livelock, Loans, Network, ReportData, Round, SharedCores, Stop, TraceLog,
};

/// What a rank blocked in a wait that its [`Wait`] does not describe alone waits for
/// (`ReportData::awaiting`).
#[derive(Clone, Debug, Default)]
pub(crate) enum Awaiting {
    /// Nothing recorded.
    #[default]
    Nothing,
    /// A blocking probe: its peer, tag and communicator.
    Probe(Awaited),
    /// A wait on several requests (`SimRank::wait_requests`): those not complete when it
    /// last blocked, the first of them the wait's `req`.
    Requests(Vec<ReqId>),
}

/// What a waiting rank waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wait {
    pub since: u64,
    pub call: &'static str,
    pub req: Option<ReqId>,
    /// Woken by any message arriving (blocking probe), not only by completions.
    pub on_arrival: bool,
    /// A wait on several requests (`SimRank::wait_requests`,
    /// `SimRank::wait_in`), `req` the first not complete when it last blocked:
    /// the others are recorded in `ReportData::awaiting` only for a report (`ReportData::asking`).
    pub set: bool,
}

pub(crate) struct RankState {
    pub clock: u64,
    pub endpoint: Endpoint<Payload>,
    pub wait: Option<Wait>,
    pub resume_scheduled: bool,
    pub done: bool,
    /// Measured compute not yet charged to the clock (ns, target time).
    pub debt_ns: u64,
    /// Per-request CPU overhead (X1) not yet on the clock, ns: a running rank acts at
    /// `clock + overhead_ns`; it goes on the clock when the rank suspends.
    pub overhead_ns: u64,
    /// X2: a blocked rank woken by an arrival is awake (able to run) from this time on.
    pub awake_at: u64,
    /// Messages delivered to this rank (blocking probes wait for this to grow).
    pub arrivals: u64,
    /// Events this rank has created (the `n` of S10).
    pub made: u64,
    /// The channel this rank last sent on, for FIFO arrivals (`fifo`).
    pub last_send: LastSend,
    pub stats: Stats,
}

impl RankState {
    /// Rank `r`'s state at the start of a run.
    fn new(r: u32, config: &Arc<Config>) -> Self {
        RankState {
            clock: 0,
            // `send` wakes a waiting rank on any completion, which the endpoint's flag tells.
            endpoint: Endpoint::new(r, Arc::clone(config)),
            wait: None,
            resume_scheduled: false,
            done: false,
            debt_ns: 0,
            overhead_ns: 0,
            awake_at: 0,
            arrivals: 0,
            made: 0,
            last_send: LastSend::default(),
            stats: Stats::default(),
        }
    }

    /// The number of the next event this rank makes (the `n` of its key, S10).
    #[inline]
    fn next_event(&mut self) -> u64 {
        let n = self.made;
        self.made += 1;
        n
    }

    /// X2: when this rank, blocked and woken by something that happens at `t`, can run: a
    /// wake-up already under way (started by an earlier arrival in the same wait) ends when it
    /// ends; otherwise one starts at `t` and takes `wake_ns` (the kernel's: 0 unless
    /// oversubscribed). A rank whose wait is over and whose resume is scheduled is awake
    /// already: what arrives at its resume's time starts nothing (a wake-up started then
    /// would outlive the wait, and the rank's next wait would take it for one under way).
    #[inline]
    fn wake_at(&mut self, t: u64, wake_ns: u64) -> u64 {
        if wake_ns == 0 {
            // A wake-up takes no time: `awake_at` never passes the time of the call.
            return t;
        }
        if t >= self.awake_at && !self.resume_scheduled {
            self.awake_at = t.saturating_add(wake_ns);
        }
        self.awake_at
    }
}

/// The settings of the endpoints of a run on `model`.
fn endpoint_config(model: &Model, strict_ready: bool, bsend_overflow_returns: bool) -> Arc<Config> {
    Arc::new(Config {
        eager_threshold: model.eager_threshold,
        system_buffer: model.system_buffer,
        strict_ready,
        bsend_overflow_returns,
        bsend_overhead: model.bsend_overhead,
        // A truncated receive's error carries the virtual time it completed (S11).
        virtual_time: true,
    })
}

/// A fresh endpoint for `rank`, whose run has ended, kept in `Loans::void` ([`Kernel::lend_outbox`]).
#[cold]
#[inline(never)]
fn void_endpoint<'a>(
    void: &'a mut Option<Box<Endpoint<Payload>>>,
    model: &Model,
    rank: u32,
) -> &'a mut Endpoint<Payload> {
    void.insert(Box::new(Endpoint::new(
        rank,
        endpoint_config(model, false, false),
    )))
}

/// Schedules `rank`, whose state is `r`, to resume its program at `time` (once): the body of
/// [`Kernel::schedule_resume`], for callers with the state in hand. False, scheduling
/// nothing, when `time` is past virtual time's range (`u64::MAX`, where the saturating
/// arithmetic of times stops): the caller reports the overflow ([`Kernel::time_overflow`]).
#[inline(always)]
#[must_use]
fn resume(queue: &mut Queue, r: &mut RankState, rank: u32, time: u64) -> bool {
    if r.resume_scheduled {
        return true;
    }
    if time == u64::MAX {
        return false;
    }
    r.resume_scheduled = true;
    let key = Key::new(time, RESUME, rank, r.next_event());
    queue.push(key, Body::Resume { rank });
    true
}

/// [`Kernel::polling`] while no rank's program is being polled.
pub(crate) const NOT_POLLING: usize = usize::MAX;

/// The simulation state of one partition: its ranks and their clocks, the queue of their
/// events, and, grouped by concern (`state`), what times packets, what is lent to endpoints,
/// what the run loop, the report, the trace, a stopped run, a parallel round and the livelock
/// watch keep.
pub(crate) struct Kernel {
    /// The machine model and what times packets on it.
    net: Network,
    /// X2: what ranks that share cores pay.
    pub cores: SharedCores,
    /// Global virtual time: the time of the event being run.
    pub now: u64,
    pub queue: Queue,
    pub ranks: Vec<RankState>,
    /// The first rank of this kernel's partition: `ranks[i]` is rank `base + i` (0 but in a
    /// parallel run, `parallel.rs`).
    base: u32,
    /// Ranks in the whole run (`ranks` holds this partition's).
    pub total: u32,
    /// Where the state of the rank whose program is being polled is in `ranks`, or
    /// [`NOT_POLLING`]: a call of another rank made meanwhile comes from a `Comm` or request
    /// shared between ranks (`SimRank`'s "A rank used by another").
    pub polling: usize,
    /// The run is over: programs still suspended are being dropped, and what their requests'
    /// destructors do (cancel, free) no longer takes part in the simulation.
    pub closed: bool,
    /// What the kernel lends the endpoints it feeds.
    loans: Loans,
    /// Events run and ranks finished.
    pub counts: Counts,
    /// The first error, and where the run then ends.
    pub stop: Stop,
    /// A parallel run's round.
    pub round: Round,
    /// The trace, if one is recorded.
    pub trace: TraceLog,
    /// The watch for a livelock.
    pub livelock: Livelock,
    /// What the report says beyond the ranks' counters.
    pub report: ReportData,
    /// Ranks waiting for, or woken by, something outside the kernel.
    pub external: Externals,
}

/// Room for `n` items in a new vector, or an out-of-memory error naming `what` they are and
/// the size asked for: the per-rank arrays of millions of ranks are the allocations that fail
/// first, and a failed allocation would otherwise abort the process without a word.
pub(crate) fn vec_for<T>(n: u32, what: &str) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n as usize).map_err(|_| {
        let bytes = u128::from(n) * std::mem::size_of::<T>() as u128;
        Error::NoMemory {
            what: format!(
                "{what} for {n} ranks ({} bytes each, {:.1} GiB) cannot be allocated; a \
                 simulated rank takes about 1 KB in all",
                std::mem::size_of::<T>(),
                bytes as f64 / f64::from(1u32 << 30),
            ),
        }
    })?;
    Ok(v)
}

impl Kernel {
    /// A kernel for all `ranks` ranks of a run.
    #[cfg(test)]
    pub fn new(model: Model, ranks: u32, strict_ready: bool) -> Result<Self, Error> {
        Self::partition(model, 0..ranks, ranks, strict_ready, false)
    }

    /// A kernel for the ranks `part` of a run of `total` ranks (`strict_ready`,
    /// `bsend_overflow_returns`: the endpoints' [`Config`]).
    pub fn partition(
        model: Model,
        part: std::ops::Range<u32>,
        total: u32,
        strict_ready: bool,
        bsend_overflow_returns: bool,
    ) -> Result<Self, Error> {
        let mut states = vec_for(part.len() as u32, "the simulator's rank table")?;
        let config = endpoint_config(&model, strict_ready, bsend_overflow_returns);
        let wake_ns = model.cpu.wake_ns(total);
        let handover_ns = model
            .cpu
            .handover_charge_ns(total, model.compute == ComputeMode::Measured);
        let base = part.start;
        states.extend(part.map(|r| RankState::new(r, &config)));
        Ok(Kernel {
            cores: SharedCores {
                wake_ns,
                handover_ns,
            },
            net: Network::new(model),
            now: 0,
            queue: Queue::default(),
            ranks: states,
            base,
            total,
            polling: NOT_POLLING,
            closed: false,
            loans: Loans::default(),
            counts: Counts::default(),
            stop: Stop::default(),
            round: Round::default(),
            trace: TraceLog::default(),
            livelock: Livelock::default(),
            report: ReportData::default(),
            external: Externals::default(),
        })
    }

    /// Where rank `rank`'s state is in `ranks`.
    #[inline(always)]
    pub fn at(&self, rank: u32) -> usize {
        rank.wrapping_sub(self.base) as usize
    }

    /// The endpoint a call of `rank` acts on, with the kernel's outbox lent to it (`flush`
    /// takes it back): its own, or once the run has ended (its state went into the report, and
    /// only a `Comm` kept past the run calls) one of its own that nothing reaches, whose
    /// requests no wait finds (`SimRank`'s "A rank whose run has ended").
    #[inline(always)]
    pub fn lend_outbox(&mut self, rank: u32) -> &mut Endpoint<Payload> {
        let i = self.at(rank);
        let ep = if i < self.ranks.len() {
            &mut self.ranks[i].endpoint
        } else {
            debug_assert!(self.closed, "only an ended run gives up its states");
            void_endpoint(&mut self.loans.void, &self.net.model, rank)
        };
        ep.lend_outbox(&mut self.loans.outbox);
        ep
    }

    /// Whether rank `rank` is in this kernel's partition.
    #[inline(always)]
    pub fn is_local(&self, rank: u32) -> bool {
        self.at(rank) < self.ranks.len()
    }

    /// The first rank of this kernel's partition.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// The machine model.
    #[inline]
    pub fn model(&self) -> &Model {
        &self.net.model
    }

    /// Schedules `rank` to resume its program at `time` (once).
    pub fn schedule_resume(&mut self, rank: u32, time: u64) {
        let i = self.at(rank);
        let r = &mut self.ranks[i];
        if !resume(&mut self.queue, r, rank, time) {
            self.time_overflow(rank, self.now, "its next step would come".into());
        }
    }

    /// Stops the run with [`Error::TimeOverflow`]: what `rank` did at `t` (`what`, e.g. "a
    /// message of 8 bytes to rank 1 would arrive") would happen past the last virtual time.
    /// Times add with saturation, so an overflow shows as a time of `u64::MAX`, which no event
    /// is given: a report of 584 years, or of a clock stuck there, would be a wrong answer.
    #[cold]
    #[inline(never)]
    pub fn time_overflow(&mut self, rank: u32, t: u64, what: String) {
        self.fail(
            Error::TimeOverflow {
                rank,
                time_ns: t,
                what,
            },
            t,
        );
    }

    /// Schedules every rank to start its program at time 0: event 0 of each rank, queued as
    /// one range (`schedule_resume` for each would hold an event per rank).
    pub fn schedule_start(&mut self) {
        for r in &mut self.ranks {
            debug_assert!(r.made == 0 && !r.resume_scheduled);
            r.resume_scheduled = true;
            r.made = 1;
        }
        self.queue
            .push_start(self.base..self.base + self.ranks.len() as u32);
    }

    /// Sends what `rank`'s endpoint produced at time `t` (`outputs` and `completed`, which the
    /// caller took from the endpoint it has in hand: `Endpoint::take_outputs`,
    /// `Endpoint::take_completed`), and wakes or stops on its events. Inlined (with `send`)
    /// into its callers, which feed every input: three calls per simulated message.
    #[inline(always)]
    pub fn flush(
        &mut self,
        rank: u32,
        t: u64,
        outputs: Option<Box<Outbox<Payload>>>,
        completed: bool,
    ) {
        let Some(mut out) = outputs else {
            // A completion alone (a message for a posted receive) needs no outbox.
            if completed && !self.closed {
                self.wake(rank, t);
            }
            return;
        };
        // Many inputs produce nothing (posting a receive, taking a completed request): the
        // lent outbox then comes back as it went.
        if !out.is_empty() || completed {
            if self.closed {
                while out.poll_transmit().is_some() {}
                while out.poll_event().is_some() {}
            } else {
                self.send(rank, t, &mut out, completed);
            }
        }
        if self.loans.outbox.is_none() {
            self.loans.outbox = Some(out);
        }
    }

    /// Sends `rank`'s packets, then wakes it if a request `completed`, then acts on its events
    /// (`flush`).
    #[inline(always)]
    fn send(&mut self, rank: u32, t: u64, out: &mut Outbox<Payload>, completed: bool) {
        while let Some(tx) = out.poll_transmit() {
            self.transmit(rank, t, tx);
        }
        // Waking is idempotent at one time `t`, and independent of a failure: flagged
        // completions may go first.
        if completed {
            self.wake(rank, t);
        }
        while let Some(event) = out.poll_event() {
            match event {
                Event::BufferFreed => self.wake(rank, t),
                Event::Fatal(mut err) => {
                    err.stamp_time(t);
                    self.fail(err, t);
                }
            }
        }
    }

    /// Something `rank` may wait for happened at `t` (a completion, freed buffer bytes): a
    /// waiting rank is resumed, after its wake-up (X2).
    ///
    /// Inlined with the resume it schedules: a delivery that completes a waiting receive
    /// comes here once per simulated message.
    #[inline(always)]
    fn wake(&mut self, rank: u32, t: u64) {
        let i = self.at(rank);
        let r = &mut self.ranks[i];
        if r.wait.is_some() {
            let at = r.wake_at(t, self.cores.wake_ns);
            if !resume(&mut self.queue, r, rank, at) {
                self.wake_overflow(rank, t);
            }
        }
    }

    /// A wake-up of `rank`, woken at `t`, would come past virtual time's range: the run stops,
    /// naming the call it waits in. Out of line: `wake` is inlined into every delivery.
    #[cold]
    #[inline(never)]
    fn wake_overflow(&mut self, rank: u32, t: u64) {
        let call = self.ranks[self.at(rank)].wait.map_or("a wait", |w| w.call);
        self.time_overflow(rank, t, format!("its wake-up in {call} would come"));
    }

    /// Sends one of `rank`'s packets at time `t`: queues its delivery at its modelled arrival.
    /// Inlined: once per packet, from `send` and from a blocking send that skips the outbox
    /// (`SimRank::send`).
    #[inline(always)]
    pub fn transmit(&mut self, rank: u32, t: u64, tx: Transmit<Payload>) {
        if self.closed {
            // The run is over: nothing is sent any more (as `flush` drops queued packets).
            return;
        }
        let i = self.at(rank);
        let r = &mut self.ranks[i];
        let n = r.next_event();
        let time = match &tx.packet {
            Packet::Message {
                payload, protocol, ..
            } => {
                let bytes = payload.len();
                let (table, memo) = if protocol.buffered_timing() {
                    (&self.net.model.bsend, &mut self.net.last_delay[0])
                } else {
                    (&self.net.model.ssend, &mut self.net.last_delay[1])
                };
                let recv_ts = t.saturating_add(memo.delay(table, bytes as u64));
                let arrival =
                    self.net
                        .channels
                        .arrival(&mut r.last_send, rank, tx.to, recv_ts, self.now);
                r.endpoint.count_sent(*protocol, bytes);
                if self.trace.records.is_some() {
                    self.trace_message(rank, tx.to, t, arrival, bytes);
                }
                arrival
            }
            // Not before the receive that took the message was posted (X1: a rank that owes
            // overhead posts later than it runs).
            Packet::Fin { not_before, .. } => t
                .max(*not_before)
                .saturating_add(self.net.model.ack_latency_ns),
            // A control message like an ack (S12), behind the channel's messages (FIFO).
            Packet::CancelSend { .. } | Packet::CancelReply { .. } => {
                let at = t.saturating_add(self.net.model.ack_latency_ns);
                self.net
                    .channels
                    .last(&r.last_send, rank, tx.to)
                    .map_or(at, |last| at.max(last))
            }
        };
        if time == u64::MAX {
            self.packet_overflow(rank, t, &tx);
            return;
        }
        let key = Key::new(time, DELIVERY, rank, n);
        let body = Body::Deliver {
            from: rank,
            to: tx.to,
            sent_at: t,
            packet: tx.packet,
        };
        if self.is_local(tx.to) {
            self.queue.push(key, body);
        } else {
            self.send_remote(key, body);
        }
    }

    /// A packet `rank` sent at `t` would arrive past the last virtual time: the run stops
    /// ([`Kernel::time_overflow`]) and the packet is not sent.
    #[cold]
    #[inline(never)]
    fn packet_overflow(&mut self, rank: u32, t: u64, tx: &Transmit<Payload>) {
        let what = match &tx.packet {
            Packet::Message { payload, .. } => {
                format!("a message of {} bytes to rank {}", payload.len(), tx.to)
            }
            Packet::Fin { .. } => format!("an acknowledgement to rank {}", tx.to),
            _ => format!("a cancel request or reply to rank {}", tx.to),
        };
        self.time_overflow(rank, t, what + " would arrive");
    }

    /// Holds an event for a rank of another partition until the round ends, and ends the
    /// round at its arrival at the latest (`parallel.rs`). It cannot arrive sooner than `L`
    /// after the round's first event.
    #[cold]
    #[inline(never)]
    fn send_remote(&mut self, key: Key, body: Body) {
        self.round.horizon = self.round.horizon.min(key.time);
        if key.time < self.round.remote_floor {
            let err = Error::Internal {
                what: format!(
                    "a packet from rank {} arrives at {} ns, sooner than the lookahead after \
                     the round's first event allows ({} ns)",
                    key.creator(),
                    key.time,
                    self.round.remote_floor
                ),
            };
            self.fail(err, self.now);
        }
        self.round.remote.push((key, body));
    }

    /// Delivers the packet of the delivery just popped (`Queue::take_delivery`), sent by
    /// `from`, at the current time. Out of line, with the endpoint's packet handling inlined
    /// into it (fewer instructions and store-to-load interlocks per simulated message than
    /// either inlined into the run loop). The packet is taken from the queue here rather than
    /// handed over by the caller: an argument this big is passed as a copy in the caller's
    /// frame, made with 16-byte moves at the packet's odd offset, and the first read of the
    /// payload's length from that copy waited for two of them (a store-to-load interlock).
    #[inline(never)]
    pub fn deliver_popped(&mut self, from: u32) {
        let (to, sent_at, packet) = self.queue.take_delivery();
        let t = self.now;
        let message = match &packet {
            Packet::Message {
                payload, protocol, ..
            } => {
                // A sender of another partition keeps its channels (`Channels::prune`).
                if self.net.channels.any_in_map() && self.is_local(from) {
                    let i = self.at(from);
                    self.net
                        .channels
                        .delivered(&self.ranks[i].last_send, from, to, t);
                }
                Some((*protocol, payload.len()))
            }
            _ => None,
        };
        let i = self.at(to);
        let r = &mut self.ranks[i];
        if let Some((protocol, bytes)) = message {
            r.endpoint.count_arrived(protocol, bytes);
            // Read by blocking probes only, when the rank runs next.
            r.arrivals += 1;
            if r.wait.is_some() {
                // X2: any message wakes a parked rank, whether or not it ends the wait.
                r.wake_at(t, self.cores.wake_ns);
            }
        }
        // A message that needs no `Fin` makes no outputs but its completion, which is a flag
        // (and, rarely, a strict ready send's error, which allocates an outbox): no loan.
        if !matches!(packet, Packet::Message { ack: false, .. }) {
            r.endpoint.lend_outbox(&mut self.loans.outbox);
        }
        r.endpoint.set_now(t);
        r.endpoint.handle_packet_sent_at(from, packet, sent_at);
        let completed = r.endpoint.take_completed();
        let outputs = r.endpoint.take_outputs();
        if message.is_some() && r.wait.is_some_and(|w| w.on_arrival) {
            let at = r.wake_at(t, self.cores.wake_ns);
            self.schedule_resume(to, at);
        }
        self.flush(to, t, outputs, completed);
    }

    /// `rank`, which runs, polled in `call` and found nothing: its resume, scheduled by the
    /// poll if the rank had made `made_before` events before it, ends a poll (`livelock`).
    ///
    /// Nothing happens when that resume runs: a poll's resume is told from others only at
    /// checkpoints, by [`Kernel::polling_in`] (the run loop stays as it was).
    pub fn note_poll(&mut self, rank: u32, call: &'static str, made_before: u64) {
        let i = self.at(rank);
        let r = &self.ranks[i];
        // Its resume was scheduled by the poll (not there already, not refused at the end of
        // virtual time).
        if !r.resume_scheduled || r.made != made_before + 1 {
            return;
        }
        let made = r.made;
        // The poll began its cost before the resume it scheduled.
        let began = r.clock.saturating_sub(self.net.model.poll_cost_ns);
        if self.livelock.poll_calls.is_empty() {
            let n = self.ranks.len();
            self.livelock.poll_calls = vec![""; n];
            self.livelock.poll_events = vec![u64::MAX; n];
            self.livelock.poll_since = vec![0; n];
            self.livelock.poll_last = vec![0; n];
        }
        // Its polls go on if it has made no event since its last poll's resume and its
        // endpoint has been given nothing since (`input_before`).
        let given = match self.livelock.input_before {
            (at, input) if at == i => input > self.livelock.poll_last[i],
            _ => false,
        };
        if self.livelock.poll_events[i] != made_before.wrapping_sub(1) || given {
            self.livelock.poll_since[i] = began;
        }
        self.livelock.poll_last[i] = began;
        self.livelock.input_before = (NOT_POLLING, 0);
        self.livelock.polls += 1;
        self.livelock.poll_calls[i] = call;
        // Its resume was the last event it made.
        self.livelock.poll_events[i] = made - 1;
    }

    /// When the polls of rank `i` (an index in `ranks`) began (`note_poll`).
    pub fn poll_began(&self, i: usize) -> u64 {
        self.livelock.poll_since.get(i).copied().unwrap_or(0)
    }

    /// Since when, at the latest, nothing but polls has run in this partition, from its ranks
    /// (`livelock`; the run is quiet): the last time anything else happened to each, which is
    /// the time a polling rank's polls began, the time a blocked rank blocked, woke or was
    /// last given something (a message, an ack), and the time a finished rank ended or was
    /// last given something. Every event that is not a poll is one of these; a partition's
    /// figure is its ranks' alone, so the run's (their latest) is the same however it is
    /// split.
    pub fn quiet_since(&self) -> u64 {
        let mut since = 0;
        for (i, r) in self.ranks.iter().enumerate() {
            let last = if self.polling_in(i).is_some() {
                self.livelock.poll_since[i]
            } else {
                let given = r.endpoint.now().max(r.awake_at);
                match r.wait {
                    Some(w) if !r.done => given.max(w.since),
                    _ => given.max(r.clock),
                }
            };
            since = since.max(last);
        }
        since
    }

    /// Whether a rank of this partition has polled and found nothing (`livelock`).
    pub fn has_polled(&self) -> bool {
        !self.livelock.poll_calls.is_empty()
    }

    /// The call rank `i` (an index in `ranks`) last polled in, if the resume it has queued
    /// ends that poll.
    pub fn polling_in(&self, i: usize) -> Option<&'static str> {
        let r = &self.ranks[i];
        let polling = r.resume_scheduled && self.livelock.poll_events.get(i) == Some(&(r.made - 1));
        polling.then(|| self.livelock.poll_calls[i])
    }

    /// Whether this partition is quiet but for polls (`livelock`): no packet queued to any of
    /// its ranks and none of them to start, every unfinished one blocked or polling; and if
    /// so, how many polls it has queued and how many events it has run that were not polls.
    /// Looks at every rank, so only at checkpoints, and only when the queue holds resumes
    /// alone. (A partition of a parallel run may be quiet with no poll of its own.)
    pub fn quiet(&self) -> Option<(u64, u64)> {
        if !self.queue.resumes_only() {
            return None;
        }
        let mut queued = 0;
        for (i, r) in self.ranks.iter().enumerate() {
            if self.polling_in(i).is_some() {
                queued += 1;
            } else if !(r.done || (r.wait.is_some() && !r.resume_scheduled)) {
                return None;
            }
        }
        // Every poll noted but those still queued has run.
        Some((queued, self.counts.events - (self.livelock.polls - queued)))
    }

    /// X1: puts `rank`'s pending per-request overhead on its clock (recorded as an `overhead`
    /// span); returns the new clock if there was any. The rank must then resume no earlier.
    pub fn settle_overhead(&mut self, rank: u32) -> Option<u64> {
        let i = self.at(rank);
        let r = &mut self.ranks[i];
        if r.overhead_ns == 0 {
            return None;
        }
        let from = r.clock;
        let owed = std::mem::take(&mut r.overhead_ns);
        r.stats.overhead_ns = r.stats.overhead_ns.saturating_add(owed);
        r.clock = r.clock.saturating_add(owed);
        let at = r.clock;
        self.record_span(rank, "overhead", from, at);
        Some(at)
    }

    /// The wait `w` of the rank at `i` in `ranks`, woken in it, returns at its clock (the time
    /// of the wake; S1): its blocked time, its trace span and, when it is long enough, its
    /// place among the longest waits (whose request, still held, it names: `waits::offer`).
    /// X2: the rank's core is handed back to it before it acts, as X1's overhead is paid.
    /// Inlined: every wait that blocked ends here, one per simulated message of a ring.
    #[inline(always)]
    pub fn end_wait(&mut self, i: usize, w: Wait) {
        let (rank, floor, handover) = (
            self.base + i as u32,
            self.report.top_waits.floor(),
            self.cores.handover_ns,
        );
        let r = &mut self.ranks[i];
        r.wait = None;
        let clock = r.clock;
        r.stats.blocked_ns += clock - w.since;
        if handover > 0 {
            r.overhead_ns = r.overhead_ns.saturating_add(handover);
        }
        self.record_span(rank, w.call, w.since, clock);
        if clock - w.since > floor {
            crate::waits::offer(self, rank, w.call, w.since, clock, w.req);
        }
    }

    /// The rank at `i` (an index in `ranks`) blocks in a wait on several requests, of which
    /// `incomplete` and perhaps some after them are not complete (`SimRank::wait_requests`,
    /// `SimRank::wait_in`).
    pub fn wait_on_set(&mut self, i: usize, incomplete: impl Iterator<Item = ReqId>) {
        match self.awaiting_mut(i) {
            Awaiting::Requests(list) => {
                list.clear();
                list.extend(incomplete);
            }
            other => *other = Awaiting::Requests(incomplete.collect()),
        }
    }

    /// The rank at `i` blocks in a probe for `awaited`.
    pub fn wait_on_probe(&mut self, i: usize, awaited: Awaited) {
        *self.awaiting_mut(i) = Awaiting::Probe(awaited);
    }

    /// Where the rank at `i` records what it waits for (`awaiting`, made on first use).
    fn awaiting_mut(&mut self, i: usize) -> &mut Awaiting {
        if self.report.awaiting.is_empty() {
            self.report
                .awaiting
                .resize_with(self.ranks.len(), Awaiting::default);
        }
        &mut self.report.awaiting[i]
    }

    /// Forgets channels that no longer bear on arrivals (`Channels::prune`), between the
    /// rounds of a parallel run.
    pub fn prune_channels(&mut self) {
        self.net.channels.prune(self.now);
    }

    /// Records a span of `rank`'s time, if it has a length.
    #[inline]
    pub fn record_span(&mut self, rank: u32, name: &'static str, start_ns: u64, end_ns: u64) {
        // Whether a trace is recorded first: in a run without one, a blocked rank's every
        // resume comes here.
        if self.trace.records.is_some() && end_ns > start_ns {
            self.trace_span(rank, name, start_ns, end_ns);
        }
    }

    /// The body of [`Kernel::record_span`] when a trace is recorded, out of line: the calls
    /// that record spans stay small enough to inline where there is no trace. A span the
    /// filter does not keep is not recorded; one that crosses the window's edge is clipped.
    #[inline(never)]
    fn trace_span(&mut self, rank: u32, name: &'static str, start_ns: u64, end_ns: u64) {
        let Some((start_ns, end_ns)) = self.trace.filter.clip(rank, start_ns, end_ns) else {
            return;
        };
        if let Some(trace) = self.trace_room() {
            trace.push(TraceEvent::Span {
                rank,
                name,
                start_ns,
                end_ns,
                unfinished: false,
            });
        }
    }

    /// Records a message in the trace (out of line, as [`Kernel::trace_span`]), numbered
    /// after the messages recorded before it, if the filter keeps it.
    #[inline(never)]
    fn trace_message(&mut self, from: u32, to: u32, sent_ns: u64, arrival_ns: u64, bytes: usize) {
        if !self
            .trace
            .filter
            .keeps_message(from, to, sent_ns, Some(arrival_ns))
        {
            return;
        }
        let id = self.trace.messages_sent + 1;
        if let Some(trace) = self.trace_room() {
            trace.push(TraceEvent::Message {
                id,
                from,
                to,
                sent_ns,
                arrival_ns: Some(arrival_ns),
                bytes,
            });
            self.trace.messages_sent = id;
        }
    }

    /// The trace, with room for one more record: `None` when none is recorded or it cannot
    /// grow ([`Kernel::grow_trace`]).
    #[inline(always)]
    fn trace_room(&mut self) -> Option<&mut Vec<TraceEvent>> {
        let trace = self.trace.records.as_ref()?;
        if trace.len() == trace.capacity() && !self.grow_trace() {
            return None;
        }
        self.trace.records.as_mut()
    }

    /// Doubles the trace's room, or stops the run with `NoMemory` and records no more (false).
    /// A trace is held until the run ends, and its doubling asks for one block twice its size,
    /// which a process under a memory limit (`ulimit -v`, a control group) may be refused:
    /// the allocator would abort the process, before the memory watch noticed anything. The
    /// records so far are kept: the trace written shows what led to the stop.
    #[cold]
    #[inline(never)]
    fn grow_trace(&mut self) -> bool {
        let Some(trace) = self.trace.records.as_mut() else {
            return false;
        };
        let (records, more) = (trace.len(), trace.len().max(1024));
        if trace.try_reserve_exact(more).is_ok() {
            return true;
        }
        let bytes = more * std::mem::size_of::<TraceEvent>();
        self.fail_now(
            Error::NoMemory {
                what: format!(
                    "the trace holds {records} records and cannot grow by {:.1} MiB more; \
                     the trace written ends here. Trace a shorter run, or run without --trace",
                    bytes as f64 / f64::from(1 << 20)
                ),
            },
            self.now,
        );
        false
    }

    /// Records the first error; the run stops before the first event at or after `L` past
    /// the current event (D2).
    pub fn fail(&mut self, err: Error, t: u64) {
        if self.stop.first.is_none() {
            self.stop.first = Some((err, t));
            self.stop.key = self.round.current;
            self.stop.end = self
                .stop
                .end
                .min(self.now.saturating_add(self.net.lookahead));
        }
    }

    /// Records `err` and stops the run at once, after the current event: for a host short of
    /// memory, which simulated time does not mend. The lookahead D2 runs past other errors
    /// would take more (all of a run's ranks start at time 0, say).
    pub fn fail_now(&mut self, err: Error, t: u64) {
        self.fail(err, t);
        self.stop.end = self.stop.end.min(self.now);
    }

    /// What request `req` of `rank`, waited for in `wait_call`, is about, for reports
    /// (`Endpoint::describe`): a communicator call's request is the library's, so it is named
    /// after the call (`deadlock::is_communicator_call`).
    pub fn describe_request(
        &self,
        rank: u32,
        req: ReqId,
        wait_call: &'static str,
    ) -> Option<(&'static str, Source, Tag, ContextId)> {
        let (call, peer, tag, context) = self.ranks[self.at(rank)].endpoint.describe(req)?;
        let call = if deadlock::is_communicator_call(wait_call) {
            wait_call
        } else {
            call
        };
        Some((call, peer, tag, context))
    }

    /// What a waiting rank is blocked in, for reports: its call, since when, and what it
    /// waits on (its request; every request still incomplete of a wait on several, in the
    /// program's order; a probe's peer and tag; the message a detach waits to see received).
    pub fn describe_wait(&self, rank: u32) -> Option<BlockedRank> {
        let r = &self.ranks[self.at(rank)];
        let w = r.wait?;
        let request = |q: ReqId| {
            let (call, peer, tag, context) = self.describe_request(rank, q, w.call)?;
            Some(Waiting {
                call,
                peer,
                tag,
                context,
            })
        };
        if self
            .external
            .by_rank
            .get(&self.at(rank))
            .is_some_and(|e| e.waiting)
        {
            let outside = Awaited {
                peer: Source::Any,
                tag: Tag::Any,
                context: ContextId(0),
            };
            let waiting_on = vec![Waiting::new(deadlock::EXTERNAL_EVENT, outside)];
            return Some(BlockedRank::new(rank, w.call, Some(w.since), waiting_on));
        }
        let waiting_on = match (self.report.awaiting.get(self.at(rank)), w.req) {
            // A wait on several requests: those it blocked on, but for any complete since.
            (Some(Awaiting::Requests(set)), Some(first)) if w.set && set.contains(&first) => set
                .iter()
                .filter(|&&q| !r.endpoint.is_done(q))
                .filter_map(|&q| request(q))
                .collect(),
            (_, Some(q)) => request(q).into_iter().collect(),
            // Only a blocking probe waits on arrivals with no request.
            (Some(Awaiting::Probe(awaited)), None) if w.on_arrival => {
                vec![Waiting::new(w.call, *awaited)]
            }
            // A detach waits for its buffered messages to be received: the first names a peer.
            (_, None) => r
                .endpoint
                .awaited_without_request(w.call)
                .map(|(call, awaited)| Waiting::new(call, awaited))
                .into_iter()
                .collect(),
        };
        Some(BlockedRank::new(rank, w.call, Some(w.since), waiting_on))
    }
}
