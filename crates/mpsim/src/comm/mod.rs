//! [`Comm`]: a communicator — a group of ranks with its own matching contexts — with the
//! point-to-point calls (`docs/p2p.md` §2–§7) and the calls that make, compare and free
//! communicators (§6).
//!
//! This layer validates what the program passes (ranks, tags, `PROC_NULL`, a freed
//! communicator), turns typed buffers into bytes, translates communicator ranks into the world
//! ranks the protocol core addresses, and hands the rest to the core through the rank's
//! runtime. Sends copy the data when they are called, so a send's buffer is free again as soon
//! as the call returns; a copy the host has no memory for is `Error::NoMemory`. Nothing here
//! knows how packets travel.
//!
//! # Errors
//!
//! Every error names the program's call (`isend`, not the `send` it runs as; `sendrecv`,
//! `recv_init`), the rank, and what the call named (peer, tag, communicator context), and under
//! the simulator carries the virtual time: errors made here are stamped where they are made
//! ([`Comm::site`]), those of the protocol core as they come out of it.
//!
//! # Ranks
//!
//! A communicator's group maps its ranks to world ranks (`group.rs`): the world and its dups
//! keep no table (the identity), nor do the children of a `split` whose members are evenly
//! spaced (a first rank and a stride); others share one `Rc<[u32]>`. A message goes to the
//! *world* rank of its destination and its envelope carries the *communicator* rank of its
//! sender, which is what receives match and statuses report.
//!
//! # Context ids (`docs/p2p.md` §6 "Ours")
//!
//! Every communicator has a 64-bit id; the world's is 0. A communicator-creating call on a
//! parent (`dup`, `split`) takes the next index `i` from a counter the parent's clones share.
//! Every member makes the same such calls in the same order (MPI requires it of collective
//! calls), so every member draws the same `i`, and the child's id is
//!
//! ```text
//! id(child)   = mix(mix(id(parent), i), c)     c = 0 for dup, color + 1 for split
//! p2p context = mix(id, 0)                     (the world keeps ContextId(0))
//! collective  = mix(id, 1)
//! mix(a, b)   = splitmix64(splitmix64(a) ^ b)  (the splitmix64 finalizer)
//! ```
//!
//! So no message is needed to agree on a context, a simulated run stays byte-identical, every
//! color of one split gets its own id, and two communicators' contexts collide with
//! probability about 2⁻⁶⁴ per pair.
//!
//! `create_group` (MPI's `MPI_Comm_create_group`) is collective over its members only, so it
//! cannot draw from the parent's counter, which the other ranks do not advance. Its child's id
//! is derived from what every member passes and a count of its own:
//!
//! ```text
//! key         = fold of mix over (GROUP_SALT, tag, world rank of each member, in order)
//! id(child)   = mix(mix(id(parent), key), n)
//! ```
//!
//! where `n` counts the calls this rank made before on the same parent with the same members
//! and tag (kept in the parent's shared state, per key). Every member makes the same calls
//! with the same members in the same order (MPI requires it), so every member draws the same
//! `n`.
//!
//! An intercommunicator's point-to-point side ([`Comm::intercomm`], for the C door) is a
//! communicator-creating call on a parent that holds both groups, every member of the
//! parent taking part, its id `child_id(parent, i, INTER_SALT)`: both groups derive the same
//! context.
//!
//! # States
//!
//! A communicator is *live* until [`Comm::free`], then *freed*. Freeing marks the state that
//! clones share, so from then on every fallible call on any clone fails with
//! `Error::InvalidComm`; `rank`, `size` and `compare` still answer. Requests already started
//! are not affected. The world cannot be freed.
//!
//! # Internal traffic
//!
//! `split` runs over the parent's *collective* context with a reserved tag (`SPLIT_TAG`), so it
//! never meets a user's receive: every member sends `(color, key)` to parent rank 0, which
//! answers each member of a color with that color's parent ranks in new-rank order.

//!
//! Files: this one holds the type, its getters and the internals the others share; `p2p.rs` the
//! point-to-point calls; `create.rs` the calls that make, free and compare communicators;
//! `hidden.rs` the crate-private sends and receives on the collective context that the
//! collectives (`crate::coll`) are built on.

