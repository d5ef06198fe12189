//! [`SimRank`]: the [`RankRuntime`] a simulated rank's program calls. Every call acts on the
//! kernel at the rank's clock, which equals global virtual time whenever the program runs.
//!
//! `turn.rs`: the runtime's side of the run loop, one turn of a rank (its resume and one poll
//! of its program) and measured compute, which the turns time and the rank pays.

use std::cell::{RefCell, RefMut};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use mpsim_proto::deadlock::{self, Awaited};
use mpsim_proto::error::{Error, Site};
use mpsim_proto::matching::{Envelope, Pattern};
use mpsim_proto::p2p::{Completion, Endpoint, Outbox, Queued, ReqId, SendCall, SendMode, Status};
use mpsim_proto::runtime::endpoint::{self, first_done, probe_now};
use mpsim_proto::runtime::fast::{self, Failed, Posted, RestOfWait};
use mpsim_proto::runtime::{
    Call, Needs, Payload, Posting, Probed, RankRuntime, Started, Wait as WaitFor, Waited, Work,
};

pub(crate) mod turn;
pub(crate) use turn::Turn;

use crate::external::ExternalWake;
use crate::kernel::{Kernel, NOT_POLLING, RankState, Wait};
use crate::model::ComputeMode;

/// `e` as the program gets it, at virtual time `t` (out of line: the rare path of a wait).
#[cold]
#[inline(never)]
fn stamped(mut e: Error, t: u64) -> Error {
    e.stamp_time(t);
    e
}

/// Sends what an input that rarely has outputs made (`Kernel::flush`), out of line.
#[cold]
#[inline(never)]
fn flush_rare(
    k: &mut Kernel,
    rank: u32,
    t: u64,
    outputs: Option<Box<Outbox<Payload>>>,
    completed: bool,
) {
    k.flush(rank, t, outputs, completed);
}

/// The request of a nonblocking send ([`Endpoint::start_send`]), which always has one.
#[inline(always)]
fn held(req: Option<ReqId>) -> ReqId {
    req.expect("a nonblocking send has a request")
}

/// What [`ended`] ended: a wait's call, and when it began and ended.
struct Ended {
    call: &'static str,
    since: u64,
    end: u64,
}

/// The wait `r` was woken in, if any, returns now, at its clock: its blocked time, and the
/// hand-over of its core it then owes (X2); the caller records its trace span. For waits too
/// short to be among the longest (`waits::offer`): `Kernel::end_wait` is the whole of it.
/// Inlined: a blocking wait that blocked ends here, one per simulated message of a ring.
#[inline(always)]
fn ended(r: &mut RankState, handover: u64) -> Option<Ended> {
    let w = r.wait.take()?;
    let end = r.clock;
    r.stats.blocked_ns += end - w.since;
    if handover > 0 {
        r.overhead_ns = r.overhead_ns.saturating_add(handover);
    }
    Some(Ended {
        call: w.call,
        since: w.since,
        end,
    })
}

/// The error of a call on a rank whose run has ended ([`SimRank::ended`]), at the run's end.
#[cold]
#[inline(never)]
fn run_ended(k: &Kernel, rank: u32, call: &'static str) -> Error {
    let mut site = Site::new(rank, call);
    site.time_ns = Some(k.now);
    Error::RunEnded { site }
}

/// A call of `rank` made while the kernel polls the program whose state is at `k.polling`
/// (`SimRank`'s "A rank used by another"): unless no program is polled, it stops the run at
/// once with [`Error::ForeignRank`].
#[cold]
#[inline(never)]
fn off_turn(k: &mut Kernel, rank: u32, call: &'static str) {
    if k.polling == NOT_POLLING {
        return;
    }
    let running = k.base() + k.polling as u32;
    let mut site = Site::new(rank, call);
    site.time_ns = Some(k.now);
    let now = k.now;
    k.fail_now(Error::ForeignRank { site, running }, now);
}

/// The call that posts a request of kind `posting`, as errors name it when no better name is
/// at hand.
fn posting_call(posting: Posting) -> &'static str {
    match posting {
        Posting::Send => "isend",
        Posting::Recv => "irecv",
    }
}

/// X1: the CPU overhead of posting a request of kind `posting` under `k`'s model (0 unless
/// the model's `[cpu]` sets it).
#[inline]
fn posting_overhead(k: &Kernel, posting: Posting) -> u64 {
    let cpu = &k.model().cpu;
    let o = match posting {
        Posting::Send => cpu.send_overhead_ns,
        Posting::Recv => cpu.recv_overhead_ns,
    };
    cpu.shared_overhead_ns(k.total, o)
}

/// A simulated rank: the runtime its program calls.
pub struct SimRank {
    pub(crate) kernel: Rc<RefCell<Kernel>>,
    pub(crate) rank: u32,
    /// Where this rank's state is in its kernel's `ranks` (`Kernel::at`).
    pub(crate) idx: usize,
}

