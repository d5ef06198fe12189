//! The futures of the blocking point-to-point calls (`send` in every mode, `recv`): written by
//! hand rather than as `async fn`s because they are the hottest code of every program.
//!
//! A blocking call does its work when it is called: it validates its arguments, posts the send
//! or receive and, when that completes at once (an eager or buffered send, a receive that a
//! waiting message matched), keeps the result. Its future then only waits, if anything is left
//! to wait for, and takes the completion in the same pass through the endpoint
//! (`RankRuntime::poll_complete_into`). One small state, one `match` per poll: no nested state
//! machines moving a `Result` through each level, which cost about 200 instructions a call as
//! `async fn`s.
//!
//! What crosses the runtime's `dyn` boundary on the way (a start's outcome, a poll's) comes
//! back in two registers (`mpsim_proto::runtime::WaitPoll`), and the calls and their futures
//! are inlined into the program's future, which builds each `Blocking` in place: values of 40
//! to 64 bytes written field by field and copied on at once with wider loads stalled the CPU
//! (store-to-load interlocks) several times per call.
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
use mpsim_proto::runtime::{RankRuntime, WaitPoll};

use crate::request::{let_go, stamped};

/// The future of a blocking send or receive, started when made.
#[must_use = "a blocking call does nothing more unless awaited"]
pub(crate) struct Blocking<'a> {
    rt: &'a dyn RankRuntime,
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
    pub fn sent(rt: &'a dyn RankRuntime) -> Self {
        Blocking {
            rt,
            step: Step::Sent,
        }
    }

    /// A call as the runtime started it (`RankRuntime::start_blocking_send`,
    /// `RankRuntime::start_recv_into`): waiting for the request it posted (`buf` receives its
    /// data), or finished, with its error (taken from `error`, where the runtime put it)
    /// stamped with the rank's time. `error` is borrowed, not moved in: a moved `Option<Error>`
    /// (48 bytes) was copied on every call, failed or not.
    #[inline(always)]
    pub fn started(
        rt: &'a dyn RankRuntime,
        started: WaitPoll,
        error: &mut Option<Error>,
        call: &'static str,
        buf: Option<&'a mut [u8]>,
    ) -> Self {
        match started.get() {
            Poll::Pending => Self::waiting(rt, started.posted_request(), call, buf),
            Poll::Ready(Ok(status)) if buf.is_none() => {
                debug_assert_eq!(status, Status::default(), "a send's status is empty");
                Self::sent(rt)
            }
            Poll::Ready(Ok(status)) => Self::done(rt, Ok(status)),
            Poll::Ready(Err(())) => Self::done(
                rt,
                Err(stamped(
                    rt,
                    error.take().expect("a failed start hands out its error"),
                )),
            ),
        }
    }

    /// A call that finished at once with `result`.
    pub fn done(rt: &'a dyn RankRuntime, result: Result<Status>) -> Self {
        Blocking {
            rt,
            step: Step::Done(result),
        }
    }

    /// A call that posted request `id` and waits for it; `buf` receives its data.
    pub fn waiting(
        rt: &'a dyn RankRuntime,
        id: ReqId,
        call: &'static str,
        buf: Option<&'a mut [u8]>,
    ) -> Self {
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
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Status>> {
        let this = self.get_mut();
        // Tested one by one, the most common first: a `match` became a jump table whose
        // lowering wrote the same value to many stack slots on every poll.
        if let Step::Waiting { .. } = this.step {
            return this.poll_wait(cx);
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
    /// (copied by the runtime: `RankRuntime::poll_complete_into`). The runtime's answer comes
    /// back in two registers (`WaitPoll`); only an error comes through memory.
    #[inline(always)]
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<Result<Status>> {
        let Step::Waiting { id, call, buf } = &mut self.step else {
            unreachable!("poll_wait on a call that does not wait");
        };
        let mut error = None;
        let polled = self
            .rt
            .poll_complete_into(*id, call, cx, buf.as_deref_mut(), &mut error);
        match polled.get() {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(status)) => {
                self.step = Step::Taken;
                Poll::Ready(Ok(status))
            }
            Poll::Ready(Err(())) => Poll::Ready(Err(self.failed(error))),
        }
    }

    /// A wait that ended in `error`, which may have ended early (a deadlock, another rank
    /// failed): the request is let go of (nothing happens if it finished with its own error).
    #[cold]
    #[inline(never)]
    fn failed(&mut self, error: Option<Error>) -> Error {
        if let Step::Waiting { id, .. } = self.step {
            let_go(self.rt, id);
        }
        self.step = Step::Taken;
        error.expect("a failed wait hands out its error")
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
fn dropped_waiting(rt: &dyn RankRuntime, id: ReqId) {
    let_go(rt, id);
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
