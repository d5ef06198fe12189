//! mpsim: write a message-passing program once — MPI-style point-to-point, blocking
//! collectives (`docs/collectives.md`) or BSPlib ([`bsp`], `docs/bsplib.md`) — and run it
//! simulated on a machine model (`--backend sim`, the default: a prediction of its run time,
//! at up to millions of ranks) or for real on threads.
//!
//! A program is an `async fn` of its world communicator; [`run`] launches it with the flags
//! every mpsim program understands (`--ranks`, `--backend`, …; see `--help`).
//!
//! ```no_run
//! use mpsim::{Comm, Result};
//!
//! async fn ring(world: Comm) -> Result<()> {
//!     let (me, n) = (world.rank(), world.size());
//!     let mut token = [0u64; 1];
//!     if me == 0 {
//!         world.send(&[1u64], (me + 1) % n, 7).await?;
//!     }
//!     world.recv(&mut token, (me + n - 1) % n, 7).await?;
//!     if me != 0 {
//!         world.send(&[token[0] + 1], (me + 1) % n, 7).await?;
//!     }
//!     Ok(())
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     mpsim::run(ring)
//! }
//! ```
//!
//! A rank's program returns mpsim's [`Result`]: its own errors (a file it cannot read, a number
//! that does not parse) meet mpsim's with `?`, as [`Error::Program`] naming the rank, and
//! [`Comm::abort`] stops the whole run, as `MPI_Abort` does, [`run`] exiting with its code.
//!
//! Each rank's program gets its own world [`Comm`]; everything it does goes through that `Comm`
//! and what it makes from it (communicators, requests). Under `sim` all ranks run on one
//! thread, so a `Comm` kept in a `thread_local` or `static` (as MPI programs keep their world
//! communicator) would be shared by every rank: the first call through another rank's `Comm`
//! or request stops the run with [`Error::ForeignRank`]. Pass the `Comm` down instead.
//!
//! A run's configuration is plain data, [`RunConfig`]: [`run`] fills it from the flags, a
//! program can build one in code and run it with [`Launcher::with_config`]. The flags, and the
//! simulator's progress bar, are the `cli` feature (on by default): without it the crate does
//! without `clap` and `indicatif`, and has neither [`run`] nor [`LaunchArgs`]. Every backend the
//! launcher runs holds every rank in this process; [`rank::run_one`] runs a single rank on a
//! runtime its caller made, for a backend with one rank per process.
//!
//! Crates behind this one: `mpsim-proto` (the sans-IO protocol core every backend shares),
//! `mpsim-sim` (the simulator) and `mpsim-threads` (the threads backend).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod blocking;
pub mod bsp;
mod coll;
mod comm;
mod launcher;
mod measured;
mod message;
mod output;
mod persistent;
mod progress;
pub mod rank;
mod request;
mod runtime;
mod signals;

pub use coll::algo::{Algorithm, AlgorithmChoices, Collective};
pub use coll::ops::{Arithmetic, Integer, Loc, Op};
pub use comm::{ANY_SOURCE, ANY_TAG, Comm, CommCompare, PROC_NULL};
pub use launcher::{Backend, Bind, Compute, Launcher, ReportFormat, RunConfig, TraceFormat, Wait};
#[cfg(feature = "cli")]
pub use launcher::{LaunchArgs, run};
pub use message::Message;
pub use mpsim_proto::deadlock::{
    BlockedRank, DeadlockReport, LivelockReport, PollingRank, StuckRank, Waiting,
};
pub use mpsim_proto::error::{
    BspError, BspErrorKind, Disagreement, Error, ErrorClass, PendingRequest, ProgramError, Result,
    Site,
};
pub use mpsim_proto::interrupt::Signal;

/// The signal (`SIGINT`, `SIGTERM`) that asked the running [`Launcher::run`] to stop, if one
/// did. The backends stop at their own cold points; a program that waits for something outside
/// mpsim (the C door waits for its rank processes) looks here so that a signal stops it too,
/// and then ends with [`Error::Interrupted`]. `None` outside runs.
///
/// ```
/// assert_eq!(mpsim::stop_requested(), None);
/// ```
pub fn stop_requested() -> Option<Signal> {
    signals::raised()
}
pub use mpsim_proto::matching::{Source, TAG_UB, Tag};
pub use mpsim_proto::p2p::{BSEND_OVERHEAD, SendMode, Status};
pub use output::{exit_code, stdout_error, write_stdout};
pub use persistent::{PersistentRequest, start_all};
/// The simulator's machine model, and the end-of-run report of every backend ([`Report`]: one
/// type for a simulated run's prediction and a real run's measurement).
///
/// [`Report`]: sim::Report
pub mod sim {
    /// A trace's records, what a trace keeps, and Perfetto's format.
    pub use mpsim_proto::trace::{JsonSize, RankSet, TraceEvent, TraceFilter, perfetto};
    pub use mpsim_sim::{
        ComputeMode, CpuModel, DelayTable, LIST_WARNINGS, MAX_WORKERS, Model, ModelError,
        ModelFile, ModelFileError, Outcome, PROTOCOLS, RankReport, Report, TOP_WAITS, TimeBase,
        Trace, Traffic, WaitReport,
    };

    /// A report's line per collective, algorithm and reason.
    pub use mpsim_sim::CollectiveLine;

    /// The collectives' cost on a model, as the choice of algorithm reads it.
    pub use crate::coll::cost::{collective_choice, collective_ns};
}

pub use request::{
    Request, TestAny, test_all, test_all_results, test_any, test_some, test_some_results, wait_all,
    wait_all_results, wait_any, wait_some, wait_some_results,
};
