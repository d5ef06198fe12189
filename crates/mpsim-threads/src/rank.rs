//! One rank on its thread: the [`RankRuntime`] the API calls, and the loop that runs the rank's
//! future (`block_on`: poll, spin a little on the mailbox, park).
//!
//! With a trace asked for, the rank also records into its own [`RankTrace`] (see `trace`); the
//! untraced path pays one never-taken branch per packet pushed and per message taken in.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use mpsim_proto::deadlock::{self, Awaited, Waiting};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{Envelope, Pattern};
use mpsim_proto::p2p::{
    Completion, Config, Endpoint, Event, Packet, Queued, ReqId, SendCall, SendMode, Status,
    Transmit,
};
use mpsim_proto::runtime::endpoint::{self, first_done, probe_now};
use mpsim_proto::runtime::fast::{self, Failed, Posted, RestOfWait};
use mpsim_proto::runtime::{
    Call, Needs, Payload, Probed, RankRuntime, Started, Wait as WaitFor, Waited, Work,
};

use crate::mailbox::{Activity, Blocked, Inbound, Mailbox, PacketLane, lock};
use crate::measure::{Awaited as AwaitedRequest, MeasuredWait, RankMeasure};
use crate::run::Shared;
use crate::trace::RankTrace;
use mpsim_proto::trace::TraceFilter;

/// Spins on the mailbox before parking when every rank has a core of its own (a few
/// microseconds: a ping-pong answer comes sooner than a park/unpark round trip).
const SPINS_DEDICATED: u32 = 20_000;
/// With at most two ranks per core, a waiting rank yields its core for this long before it
/// parks ([`WaitPolicy::Yield`]).
const YIELD_BUDGET: Duration = Duration::from_millis(1);
/// With more than two ranks per core, a waiting rank yields a few times, then parks.
const YIELDS_CROWDED: u32 = 4;

/// How a rank waits for a packet: chosen once per run from the ranks per core
/// ([`WaitPolicy::for_run`]) unless the launcher's `--wait` names one. Microseconds per hop of
/// a token ring on the reference 2-core machine, minimum / median of 5 runs
/// (`bench/threads-wait.sh -r 5`, 2026-11-24; `auto` is this choice):
///
/// | ranks | auto        | yield        | park        |
/// |-------|-------------|--------------|-------------|
/// | 2     | 0.29 / 0.31 | 0.40 / 0.44  | 1.21 / 6.50 |
/// | 3     | 0.89 / 0.94 | 0.86 / 0.94  | 1.53 / 14.7 |
/// | 4     | 0.96 / 1.05 | 0.93 / 1.04  | 2.92 / 4.33 |
/// | 8     | 2.64 / 5.69 | 1.56 / 2.10  | 2.89 / 4.63 |
/// | 16    | 2.65 / 4.50 | 3.41 / 4.13  | 2.46 / 3.83 |
/// | 64    | 5.41 / 5.67 | 9.41 / 12.04 | 5.11 / 5.78 |
///
/// Since then ranks are bound to cores with up to two per core (`binding.rs`). Over 3 runs
/// (`-r 3`, in the machine's faster state), auto / yield / park: 2 ranks 0.08 / 0.28 / 1.36
/// us minimum, 3 ranks 0.85 / 0.85 / 2.09, 4 ranks 0.73 / 0.74 / 4.68, 8 ranks 2.04 / 1.84 /
/// 2.12, 64 ranks 4.81 / 10.02 / 4.86: the same choice holds.
///
/// (`auto` and `park` are the same policy from 5 ranks on: their spread is the host's. Over 7
/// more runs, 5 and 8 ranks took the same median time yielding or parking, 12 and 16 ranks
/// 20-35% less parking.)
///
/// A parked thread is woken by the sender (a futex wake): when the core it lands on was idle
/// (a virtual machine's halted vCPU), that takes microseconds, and which core it lands on is
/// the OS's choice, so the time per hop jumped between about 1 and 7 us from run to run with 3
/// ranks. A thread that yields instead stays runnable: it gets the core as soon as the rank
/// holding it waits too, so with at most two ranks per core a message is seen within about one
/// context switch. With more ranks per core, the awaited rank waits its turn behind every
/// other yielding rank of its core, and parking does as well or better. (Open MPI,
/// oversubscribed, also yields rather than blocks: `mpi_yield_when_idle`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Spin on the mailbox 20,000 times, then park (picked when every rank has a core).
    Spin,
    /// Yield the core for up to 1 ms, then park (picked with at most two ranks per core).
    Yield,
    /// Yield 4 times, then park (picked with more than two ranks per core).
    Park,
}

