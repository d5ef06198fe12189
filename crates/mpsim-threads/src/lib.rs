//! mpsim's threads backend: real execution, one OS thread per rank, in one process. It never
//! decides protocol questions (that is `mpsim-proto`'s `Endpoint`); it moves packets and parks
//! threads.
//!
//! Transport: each rank owns its `Endpoint` outright (no lock on it). Peers push packets into
//! their lane to the rank (`lane::Lane`: one single-producer FIFO per ordered pair, registered
//! in the rank's `mailbox::Mailbox`) and unpark its thread if it is parked; the rank takes them
//! in whenever it calls the library. Payloads are the sender's copy, taken by the receiver when a
//! receive matches (receiver-read rendezvous), so a matched transfer completes even while the
//! sender computes (`docs/p2p.md` §1, P28).
//!
//! Waiting: a rank spins briefly (every rank has a core), or yields its core for up to a
//! millisecond (at most two ranks per core), then parks ([`WaitPolicy`]). The launching thread
//! watches for deadlock: every unfinished rank parked, every mailbox empty, no packet sent
//! between two looks; and runs the driver's check between looks (`run_watched`: the launcher's
//! watch on the host's memory).
//!
//! Tracing (`Options::trace`, `--trace`): each rank records its waits, computes and messages in
//! host time into its own buffer; the buffers become one `mpsim_proto::trace::Trace` at the
//! end (notes in the `trace` module).
//!
//! Measuring (`Options::measure`, `--report`): each rank adds up its time in compute and
//! blocked in waits and keeps its longest waits (`measure`); with the traffic its endpoint
//! counted, that is the run's report ([`Outcome::ranks`], [`Outcome::longest_waits`]).
#![deny(unsafe_code)] // allowed in `lane` alone, with its safety argument
#![warn(missing_docs)]

mod binding;
mod host_limits;
mod lane;
mod mailbox;
mod measure;
mod rank;
pub use rank::ThreadRank;
mod run;
mod trace;

pub use binding::{Binding, bind_to_one_core};
pub use measure::{Awaited, LONGEST_WAITS, MeasuredWait, RankFigures};
pub use rank::WaitPolicy;
pub use run::{Options, Outcome, run, run_watched};