/// # A rank whose run has ended
///
/// When a run ends, its ranks' states go into the report (`Partition::run`) and the kernel
/// keeps none; only a `Comm` (or request) the program kept past its run, in a `thread_local`,
/// can still call here. Every call then finds no state at `idx`: every wait and blocking call
/// is [`Error::RunEnded`] (a locally complete send too), a nonblocking call starts on an
/// endpoint of its own that nothing reaches (`Kernel::lend_outbox`), `compute` does nothing,
/// and the time is the run's end. The checks are the bounds checks the state's indexing makes
/// anyway.
///
/// # A rank used by another
///
/// Every rank's program runs on the one thread of its partition, so a `Comm` or request kept
/// where other ranks' programs reach it (a `thread_local` or `static` holding the world
/// communicator, as MPI programs keep theirs) is shared by all of them: rank 0 would send as
/// rank 2, or read rank 2's clock. Every call checks that its rank is the one whose program
/// the kernel polls (`Kernel::polling`; none is while the run sets up or after it has ended):
/// one comparison, the rest out of line. A call that is not stops the run at once, with
/// [`Error::ForeignRank`] naming it, before any other event: what the call still does (as the
/// other rank) is never seen by another rank's program, only by the rest of the poll that made
/// it, whose rank the run reports as stopped.
impl SimRank {
    /// Whether this rank's run has ended (see above).
    #[inline(always)]
    fn ended(&self, k: &Kernel) -> bool {
        self.idx >= k.ranks.len()
    }

    /// Stops the run if `call` comes from another rank's program (see above).
    #[inline(always)]
    fn check_turn(&self, k: &mut Kernel, call: &'static str) {
        if k.polling != self.idx {
            off_turn(k, self.rank, call);
        }
    }

    /// Every wait: ready when `done` holds for this rank's state; otherwise record what it
    /// waits for (`call`, `req`; woken by any arrival when `on_arrival`), keeping the time it
    /// first blocked, and suspend it.
    fn poll_until(
        &self,
        call: &'static str,
        req: Option<ReqId>,
        on_arrival: bool,
        done: impl FnOnce(&RankState) -> bool,
    ) -> Poll<Result<(), Error>> {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let Some(r) = k.ranks.get_mut(self.idx) else {
            return Poll::Ready(Err(run_ended(&k, self.rank, call)));
        };
        if done(r) {
            if let Some(w) = r.wait
                && !self.wait_returns(&mut k, w)
            {
                return Poll::Pending;
            }
            return Poll::Ready(Ok(()));
        }
        self.suspend(&mut k, call, req, on_arrival, false);
        Poll::Pending
    }

    /// A wait that is not satisfied: the rest of [`SimRank::poll_until`]. Inlined: every
    /// blocking receive that waits comes here once.
    ///
    /// A rank woken in this wait (by the completion of another of its requests, a message a
    /// probe does not want, ...) blocks on as it was: its clock goes back to the time it
    /// blocked, which the wait keeps (S1: only a returning wait moves a clock; S15: the
    /// deadlock report's "blocked since"). The wait may now name another request (`wait_all`
    /// on its next incomplete one).
    #[inline(always)]
    fn suspend(
        &self,
        k: &mut Kernel,
        call: &'static str,
        req: Option<ReqId>,
        on_arrival: bool,
        set: bool,
    ) {
        let r = &mut k.ranks[self.idx];
        if r.overhead_ns != 0 {
            self.settle_first(k);
            return;
        }
        let since = match r.wait {
            Some(w) => {
                r.clock = w.since;
                w.since
            }
            None => r.clock,
        };
        r.wait = Some(Wait {
            since,
            call,
            req,
            on_arrival,
            set,
        });
    }

    /// The wait `w` this rank was woken in returns (its request is complete, still held):
    /// it ends at the rank's clock, the time of its wake (`Kernel::end_wait`). False when the
    /// rank owes measured compute of the run before it blocked: that comes first (as before
    /// any action, [`turn::pay_owed`]), the rank resumes after it, and the wait's poll is then
    /// answered (its request stays complete meanwhile).
    #[inline(always)]
    fn wait_returns(&self, k: &mut Kernel, w: Wait) -> bool {
        k.end_wait(self.idx, w);
        if k.ranks[self.idx].debt_ns == 0 {
            return true;
        }
        turn::pay_owed(k, self.idx, self.rank);
        false
    }