mod create;
mod group;
mod hidden;
mod p2p;

use std::cell::{Cell, OnceCell};
use std::convert::Infallible;
use std::fmt;
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use mpsim_proto::deadlock::Awaited;
use mpsim_proto::error::{Error, Result, Site};
use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, TAG_UB, Tag};
use mpsim_proto::p2p::{SendMode, Status};
use mpsim_proto::runtime::{PAYLOAD_INLINE, Payload, Posting, Work};

pub use create::CommCompare;
use create::mix;
use group::Group;

use crate::coll::policy::Policy;
use crate::progress::Progress;
use crate::request::{Names, Request, stamped, yield_once};
use crate::runtime::Rt;

/// The null process: sends to it complete at once, receives from it complete at once with
/// source `PROC_NULL`, tag [`Status::NO_TAG`] and no data (MPI's `MPI_PROC_NULL`). A rank
/// number, so sends and receives both take it. Errors name it `PROC_NULL`.
pub const PROC_NULL: u32 = mpsim_proto::matching::PROC_NULL;

/// Any tag (MPI's `MPI_ANY_TAG`), for receives and probes: [`Tag::Any`].
///
/// A send's tag is a plain `i32`, so a send with `ANY_TAG` does not compile (as a wildcard
/// destination is not a message's tag):
///
/// ```compile_fail,E0308
/// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// world.send(&[1u8], 1, mpsim::ANY_TAG).await?; // error: expected `i32`, found `Tag`
/// # Ok(()) }
/// ```
///
/// Receives and probes take it, or a tag:
///
/// ```
/// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// let status = world.recv(&mut [0u8; 4], 0, mpsim::ANY_TAG).await?;
/// world.probe(0, 7).await?;
/// # let _ = status; Ok(()) }
/// ```
///
/// A status names no wildcard: one that names no tag (a receive from [`PROC_NULL`], an empty
/// status) has [`Status::NO_TAG`].
pub const ANY_TAG: Tag = Tag::Any;

/// Any source (MPI's `MPI_ANY_SOURCE`), for receives and probes: [`Source::Any`].
///
/// A send's destination is a plain rank (`u32`), so a send to `ANY_SOURCE` does not compile,
/// where MPI finds it wrong only at run time:
///
/// ```compile_fail,E0308
/// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// world.send(&[1u8], mpsim::ANY_SOURCE, 0).await?; // error: expected `u32`, found `Source`
/// # Ok(()) }
/// ```
///
/// ```compile_fail,E0308
/// # fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// let request = world.isend(&[1u8], mpsim::ANY_SOURCE, 0)?; // the same for every send
/// # Ok(()) }
/// ```
///
/// Receives and probes take it, a rank, or [`PROC_NULL`]:
///
/// ```
/// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// use mpsim::{ANY_SOURCE, ANY_TAG, PROC_NULL};
/// let mut buf = [0u8; 4];
/// let status = world.recv(&mut buf, ANY_SOURCE, 7).await?;
/// world.irecv(&mut buf, ANY_SOURCE, ANY_TAG)?.wait().await?;
/// world.recv(&mut buf, PROC_NULL, 7).await?;
/// world.send(&buf, PROC_NULL, 7).await?;
/// # let _ = status; Ok(()) }
/// ```
///
/// A status names the rank a message came from; an empty status (waiting on an inactive
/// [`PersistentRequest`](crate::PersistentRequest)) has [`Status::NO_SOURCE`].
pub const ANY_SOURCE: Source = Source::Any;

/// The id of the world communicator.
const WORLD_ID: u64 = 0;

/// The id of every rank's [`Comm::solo`] (`MPI_COMM_SELF`): one communicator per rank, the
/// same context on each, which never meets another rank's.
const SOLO_ID: u64 = u64::MAX;

/// The tag of `split`'s messages on the collective context.
const SPLIT_TAG: i32 = 0x5350_4C54; // "SPLT"

/// The call names errors and deadlock reports give the communicator calls.
const DUP: &str = "comm_dup";
const SPLIT: &str = "comm_split";
const FREE: &str = "comm_free";

