//! [`Request`]: a nonblocking operation in flight, and the wait / test families over many.
//!
//! A request owns its id and, for a receive, borrows the buffer the data goes into. The data is
//! copied in when the request completes under `wait`/`test`; until then the protocol core holds
//! the sender's copy, never the program's memory. So dropping (or leaking) a pending request is
//! memory-safe: `Drop` cancels a pending receive and lets a pending send finish in the
//! background (`docs/p2p.md` §4 "Memory safety").

use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;

use mpsim_proto::error::{Error, Result};
use mpsim_proto::p2p::{Completion, ReqId, Status};
use mpsim_proto::runtime::fast::{Failed, RestOfWait};
use mpsim_proto::runtime::{Needs, Payload};
use smallvec::SmallVec;

use crate::progress::Task;
use crate::runtime::Rt;

/// A nonblocking send, receive or collective. Complete it with [`Request::wait`] or
/// [`Request::test`];
/// once complete it is inactive and keeps its status: waited for or tested again (by
/// [`wait_all`] over requests some of which a wait already completed, say) it gives that
/// status again, or MPI's empty status if it failed (its error is reported once), and
/// [`wait_any`] and [`test_any`] pass it over.
/// dropping it unfinished cancels a receive and lets a send complete in the background. (A
/// receive that a message had already matched cannot be cancelled: dropping it discards that
/// message, and the run's warnings say so.) A nonblocking collective's request (`Comm::ibcast`,
/// ...) is completed by the same calls, and moves on while the rank waits for anything
/// (`docs/collectives.md` §7); dropped unfinished, its collective goes on in the background and
/// its result is discarded.
#[must_use = "a request must be waited for or tested to completion"]
pub struct Request<'b> {
    rt: Rt,
    state: State<'b>,
}

enum State<'b> {
    /// Completed at creation (`PROC_NULL`) or already waited for. A receive keeps its buffer
    /// so that a persistent request can take it back.
    Null {
        status: Status,
        buf: Option<&'b mut [u8]>,
    },
    Active {
        id: ReqId,
        names: Names,
        /// The receive buffer, as bytes.
        buf: Option<&'b mut [u8]>,
    },
    /// A nonblocking collective's (`crate::progress`): its task, and the buffer its result is
    /// copied into when the request completes (none where this rank gets no result).
    Coll {
        task: Rc<Task>,
        out: Option<&'b mut [u8]>,
    },
}

/// What a request is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Names {
    /// The program's call that made it, which its errors name (`"isend"`, `"irecv"`,
    /// `"sendrecv"`, `"mrecv"`, a persistent receive's `"recv_init"`).
    pub call: &'static str,
    /// What its waits are called in deadlock reports, wait reports and traces: the operation
    /// (`"send"`, `"ssend"`, `"recv"`, `"mrecv"`, `"comm_split"`).
    pub wait: &'static str,
}

impl<'b> Request<'b> {
    pub(crate) fn active(rt: Rt, id: ReqId, names: Names, buf: Option<&'b mut [u8]>) -> Self {
        Request {
            rt,
            state: State::Active { id, names, buf },
        }
    }

    pub(crate) fn null(rt: Rt, status: Status, buf: Option<&'b mut [u8]>) -> Self {
        Request {
            rt,
            state: State::Null { status, buf },
        }
    }

    /// A nonblocking collective's request, its result copied into `out` when it completes.
    pub(crate) fn coll(rt: Rt, task: Rc<Task>, out: Option<&'b mut [u8]>) -> Self {
        Request {
            rt,
            state: State::Coll { task, out },
        }
    }

    /// Its id while it is an active point-to-point request.
    pub(crate) fn id(&self) -> Option<ReqId> {
        match self.state {
            State::Active { id, .. } => Some(id),
            State::Null { .. } | State::Coll { .. } => None,
        }
    }

    /// Whether it is a nonblocking collective's request, still active.
    fn is_coll(&self) -> bool {
        matches!(self.state, State::Coll { .. })
    }

    /// Whether the request is inactive: already complete and consumed, or a `PROC_NULL` one.
    pub fn is_null(&self) -> bool {
        matches!(self.state, State::Null { .. })
    }

