//! Progress of nonblocking collectives (`ibarrier`, `iallreduce`, ...): a rank's collectives
//! in flight, and what moves them on while the rank's program waits for anything.
//!
//! # Why here
//!
//! A nonblocking collective is a run of point-to-point steps (the same algorithms as the
//! blocking calls, `crate::coll`): after each step's messages complete, this rank must post the
//! next. MPI's rule is that it completes through ordinary waits and tests, including a wait on
//! an unrelated request or a blocking send or receive. So something must run the collective's
//! next step whenever this rank's program is polled, whatever it waits in. That is this module:
//! each collective in flight is a [`Task`] (its algorithm as a future, made of the same code as
//! the blocking call, whose waits only test: they never block the rank), every rank has one
//! list of them ([`Progress`], shared by all its communicators), and the rank's program is
//! wrapped once, where the backend runs it, in [`Driven`], which moves the tasks on before each
//! poll of the program.
//!
//! # Why before each poll, and not inside the waits
//!
//! - Under `sim` a rank blocked in a wait is woken by the completion of any of its requests
//!   (the kernel's flag), and its program is then polled from the top. A woken wait that is not
//!   over goes back to the time it began (S1: only a returning wait moves a clock), so a step
//!   posted from inside it would be sent in the past. Polled first, at the wake, the tasks post
//!   their next steps at the time the messages that let them do so arrived.
//! - One check per poll of a rank's program, in one place: no wait, blocking call or request
//!   pays for it, and a program with no collective in flight pays two loads and a branch per
//!   resume (`docs/collectives.md` §7 has the ring's count).
//!
//! # The order of a poll, and why it is enough
//!
//! 1. Every task one of whose awaited requests is complete (asked without acting:
//!    `Rt::done_now`) is polled, until none is (a task's test can take in input that completes
//!    another's).
//! 2. The program is polled. Its wait looks at its own requests after whatever input it took in.
//! 3. If that input completed a task's request (the threads backend takes in mail in every
//!    wait), back to 1. Otherwise the rank sleeps: under `sim` until the next completion of any
//!    of its requests, on threads until the next mail, both of which poll again.
//!
//! So no completion is left unseen: the last input before the rank sleeps was taken in by the
//! program's wait, which then looked at its own requests, and step 3 looked at the tasks'.
//! Under a backend reached through the seam alone (`Rt::Other`), whose `Call::IsDone` may take
//! in input itself, a rank with a collective in flight polls again at once instead of sleeping
//! (it spins until the collective completes).
//!
//! # A wait on a collective's request
//!
//! `Request::wait` (and the rest of the family) on a nonblocking collective's request moves
//! its task on, then waits in the backend on the requests the task's step awaits
//! (`Rt::wait_requests`), named after the collective: a deadlock report names the rank, the
//! collective and the peers of that step. A wait on an unrelated request names that request.
//!
//! # Buffers
//!
//! A task owns everything it works on: the call copies the input it needs, the task computes
//! into vectors of its own, and the wait (or test) that completes the request copies the result
//! into the buffer the request borrows, as a point-to-point receive's request does. So dropping
//! the request, or leaking it, is memory-safe; a dropped request's collective goes on in the
//! background (the other ranks need this rank's part), its result is discarded, and its error,
//! if any, is the rank's error when its program ends.
//!
//! # The end of a program
//!
//! A program that returns `Ok` with collectives still in flight (requests dropped) has them
//! driven to completion before its rank ends (waiting on their requests, so a collective that
//! cannot complete is a deadlock naming it); a program that fails ends at once.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytemuck::Pod;
use mpsim_proto::error::{Error, Result};
use mpsim_proto::p2p::ReqId;
use mpsim_proto::runtime::Needs;
use smallvec::SmallVec;

use crate::Comm;
use crate::coll::policy::Policy;
use crate::comm::WeakComm;
use crate::runtime::Rt;

/// A task's result: the bytes the completing wait copies into the request's buffer.
pub(crate) trait Output {
    fn bytes(&self) -> &[u8];
}

impl<T: Pod> Output for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

/// What a task ends with.
pub(crate) type Outcome = Result<Box<dyn Output>>;

/// The requests a task's current step waits for: written by the step (`coll::Ctx`), read to
/// know whether the task can move on and what its wait waits on.
pub(crate) type Awaiting = Rc<RefCell<SmallVec<[ReqId; 4]>>>;

/// One nonblocking collective in flight.
pub(crate) struct Task {
    /// The call (`"ibcast"`), which waits on it and its errors name.
    pub call: &'static str,
    rt: Rt,
    state: RefCell<TaskState>,
    awaiting: Awaiting,
    /// Its request was dropped before it completed.
    detached: Cell<bool>,
    /// The rank's list it is on, which keeps a dropped request's error.
    progress: Weak<Progress>,
}

enum TaskState {
    Running(Pin<Box<dyn Future<Output = Outcome>>>),
    /// Its outcome, until the request takes it.
    Done(Option<Outcome>),
}

