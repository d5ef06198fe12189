//! BSPlib (`spec/bsplib.md`, `docs/bsplib.md`): bulk synchronous programs with DRMA (`put`,
//! `get` into registered areas) and BSMP (tagged messages to queues), run simulated or on
//! threads like any mpsim program.
//!
//! A BSP program is an `async fn` of its [`Ctx`], one per process; [`run`] launches it with the
//! flags every mpsim program understands (`--ranks` is the number of processes), [`run_with`]
//! and [`simulate`] with a [`Launcher`]. The SPMD section is the program: `bsp_begin` is its
//! start, `bsp_end` its end (collective: a process that syncs while another ends is an error on
//! both, never a hang).
//!
//! ```
//! use mpsim::bsp::{self, Ctx};
//! use mpsim::{Backend, Launcher};
//!
//! /// The sum of every process's pid, gathered by puts into pid 0's array.
//! async fn sum(mut ctx: Ctx) -> mpsim::Result<()> {
//!     let (me, p) = (ctx.pid(), ctx.nprocs());
//!     let parts = ctx.push_reg::<u64>(p as usize)?;
//!     ctx.sync().await?;
//!     ctx.put(0, &parts, me as usize, &[u64::from(me)])?;
//!     ctx.sync().await?;
//!     if me == 0 {
//!         let total: u64 = ctx.local(&parts)?.iter().sum();
//!         assert_eq!(total, u64::from(p * (p - 1) / 2));
//!     }
//!     Ok(())
//! }
//!
//! bsp::run_with(&Launcher::new(4), sum).unwrap();
//! bsp::run_with(&Launcher::new(4).backend(Backend::Threads), sum).unwrap();
//! let outcome = bsp::simulate(&Launcher::new(4), sum);
//! assert!(outcome.error.is_none());
//! // The report's table: superstep 0, 1, and the code after the last sync.
//! assert_eq!(outcome.report.bsp.unwrap().supersteps.len(), 3);
//! ```
//!
//! Built on point-to-point: each process's [`Ctx`] holds a communicator of its own (a `dup` of
//! the world), over which `sync` exchanges the superstep's traffic (`sync.rs`), so the
//! simulator times the messages that really run, and the backends share the code. The
//! program's own point-to-point calls, if it makes any, never meet the sync's messages.
//!
//! Files: `ctx.rs` the process; `drma.rs` registrations, put and get; `bsmp.rs` messages;
//! `queue.rs` the receive queue; `regs.rs` the registration table; `wire.rs` the bytes a
//! sync sends; `sync.rs` the sync and the end; `timing.rs` the cost model and the table of
//! supersteps.

mod bsmp;
mod ctx;
mod drma;
mod queue;
mod regs;
mod sync;
mod timing;
mod wire;

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use mpsim_proto::error::{Error, Result};
use mpsim_sim::{Model, Outcome, Report};

pub use ctx::Ctx;
pub use drma::{Pending, Reg};
pub use queue::Msg;
pub use timing::{BspReport, BspTiming, Superstep};

use crate::launcher::Backend;
use crate::{Comm, Launcher};
use ctx::Setup;
use timing::{CostModel, Timing};

/// Runs a BSP program on every process with the command line's flags (`--ranks` processes,
/// `--backend`, `--model`, `--bsp-timing`, ...; see `--help`), and returns the exit status, as
/// [`mpsim::run`](crate::run) does: the report (under `sim`, and under `threads` when asked
/// for) ends with the table of supersteps.
///
/// ```no_run
/// use mpsim::bsp::{self, Ctx};
///
/// async fn program(mut ctx: Ctx) -> mpsim::Result<()> {
///     ctx.sync().await
/// }
///
/// fn main() -> std::process::ExitCode {
///     bsp::run(program)
/// }
/// ```
#[cfg(feature = "cli")]
pub fn run<F, Fut>(program: F) -> std::process::ExitCode
where
    F: Fn(Ctx) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    crate::launcher::run_parsed(|launcher| run_with(&launcher, &program))
}

/// Runs a BSP program as `launcher` says, on its backend; returns the run's first error. The
/// report and trace are written as [`Launcher::run`] writes them, the report with the table of
/// supersteps.
pub fn run_with<F, Fut>(launcher: &Launcher, program: F) -> Result<()>
where
    F: Fn(Ctx) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let (launcher, timing) = prepare(launcher);
    let table = Arc::new(Mutex::new(Vec::new()));
    let shared = Shared {
        timing,
        table: table.clone(),
    };
    let run = |world: Comm| process(&program, world, &shared);
    let amend = |report: &mut Report| report.bsp = Some(shared.report(&table));
    launcher.run_amended(run, &amend)
}

/// Simulates a BSP program as `launcher` says (whatever its backend) and returns the report,
/// with its table of supersteps, and the run's first error.
pub fn simulate<F, Fut>(launcher: &Launcher, program: F) -> Outcome
where
    F: Fn(Ctx) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let sim = launcher.clone().backend(Backend::Sim);
    let (launcher, timing) = prepare(&sim);
    let table = Arc::new(Mutex::new(Vec::new()));
    let shared = Shared {
        timing,
        table: table.clone(),
    };
    let mut outcome = launcher.simulate(|world: Comm| process(&program, world, &shared));
    outcome.report.bsp = Some(shared.report(&table));
    outcome
}

/// What every process of a run shares: the timing, and where pid 0 leaves the table.
struct Shared {
    timing: Option<CostModel>,
    table: Arc<Mutex<Vec<Superstep>>>,
}

impl Shared {
    /// The report's BSP section, from the table pid 0 left.
    fn report(&self, table: &Mutex<Vec<Superstep>>) -> BspReport {
        let supersteps = table.lock().map(|t| t.clone()).unwrap_or_default();
        BspReport {
            timing: if self.timing.is_some() {
                BspTiming::Cost
            } else {
                BspTiming::P2p
            },
            g_ps_per_byte: self.timing.map(|c| c.g_ps_per_byte),
            l_ns: self.timing.map(|c| c.l_ns),
            supersteps,
        }
    }
}

/// The launcher a BSP run uses and its cost model: under `sim` with cost timing, the model
/// with a free network (`timing.rs`).
fn prepare(launcher: &Launcher) -> (Launcher, Option<CostModel>) {
    let config = launcher.config();
    let model = &config.model;
    let cost = config.backend == Backend::Sim
        && config.bsp_timing.unwrap_or(model.bsp_timing) == BspTiming::Cost;
    if !cost {
        return (launcher.clone(), None);
    }
    let cost = CostModel {
        g_ps_per_byte: model.bsp_g_ps_per_byte.unwrap_or(0),
        l_ns: model.bsp_l_ns.unwrap_or(0),
    };
    let free: Model = model.free_network();
    (launcher.clone().model(free), Some(cost))
}

/// One process: the program on its context, then the collective end.
async fn process<F, Fut>(program: &F, world: Comm, shared: &Shared) -> Result<()>
where
    F: Fn(Ctx) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let comm = world.dup()?;
    let timing = Timing {
        cost: shared.timing,
        table: (world.rank() == 0).then(|| shared.table.clone()),
        steps: Vec::new(),
    };
    let handoff = Rc::new(Cell::new(None));
    program(Ctx::new(Setup { comm, timing }, handoff.clone())).await?;
    let Some(mut core) = handoff.take() else {
        return Err(Error::InvalidArgument {
            what: format!(
                "bsp: pid {}'s program returned while its Ctx lives on (kept or leaked): the \
                 process cannot end",
                world.rank()
            ),
        });
    };
    core.end().await
}
