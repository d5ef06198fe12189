//! The one error type of mpsim, by MPI error class (`docs/p2p.md` §8).
//!
//! Every error names where it happened ([`Site`]: rank, call, communicator context, peer, tag,
//! and the virtual time under the simulator), so a message alone tells the user what to fix.

use std::fmt;

use crate::deadlock::{CommOrder, DeadlockReport, LivelockReport};
use crate::matching::{ContextId, Source, Tag};

mod bsp;
mod class;
mod program;

pub use bsp::{BspError, BspErrorKind, Disagreement};
pub use class::ErrorClass;
pub use program::ProgramError;

/// Where an error happened: the calling rank and call, and what the call named.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Site {
    /// World rank of the caller.
    pub rank: u32,
    /// The library call, e.g. `"ssend"`.
    pub call: &'static str,
    /// The communicator's context, when the call has one.
    pub context: Option<ContextId>,
    /// The peer the call named (destination or source), when it has one.
    pub peer: Option<Source>,
    /// The tag the call named, when it has one.
    pub tag: Option<Tag>,
    /// Virtual time in nanoseconds (simulator only).
    pub time_ns: Option<u64>,
}

impl Site {
    /// A site for `call` on world rank `rank`. Boxed: errors carry their site behind a pointer,
    /// so an `Error` (and every `Result` of the library) stays a few words.
    pub fn new(rank: u32, call: &'static str) -> Box<Self> {
        Box::new(Site {
            rank,
            call,
            ..Site::default()
        })
    }

    /// With the communicator context.
    pub fn context(mut self: Box<Self>, context: ContextId) -> Box<Self> {
        self.context = Some(context);
        self
    }

    /// With the peer.
    pub fn peer(mut self: Box<Self>, peer: impl Into<Source>) -> Box<Self> {
        self.peer = Some(peer.into());
        self
    }

    /// With the tag.
    pub fn tag(mut self: Box<Self>, tag: impl Into<Tag>) -> Box<Self> {
        self.tag = Some(tag.into());
        self
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} in {}", self.rank, self.call)?;
        // What the call named, as far as the site knows it: `(peer p, tag t, context c)`.
        let mut sep = " (";
        if let Some(peer) = self.peer {
            write!(f, "{sep}peer {peer}")?;
            sep = ", ";
        }
        if let Some(tag) = self.tag {
            write!(f, "{sep}tag {tag}")?;
            sep = ", ";
        }
        if let Some(c) = self.context {
            write!(f, "{sep}context {}", c.0)?;
            sep = ", ";
        }
        if sep == ", " {
            f.write_str(")")?;
        }
        if let Some(t) = self.time_ns {
            write!(f, " at t={t} ns")?;
        }
        Ok(())
    }
}

/// A request still active when its rank finished (for [`Error::PendingAtExit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRequest {
    /// The call that created it, e.g. `"irecv"`.
    pub call: &'static str,
    /// Its peer.
    pub peer: Source,
    /// Its tag.
    pub tag: Tag,
}

impl fmt::Display for PendingRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (peer {}, tag {})", self.call, self.peer, self.tag)
    }
}

