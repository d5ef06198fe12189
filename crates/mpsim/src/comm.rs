//! [`Comm`]: a communicator — the group of ranks a program talks to, with its own matching
//! context — and the point-to-point calls (`spec/p2p.md` §2–§7).
//!
//! This layer validates what the program passes (ranks, tags, `PROC_NULL`), turns typed buffers
//! into bytes, and hands the rest to the protocol core through the rank's runtime. Sends copy
//! the data when they are called, so a send's buffer is free again as soon as the call returns.

use std::future::poll_fn;
use std::rc::Rc;
use std::time::Duration;

use bytemuck::Pod;
use mpsim_proto::error::{Error, Result, Site};
use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, TAG_UB, Tag};
use mpsim_proto::p2p::{ReqId, SendMode, Status};
use mpsim_proto::runtime::RankRuntime;

use crate::request::{Request, wait_all};

/// The null process: sends to it complete at once, receives from it complete at once with
/// source `PROC_NULL`, tag [`ANY_TAG`] and no data (MPI's `MPI_PROC_NULL`).
pub const PROC_NULL: u32 = u32::MAX - 1;

/// The tag a status reports for a receive from [`PROC_NULL`] (MPI's `MPI_ANY_TAG`).
pub const ANY_TAG: i32 = -1;

/// A communicator: a group of ranks and a private matching context.
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
    rt: Rc<dyn RankRuntime>,
    context: ContextId,
    rank: u32,
    size: u32,
}

impl Comm {
    /// The world communicator of a rank.
    pub(crate) fn world(rt: Rc<dyn RankRuntime>) -> Self {
        let (rank, size) = (rt.rank(), rt.size());
        Comm {
            rt,
            context: ContextId(0),
            rank,
            size,
        }
    }

    /// This rank's number in the communicator, `0..size`.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Number of ranks in the communicator.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Nanoseconds since the start of the run: virtual time under `sim`, host time otherwise.
    pub fn now_ns(&self) -> u64 {
        self.rt.now_ns()
    }

    /// Accounts `d` of computation: the simulator advances this rank's clock; real backends
    /// spin for `d`.
    pub fn compute(&self, d: Duration) {
        self.rt.compute(d);
    }

    // ---- sends ----

    /// Standard send: returns when `buf` may be reused (at once up to the eager threshold).
    pub async fn send<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.start_send(SendMode::Standard, buf, dest, tag)?
            .wait()
            .await
            .map(drop)
    }

    /// Synchronous send: returns when the matching receive has taken the data.
    pub async fn ssend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.start_send(SendMode::Synchronous, buf, dest, tag)?
            .wait()
            .await
            .map(drop)
    }

    /// Buffered send: copies into the attached buffer and returns at once; `BufferOverflow`
    /// when it does not fit.
    pub async fn bsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.start_send(SendMode::Buffered, buf, dest, tag)?
            .wait()
            .await
            .map(drop)
    }

    /// Ready send: the matching receive must already be posted (checked in strict mode).
    pub async fn rsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<()> {
        self.start_send(SendMode::Ready, buf, dest, tag)?
            .wait()
            .await
            .map(drop)
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
        self.check_tag(call, dest, tag)?;
        if dest == PROC_NULL {
            return Ok(Request::null(self.rt.clone(), Status::default()));
        }
        self.check_rank(call, dest)?;
        let bytes: &[u8] = bytemuck::cast_slice(buf);
        let envelope = Envelope::new(self.context, self.rank, tag);
        let mut out: Option<Result<ReqId>> = None;
        self.rt.with_endpoint(&mut |ep| {
            out = Some(ep.isend(mode, dest, envelope, bytes.len(), bytes.to_vec()));
        });
        // Invariant: with_endpoint runs the closure exactly once.
        let id = out.expect("closure ran")?;
        Ok(Request::active(self.rt.clone(), id, call, None))
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
        self.irecv(buf, source, tag)?.wait().await
    }

    /// Nonblocking receive into `buf`; the data is written when the request completes.
    pub fn irecv<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'b>> {
        let pattern = self.pattern("recv", source.into(), tag.into())?;
        let Some(pattern) = pattern else {
            return Ok(Request::null(self.rt.clone(), proc_null_status()));
        };
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(buf);
        let mut id = None;
        let capacity = bytes.len();
        self.rt
            .with_endpoint(&mut |ep| id = Some(ep.irecv(pattern, capacity)));
        let id = id.expect("closure ran");
        Ok(Request::active(self.rt.clone(), id, "recv", Some(bytes)))
    }

    /// The status of a message that a receive with this pattern would get now, if any.
    pub fn iprobe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Option<Status>> {
        let Some(pattern) = self.pattern("iprobe", source.into(), tag.into())? else {
            return Ok(Some(proc_null_status()));
        };
        let mut found = None;
        self.rt.with_endpoint(&mut |ep| found = ep.iprobe(&pattern));
        if found.is_none() {
            self.rt.idle_poll();
        }
        Ok(found)
    }

    /// Waits for a message a receive with this pattern would get, without taking it.
    pub async fn probe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Status> {
        let (source, tag) = (source.into(), tag.into());
        loop {
            if let Some(status) = self.iprobe(source, tag)? {
                return Ok(status);
            }
            yield_now().await;
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
        let mut out = Ok(());
        self.rt
            .with_endpoint(&mut |ep| out = ep.buffer_attach(bytes));
        out
    }

    /// Waits until every buffered message has been delivered, then detaches the buffer and
    /// returns its size.
    pub async fn buffer_detach(&self) -> Result<usize> {
        let rt = Rc::clone(&self.rt);
        poll_fn(|cx| rt.poll_buffer_free(cx)).await?;
        let mut out = Ok(0);
        self.rt.with_endpoint(&mut |ep| out = ep.buffer_detach());
        out
    }

    // ---- validation ----

    fn site(&self, call: &'static str) -> Site {
        Site::new(self.rt.rank(), call).context(self.context)
    }

    fn check_rank(&self, call: &'static str, rank: u32) -> Result<()> {
        if rank < self.size {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                site: self.site(call).peer(rank),
                rank: i64::from(rank),
                size: self.size,
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

    /// The matching pattern of a receive or probe; `None` for `PROC_NULL`.
    fn pattern(&self, call: &'static str, source: Source, tag: Tag) -> Result<Option<Pattern>> {
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
        Ok(Some(Pattern::new(self.context, source, tag)))
    }
}

fn proc_null_status() -> Status {
    Status {
        source: PROC_NULL,
        tag: ANY_TAG,
        bytes: 0,
        cancelled: false,
    }
}

/// Lets the executor run something else once.
async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            std::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}
