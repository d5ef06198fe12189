//! mpsim's MPI C library (`libmpsim_mpi.so`): the MPI C API, to the MPI standard ABI, for C
//! programs built with `mpsim cc` and started by `mpsim run`.
//!
//! Each rank is a process of its own ([`boot`]). The library is thin: it keeps the rank's
//! handles ([`state`]), packs datatypes into bytes ([`dtype`]), and sends every call that needs
//! the other ranks through the door ([`door`]) to the rank's proxy in the mpsim run, which
//! executes it with the same `Comm` a Rust program uses; so a C program is simulated, timed and
//! checked exactly as a Rust one. Calls that need no other rank (ranks, sizes, datatypes,
//! groups) are answered here, without a trip through the door.
//!
//! Every function has its `PMPI_` name too (profiling tools define the `MPI_` one and call
//! the other). Functions of the MPI standard this library does not implement yet exist all the
//! same ([`api::missing`]): they return `MPI_ERR_OTHER` and say so on standard error, so test
//! suites that reference them link.

#![allow(clippy::missing_safety_doc)]
#![allow(non_snake_case)]

pub mod abi;
pub mod api;
pub mod boot;
pub mod door;
pub mod dtype;
pub mod site;
pub mod state;