    /// Hands back a completed receive's buffer (`None` while active, for a send, or once
    /// taken).
    pub(crate) fn take_buf(&mut self) -> Option<&'b mut [u8]> {
        match &mut self.state {
            State::Null { buf, .. } => buf.take(),
            State::Active { .. } | State::Coll { .. } => None,
        }
    }

    /// Waits until the request completes and returns its status.
    ///
    /// A receive's data is then in the buffer. A message longer than the buffer fills it and
    /// gives `Error::Truncate` (the message is consumed).
    pub async fn wait(mut self) -> Result<Status> {
        self.wait_in_place(None).await
    }

    /// Waits in place; `user_call` names the program's call in deadlock reports when it is not
    /// the request's own (`wait_all`, S15).
    pub(crate) async fn wait_in_place(
        &mut self,
        user_call: Option<&'static str>,
    ) -> Result<Status> {
        poll_fn(|_| self.poll_wait(user_call)).await
    }

    /// One poll of [`Request::wait_in_place`]. `wait_all` polls its requests through it with
    /// no future per request.
    ///
    /// The runtime finishes the request into its buffer while it holds the endpoint
    /// (`Rt::wait_into`, as a blocking wait does): no completion comes out through memory.
    #[inline]
    fn poll_wait(&mut self, user_call: Option<&'static str>) -> Poll<Result<Status>> {
        let (id, call, buf) = match &mut self.state {
            State::Null { status, .. } => return Poll::Ready(Ok(*status)),
            State::Active { id, names, buf } => (*id, user_call.unwrap_or(names.wait), buf),
            State::Coll { .. } => return self.poll_coll(user_call),
        };
        let polled = self.rt.wait_into(id, call, buf.as_deref_mut());
        self.polled(polled)
    }

    /// One poll of this request, of a wait on several in order, followed by those `rest`
    /// appends or the last (`None`; `wait_all`, `Rt::wait_in`), as [`Request::poll_wait`]
    /// polls one.
    #[inline]
    fn poll_wait_in(
        &mut self,
        rest: Option<RestOfWait<'_>>,
        call: &'static str,
    ) -> Poll<Result<Status>> {
        let (id, buf) = match &mut self.state {
            State::Null { status, .. } => return Poll::Ready(Ok(*status)),
            State::Active { id, buf, .. } => (*id, buf),
            State::Coll { .. } => return self.poll_coll(Some(call)),
        };
        let polled = self.rt.wait_in(id, rest, call, buf.as_deref_mut());
        self.polled(polled)
    }

    /// One poll of a wait on a nonblocking collective's request (`crate::progress`, "A wait on
    /// a collective's request"), in the program's call `call` (`None`: the collective's own
    /// name): its task moved on; complete, the wait ends and the result is copied out;
    /// otherwise the rank waits on the requests of the task's step.
    #[cold]
    #[inline(never)]
    fn poll_coll(&mut self, call: Option<&'static str>) -> Poll<Result<Status>> {
        let State::Coll { task, .. } = &self.state else {
            unreachable!("a collective's request");
        };
        let task = Rc::clone(task);
        let call = call.unwrap_or(task.call);
        loop {
            task.advance();
            if task.finished() {
                // Ends the rank's wait, if it blocked in one (its time, its trace span).
                return match self.rt.wait_requests(&[], Needs::All, call) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    Poll::Ready(Ok(_)) => Poll::Ready(self.finish_coll()),
                };
            }
            match self.rt.wait_requests(&task.awaiting(), Needs::Any, call) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(_)) => {}
            }
        }
    }

    /// Makes a collective's request, whose task has finished, null: its result copied into the
    /// buffer, its status (MPI's empty status: a collective's has no source or tag) or error.
    fn finish_coll(&mut self) -> Result<Status> {
        let done = State::Null {
            status: empty_status(),
            buf: None,
        };
        let State::Coll { task, out } = std::mem::replace(&mut self.state, done) else {
            unreachable!("finishing a collective's request");
        };
        let Some(outcome) = task.take_outcome() else {
            unreachable!("a finished collective's outcome is taken once, by its request");
        };
        let result = outcome?;
        if let Some(out) = out {
            let bytes = result.bytes();
            if bytes.len() != out.len() {
                return Err(Error::Internal {
                    what: format!(
                        "{}: the collective's result has {} bytes for a buffer of {}",
                        task.call,
                        bytes.len(),
                        out.len()
                    ),
                });
            }
            out.copy_from_slice(bytes);
        }
        Ok(empty_status())
    }

    /// The rest of a wait's poll: what `polled` says, the request finished if it is.
    #[inline]
    fn polled(
        &mut self,
        polled: Poll<std::result::Result<Status, Failed>>,
    ) -> Poll<Result<Status>> {
        let outcome = match polled {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(status)) => Ok(status),
            // The wait failed (the run deadlocked or ended): the request stays active.
            Poll::Ready(Err(Failed::Wait(e))) => return Poll::Ready(Err(e)),
            Poll::Ready(Err(Failed::Request(e))) => Err(e),
        };
        Poll::Ready(self.finish_as(outcome))
    }

    /// Completes the request if it is done (`Some(status)`), without blocking for it.
    ///
    /// A test that finds the request incomplete lets other ranks progress: the simulator charges
    /// the model's `poll_cost` and runs whoever is due (`timing.md` S2), so a loop of `test`s
    /// ends; that is why this is `async`.
    pub async fn test(&mut self) -> Result<Option<Status>> {
        let out = self.try_complete()?;
        if out.is_none() {
            idle(&self.rt, "test").await;
        }
        Ok(out)
    }

    /// Completes the request if it is done, with no scheduling point.
    pub(crate) fn try_complete(&mut self) -> Result<Option<Status>> {
        let id = match &self.state {
            State::Null { status, .. } => return Ok(Some(*status)),
            State::Active { id, .. } => *id,
            State::Coll { task, .. } => {
                task.test();
                return if task.finished() {
                    self.finish_coll().map(Some)
                } else {
                    Ok(None)
                };
            }
        };
        let completion = self.rt.test(id).map_err(|e| stamped(&self.rt, e))?;
        let Some(completion) = completion else {
            return Ok(None);
        };
        self.complete_with(completion).map(Some)
    }

    /// Makes an active request null with its completion: the data into the buffer, the status
    /// or error out (a receive's `Truncate`, naming the call that made the request).
    fn complete_with(&mut self, mut completion: Completion<Payload>) -> Result<Status> {
        let State::Active { buf, .. } = &mut self.state else {
            unreachable!("completing an active request");
        };
        let outcome = completion.finish_into(buf.as_deref_mut()).map_err(|e| *e);
        self.finish_as(outcome)
    }

    /// Makes an active request null with its outcome, as a wait or test finished it (the data
    /// is in the buffer already): its status, or its own error, named after the call that made
    /// the request (a receive's `Truncate`) and stamped with the time.
    #[inline]
    fn finish_as(&mut self, outcome: std::result::Result<Status, Error>) -> Result<Status> {
        let State::Active { buf, names, .. } = &mut self.state else {
            unreachable!("finishing an active request");
        };
        let (buf, call) = (buf.take(), names.call);
        let (status, out) = match outcome {
            Ok(status) => (status, Ok(status)),
            // A request that failed reported its error once; waited for or tested again, it is
            // an inactive request (MPI's empty status), not a success with the failed message's.
            Err(e) => (empty_status(), Err(stamped(&self.rt, named(e, call)))),
        };
        self.state = State::Null { status, buf };
        out
    }

    /// Asks to cancel the request (`docs/p2p.md` §5). It must still be waited for; the status
    /// says whether it was cancelled.
    ///
    /// A nonblocking collective's request cannot be cancelled (MPI makes it erroneous):
    /// `Error::InvalidArgument`.
    pub fn cancel(&mut self) -> Result<()> {
        match &self.state {
            State::Active { id, .. } => self.rt.cancel(*id).map_err(|e| stamped(&self.rt, e)),
            State::Null { .. } => Ok(()),
            State::Coll { task, .. } => {
                let mut site = mpsim_proto::error::Site::new(self.rt.rank(), "cancel");
                site.time_ns = self.rt.virtual_time();
                Err(Error::InvalidArgument {
                    what: format!(
                        "{site}: the request of a nonblocking collective ({}) cannot be \
                         cancelled (MPI makes it erroneous); wait for it or test it",
                        task.call
                    ),
                })
            }
        }
    }

    fn done_now(&self) -> bool {
        match &self.state {
            State::Null { .. } => true,
            State::Active { id, .. } => self.rt.is_done(*id),
            State::Coll { task, .. } => {
                task.test();
                task.finished()
            }
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        match &self.state {
            State::Active { id, .. } => self.rt.let_go(*id),
            State::Coll { task, .. } => task.detach(),
            State::Null { .. } => {}
        }
    }
}