impl WaitPolicy {
    /// The policy for `ranks` ranks on `cores` cores (what [`Options::wait`] `None` picks).
    ///
    /// [`Options::wait`]: crate::Options::wait
    pub fn for_run(ranks: usize, cores: usize) -> Self {
        if ranks <= cores {
            WaitPolicy::Spin
        } else if ranks <= 2 * cores {
            WaitPolicy::Yield
        } else {
            WaitPolicy::Park
        }
    }
}

/// A rank on its thread: the runtime its program calls.
pub struct ThreadRank {
    rank: u32,
    shared: Arc<Shared>,
    endpoint: RefCell<Endpoint<Payload>>,
    /// The lanes into this rank the thread knows of (a copy of its mailbox's list).
    inbound: RefCell<Vec<Inbound>>,
    /// The lane to each destination rank, made on the first send there.
    outbound: RefCell<Vec<Option<Arc<PacketLane>>>>,
    /// What the rank's last unfinished wait was on: `(call, request)`, or a call alone. Turned
    /// into the deadlock watchdog's text only when the rank parks.
    waiting: Cell<Option<(&'static str, Option<ReqId>)>>,
    /// What the rank's last blocking probe waited for (a wait with no request to describe).
    probing: Cell<Option<Awaited>>,
    /// The requests not complete when the rank last blocked in a wait on several
    /// (`poll_requests`); its wait (`waiting`) names the first.
    waiting_set: RefCell<Vec<ReqId>>,
    /// Messages taken in so far (blocking probes wait for this to grow).
    arrivals: Cell<u64>,
    start: Instant,
    /// This rank's records when a trace was asked for (boxed: one pointer in this struct).
    trace: Option<Box<RefCell<RankTrace>>>,
    /// This rank's figures for the report, when one was asked for (`Options::measure`).
    measure: Option<Box<RefCell<RankMeasure>>>,
    /// Receives the program let go of after they matched (`Call::LetGo`).
    discarded: RefCell<Vec<String>>,
    /// Strict ready sends (`Config::strict_ready`): every call takes in what arrived first
    /// ([`ThreadRank::on_endpoint`]).
    strict_ready: bool,
}

impl ThreadRank {
    /// Rank `rank`'s runtime; it records a trace under the filter `trace`, if given, and its
    /// report's figures when `measure`.
    pub(crate) fn new(
        rank: u32,
        shared: Arc<Shared>,
        config: Config,
        trace: Option<Arc<TraceFilter>>,
        measure: bool,
    ) -> Self {
        let start = shared.start;
        let ranks = shared.mailboxes.len();
        let strict_ready = config.strict_ready;
        let endpoint = Endpoint::new(rank, config);
        ThreadRank {
            rank,
            shared,
            endpoint: RefCell::new(endpoint),
            inbound: RefCell::new(Vec::new()),
            outbound: RefCell::new(vec![None; ranks]),
            waiting: Cell::new(None),
            probing: Cell::new(None),
            waiting_set: RefCell::new(Vec::new()),
            arrivals: Cell::new(0),
            start,
            trace: trace.map(|filter| Box::new(RefCell::new(RankTrace::new(rank, filter)))),
            measure: measure.then(|| Box::new(RefCell::new(RankMeasure::new(rank)))),
            discarded: RefCell::new(Vec::new()),
            strict_ready,
        }
    }

    /// The rank's trace records, taken (empty afterwards); `None` when not tracing.
    pub(crate) fn take_trace(&self) -> Option<RankTrace> {
        self.trace.as_ref().map(|t| t.borrow_mut().take())
    }

    /// The rank's longest waits (empty when not measuring), taken.
    pub(crate) fn take_longest_waits(&self) -> Vec<MeasuredWait> {
        self.measure
            .as_ref()
            .map(|m| m.borrow_mut().take_longest())
            .unwrap_or_default()
    }

