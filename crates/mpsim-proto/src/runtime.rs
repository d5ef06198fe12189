//! [`RankRuntime`]: what a backend gives one rank's program — the seam between the public API
//! (`mpsim`) and the backends (`mpsim-threads`, `mpsim-sim`, later an MPI library, or a proxy
//! for a rank that lives in another process).
//!
//! The seam is data: the program's calls arrive as a [`Call`] to start and a [`Wait`] to
//! poll, in MPI's terms (a send in a mode to a rank, a receive for a pattern, a wait on a
//! request), never as a closure over a backend's insides. A backend answers each with plain
//! values ([`Started`], [`Waited`], an [`Error`]). So a backend that is not built on this
//! crate's [`Endpoint`](crate::p2p::Endpoint) (an MPI backend maps each call to MPI's) can
//! implement it, and a call can be carried to where the rank is hosted.
//!
//! The built-in backends (simulator, threads) also have fast paths, plain methods of their
//! own types that the API layer calls by their types (static dispatch, `mpsim`'s `runtime`
//! module): the types they share are in [`fast`]; a new backend needs none of it. What the
//! endpoint-based backends share when they answer a call is in [`endpoint`].
//!
//! A backend over a library with collectives of its own (the MPI backend) may run them
//! itself: [`RankRuntime::native_collectives`] says so, and the API layer then asks it to
//! start a collective ([`NativeCall`]) on a communicator ([`NativeComm`]) instead of running
//! mpsim's algorithm over point-to-point, unless the run names an algorithm (`--coll`,
//! `--reproducible`). The defaults say no, so the built-in backends run mpsim's algorithms.
//!
//! Only `std::task` here: no threads, no clocks.

pub mod endpoint;
pub mod fast;

use std::task::Poll;
use std::time::Duration;

use crate::deadlock::Awaited;
use crate::error::Error;
use crate::matching::{Envelope, Pattern};
use crate::p2p::{Completion, MessageId, ReqId, SendMode, Status};

/// The bytes a message carries between endpoints (the sender's copy). Up to
/// [`PAYLOAD_INLINE`] bytes live inline, so small messages allocate nothing.
pub type Payload = smallvec::SmallVec<[u8; PAYLOAD_INLINE]>;

/// The longest message a [`Payload`] holds without a heap allocation.
pub const PAYLOAD_INLINE: usize = 16;

/// What a nonblocking call posts: its request costs the model's per-request overhead under a
/// simulator (timing extension X1, `docs/extensions.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posting {
    /// A send request (`isend`, `issend`, `ibsend`, `irsend`, a persistent send's start).
    Send,
    /// A receive request (`irecv`, a persistent receive's start).
    Recv,
}

/// What a wait on several requests waits for ([`Wait::Requests`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Every request complete (`wait_all`, `sendrecv`).
    All,
    /// At least one complete (`wait_any`, `wait_some`).
    Any,
}

/// What a probe found: the message's status and, for a matched probe, the message, which no
/// receive can match any more.
pub type Probed = (Status, Option<MessageId>);

