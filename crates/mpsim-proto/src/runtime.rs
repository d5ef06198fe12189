//! [`RankRuntime`]: what a backend gives one rank's program — the seam between the public API
//! (`mpsim`) and the backends (`mpsim-threads`, `mpsim-sim`).
//!
//! The API layer turns every call into endpoint inputs through [`RankRuntime::with_endpoint`] and
//! waits through [`RankRuntime::poll_done`]; a backend decides how packets travel (shared memory,
//! simulated time) and how a waiting rank is parked and woken. Only `std::task` here: no threads,
//! no clocks.

use std::task::{Context, Poll};
use std::time::Duration;

use crate::deadlock::Awaited;
use crate::error::Error;
use crate::matching::{Envelope, Pattern};
use crate::p2p::{Completion, Endpoint, MessageId, RecvStart, ReqId, SendMode, Status};

/// The bytes a message carries between endpoints (the sender's copy). Up to
/// [`PAYLOAD_INLINE`] bytes live inline, so small messages allocate nothing.
pub type Payload = smallvec::SmallVec<[u8; PAYLOAD_INLINE]>;

/// The longest message a [`Payload`] holds without a heap allocation.
pub const PAYLOAD_INLINE: usize = 16;

/// A blocking call's start or wait as the runtime answers it ([`RankRuntime::start_recv_into`],
/// [`RankRuntime::start_blocking_send`], [`RankRuntime::poll_complete_into`]), in two words:
/// pending (after a start: on the request it posted), ready with the request's status, or
/// failed (the error is handed out beside it; a wait says whether it is the request's own,
/// [`WaitPoll::is_request_error`]). Every blocking call crosses the runtime's `dyn`
/// boundary. As a `Poll<Result<Status, Error>>` the answer went through memory, written field
/// by field and copied on with wider loads, which cannot take their data from the narrower
/// stores just made and wait for them to reach the cache (a store-to-load interlock, `perf stat
/// -e ls_bad_status2.stli_other`) on every poll; two words come back in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitPoll {
    /// A ready status's source (low half) and tag (high half).
    ids: u64,
    /// A ready status's byte count, below the state flags.
    bytes: u64,
}

impl WaitPoll {
    const PENDING_BIT: u64 = 1 << 63;
    const FAILED_BIT: u64 = 1 << 62;
    const CANCELLED_BIT: u64 = 1 << 61;
    /// Beside `FAILED_BIT`: the error is the request's own (it is finished, as a `Truncate`),
    /// not the wait's (a deadlock, the run's end). A failed poll carries no byte count.
    const OWN_ERROR_BIT: u64 = 1 << 60;
    /// Byte counts up to 2^61 - 1 fit below the flags (a message is one allocation: far less).
    const BYTES: u64 = Self::CANCELLED_BIT - 1;

    /// Not complete yet.
    pub const PENDING: WaitPoll = WaitPoll {
        ids: 0,
        bytes: Self::PENDING_BIT,
    };

    /// Failed with the error handed out beside it.
    pub const FAILED: WaitPoll = WaitPoll {
        ids: 0,
        bytes: Self::FAILED_BIT,
    };

    /// Complete with `status`.
    #[inline]
    pub fn ready(status: Status) -> Self {
        let bytes = status.bytes as u64;
        assert!(bytes <= Self::BYTES, "a message of {bytes} bytes");
        WaitPoll {
            ids: u64::from(status.source) | (u64::from(status.tag as u32) << 32),
            bytes: bytes
                | if status.cancelled {
                    Self::CANCELLED_BIT
                } else {
                    0
                },
        }
    }

    /// Posted: the call waits for request `req` ([`WaitPoll::posted_request`]).
    #[inline]
    pub fn posted(req: ReqId) -> Self {
        WaitPoll {
            ids: u64::from(req.idx) | (u64::from(req.generation) << 32),
            bytes: Self::PENDING_BIT,
        }
    }

    /// The request of a start that is pending ([`WaitPoll::posted`]).
    #[inline]
    pub fn posted_request(self) -> ReqId {
        debug_assert!(self.bytes & Self::PENDING_BIT != 0, "a posted start");
        ReqId {
            idx: self.ids as u32,
            generation: (self.ids >> 32) as u32,
        }
    }

