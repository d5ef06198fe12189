//! mpsim's `mpi` backend: one rank per MPI process, point-to-point on the installed MPI library
//! (through the `mpi` crate's bindings), so that an mpsim program runs across machines with
//! `mpirun`. The API layer reaches it through the seam alone (`RankRuntime`, implemented by
//! [`MpiRank`]); `mpsim`'s launcher runs a program on it with `--backend mpi` (the `mpi` cargo
//! feature of `mpsim`).
//!
//! # Contexts and MPI communicators
//!
//! mpsim matches messages by a 64-bit context per communicator (two per communicator: its
//! point-to-point context and its hidden collective one, plus one per nonblocking collective
//! call), derived by every member alike without a message; MPI matches by communicator, source
//! and tag, with every tag of `0..=TAG_UB` the program's. MPI communicators cannot be made
//! lazily (making one is collective), so the mapping is:
//!
//! - The world's point-to-point context (`ContextId(0)`, every `world.send`/`recv`) is a
//!   duplicate of `MPI_COMM_WORLD`: sends are MPI's own in each mode (`MPI_Isend`,
//!   `MPI_Issend`, `MPI_Ibsend` into the buffer attached with `MPI_Buffer_attach`,
//!   `MPI_Irsend`), receives `MPI_Irecv`, probes `MPI_Iprobe` and `MPI_Improbe`/`MPI_Imrecv`,
//!   cancel `MPI_Cancel`; MPI matches.
//! - Every other context (communicators made by `dup` and `split`, the collectives' hidden
//!   contexts) shares a second duplicate: each message carries a 12-byte header (its context
//!   and its sender's communicator rank) and is sent in its mode as above (`rsend` as
//!   `MPI_Issend`, since its receive is never posted at MPI); the backend receives every
//!   message that arrives there (`MPI_Improbe` on any source and tag, then `MPI_Mrecv`) and
//!   matches it itself, in MPI's order: to the first posted receive it matches, else into a
//!   queue that later receives and probes search first. Contexts never cross-match. What is
//!   weaker there: a synchronous send completes once the destination's backend has taken the
//!   message in, which may be before the program's receive matched it.
//!
//! # Collectives
//!
//! Collectives that the API layer hands over (`RankRuntime::start_native`: nothing names
//! their algorithm, built-in operations on primitive types) run as MPI's own nonblocking
//! collectives on an MPI communicator per mpsim communicator: a fourth duplicate of
//! `MPI_COMM_WORLD` for the world, one made by `MPI_Comm_create_group` at a communicator's
//! first native blocking collective for the others (`native.rs` and mpsim's
//! `docs/collectives.md` §9 argue why making it then is safe): every collective of mpsim's API,
//! the `v` calls and `reduce_scatter(_block)` included. The others (user operations,
//! `minloc`/`maxloc`, counts beyond MPI's `int` that every rank sees), and every collective of
//! a `--reproducible` run, are mpsim's algorithms over the point-to-point above.
//!
//! # Messages beyond `int`
//!
//! MPI counts in `int`, and Open MPI 4.1 has no large-count (`_c`) calls. A message of more
//! than `i32::MAX` bytes is sent, received and matched-received as one element of a derived
//! datatype of its length (`raw.rs`: 1 GiB blocks by `MPI_Type_contiguous`, the rest by
//! `MPI_Type_create_struct`, committed for the call and freed after it starts); its byte count
//! in a status is `MPI_Get_elements_x`'s when `MPI_Get_count` cannot say it. Every shorter one
//! takes the path it always took (one test of its length). A buffered send cannot be that
//! long (an attached buffer's size is an `int`).
//!
//! # Progress
//!
//! Open MPI moves messages only inside MPI calls: every wait polls (`MPI_Testsome` over the
//! requests in flight, then the second communicator), and [`MpiRank`]'s `block`, at the first
//! block since a wait ended, spins briefly (only with a core per rank on the node) and polls
//! between yields of its core for 1 ms; then it naps with back-off (20 us doubling to 1 ms),
//! so that an idle rank does not keep a core busy.
//!
//! A blocking call costs as little as the seam allows: a blocking send is tested alone at once
//! (`MPI_Test`) and, done (a small message the library copied out), leaves no request; a
//! blocking receive whose message is there already completes in its start; small messages
//! (up to 32 bytes with the header) live in pooled buffers, so a message of a few bytes
//! allocates nothing; receive buffers are not cleared before MPI writes them.
//! `bench/mpi-calls.sh` counts the instructions per send and receive against C.
//!
//! # Deadlocks
//!
//! A rank that has napped to the longest nap joins rounds of a nonblocking sum on a third
//! duplicate of `MPI_COMM_WORLD` (the control communicator) with its counts of messages sent
//! and arrived and of calls made; two rounds in a row with the same totals, every message sent
//! arrived and not every rank finished are a deadlock, declared by every rank at the same
//! round (`watch.rs` argues why that is never a false one, and says what it takes from MPI
//! for that). Rank 0 then gathers what each rank waits for and has the report the threads
//! backend gives (`mpsim_proto::deadlock`). The rounds are also how a rank whose program ended
//! waits for the others, so that messages sent to it and never received are counted and named
//! in the run's warnings.
//!
//! # Report and trace
//!
//! When asked ([`MpiRank::measure`]), each rank measures its waits, computes and traffic in
//! host time (`measure.rs`); [`World::gather_ends`] brings every rank's to rank 0, which makes
//! the report with the threads backend's code and the trace with [`merge_trace`].

//!
//! # Building
//!
//! Everything here is behind this crate's `mpi` feature (which `mpsim`'s `mpi` feature turns
//! on): without it the crate is empty, so that a workspace build needs no MPI library.

#[cfg(feature = "mpi")]
mod measure;
#[cfg(feature = "mpi")]
mod native;
#[cfg(feature = "mpi")]
mod rank;
#[cfg(feature = "mpi")]
mod raw;
#[cfg(feature = "mpi")]
mod table;
#[cfg(feature = "mpi")]
mod watch;
#[cfg(feature = "mpi")]
mod world;

#[cfg(feature = "mpi")]
pub use measure::{LONGEST_WAITS, RankEnd, Wait, merge_trace};
#[cfg(feature = "mpi")]
pub use rank::MpiRank;
#[cfg(feature = "mpi")]
pub use world::World;