/// A call of the program that starts something or does it at once ([`RankRuntime::start`]).
/// Each is one MPI call, or the start of one whose wait follows.
#[derive(Debug)]
pub enum Call {
    /// A send of `payload` to world rank `to` in `mode`, made by the program's call `call`
    /// (which its errors name). A `blocking` send that completes at once (eager, buffered)
    /// leaves no request: [`Started::Request`]`(None)`; a nonblocking one always has a request
    /// and costs a request's overhead ([`Posting::Send`]).
    Send {
        /// The program's call, which errors and reports name.
        call: &'static str,
        /// The send mode.
        mode: SendMode,
        /// The destination's world rank.
        to: u32,
        /// What a receive matches.
        envelope: Envelope,
        /// The message.
        payload: Payload,
        /// A blocking call's (no request overhead; a send may leave no request).
        blocking: bool,
    },
    /// Posts a receive of up to `capacity` bytes for `pattern` ([`Started::Request`]).
    /// `source_world` is the world rank of the pattern's source when it names one. A
    /// nonblocking one costs a request's overhead ([`Posting::Recv`]). A blocking one that
    /// completed at once (its message was there) may instead be answered with its completion,
    /// leaving no request (`Started::Completion(Some(..))`), as a blocking send may leave none.
    Recv {
        /// What the receive or probe accepts.
        pattern: Pattern,
        /// The receive buffer's length in bytes.
        capacity: usize,
        /// The world rank of the pattern's source, when it names one.
        source_world: Option<u32>,
        /// A blocking call's (no request overhead; a send may leave no request).
        blocking: bool,
    },
    /// Receives a message a matched probe took, up to `capacity` bytes ([`Started::Request`]).
    MatchedRecv {
        /// The message.
        message: MessageId,
        /// The receive buffer's length in bytes.
        capacity: usize,
    },
    /// A nonblocking call that posts nothing (to `PROC_NULL`) but costs a request's overhead
    /// ([`Started::Done`]).
    NullRequest(Posting),
    /// Looks for a message a receive with `pattern` would get, taking it when `take` (a
    /// matched probe) ([`Started::Probed`]). Does not wait: a blocking probe is
    /// [`Wait::Probe`].
    Probe {
        /// What the probe accepts.
        pattern: Pattern,
        /// A matched probe: the message is taken.
        take: bool,
    },
    /// Takes the request's completion if it is complete ([`Started::Completion`]; the request
    /// is then finished).
    Test(ReqId),
    /// Whether the request is complete, finishing nothing ([`Started::Flag`]).
    IsDone(ReqId),
    /// Asks to cancel the request ([`Started::Done`]).
    Cancel(ReqId),
    /// The program lets go of a request it will not wait for ([`Started::Done`]): a receive is
    /// withdrawn (one that had matched a message discards it, and the run's warnings say so), a
    /// send goes on in the background.
    LetGo(ReqId),
    /// The program drops a message a matched probe took without receiving it
    /// ([`Started::Done`]): discarded, and the run's warnings say so.
    DropMessage {
        /// The message.
        message: MessageId,
        /// Its status, which the warning names.
        status: Status,
    },
    /// Attaches a buffer of `bytes` for buffered sends ([`Started::Done`]).
    BufferAttach(usize),
    /// Detaches the buffer once no buffered message holds it (the caller waited for that with
    /// [`Wait::BufferFree`]) ([`Started::Detached`]).
    BufferDetach,
}

/// A backend's answer to a [`Call`]: the variant each call's doc names.
#[derive(Debug)]
pub enum Started {
    /// Done; nothing to hand back.
    Done,
    /// The request to wait for, or `None` for a blocking send that completed at once.
    Request(Option<ReqId>),
    /// What a probe found, if anything.
    Probed(Option<Probed>),
    /// A test's completion, if the request was complete.
    Completion(Option<Completion<Payload>>),
    /// A yes or no.
    Flag(bool),
    /// The bytes of the buffer detached.
    Detached(usize),
}

/// What a blocking call waits for ([`RankRuntime::poll_wait`]). Each names the program's call
/// `call`, which a deadlock report names.
#[derive(Clone, Copy, Debug)]
pub enum Wait<'a> {
    /// One request complete: [`Waited::Completion`], the request then finished.
    Request {
        /// The request.
        req: ReqId,
        /// The program's call.
        call: &'static str,
    },
    /// Of `reqs` (not empty), all complete or at least one ([`Needs`]): [`Waited::Index`] of
    /// the lowest complete; none is finished (the caller tests each). A deadlock report names
    /// every one still incomplete.
    Requests {
        /// The requests, in the program's order.
        reqs: &'a [ReqId],
        /// All of them, or any.
        needs: Needs,
        /// The program's call, which errors and reports name.
        call: &'static str,
    },
    /// A message a receive with `pattern` would get (taken when `take`: a matched probe):
    /// [`Waited::Probed`]. A deadlock report names `awaited`.
    Probe {
        /// What the probe accepts.
        pattern: &'a Pattern,
        /// A matched probe: the message is taken.
        take: bool,
        /// The program's call, which errors and reports name.
        call: &'static str,
        /// What a deadlock report names.
        awaited: Awaited,
    },
    /// No buffered message holds attached-buffer bytes (`buffer_detach`): [`Waited::Done`].
    BufferFree,
}