/// What a wait or test reports for an inactive request (MPI's empty status): one that failed
/// and was waited for again, an inactive persistent request.
pub(crate) fn empty_status() -> Status {
    Status {
        source: Status::NO_SOURCE,
        tag: Status::NO_TAG,
        bytes: 0,
        cancelled: false,
    }
}

/// An error as the program gets it: under the simulator, with the virtual time it happened at.
pub(crate) fn stamped(rt: &Rt, mut e: Error) -> Error {
    if let Some(t) = rt.virtual_time() {
        e.stamp_time(t);
    }
    e
}

/// An error of the protocol core as the program gets it: naming the program's call `call`
/// (the core knows only the operation: a `Truncate` names `recv`, whichever call posted it).
#[cold]
pub(crate) fn named(mut e: Error, call: &'static str) -> Error {
    if let Some(site) = e.site_mut() {
        site.call = call;
    }
    e
}

/// Waits for every request; returns their statuses in order, or the first error (every request
/// is still completed). [`wait_all_results`] returns every request's own outcome.
pub async fn wait_all(requests: &mut [Request<'_>]) -> Result<Vec<Status>> {
    wait_all_in(requests, "wait_all").await
}

/// [`wait_all`] inside the program's call `call` (`sendrecv`), which deadlock reports name.
pub(crate) async fn wait_all_in(
    requests: &mut [Request<'_>],
    call: &'static str,
) -> Result<Vec<Status>> {
    let mut statuses = Vec::with_capacity(requests.len());
    // Boxed (8 bytes in the state of every rank waiting here, not an error's 48: a
    // million-rank collective has a million of them), and rare.
    let mut first_error: Option<Box<Error>> = None;
    // One poll function over the requests in order, each polled in place (no future per
    // request) and finished as it completes; one wait of the runtime on them all
    // (`Rt::wait_in`), which returns with the last (S1) and which a
    // deadlock report names with every request still incomplete.
    let last = requests.iter().rposition(|r| !r.is_null());
    poll_fn(|_| {
        while let Some((r, tail)) = requests[statuses.len()..].split_first_mut() {
            let rest = |ids: &mut Vec<ReqId>| ids.extend(tail.iter().filter_map(Request::id));
            let rest = (Some(statuses.len()) != last).then_some(&rest as RestOfWait<'_>);
            match r.poll_wait_in(rest, call) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(s)) => statuses.push(s),
                Poll::Ready(Err(e)) => {
                    statuses.push(Status::default());
                    first_error.get_or_insert_with(|| Box::new(e));
                }
            }
        }
        Poll::Ready(())
    })
    .await;
    match first_error {
        Some(e) => Err(*e),
        None => Ok(statuses),
    }
}

/// Waits until one active request completes; returns its index and status. `None` when no
/// request is active (MPI_UNDEFINED). Ties go to the lowest index.
pub async fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    wait_any_in(requests, "wait_any").await
}