    /// The answer to a wait on `req` of a rank woken in it, when its end must look at the
    /// request before it is finished: a wait long enough to be among the longest (the list
    /// names its request, `waits::offer`) or measured compute owed (`wait_returns`). Out of
    /// line: rare once the list of longest waits is full, and under modeled compute. True: the
    /// wait's answer is pending (the rank resumes after compute owed); false: go on as for any
    /// wait (the request is not complete, or the wait has ended).
    #[cold]
    #[inline(never)]
    fn woken_wait_first(&self, k: &mut Kernel, req: ReqId) -> bool {
        let r = &k.ranks[self.idx];
        let Some(w) = r.wait.filter(|_| r.endpoint.is_done(req)) else {
            return false;
        };
        !self.wait_returns(k, w)
    }

    /// X1: a wait of a rank that still owes overhead: that is CPU work before it can block, so
    /// it is put on the clock and the rank resumes after it, to wait then. Out of line, not
    /// cold: only nonblocking calls and a shared core's hand-over (X2) make overhead, so the
    /// blocking calls' waits skip it, but programs of nonblocking calls come here often.
    #[inline(never)]
    fn settle_first(&self, k: &mut Kernel) {
        if let Some(at) = k.settle_overhead(self.rank) {
            k.schedule_resume(self.rank, at);
        }
    }

    /// The kernel, borrowed for a call of this rank's program, and the time the call acts at
    /// (the run's end once it has ended).
    #[inline]
    fn begin_call(&self, call: &'static str) -> (RefMut<'_, Kernel>, u64) {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let Some(r) = k.ranks.get(self.idx) else {
            let end = k.now;
            return (k, end);
        };
        // A wait that found the rank owing overhead (X1) put it on the clock and scheduled the
        // resume (`settle_first`); the same poll may still look at its requests, from there.
        debug_assert!(
            k.closed
                || k.stop.first.is_some()
                || r.clock == k.now
                || (r.resume_scheduled && r.clock > k.now),
            "a rank runs only at the global time, or at the resume it has just scheduled"
        );
        // X1: a rank that owes overhead acts that much later.
        let t = r.clock.saturating_add(r.overhead_ns);
        (k, t)
    }

    /// [`SimRank::begin_call`] of a nonblocking call that posts a request of kind `posting`,
    /// whose overhead (X1) is charged first: the call acts that much later.
    #[inline]
    fn begin_posting(&self, posting: Posting, call: &'static str) -> (RefMut<'_, Kernel>, u64) {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let o = posting_overhead(&k, posting);
        let Some(r) = k.ranks.get_mut(self.idx) else {
            let end = k.now;
            return (k, end);
        };
        r.overhead_ns = r.overhead_ns.saturating_add(o);
        let t = r.clock.saturating_add(r.overhead_ns);
        (k, t)
    }

    /// Runs `f` on this rank's endpoint at the time of the call and sends what it produced
    /// (every input of the program; a generic, so that a call made with a known function
    /// inlines it).
    #[inline]
    fn on_endpoint<R>(&self, call: &'static str, f: impl FnOnce(&mut Endpoint<Payload>) -> R) -> R {
        self.on_endpoint_at(self.begin_call(call), f)
    }

    /// [`SimRank::on_endpoint`] with the kernel borrowed and the call's time found already
    /// (`begin_call`, `begin_posting`).
    #[inline(always)]
    fn on_endpoint_at<R>(
        &self,
        (mut k, t): (RefMut<'_, Kernel>, u64),
        f: impl FnOnce(&mut Endpoint<Payload>) -> R,
    ) -> R {
        let ep = k.lend_outbox(self.rank);
        ep.set_now(t);
        let out = f(ep);
        let completed = ep.take_completed();
        let outputs = ep.take_outputs();
        // Always: the flush also takes the lent outbox back.
        k.flush(self.rank, t, outputs, completed);
        out
    }

    /// Posts a receive with `post` at time `t` straight to this rank's endpoint when no message
    /// waits there (`Endpoint::has_unexpected`): it cannot match at once, so it makes no
    /// outputs, and needs no outbox's loan and flush, as most receives do. `None` (nothing
    /// done) when a message waits, or when the rank's run has ended: the caller then posts
    /// through the outbox.
    #[inline(always)]
    fn post_unmatched<R>(
        &self,
        k: &mut Kernel,
        t: u64,
        post: impl FnOnce(&mut Endpoint<Payload>) -> R,
    ) -> Option<R> {
        let r = k.ranks.get_mut(self.idx)?;
        if r.endpoint.has_unexpected() {
            return None;
        }
        let ep = &mut r.endpoint;
        ep.set_now(t);
        let posted = post(ep);
        debug_assert!(
            !ep.has_output(),
            "a receive that matched nothing made outputs"
        );
        Some(posted)
    }

    /// A blocking receive on an endpoint with messages waiting: it may match one at once and
    /// make outputs, so it goes through the outbox (`on_endpoint`). Out of line.
    #[inline(never)]
    fn start_recv_matching(
        &self,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
    ) -> Result<Posted, Error> {
        self.on_endpoint("recv", |ep| fast::recv_into(ep, pattern, buf, source_world))
    }

    /// A `compute(d)` longer than virtual time's whole range: the run stops with
    /// `TimeOverflow` naming `d` as the program wrote it (as nanoseconds it would read 2^64 - 1).
    #[cold]
    #[inline(never)]
    fn compute_past_time(&self, d: Duration) {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, "compute");
        if self.ended(&k) {
            return;
        }
        let from = k.ranks[self.idx].clock;
        k.time_overflow(
            self.rank,
            from,
            format!("the end of its compute of {d:?} would come"),
        );
    }