/// A backend's answer to a [`Wait`] that is over: the variant each wait's doc names.
#[derive(Debug)]
pub enum Waited {
    /// The request's completion (finished for the backend; the caller copies the data out).
    Completion(Completion<Payload>),
    /// The index of the lowest complete request.
    Index(usize),
    /// The message found.
    Probed(Probed),
    /// Over; nothing to hand back.
    Done,
}

/// Computation the program declares ([`RankRuntime::compute`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// This long.
    Time(Duration),
    /// This many floating-point operations, at the target machine's speed.
    Flops(u64),
    /// Communication a model charges as a whole rather than message by message: a BSP
    /// superstep's `h·g + l` under the BSP cost model (`mpsim::bsp`, `docs/bsplib.md` §4).
    /// The simulator moves the clock by it as a blocking wait named `bsp_sync` (blocked time,
    /// not compute, whatever the compute mode); a real backend does nothing (its communication
    /// took its own time).
    Sync(Duration),
}

/// An element type a library's own reduction knows ([`NativeCall`]): the primitive numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

/// A built-in reduction a library's own collective runs ([`NativeCall`]), MPI's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `MPI_SUM`.
    Sum,
    /// `MPI_PROD`.
    Prod,
    /// `MPI_MIN`.
    Min,
    /// `MPI_MAX`.
    Max,
    /// `MPI_BAND`.
    Band,
    /// `MPI_BOR`.
    Bor,
    /// `MPI_BXOR`.
    Bxor,
    /// `MPI_LAND`.
    Land,
    /// `MPI_LOR`.
    Lor,
    /// `MPI_LXOR`.
    Lxor,
}

/// The communicator of a native collective: what tells it apart (its point-to-point context,
/// the same on every member; the world's is `ContextId(0)`), this rank's number in it, its
/// size, and the world rank of each of its ranks.
#[derive(Clone, Copy)]
pub struct NativeComm<'a> {
    /// The communicator's point-to-point context.
    pub context: crate::matching::ContextId,
    /// This rank's number in it.
    pub rank: u32,
    /// Its size.
    pub size: u32,
    /// The world rank of each of its ranks.
    pub world_rank_of: &'a dyn Fn(u32) -> u32,
}

impl std::fmt::Debug for NativeComm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeComm")
            .field("context", &self.context)
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

