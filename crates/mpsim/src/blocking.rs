//! The futures of the blocking point-to-point calls (`send` in every mode, `recv`): written by
//! hand rather than as `async fn`s because they are the hottest code of every program.
//!
//! A blocking call does its work when it is called: it validates its arguments, posts the send
//! or receive and, when that completes at once (an eager or buffered send, a receive that a
//! waiting message matched), keeps the result. Its future then only waits, if anything is left
//! to wait for, and takes the completion in the same pass through the endpoint
//! (`Rt::wait_into`, a fast path of the built-in backends). One small state, one `match` per
//! poll: no nested state machines moving a `Result` through each level, which cost about 200
//! instructions a call as `async fn`s.
//!
//! The backends' fast paths are called by their types (`crate::runtime`), so the calls and
//! their futures inline into the program's future, which builds each `Blocking` in place.
//!
//! Posting at the call rather than at the first poll changes nothing a program can observe: a
//! rank's future runs only while its rank runs (at its current virtual time under `sim`), so a
//! call is posted at the time it is made either way, and a rank is blocked only from the poll
//! that waits. A future dropped before it completes lets go of its request as a dropped
//! [`crate::Request`] does (a receive is withdrawn, a send goes on). Futures made ahead,
//! joined or dropped unpolled: `tests/sim_blocking_futures.rs`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use mpsim_proto::error::{Error, Result};
use mpsim_proto::p2p::{ReqId, Status};
use mpsim_proto::runtime::fast::{Failed, Posted};

use crate::request::stamped;
use crate::runtime::Rt;

/// The future of a blocking send or receive, started when made.
#[must_use = "a blocking call does nothing more unless awaited"]
pub(crate) struct Blocking<'a> {
    rt: &'a Rt,
    step: Step<'a>,
}

enum Step<'a> {
    /// A send that finished when called (every eager send): its result is the empty status.
    /// A variant without data, so that the first poll reads a tag and moves no `Result`.
    Sent,
    /// Finished when called: its result.
    Done(Result<Status>),
    /// Waiting for request `id`, posted by the call `call`; a receive's buffer as bytes.
    Waiting {
        id: ReqId,
        call: &'static str,
        buf: Option<&'a mut [u8]>,
    },
    /// The result was handed out.
    Taken,
}

impl<'a> Blocking<'a> {
    /// A send that finished at once.
    pub fn sent(rt: &'a Rt) -> Self {
        Blocking {
            rt,
            step: Step::Sent,
        }
    }

    /// A call as the runtime started it (`Rt::send`, `Rt::recv_into`): waiting for the
    /// request it posted (`buf` receives its data), or finished, with its error stamped with
    /// the rank's time.
    #[inline(always)]
    pub fn started(
        rt: &'a Rt,
        started: Result<Posted>,
        call: &'static str,
        buf: Option<&'a mut [u8]>,
    ) -> Self {
        match started {
            Ok(Posted::Waiting(req)) => Self::waiting(rt, req, call, buf),
            Ok(Posted::Done(status)) if buf.is_none() => {
                debug_assert_eq!(status, Status::default(), "a send's status is empty");
                Self::sent(rt)
            }
            Ok(Posted::Done(status)) => Self::done(rt, Ok(status)),
            Err(e) => Self::done(rt, Err(stamped(rt, e))),
        }
    }

    /// A call that finished at once with `result`.
    pub fn done(rt: &'a Rt, result: Result<Status>) -> Self {
        Blocking {
            rt,
            step: Step::Done(result),
        }
    }

    /// A call that posted request `id` and waits for it; `buf` receives its data.
    pub fn waiting(rt: &'a Rt, id: ReqId, call: &'static str, buf: Option<&'a mut [u8]>) -> Self {
        Blocking {
            rt,
            step: Step::Waiting { id, call, buf },
        }
    }
}

impl Future for Blocking<'_> {
    type Output = Result<Status>;

    /// Always inlined into the program's future, with the wait (`poll_wait`): its result then
    /// goes where the program uses it, not through memory.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<Status>> {
        let this = self.get_mut();
        // Tested one by one, the most common first: a `match` became a jump table whose
        // lowering wrote the same value to many stack slots on every poll.
        if let Step::Waiting { .. } = this.step {
            return this.poll_wait();
        }
        if let Step::Sent = this.step {
            this.step = Step::Taken;
            return Poll::Ready(Ok(Status::default()));
        }
        match std::mem::replace(&mut this.step, Step::Taken) {
            Step::Done(result) => Poll::Ready(result),
            _ => panic!("a blocking call's future was polled after it completed"),
        }
    }
}

impl Blocking<'_> {
    /// The waiting side of `poll`: ready when the request completes, with its data in place
    /// (copied by the runtime: `Rt::wait_into`).
    #[inline(always)]
    fn poll_wait(&mut self) -> Poll<Result<Status>> {
        let Step::Waiting { id, call, buf } = &mut self.step else {
            unreachable!("poll_wait on a call that does not wait");
        };
        match self.rt.wait_into(*id, call, buf.as_deref_mut()) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(status)) => {
                self.step = Step::Taken;
                Poll::Ready(Ok(status))
            }
            Poll::Ready(Err(failed)) => Poll::Ready(Err(self.failed(failed))),
        }
    }

    /// A wait that failed: with the request's own error (it is finished), or one that ended
    /// early (a deadlock, another rank failed), whose request is let go of.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, failed: Failed) -> Error {
        let e = match failed {
            Failed::Request(e) => e,
            Failed::Wait(e) => {
                if let Step::Waiting { id, .. } = self.step {
                    self.rt.let_go(id);
                }
                e
            }
        };
        self.step = Step::Taken;
        e
    }
}

impl Drop for Blocking<'_> {
    /// Inlined: every blocking call's future is dropped once it completed, when this only reads
    /// its step. A future dropped while it waits lets go of its request (out of line).
    #[inline(always)]
    fn drop(&mut self) {
        if let Step::Waiting { id, .. } = self.step {
            dropped_waiting(self.rt, id);
        }
    }
}

/// A blocking call's future dropped while it waits for request `id` (`let_go`): rare.
#[cold]
#[inline(never)]
fn dropped_waiting(rt: &Rt, id: ReqId) {
    rt.let_go(id);
}

/// A blocking send's future: a [`Blocking`] without the status.
#[must_use = "a blocking call does nothing more unless awaited"]
pub(crate) struct SendDone<'a>(pub Blocking<'a>);

impl Future for SendDone<'_> {
    type Output = Result<()>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        Pin::new(&mut self.get_mut().0)
            .poll(cx)
            .map(|r| r.map(drop))
    }
}
