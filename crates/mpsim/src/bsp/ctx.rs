//! [`Ctx`]: one BSP process — its pid, its clock, its superstep, and the state the DRMA
//! (`drma.rs`) and BSMP (`bsmp.rs`) calls change and the sync (`sync.rs`) exchanges.
//!
//! Why `sync` takes `&mut self` and the rest `&self`: everything the context lends out for a
//! superstep (a registration's local area, a message's bytes from `hpmove`) borrows it, so the
//! compiler ends every such loan before the sync that would change what it points at. Calls
//! that only record communication (`put`, `get`, `send`) or read (`local`, `qsize`) take
//! `&self`, so `ctx.put(1, &r, 0, ctx.local(&r)?)` compiles; calls that change the
//! registration table (`push_reg`, `pop_reg`, `local_mut`) take `&mut self`.
//!
//! The program owns its `Ctx`; when its future completes, the `Ctx` is dropped and hands its
//! state back to the runner (`mod.rs`), which ends the SPMD section with the collective `end`
//! (`sync.rs`), so a process that ends while others sync is found, not waited for.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::Duration;

use mpsim_proto::error::{BspError, BspErrorKind, Error, Result};

use super::queue::Queue;
use super::regs::Regs;
use super::timing::Timing;
use super::wire::Bundle;
use crate::Comm;

/// One BSP process of a run: given to the program by [`bsp::run`](super::run) and its kin.
///
/// ```
/// use mpsim::bsp::{self, Ctx};
/// use mpsim::Launcher;
///
/// // Every process puts its pid into the next one's `x`.
/// async fn shift(mut ctx: Ctx) -> mpsim::Result<()> {
///     let (me, p) = (ctx.pid(), ctx.nprocs());
///     let x = ctx.push_reg::<u32>(1)?;
///     ctx.sync().await?; // x is registered from here on
///     ctx.put((me + 1) % p, &x, 0, &[me])?;
///     ctx.sync().await?; // ... and written here
///     assert_eq!(ctx.local(&x)?, &[(me + p - 1) % p]);
///     Ok(())
/// }
///
/// bsp::run_with(&Launcher::new(4), shift).unwrap();
/// ```
pub struct Ctx {
    core: Option<Box<Core>>,
    handoff: Rc<Cell<Option<Box<Core>>>>,
}

/// What is needed to start a process.
pub(crate) struct Setup {
    pub comm: Comm,
    pub timing: Timing,
}

/// The state of one process.
pub(crate) struct Core {
    /// A communicator of its own (a `dup` of the world), carrying the sync's messages.
    pub comm: Comm,
    pub pid: u32,
    pub nprocs: u32,
    /// 0 until the first sync returns.
    pub superstep: u64,
    /// The clock (`Comm::now_ns`) at the start of the SPMD section and of this superstep.
    pub begin_ns: u64,
    pub step_start_ns: u64,
    pub regs: Regs,
    pub out: RefCell<Outgoing>,
    pub tags: Tags,
    pub queue: Queue,
    /// Results of the gets of earlier supersteps not taken yet, by get number.
    pub results: HashMap<u64, Vec<u8>>,
    pub next_get: Cell<u64>,
    /// The error of a sync that failed: every later call gives it again.
    pub poisoned: Option<Error>,
    pub timing: Timing,
}

/// What this superstep's communication will do at the sync.
#[derive(Default)]
pub(crate) struct Outgoing {
    /// By destination pid (this process's own included).
    pub bundles: BTreeMap<u32, Bundle>,
    /// Every get, in issue order.
    pub gets: Vec<GetRec>,
}

/// One get: from whom, where its bytes lie in that process's reply, where they go.
pub(crate) struct GetRec {
    pub target: u32,
    pub reply_offset: u64,
    pub n: u64,
    pub dest: GetDest,
}

/// Where a get's bytes go at the sync.
pub(crate) enum GetDest {
    /// Kept until [`Ctx::take`] (a [`Pending`](super::Pending) with this number).
    Pending(u64),
    /// Into a local registration, at a byte offset.
    Reg { reg: u64, offset: u64 },
}

/// The tag sizes of BSMP (`spec/bsplib.md` §1: A, B, C) and this superstep's calls.
#[derive(Default)]
pub(crate) struct Tags {
    /// Of the messages in the queue.
    pub queue: usize,
    /// Of sends now.
    pub send: usize,
    /// Last requested.
    pub requested: Cell<usize>,
    /// `set_tagsize` calls this superstep.
    pub calls: Cell<u64>,
}