/// [`wait_any`] inside the program's call `call` (`bsp_sync`), which deadlock reports name.
pub(crate) async fn wait_any_in(
    requests: &mut [Request<'_>],
    call: &'static str,
) -> Result<Option<(usize, Status)>> {
    let Some(index) = first_done(requests, call).await? else {
        return Ok(None);
    };
    let status = requests[index].wait_in_place(Some(call)).await?;
    Ok(Some((index, status)))
}

/// Waits until one active request is complete, without completing it; its index, the lowest
/// one complete. `None` when no request is active. An error here is the wait's own (the run
/// deadlocked or was aborted), not a request's.
async fn first_done(requests: &[Request<'_>], call: &'static str) -> Result<Option<usize>> {
    wait_for(requests, Needs::Any, call).await
}

/// Waits in `call` until `needs` of the active requests are complete, finishing none: one
/// wait of the runtime on all of them (`Rt::wait_requests`), which ends when the
/// call returns (`docs/timing.md` S1) and which a deadlock report names with every request
/// it waits on. The index of the lowest complete one; `None` when none is active. An error
/// here is the wait's own (the run deadlocked or was aborted), not a request's.
async fn wait_for(
    requests: &[Request<'_>],
    needs: Needs,
    call: &'static str,
) -> Result<Option<usize>> {
    // The active requests' ids (on the stack up to 8).
    let active = |r: &Request<'_>| r.id();
    debug_assert_eq!(needs, Needs::Any, "wait_any and wait_some wait for one");
    if requests.iter().any(Request::is_coll) {
        return wait_for_any_mixed(requests, call).await;
    }
    let ids: SmallVec<[ReqId; 8]> = requests.iter().filter_map(active).collect();
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(None);
    };
    let rt = &first.rt;
    let done = poll_fn(|_| rt.wait_requests(&ids, needs, call)).await?;
    // The `done`th active request's place.
    Ok(requests
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_null())
        .nth(done)
        .map(|(i, _)| i))
}

/// [`wait_for`] any one of `requests` of which some are nonblocking collectives': their tasks
/// are moved on as the rank waits on the point-to-point requests and on those the tasks' steps
/// await (one wait of the runtime on them all), until a request is complete.
#[cold]
#[inline(never)]
async fn wait_for_any_mixed(requests: &[Request<'_>], call: &'static str) -> Result<Option<usize>> {
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(None);
    };
    let rt = &first.rt;
    poll_fn(|_| {
        loop {
            let mut ids: SmallVec<[ReqId; 8]> = SmallVec::new();
            for (i, r) in requests.iter().enumerate() {
                match &r.state {
                    State::Null { .. } => {}
                    State::Active { id, .. } => {
                        if rt.done_now(*id) {
                            return end_wait(rt, call).map_ok(|()| Some(i));
                        }
                        ids.push(*id);
                    }
                    State::Coll { task, .. } => {
                        task.advance();
                        if task.finished() {
                            return end_wait(rt, call).map_ok(|()| Some(i));
                        }
                        ids.extend(task.awaiting());
                    }
                }
            }
            match rt.wait_requests(&ids, Needs::Any, call) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(_)) => {}
            }
        }
    })
    .await
}