/// A communicator: a group of ranks and a private matching context.
///
/// Cloning is cheap and gives the *same* communicator ([`CommCompare::Ident`]); [`Comm::dup`]
/// gives a new one with the same group.
///
/// ```
/// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
/// let (me, n) = (world.rank(), world.size());
/// let mut token = [0u64; 1];
/// if me == 0 {
///     world.send(&[42u64], 1 % n, 7).await?;
/// }
/// if me == 1 % n {
///     let status = world.recv(&mut token, 0, 7).await?;
///     assert_eq!((token[0], status.source), (42, 0));
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Comm {
    inner: Rc<Inner>,
}

/// A [`Comm`] that does not keep it alive ([`Comm::downgrade`]).
pub(crate) struct WeakComm(std::rc::Weak<Inner>);

impl WeakComm {
    /// The communicator, if it is still alive.
    pub(crate) fn upgrade(&self) -> Option<Comm> {
        self.0.upgrade().map(|inner| Comm { inner })
    }
}

/// What clones of one communicator share.
struct Inner {
    rt: Rt,
    id: u64,
    p2p: ContextId,
    coll: ContextId,
    rank: u32,
    size: u32,
    /// Communicator rank → world rank.
    group: Group,
    /// Communicator-creating calls made on this communicator so far.
    created: Cell<u64>,
    /// Which of them were `split`s (bit `i` for call `i`, of the first 64): members tell their
    /// order to the `split`'s rank 0, which finds one that differs (`create.rs`).
    splits: Cell<u64>,
    /// `create_group` calls made on it so far, per key of their members and tag (`create.rs`):
    /// only members make them, so they cannot use `created`, which every member advances.
    groups_made: std::cell::RefCell<std::collections::BTreeMap<u64, u64>>,
    /// An intercommunicator's point-to-point side ([`Comm::intercomm`]): its rank is in the
    /// local group, its size and peers are the remote group's; no collective or
    /// communicator-creating call runs on it.
    inter: bool,
    /// A `split` on it was dropped or failed before it completed: its members no longer agree
    /// on `created`, and the next communicator-creating call is an error, not a silent
    /// mismatch (`create.rs`).
    abandoned: Cell<bool>,
    freed: Cell<bool>,
    /// On the world communicator: whether the rank has nonblocking collectives in flight (set
    /// by its [`Progress`]), which the launchers' wrapper of the program checks on every poll
    /// (`crate::progress::Driven`): one byte here, where the flags before it leave room.
    in_flight: Cell<bool>,
    /// Collective algorithms forced on it (`crate::coll::algo`), shared by its clones.
    forced: Cell<crate::coll::algo::Forced>,
    /// The run's collective policy (`crate::coll::policy`), shared by every communicator of
    /// the run.
    policy: Arc<Policy>,
    /// The rank's nonblocking collectives in flight (`crate::progress`), the same for every
    /// communicator of the rank: made on the world when first needed, given to each
    /// communicator made from it.
    progress: OnceCell<Rc<Progress>>,
}

impl Comm {
    // ---- getters and compute ----

    /// The world communicator of a rank of a run whose collectives follow `policy`.
    pub(crate) fn world(rt: Rt, policy: Arc<Policy>) -> Self {
        let (rank, size) = (rt.rank(), rt.size());
        Comm::from_parts(
            rt,
            policy,
            WORLD_ID,
            rank,
            size,
            Group::Identity,
            OnceCell::new(),
        )
    }

    /// A communicator with id `id`; its contexts are derived from the id.
    fn from_parts(
        rt: Rt,
        policy: Arc<Policy>,
        id: u64,
        rank: u32,
        size: u32,
        group: Group,
        progress: OnceCell<Rc<Progress>>,
    ) -> Self {
        let inner = Inner {
            rt,
            id,
            p2p: if id == WORLD_ID {
                ContextId(0)
            } else {
                ContextId(mix(id, 0))
            },
            coll: ContextId(mix(id, 1)),
            rank,
            size,
            group,
            created: Cell::new(0),
            groups_made: Default::default(),
            inter: false,
            splits: Cell::new(0),
            abandoned: Cell::new(false),
            freed: Cell::new(false),
            in_flight: Cell::new(false),
            forced: Cell::new(crate::coll::algo::Forced::NONE),
            progress,
            policy,
        };
        Comm {
            inner: Rc::new(inner),
        }
    }