impl Task {
    /// A task running `body`, whose steps record what they wait for in `awaiting`.
    pub fn new(
        call: &'static str,
        rt: Rt,
        progress: &Rc<Progress>,
        awaiting: Awaiting,
        body: Pin<Box<dyn Future<Output = Outcome>>>,
    ) -> Self {
        Task {
            call,
            rt,
            state: RefCell::new(TaskState::Running(body)),
            awaiting,
            detached: Cell::new(false),
            progress: Rc::downgrade(progress),
        }
    }

    /// Whether it is running and a request its step awaits is complete.
    fn ready(&self) -> bool {
        self.running()
            && self
                .awaiting
                .borrow()
                .iter()
                .any(|&id| self.rt.done_now(id))
    }

    fn running(&self) -> bool {
        matches!(*self.state.borrow(), TaskState::Running(_))
    }

    /// Runs its body as far as it goes now. Polled when made, then only when [`Task::ready`].
    pub fn poll_body(&self) {
        let mut state = self.state.borrow_mut();
        let TaskState::Running(body) = &mut *state else {
            return;
        };
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(outcome) = body.as_mut().poll(&mut cx) {
            *state = TaskState::Done(Some(outcome));
            return;
        }
        debug_assert!(
            !self.awaiting.borrow().is_empty(),
            "a pending collective step waits for some request"
        );
    }

    /// Moves it on if it can: true if it was polled.
    pub fn advance(&self) -> bool {
        if !self.ready() {
            return false;
        }
        self.poll_body();
        true
    }

    /// Moves it on if it can, looking at its requests as a test does (`Call::IsDone`, which a
    /// backend may answer after taking in what arrived: the threads backend does): for the
    /// test family, in whose loops no wait takes input in.
    pub fn test(&self) {
        let any_done =
            self.running() && self.awaiting.borrow().iter().any(|&id| self.rt.is_done(id));
        if any_done {
            self.poll_body();
        }
    }

    /// Whether it has completed (its outcome may have been taken).
    pub fn finished(&self) -> bool {
        !self.running()
    }

    /// Its outcome, once: `None` while running or once taken.
    pub fn take_outcome(&self) -> Option<Outcome> {
        match &mut *self.state.borrow_mut() {
            TaskState::Done(outcome) => outcome.take(),
            TaskState::Running(_) => None,
        }
    }

    /// The requests its step waits for.
    pub fn awaiting(&self) -> SmallVec<[ReqId; 4]> {
        self.awaiting.borrow().clone()
    }

    /// Its request was dropped: it goes on in the background, or, complete, its error (if it
    /// failed) is kept for the end of the rank's program.
    pub fn detach(&self) {
        if self.running() {
            self.detached.set(true);
        } else if let Some(Err(e)) = self.take_outcome()
            && let Some(p) = self.progress.upgrade()
        {
            p.detached_error.borrow_mut().get_or_insert(e);
        }
    }
}

/// A rank's nonblocking collectives in flight, shared by all its communicators (made on the
/// first one, or when a communicator is made from the world).
pub(crate) struct Progress {
    tasks: RefCell<Vec<Rc<Task>>>,
    /// The rank's world communicator, whose `in_flight` flag says whether `tasks` has any:
    /// what [`Driven`] checks on every poll.
    world: WeakComm,
    /// Nonblocking collectives started so far, by communicator id: the number that gives each
    /// its own matching context (`coll::Ctx`).
    started: RefCell<BTreeMap<u64, u64>>,
    /// The first error of a collective whose request was dropped.
    detached_error: RefCell<Option<Error>>,
}

impl Progress {
    /// The progress of the rank whose world communicator is `world`.
    fn new(world: &Comm) -> Self {
        Progress {
            tasks: RefCell::default(),
            world: world.downgrade(),
            started: RefCell::default(),
            detached_error: RefCell::default(),
        }
    }

    /// Sets the world's `in_flight` flag to whether `tasks` has any.
    fn note_in_flight(&self) {
        if let Some(world) = self.world.upgrade() {
            world.in_flight().set(!self.tasks.borrow().is_empty());
        }
    }

    /// The sequence number of the next nonblocking collective on the communicator `comm_id`.
    pub fn next_on(&self, comm_id: u64) -> u64 {
        let mut started = self.started.borrow_mut();
        let n = started.entry(comm_id).or_insert(0);
        let seq = *n;
        *n += 1;
        seq
    }

    /// Adds a task (polled once already) unless it has completed.
    pub fn add(&self, task: Rc<Task>) {
        if task.finished() {
            return;
        }
        self.tasks.borrow_mut().push(task);
        self.note_in_flight();
    }

    fn is_idle(&self) -> bool {
        self.tasks.borrow().is_empty()
    }

    /// Moves every task on that can move, until none can; drops the completed ones from the
    /// list (a detached one's error is kept for the program's end). True if any moved.
    fn advance(&self) -> bool {
        let mut moved = false;
        loop {
            let mut any = false;
            let n = self.tasks.borrow().len();
            for i in 0..n {
                let task = Rc::clone(&self.tasks.borrow()[i]);
                any |= task.advance();
            }
            if !any {
                break;
            }
            moved = true;
        }
        // Completed ones leave, whether they completed here or in a wait on their request.
        self.tasks.borrow_mut().retain(|t| {
            if t.running() {
                return true;
            }
            if t.detached.get()
                && let Some(Err(e)) = t.take_outcome()
            {
                self.detached_error.borrow_mut().get_or_insert(e);
            }
            false
        });
        self.note_in_flight();
        moved
    }