    /// What the rank did, for the report: its time in compute and blocked (when measuring),
    /// and its endpoint's traffic; at its end, once it has stopped taking packets in (the
    /// messages left in its lanes are counted then, `Mailbox::leftover_messages`).
    pub(crate) fn figures(&self) -> crate::measure::RankFigures {
        let ep = self.endpoint.borrow();
        let (compute_ns, blocked_ns) = self
            .measure
            .as_ref()
            .map_or((0, 0), |m| (m.borrow().compute_ns, m.borrow().blocked_ns));
        crate::measure::RankFigures {
            compute_ns,
            blocked_ns,
            sent: ep.sent_counts(),
            received: ep.received_counts(),
            unreceived: ep.unreceived_counts(),
        }
    }

    /// What the wait on `req` in `call` awaits, as the simulator's report names it: the
    /// request's call, peer, tag and context (a communicator call's own name).
    fn describe(&self, call: &'static str, req: ReqId) -> Option<AwaitedRequest> {
        let (req_call, peer, tag, context) = self.endpoint.try_borrow().ok()?.describe(req)?;
        let call = if deadlock::is_communicator_call(call) {
            call
        } else {
            req_call
        };
        Some((call, peer, tag, context))
    }

    /// Publishes what the rank waits for, for the watchdog: called only on the way to parking.
    fn publish_wait(&self) {
        let Some((call, req)) = self.waiting.get() else {
            return;
        };
        let ep = self.endpoint.borrow();
        let request = |q| ep.describe(q).map(|d| Waiting::of_request(call, d));
        let set = self.waiting_set.borrow();
        let (first, more) = match req {
            // A wait on several requests (`poll_requests`): every one still incomplete.
            Some(q) if set.first() == Some(&q) => {
                let mut all = set
                    .iter()
                    .filter(|&&q| !ep.is_done(q))
                    .filter_map(|&q| request(q));
                (all.next(), all.collect())
            }
            Some(q) => (request(q), Vec::new()),
            // A detach waits for its buffered messages to be received: the first names a peer.
            None => (
                ep.awaited_without_request(call)
                    .map(|(call, awaited)| Waiting::new(call, awaited))
                    .or(self.probing.get().map(|p| Waiting::new(call, p))),
                Vec::new(),
            ),
        };
        *lock(&self.mailbox().blocked) = Some(Blocked { call, first, more });
    }

    fn mailbox(&self) -> &Mailbox {
        &self.shared.mailboxes[self.rank as usize]
    }

    /// Whether a packet waits in a lane: the spin loop's test.
    #[inline]
    fn has_mail(&self) -> bool {
        let mut inbound = self.inbound.borrow_mut();
        let mailbox = self.mailbox();
        if mailbox.lane_count() != inbound.len() {
            // Pick up new lanes here, so that a new lane alone never reads as mail forever.
            mailbox.new_lanes_into(&mut inbound);
        }
        inbound.iter().any(|i| i.lane.has_items())
    }

    /// After the rank's program ended: takes in what arrived and sends the answers; whether
    /// anything had arrived.
    pub(crate) fn serve(&self) -> bool {
        if !self.has_mail() {
            return false;
        }
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        true
    }

    /// Takes in arrived packets and sends what the endpoint produced.
    fn progress(&self, ep: &mut Endpoint<Payload>) {
        let mailbox = self.mailbox();
        let mut inbound = self.inbound.borrow_mut();
        if mailbox.lane_count() != inbound.len() {
            mailbox.new_lanes_into(&mut inbound);
        }
        let mut taken = 0;
        for i in inbound.iter() {
            while let Some(packet) = i.lane.pop() {
                if let Packet::Message {
                    protocol, payload, ..
                } = &packet
                {
                    ep.count_arrived(*protocol, payload.len());
                    self.arrivals.set(self.arrivals.get() + 1);
                    if let Some(trace) = &self.trace {
                        self.trace_taken(trace, i.from);
                    }
                }
                ep.handle_packet(i.from, packet);
                taken += 1;
            }
        }
        if taken > 0 {
            mailbox.add_taken(taken);
        }
        drop(inbound);
        self.flush(ep);
    }

    /// Pushes the endpoint's packets into their lanes (waking each destination once per run of
    /// packets to it) and acts on its events. Runs after every input: the common "nothing to
    /// send" case is a check inlined at the caller. The endpoint's completion flag is only
    /// cleared: a wait looks at its requests after every intake anyway (`poll_until`).
    #[inline]
    fn flush(&self, ep: &mut Endpoint<Payload>) {
        let _ = ep.take_completed();
        if ep.has_output() {
            self.flush_outputs(ep);
        }
    }

