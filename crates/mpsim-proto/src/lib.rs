//! mpsim's sans-IO protocol core: no clocks, no threads, no I/O — it consumes events and emits
//! actions.
//!
//! Every backend (the simulator and the threads backend; an MPI backend is planned) drives the
//! same core, so the simulator predicts exactly the protocol that the real backend runs.
//!
//! Modules:
//! - [`matching`]: the tag-matching engine that pairs arriving messages with posted receives
//!   (`docs/matching.md`).
//! - [`p2p`]: the point-to-point protocol of one rank: send modes, requests, buffers, probe and
//!   cancel (`docs/p2p.md`).
//! - [`collective`]: the names of the collectives and their algorithms, and a choice of
//!   algorithm per collective.
//! - [`error`]: the one error type, by MPI error class.
//! - [`deadlock`]: the wait-for cycle and report text every backend prints.
//! - [`interrupt`]: a signal's request to stop a run, raised by a handler, looked for by the
//!   backends.
//! - [`runtime`]: the trait a backend implements for each rank.
//! - [`trace`]: a run's trace as data (times are fields, filled by each backend in its own
//!   clock) and its Chrome trace-event JSON writer.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod collective;
pub mod deadlock;
pub mod error;
pub mod interrupt;
pub mod matching;
pub mod p2p;
pub mod runtime;
pub mod trace;

pub use error::{Error, Result};