    /// This rank's number in the communicator, `0..size` (still answers once freed).
    pub fn rank(&self) -> u32 {
        self.inner.rank
    }

    /// Number of ranks in the communicator (still answers once freed).
    pub fn size(&self) -> u32 {
        self.inner.size
    }

    /// Nanoseconds since the start of the run: virtual time under `sim`, host time otherwise.
    ///
    /// Under `sim` with measured compute (`--compute measured`), the rank's own code is
    /// charged when the rank next suspends (any call that waits, or `compute`), so `now_ns`
    /// does not move across code that makes no such call: to time a phase of your own code,
    /// await `compute(Duration::ZERO)` after it, as `examples/stencil2d.rs` does. (Counting
    /// the phase in `now_ns` itself, tried, costs a read of the thread CPU clock per call,
    /// which then counts as the program's compute: `stencil2d --n 64` was predicted 27% long.)
    pub fn now_ns(&self) -> u64 {
        self.rt().now_ns()
    }

    /// Accounts `d` of computation: the simulator advances this rank's clock (and lets the ranks
    /// whose time comes first run); real backends spin for `d`.
    pub async fn compute(&self, d: Duration) {
        self.rt().compute(Work::Time(d));
        yield_once().await;
    }

    /// Accounts `flops` floating-point operations at the machine model's speed
    /// (`timing.md` S3); real backends spin for the same time at the default model's speed.
    pub async fn compute_flops(&self, flops: u64) {
        self.rt().compute(Work::Flops(flops));
        yield_once().await;
    }

