//! The door between a C MPI rank and its proxy.
//!
//! A C program built with `mpsim cc` runs each rank as a process of its own; its MPI calls are
//! executed by a *proxy* inside the mpsim run (one future per rank, driving the same `Comm` as
//! a Rust program). This crate is what both sides share, and nothing else: no simulator, no
//! `Comm`, so the C library (`mpsim-c`) stays small.
//!
//! - [`segment`]: the shared-memory segment (a `memfd`, so nothing is left behind in
//!   `/dev/shm` when the processes end): a header and one [`segment::Slot`] per rank.
//! - [`channel`]: a half-duplex channel over a slot: a message is a fixed head and a payload of
//!   any length, carried in chunks, the turn passed with a shared futex.
//! - [`wire`]: the calls and replies that cross it ([`wire::Op`], [`wire::CallHead`],
//!   [`wire::ReplyHead`]).
//! - [`check`]: what a call tells the proxy for the run's checks of the program (type
//!   signatures, a collective's root and operation), beside its data.
//!
//! Where a rank is hosted is not this crate's concern beyond the channel: a later fiber host
//! passes the same heads and payloads by a context switch instead of shared memory.

pub mod channel;
pub mod check;
pub mod segment;
pub mod wire;

/// The environment variable that tells the C library it runs under `mpsim run`: the file
/// descriptor of the segment, inherited.
pub const ENV_FD: &str = "MPSIM_DOOR_FD";
/// The environment variable with the number of ranks to fork.
pub const ENV_RANKS: &str = "MPSIM_DOOR_RANKS";