/// Ends the rank's wait in `call`, if it blocked in one (as a wait that returns does: its time,
/// its trace span).
fn end_wait(rt: &Rt, call: &'static str) -> Poll<Result<()>> {
    rt.wait_requests(&[], Needs::All, call).map_ok(drop)
}

/// Waits until at least one active request completes; returns every completed one (index,
/// status) in index order. Empty when none is active. On a request's error, the requests
/// completed with it are lost: [`wait_some_results`] keeps every outcome.
pub async fn wait_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>> {
    let Some(index) = first_done(requests, "wait_some").await? else {
        return Ok(Vec::new());
    };
    let done = complete_ready(requests)?;
    if done.is_empty() {
        // `first_done` saw `index` complete: waiting for it returns at once.
        return Ok(vec![(
            index,
            requests[index].wait_in_place(Some("wait_some")).await?,
        )]);
    }
    Ok(done)
}

/// Completes every request if all are complete (`Some`), else changes nothing (`None`). On a
/// request's error, the others' statuses are lost: [`test_all_results`] keeps every outcome.
pub async fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>> {
    if !requests.iter().all(Request::done_now) {
        if let Some(r) = requests.first() {
            idle(&r.rt, "test_all").await;
        }
        return Ok(None);
    }
    let mut out = Vec::with_capacity(requests.len());
    for r in requests.iter_mut() {
        out.push(complete_outcome(r)?);
    }
    Ok(Some(out))
}

/// What [`test_any`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestAny {
    /// The request at this index completed (it is now inactive), with its status.
    Completed(usize, Status),
    /// Some request is active, none is complete yet.
    Pending,
    /// No request is active, so none will complete (MPI's flag set with `MPI_UNDEFINED`): a
    /// loop that tests until this ends.
    NoneActive,
}

