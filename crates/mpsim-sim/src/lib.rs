//! mpsim's simulator backend: a deterministic discrete-event simulation of a message-passing
//! program on a machine model. It owns virtual time; results never depend on the host clock
//! (read only to measure compute in `measured` mode and to pace a watch on host memory).
//!
//! Every rank is a logical process with a virtual clock (`u64` ns) running the program's own
//! future. Communication runs the same protocol core as the real backends (`mpsim-proto`), and
//! the kernel times each packet with the machine [`Model`] (`docs/timing.md`): messages arrive
//! after the delay of their send mode and size, made monotone per channel; acks after a
//! constant. Events are processed in the order of the key `(time, class, creator, n)`, so the
//! same program and model give the same report, byte for byte, whatever the host does, and
//! whether it runs on one thread or on several ([`Options::workers`]: blocks of ranks run in
//! parallel, in rounds as long as the model's lookahead allows).
//!
//! - [`Model`], [`DelayTable`]: the machine model; [`ModelFile`], [`ModelFileError`]: models as
//!   files (`model.toml` plus CSV delay tables), [`Model::load`], [`Model::write_to`].
//! - [`simulate`], [`Options`], [`Outcome`]: running a program, sequentially or in parallel.
//! - [`SimRank`]: a simulated rank's runtime; [`ExternalWake`]: waking a rank that waits for
//!   an event outside the simulation (`SimRank::wait_external`).
//! - [`Report`]: what a run predicts, and what a real run measured (one type for every
//!   backend).
//! - [`MemoryWatch`]: the host's memory, watched so that a run too big for it ends with an
//!   error, not a kill.
//! - [`input`]: input files read whole with a cap per kind, for model files here and the
//!   `mpsim` command's inputs; [`output`]: output files written whole or not at all (models,
//!   traces, pictures).
//! - [`decimal`]: exact decimals (`12.345`, `1.5e-3`) times a scale as integers, for model
//!   files here and the `mpsim` command's trace timestamps and flags; [`units`]: quantities
//!   with their units, as model files and the command line write them.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bsp_report;
pub use bsp_report::{BspReport, BspTiming, Superstep};
pub mod decimal;
mod event;
mod external;
pub use external::ExternalWake;
mod fifo;
mod host_memory;
pub mod input;
mod kernel;
mod livelock;
mod model;
mod model_file;
mod model_value;
pub mod output;
mod parallel;
mod partition;
mod quad_heap;
mod rank;
pub use rank::SimRank;
mod report;
mod run;
mod stats;
mod time_buckets;
pub mod units;
mod waits;

pub use host_memory::{MemoryWatch, Shortage};
pub use livelock::DEFAULT_AFTER_NS as DEFAULT_LIVELOCK_AFTER_NS;
pub use model::{ComputeMode, CpuModel, DelayTable, Model, ModelError};
pub use model_file::{DEFAULT_MODEL_NAME, MODEL_TOML, ModelFile, ModelFileError};
/// The trace type every backend fills (`mpsim_proto::trace`); the simulator's is in virtual
/// time, process name `mpsim sim`.
pub use mpsim_proto::trace::{RankSet, Trace, TraceFilter};
pub use report::{
    CollectiveLine, LIST_WARNINGS, PROTOCOLS, RankReport, Report, TimeBase, Traffic, seconds,
    write_collectives, write_top_waits, write_warnings,
};
pub use run::{MAX_WORKERS, Options, Outcome, Progress, simulate, simulate_observed};
pub use waits::{TOP_WAITS, WaitReport};