/// Everything that can go wrong, by MPI error class ([`Error::class`] names each one's).
///
/// Kept small and not recursive: every `Result` of the library carries one, and the blocking
/// calls move theirs on every call. A variant holding other `Error`s (an `InStatus` listing
/// each failed request of a `wait_all`, tried on 2026-11-24) made the simulated ring 3-6%
/// more instructions and a threads ping-pong slower, even boxed, through the error's drop
/// code on the hot path; so `wait_all` and its kin report the first failure, and
/// `mpsim::wait_all_results` and its kin each request's own outcome beside the others.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// MPI_ERR_RANK: a rank outside the communicator.
    #[error("{site}: invalid rank {rank} (communicator size {size})")]
    InvalidRank {
        /// Where.
        site: Box<Site>,
        /// The rank given.
        rank: i64,
        /// The communicator's size.
        size: u32,
    },
    /// MPI_ERR_TAG: a tag outside `0..=TAG_UB` (`-1` too: `ANY_TAG` is a `Tag::Any`, which
    /// receives take and sends cannot be given).
    #[error("{site}: invalid tag {tag}")]
    InvalidTag {
        /// Where.
        site: Box<Site>,
        /// The tag given.
        tag: Tag,
    },
    /// MPI_ERR_COMM: a freed or foreign communicator.
    #[error("{site}: invalid communicator")]
    InvalidComm {
        /// Where.
        site: Box<Site>,
    },
    /// MPI_ERR_TRUNCATE: the message is longer than the receive buffer. The message is
    /// consumed and the first `buffer_bytes` bytes are written.
    #[error(
        "{site}: message of {message_bytes} bytes truncated to a buffer of {buffer_bytes} bytes"
    )]
    Truncate {
        /// Where: the receiving rank, the call that made the receive, the message's source,
        /// tag and communicator context, and under the simulator the virtual time the receive
        /// completed (`docs/timing.md` S11), which may be before the wait or test that found
        /// it.
        site: Box<Site>,
        /// The message's length in bytes.
        message_bytes: usize,
        /// The receive buffer's length in bytes (what was written).
        buffer_bytes: usize,
    },
    /// MPI_ERR_COMM: members of a communicator made their communicator-creating calls on it
    /// in different orders ([`CommOrder`]: which ranks made which calls); found by the `split`
    /// that met a call of another kind or place, on every member that learns of it.
    #[error("{site}: {order}")]
    CommOrder {
        /// Where: the rank's `comm_split`.
        site: Box<Site>,
        /// Each rank's calls (boxed: an `Error` stays a few words).
        order: Box<CommOrder>,
    },
    /// MPI_ERR_ROOT: a collective's root outside the communicator.
    #[error("{site}: invalid root {root} (communicator size {size})")]
    InvalidRoot {
        /// Where: the rank, the collective call and the communicator's context.
        site: Box<Site>,
        /// The root given.
        root: u32,
        /// The communicator's size.
        size: u32,
    },
    /// MPI_ERR_COUNT / MPI_ERR_BUFFER: a collective's buffer whose length does not fit the
    /// call's counts (a receive buffer of `allgather` not `size` times the send buffer, say),
    /// found by the calling rank before it sends anything.
    #[error("{site}: {what}")]
    InvalidBuffer {
        /// Where: the rank, the collective call and the communicator's context.
        site: Box<Site>,
        /// Which buffer, its length and the length the call needs.
        what: String,
    },
    /// MPI_ERR_OP: a reduction operation the call cannot use (a non-commutative operation
    /// with an algorithm forced on the communicator that needs commutativity).
    #[error("{site}: {what}")]
    InvalidOp {
        /// Where: the rank, the collective call and the communicator's context.
        site: Box<Site>,
        /// What was wrong.
        what: String,
    },
    /// MPI_ERR_TRUNCATE / MPI_ERR_ARG: the members of a communicator called a collective with
    /// arguments that do not agree (counts, roots, the collective itself), found by a rank
    /// that received a message of another length than its own arguments make it expect.
    #[error("{site}: {what}")]
    CollectiveMismatch {
        /// Where: the receiving rank, the collective call, the peer whose message did not fit,
        /// the communicator's context and (simulator) the virtual time.
        site: Box<Site>,
        /// What was expected and what came.
        what: String,
    },
    /// MPI_ERR_BUFFER: a buffered send that does not fit in the attached buffer.
    #[error(
        "{site}: bsend buffer overflow: {requested} bytes requested (message plus overhead), {attached} attached, {used} in use"
    )]
    BufferOverflow {
        /// Where: the sending rank, its call, the destination, tag and communicator context,
        /// and under the simulator the virtual time of the send.
        site: Box<Site>,
        /// Message size plus `BSEND_OVERHEAD`.
        requested: usize,
        /// Size of the attached buffer (0 if none).
        attached: usize,
        /// Bytes in use by buffered messages not yet delivered.
        used: usize,
    },
    /// MPI_ERR_BUFFER: `buffer_attach` while a buffer is attached.
    #[error("{site}: a buffer of {attached} bytes is already attached")]
    BufferAlreadyAttached {
        /// Where.
        site: Box<Site>,
        /// Size of the attached buffer.
        attached: usize,
    },
    /// MPI_ERR_BUFFER: `buffer_detach` with no buffer attached.
    #[error("{site}: no buffer attached")]
    NoBufferAttached {
        /// Where.
        site: Box<Site>,
    },
    /// MPI_ERR_REQUEST: `start` on a request that is still active.
    #[error("{site}: request is still active")]
    RequestActive {
        /// Where.
        site: Box<Site>,
    },
    /// MPI_ERR_REQUEST: a request that does not exist (freed or already completed).
    #[error("{site}: invalid or completed request")]
    InvalidRequest {
        /// Where.
        site: Box<Site>,
    },
    /// Strict mode: an `rsend` arrived with no matching receive posted.
    #[error("{site}: ready send arrived before a matching receive was posted at rank {receiver}")]
    ReadyNotPosted {
        /// Where (the sender's call).
        site: Box<Site>,
        /// The receiving world rank.
        receiver: u32,
    },
    /// A `Comm` or request used after the run it belongs to ended (kept past a simulated run
    /// in a `thread_local`, say): MPI's use after `MPI_Finalize`.
    #[error("{site}: the run this call belongs to has ended")]
    RunEnded {
        /// Where (the time is the run's end).
        site: Box<Site>,
    },
    /// Simulator: a rank's program called through a `Comm` or request of another rank. Under
    /// `sim` every rank's program runs on the same thread, so a `Comm` kept in a `thread_local`
    /// or `static` (as MPI programs keep their world communicator) is shared by all ranks, and
    /// one rank would act as another. The run stops at the first such call; each rank must use
    /// the `Comm` its program was given and what it makes from it.
    #[error(
        "{site}: called from the program of rank {running}, through a communicator or request \
         of rank {}; under sim every rank runs on the same thread, so one kept in a \
         thread_local or static is shared by all ranks: give each rank's program its own",
        site.rank
    )]
    ForeignRank {
        /// The call, on behalf of the rank that owns the communicator or request.
        site: Box<Site>,
        /// World rank of the program that made the call.
        running: u32,
    },
    /// Requests still active when a rank finished.
    #[error(
        "rank {rank} finished{} with {} active request(s): {}",
        time_ns.map(|t| format!(" at t={t} ns")).unwrap_or_default(),
        requests.len(),
        list(requests)
    )]
    PendingAtExit {
        /// World rank.
        rank: u32,
        /// Virtual time of the rank's end (simulator).
        time_ns: Option<u64>,
        /// The requests.
        requests: Vec<PendingRequest>,
    },
    /// Every unfinished rank is blocked and nothing is in flight: which ranks, in which calls,
    /// waiting on which peers, tags and communicators, and the wait-for cycle, as data
    /// ([`DeadlockReport`]; its `Display` is the report's text).
    ///
    /// ```
    /// use mpsim_proto::deadlock::{BlockedRank, DeadlockReport, Waiting};
    /// use mpsim_proto::error::Error;
    /// use mpsim_proto::matching::{ContextId, Source, Tag};
    ///
    /// // Two ranks, each receiving first from the other (as a backend reports them).
    /// let recv_from = |peer| Waiting {
    ///     call: "recv",
    ///     peer: Source::Rank(peer),
    ///     tag: Tag::Value(0),
    ///     context: ContextId(0),
    /// };
    /// let blocked = (0..2)
    ///     .map(|r| BlockedRank::new(r, "recv", None, vec![recv_from(1 - r)]))
    ///     .collect();
    /// let e = Error::Deadlock {
    ///     report: Box::new(DeadlockReport::new(blocked, 2, &|_| false)),
    /// };
    /// // A program (a test that expects the deadlock) reads it as data...
    /// let report = e.deadlock().expect("a deadlock");
    /// assert_eq!(report.cycle, [0, 1, 0]);
    /// assert_eq!(report.rank(1).and_then(|b| b.waits_for), Some(0));
    /// // ... and the user reads the text every backend prints.
    /// assert_eq!(
    ///     e.to_string(),
    ///     "deadlock: rank 0 blocked in recv (peer 1, tag 0, context 0); rank 1 blocked in \
    ///      recv (peer 0, tag 0, context 0); cycle 0 → 1 → 0"
    /// );
    /// ```
    #[error("deadlock: {report}")]
    Deadlock {
        /// Blocked ranks, their calls and what they wait on, and the wait-for cycle (boxed:
        /// an `Error` stays a few words).
        report: Box<DeadlockReport>,
    },
    /// Simulator: for a while of virtual time (the run's livelock limit), nothing but polls
    /// ran: no message was in flight, and every unfinished rank was blocked or polling, so no
    /// poll could find anything (a `test` loop for a message never sent).
    #[error("livelock: {report}")]
    Livelock {
        /// Since when, the polling and the blocked ranks, and the limit (boxed, as a
        /// deadlock's).
        report: Box<LivelockReport>,
    },
    /// MPI_ERR_ARG: a run asked for something it cannot be started with (no ranks, say).
    #[error("invalid argument: {what}")]
    InvalidArgument {
        /// What was wrong.
        what: String,
    },
    /// MPI_ERR_NO_MEM: memory for the run, or for a call (a send's copy of its data), could
    /// not be had.
    #[error("out of memory: {what}")]
    NoMemory {
        /// What needed it (for a call: its rank, call, peer, tag and the bytes asked for).
        what: String,
    },
    /// MPI_ERR_IO: an output of the run (a trace file, say) could not be written. mpsim's own
    /// outputs only: an `std::io::Error` of the program's own (`?` on a file it reads) is
    /// [`Error::Program`], the `io::Error` kept as its source.
    #[error("I/O error: {what}")]
    Io {
        /// What could not be written, and why.
        what: String,
    },
    /// A feature or backend this build cannot provide.
    #[error("not supported: {what}")]
    Unsupported {
        /// What was asked for.
        what: String,
    },
    /// A broken invariant of mpsim itself (a bug to report), stopping the run rather than
    /// giving a wrong result.
    #[error("internal error: {what} (this is a bug in mpsim)")]
    Internal {
        /// What went wrong.
        what: String,
    },
    /// The simulator's clock ran out: something would happen after the last instant a `u64`
    /// of nanoseconds holds (about 584 years), from the model's delays or latencies or the
    /// program's compute adding up past it. Virtual time never wraps or sticks at its maximum.
    #[error(
        "rank {rank}: virtual time overflow at t={time_ns} ns: {what} after \
         18446744073709551615 ns (about 584 years); check the model's delays and latencies \
         and the program's compute"
    )]
    TimeOverflow {
        /// The rank whose action would happen too late.
        rank: u32,
        /// The virtual time of that action, in nanoseconds.
        time_ns: u64,
        /// What would happen too late, e.g. "a message of 8 bytes to rank 1 would arrive".
        what: String,
    },
    /// A signal (Ctrl-C's `SIGINT`, `SIGTERM`) stopped the run before its end: under the
    /// simulator at virtual time `time_ns`, with a report and trace of what ran until then
    /// (clocks capped there, as for any error that stops a run: `docs/timing.md` S16 and D2 of
    /// `docs/extensions.md`); on threads each rank stopped at its next call.
    #[error(
        "interrupted by {signal}{}: the run was stopped before its end",
        time_ns.map(|t| format!(" at t={t} ns")).unwrap_or_default()
    )]
    Interrupted {
        /// The signal.
        signal: crate::interrupt::Signal,
        /// Where virtual time had got to (simulator; `None` on threads, or when the run was
        /// stopped before it started).
        time_ns: Option<u64>,
    },
    /// The run was ended because another rank failed.
    #[error("rank {rank}: aborted because {cause}")]
    Aborted {
        /// The rank that observed the abort.
        rank: u32,
        /// The first error of the run.
        cause: String,
    },
    /// A rank's program failed for a reason of its own: an error it made
    /// ([`Error::program`]) or one `?` converted (`std::io::Error`, `ParseIntError`, a
    /// `String`, a boxed error, ...; [`Error::program_from`] for any other type), with the
    /// rank and (simulator) virtual time at which its program returned it. Boxed: [`Error`]
    /// stays as small as it was.
    #[error(transparent)]
    Program(Box<ProgramError>),
    /// A rank called `abort` (MPI's `MPI_Abort`): the whole run stopped there, and a program
    /// launched by `mpsim::run` exits with `code` as its status.
    #[error(
        "rank {rank} called abort with code {code}{}",
        time_ns.map(|t| format!(" at t={t} ns")).unwrap_or_default()
    )]
    Abort {
        /// World rank of the caller.
        rank: u32,
        /// The error code it gave (MPI's `errorcode`).
        code: i32,
        /// Virtual time of the call, in nanoseconds (simulator only).
        time_ns: Option<u64>,
    },
    /// An error of a BSPlib program (`mpsim::bsp`, `spec/bsplib.md` §2): the process, its
    /// superstep, the operation and what went wrong ([`BspError`]; its class by kind).
    /// Boxed: [`Error`] stays as small as it was.
    #[error("{0}")]
    Bsp(Box<BspError>),
}