    /// Stops the whole run (MPI's `MPI_Abort`): every rank, on every backend. The run's error
    /// is [`Error::Abort`], naming this rank, `code` and (under `sim`) the virtual time of the
    /// call, unless the run had failed before; a program launched by [`crate::run`] then exits
    /// with `code` as its status, as `mpirun` returns the code given to `MPI_Abort`.
    ///
    /// The returned future never completes: the rank's program stops at the call, as a C
    /// program stops in `MPI_Abort`. Its output is [`Infallible`], so `match
    /// world.abort(code).await {}` is an expression of any type (a `let ... else` branch, a
    /// `match` arm) and the compiler knows nothing after it runs.
    ///
    /// - Which ranks: all of the run's, whatever communicator the call is made on (MPI lets an
    ///   implementation abort only the communicator's group; mpsim stops everything, as
    ///   MPICH and Open MPI do). The other ranks stop where they are: under `sim`, as for
    ///   any error, the run ends one lookahead of virtual time after the call
    ///   (`docs/timing.md` S16, D2 in `docs/extensions.md`) and the report shows the run up to
    ///   there; under `threads` each rank's next call, or wait in progress, fails with
    ///   [`Error::Aborted`] naming the abort, and its program's `?` ends it.
    /// - The exit status under [`crate::run`] / [`crate::exit_code`]: `code` when it is
    ///   `0..=255`, 255 for any other (an exit status keeps only 8 bits, and `256` would read
    ///   as success). `abort(0)` exits with status 0, as MPI returns the code given; the error
    ///   line is printed all the same.
    ///
    /// ```
    /// use mpsim::{Backend, Comm, Error, Launcher, Result};
    ///
    /// async fn program(world: Comm) -> Result<()> {
    ///     let input = if world.rank() == 1 { "none" } else { "7" };
    ///     let Ok(n) = input.parse::<u8>() else {
    ///         // This rank cannot go on: the whole run stops (exit status 3 under `mpsim::run`).
    ///         match world.abort(3).await {}
    ///     };
    ///     // The others wait for rank 1's number, which never comes: the abort ends their wait.
    ///     let mut got = [0u8];
    ///     world.recv(&mut got, 1, 0).await?;
    ///     assert_eq!(got[0], n);
    ///     Ok(())
    /// }
    ///
    /// let simulated = Launcher::new(3).simulate(program);
    /// let at_start = Error::Abort { rank: 1, code: 3, time_ns: Some(0) };
    /// assert_eq!(simulated.error, Some(at_start));
    /// let real = Launcher::new(3).backend(Backend::Threads).run(program);
    /// assert_eq!(real, Err(Error::Abort { rank: 1, code: 3, time_ns: None }));
    /// ```
    pub async fn abort(&self, code: i32) -> Infallible {
        self.rt().abort(code);
        crate::rank::note_abort(code);
        // Pending for ever, waking itself: a real backend sees a rank that yields after its run
        // aborted and ends its program there, as `rank::run_one` does on the note above; the
        // simulator never resumes it.
        poll_fn(|cx| {
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }

    // ---- crate internals (also for `persistent` and `create`) ----

    pub(crate) fn rt(&self) -> &Rt {
        &self.inner.rt
    }

    pub(crate) fn p2p_context(&self) -> ContextId {
        self.inner.p2p
    }

    /// The communicator's id (`docs/p2p.md` §6), shared by its clones and the same on every
    /// member: what tells two communicators apart across ranks (tools that keep per-
    /// communicator records, such as the C door's checks, key them by it).
    ///
    /// ```
    /// use mpsim::{Comm, Launcher, Result};
    ///
    /// async fn program(world: Comm) -> Result<()> {
    ///     let dup = world.dup()?;
    ///     assert_ne!(dup.id(), world.id());
    ///     assert_eq!(world.clone().id(), world.id());
    ///     Ok(())
    /// }
    ///
    /// Launcher::new(2).run(program).unwrap();
    /// ```
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Where the rank's [`Progress`] is kept (`crate::progress`).
    pub(crate) fn progress_cell(&self) -> &OnceCell<Rc<Progress>> {
        &self.inner.progress
    }

    /// On the world communicator: whether the rank has nonblocking collectives in flight.
    #[inline(always)]
    pub(crate) fn in_flight(&self) -> &Cell<bool> {
        &self.inner.in_flight
    }

    /// A handle on this communicator's shared state that does not keep it alive (the rank's
    /// [`Progress`] keeps one on the world's, whose `in_flight` it sets).
    pub(crate) fn downgrade(&self) -> WeakComm {
        WeakComm(Rc::downgrade(&self.inner))
    }

    /// The site of an error of `call` on this communicator: rank, call, context, and under the
    /// simulator the virtual time (errors are stamped where they are made).
    pub(crate) fn site(&self, call: &'static str) -> Box<Site> {
        let mut site = Site::new(self.rt().rank(), call).context(self.inner.p2p);
        site.time_ns = self.rt().virtual_time();
        site
    }

    /// `InvalidComm` once the communicator was freed, for a call that names no peer.
    ///
    /// On an intercommunicator's point-to-point side ([`Comm::intercomm`]) every call that
    /// comes here (collectives, communicator-creating calls, `buffer_attach`) is
    /// `InvalidComm`: they need the local group, which it does not hold.
    pub(crate) fn check_live(&self, call: &'static str) -> Result<()> {
        if self.inner.inter {
            return Err(Error::InvalidComm {
                site: self.site(call),
            });
        }
        self.live_or(|| self.site(call))
    }

    /// `InvalidComm` once the communicator was freed, for a call that names `peer` and `tag`
    /// (the error names them too).
    pub(crate) fn check_live_for(
        &self,
        call: &'static str,
        peer: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<()> {
        self.live_or(|| self.site(call).peer(peer).tag(tag))
    }

    /// `InvalidComm` at the site `site` makes once the communicator was freed: the check of
    /// [`Comm::check_live`] and [`Comm::check_live_for`].
    fn live_or(&self, site: impl FnOnce() -> Box<Site>) -> Result<()> {
        if self.inner.freed.get() {
            Err(Error::InvalidComm { site: site() })
        } else {
            Ok(())
        }
    }

    /// Validates a send's communicator, tag and destination (`PROC_NULL` passes). Every send
    /// comes here: the checks are a few comparisons inlined into the call, and a failure is
    /// told out of line ([`Comm::send_error`]).
    #[inline(always)]
    pub(crate) fn check_send(&self, call: &'static str, dest: u32, tag: i32) -> Result<()> {
        let valid = !self.inner.freed.get()
            && (0..=TAG_UB).contains(&tag)
            && (dest == PROC_NULL || dest < self.size());
        if valid {
            Ok(())
        } else {
            self.send_error(call, dest, tag)
        }
    }

    /// The error of a send that [`Comm::check_send`] rejects, first failure first.
    #[cold]
    #[inline(never)]
    fn send_error(&self, call: &'static str, dest: u32, tag: i32) -> Result<()> {
        self.check_live_for(call, dest, tag)?;
        self.check_tag(call, dest, tag)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        self.check_rank(call, dest, Tag::Value(tag))
    }

    /// Posts a validated send of `bytes` to communicator rank `dest` on `context`, for the
    /// program's call `names.call`.
    pub(crate) fn post_send(
        &self,
        context: ContextId,
        names: Names,
        mode: SendMode,
        bytes: &[u8],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        let call = names.call;
        if dest == PROC_NULL {
            self.rt().null_request(Posting::Send);
            return Ok(Request::null(self.rt().clone(), Status::default(), None));
        }
        let payload = self.copy_data(call, bytes, dest, tag)?;
        let to = self.world_rank(dest);
        let envelope = Envelope::new(context, self.rank(), tag);
        // The request's overhead (X1) is charged by the runtime's start.
        let id = self
            .rt()
            .isend(call, mode, to, envelope, payload)
            .map_err(|e| stamped(self.rt(), e))?;
        Ok(Request::active(self.rt().clone(), id, names, None))
    }

    /// The sender's copy of a message's data (`bytes`, for `call` to `dest` with `tag`), or
    /// `NoMemory` when the host cannot give it. Inlined into every send: a message that fits
    /// in a payload inline (up to [`PAYLOAD_INLINE`] bytes) is copied there with no other work
    /// than one comparison; a longer one's fallible allocation is out of line.
    #[inline(always)]
    pub(crate) fn copy_data(
        &self,
        call: &'static str,
        bytes: &[u8],
        dest: u32,
        tag: i32,
    ) -> Result<Payload> {
        if bytes.len() <= PAYLOAD_INLINE {
            Ok(Payload::from_slice(bytes))
        } else {
            self.copy_long(call, bytes, dest, tag)
        }
    }

    /// [`Comm::copy_data`] of a message longer than a payload holds inline: on the heap,
    /// allocated fallibly.
    #[inline(never)]
    fn copy_long(&self, call: &'static str, bytes: &[u8], dest: u32, tag: i32) -> Result<Payload> {
        // Through a `Vec` (whose copy of a slice is one `memcpy`), which the payload then
        // owns as it is, as `Payload::from_slice` does it.
        let mut copy = Vec::new();
        if copy.try_reserve_exact(bytes.len()).is_err() {
            return Err(self.no_memory(call, bytes.len(), dest, tag));
        }
        copy.extend_from_slice(bytes);
        Ok(Payload::from_vec(copy))
    }

    /// The error of a send whose copy of `bytes` bytes could not be allocated.
    #[cold]
    #[inline(never)]
    fn no_memory(&self, call: &'static str, bytes: usize, dest: u32, tag: i32) -> Error {
        let site = self.site(call).peer(dest).tag(tag);
        Error::NoMemory {
            what: format!("{site}: no memory for the send's copy of its {bytes} bytes"),
        }
    }

    /// Posts a receive for a validated pattern (`None` is `PROC_NULL`: complete at once), for
    /// the program's call `names.call`.
    pub(crate) fn post_recv<'b>(
        &self,
        names: Names,
        pattern: Option<Pattern>,
        buf: &'b mut [u8],
    ) -> Request<'b> {
        let Some(pattern) = pattern else {
            return Request::null(self.rt().clone(), proc_null_status(), Some(buf));
        };
        let source_world = self.source_world(&pattern);
        // The request's overhead (X1) is charged by the runtime's start.
        let id = self.rt().irecv(pattern, buf.len(), source_world);
        Request::active(self.rt().clone(), id, names, Some(buf))
    }

    /// The world rank of the source `pattern` names, if it names one: diagnostics of a posted
    /// receive speak world ranks (`Endpoint::irecv_from`).
    pub(crate) fn source_world(&self, pattern: &Pattern) -> Option<u32> {
        match pattern.source {
            Source::Rank(r) => Some(self.world_rank(r)),
            Source::Any => None,
        }
    }

    /// What a blocking probe with `pattern` waits for, as deadlock reports name it (the peer
    /// as a world rank, as a receive's).
    pub(crate) fn awaited(&self, pattern: &Pattern) -> Awaited {
        Awaited {
            peer: self.source_world(pattern).map_or(Source::Any, Source::Rank),
            tag: pattern.tag,
            context: pattern.context,
        }
    }

    /// The matching pattern of a receive or probe on the point-to-point context; `None` for
    /// `PROC_NULL`.
    #[inline(always)]
    pub(crate) fn pattern(
        &self,
        call: &'static str,
        source: Source,
        tag: Tag,
    ) -> Result<Option<Pattern>> {
        if !self.valid_pattern(source, tag) {
            return self.pattern_error(call, source, tag);
        }
        Ok((source != Source::Rank(PROC_NULL)).then(|| Pattern::new(self.inner.p2p, source, tag)))
    }

    /// Whether a receive or probe may take `source` and `tag` on this communicator: a few
    /// comparisons, inlined into every receive; [`Comm::pattern_error`] tells what is wrong.
    #[inline(always)]
    pub(crate) fn valid_pattern(&self, source: Source, tag: Tag) -> bool {
        !self.inner.freed.get()
            && match tag {
                Tag::Value(t) => (0..=TAG_UB).contains(&t),
                Tag::Any => true,
            }
            && match source {
                Source::Rank(r) => r == PROC_NULL || r < self.size(),
                Source::Any => true,
            }
    }

    /// Whether a receive with `source` and `tag` posts one: [`Comm::valid_pattern`], and not
    /// from `PROC_NULL`. One test of the source rank on the way of every blocking receive (a
    /// rank below the size that is not `PROC_NULL`); what does not post is told out of line.
    #[inline(always)]
    pub(crate) fn posts_receive(&self, source: Source, tag: Tag) -> bool {
        !self.inner.freed.get()
            && match tag {
                Tag::Value(t) => (0..=TAG_UB).contains(&t),
                Tag::Any => true,
            }
            && match source {
                Source::Rank(r) => r < self.size() && r != PROC_NULL,
                Source::Any => true,
            }
    }

    /// The error of a pattern that [`Comm::valid_pattern`] rejects, first failure first.
    #[cold]
    #[inline(never)]
    pub(crate) fn pattern_error(
        &self,
        call: &'static str,
        source: Source,
        tag: Tag,
    ) -> Result<Option<Pattern>> {
        self.check_live_for(call, source, tag)?;
        if let Tag::Value(t) = tag
            && !(0..=TAG_UB).contains(&t)
        {
            return Err(Error::InvalidTag {
                site: self.site(call).peer(source),
                tag,
            });
        }
        match source {
            Source::Rank(PROC_NULL) => return Ok(None),
            Source::Rank(r) => self.check_rank(call, r, tag)?,
            Source::Any => {}
        }
        Ok(Some(Pattern::new(self.inner.p2p, source, tag)))
    }

    /// `InvalidRank` unless `rank` is in the communicator; the error names the call's `tag`.
    fn check_rank(&self, call: &'static str, rank: u32, tag: Tag) -> Result<()> {
        if rank < self.size() {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                site: self.site(call).peer(rank).tag(tag),
                rank: i64::from(rank),
                size: self.size(),
            })
        }
    }

    /// `InvalidTag` unless `tag` is a tag a message can have (`ANY_TAG` is not).
    fn check_tag(&self, call: &'static str, dest: u32, tag: i32) -> Result<()> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                site: self.site(call).peer(dest),
                tag: Tag::from(tag),
            })
        }
    }

    /// The world rank of communicator rank `rank` (`rank < size`).
    fn world_rank(&self, rank: u32) -> u32 {
        self.inner.group.world_rank(rank)
    }

    /// The world ranks of the members, in communicator-rank order.
    fn world_ranks(&self) -> Vec<u32> {
        (0..self.size()).map(|r| self.world_rank(r)).collect()
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.inner.rank)
            .field("size", &self.inner.size)
            .field("context", &self.inner.p2p.0)
            .field("freed", &self.inner.freed.get())
            .finish()
    }
}

fn proc_null_status() -> Status {
    Status {
        source: PROC_NULL,
        tag: Status::NO_TAG,
        bytes: 0,
        cancelled: false,
    }
}
