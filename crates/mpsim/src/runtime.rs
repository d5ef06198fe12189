//! [`Rt`]: a rank's runtime as the API layer holds it. The built-in backends (simulator,
//! threads) by their own types, whose fast paths (`mpsim_proto::runtime::fast`) are plain
//! methods the calls below reach with no trait object in between; any other backend through
//! the seam alone ([`RankRuntime`]: start a call, poll a wait), from which each fast path is
//! composed here. A program's calls read the same either way.

use std::rc::Rc;
use std::task::Poll;

use mpsim_proto::deadlock::Awaited;
use mpsim_proto::error::Result;
use mpsim_proto::matching::{Envelope, Pattern};
use mpsim_proto::p2p::{Completion, MessageId, ReqId, SendMode, Status};
use mpsim_proto::runtime::fast::{Failed, Posted, RestOfWait};
use mpsim_proto::runtime::{
    Call, Needs, Payload, Posting, Probed, RankRuntime, Started, Wait, Waited, Work, wrong_answer,
};
use mpsim_sim::SimRank;
use mpsim_threads::ThreadRank;

/// A rank's runtime: a built-in backend by its type, or any other by the seam.
#[derive(Clone)]
pub(crate) enum Rt {
    /// A simulated rank.
    Sim(Rc<SimRank>),
    /// A rank on its thread.
    Threads(Rc<ThreadRank>),
    /// Any other backend.
    Other(Rc<dyn RankRuntime>),
}

/// Calls `$method` of the backend with `$args`: the built-in backends' own (inherent) method
/// where they have one, else `$other`, written over the seam.
macro_rules! fast {
    ($rt:expr, $method:ident($($arg:expr),*), |$seam:ident| $other:expr) => {
        match $rt {
            Rt::Sim(r) => r.$method($($arg),*),
            Rt::Threads(r) => r.$method($($arg),*),
            Rt::Other($seam) => $other,
        }
    };
}

impl Rt {
    /// The backend as the seam.
    #[inline]
    pub fn seam(&self) -> &dyn RankRuntime {
        match self {
            Rt::Sim(r) => &**r,
            Rt::Threads(r) => &**r,
            Rt::Other(r) => &**r,
        }
    }

    pub fn rank(&self) -> u32 {
        self.seam().rank()
    }

    pub fn size(&self) -> u32 {
        self.seam().size()
    }

    // ---- fast paths ----