/// The site of an error of one call, `None` for the errors of a run: one list of which errors
/// have one, for [`Error::site`] and [`Error::site_mut`].
macro_rules! site_of {
    ($error:expr) => {
        match $error {
            Error::InvalidRank { site, .. }
            | Error::InvalidTag { site, .. }
            | Error::InvalidComm { site }
            | Error::Truncate { site, .. }
            | Error::CommOrder { site, .. }
            | Error::InvalidRoot { site, .. }
            | Error::InvalidBuffer { site, .. }
            | Error::InvalidOp { site, .. }
            | Error::CollectiveMismatch { site, .. }
            | Error::BufferOverflow { site, .. }
            | Error::BufferAlreadyAttached { site, .. }
            | Error::NoBufferAttached { site }
            | Error::RequestActive { site }
            | Error::InvalidRequest { site }
            | Error::RunEnded { site }
            | Error::ForeignRank { site, .. }
            | Error::ReadyNotPosted { site, .. } => Some(site),
            Error::PendingAtExit { .. }
            | Error::Deadlock { .. }
            | Error::Livelock { .. }
            | Error::Unsupported { .. }
            | Error::Internal { .. }
            | Error::Aborted { .. }
            | Error::Program(_)
            | Error::Abort { .. }
            | Error::Bsp(_)
            | Error::Interrupted { .. }
            | Error::TimeOverflow { .. }
            | Error::InvalidArgument { .. }
            | Error::NoMemory { .. }
            | Error::Io { .. } => None,
        }
    };
}