    /// Advances this rank's clock by `d` spent as `spent` says, and yields until the rest of
    /// the world catches up.
    fn advance(&self, d: u64, spent: Spent) {
        let mut k = self.kernel.borrow_mut();
        let name = match spent {
            Spent::Compute => "compute",
            Spent::Poll => "poll",
            Spent::Sync => "bsp_sync",
        };
        self.check_turn(&mut k, name);
        if self.ended(&k) {
            return;
        }
        k.settle_overhead(self.rank);
        let r = &mut k.ranks[self.idx];
        let from = r.clock;
        r.clock = r.clock.saturating_add(d);
        let spent = match spent {
            Spent::Compute => &mut r.stats.compute_ns,
            Spent::Poll => &mut r.stats.poll_ns,
            Spent::Sync => &mut r.stats.blocked_ns,
        };
        *spent = spent.saturating_add(d);
        let at = r.clock;
        if at == u64::MAX {
            k.time_overflow(
                self.rank,
                from,
                format!("the end of its {name} of {d} ns would come"),
            );
            return;
        }
        k.record_span(self.rank, name, from, at);
        k.schedule_resume(self.rank, at);
    }
}

/// # Fast paths
///
/// The hottest calls of a program (a blocking send or receive and its wait, a nonblocking
/// send or receive, the waits on several and blocking probes), as plain methods that `mpsim`
/// calls by this type (`mpsim_proto::runtime::fast`): each does in one pass through the kernel
/// what the seam ([`RankRuntime`]) does in two, with no closure and no trait object between
/// the program and the endpoint. Their errors are not stamped with a time (the caller does),
/// except a request's own (S11: the time it completed).
impl SimRank {
    /// Starts a blocking send ([`Endpoint::start_send`]): its message goes to the kernel as it
    /// is made, not through the endpoint's output queue (the endpoint queues it behind packets
    /// already waiting, so channels stay FIFO). It is sent first, as it would be from the queue.
    ///
    /// No outbox is lent: between inputs a simulated endpoint holds none (every input's outputs
    /// are taken), so `start_send` finds no packet waiting and hands its message over, and the
    /// only other output a send can make is the `Fatal` event of a buffered send that does not
    /// fit, rare enough to allocate the outbox it goes into. The flush then happens only when
    /// there is one: the common send skips the loan, the take-back and the emptiness checks.
    pub fn send(
        &self,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<Posted, Error> {
        let (mut k, t) = self.begin_call(mode.call());
        let Some(r) = k.ranks.get_mut(self.idx) else {
            return Err(self.send_after_run(&k, mode, envelope));
        };
        let ep = &mut r.endpoint;
        ep.set_now(t);
        // Held here, not sent from the closure: the endpoint is borrowed from the kernel.
        let mut message = None;
        let send = SendCall {
            call: mode.call(),
            mode,
            to,
            envelope,
            payload,
            blocking: true,
        };
        let started = ep.start_send(send, |tx| message = Some(tx));
        let completed = ep.take_completed();
        let outputs = ep.take_outputs();
        if let Some(tx) = message {
            k.transmit(self.rank, t, tx);
        }
        if outputs.is_some() || completed {
            flush_rare(&mut k, self.rank, t, outputs, completed);
        }
        fast::sent(started)
    }

    /// The error of a blocking send on a rank whose run has ended.
    #[cold]
    #[inline(never)]
    fn send_after_run(&self, k: &Kernel, mode: SendMode, envelope: Envelope) -> Error {
        let call = if mode == SendMode::Synchronous {
            "ssend"
        } else {
            "send"
        };
        let mut e = run_ended(k, self.rank, call);
        if let Some(site) = e.site_mut() {
            site.context = Some(envelope.context);
            site.tag = Some(envelope.tag.into());
        }
        e
    }

    /// Starts a blocking receive into `buf`: posted straight to the endpoint, and with no
    /// message waiting without the outbox (`post_unmatched`); a message that matched at once
    /// is finished into `buf`.
    pub fn recv_into(
        &self,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
    ) -> Result<Posted, Error> {
        let (mut k, t) = self.begin_call("recv");
        if let Some(started) = self.post_unmatched(&mut k, t, |ep| {
            fast::recv_into(ep, pattern, buf, source_world)
        }) {
            return started;
        }
        drop(k);
        self.start_recv_matching(pattern, buf, source_world)
    }

    /// A nonblocking send for the program's call `call`: its overhead (X1) is charged and it
    /// starts in one call.
    pub fn isend(
        &self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<ReqId, Error> {
        let (mut k, t) = self.begin_posting(Posting::Send, call);
        let send = |payload| SendCall {
            call,
            mode,
            to,
            envelope,
            payload,
            blocking: false,
        };
        let Some(r) = k.ranks.get_mut(self.idx) else {
            return self
                .on_endpoint_at((k, t), |ep| ep.start_send(send(payload), Queued).map(held));
        };
        // As `send`: the message goes to the kernel as it is made. (The lines below repeat its
        // own: a helper shared by both, even inlined, made the blocking send longer, ring +14
        // instructions per message.) An eager send completes at once, and its completion wakes
        // the rank only if it waits (`Kernel::wake`): a rank that runs without a wait skips
        // the flush (stencil2d: 34 instructions per message).
        let waiting = r.wait.is_some();
        let ep = &mut r.endpoint;
        ep.set_now(t);
        let mut message = None;
        let started = ep
            .start_send(send(payload), |tx| message = Some(tx))
            .map(held);
        let completed = ep.take_completed();
        let outputs = ep.take_outputs();
        if let Some(tx) = message {
            k.transmit(self.rank, t, tx);
        }
        if outputs.is_some() || (completed && waiting) {
            flush_rare(&mut k, self.rank, t, outputs, completed);
        }
        started
    }

    /// A nonblocking receive: its overhead (X1) charged in the same call, it posts as a
    /// blocking one does (`post_unmatched`).
    pub fn irecv(&self, pattern: Pattern, capacity: usize, source_world: Option<u32>) -> ReqId {
        let (mut k, t) = self.begin_posting(Posting::Recv, "irecv");
        if let Some(req) = self.post_unmatched(&mut k, t, |ep| {
            ep.irecv_from(pattern, capacity, source_world)
        }) {
            return req;
        }
        self.on_endpoint_at((k, t), |ep| ep.irecv_from(pattern, capacity, source_world))
    }

    /// The wait of a blocking call or of `wait` on `req`: ready with the request finished as
    /// the program gets it (a receive's data copied into `buf` while the kernel is borrowed
    /// anyway, then its status). Always inlined into the program's future: its answer then goes
    /// where the program uses it, not through memory.
    #[inline(always)]
    pub fn wait_into(
        &self,
        req: ReqId,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<Result<Status, Failed>> {
        self.wait_on(req, call, buf, None)
    }

    /// One request of a wait on several in order (`wait_all`, `sendrecv`): as `wait_into` on
    /// `req`, which is followed by the requests `rest` appends, or is the wait's last active
    /// request (`None`). Not inlined, as `wait_into` is: stencil2d +0.4%.
    pub fn wait_in(
        &self,
        req: ReqId,
        rest: Option<RestOfWait<'_>>,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<Result<Status, Failed>> {
        self.wait_on(req, call, buf, Some(rest))
    }

    /// The body of `wait_into` (`in_order`: `None`) and of `wait_in` (`Some(rest)`).
    ///
    /// A rank woken in this wait: the wait returns if the request is complete (S1), but in a
    /// wait on several in order only at its last request (`wait_all` returns with its last).
    /// Its end looks at the request first when the wait is long enough to be listed, or when
    /// measured compute is owed (`woken_wait_first`). Pending, the rank waits on `req`; asked
    /// for a report (`ReportData::asking`), a wait on several records `req` and the `rest`
    /// (`Kernel::wait_on_set`).
    #[inline(always)]
    fn wait_on(
        &self,
        req: ReqId,
        call: &'static str,
        buf: Option<&mut [u8]>,
        in_order: Option<Option<RestOfWait<'_>>>,
    ) -> Poll<Result<Status, Failed>> {
        let mut guard = self.kernel.borrow_mut();
        self.check_turn(&mut guard, call);
        let k = &mut *guard;
        let floor = k.report.top_waits.floor();
        let last = !matches!(in_order, Some(Some(_)));
        let Some(r) = k.ranks.get_mut(self.idx) else {
            return Poll::Ready(Err(Failed::Wait(run_ended(k, self.rank, call))));
        };
        let r = if last
            && r.wait
                .as_ref()
                .is_some_and(|w| r.debt_ns != 0 || r.clock - w.since > floor)
        {
            if self.woken_wait_first(k, req) {
                return Poll::Pending;
            }
            &mut k.ranks[self.idx]
        } else {
            r
        };
        let Some(finished) = r.endpoint.finish_if_done(req, buf) else {
            let Some(rest) = in_order else {
                self.suspend(k, call, Some(req), false, false);
                return Poll::Pending;
            };
            if k.report.asking {
                let mut ids = vec![req];
                if let Some(rest) = rest {
                    rest(&mut ids);
                }
                k.wait_on_set(self.idx, ids.into_iter());
                return Poll::Pending;
            }
            self.suspend(k, call, Some(req), false, true);
            return Poll::Pending;
        };
        if last && let Some(w) = ended(r, k.cores.handover_ns) {
            k.record_span(self.rank, w.call, w.since, w.end);
        }
        Poll::Ready(self.finished(k, finished))
    }

    /// A request finished: its status, or its own error (a `Truncate`), which has the time the
    /// receive completed (S11), stamped as `now_ns` reads the time (X1: the overhead owed is
    /// time spent).
    #[inline(always)]
    fn finished(&self, k: &Kernel, finished: Result<Status, Box<Error>>) -> Result<Status, Failed> {
        finished.map_err(|e| {
            let r = &k.ranks[self.idx];
            let t = r.clock.saturating_add(r.overhead_ns);
            Failed::Request(stamped(*e, t))
        })
    }

    /// Whether `req` is complete, looked at without acting: no time passes, no input is taken,
    /// no wait is touched, and it may be asked at any moment, also while the kernel polls a
    /// stuck run for its report. The API layer's progress of nonblocking collectives
    /// (`mpsim::progress`) asks it to learn which collectives can move on. False once the run
    /// has ended.
    pub fn is_done_now(&self, req: ReqId) -> bool {
        let k = self.kernel.borrow();
        k.ranks
            .get(self.idx)
            .is_some_and(|r| r.endpoint.is_done(req))
    }

    /// All of `reqs`, or any one, complete: the wait ends (S1). Otherwise the rank waits on the
    /// first incomplete one (its wait-for edge); a wake by a completion that does not satisfy
    /// `needs` leaves it blocked as it was. Asked for a report (`ReportData::asking`), it
    /// records every incomplete one (`Kernel::wait_on_set`).
    pub fn wait_requests(
        &self,
        reqs: &[ReqId],
        needs: Needs,
        call: &'static str,
    ) -> Poll<Result<usize, Error>> {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let Some(r) = k.ranks.get(self.idx) else {
            return Poll::Ready(Err(run_ended(&k, self.rank, call)));
        };
        // Woken in this wait: those before the request it blocked on were complete then, and
        // still are (nothing finishes a request while its wait blocks).
        let start = match (needs, r.wait) {
            (Needs::All, Some(Wait { req: Some(q), .. })) => {
                reqs.iter().position(|&x| x == q).unwrap_or(0)
            }
            _ => 0,
        };
        let (done, incomplete) = match needs {
            // Those complete at the front need not be looked at again (nor the rest, until
            // they are).
            Needs::All => (
                Some(0),
                reqs[start..]
                    .iter()
                    .position(|&q| !r.endpoint.is_done(q))
                    .map(|i| i + start),
            ),
            Needs::Any => first_done(&r.endpoint, reqs),
        };
        let first_incomplete = match (needs, done, incomplete) {
            (Needs::All, _, None) | (Needs::Any, Some(_), _) | (_, None, None) => {
                if let Some(w) = r.wait
                    && !self.wait_returns(&mut k, w)
                {
                    return Poll::Pending;
                }
                return Poll::Ready(Ok(done.unwrap_or(0)));
            }
            (_, _, Some(i)) => i,
        };
        if k.report.asking {
            k.wait_on_set(self.idx, reqs[first_incomplete..].iter().copied());
            return Poll::Pending;
        }
        self.suspend(&mut k, call, Some(reqs[first_incomplete]), false, true);
        Poll::Pending
    }

    /// A blocking probe: looks at the endpoint at the call's time; a message there ends the
    /// wait (S1), and a matched probe takes it then; otherwise the rank waits for the next
    /// arrival, and a message it does not want leaves it blocked as it was.
    pub fn wait_probe(
        &self,
        pattern: &Pattern,
        take: bool,
        call: &'static str,
        awaited: Awaited,
    ) -> Poll<Result<Probed, Error>> {
        if self.kernel.borrow().report.asking {
            // What it waits for is known (`Kernel::wait_on_probe`); nothing may change.
            return Poll::Pending;
        }
        let (mut k, t) = self.begin_call(call);
        let Some(r) = k.ranks.get_mut(self.idx) else {
            return Poll::Ready(Err(run_ended(&k, self.rank, call)));
        };
        r.endpoint.set_now(t);
        let seen = r.endpoint.iprobe(pattern).is_some();
        let r = &k.ranks[self.idx];
        if !seen {
            self.suspend(&mut k, call, None, true, false);
            k.wait_on_probe(self.idx, awaited);
            return Poll::Pending;
        }
        if let Some(w) = r.wait
            && !self.wait_returns(&mut k, w)
        {
            return Poll::Pending;
        }
        drop(k);
        // A matched probe answers the sender (an output): through the outbox.
        let found = self.on_endpoint(call, |ep| probe_now(ep, pattern, take));
        Poll::Ready(Ok(found.expect("the message a probe saw is still there")))
    }

    /// The wait of a request for the seam ([`Wait::Request`]): ready with its completion,
    /// taken (the request is then finished) in the same pass through the kernel.
    fn wait_completion(
        &self,
        req: ReqId,
        call: &'static str,
    ) -> Poll<Result<Completion<Payload>, Error>> {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let Some(r) = k.ranks.get(self.idx) else {
            return Poll::Ready(Err(run_ended(&k, self.rank, call)));
        };
        if r.wait.is_some() && self.woken_wait_first(&mut k, req) {
            return Poll::Pending;
        }
        let r = &mut k.ranks[self.idx];
        let woken = r.wait;
        if let Some(completion) = r.endpoint.take_if_done(req) {
            if let Some(w) = woken {
                k.end_wait(self.idx, w);
            }
            return Poll::Ready(Ok(completion));
        }
        self.suspend(&mut k, call, Some(req), false, false);
        Poll::Pending
    }

    /// Charges the overhead of posting a request of kind `posting` (X1) that posts nothing.
    fn request_overhead(&self, posting: Posting) {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, posting_call(posting));
        let o = posting_overhead(&k, posting);
        if let Some(r) = k.ranks.get_mut(self.idx) {
            r.overhead_ns = r.overhead_ns.saturating_add(o);
        }
    }

    /// A call that acts on the endpoint alone (`endpoint::answer`). Also notes, for a livelock
    /// report, the time of the endpoint's last input before the first such call since the
    /// rank's last poll (`Livelock::input_before`): every poll (a `test`, an `iprobe`) comes
    /// through here.
    fn on_endpoint_alone(&self, call: Call) -> Result<Started, Error> {
        {
            let mut k = self.kernel.borrow_mut();
            if k.livelock.input_before.0 != self.idx
                && let Some(r) = k.ranks.get(self.idx)
            {
                k.livelock.input_before = (self.idx, r.endpoint.now());
            }
        }
        let (answer, warning) = self.on_endpoint("a call", |ep| endpoint::answer(ep, call));
        if let Some(warning) = warning {
            let mut k = self.kernel.borrow_mut();
            // Programs dropped when the run ends let go of their requests: the run has
            // reported.
            if !k.closed {
                k.report
                    .discarded
                    .entry(self.rank)
                    .or_default()
                    .push(warning);
            }
        }
        answer
    }

    /// A poll that found nothing: `poll_cost` on the clock (S2), noted for a livelock report.
    fn idle_poll(&self, call: &'static str) {
        let (cost, made) = {
            let k = self.kernel.borrow();
            let made = k.ranks.get(self.idx).map(|r| r.made);
            (k.model().poll_cost_ns, made)
        };
        self.advance(cost, Spent::Poll);
        if let Some(made) = made {
            self.kernel.borrow_mut().note_poll(self.rank, call, made);
        }
    }
}

impl RankRuntime for SimRank {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.kernel.borrow().total
    }

    fn start(&self, call: Call) -> Result<Started, Error> {
        let request = |posted: Result<Posted, Error>| match posted? {
            Posted::Done(_) => Ok(Started::Request(None)),
            Posted::Waiting(req) => Ok(Started::Request(Some(req))),
        };
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
                    request(self.send(mode, to, envelope, payload))
                } else {
                    let req = self.isend(call, mode, to, envelope, payload)?;
                    Ok(Started::Request(Some(req)))
                }
            }
            Call::Recv {
                pattern,
                capacity,
                source_world,
                blocking,
            } => {
                let req = if blocking {
                    self.on_endpoint("recv", |ep| ep.irecv_from(pattern, capacity, source_world))
                } else {
                    self.irecv(pattern, capacity, source_world)
                };
                Ok(Started::Request(Some(req)))
            }
            Call::NullRequest(posting) => {
                self.request_overhead(posting);
                Ok(Started::Done)
            }
            call => self.on_endpoint_alone(call),
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
            WaitFor::BufferFree => self
                .poll_until(deadlock::BUFFER_DETACH, None, false, |r| {
                    r.endpoint.buffered_messages() == 0
                })
                .map_ok(|()| Waited::Done),
        }
    }

    /// Never called by the kernel, which resumes a simulated rank at the virtual time its wait
    /// ends: a loop that drives one rank outside it (`mpsim::rank::run_one`) cannot run a
    /// simulated rank, whose program then panics here, naming it (the run reports the panic as
    /// the rank's `Aborted`).
    fn block(&self) {
        panic!(
            "rank {}: a simulated rank is run by the simulator's kernel, not by a loop of its own \
             (mpsim::rank::run_one)",
            self.rank
        );
    }

    fn idle(&self, call: &'static str) {
        self.idle_poll(call);
    }

    fn compute(&self, work: Work) {
        if let Work::Sync(d) = work {
            let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            return self.advance(ns, Spent::Sync);
        }
        let (mode, ns) = {
            let k = self.kernel.borrow();
            let mode = k.model().compute;
            let ns = match work {
                Work::Time(d) => match u64::try_from(d.as_nanos()) {
                    Ok(ns) => ns,
                    Err(_) if mode == ComputeMode::Ignored => 0,
                    Err(_) => {
                        drop(k);
                        return self.compute_past_time(d);
                    }
                },
                Work::Flops(flops) => k.model().flops_ns(flops),
                Work::Sync(_) => 0,
            };
            (mode, ns)
        };
        let ns = if mode == ComputeMode::Ignored { 0 } else { ns };
        self.advance(ns, Spent::Compute);
    }

    fn abort(&self, code: i32) {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, "abort");
        // A `Comm` kept past its run: there is no run left to stop.
        let Some(r) = k.ranks.get(self.idx) else {
            return;
        };
        // X1: the overhead the rank owes is time it has spent (as `now_ns`).
        let t = r.clock.saturating_add(r.overhead_ns);
        // Stopped as by any error (S16 as amended by D2, `docs/extensions.md`): the other
        // ranks run to one lookahead past it, so where the run stops does not depend on how
        // the ranks were split. The caller suspends with no wait and no resume, which the run
        // loop takes for a foreign await: that error comes second, and the first one stands.
        k.fail(
            Error::Abort {
                rank: self.rank,
                code,
                time_ns: Some(t),
            },
            t,
        );
    }

    fn now_ns(&self) -> u64 {
        // X1: the overhead the rank owes is time it has spent.
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, "now_ns");
        k.ranks
            .get(self.idx)
            .map_or(k.now, |r| r.clock.saturating_add(r.overhead_ns))
    }

    fn virtual_time(&self) -> Option<u64> {
        Some(self.now_ns())
    }
}