    /// Starts a blocking send (its errors not stamped).
    #[inline(always)]
    pub fn send(
        &self,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<Posted> {
        fast!(self, send(mode, to, envelope, payload), |rt| {
            let call = Call::Send {
                call: mode.call(),
                mode,
                to,
                envelope,
                payload,
                blocking: true,
            };
            match rt.start(call)? {
                Started::Request(None) => Ok(Posted::Done(Status::default())),
                Started::Request(Some(req)) => Ok(Posted::Waiting(req)),
                other => wrong_answer("a send", &other),
            }
        })
    }

    /// Starts a blocking receive into `buf` (its errors not stamped).
    #[inline(always)]
    pub fn recv_into(
        &self,
        pattern: Pattern,
        buf: &mut [u8],
        source_world: Option<u32>,
    ) -> Result<Posted> {
        fast!(self, recv_into(pattern, buf, source_world), |rt| {
            let call = Call::Recv {
                pattern,
                capacity: buf.len(),
                source_world,
                blocking: true,
            };
            match rt.start(call)? {
                Started::Request(Some(req)) => Ok(Posted::Waiting(req)),
                // Complete at once (the message was there): finished into `buf` now.
                Started::Completion(Some(mut completion)) => completion
                    .finish_into(Some(buf))
                    .map(Posted::Done)
                    .map_err(|e| *e),
                other => wrong_answer("a receive", &other),
            }
        })
    }

    /// Starts a nonblocking send for the program's call `call` (its errors not stamped).
    #[inline(always)]
    pub fn isend(
        &self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
    ) -> Result<ReqId> {
        fast!(self, isend(call, mode, to, envelope, payload), |rt| {
            let start = Call::Send {
                call,
                mode,
                to,
                envelope,
                payload,
                blocking: false,
            };
            Ok(request(rt.start(start)?, call))
        })
    }

    /// Posts a nonblocking receive.
    #[inline(always)]
    pub fn irecv(&self, pattern: Pattern, capacity: usize, source_world: Option<u32>) -> ReqId {
        fast!(self, irecv(pattern, capacity, source_world), |rt| {
            let call = Call::Recv {
                pattern,
                capacity,
                source_world,
                blocking: false,
            };
            // A receive's start has no error of its own.
            match rt.start(call) {
                Ok(started) => request(started, "irecv"),
                Err(e) => wrong_answer("irecv", &e),
            }
        })
    }

    /// The wait on `req` of a blocking call, or of `wait`: ready with the request finished as
    /// the program gets it, its data in `buf`.
    #[inline(always)]
    pub fn wait_into(
        &self,
        req: ReqId,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<std::result::Result<Status, Failed>> {
        fast!(self, wait_into(req, call, buf), |rt| wait_on_seam(
            &**rt, req, call, buf
        ))
    }

    /// One request of a wait on several in order, followed by those `rest` appends, or the
    /// last (`None`).
    #[inline(always)]
    pub fn wait_in(
        &self,
        req: ReqId,
        rest: Option<RestOfWait<'_>>,
        call: &'static str,
        buf: Option<&mut [u8]>,
    ) -> Poll<std::result::Result<Status, Failed>> {
        fast!(self, wait_in(req, rest, call, buf), |rt| wait_on_seam(
            &**rt, req, call, buf
        ))
    }

    /// A wait until all of `reqs` or any are complete: the lowest complete one's index.
    pub fn wait_requests(
        &self,
        reqs: &[ReqId],
        needs: Needs,
        call: &'static str,
    ) -> Poll<Result<usize>> {
        fast!(self, wait_requests(reqs, needs, call), |rt| {
            let wait = Wait::Requests { reqs, needs, call };
            rt.poll_wait(wait).map_ok(|waited| match waited {
                Waited::Index(i) => i,
                other => wrong_answer(call, &other),
            })
        })
    }

    /// Whether `req` is complete, looked at without acting (no time, no input taken, no wait
    /// touched): the built-in backends' `is_done_now`; over the seam, `Call::IsDone`, which a
    /// backend may answer after taking in input (`crate::progress` says what follows).
    pub fn done_now(&self, req: ReqId) -> bool {
        fast!(
            self,
            is_done_now(req),
            |rt| match rt.start(Call::IsDone(req)) {
                Ok(Started::Flag(done)) => done,
                other => wrong_answer("a test", &other),
            }
        )
    }

    /// Whether this is a backend reached through the seam alone (`Rt::Other`).
    pub fn through_seam(&self) -> bool {
        matches!(self, Rt::Other(_))
    }

    /// A blocking probe.
    pub fn wait_probe(
        &self,
        pattern: &Pattern,
        take: bool,
        call: &'static str,
        awaited: Awaited,
    ) -> Poll<Result<Probed>> {
        fast!(self, wait_probe(pattern, take, call, awaited), |rt| {
            let wait = Wait::Probe {
                pattern,
                take,
                call,
                awaited,
            };
            rt.poll_wait(wait).map_ok(|waited| match waited {
                Waited::Probed(p) => p,
                other => wrong_answer(call, &other),
            })
        })
    }

    // ---- through the seam ----

    /// Starts `call` (not stamped).
    fn start(&self, call: Call) -> Result<Started> {
        self.seam().start(call)
    }

    /// A nonblocking call to `PROC_NULL`: a request's overhead, nothing posted.
    pub fn null_request(&self, posting: Posting) {
        let _ = self.start(Call::NullRequest(posting));
    }

    /// The request's completion if it is complete (the request is then finished).
    pub fn test(&self, req: ReqId) -> Result<Option<Completion<Payload>>> {
        match self.start(Call::Test(req))? {
            Started::Completion(c) => Ok(c),
            other => wrong_answer("test", &other),
        }
    }

    /// Whether the request is complete.
    pub fn is_done(&self, req: ReqId) -> bool {
        match self.start(Call::IsDone(req)) {
            Ok(Started::Flag(done)) => done,
            other => wrong_answer("a test", &other),
        }
    }

    /// Asks to cancel the request.
    pub fn cancel(&self, req: ReqId) -> Result<()> {
        self.start(Call::Cancel(req)).map(drop)
    }

    /// The program lets go of the request (`Call::LetGo`).
    pub fn let_go(&self, req: ReqId) {
        let _ = self.start(Call::LetGo(req));
    }

    /// The program drops a matched probe's message unreceived (`Call::DropMessage`).
    pub fn drop_message(&self, message: MessageId, status: Status) {
        let _ = self.start(Call::DropMessage { message, status });
    }

    /// Receives a matched probe's message, up to `capacity` bytes.
    pub fn mrecv(&self, message: MessageId, capacity: usize) -> Result<ReqId> {
        let started = self.start(Call::MatchedRecv { message, capacity })?;
        Ok(request(started, "mrecv"))
    }

    /// What a probe for `pattern` finds now (taken when `take`).
    pub fn probe(&self, pattern: Pattern, take: bool) -> Result<Option<Probed>> {
        match self.start(Call::Probe { pattern, take })? {
            Started::Probed(p) => Ok(p),
            other => wrong_answer("iprobe", &other),
        }
    }

    /// Attaches a buffer of `bytes` for buffered sends.
    pub fn buffer_attach(&self, bytes: usize) -> Result<()> {
        self.start(Call::BufferAttach(bytes)).map(drop)
    }

    /// Detaches the buffer: its size.
    pub fn buffer_detach(&self) -> Result<usize> {
        match self.start(Call::BufferDetach)? {
            Started::Detached(bytes) => Ok(bytes),
            other => wrong_answer("buffer_detach", &other),
        }
    }

    /// Ready once no buffered message holds attached-buffer bytes.
    pub fn wait_buffer_free(&self) -> Poll<Result<()>> {
        self.seam().poll_wait(Wait::BufferFree).map_ok(drop)
    }

    /// A poll that found nothing (the caller then yields once).
    pub fn idle(&self, call: &'static str) {
        self.seam().idle(call);
    }

    /// Accounts `work` (the caller then yields once).
    pub fn compute(&self, work: Work) {
        self.seam().compute(work);
    }

    pub fn now_ns(&self) -> u64 {
        self.seam().now_ns()
    }

    pub fn virtual_time(&self) -> Option<u64> {
        self.seam().virtual_time()
    }

    pub fn abort(&self, code: i32) {
        self.seam().abort(code);
    }
}

/// The request a start posted, as the call's doc says it answers.
#[inline]
fn request(started: Started, call: &str) -> ReqId {
    match started {
        Started::Request(Some(req)) => req,
        other => wrong_answer(call, &other),
    }
}

/// The wait on `req` over the seam: the request's completion, finished into `buf`.
fn wait_on_seam(
    rt: &dyn RankRuntime,
    req: ReqId,
    call: &'static str,
    buf: Option<&mut [u8]>,
) -> Poll<std::result::Result<Status, Failed>> {
    match rt.poll_wait(Wait::Request { req, call }) {
        Poll::Pending => Poll::Pending,
        Poll::Ready(Err(e)) => Poll::Ready(Err(Failed::Wait(e))),
        Poll::Ready(Ok(Waited::Completion(mut completion))) => {
            Poll::Ready(completion.finish_into(buf).map_err(|e| Failed::Request(*e)))
        }
        Poll::Ready(Ok(other)) => wrong_answer(call, &other),
    }
}