/// A collective the backend's library runs itself ([`RankRuntime::start_native`]): this rank's
/// input as bytes (copied by the backend), every rank's of the same length unless said. The
/// request's completion carries this rank's result as its payload (none where the rank gets
/// none: a barrier, a reduce or gather off the root).
#[derive(Clone, Copy, Debug)]
pub enum NativeCall<'a> {
    /// `MPI_Ibarrier`.
    Barrier,
    /// `MPI_Ibcast` of `data` (the root's is sent; every rank's has the length of the root's).
    Bcast {
        /// The rank's buffer.
        data: &'a [u8],
        /// The root.
        root: u32,
    },
    /// `MPI_Ireduce` of `count` elements of `elem` by `op` to `root`.
    Reduce {
        /// This rank's contribution.
        send: &'a [u8],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
        /// The root.
        root: u32,
    },
    /// `MPI_Iallreduce`.
    Allreduce {
        /// This rank's contribution.
        send: &'a [u8],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
    },
    /// `MPI_Iscan`.
    Scan {
        /// This rank's contribution.
        send: &'a [u8],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
    },
    /// `MPI_Iexscan` (rank 0's result is undefined in MPI: its payload is `send`'s length of
    /// zero bytes, which the caller does not copy).
    Exscan {
        /// This rank's contribution.
        send: &'a [u8],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
    },
    /// `MPI_Igather` of `send` from every rank to `root` (the root gets `size` blocks).
    Gather {
        /// This rank's block.
        send: &'a [u8],
        /// The root.
        root: u32,
    },
    /// `MPI_Iscatter` of `block` bytes to each rank from the root's `send` (`size` blocks;
    /// empty elsewhere).
    Scatter {
        /// The root's blocks.
        send: &'a [u8],
        /// Bytes per rank.
        block: usize,
        /// The root.
        root: u32,
    },
    /// `MPI_Iallgather` of `send` (every rank gets `size` blocks).
    Allgather {
        /// This rank's block.
        send: &'a [u8],
    },
    /// `MPI_Ialltoall` of `send`'s `size` equal blocks.
    Alltoall {
        /// One block per rank.
        send: &'a [u8],
    },
    /// `MPI_Igatherv` of `send` from every rank to `root`, which gets rank `i`'s `counts[i]`
    /// elements of `unit` bytes after rank `i - 1`'s.
    Gatherv {
        /// This rank's block.
        send: &'a [u8],
        /// Elements per rank (the root's; empty elsewhere).
        counts: &'a [usize],
        /// Bytes per element.
        unit: usize,
        /// The root.
        root: u32,
    },
    /// `MPI_Iscatterv` of the root's `send` (rank `i`'s `counts[i]` elements of `unit` bytes
    /// after rank `i - 1`'s): this rank gets `recv` bytes.
    Scatterv {
        /// The root's blocks (empty elsewhere).
        send: &'a [u8],
        /// Elements per rank (the root's; empty elsewhere).
        counts: &'a [usize],
        /// Bytes per element.
        unit: usize,
        /// This rank's bytes.
        recv: usize,
        /// The root.
        root: u32,
    },
    /// `MPI_Iallgatherv`: every rank gets rank `i`'s `counts[i]` elements of `unit` bytes after
    /// rank `i - 1`'s (the same `counts` on every rank).
    Allgatherv {
        /// This rank's block.
        send: &'a [u8],
        /// Elements per rank.
        counts: &'a [usize],
        /// Bytes per element.
        unit: usize,
    },
    /// `MPI_Ialltoallv`: `send_counts[j]` elements of `unit` bytes of `send` to rank `j`,
    /// `recv_counts[i]` from rank `i`, the blocks packed in rank order.
    Alltoallv {
        /// The blocks for each rank.
        send: &'a [u8],
        /// Elements to each rank.
        send_counts: &'a [usize],
        /// Elements from each rank.
        recv_counts: &'a [usize],
        /// Bytes per element.
        unit: usize,
    },
    /// `MPI_Ireduce_scatter`: `send` reduced over the ranks, rank `i` gets block `i` of
    /// `counts[i]` elements (the same `counts` on every rank).
    ReduceScatter {
        /// This rank's contribution (every block).
        send: &'a [u8],
        /// Elements per rank.
        counts: &'a [usize],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
    },
    /// `MPI_Ireduce_scatter_block`: as [`NativeCall::ReduceScatter`], `size` equal blocks.
    ReduceScatterBlock {
        /// This rank's contribution (every block).
        send: &'a [u8],
        /// Its element type.
        elem: Elem,
        /// The operation.
        op: ReduceOp,
    },
}

/// The backend side of one rank: start a call, poll a wait, block until a wait may be over,
/// let others progress, compute, read the time; and the run-wide act of abort.
///
/// # Waits
///
/// Each blocking call of the program waits in [`RankRuntime::poll_wait`], polled until it is
/// ready. Pending, the backend has recorded what the rank waits for (a deadlock report names
/// it) and arranged to wake the rank's task when it may be over. Its ready answer is the
/// call's return: a simulator ends the wait there, and only there moves the rank's clock
/// (`docs/timing.md` S1). An error ends the wait for a run-wide reason (a deadlock, another
/// rank failed, the run ended), and the request stays the program's.
///
/// Who polls again: a backend that runs its ranks itself (the simulator's kernel, the threads
/// backend's loop) knows when a wait may be over. A rank driven by a generic loop
/// (`mpsim::rank::run_one`: one rank per process) is polled again after
/// [`RankRuntime::block`] returns.
///
/// # Errors
///
/// A backend's errors are not stamped with a time: the API layer stamps every error the program
/// gets with [`RankRuntime::virtual_time`].
pub trait RankRuntime {
    /// World rank of this rank.
    fn rank(&self) -> u32;