impl Ctx {
    pub(crate) fn new(setup: Setup, handoff: Rc<Cell<Option<Box<Core>>>>) -> Self {
        let comm = setup.comm;
        let now = comm.now_ns();
        let core = Core {
            pid: comm.rank(),
            nprocs: comm.size(),
            comm,
            superstep: 0,
            begin_ns: now,
            step_start_ns: now,
            regs: Regs::default(),
            out: RefCell::new(Outgoing::default()),
            tags: Tags::default(),
            queue: Queue::default(),
            results: HashMap::new(),
            next_get: Cell::new(0),
            poisoned: None,
            timing: setup.timing,
        };
        Ctx {
            core: Some(Box::new(core)),
            handoff,
        }
    }

    pub(crate) fn core(&self) -> &Core {
        self.core
            .as_deref()
            .expect("a Ctx holds its state until it is dropped")
    }

    pub(crate) fn core_mut(&mut self) -> &mut Core {
        self.core
            .as_deref_mut()
            .expect("a Ctx holds its state until it is dropped")
    }

    /// This process's number, `0..nprocs` (BSPlib's `bsp_pid`).
    pub fn pid(&self) -> u32 {
        self.core().pid
    }

    /// The number of processes (`bsp_nprocs`).
    pub fn nprocs(&self) -> u32 {
        self.core().nprocs
    }

    /// The superstep this process is in: 0 until its first [`Ctx::sync`] returns.
    pub fn superstep(&self) -> u64 {
        self.core().superstep
    }

    /// Seconds since the SPMD section began, on this process's clock (`bsp_time`): virtual
    /// time under `sim`, host time under `threads`; not synchronised between processes.
    pub fn time(&self) -> f64 {
        let c = self.core();
        c.comm.now_ns().saturating_sub(c.begin_ns) as f64 / 1e9
    }

    /// Accounts `d` of local computation (the superstep's `w`): the simulator advances this
    /// process's clock, real backends spin for `d` ([`Comm::compute`]).
    pub async fn compute(&self, d: Duration) {
        self.core().comm.compute(d).await;
    }

    /// Accounts `flops` floating-point operations at the machine model's speed
    /// ([`Comm::compute_flops`]).
    pub async fn compute_flops(&self, flops: u64) {
        self.core().comm.compute_flops(flops).await;
    }

    /// Aborts the run (`bsp_abort`): returns the error to return from the program, which
    /// stops every process at once (at its next call or sync at the latest) and makes the run
    /// fail with [`BspErrorKind::Aborted`] naming this pid and `msg`. No sync is needed, and
    /// any later call of this context gives the same error.
    ///
    /// ```
    /// use mpsim::bsp::{self, Ctx};
    /// use mpsim::{BspErrorKind, Error, Launcher};
    ///
    /// let run = bsp::run_with(&Launcher::new(2), |mut ctx: Ctx| async move {
    ///     if ctx.pid() == 1 {
    ///         return Err(ctx.abort("no input"));
    ///     }
    ///     ctx.sync().await
    /// });
    /// let Err(Error::Bsp(e)) = run else { panic!("{run:?}") };
    /// assert_eq!(e.kind, BspErrorKind::Aborted { by: 1, msg: "no input".into() });
    /// ```
    pub fn abort(&mut self, msg: impl Into<String>) -> Error {
        let by = self.pid();
        let e = self.error(
            "bsp_abort",
            BspErrorKind::Aborted {
                by,
                msg: msg.into(),
            },
        );
        self.core_mut().poisoned = Some(e.clone());
        e
    }

    /// The error `kind` of `op` on this process, now.
    pub(crate) fn error(&self, op: &'static str, kind: BspErrorKind) -> Error {
        self.core().error(op, kind)
    }

    /// The error of an earlier failed sync or abort, if any: calls give it again.
    pub(crate) fn check_poisoned(&self, op: &'static str) -> Result<()> {
        match &self.core().poisoned {
            None => Ok(()),
            Some(Error::Bsp(e)) if matches!(e.kind, BspErrorKind::Aborted { .. }) => {
                Err(Error::Bsp(e.clone()))
            }
            Some(_) => Err(self.error(op, BspErrorKind::Poisoned)),
        }
    }
}

impl Core {
    /// The error `kind` of `op` on this process, now.
    pub(crate) fn error(&self, op: &'static str, kind: BspErrorKind) -> Error {
        let time_ns = self.comm.rt().virtual_time();
        Error::Bsp(Box::new(BspError::new(
            self.pid,
            self.superstep,
            op,
            time_ns,
            kind,
        )))
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        self.handoff.set(self.core.take());
    }
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.core.as_deref() {
            Some(c) => f
                .debug_struct("Ctx")
                .field("pid", &c.pid)
                .field("nprocs", &c.nprocs)
                .field("superstep", &c.superstep)
                .finish(),
            None => f.write_str("Ctx(ended)"),
        }
    }
}