/// # External waits
///
/// A rank that waits for something outside the simulation (`external`): its program takes a
/// handle ([`SimRank::external_wake`]), hands it to what will fire it, and waits
/// ([`SimRank::wait_external`]). Not on the seam: only what drives a rank from outside (the C
/// interface's proxy rank) needs it.
impl SimRank {
    /// A handle that wakes this rank from its external wait ([`ExternalWake::fire`]).
    pub fn external_wake(&self) -> ExternalWake {
        ExternalWake {
            kernel: Rc::clone(&self.kernel),
            rank: self.rank,
            idx: self.idx,
        }
    }

    /// Waits until this rank's external event, fired with [`ExternalWake::fire`]; returns the
    /// virtual time the wait returned at. `call` names the wait in reports and the trace.
    ///
    /// # Errors
    ///
    /// [`Error::RunEnded`] when the rank's run has ended.
    pub async fn wait_external(&self, call: &'static str) -> Result<u64, Error> {
        std::future::poll_fn(|_| self.poll_external(call)).await
    }

    /// One poll of [`SimRank::wait_external`]: ready once the event was fired for a time at
    /// or before the rank's clock, which a rank woken for it has reached; otherwise the rank
    /// waits (for the time it was fired for, if it was).
    pub fn poll_external(&self, call: &'static str) -> Poll<Result<u64, Error>> {
        let mut k = self.kernel.borrow_mut();
        self.check_turn(&mut k, call);
        let Some(r) = k.ranks.get(self.idx) else {
            return Poll::Ready(Err(run_ended(&k, self.rank, call)));
        };
        let (clock, woken) = (r.clock, r.wait);
        let fired = k.external.by_rank.get(&self.idx).and_then(|e| e.fired);
        if let Some(t) = fired
            && t <= clock
        {
            if let Some(w) = woken
                && !self.wait_returns(&mut k, w)
            {
                return Poll::Pending;
            }
            k.external.by_rank.remove(&self.idx);
            return Poll::Ready(Ok(k.ranks[self.idx].clock));
        }
        self.suspend(&mut k, call, None, false, false);
        if k.ranks[self.idx].wait.is_none() {
            // X1: overhead owed first; the rank resumes after it and waits then.
            return Poll::Pending;
        }
        k.external.by_rank.entry(self.idx).or_default().waiting = true;
        if let Some(t) = fired {
            k.schedule_resume(self.rank, t);
        }
        Poll::Pending
    }
}

/// What a clock advance of [`SimRank::advance`] is spent on: the report's column and the
/// trace's span name.
#[derive(Clone, Copy)]
enum Spent {
    /// Declared compute (`compute`).
    Compute,
    /// A poll that found nothing (`poll`).
    Poll,
    /// A BSP superstep's communication under the cost model (`bsp_sync`, blocked time).
    Sync,
}
