//! mpsim's sans-IO protocol core: no clocks, no threads, no I/O — it consumes events and emits
//! actions.
//!
//! Every backend (the simulator, the threads backend, the MPI backend) drives the same core, so
//! the simulator predicts exactly the protocol that the real backends run.
//!
//! Modules:
//! - [`matching`]: the tag-matching engine that pairs arriving messages with posted receives
//!   (`spec/matching.md`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod matching;
