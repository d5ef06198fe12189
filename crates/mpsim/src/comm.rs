//! [`Comm`]: a communicator — a group of ranks with its own matching contexts — with the
//! point-to-point calls (`spec/p2p.md` §2–§7) and the calls that make, compare and free
//! communicators (§6).
//!
//! This layer validates what the program passes (ranks, tags, `PROC_NULL`, a freed
//! communicator), turns typed buffers into bytes, translates communicator ranks into the world
//! ranks the protocol core addresses, and hands the rest to the core through the rank's
//! runtime. Sends copy the data when they are called, so a send's buffer is free again as soon
//! as the call returns. Nothing here knows how packets travel.
//!
//! # Ranks
//!
//! A communicator's group maps its ranks to world ranks; the world and its dups keep no table
//! (the identity), others share one `Rc<[u32]>`. A message goes to the *world* rank of its
//! destination and its envelope carries the *communicator* rank of its sender, which is what
//! receives match and statuses report.
//!
//! # Context ids (`spec/p2p.md` §6 "Ours")
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

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::poll_fn;
use std::rc::Rc;
use std::time::Duration;

use bytemuck::Pod;
use mpsim_proto::error::{Error, Result, Site};
use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, TAG_UB, Tag};
use mpsim_proto::p2p::{ReqId, SendMode, Status};
use mpsim_proto::runtime::{Payload, RankRuntime};

use crate::message::Message;
use crate::request::{Request, finish, idle, stamped, wait_all, yield_once};

/// The null process: sends to it complete at once, receives from it complete at once with
/// source `PROC_NULL`, tag [`ANY_TAG`] and no data (MPI's `MPI_PROC_NULL`).
pub const PROC_NULL: u32 = u32::MAX - 1;

/// The tag a status reports for a receive from [`PROC_NULL`] or an empty status (MPI's
/// `MPI_ANY_TAG`). To receive any tag, pass [`Tag::Any`].
pub const ANY_TAG: i32 = -1;

/// The source an empty status reports (MPI's `MPI_ANY_SOURCE`), e.g. waiting on an inactive
/// [`PersistentRequest`](crate::PersistentRequest). To receive from any source, pass
/// [`Source::Any`].
pub const ANY_SOURCE: u32 = u32::MAX;

/// The id of the world communicator.
const WORLD_ID: u64 = 0;

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

/// What clones of one communicator share.
struct Inner {
    rt: Rc<dyn RankRuntime>,
    id: u64,
    p2p: ContextId,
    coll: ContextId,
    rank: u32,
    size: u32,
    /// Communicator rank → world rank; `None` is the identity (the world and its dups).
    group: Option<Rc<[u32]>>,
    /// Communicator-creating calls made on this communicator so far.
    created: Cell<u64>,
    freed: Cell<bool>,
}

/// How two communicators relate ([`Comm::compare`]; MPI's `MPI_Comm_compare`).
///
/// ```
/// use mpsim::{CommCompare, Launcher};
/// Launcher::new(2)
///     .run(|world| async move {
///         assert_eq!(world.compare(&world.clone()), CommCompare::Ident);
///         assert_eq!(world.compare(&world.dup()?), CommCompare::Congruent);
///         let reversed = world.split(Some(0), -i64::from(world.rank())).await?;
///         let reversed = reversed.expect("every rank has color 0");
///         assert_eq!(world.compare(&reversed), CommCompare::Similar);
///         Ok(())
///     })
///     .expect("compare");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommCompare {
    /// The same communicator, i.e. the same context: a clone (`MPI_IDENT`).
    Ident,
    /// The same ranks in the same order, another context, e.g. a dup (`MPI_CONGRUENT`).
    Congruent,
    /// The same ranks in another order (`MPI_SIMILAR`).
    Similar,
    /// Different ranks (`MPI_UNEQUAL`).
    Unequal,
}

impl Comm {
    /// The world communicator of a rank.
    pub(crate) fn world(rt: Rc<dyn RankRuntime>) -> Self {
        let (rank, size) = (rt.rank(), rt.size());
        Comm::from_parts(rt, WORLD_ID, rank, size, None)
    }