    /// A send's start ([`Endpoint::send`]): the request to wait for, or complete at once with
    /// the empty status; its error put in `error`.
    #[inline]
    pub fn started(started: Result<Option<ReqId>, Error>, error: &mut Option<Error>) -> Self {
        match started {
            Ok(Some(req)) => Self::posted(req),
            Ok(None) => Self::ready(Status::default()),
            Err(e) => Self::failed(e, error),
        }
    }

    /// Posts a blocking receive for `pattern` into `buf` on `ep` ([`Endpoint::recv`]) and
    /// answers as [`RankRuntime::start_recv_into`] does: the request to wait for, or the
    /// message that matched at once finished into `buf` ([`Completion::finish_into`]), its error
    /// put in `error`. The body of that method in the trait and in every backend.
    #[inline]
    pub fn recv_into(
        ep: &mut Endpoint<Payload>,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
        error: &mut Option<Error>,
    ) -> Self {
        match ep.recv(pattern, buf.len(), source_world) {
            RecvStart::Posted(req) => Self::posted(req),
            RecvStart::Done(mut completion) => match completion.finish_into(Some(buf)) {
                Ok(status) => Self::ready(status),
                Err(e) => Self::failed(*e, error),
            },
        }
    }

    /// `polled` packed, its error (if any) put in `error`.
    #[inline]
    pub fn new(polled: Poll<Result<Status, Error>>, error: &mut Option<Error>) -> Self {
        match polled {
            Poll::Pending => Self::PENDING,
            Poll::Ready(Ok(status)) => Self::ready(status),
            Poll::Ready(Err(e)) => Self::failed(e, error),
        }
    }

    /// Failed with `e`, put in `error`.
    #[cold]
    pub fn failed(e: Error, error: &mut Option<Error>) -> Self {
        *error = Some(e);
        Self::FAILED
    }

    /// Failed with the request's own error `e` (the request is finished: a receive's
    /// `Truncate`), put in `error`; [`WaitPoll::failed`] is the wait's.
    #[cold]
    pub fn failed_request(e: Error, error: &mut Option<Error>) -> Self {
        *error = Some(e);
        WaitPoll {
            ids: 0,
            bytes: Self::FAILED_BIT | Self::OWN_ERROR_BIT,
        }
    }

    /// Whether this failed with the request's own error ([`WaitPoll::failed_request`]).
    #[inline]
    pub fn is_request_error(self) -> bool {
        self.bytes & (Self::FAILED_BIT | Self::OWN_ERROR_BIT)
            == Self::FAILED_BIT | Self::OWN_ERROR_BIT
    }

    /// The poll unpacked: `Err(())` means failed, with the error handed out beside it.
    #[inline]
    pub fn get(self) -> Poll<Result<Status, ()>> {
        if self.bytes & Self::PENDING_BIT != 0 {
            Poll::Pending
        } else if self.bytes & Self::FAILED_BIT != 0 {
            Poll::Ready(Err(()))
        } else {
            Poll::Ready(Ok(Status {
                source: self.ids as u32,
                tag: (self.ids >> 32) as u32 as i32,
                bytes: (self.bytes & Self::BYTES) as usize,
                cancelled: self.bytes & Self::CANCELLED_BIT != 0,
            }))
        }
    }
}

/// What a nonblocking call posts ([`RankRuntime::request_overhead`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posting {
    /// A send request (`isend`, `issend`, `ibsend`, `irsend`, a persistent send's start).
    Send,
    /// A receive request (`irecv`, a persistent receive's start).
    Recv,
}

/// What a wait on several requests waits for ([`RankRuntime::poll_requests`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Every request complete (`wait_all`, `sendrecv`).
    All,
    /// At least one complete (`wait_any`, `wait_some`).
    Any,
}

/// What a blocking probe found ([`RankRuntime::poll_probe`]): the message's status and, for a
/// matched probe, the message, which no receive can match any more.
pub type Probed = (Status, Option<MessageId>);

/// The requests of a wait on several after the one polled ([`RankRuntime::poll_complete_in`]),
/// which it appends to the list it is given; called only when the runtime needs them.
pub type RestOfWait<'a> = &'a dyn Fn(&mut Vec<ReqId>);