    /// Number of ranks in the world.
    fn size(&self) -> u32;

    /// Starts `call` (see [`Call`] for each one's answer).
    fn start(&self, call: Call) -> Result<Started, Error>;

    /// Polls the wait `wait` (see [`Wait`] for each one's answer).
    fn poll_wait(&self, wait: Wait<'_>) -> Poll<Result<Waited, Error>>;

    /// The rank's program is pending on a wait this runtime answered `Pending`: returns when
    /// the wait may be over (something arrived) or can no longer be (the run failed, so that
    /// the next poll returns the error), without spinning a core while nothing comes. Called by
    /// a generic loop that drives one rank (`mpsim::rank::run_one`); a backend that drives its
    /// ranks itself says what it does.
    fn block(&self);

    /// A poll that found nothing (`call`: `test`, `iprobe`, ...): the program then yields once,
    /// so that other ranks progress. Real backends may yield the thread; the simulator charges
    /// `poll_cost` (`docs/timing.md` S2) and names `call` if the run livelocks.
    fn idle(&self, call: &'static str);

    /// Accounts `work` (simulated backends advance the clock and the program then yields once;
    /// real ones spin for a declared time, as the caller's code takes its own).
    fn compute(&self, work: Work);

    /// Nanoseconds since the start of the run: virtual under a simulator, host time otherwise.
    fn now_ns(&self) -> u64;

    /// The rank's virtual time, under a simulator (errors carry it); `None` on real backends.
    fn virtual_time(&self) -> Option<u64> {
        None
    }

    /// Whether this backend runs collectives with a library's own ([`RankRuntime::start_native`]).
    /// The built-in backends do not: mpsim's algorithms run there.
    fn native_collectives(&self) -> bool {
        false
    }

    /// Whether the communicator `comm` has what [`RankRuntime::start_native`] needs (an MPI
    /// communicator of its own) already. When it has not, the caller brings every member to
    /// the same point first (a barrier of mpsim's own, which the deadlock watchdog sees) and
    /// then calls [`RankRuntime::make_native`] on every member.
    fn native_ready(&self, comm: NativeComm<'_>) -> bool {
        let _ = comm;
        false
    }

    /// Makes what native collectives on `comm` need (collective over its members, which have
    /// all reached this call: see [`RankRuntime::native_ready`]).
    fn make_native(&self, comm: NativeComm<'_>) -> Result<(), Error> {
        let _ = comm;
        Err(Error::Unsupported {
            what: "this backend has no collectives of its own".into(),
        })
    }

    /// Starts `call` on `comm` as the library's own nonblocking collective, for the program's
    /// call `name` (which errors and reports name): the request, whose completion's payload
    /// is the rank's result, waited for and tested as any other; `Ok(None)` when the backend
    /// has none for it (the caller then runs mpsim's algorithm).
    fn start_native(
        &self,
        comm: NativeComm<'_>,
        call: NativeCall<'_>,
        name: &'static str,
    ) -> Result<Option<ReqId>, Error> {
        let _ = (comm, call, name);
        Ok(None)
    }

    /// The program called `abort` with `code` (MPI's `MPI_Abort`): the backend stops the whole
    /// run with [`Error::Abort`] naming this rank, `code` and (simulated) the time of the call,
    /// unless the run has failed already. The caller then suspends forever: a simulator never
    /// resumes it, a real backend ends the rank's program there.
    fn abort(&self, code: i32);
}

/// The answer a backend gave to `call` was not the variant its doc names: a backend's bug.
#[cold]
#[inline(never)]
pub fn wrong_answer(call: &str, answer: &dyn std::fmt::Debug) -> ! {
    panic!("a backend answered {call} with {answer:?}, which that call never gets")
}
