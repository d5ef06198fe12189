//! One rank run in this process: [`run_one`], for a backend that runs one rank per process (an
//! MPI backend: a rank per MPI process) or drives a rank's calls from elsewhere (the C
//! interface, whose ranks' calls come from other processes).
//!
//! Why beside the launcher and not in it: [`crate::Launcher`] runs every rank of a run in this
//! process and owns the backends it runs them on; here the caller owns the backend, has made
//! this rank's [`RankRuntime`] itself, and needs only the program run on it. The sim and threads
//! backends do not come through here: each drives its ranks with its own loop (the simulator
//! all of them on one thread, the threads backend parking with its own mailboxes).
//!
//! # The contract
//!
//! - **Who owns what.** The caller makes the runtime, for this rank, on this thread (it is an
//!   `Rc`: never shared with another thread), and hands it over. [`run_one`] builds the rank's
//!   world [`Comm`] on it and gives that to the program; everything the program makes from it
//!   (communicators, requests) holds the runtime too. All of that is dropped before `run_one`
//!   returns, so that afterwards the runtime's only owners are the clones the caller kept
//!   (which can then shut the rank's transport down).
//! - **Which thread.** The calling thread: the program's future is polled there and only
//!   there, and is never sent to another thread (it need not be `Send`).
//! - **What wakes it.** When the program is pending, the loop polls it again at once if it
//!   woke itself (a yield: `compute`, a poll that found nothing); otherwise it calls the
//!   runtime's [`RankRuntime::block`], which returns when the wait may be over (a packet
//!   arrived) or can no longer be (the run failed: a deadlock, another rank's abort, so that
//!   the next poll returns the error), and polls again. A program that awaits a future of its
//!   own that mpsim does not drive (a channel of another library) is polled again only when
//!   `block` returns. Telling a deadlock from a slow peer is the runtime's job (as the threads
//!   backend's watchdog does): a runtime whose `block` never returns leaves the rank there.
//! - **How it ends.** With the program's result, as the backends that run every rank end a
//!   rank: its value; or its error, a program's own failure ([`Error::Program`]) stamped with
//!   the rank, and any error with the runtime's virtual time if it has one; a panic of the
//!   program as [`Error::Aborted`] with the panic's message (the panic hook has printed it
//!   already). A program that calls [`Comm::abort`] has the runtime's `abort` called first
//!   (which may end the process, as `MPI_Abort` does); if that returns, `run_one` returns
//!   [`Error::Abort`] naming the rank and the code. What is left on the runtime's side (requests
//!   the program did not finish, messages it did not receive) is the runtime's to look at once
//!   `run_one` has returned: it still holds its endpoint.

use std::cell::Cell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use mpsim_proto::error::{Error, Result};

use crate::comm::Comm;
use crate::progress::driven;
use crate::runtime::Rt;

/// The trait a backend implements for one rank, which [`run_one`] runs a program on (from
/// `mpsim-proto`, where the sans-IO protocol core it drives lives).
pub use mpsim_proto::runtime::RankRuntime;

thread_local! {
    /// While [`run_one`] drives a program on this thread, `Some`: then `Some(code)` once the
    /// program called [`Comm::abort`] with `code` ([`note_abort`]). `None` on threads where no
    /// `run_one` runs (the simulator's, the threads backend's ranks): an abort there is the
    /// backend's.
    static DRIVING: Cell<Option<Option<i32>>> = const { Cell::new(None) };
}

