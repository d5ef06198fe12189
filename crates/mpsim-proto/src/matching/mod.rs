//! Tag matching: pairs arriving messages with posted receives by MPI's ordering rules.
//!
//! Implements `docs/matching.md` (from seed `002_ef3ade4b076e0473.txt` and MPI 4.1 §3.5, §3.8).
//! Every backend uses this one engine: the simulator feeds it in virtual-time order, the threads
//! backend in host order. It stores no payload bytes and reads no clock.
//!
//! - [`Engine`]: the fast engine, O(1) expected per operation at any queue depth. How it does
//!   that is in `README.md` beside this file.
//! - [`reference::NaiveEngine`]: the rules as two lists and a scan, for tests and benchmarks.
//! - [`Envelope`] / [`Pattern`]: what a message says about itself and what a receive accepts.

mod arena;
mod engine;
mod envelope;
mod queue;
pub mod reference;

pub use engine::{Arrived, Engine, Match, MsgHandle, Posted, Probed, RecvHandle};
pub use envelope::{ContextId, Envelope, PROC_NULL, Pattern, Rank, Source, TAG_UB, Tag};