/// The backend side of one rank.
///
/// # One poll function per blocking call
///
/// Each blocking call of the program waits in one of the poll functions below, polled until it
/// is ready: [`RankRuntime::poll_complete_into`] (a blocking send or receive, `wait`),
/// [`RankRuntime::poll_complete_in`] (`wait_all`, `sendrecv`: its requests in order),
/// [`RankRuntime::poll_requests`] (`wait_any`, `wait_some`),
/// [`RankRuntime::poll_probe`] (`probe`, `mprobe`), [`RankRuntime::poll_buffer_free`]
/// (`buffer_detach`). Its ready answer is the call's return: a simulator ends the wait there,
/// and only there moves the rank's clock (`docs/timing.md` S1); a rank woken in a wait that
/// is not over blocks on as it was.
pub trait RankRuntime {
    /// World rank of this rank.
    fn rank(&self) -> u32;

    /// Number of ranks in the world.
    fn size(&self) -> u32;

    /// Runs `f` on this rank's endpoint after taking in the packets that have arrived, then
    /// sends what `f` produced.
    fn with_endpoint(&self, f: &mut dyn FnMut(&mut Endpoint<Payload>));

    /// Runs `f` on this rank's endpoint and sends what it produced, without first taking in the
    /// packets that have arrived: for calls whose outcome cannot depend on them (starting a
    /// send, posting a receive; a message taken in later matches a posted receive just as it
    /// would have matched it as an unexpected message). The next wait takes them in. The default
    /// is [`RankRuntime::with_endpoint`]; real backends override it to keep their intake off
    /// every send.
    fn start_on_endpoint(&self, f: &mut dyn FnMut(&mut Endpoint<Payload>)) {
        self.with_endpoint(f);
    }

    /// Starts a blocking send ([`Endpoint::send`]) as [`RankRuntime::start_on_endpoint`]
    /// would: ready with the empty status when it completed at once, [`WaitPoll::posted`] with
    /// the request to wait for, or failed with the error in `error` (not stamped with a time:
    /// the caller does). A backend that hands packets to its transport as they are made
    /// overrides it with [`Endpoint::send_now`], which skips the endpoint's output queue.
    fn start_blocking_send(
        &self,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
        error: &mut Option<Error>,
    ) -> WaitPoll {
        let started = start_on_endpoint_for(self, |ep| ep.send(mode, to, envelope, payload));
        WaitPoll::started(started, error)
    }

    /// Starts a blocking receive into `buf` ([`Endpoint::recv`]) as
    /// [`RankRuntime::start_on_endpoint`] would: [`WaitPoll::posted`] with the request to wait
    /// for, or, when a waiting message matched at once, the receive finished into `buf` (its
    /// status, or its error in `error`, not stamped with a time: the caller does).
    /// `source_world` is the world rank of the pattern's source, when it names one
    /// ([`Endpoint::irecv_from`]). Backends override it to post without a dyn closure: it is
    /// every blocking receive.
    fn start_recv_into(
        &self,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
        error: &mut Option<Error>,
    ) -> WaitPoll {
        start_on_endpoint_for(self, |ep| {
            WaitPoll::recv_into(ep, pattern, buf, source_world, error)
        })
    }