/// Runs `program` as one rank, on `runtime` (a backend's runtime for that rank), on this
/// thread: builds the rank's world communicator, drives the program's future until it is
/// done, blocking in the runtime ([`RankRuntime::block`]) while it waits, and returns the
/// program's result. The module doc states the contract: who owns the runtime, which thread, what wakes
/// it, how a run ends.
///
/// ```
/// use std::rc::Rc;
///
/// use mpsim::rank::{RankRuntime, run_one};
/// use mpsim::{Comm, Result};
///
/// /// One rank of a run: what a process of an MPI backend does with the runtime it made.
/// fn rank_main(runtime: Rc<dyn RankRuntime>) -> Result<u64> {
///     run_one(runtime, |world: Comm| async move {
///         let (me, n) = (world.rank(), world.size());
///         let mut got = [0u64];
///         let (right, left) = ((me + 1) % n, (me + n - 1) % n);
///         world.sendrecv(&[u64::from(me)], right, 0, &mut got, left, 0).await?;
///         Ok(got[0])
///     })
/// }
/// # let _ = rank_main;
/// ```
pub fn run_one<F, Fut, T>(runtime: Rc<dyn RankRuntime>, program: F) -> Result<T>
where
    F: FnOnce(Comm) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    run_one_with(runtime, crate::coll::policy::Policy::unnamed(), program)
}

/// [`run_one`], with the collectives following `policy` (a launcher's run: `--coll`,
/// `--reproducible`).
pub(crate) fn run_one_with<F, Fut, T>(
    runtime: Rc<dyn RankRuntime>,
    policy: Arc<crate::coll::policy::Policy>,
    program: F,
) -> Result<T>
where
    F: FnOnce(Comm) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let rank = runtime.rank();
    let _driving = Driving::start();
    let rt = Rt::Other(Rc::clone(&runtime));
    // The program, its communicators and requests are dropped at the end of this closure,
    // before `run_one` returns (the contract's "who owns what"); a panic drops them unwinding.
    let ended = panic::catch_unwind(AssertUnwindSafe(|| {
        let fut = pin!(driven(rt, policy, program));
        drive(&*runtime, fut)
    }));
    let mut error = match ended {
        Ok(Ok(Ok(value))) => return Ok(value),
        Ok(Ok(Err(e))) => e,
        Ok(Err(code)) => Error::Abort {
            rank,
            code,
            time_ns: None,
        },
        Err(panic) => Error::from_panic(rank, &*panic),
    };
    // As the backends that run every rank do: a program's own failure learns its rank here,
    // and an error its time, under a runtime with a virtual clock.
    error.stamp_rank(rank);
    if let Some(t) = runtime.virtual_time() {
        error.stamp_time(t);
    }
    Err(error)
}

/// Polls `fut` until it is done: at once again after a poll in which it woke itself, otherwise
/// after `runtime.block()` returns. `Err(code)` once the program called [`Comm::abort`] with
/// `code` (its future is then pending for ever: the end of this rank).
fn drive<T>(
    runtime: &dyn RankRuntime,
    mut fut: std::pin::Pin<&mut impl Future<Output = T>>,
) -> std::result::Result<T, i32> {
    let woken = Arc::new(SelfWake(AtomicBool::new(false)));
    let waker = Waker::from(Arc::clone(&woken));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return Ok(out);
        }
        if let Some(code) = DRIVING.with(Cell::get).flatten() {
            return Err(code);
        }
        if !woken.0.swap(false, Ordering::AcqRel) {
            runtime.block();
        }
    }
}

/// A waker that notes that it was woken: the program's future woke itself (a yield).
struct SelfWake(AtomicBool);

impl Wake for SelfWake {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// The program on this thread called [`Comm::abort`] with `code`: if [`run_one`] drives it, it
/// ends there. Elsewhere nothing (the backend's `abort` ends the run).
pub(crate) fn note_abort(code: i32) {
    DRIVING.with(|driving| {
        if driving.get().is_some() {
            driving.set(Some(Some(code)));
        }
    });
}

/// [`run_one`] driving a program on this thread, from [`Driving::start`] to its drop, which
/// restores what was there before (a `run_one` inside a program that `run_one` drives).
struct Driving {
    before: Option<Option<i32>>,
}

impl Driving {
    fn start() -> Self {
        Driving {
            before: DRIVING.with(|driving| driving.replace(Some(None))),
        }
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        DRIVING.with(|driving| driving.set(self.before));
    }
}