    /// A communicator with id `id`; its contexts are derived from the id.
    fn from_parts(
        rt: Rc<dyn RankRuntime>,
        id: u64,
        rank: u32,
        size: u32,
        group: Option<Rc<[u32]>>,
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
            freed: Cell::new(false),
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
    pub fn now_ns(&self) -> u64 {
        self.rt().now_ns()
    }

    /// Accounts `d` of computation: the simulator advances this rank's clock (and lets the ranks
    /// whose time comes first run); real backends spin for `d`.
    pub async fn compute(&self, d: Duration) {
        self.rt().compute(d);
        yield_once().await;
    }

    /// Accounts `flops` floating-point operations at the machine model's speed
    /// (`timing.md` S3); real backends spin for the same time at the default model's speed.
    pub async fn compute_flops(&self, flops: u64) {
        self.rt().compute_flops(flops);
        yield_once().await;
    }

    // ---- sends ----

    /// Standard send: returns when `buf` may be reused (at once up to the eager threshold).
    pub async fn send<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.send_blocking(SendMode::Standard, bytemuck::cast_slice(buf), dest, tag)
            .await
    }

    /// Synchronous send: returns when the matching receive has taken the data.
    pub async fn ssend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.send_blocking(SendMode::Synchronous, bytemuck::cast_slice(buf), dest, tag)
            .await
    }

    /// Buffered send: copies into the attached buffer and returns at once; `BufferOverflow`
    /// when it does not fit.
    pub async fn bsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.send_blocking(SendMode::Buffered, bytemuck::cast_slice(buf), dest, tag)
            .await
    }

    /// Ready send: the matching receive must already be posted (checked in strict mode).
    pub async fn rsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.send_blocking(SendMode::Ready, bytemuck::cast_slice(buf), dest, tag)
            .await
    }

    /// Nonblocking standard send. The data is copied now; `buf` is free when this returns.
    pub fn isend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Standard, buf, dest, tag)
    }

    /// Nonblocking synchronous send.
    pub fn issend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Synchronous, buf, dest, tag)
    }

    /// Nonblocking buffered send.
    pub fn ibsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Buffered, buf, dest, tag)
    }

    /// Nonblocking ready send.
    pub fn irsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Ready, buf, dest, tag)
    }

    /// Any send mode, nonblocking.
    pub fn start_send<T: Pod>(
        &self,
        mode: SendMode,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        let call = mode.call();
        self.check_send(call, dest, tag)?;
        let bytes = bytemuck::cast_slice(buf);
        self.post_send(self.inner.p2p, call, mode, bytes, dest, tag)
    }

    // ---- receives ----

    /// Receives into `buf` a message from `source` (a rank or [`Source::Any`]) with `tag` (a
    /// tag or [`Tag::Any`]). A longer message fills `buf` and gives `Error::Truncate`.
    pub async fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Status> {
        let pattern = self.pattern("recv", source.into(), tag.into())?;
        self.recv_blocking(pattern, bytemuck::cast_slice_mut(buf))
            .await
    }

    /// Nonblocking receive into `buf`; the data is written when the request completes.
    ///
    /// The request borrows `buf` until it is waited for (or dropped), so the program cannot
    /// read or write the buffer while a receive into it is pending:
    ///
    /// ```compile_fail,E0506
    /// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
    /// let mut buf = [0u8; 4];
    /// let req = world.irecv(&mut buf, 0, 0)?;
    /// buf[0] = 1; // error: `buf` is lent to the pending receive
    /// req.wait().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Once the request is waited for, the buffer is the program's again:
    ///
    /// ```
    /// # async fn demo(world: mpsim::Comm) -> mpsim::Result<()> {
    /// let mut buf = [0u8; 4];
    /// let req = world.irecv(&mut buf, 0, 0)?;
    /// req.wait().await?;
    /// buf[0] = 1;
    /// # Ok(()) }
    /// ```
    pub fn irecv<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'b>> {
        let pattern = self.pattern("recv", source.into(), tag.into())?;
        Ok(self.post_recv("recv", pattern, bytemuck::cast_slice_mut(buf)))
    }

    /// The status of a message that a receive with this pattern would get now, if any. Finding
    /// nothing is a scheduling point (`timing.md` S2), hence `async`.
    pub async fn iprobe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Option<Status>> {
        let Some(pattern) = self.pattern("iprobe", source.into(), tag.into())? else {
            return Ok(Some(proc_null_status()));
        };
        let mut found = None;
        self.rt()
            .with_endpoint(&mut |ep| found = ep.iprobe(&pattern));
        if found.is_none() {
            idle(self.rt()).await;
        }
        Ok(found)
    }

    /// Waits for a message a receive with this pattern would get, without taking it. Under
    /// `sim` it returns at the message's arrival (`timing.md` §5: it blocks like a receive).
    pub async fn probe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Status> {
        let Some(pattern) = self.pattern("probe", source.into(), tag.into())? else {
            return Ok(proc_null_status());
        };
        loop {
            let seen = self.rt().arrivals();
            let mut found = None;
            self.rt()
                .with_endpoint(&mut |ep| found = ep.iprobe(&pattern));
            if let Some(status) = found {
                return Ok(status);
            }
            let rt = self.rt();
            poll_fn(|cx| rt.poll_arrival(seen, "probe", cx)).await?;
        }
    }

    /// Takes the message a receive with this pattern would get now, if any (matched probe):
    /// no receive can match it any more; receive it with [`Message::mrecv`]. Finding nothing is
    /// a scheduling point, as for [`Comm::iprobe`].
    pub async fn improbe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Option<Message>> {
        let Some(pattern) = self.pattern("improbe", source.into(), tag.into())? else {
            return Ok(Some(Message::new(
                self.rt().clone(),
                None,
                proc_null_status(),
            )));
        };
        let mut found = None;
        self.rt()
            .with_endpoint(&mut |ep| found = ep.improbe(&pattern));
        match found {
            Some((id, status)) => Ok(Some(Message::new(self.rt().clone(), Some(id), status))),
            None => {
                idle(self.rt()).await;
                Ok(None)
            }
        }
    }

    /// Waits for a message a receive with this pattern would get and takes it (matched probe).
    /// Under `sim` it returns at the message's arrival, which is when its sender is answered
    /// (`timing.md` S12).
    pub async fn mprobe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Message> {
        let Some(pattern) = self.pattern("mprobe", source.into(), tag.into())? else {
            return Ok(Message::new(self.rt().clone(), None, proc_null_status()));
        };
        loop {
            let seen = self.rt().arrivals();
            let mut found = None;
            self.rt()
                .with_endpoint(&mut |ep| found = ep.improbe(&pattern));
            if let Some((id, status)) = found {
                return Ok(Message::new(self.rt().clone(), Some(id), status));
            }
            let rt = self.rt();
            poll_fn(|cx| rt.poll_arrival(seen, "mprobe", cx)).await?;
        }
    }

    /// Sends `send` to `dest` and receives into `recv` from `source`, without deadlocking on a
    /// ring shift (`spec/p2p.md` §7).
    pub async fn sendrecv<S: Pod, R: Pod>(
        &self,
        send: &[S],
        dest: u32,
        send_tag: i32,
        recv: &mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<Tag>,
    ) -> Result<Status> {
        let mut reqs = [
            self.irecv(recv, source, recv_tag)?,
            self.isend(send, dest, send_tag)?,
        ];
        Ok(wait_all(&mut reqs).await?[0])
    }

    /// Like [`Comm::sendrecv`] with one buffer: its contents are sent, then replaced by the
    /// received message.
    pub async fn sendrecv_replace<T: Pod>(
        &self,
        buf: &mut [T],
        dest: u32,
        send_tag: i32,
        source: impl Into<Source>,
        recv_tag: impl Into<Tag>,
    ) -> Result<Status> {
        let send = self.isend(buf, dest, send_tag)?; // copies `buf` now
        let status = self.irecv(buf, source, recv_tag)?.wait().await?;
        send.wait().await?;
        Ok(status)
    }

    // ---- buffers ----

    /// Attaches a buffer of `bytes` bytes for buffered sends (one per rank).
    pub fn buffer_attach(&self, bytes: usize) -> Result<()> {
        self.check_live("buffer_attach")?;
        let mut out = Ok(());
        self.rt()
            .with_endpoint(&mut |ep| out = ep.buffer_attach(bytes));
        out
    }

    /// Waits until every buffered message has been delivered, then detaches the buffer and
    /// returns its size.
    pub async fn buffer_detach(&self) -> Result<usize> {
        self.check_live("buffer_detach")?;
        let rt = Rc::clone(self.rt());
        poll_fn(|cx| rt.poll_buffer_free(cx)).await?;
        let mut out = Ok(0);
        self.rt().with_endpoint(&mut |ep| out = ep.buffer_detach());
        out
    }

    // ---- communicators ----

    /// A new communicator with the same group, in the same order, and new contexts: traffic on
    /// the two never meets (MPI's `MPI_Comm_dup`).
    ///
    /// Collective in MPI's sense (every member dups in the same order relative to its other
    /// communicator-creating calls on `self`), but it sends nothing: the new context id is
    /// derived (module docs, "Context ids").
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let twin = world.dup()?;
    ///         let peer = 1 - world.rank();
    ///         let (mut a, mut b) = ([0u8], [0u8]);
    ///         twin.send(&[2u8], peer, 0).await?;
    ///         world.send(&[1u8], peer, 0).await?;
    ///         world.recv(&mut a, peer, 0).await?; // not the dup's message
    ///         twin.recv(&mut b, peer, 0).await?;
    ///         assert_eq!((a, b), ([1], [2]));
    ///         Ok(())
    ///     })
    ///     .expect("dup");
    /// ```
    pub fn dup(&self) -> Result<Comm> {
        self.check_live(DUP)?;
        let id = child_id(self.inner.id, self.next_child_index(), 0);
        let (rank, size, group) = (self.rank(), self.size(), self.inner.group.clone());
        Ok(Comm::from_parts(self.rt().clone(), id, rank, size, group))
    }

    /// Splits the communicator by `color` (MPI's `MPI_Comm_split`): the members with one color
    /// form a new communicator, ranked by `key`, then by rank in `self`. `None` (MPI's
    /// `MPI_UNDEFINED`) takes part but joins nothing and gets `None`.
    ///
    /// Collective: every member of `self` must call it. It exchanges messages on `self`'s
    /// collective context, never seen by point-to-point receives.
    ///
    /// ```
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let half = world.split(Some(me % 2), 0).await?.expect("every rank has a color");
    ///         assert_eq!((half.size(), half.rank()), (2, me / 2));
    ///         let none = world.split(None, 0).await?;
    ///         assert!(none.is_none());
    ///         Ok(())
    ///     })
    ///     .expect("split");
    /// ```
    pub async fn split(&self, color: Option<u32>, key: i64) -> Result<Option<Comm>> {
        self.check_live(SPLIT)?;
        let index = self.next_child_index();
        let mine = encode_split(color, key);
        let members = if self.rank() == 0 {
            self.split_root(mine).await?
        } else {
            self.split_member(mine).await?
        };
        Ok(color.map(|c| {
            let id = child_id(self.inner.id, index, u64::from(c) + 1);
            self.child(id, &members)
        }))
    }

    /// Frees the communicator (MPI's `MPI_Comm_free`): from now on every fallible call on it
    /// or any clone fails with `Error::InvalidComm`. Requests already started complete as
    /// usual. Freeing the world, or a freed communicator, is `InvalidComm`.
    ///
    /// ```
    /// mpsim::Launcher::new(1)
    ///     .run(|world| async move {
    ///         let mut twin = world.dup()?;
    ///         let clone = twin.clone();
    ///         twin.free()?;
    ///         let err = clone.send(&[1u8], 0, 0).await.expect_err("freed");
    ///         assert!(matches!(err, mpsim::Error::InvalidComm { .. }));
    ///         Ok(())
    ///     })
    ///     .expect("free");
    /// ```
    pub fn free(&mut self) -> Result<()> {
        self.check_live(FREE)?;
        if self.inner.id == WORLD_ID {
            return Err(Error::InvalidComm {
                site: self.site(FREE),
            });
        }
        self.inner.freed.set(true);
        Ok(())
    }

    /// How `self` and `other` relate: the same communicator, the same ranks in the same or in
    /// another order, or different ranks (example on [`CommCompare`]).
    pub fn compare(&self, other: &Comm) -> CommCompare {
        if self.inner.p2p == other.inner.p2p {
            return CommCompare::Ident;
        }
        let (mut mine, mut theirs) = (self.world_ranks(), other.world_ranks());
        if mine == theirs {
            return CommCompare::Congruent;
        }
        mine.sort_unstable();
        theirs.sort_unstable();
        if mine == theirs {
            CommCompare::Similar
        } else {
            CommCompare::Unequal
        }
    }

    // ---- crate internals (also for `persistent`) ----

    pub(crate) fn rt(&self) -> &Rc<dyn RankRuntime> {
        &self.inner.rt
    }

    pub(crate) fn p2p_context(&self) -> ContextId {
        self.inner.p2p
    }

    pub(crate) fn site(&self, call: &'static str) -> Box<Site> {
        Site::new(self.rt().rank(), call).context(self.inner.p2p)
    }

    /// `InvalidComm` once the communicator was freed.
    pub(crate) fn check_live(&self, call: &'static str) -> Result<()> {
        if self.inner.freed.get() {
            Err(Error::InvalidComm {
                site: self.site(call),
            })
        } else {
            Ok(())
        }
    }

    /// Validates a send's communicator, tag and destination (`PROC_NULL` passes).
    pub(crate) fn check_send(&self, call: &'static str, dest: u32, tag: i32) -> Result<()> {
        self.check_live(call)?;
        self.check_tag(call, dest, tag)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        self.check_rank(call, dest)
    }

    /// Posts a validated send of `bytes` to communicator rank `dest` on `context`.
    pub(crate) fn post_send(
        &self,
        context: ContextId,
        call: &'static str,
        mode: SendMode,
        bytes: &[u8],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        if dest == PROC_NULL {
            return Ok(Request::null(self.rt().clone(), Status::default(), None));
        }
        let to = self.world_rank(dest);
        let envelope = Envelope::new(context, self.rank(), tag);
        let mut out: Option<Result<ReqId>> = None;
        self.rt().with_endpoint(&mut |ep| {
            out = Some(ep.isend(mode, to, envelope, bytes.len(), Payload::from_slice(bytes)));
        });
        let id = out
            .expect("with_endpoint runs the closure exactly once")
            .map_err(|e| stamped(&**self.rt(), e))?;
        Ok(Request::active(self.rt().clone(), id, call, None))
    }

    /// A blocking send: posts it and, when it completes at once (eager, buffered), finishes it
    /// in the same pass through the endpoint, with no request to wait for.
    async fn send_blocking(&self, mode: SendMode, bytes: &[u8], dest: u32, tag: i32) -> Result<()> {
        let call = mode.call();
        self.check_send(call, dest, tag)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        let to = self.world_rank(dest);
        let envelope = Envelope::new(self.inner.p2p, self.rank(), tag);
        let mut out: Option<Result<(ReqId, bool)>> = None;
        self.rt().with_endpoint(&mut |ep| {
            out = Some(
                ep.isend(mode, to, envelope, bytes.len(), Payload::from_slice(bytes))
                    .map(|id| (id, ep.is_done(id) && matches!(ep.test(id), Ok(Some(_))))),
            );
        });
        let (id, done) = out
            .expect("with_endpoint runs the closure exactly once")
            .map_err(|e| stamped(&**self.rt(), e))?;
        if done {
            return Ok(());
        }
        Request::active(self.rt().clone(), id, call, None)
            .wait()
            .await
            .map(drop)
    }

    /// A blocking receive: posts it and, when a waiting message matches at once, completes it
    /// in the same pass through the endpoint.
    async fn recv_blocking(&self, pattern: Option<Pattern>, buf: &mut [u8]) -> Result<Status> {
        let Some(pattern) = pattern else {
            return Ok(proc_null_status());
        };
        let capacity = buf.len();
        let source_world = match pattern.source {
            Source::Rank(r) => Some(self.world_rank(r)),
            Source::Any => None,
        };
        let mut out = None;
        self.rt().with_endpoint(&mut |ep| {
            let id = ep.irecv_from(pattern, capacity, source_world);
            let done = if ep.is_done(id) {
                ep.test(id).ok().flatten()
            } else {
                None
            };
            out = Some((id, done));
        });
        match out.expect("with_endpoint runs the closure exactly once") {
            (_, Some(completion)) => {
                finish(completion, Some(buf)).map_err(|e| stamped(&**self.rt(), e))
            }
            (id, None) => {
                Request::active(self.rt().clone(), id, "recv", Some(buf))
                    .wait()
                    .await
            }
        }
    }

    /// Posts a receive for a validated pattern (`None` is `PROC_NULL`: complete at once).
    pub(crate) fn post_recv<'b>(
        &self,
        call: &'static str,
        pattern: Option<Pattern>,
        buf: &'b mut [u8],
    ) -> Request<'b> {
        let Some(pattern) = pattern else {
            return Request::null(self.rt().clone(), proc_null_status(), Some(buf));
        };
        let capacity = buf.len();
        let source_world = match pattern.source {
            Source::Rank(r) => Some(self.world_rank(r)),
            Source::Any => None,
        };
        let mut id = None;
        self.rt().with_endpoint(&mut |ep| {
            id = Some(ep.irecv_from(pattern, capacity, source_world));
        });
        let id = id.expect("with_endpoint runs the closure exactly once");
        Request::active(self.rt().clone(), id, call, Some(buf))
    }

    /// The matching pattern of a receive or probe on the point-to-point context; `None` for
    /// `PROC_NULL`.
    pub(crate) fn pattern(
        &self,
        call: &'static str,
        source: Source,
        tag: Tag,
    ) -> Result<Option<Pattern>> {
        self.check_live(call)?;
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
            Source::Rank(r) => self.check_rank(call, r)?,
            Source::Any => {}
        }
        Ok(Some(Pattern::new(self.inner.p2p, source, tag)))
    }

    // ---- private helpers ----

    fn check_rank(&self, call: &'static str, rank: u32) -> Result<()> {
        if rank < self.size() {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                site: self.site(call).peer(rank),
                rank: i64::from(rank),
                size: self.size(),
            })
        }
    }

    fn check_tag(&self, call: &'static str, dest: u32, tag: i32) -> Result<()> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                site: self.site(call).peer(dest),
                tag: if tag == ANY_TAG {
                    Tag::Any
                } else {
                    Tag::Value(tag)
                },
            })
        }
    }

    /// The world rank of communicator rank `rank` (`rank < size`).
    fn world_rank(&self, rank: u32) -> u32 {
        self.inner.group.as_ref().map_or(rank, |g| g[rank as usize])
    }

    /// The world ranks of the members, in communicator-rank order.
    fn world_ranks(&self) -> Vec<u32> {
        (0..self.size()).map(|r| self.world_rank(r)).collect()
    }

    /// The index of the next communicator-creating call on this communicator.
    fn next_child_index(&self) -> u64 {
        let index = self.inner.created.get();
        self.inner.created.set(index + 1);
        index
    }

    /// The child `id` whose members are `members` (ranks in `self`, in new-rank order), which
    /// include this rank.
    fn child(&self, id: u64, members: &[u32]) -> Comm {
        // Invariant: rank 0 sends each member the list of its own color, which names it.
        let rank = members
            .iter()
            .position(|&r| r == self.rank())
            .expect("a member's list names it");
        let group: Rc<[u32]> = members.iter().map(|&r| self.world_rank(r)).collect();
        let size = u32::try_from(group.len()).expect("no larger than the parent");
        let rank = u32::try_from(rank).expect("below size");
        Comm::from_parts(self.rt().clone(), id, rank, size, Some(group))
    }

    /// `split` at parent rank 0: gathers every `(color, key)`, answers each member, and
    /// returns its own color's members.
    async fn split_root(&self, mine: [i64; 2]) -> Result<Vec<u32>> {
        let mut entries = vec![mine];
        for source in 1..self.size() {
            let mut entry = [0i64; 2];
            let pattern = Pattern::new(self.inner.coll, source, SPLIT_TAG);
            let bytes = bytemuck::cast_slice_mut(&mut entry);
            self.post_recv(SPLIT, Some(pattern), bytes).wait().await?;
            entries.push(entry);
        }
        let groups = split_groups(&entries);
        let mut answers = Vec::new();
        for members in groups.values() {
            for &member in members.iter().filter(|&&m| m != 0) {
                let bytes = bytemuck::cast_slice(members);
                let (mode, coll) = (SendMode::Standard, self.inner.coll);
                answers.push(self.post_send(coll, SPLIT, mode, bytes, member, SPLIT_TAG)?);
            }
        }
        wait_all(&mut answers).await?;
        let own = split_color(mine[0]).and_then(|c| groups.get(&c));
        Ok(own.cloned().unwrap_or_default())
    }

    /// `split` at a parent rank other than 0: sends `(color, key)` to rank 0 and, with a
    /// color, receives its color's members.
    async fn split_member(&self, mine: [i64; 2]) -> Result<Vec<u32>> {
        let (mode, coll) = (SendMode::Standard, self.inner.coll);
        let bytes = bytemuck::cast_slice(&mine);
        self.post_send(coll, SPLIT, mode, bytes, 0, SPLIT_TAG)?
            .wait()
            .await?;
        if split_color(mine[0]).is_none() {
            return Ok(Vec::new());
        }
        let mut members = vec![0u32; self.size() as usize];
        let pattern = Pattern::new(coll, 0, SPLIT_TAG);
        let bytes = bytemuck::cast_slice_mut(&mut members);
        let status = self.post_recv(SPLIT, Some(pattern), bytes).wait().await?;
        members.truncate(status.bytes / size_of::<u32>());
        Ok(members)
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

/// `split`'s message: the color (`-1` for none) and the key.
fn encode_split(color: Option<u32>, key: i64) -> [i64; 2] {
    [color.map_or(-1, i64::from), key]
}

/// The color of a `split` message.
fn split_color(encoded: i64) -> Option<u32> {
    u32::try_from(encoded).ok()
}

/// Groups `split` messages (indexed by parent rank) by color: each color's parent ranks, in
/// new-rank order (key, then parent rank).
fn split_groups(entries: &[[i64; 2]]) -> BTreeMap<u32, Vec<u32>> {
    let mut by_color: BTreeMap<u32, Vec<(i64, u32)>> = BTreeMap::new();
    for (&[color, key], rank) in entries.iter().zip(0u32..) {
        if let Some(color) = split_color(color) {
            by_color.entry(color).or_default().push((key, rank));
        }
    }
    by_color
        .into_iter()
        .map(|(color, mut members)| {
            members.sort_unstable();
            (color, members.into_iter().map(|(_, rank)| rank).collect())
        })
        .collect()
}

/// The id of the child made by the `index`th communicator-creating call on `parent`; `salt` is
/// 0 for `dup` and `color + 1` for `split`.
fn child_id(parent: u64, index: u64, salt: u64) -> u64 {
    mix(mix(parent, index), salt)
}

/// Mixes two words into one (module docs, "Context ids").
fn mix(a: u64, b: u64) -> u64 {
    splitmix64(splitmix64(a) ^ b)
}

/// The splitmix64 finalizer: a bijection of `u64` that scatters nearby inputs.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn proc_null_status() -> Status {
    Status {
        source: PROC_NULL,
        tag: ANY_TAG,
        bytes: 0,
        cancelled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_groups_orders_by_key_then_rank_and_drops_undefined() {
        let none = encode_split(None, 0);
        let entries = [
            encode_split(Some(1), 5),
            encode_split(Some(0), 2),
            none,
            encode_split(Some(1), -3),
            encode_split(Some(0), 2),
            encode_split(Some(1), 5),
        ];
        let groups = split_groups(&entries);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[&0], [1, 4]);
        assert_eq!(groups[&1], [3, 0, 5]);
    }

    #[test]
    fn child_ids_differ_by_index_and_color() {
        let ids = [
            child_id(0, 0, 0),
            child_id(0, 1, 0),
            child_id(0, 1, 1),
            child_id(0, 1, 2),
            child_id(child_id(0, 0, 0), 0, 0),
        ];
        for (i, a) in ids.iter().enumerate() {
            assert!(ids[i + 1..].iter().all(|b| a != b), "{ids:x?}");
        }
        assert_ne!(mix(0, 0), 0, "a child's p2p context is not the world's");
    }
}
