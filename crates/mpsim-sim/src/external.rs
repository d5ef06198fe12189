//! External waits: a simulated rank that waits for something outside the simulation, which
//! the kernel does not drive and cannot foresee — a rank whose program lives in another
//! process (the C interface's proxy rank, waiting for that process's next MPI call), or any
//! event a test or a tool injects. The rank's program waits in
//! [`SimRank::wait_external`](crate::SimRank::wait_external) on the handle it got from
//! [`SimRank::external_wake`](crate::SimRank::external_wake); whoever holds the handle fires
//! it with the virtual time of the event ([`ExternalWake::fire`]), and the kernel resumes the
//! rank at that time, in event-key order like any resume (`docs/timing.md` §5): the run stays
//! deterministic as long as what fires does so deterministically (another rank's program, at
//! its own virtual time).
//!
//! Clocks (`docs/timing.md` S1: only a returning wait moves a clock): a rank that waits at `s`
//! for an event fired for `t` (never before the present, so never before `s`) resumes at `t`; its wait returns there, `t - s` counted as blocked time, a trace span named after its
//! call. An event fired before the rank waits, for a time at or before its clock, makes its
//! wait return at once, its clock unchanged; for a later time, the rank waits until then.
//!
//! A rank that waits for an event nobody fires is part of a deadlock when nothing else can
//! happen: the report names it as waiting for an external event
//! ([`EXTERNAL_EVENT`](mpsim_proto::deadlock::EXTERNAL_EVENT)). A program that awaits
//! something else the simulator does not drive still stops the run with
//! [`Error::Unsupported`] (`partition::check_suspended`).

use std::cell::RefCell;
use std::rc::Rc;

use mpsim_proto::error::{Error, Site};

use crate::kernel::Kernel;

/// A handle that wakes one simulated rank from its external wait (see the module's docs).
/// Cloned freely; it lives on the thread of the rank's partition (it is not `Send`).
///
/// ```no_run
/// use std::cell::RefCell;
/// use std::future::poll_fn;
///
/// use mpsim_proto::runtime::RankRuntime;
/// use mpsim_sim::{ExternalWake, Model, Options, SimRank, simulate};
///
/// thread_local! {
///     static WAKE: RefCell<Option<ExternalWake>> = const { RefCell::new(None) };
/// }
///
/// // Rank 1 waits for an outside event, which rank 0 fires for 5 us after its own clock.
/// let program = |rt: std::rc::Rc<SimRank>| async move {
///     if rt.rank() == 1 {
///         WAKE.with(|w| *w.borrow_mut() = Some(rt.external_wake()));
///         let at = rt.wait_external("proxy_call").await?;
///         assert_eq!(at, 5_000);
///     } else {
///         poll_fn(|_| std::task::Poll::Ready(())).await;
///         let wake = WAKE.with(|w| w.borrow().clone());
///         if let Some(wake) = wake {
///             wake.fire(rt.now_ns() + 5_000)?;
///         }
///     }
///     Ok(())
/// };
/// let outcome = simulate(&Options::new(2, Model::default_machine()), &program);
/// assert!(outcome.error.is_none());
/// ```
#[derive(Clone)]
pub struct ExternalWake {
    pub(crate) kernel: Rc<RefCell<Kernel>>,
    pub(crate) rank: u32,
    pub(crate) idx: usize,
}

impl std::fmt::Debug for ExternalWake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalWake")
            .field("rank", &self.rank)
            .finish()
    }
}

impl ExternalWake {
    /// The rank this handle wakes.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The external event the rank waits for happens at virtual time `at_ns`: the rank's wait
    /// returns then (see the module's docs). Called from a rank's program, or by whoever
    /// drives the run between events.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `at_ns` is before the present (the simulation cannot
    /// go back; a waiting rank's clock is at or before it), when the rank has finished, or when the
    /// handle was fired already and the rank has not yet taken that event;
    /// [`Error::RunEnded`] after the run.
    pub fn fire(&self, at_ns: u64) -> Result<(), Error> {
        let mut k = self.kernel.borrow_mut();
        let Some(r) = k.ranks.get(self.idx).filter(|_| !k.closed) else {
            let mut site = Site::new(self.rank, "external wake");
            site.time_ns = Some(k.now);
            return Err(Error::RunEnded { site });
        };
        let refuse = |what: String| {
            Err(Error::InvalidArgument {
                what: format!(
                    "an external wake of rank {} fired for t={at_ns} ns {what}",
                    self.rank
                ),
            })
        };
        if r.done {
            return refuse(format!("after the rank finished (t={} ns)", r.clock));
        }
        // A waiting rank blocked at or before the present: `at_ns` is past its clock too.
        if at_ns < k.now {
            return refuse(format!("before the present (t={} ns)", k.now));
        }
        let external = k.external.by_rank.entry(self.idx).or_default();
        if let Some(fired) = external.fired {
            return refuse(format!(
                "while its event of t={fired} ns is not yet taken by the rank"
            ));
        }
        external.fired = Some(at_ns);
        if external.waiting {
            k.schedule_resume(self.rank, at_ns);
        }
        Ok(())
    }
}