    /// Whether a task can move on now.
    fn any_ready(&self) -> bool {
        self.tasks.borrow().iter().any(|t| t.ready())
    }

    /// Every request the tasks' steps wait for, and the first task's call.
    fn awaiting_all(&self) -> (Vec<ReqId>, &'static str) {
        let tasks = self.tasks.borrow();
        let ids = tasks.iter().flat_map(|t| t.awaiting()).collect();
        (ids, tasks.first().map_or("a collective", |t| t.call))
    }

    /// The program's result `out`, unless it is `Ok` and a dropped collective failed.
    fn with_detached<T>(&self, out: Result<T>) -> Result<T> {
        match (out, self.detached_error.borrow_mut().take()) {
            (Ok(_), Some(e)) => Err(e),
            (out, _) => out,
        }
    }
}

pin_project_lite::pin_project! {
    /// A rank's program, with its nonblocking collectives moved on before each poll (module
    /// docs). Every backend's launcher runs the program inside one. The program first: a poll
    /// with no collective in flight passes its address on as it is.
    #[repr(C)]
    pub(crate) struct Driven<F, T> {
        #[pin]
        program: F,
        world: Comm,
        // The program's result, when it ended with collectives still in flight.
        ended: Option<Box<Result<T>>>,
    }
}

/// The program run on the world communicator of `rt`, whose collectives follow the run's
/// `policy`, driven (the launchers' entry).
pub(crate) fn driven<F, Fut, T>(rt: Rt, policy: Arc<Policy>, program: F) -> Driven<Fut, T>
where
    F: FnOnce(Comm) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let world = Comm::world(rt, policy);
    Driven {
        world: world.clone(),
        ended: None,
        program: program(world),
    }
}

impl<F: Future<Output = Result<T>>, T> Future for Driven<F, T> {
    type Output = Result<T>;

    /// Two loads and one branch when no collective is in flight: the world communicator, and
    /// its flag.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let mut this = self.project();
        if this.world.in_flight().get() {
            return drive(this.world, this.ended, this.program, cx);
        }
        match this.program.as_mut().poll(cx) {
            Poll::Ready(out) => ended(this.world, this.ended, this.program, out, cx),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The program ended with `out`: the rank ends with it, unless the program started
/// collectives in this very poll and ended without them (their requests dropped), which are
/// then driven to completion first. Out of line: once per rank.
#[cold]
#[inline(never)]
fn ended<F: Future<Output = Result<T>>, T>(
    world: &Comm,
    ended: &mut Option<Box<Result<T>>>,
    program: Pin<&mut F>,
    out: Result<T>,
    cx: &mut Context<'_>,
) -> Poll<Result<T>> {
    if out.is_err() || !world.in_flight().get() {
        return Poll::Ready(out);
    }
    *ended = Some(Box::new(out));
    drive(world, ended, program, cx)
}

/// A poll with collectives in flight (module docs, "The order of a poll").
#[cold]
#[inline(never)]
fn drive<F: Future<Output = Result<T>>, T>(
    world: &Comm,
    ended: &mut Option<Box<Result<T>>>,
    mut program: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<Result<T>> {
    let p = Rc::clone(world.progress().expect("collectives in flight"));
    let rt = world.rt();
    loop {
        p.advance();
        if ended.is_none()
            && let Poll::Ready(out) = program.as_mut().poll(cx)
        {
            if out.is_err() || p.is_idle() {
                return Poll::Ready(p.with_detached(out));
            }
            *ended = Some(Box::new(out));
            continue;
        }
        if p.is_idle() {
            return match ended.take() {
                Some(out) => Poll::Ready(p.with_detached(*out)),
                None => Poll::Pending,
            };
        }
        if p.any_ready() {
            continue;
        }
        if rt.through_seam() {
            cx.waker().wake_by_ref();
        }
        if ended.is_none() {
            return Poll::Pending;
        }
        // The program has ended: the rank waits for its collectives' messages.
        let (ids, call) = p.awaiting_all();
        match rt.wait_requests(&ids, Needs::Any, call) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
        }
    }
}

impl Comm {
    /// The rank's collectives in flight, if it has had a [`Progress`] made.
    #[inline(always)]
    pub(crate) fn progress(&self) -> Option<&Rc<Progress>> {
        self.progress_cell().get()
    }

    /// The rank's [`Progress`], made on first use (on the world: a communicator made from
    /// another has its maker's).
    pub(crate) fn progress_made(&self) -> &Rc<Progress> {
        self.progress_cell()
            .get_or_init(|| Rc::new(Progress::new(self)))
    }

    /// What a communicator made from this one shares: the rank's [`Progress`].
    pub(crate) fn progress_for_child(&self) -> OnceCell<Rc<Progress>> {
        OnceCell::from(Rc::clone(self.progress_made()))
    }
}