    /// The outbox is taken, drained and lent back, so that its queues are allocated once.
    fn flush_outputs(&self, ep: &mut Endpoint<Payload>) {
        let Some(mut out) = ep.take_outputs() else {
            return;
        };
        let mut last = None;
        while let Some(t) = out.poll_transmit() {
            if last.is_some_and(|l| l != t.to) {
                self.shared.mailboxes[last.unwrap_or_default() as usize].notify();
            }
            last = Some(t.to);
            if let Packet::Message {
                protocol, payload, ..
            } = &t.packet
            {
                ep.count_sent(*protocol, payload.len());
            }
            self.push(t);
        }
        if let Some(l) = last {
            self.shared.mailboxes[l as usize].notify();
        }
        while let Some(e) = out.poll_event() {
            if let Event::Fatal(err) = e {
                self.shared.fail(err);
            }
        }
        ep.lend_outbox(&mut Some(out));
    }

    /// Runs `f` on the endpoint without taking in what arrived (for calls whose outcome cannot
    /// depend on it: starting a send, posting a receive), then sends what it produced. Generic, so
    /// that a call made with a known function inlines it. In strict mode what arrived is taken
    /// in first: a ready send is judged by whether it arrived before its receive was posted,
    /// and one that waits in a lane when the receive is posted did.
    #[inline]
    fn on_endpoint<R>(&self, f: impl FnOnce(&mut Endpoint<Payload>) -> R) -> R {
        let mut ep = self.endpoint.borrow_mut();
        if self.strict_ready {
            self.progress(&mut ep);
        }
        let out = f(&mut ep);
        self.flush(&mut ep);
        out
    }

    /// Puts a packet in its lane (the destination is not woken: see `notify`).
    #[inline]
    fn push(&self, t: Transmit<Payload>) {
        if let Some(trace) = &self.trace {
            self.trace_sent(trace, t.to, &t.packet);
        }
        let to = t.to as usize;
        self.outbound.borrow_mut()[to]
            .get_or_insert_with(|| self.shared.mailboxes[to].add_lane(self.rank))
            .push(t.packet);
    }

    /// Every wait: take in what arrived; ready when `done`; ended by an abort; otherwise record
    /// what the rank waits for (`call`, `req`) and let `block_on` park it.
    fn poll_until(
        &self,
        call: &'static str,
        req: Option<ReqId>,
        done: impl FnOnce(&Endpoint<Payload>) -> bool,
    ) -> Poll<Result<(), Error>> {
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        if done(&ep) {
            return Poll::Ready(Ok(()));
        }
        drop(ep);
        self.blocked(call, req)
    }

    /// A wait found its condition false: ended by an abort, or else the rank records what it
    /// waits for (`call`, `req`) and `block_on` parks it.
    fn blocked<T>(&self, call: &'static str, req: Option<ReqId>) -> Poll<Result<T, Error>> {
        if let Some(e) = self.aborted() {
            return Poll::Ready(Err(e));
        }
        self.waiting.set(Some((call, req)));
        Poll::Pending
    }

    /// Records a message taken in from `from` (tracing only: out of the untraced path).
    #[cold]
    #[inline(never)]
    fn trace_taken(&self, trace: &RefCell<RankTrace>, from: u32) {
        trace.borrow_mut().taken(from, self.now_ns());
    }

    /// Records `packet` if it is a message, before it is pushed to `to`: its time is then
    /// never after its arrival's (tracing only).
    #[cold]
    #[inline(never)]
    fn trace_sent(&self, trace: &RefCell<RankTrace>, to: u32, packet: &Packet<Payload>) {
        if let Packet::Message { payload, .. } = packet {
            trace.borrow_mut().sent(to, self.now_ns(), payload.len());
        }
    }

    /// Ends the traced wait in progress now: for waits with no request, whose identity
    /// `block_on` cannot tell apart from the next one in the same call.
    fn trace_wait_ended(&self) {
        if self.trace.is_none() && self.measure.is_none() {
            return;
        }
        let now = self.now_ns();
        if let Some(trace) = &self.trace {
            trace.borrow_mut().wait_ended(now);
        }
        if let Some(measure) = &self.measure {
            measure.borrow_mut().wait_ended(now);
        }
    }

    /// The messages this rank took in and no receive took, `(sender, envelope, bytes)` in
    /// arrival order: at its end, for the run's warnings (those still in its lanes are counted
    /// after every rank ended, `Mailbox::leftover_messages`).
    pub(crate) fn unreceived(&self) -> Vec<(u32, Envelope, usize)> {
        self.endpoint.borrow().unexpected_messages().collect()
    }