impl Error {
    /// The error of a rank whose program panicked (`Aborted`, with the panic's message).
    pub fn from_panic(rank: u32, payload: &(dyn std::any::Any + Send)) -> Self {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a non-string panic payload".to_string()
        };
        Error::Aborted {
            rank,
            cause: format!("rank {rank} panicked: {message}"),
        }
    }

    /// The MPI error class the error belongs to, which a C interface returns
    /// (`docs/p2p.md` §8 lists the mapping):
    ///
    /// - the errors of an argument or a call, as MPI classes them: `InvalidRank`
    ///   (`MPI_ERR_RANK`), `InvalidTag` (`MPI_ERR_TAG`), `InvalidComm` and `CommOrder`
    ///   (`MPI_ERR_COMM`), `Truncate` (`MPI_ERR_TRUNCATE`), `BufferOverflow`,
    ///   `BufferAlreadyAttached` and `NoBufferAttached` (`MPI_ERR_BUFFER`), `RequestActive` and
    ///   `InvalidRequest` (`MPI_ERR_REQUEST`), `InvalidArgument` (`MPI_ERR_ARG`);
    /// - `PendingAtExit` is `MPI_ERR_PENDING` (requests left pending), `NoMemory`
    ///   `MPI_ERR_NO_MEM`, `Io` `MPI_ERR_IO`, `Unsupported` `MPI_ERR_UNSUPPORTED_OPERATION`,
    ///   `Internal` `MPI_ERR_INTERN` (a bug in mpsim);
    /// - `Aborted` (another rank failed) and `Abort` (a rank called `abort`) are
    ///   `MPI_ERR_PROC_ABORTED`: the run stopped because a process aborted;
    /// - what MPI has no class for is `MPI_ERR_OTHER`: `ReadyNotPosted` (an erroneous ready
    ///   send, which MPI leaves undefined), `RunEnded` (a call after the run, as after
    ///   `MPI_Finalize`), `ForeignRank`, `Deadlock`, `Livelock`, `TimeOverflow`, `Interrupted`
    ///   and `Program` (the program's own error);
    /// - `Bsp` by its kind ([`BspError::class`]).
    ///
    /// ```
    /// use mpsim_proto::error::{Error, ErrorClass, Site};
    /// let e = Error::Truncate { site: Site::new(1, "recv"), message_bytes: 16, buffer_bytes: 8 };
    /// assert_eq!(e.class(), ErrorClass::Truncate);
    /// assert_eq!(e.class().mpi_name(), "MPI_ERR_TRUNCATE");
    /// ```
    pub fn class(&self) -> ErrorClass {
        // No `_` arm: a new variant must be classed here (and in docs/p2p.md §8).
        match self {
            Error::InvalidRank { .. } => ErrorClass::Rank,
            Error::InvalidTag { .. } => ErrorClass::Tag,
            Error::InvalidComm { .. } | Error::CommOrder { .. } => ErrorClass::Comm,
            Error::Truncate { .. } => ErrorClass::Truncate,
            Error::BufferOverflow { .. }
            | Error::BufferAlreadyAttached { .. }
            | Error::NoBufferAttached { .. } => ErrorClass::Buffer,
            Error::RequestActive { .. } | Error::InvalidRequest { .. } => ErrorClass::Request,
            Error::InvalidArgument { .. } => ErrorClass::Arg,
            Error::InvalidRoot { .. } => ErrorClass::Root,
            Error::InvalidBuffer { .. } => ErrorClass::Count,
            Error::InvalidOp { .. } => ErrorClass::Op,
            Error::PendingAtExit { .. } => ErrorClass::Pending,
            Error::NoMemory { .. } => ErrorClass::NoMem,
            Error::Io { .. } => ErrorClass::Io,
            Error::Unsupported { .. } => ErrorClass::UnsupportedOperation,
            Error::Internal { .. } => ErrorClass::Intern,
            Error::Aborted { .. } | Error::Abort { .. } => ErrorClass::ProcAborted,
            Error::Bsp(e) => e.class(),
            Error::ReadyNotPosted { .. }
            | Error::RunEnded { .. }
            | Error::ForeignRank { .. }
            | Error::Deadlock { .. }
            | Error::Livelock { .. }
            | Error::TimeOverflow { .. }
            | Error::Interrupted { .. }
            | Error::CollectiveMismatch { .. }
            | Error::Program(_) => ErrorClass::Other,
        }
    }

    /// The [`Site`] of an error of one call: where it happened, what it named (`None` for the
    /// errors of a run: a deadlock, an abort, ...).
    pub fn site(&self) -> Option<&Site> {
        site_of!(self)
    }

    /// The [`Site`] of an error of one call (`None` for the errors of a run), to change: the
    /// layer above the core names the program's call ([`Site::call`]) where the core knows
    /// only the operation (a `Truncate` is the `recv` of an `irecv` or an `mrecv`).
    pub fn site_mut(&mut self) -> Option<&mut Site> {
        site_of!(self)
    }

    /// The deadlock's report, if this is one: blocked ranks, their calls and what they wait
    /// on, and the cycle.
    pub fn deadlock(&self) -> Option<&DeadlockReport> {
        match self {
            Error::Deadlock { report } => Some(report),
            _ => None,
        }
    }

    /// The livelock's report, if this is one: since when, the polling and the blocked ranks.
    pub fn livelock(&self) -> Option<&LivelockReport> {
        match self {
            Error::Livelock { report } => Some(report),
            _ => None,
        }
    }

    /// Records the virtual time at which the error happened, unless it has one (simulator).
    pub fn stamp_time(&mut self, t: u64) {
        if let Error::PendingAtExit { time_ns, .. } = self {
            time_ns.get_or_insert(t);
        } else if let Some(site) = self.site_mut() {
            site.time_ns.get_or_insert(t);
        } else {
            self.stamp_time_of_program(t);
        }
    }

    /// [`Error::stamp_time`] of a program's failure or abort (the errors a program makes).
    /// Out of line: the call errors' stamps are inlined into every blocking call's error
    /// path, and these two arms there cost the simulated ring instructions per message.
    #[cold]
    #[inline(never)]
    fn stamp_time_of_program(&mut self, t: u64) {
        match self {
            Error::Abort { time_ns, .. } => {
                time_ns.get_or_insert(t);
            }
            Error::Program(failure) => {
                failure.time_ns.get_or_insert(t);
            }
            Error::Bsp(e) => {
                e.time_ns.get_or_insert(t);
            }
            _ => {}
        }
    }

    /// Records the world rank whose program returned the error, unless it names one: a
    /// program's own failure ([`Error::Program`]) is made where its rank is not known (by `?`),
    /// and the backend running the program names it. Other errors name their rank already.
    pub fn stamp_rank(&mut self, rank: u32) {
        if let Error::Program(failure) = self {
            failure.rank.get_or_insert(rank);
        }
    }
}

fn list(requests: &[PendingRequest]) -> String {
    requests
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Results of mpsim calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::Error;

    /// Every `Result` of the library carries an `Error`, and blocking calls move theirs on
    /// every call: the typed reports are boxed, so a deadlock's data does not make it larger
    /// (48 bytes, as when the reports were text).
    #[test]
    fn an_error_stays_six_words() {
        assert!(
            std::mem::size_of::<Error>() <= 48,
            "Error is {} bytes",
            std::mem::size_of::<Error>()
        );
    }
}