    /// Starts a nonblocking send for the program's call `call` ([`Endpoint::isend_as`]) after
    /// charging its request's overhead ([`RankRuntime::request_overhead`]), as
    /// [`RankRuntime::start_on_endpoint`] would: its request, or its error (not stamped with a
    /// time: the caller does). Backends override it to post without a dyn closure: it is every
    /// `isend` and every start of a persistent send.
    fn start_isend(
        &self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<ReqId, Error> {
        self.request_overhead(Posting::Send);
        start_on_endpoint_for(self, |ep| ep.isend_as(call, mode, to, envelope, payload))
    }

    /// Posts a nonblocking receive of up to `capacity` bytes ([`Endpoint::irecv_from`]) after
    /// charging its request's overhead ([`RankRuntime::request_overhead`]), as
    /// [`RankRuntime::start_on_endpoint`] would. `source_world` is as for
    /// [`RankRuntime::start_recv_into`]. Backends override it to post without a dyn closure: it
    /// is every `irecv` and every start of a persistent receive.
    fn start_irecv(&self, pattern: Pattern, capacity: usize, source_world: Option<u32>) -> ReqId {
        self.request_overhead(Posting::Recv);
        start_on_endpoint_for(self, |ep| ep.irecv_from(pattern, capacity, source_world))
    }

    /// Ready when `req` is complete for the program; otherwise registers the rank as waiting on
    /// it (a deadlock report names it as `call`) and arranges a wake-up. An error ends the wait
    /// for a run-wide reason (deadlock, another rank failed).
    fn poll_done(
        &self,
        req: ReqId,
        call: &'static str,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>>;

    /// As [`RankRuntime::poll_done`], but Ready with the request's completion, taken as by
    /// `Endpoint::test` (the request is then finished) in the same pass through the endpoint.
    /// The default takes a second pass; backends override it to save that pass on every wait.
    fn poll_complete(
        &self,
        req: ReqId,
        call: &'static str,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Completion<Payload>, Error>> {
        match self.poll_done(req, call, cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(())) => {
                let mut taken = None;
                self.with_endpoint(&mut |ep| taken = ep.take_if_done(req));
                Poll::Ready(Ok(
                    taken.expect("a request poll_done found complete has its completion")
                ))
            }
        }
    }

    /// As [`RankRuntime::poll_complete`], but ready with the request finished as the program
    /// gets it ([`Completion::finish_into`]): a receive's data copied into `buf`, then its
    /// status, or an error put in `error` (stamped with the rank's virtual time as every error
    /// the program gets). The request's own error (a `Truncate`: the request is finished) is
    /// [`WaitPoll::failed_request`]; an error may also be a wait that ended early, as from
    /// `poll_complete` ([`WaitPoll::failed`]): the program then still holds the request, so a
    /// blocking call lets go of it on any error (letting go of a finished request does nothing:
    /// its handle is spent), and a `Request` stays active. Every wait comes here, which is why
    /// the result is a [`WaitPoll`] (two words, returned in registers) and backends override
    /// it to copy the data while they hold the endpoint.
    fn poll_complete_into(
        &self,
        req: ReqId,
        call: &'static str,
        cx: &mut Context<'_>,
        buf: Option<&mut [u8]>,
        error: &mut Option<Error>,
    ) -> WaitPoll {
        match self.poll_complete(req, call, cx) {
            Poll::Pending => WaitPoll::PENDING,
            Poll::Ready(Err(e)) => WaitPoll::failed(e, error),
            Poll::Ready(Ok(mut completion)) => match completion.finish_into(buf) {
                Ok(status) => WaitPoll::ready(status),
                Err(e) => {
                    let mut e = *e;
                    if let Some(t) = self.virtual_time() {
                        e.stamp_time(t);
                    }
                    WaitPoll::failed_request(e, error)
                }
            },
        }
    }

    /// Ready once the requests `reqs` (not empty) are complete for the program: all of them
    /// ([`Needs::All`]) or at least one ([`Needs::Any`]), with the index of the lowest one
    /// complete; none is finished (the caller takes them, each at once). Otherwise registers
    /// the rank as waiting in `call` on those not complete, which a deadlock report names
    /// (the first one's peer is its wait-for edge), and arranges a wake-up. An error ends the
    /// wait for a run-wide reason, as for [`RankRuntime::poll_done`]. The default waits on the
    /// first incomplete request ([`RankRuntime::poll_done`]), which reports name alone.
    fn poll_requests(
        &self,
        reqs: &[ReqId],
        needs: Needs,
        call: &'static str,
        cx: &mut Context<'_>,
    ) -> Poll<Result<usize, Error>> {
        loop {
            let (done, incomplete) = with_endpoint_for(self, |ep| first_done(ep, reqs));
            match (needs, done, incomplete) {
                (Needs::All, _, None) | (Needs::Any, Some(_), _) | (_, None, None) => {
                    return Poll::Ready(Ok(done.unwrap_or(0)));
                }
                (_, _, Some(i)) => match self.poll_done(reqs[i], call, cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    // Complete now: look at them all again.
                    Poll::Ready(Ok(())) => {}
                },
            }
        }
    }

    /// A blocking probe (`call`: `probe`, or `mprobe` when `take`) for `pattern`: ready once
    /// a message a receive with `pattern` would get has arrived, with its status and, when
    /// `take` (a matched probe, [`Endpoint::improbe`]), the message; otherwise registers the
    /// rank as waiting for `awaited` (what a deadlock report names) and arranges a wake-up at
    /// the next arrival, to look again. The default looks, then waits with
    /// [`RankRuntime::poll_arrival`].
    fn poll_probe(
        &self,
        pattern: &crate::matching::Pattern,
        take: bool,
        call: &'static str,
        awaited: Awaited,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Probed, Error>> {
        loop {
            let seen = self.arrivals();
            let found = with_endpoint_for(self, |ep| probe_now(ep, pattern, take));
            if let Some(found) = found {
                return Poll::Ready(Ok(found));
            }
            match self.poll_arrival(seen, call, awaited, cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
        }
    }

    /// One request of a wait on several that takes them in order (`wait_all`, `sendrecv`):
    /// as [`RankRuntime::poll_complete_into`] on `req`, which is followed by the requests
    /// `rest` appends, or is the wait's last active request (`None`); those before it are
    /// finished. Its completion is the wait's return only when it is the last: a simulator
    /// ends the wait there, not at an earlier one's (`docs/timing.md` S1). Pending, the rank
    /// waits on `req` and the rest, which a deadlock report names (`rest` is called only
    /// then). The default is `poll_complete_into` on `req`.
    fn poll_complete_in(
        &self,
        req: ReqId,
        rest: Option<RestOfWait<'_>>,
        call: &'static str,
        cx: &mut Context<'_>,
        buf: Option<&mut [u8]>,
        error: &mut Option<Error>,
    ) -> WaitPoll {
        let _ = rest;
        self.poll_complete_into(req, call, cx, buf, error)
    }

    /// A nonblocking call is about to post a request of kind `posting`. Simulated backends
    /// charge the model's per-request CPU overhead here (timing extension X1,
    /// `docs/extensions.md`); real ones do nothing: the call takes its own time.
    fn request_overhead(&self, posting: Posting) {
        let _ = posting;
    }

    /// Messages delivered to this rank so far (for blocking probes: read it, look, then wait
    /// with [`RankRuntime::poll_arrival`] so that no arrival is missed in between).
    fn arrivals(&self) -> u64;

    /// Ready once more than `seen` messages have been delivered to this rank; otherwise
    /// registers the rank as waiting in `call` (a blocking probe) for `awaited` (what a
    /// deadlock report names) and arranges a wake-up.
    fn poll_arrival(
        &self,
        seen: u64,
        call: &'static str,
        awaited: Awaited,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>>;

    /// Ready when no buffered message holds attached-buffer bytes (`buffer_detach`).
    fn poll_buffer_free(&self, cx: &mut Context<'_>) -> Poll<Result<(), Error>>;

    /// Accounts `d` of computation (simulated backends advance the clock; real ones spin or do
    /// nothing, as the caller's code already took the time).
    fn compute(&self, d: Duration);

    /// Accounts `flops` floating-point operations at the target machine's speed.
    fn compute_flops(&self, flops: u64);

    /// A poll that found nothing (`call`: `test`, `iprobe`, ...): lets other ranks progress.
    /// Real backends may yield the thread; the simulator charges `poll_cost` (`timing.md` S2)
    /// and names `call` if the run livelocks.
    fn idle_poll(&self, call: &'static str);

    /// The program called `abort` with `code` (MPI's `MPI_Abort`): the backend stops the whole
    /// run with [`Error::Abort`] naming this rank, `code` and (simulated) the time of the call,
    /// unless the run has failed already, and never lets the rank's program go past the call:
    /// the caller suspends without anything to wake it for, which a simulator leaves at that
    /// (the rank is never resumed) and a real backend takes as the end of the rank's program
    /// (a rank that suspends after its run failed ends with `Aborted`).
    fn abort(&self, code: i32);

    /// The program let go of a receive that had matched a message (`warning`, from
    /// [`crate::p2p::discarded_receive`]): listed with the run's warnings, as a message never
    /// received is.
    fn discarded(&self, warning: String);

    /// Nanoseconds since the start of the run: virtual under the simulator, host time otherwise.
    fn now_ns(&self) -> u64;

    /// The rank's virtual time, under a simulator (errors carry it); `None` on real backends.
    fn virtual_time(&self) -> Option<u64> {
        None
    }
}

/// Of `reqs`, the index of the first complete for the program and of the first not complete,
/// on `ep` ([`RankRuntime::poll_requests`]).
pub fn first_done(ep: &Endpoint<Payload>, reqs: &[ReqId]) -> (Option<usize>, Option<usize>) {
    let (mut done, mut incomplete) = (None, None);
    for (i, &req) in reqs.iter().enumerate() {
        if ep.is_done(req) {
            done.get_or_insert(i);
        } else {
            incomplete.get_or_insert(i);
        }
        if done.is_some() && incomplete.is_some() {
            break;
        }
    }
    (done, incomplete)
}

/// What a probe for `pattern` finds on `ep` now ([`RankRuntime::poll_probe`]): taken when
/// `take`.
pub fn probe_now(
    ep: &mut Endpoint<Payload>,
    pattern: &crate::matching::Pattern,
    take: bool,
) -> Option<Probed> {
    if take {
        ep.improbe(pattern).map(|(id, status)| (status, Some(id)))
    } else {
        ep.iprobe(pattern).map(|status| (status, None))
    }
}

/// Runs `f` once on `rt`'s endpoint through [`RankRuntime::start_on_endpoint`] and returns what
/// it returned. The trait takes a `dyn FnMut` (backends are trait objects), which can move
/// nothing in or out by itself; this carries `f` in and its result out.
#[inline]
pub fn start_on_endpoint_for<R>(
    rt: &(impl RankRuntime + ?Sized),
    f: impl FnOnce(&mut Endpoint<Payload>) -> R,
) -> R {
    run_once(|g| rt.start_on_endpoint(g), f)
}

/// As [`start_on_endpoint_for`], through [`RankRuntime::with_endpoint`] (the packets that have
/// arrived are taken in first).
#[inline]
pub fn with_endpoint_for<R>(
    rt: &(impl RankRuntime + ?Sized),
    f: impl FnOnce(&mut Endpoint<Payload>) -> R,
) -> R {
    run_once(|g| rt.with_endpoint(g), f)
}

/// Hands `f` to `run` (one of the trait's endpoint calls) as the `dyn FnMut` it takes, and
/// returns what `f` returned: the body of [`start_on_endpoint_for`] and [`with_endpoint_for`].
#[inline(always)]
fn run_once<R>(
    run: impl FnOnce(&mut dyn FnMut(&mut Endpoint<Payload>)),
    f: impl FnOnce(&mut Endpoint<Payload>) -> R,
) -> R {
    let (mut f, mut out) = (Some(f), None);
    run(&mut |ep| out = f.take().map(|f| f(ep)));
    out.expect("a runtime's endpoint call runs its closure once")
}

#[cfg(test)]
mod tests {
    use std::task::Poll;

    use super::{Payload, WaitPoll};
    use crate::error::Error;
    use crate::p2p::Packet;
    use crate::p2p::{ReqId, Status};

    /// A wait's poll survives its packing: pending, failed, and statuses with extreme fields.
    #[test]
    fn wait_poll_round_trips() {
        assert_eq!(WaitPoll::new(Poll::Pending, &mut None).get(), Poll::Pending);
        let mut error = None;
        let e = Error::NoMemory { what: "r".into() };
        let failed = WaitPoll::new(Poll::Ready(Err(e.clone())), &mut error);
        assert_eq!((failed.get(), error), (Poll::Ready(Err(())), Some(e)));
        for status in [
            Status::default(),
            Status {
                source: u32::MAX,
                tag: i32::MIN,
                bytes: (1 << 61) - 1,
                cancelled: true,
            },
            Status {
                source: 7,
                tag: -1,
                bytes: 8,
                cancelled: false,
            },
        ] {
            let mut error = None;
            assert_eq!(
                WaitPoll::new(Poll::Ready(Ok(status)), &mut error).get(),
                Poll::Ready(Ok(status))
            );
            assert_eq!(error, None);
        }
        assert_eq!(std::mem::size_of::<WaitPoll>(), 16);
        for (idx, generation) in [(0, 0), (u32::MAX, 1), (3, u32::MAX)] {
            let req = ReqId { idx, generation };
            let posted = WaitPoll::posted(req);
            assert_eq!(
                (posted.get(), posted.posted_request()),
                (Poll::Pending, req)
            );
        }
    }

    /// A packet and the 8-byte sequence number of a lane slot share one cache line: a small
    /// message crosses cores in one line (`mpsim-threads` lane).
    #[test]
    fn packet_fits_a_cache_line_beside_a_sequence_number() {
        assert!(
            std::mem::size_of::<Packet<Payload>>() <= 56,
            "Packet<Payload> is {} bytes",
            std::mem::size_of::<Packet<Payload>>()
        );
    }
}