impl TestAny {
    /// The completed request's index and status, if one completed.
    pub fn completed(self) -> Option<(usize, Status)> {
        match self {
            TestAny::Completed(i, s) => Some((i, s)),
            TestAny::Pending | TestAny::NoneActive => None,
        }
    }
}

/// Completes the lowest-index complete active request, if any; tells "none complete yet"
/// ([`TestAny::Pending`], after a poll that lets other ranks progress) from "none active"
/// ([`TestAny::NoneActive`], at once), as MPI's `MPI_Testany` does.
///
/// ```
/// use mpsim::{Comm, Launcher, TestAny, test_any};
/// Launcher::new(2).run(|world: Comm| async move {
///     if world.rank() == 0 {
///         let (mut a, mut b) = ([0u8; 1], [0u8; 1]);
///         let mut reqs = [world.irecv(&mut a, 1, 0)?, world.irecv(&mut b, 1, 1)?];
///         let mut tags = Vec::new();
///         loop {
///             match test_any(&mut reqs).await? {
///                 TestAny::Completed(_, status) => tags.push(status.tag),
///                 TestAny::Pending => {}
///                 TestAny::NoneActive => break,
///             }
///         }
///         assert_eq!(tags, [0, 1]);
///     } else {
///         world.send(&[7u8], 0, 0).await?;
///         world.send(&[8u8], 0, 1).await?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), mpsim::Error>(())
/// ```
pub async fn test_any(requests: &mut [Request<'_>]) -> Result<TestAny> {
    let mut active = None;
    for (i, r) in requests.iter_mut().enumerate() {
        if r.is_null() {
            continue;
        }
        if r.done_now() {
            return Ok(TestAny::Completed(i, complete_outcome(r)?));
        }
        active.get_or_insert(i);
    }
    let Some(first) = active else {
        return Ok(TestAny::NoneActive);
    };
    idle(&requests[first].rt, "test_any").await;
    Ok(TestAny::Pending)
}

/// Completes every complete active request; returns them in index order: empty when some
/// request is active but none complete (after a poll that lets other ranks progress), `None`
/// when none is active (MPI's `MPI_UNDEFINED` count; at once). On a request's error, the
/// others completed with it are lost: [`test_some_results`] keeps every outcome.
pub async fn test_some(requests: &mut [Request<'_>]) -> Result<Option<Vec<(usize, Status)>>> {
    let out = complete_ready(requests)?;
    if out.is_empty() {
        let Some(r) = requests.iter().find(|r| !r.is_null()) else {
            return Ok(None);
        };
        idle(&r.rt, "test_some").await;
    }
    Ok(Some(out))
}

/// Completes every complete active request, with no scheduling point.
fn complete_ready(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>> {
    let mut out = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done_now() {
            out.push((i, complete_outcome(r)?));
        }
    }
    Ok(out)
}

/// Waits for every request; returns each one's own outcome, in order: its status, or its
/// error (`docs/p2p.md` §4: MPI's `MPI_ERR_IN_STATUS` with each status's `MPI_ERROR`).
/// [`wait_all`] returns the first error only; use this one when several requests can fail
/// (truncated receives, say) and each failure matters.
///
/// ```
/// use mpsim::{Comm, Error, Launcher, wait_all_results};
///
/// Launcher::new(2)
///     .run(|world: Comm| async move {
///         if world.rank() == 0 {
///             world.send(&[1u8; 8], 1, 0).await?;
///             world.send(&[2u8; 2], 1, 1).await?;
///         } else {
///             let (mut short, mut long) = ([0u8; 4], [0u8; 4]);
///             let mut reqs = [world.irecv(&mut short, 0, 0)?, world.irecv(&mut long, 0, 1)?];
///             let outcomes = wait_all_results(&mut reqs).await;
///             assert!(matches!(outcomes[0], Err(Error::Truncate { .. })));
///             assert_eq!(outcomes[1].as_ref().map(|s| s.bytes), Ok(2));
///         }
///         Ok(())
///     })
///     .unwrap();
/// ```
pub async fn wait_all_results(requests: &mut [Request<'_>]) -> Vec<Result<Status>> {
    let mut outcomes = Vec::with_capacity(requests.len());
    // As `wait_all_in`, keeping each outcome.
    let last = requests.iter().rposition(|r| !r.is_null());
    poll_fn(|_| {
        while let Some((r, tail)) = requests[outcomes.len()..].split_first_mut() {
            let rest = |ids: &mut Vec<ReqId>| ids.extend(tail.iter().filter_map(Request::id));
            let rest = (Some(outcomes.len()) != last).then_some(&rest as RestOfWait<'_>);
            let polled = r.poll_wait_in(rest, "wait_all");
            match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcomes.push(outcome),
            }
        }
        Poll::Ready(())
    })
    .await;
    outcomes
}

/// Completes every request if all are complete (`Some`, each one's own outcome, as
/// [`wait_all_results`]), else changes nothing (`None`).
pub async fn test_all_results(requests: &mut [Request<'_>]) -> Option<Vec<Result<Status>>> {
    if !requests.iter().all(Request::done_now) {
        if let Some(r) = requests.first() {
            idle(&r.rt, "test_all").await;
        }
        return None;
    }
    Some(requests.iter_mut().map(complete_outcome).collect())
}

/// Waits until at least one active request completes; returns every completed one with its
/// own outcome (index, status or error), in index order, none lost to another's error (as
/// [`wait_some`] loses them). Empty when none is active. The outer error is the wait's own:
/// the run deadlocked or was aborted.
pub async fn wait_some_results(
    requests: &mut [Request<'_>],
) -> Result<Vec<(usize, Result<Status>)>> {
    let Some(index) = first_done(requests, "wait_some").await? else {
        return Ok(Vec::new());
    };
    let done = complete_ready_results(requests);
    if done.is_empty() {
        // As in `wait_some`.
        let outcome = requests[index].wait_in_place(Some("wait_some")).await;
        return Ok(vec![(index, outcome)]);
    }
    Ok(done)
}

/// Completes every complete active request; returns each with its own outcome, in index
/// order (as [`wait_some_results`], without blocking): empty when none is complete yet, `None`
/// when none is active (as [`test_some`]).
pub async fn test_some_results(
    requests: &mut [Request<'_>],
) -> Option<Vec<(usize, Result<Status>)>> {
    let out = complete_ready_results(requests);
    if out.is_empty() {
        let r = requests.iter().find(|r| !r.is_null())?;
        idle(&r.rt, "test_some").await;
    }
    Some(out)
}

/// Completes every complete active request, with no scheduling point, keeping each outcome.
fn complete_ready_results(requests: &mut [Request<'_>]) -> Vec<(usize, Result<Status>)> {
    let mut out = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if !r.is_null() && r.done_now() {
            out.push((i, complete_outcome(r)));
        }
    }
    out
}

/// The outcome of a request known to be complete.
fn complete_outcome(r: &mut Request<'_>) -> Result<Status> {
    r.try_complete().map(|s| s.expect("checked complete"))
}

/// A poll that found nothing: charge it and let every other rank run once.
pub(crate) async fn idle(rt: &Rt, call: &'static str) {
    rt.idle(call);
    yield_once().await;
}

/// Returns to the executor once. The simulator resumes the rank at the time its runtime
/// scheduled (after `compute` or `idle`); the threads backend re-polls at once.
pub(crate) async fn yield_once() {
    let mut yielded = false;
    poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            State::Null { status, .. } => f.debug_tuple("Request::Null").field(status).finish(),
            State::Active { id, names, .. } => f
                .debug_struct("Request")
                .field("id", id)
                .field("call", &names.call)
                .finish(),
            State::Coll { task, .. } => f
                .debug_struct("Request")
                .field("call", &task.call)
                .field("finished", &task.finished())
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    use mpsim_proto::error::Error;
    use mpsim_proto::matching::{ContextId, Envelope, Pattern};
    use mpsim_proto::p2p::{Config, Endpoint, Packet, SendCall, SendMode, Transmit};
    use mpsim_proto::runtime::endpoint::{self, first_done};
    use mpsim_proto::runtime::{Call, Needs, Payload, RankRuntime, Started, Wait, Waited, Work};

    use super::{Names, Request, wait_any};
    use crate::runtime::Rt;

    /// A runtime whose packets arrive only when a wait polls (as on the threads backend),
    /// built on the seam alone (the API layer's `Rt::Other`).
    struct TakesInOnPoll {
        endpoint: RefCell<Endpoint<Payload>>,
        inbox: RefCell<Vec<Packet<Payload>>>,
    }

    impl TakesInOnPoll {
        /// Takes in the packets waiting.
        fn take_in(&self, ep: &mut Endpoint<Payload>) {
            for packet in self.inbox.borrow_mut().drain(..) {
                ep.handle_packet(1, packet);
            }
        }
    }

    impl RankRuntime for TakesInOnPoll {
        fn rank(&self) -> u32 {
            0
        }
        fn size(&self) -> u32 {
            2
        }
        fn start(&self, call: Call) -> Result<Started, Error> {
            let mut ep = self.endpoint.borrow_mut();
            match call {
                Call::Recv {
                    pattern, capacity, ..
                } => Ok(Started::Request(Some(ep.irecv(pattern, capacity)))),
                call => endpoint::answer(&mut ep, call).0,
            }
        }
        fn poll_wait(&self, wait: Wait<'_>) -> Poll<Result<Waited, Error>> {
            let mut ep = self.endpoint.borrow_mut();
            self.take_in(&mut ep);
            match wait {
                Wait::Request { req, .. } => match ep.take_if_done(req) {
                    Some(c) => Poll::Ready(Ok(Waited::Completion(c))),
                    None => Poll::Pending,
                },
                Wait::Requests { reqs, needs, .. } => match (needs, first_done(&ep, reqs)) {
                    (Needs::Any, (Some(i), _)) | (Needs::All, (Some(i), None)) => {
                        Poll::Ready(Ok(Waited::Index(i)))
                    }
                    _ => Poll::Pending,
                },
                Wait::Probe { .. } => Poll::Pending,
                Wait::BufferFree => Poll::Ready(Ok(Waited::Done)),
            }
        }
        fn block(&self) {}
        fn idle(&self, _call: &'static str) {}
        fn compute(&self, _work: Work) {}
        fn abort(&self, _code: i32) {}
        fn now_ns(&self) -> u64 {
            0
        }
    }

    /// P17 regression: a completion that `wait_any`'s own poll takes in ends the wait at once
    /// (it used to return `Pending` with nothing left to wake the rank).
    #[test]
    fn p2p_p17_wait_any_sees_a_completion_its_own_poll_took_in() {
        let rt = Rc::new(TakesInOnPoll {
            endpoint: RefCell::new(Endpoint::new(0, Config::default())),
            inbox: RefCell::new(Vec::new()),
        });
        let ctx = ContextId(0);
        // The message rank 1 sends, waiting in rank 0's inbox.
        let mut sender = Endpoint::<Payload>::new(1, Config::default());
        let send = SendCall {
            call: "isend",
            mode: SendMode::Standard,
            to: 0,
            envelope: Envelope::new(ctx, 1, 0),
            payload: Payload::from_slice(&[7; 4]),
            blocking: false,
        };
        let mut inbox = rt.inbox.borrow_mut();
        let sent = sender
            .start_send(send, |t: Transmit<Payload>| inbox.push(t.packet))
            .expect("send")
            .expect("a nonblocking send's request");
        drop(inbox);
        let _ = sender.test(sent);

        let mut buf = [0u8; 4];
        let id = rt.endpoint.borrow_mut().irecv(Pattern::new(ctx, 1, 0), 4);
        let dyn_rt = Rt::Other(rt.clone());
        let names = Names {
            call: "irecv",
            wait: "recv",
        };
        let mut reqs = [Request::active(dyn_rt, id, names, Some(&mut buf))];
        let mut cx = Context::from_waker(Waker::noop());
        let polled = pin!(wait_any(&mut reqs)).as_mut().poll(&mut cx);
        match polled {
            Poll::Ready(Ok(Some((0, status)))) => assert_eq!((status.source, status.bytes), (1, 4)),
            other => panic!("wait_any must complete on its first poll, got {other:?}"),
        }
        drop(reqs);
        assert_eq!(buf, [7; 4]);
    }
}