    /// The warnings of receives the program let go of after they matched, in order, taken.
    pub(crate) fn take_discarded(&self) -> Vec<String> {
        self.discarded.take()
    }

    /// The rank's pending requests, for `PendingAtExit`.
    pub(crate) fn pending(&self) -> Vec<mpsim_proto::error::PendingRequest> {
        self.endpoint.borrow().pending_requests()
    }

    fn aborted(&self) -> Option<Error> {
        self.shared.aborted().map(|cause| Error::Aborted {
            rank: self.rank,
            cause,
        })
    }
}

/// # Fast paths
///
/// The hottest calls, as plain methods that `mpsim` calls by this type
/// (`mpsim_proto::runtime::fast`): each does in one pass through the endpoint what the seam
/// ([`RankRuntime`]) does in two, and a receive's data is copied while the endpoint is
/// borrowed. No virtual time: errors are not stamped.
impl ThreadRank {
    /// Starts a blocking send. After the run aborted it fails with `Aborted` and sends nothing:
    /// every rank stops at its next call (waits see the abort as they wait, sends here).
    pub fn send(
        &self,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<Posted, Error> {
        if let Some(e) = self.aborted() {
            return Err(e);
        }
        let started = self.on_endpoint(|ep| {
            let mut sent = None;
            let send = SendCall {
                call: mode.call(),
                mode,
                to,
                envelope,
                payload,
                blocking: true,
            };
            let started = ep.start_send(send, |t: Transmit<Payload>| {
                if let Packet::Message {
                    protocol, payload, ..
                } = &t.packet
                {
                    sent = Some((*protocol, payload.len()));
                }
                // Straight into the lane: nothing of this endpoint's was waiting to go first.
                self.push(t);
                self.shared.mailboxes[to as usize].notify();
            });
            if let Some((protocol, bytes)) = sent {
                ep.count_sent(protocol, bytes);
            }
            started
        });
        fast::sent(started)
    }

    /// A nonblocking send for the program's call `call`; after the run aborted, `Aborted`.
    pub fn isend(
        &self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<ReqId, Error> {
        if let Some(e) = self.aborted() {
            return Err(e);
        }
        let send = SendCall {
            call,
            mode,
            to,
            envelope,
            payload,
            blocking: false,
        };
        self.on_endpoint(|ep| ep.start_send(send, Queued))
            .map(|req| req.expect("a nonblocking send has a request"))
    }

    /// Starts a blocking receive into `buf`: a message that matched at once is finished into
    /// it.
    pub fn recv_into(
        &self,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
    ) -> Result<Posted, Error> {
        self.on_endpoint(|ep| fast::recv_into(ep, pattern, buf, source_world))
    }

    /// Posts a nonblocking receive.
    pub fn irecv(&self, pattern: Pattern, capacity: usize, source_world: Option<u32>) -> ReqId {
        self.on_endpoint(|ep| ep.irecv_from(pattern, capacity, source_world))
    }

    /// The wait on `req`: ready with the request finished as the program gets it, the data
    /// copied into `buf` while the endpoint is borrowed anyway.
    pub fn wait_into(
        &self,
        req: ReqId,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<Result<Status, Failed>> {
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        if let Some(out) = ep.finish_if_done(req, buf) {
            return Poll::Ready(out.map_err(|e| Failed::Request(*e)));
        }
        drop(ep);
        self.blocked(call, Some(req)).map_err(Failed::Wait)
    }

    /// As `wait_into`, of a wait on several in order; pending, the rank records `req` and the
    /// `rest`, which a deadlock report names (`publish_wait`).
    pub fn wait_in(
        &self,
        req: ReqId,
        rest: Option<RestOfWait<'_>>,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<Result<Status, Failed>> {
        let polled = self.wait_into(req, call, buf);
        if polled.is_pending() {
            let mut set = self.waiting_set.borrow_mut();
            set.clear();
            set.push(req);
            if let Some(rest) = rest {
                rest(&mut set);
            }
        }
        polled
    }

    /// Whether `req` is complete, looked at without taking in what arrived: after a poll of the
    /// program, the API layer's progress of nonblocking collectives (`mpsim::progress`) asks it
    /// which collectives the mail that poll took in lets move on, without taking in more mail
    /// the program's wait would then not have seen.
    pub fn is_done_now(&self, req: ReqId) -> bool {
        self.endpoint.borrow().is_done(req)
    }

    /// A wait on all of `reqs` or any: the rank records those still incomplete, which a
    /// deadlock report names (`publish_wait`).
    pub fn wait_requests(
        &self,
        reqs: &[ReqId],
        needs: Needs,
        call: &'static str,
    ) -> Poll<Result<usize, Error>> {
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        let (done, incomplete) = first_done(&ep, reqs);
        drop(ep);
        match (needs, done, incomplete) {
            (Needs::All, _, None) | (Needs::Any, Some(_), _) | (_, None, None) => {
                Poll::Ready(Ok(done.unwrap_or(0)))
            }
            (_, _, Some(i)) => {
                let mut set = self.waiting_set.borrow_mut();
                set.clear();
                set.extend_from_slice(&reqs[i..]);
                drop(set);
                self.blocked(call, Some(reqs[i]))
            }
        }
    }

    /// A blocking probe: looks, then waits for the next arrival to look again; a deadlock
    /// report names `awaited`.
    pub fn wait_probe(
        &self,
        pattern: &Pattern,
        take: bool,
        call: &'static str,
        awaited: Awaited,
    ) -> Poll<Result<Probed, Error>> {
        loop {
            let seen = self.arrivals.get();
            let found = self.with_endpoint(|ep| probe_now(ep, pattern, take));
            if let Some(found) = found {
                return Poll::Ready(Ok(found));
            }
            self.probing.set(Some(awaited));
            let polled = self.poll_until(call, None, |_| self.arrivals.get() > seen);
            if polled.is_ready() {
                self.trace_wait_ended();
            }
            match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
        }
    }

    /// Runs `f` on the endpoint after taking in what arrived, then sends what it produced.
    fn with_endpoint<R>(&self, f: impl FnOnce(&mut Endpoint<Payload>) -> R) -> R {
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        let out = f(&mut ep);
        self.flush(&mut ep);
        out
    }

    /// The wait of a request for the seam ([`WaitFor::Request`]): its completion, taken.
    fn wait_completion(
        &self,
        req: ReqId,
        call: &'static str,
    ) -> Poll<Result<Completion<Payload>, Error>> {
        let mut ep = self.endpoint.borrow_mut();
        self.progress(&mut ep);
        if let Some(completion) = ep.take_if_done(req) {
            return Poll::Ready(Ok(completion));
        }
        drop(ep);
        self.blocked(call, Some(req))
    }

    /// Spins for a declared compute of `d`. Real execution: the program's own code took the
    /// time. An explicit `compute` spins so that the same program means the same thing on every
    /// backend, until the run aborts.
    fn spin(&self, d: Duration) {
        let start = Instant::now();
        // The run's clock is a `u64` of nanoseconds since its start, as the simulator's is: a
        // compute ending past it fails here where the simulator's fails (`TimeOverflow`),
        // rather than spin for millennia (or, past `Instant`'s range, panic).
        let ends_in_range = u64::try_from(d.as_nanos())
            .ok()
            .and_then(|ns| self.now_ns().checked_add(ns))
            .is_some_and(|end| end < u64::MAX);
        let until = start.checked_add(d).filter(|_| ends_in_range);
        let Some(until) = until else {
            // The run ends, and this rank at its next yield.
            self.shared.fail(Error::InvalidArgument {
                what: format!(
                    "rank {}: compute({d:?}) lasts longer than the host's clock can count \
                     (2^64 ns, about 584 years, from the run's start)",
                    self.rank
                ),
            });
            return;
        };
        while Instant::now() < until && !self.shared.abort.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        if self.trace.is_some() || self.measure.is_some() {
            let from = start.duration_since(self.start).as_nanos() as u64;
            let to = self.now_ns();
            if let Some(trace) = &self.trace {
                trace.borrow_mut().span("compute", from, to);
            }
            if let Some(measure) = &self.measure {
                measure.borrow_mut().compute(from, to);
            }
        }
    }
}

impl RankRuntime for ThreadRank {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.shared.mailboxes.len() as u32
    }

    fn start(&self, call: Call) -> Result<Started, Error> {
        match call {
            Call::Send {
                call,
                mode,
                to,
                envelope,
                payload,
                blocking,
            } => {
                if blocking {
                    Ok(Started::Request(
                        match self.send(mode, to, envelope, payload)? {
                            Posted::Done(_) => None,
                            Posted::Waiting(req) => Some(req),
                        },
                    ))
                } else {
                    let req = self.isend(call, mode, to, envelope, payload)?;
                    Ok(Started::Request(Some(req)))
                }
            }
            Call::Recv {
                pattern,
                capacity,
                source_world,
                ..
            } => Ok(Started::Request(Some(self.irecv(
                pattern,
                capacity,
                source_world,
            )))),
            Call::NullRequest(_) => Ok(Started::Done),
            call => {
                let (answer, warning) = self.with_endpoint(|ep| endpoint::answer(ep, call));
                if let Some(warning) = warning {
                    self.discarded.borrow_mut().push(warning);
                }
                answer
            }
        }
    }

    fn poll_wait(&self, wait: WaitFor<'_>) -> Poll<Result<Waited, Error>> {
        match wait {
            WaitFor::Request { req, call } => {
                self.wait_completion(req, call).map_ok(Waited::Completion)
            }
            WaitFor::Requests { reqs, needs, call } => {
                self.wait_requests(reqs, needs, call).map_ok(Waited::Index)
            }
            WaitFor::Probe {
                pattern,
                take,
                call,
                awaited,
            } => self
                .wait_probe(pattern, take, call, awaited)
                .map_ok(Waited::Probed),
            WaitFor::BufferFree => {
                self.probing.set(None);
                let polled = self.poll_until(deadlock::BUFFER_DETACH, None, |ep| {
                    ep.buffered_messages() == 0
                });
                if polled.is_ready() {
                    self.trace_wait_ended();
                }
                polled.map_ok(|()| Waited::Done)
            }
        }
    }

    /// Waits for mail as the backend's own loop does (`wait_for_mail`: spins, yields or parks
    /// by the run's wait policy, until a packet arrives or the run aborts).
    fn block(&self) {
        wait_for_mail(self);
    }

    fn idle(&self, _call: &'static str) {
        std::thread::yield_now();
    }

    fn compute(&self, work: Work) {
        match work {
            Work::Time(d) => self.spin(d),
            // No machine model here: spin as long as the default model's 10 Gflop/s would take.
            Work::Flops(flops) => self.spin(Duration::from_nanos(flops / 10)),
            // The communication it stands for really happened.
            Work::Sync(_) => {}
        }
    }

    fn abort(&self, code: i32) {
        // The run's first error unless it has one: every rank stops at its next call, and
        // this one when it suspends (`block_on` ends a program that yields after the run
        // aborted).
        self.shared.fail(Error::Abort {
            rank: self.rank,
            code,
            time_ns: None,
        });
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

/// Wakes a rank's thread; `woken` tells `block_on` to poll again at once (a future that
/// yielded) rather than wait for a packet.
struct ThreadWaker {
    thread: std::thread::Thread,
    woken: AtomicBool,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Runs `fut` (a rank's program) to completion on this thread: poll; when pending, spin on the
/// mailbox, then park until a peer pushes a packet or the run aborts. A program that yields
/// (`compute`, a poll that found nothing) after the run aborted is dropped there and ends
/// with `Aborted`: one that polls or computes in a loop would otherwise never stop, since only
/// waits see the abort.
pub(crate) fn block_on<F: Future<Output = Result<(), Error>>>(
    rank: &ThreadRank,
    fut: F,
) -> F::Output {
    let fut = pin!(fut);
    // Chosen once per run: the loop of a run that neither traces nor measures has no timing
    // code at all.
    if rank.trace.is_none() && rank.measure.is_none() {
        drive::<false, F>(rank, fut)
    } else {
        drive::<true, F>(rank, fut)
    }
}

/// `block_on`'s loop; with `TRACED` (a trace or the report's figures asked for), each poll is
/// timed and what the rank waits in afterwards opens or ends a wait (`RankTrace::after_poll`,
/// `RankMeasure::after_poll`).
fn drive<const TRACED: bool, F: Future<Output = Result<(), Error>>>(
    rank: &ThreadRank,
    mut fut: Pin<&mut F>,
) -> F::Output {
    let state = Arc::new(ThreadWaker {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&state));
    let mut cx = Context::from_waker(&waker);
    loop {
        rank.waiting.set(None);
        let polled_at = if TRACED { rank.now_ns() } else { 0 };
        let polled = fut.as_mut().poll(&mut cx);
        if TRACED {
            let waiting = rank.waiting.get();
            let now = rank.now_ns();
            if let Some(trace) = &rank.trace {
                trace.borrow_mut().after_poll(polled_at, waiting, || now);
            }
            if let Some(measure) = &rank.measure {
                measure
                    .borrow_mut()
                    .after_poll(polled_at, waiting, now, |req| {
                        waiting.and_then(|(call, _)| rank.describe(call, req))
                    });
            }
        }
        if let Poll::Ready(out) = polled {
            return out;
        }
        // A future that woke itself (a yield) is polled again at once; the plain load first
        // keeps the locked swap off the common path.
        if state.woken.load(Ordering::Relaxed) && state.woken.swap(false, Ordering::AcqRel) {
            if let Some(aborted) = rank.aborted() {
                return Err(aborted);
            }
            continue;
        }
        if rank.waiting.get().is_none() {
            // Pending with no wait of mpsim's and no yield: on something this loop cannot
            // see (a timer, a channel of the program's own). Waiting for mail would never see
            // it end, nor could the watchdog tell it from a deadlock.
            return Err(foreign_wait(rank.rank));
        }
        wait_for_mail(rank);
    }
}

/// The error of a program that awaited a future mpsim does not drive, as the simulator says
/// it.
#[cold]
fn foreign_wait(rank: u32) -> Error {
    Error::Unsupported {
        what: format!(
            "rank {rank} awaited something the threads backend does not drive (only mpsim \
             calls may suspend a rank's program)"
        ),
    }
}

/// The first timed park of a rank that waits for mail. Parks only back up the wake-ups that
/// senders and the end of a run give (`Mailbox::notify`, `Mailbox::wake`), so each is longer
/// than the last, up to [`LAST_NAP`]: thousands of ranks waking every few milliseconds kept
/// two cores busy with nothing else.
pub(crate) const FIRST_NAP: Duration = Duration::from_millis(10);

/// The longest timed park ([`FIRST_NAP`]).
pub(crate) const LAST_NAP: Duration = Duration::from_secs(1);

/// The timed park after one of `nap` in which nothing came.
pub(crate) fn next_nap(nap: Duration) -> Duration {
    (nap * 2).min(LAST_NAP)
}

/// Waits until a packet is in a lane or the run aborts: spins, or yields, as the run's
/// [`WaitPolicy`] says, then parks. Out of line: it is the cold side of `block_on`, and
/// keeping it apart lets profiles separate waiting from work.
#[inline(never)]
fn wait_for_mail(rank: &ThreadRank) {
    let mailbox = rank.mailbox();
    let mut spins = 0;
    let mut yielding_since = None;
    let mut nap = FIRST_NAP;
    while !rank.has_mail() && !rank.shared.abort.load(Ordering::Acquire) {
        let go_on = match rank.shared.wait_policy {
            WaitPolicy::Spin if spins < SPINS_DEDICATED => {
                std::hint::spin_loop();
                true
            }
            WaitPolicy::Yield
                if yielding_since.get_or_insert_with(Instant::now).elapsed() < YIELD_BUDGET =>
            {
                std::thread::yield_now();
                true
            }
            WaitPolicy::Park if spins < YIELDS_CROWDED => {
                std::thread::yield_now();
                true
            }
            _ => false,
        };
        if go_on {
            spins += 1;
            continue;
        }
        rank.publish_wait();
        mailbox.set_activity(Activity::Parked);
        if rank.has_mail() || rank.shared.abort.load(Ordering::Acquire) {
            mailbox.set_activity(Activity::Running);
            break;
        }
        std::thread::park_timeout(nap);
        nap = next_nap(nap);
        mailbox.set_activity(Activity::Running);
    }
}

#[cfg(test)]
mod tests {
    use super::WaitPolicy;

    #[test]
    fn ranks_wait_by_spinning_then_yielding_then_parking_as_cores_get_crowded() {
        assert_eq!(WaitPolicy::for_run(1, 2), WaitPolicy::Spin);
        assert_eq!(WaitPolicy::for_run(2, 2), WaitPolicy::Spin);
        assert_eq!(WaitPolicy::for_run(3, 2), WaitPolicy::Yield);
        assert_eq!(WaitPolicy::for_run(4, 2), WaitPolicy::Yield);
        assert_eq!(WaitPolicy::for_run(5, 2), WaitPolicy::Park);
        assert_eq!(WaitPolicy::for_run(2, 1), WaitPolicy::Yield);
        assert_eq!(WaitPolicy::for_run(64, 2), WaitPolicy::Park);
    }
}
