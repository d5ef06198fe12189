//! [`PersistentRequest`]: a send or receive set up once and started many times (`docs/p2p.md`
//! §4; MPI §3.9).
//!
//! As in MPI, the buffer is bound at init: the request borrows it, mutably, for its whole life,
//! and the program reaches it between runs through [`PersistentRequest::buffer`] and
//! [`PersistentRequest::buffer_mut`] (a send's data changes from run to run; a receive's data is
//! read after each). Each [`PersistentRequest::start`] runs the ordinary nonblocking call
//! through a [`Request`]: a send copies the buffer as it is at `start`, a receive lends the
//! buffer to that request and takes it back when the request completes. The arguments are
//! validated at init, the communicator again at each start.
//!
//! States:
//! - *inactive*, after init and after a `wait` or `test` that completed a run: `start` makes it
//!   active; `wait` and `test` return an empty status at once (source
//!   [`Status::NO_SOURCE`], tag [`Status::NO_TAG`], no bytes).
//! - *active*, after `start`: `wait` / `test` complete it; `start` fails with
//!   `Error::RequestActive`.
//!
//! Invariant: a receive's buffer is in exactly one place — the persistent request while
//! inactive, its running `Request` while active. Dropping an active persistent request drops
//! that `Request`: a receive is cancelled (or, if a message had already matched it, that
//! message is discarded), a send completes in the background.

use std::fmt;

use bytemuck::Pod;
use mpsim_proto::error::{Error, Result};
use mpsim_proto::matching::{Pattern, Source, Tag};
use mpsim_proto::p2p::{SendMode, Status};

use crate::comm::{Comm, PROC_NULL};
use crate::request::{Names, Request, empty_status};

/// A send or receive that can be started again and again (MPI's persistent requests).
///
/// Made by [`Comm::send_init`], [`Comm::bsend_init`], [`Comm::ssend_init`],
/// [`Comm::rsend_init`] and [`Comm::recv_init`]; run by [`PersistentRequest::start`] (or
/// [`start_all`]) and completed by [`PersistentRequest::wait`] or [`PersistentRequest::test`].
///
/// ```
/// mpsim::Launcher::new(2)
///     .run(|world| async move {
///         let mut cell = [0u32];
///         let mut req = if world.rank() == 0 {
///             world.send_init(&mut cell, 1, 0)?
///         } else {
///             world.recv_init(&mut cell, 0, 0)?
///         };
///         for run in 1..=3u32 {
///             if world.rank() == 0 {
///                 req.buffer_mut::<u32>().expect("a send's buffer")[0] = run;
///             }
///             req.start()?;
///             req.wait().await?;
///             assert_eq!(req.buffer::<u32>(), Some(&[run][..]));
///         }
///         Ok(())
///     })
///     .expect("persistent");
/// ```
#[must_use = "a persistent request does nothing until started"]
pub struct PersistentRequest<'b> {
    comm: Comm,
    op: Op,
    /// The bound buffer; `None` only while a receive's run holds it.
    buf: Option<&'b mut [u8]>,
    /// The current run; `Some` exactly while active.
    active: Option<Request<'b>>,
}

/// What each start does (validated at init).
#[derive(Clone, Copy, Debug)]
enum Op {
    Send {
        mode: SendMode,
        dest: u32,
        tag: i32,
    },
    Recv {
        /// `None` receives from `PROC_NULL`.
        pattern: Option<Pattern>,
    },
}

impl<'b> PersistentRequest<'b> {
    /// Whether a run is in progress (started and not yet completed by `wait` or `test`).
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// Starts a run (MPI's `MPI_Start`): a send copies the buffer now, a receive posts.
    /// `Error::RequestActive` if a run is in progress; `Error::InvalidComm` if the communicator
    /// was freed.
    pub fn start(&mut self) -> Result<()> {
        self.start_in("start")
    }

    /// The bound buffer as `T`s. `None` while a receive runs (its buffer is lent to the run)
    /// or if the bytes are not a whole, aligned slice of `T` (the type given at init always
    /// fits).
    pub fn buffer<T: Pod>(&self) -> Option<&[T]> {
        bytemuck::try_cast_slice(self.buf.as_deref()?).ok()
    }

    /// The bound buffer as `T`s, to change: the data of a send's next run (allowed while it
    /// runs: `start` took a copy), or a receive's buffer between runs. `None` as for
    /// [`PersistentRequest::buffer`].
    pub fn buffer_mut<T: Pod>(&mut self) -> Option<&mut [T]> {
        bytemuck::try_cast_slice_mut(self.buf.as_deref_mut()?).ok()
    }

    /// Waits for the run to complete and returns its status; the request becomes inactive.
    /// Inactive already: an empty status at once.
    ///
    /// A receive's data is then in the buffer ([`PersistentRequest::buffer`]). A failed run
    /// (e.g. `Error::Truncate`) ends too.
    pub async fn wait(&mut self) -> Result<Status> {
        let Some(request) = self.active.as_mut() else {
            return Ok(empty_status());
        };
        let out = request.wait_in_place(None).await;
        self.settle();
        out
    }

    /// Completes the run if it is done (`Some(status)`; the request becomes inactive), without
    /// blocking for it (a test that finds nothing is a scheduling point, as
    /// [`Request::test`](crate::Request::test)). Inactive already: `Some` of an empty status.
    pub async fn test(&mut self) -> Result<Option<Status>> {
        let Some(request) = self.active.as_mut() else {
            return Ok(Some(empty_status()));
        };
        let out = request.test().await;
        self.settle();
        out
    }

    /// [`PersistentRequest::start`] inside the program's call `call` (`start`, `start_all`),
    /// which errors name.
    fn start_in(&mut self, call: &'static str) -> Result<()> {
        if self.is_active() {
            return Err(self.active_error(call));
        }
        let (peer, tag) = self.peer_and_tag();
        self.comm.check_live_for(call, peer, tag)?;
        self.active = Some(run(&self.comm, call, self.op, &mut self.buf)?);
        Ok(())
    }

    fn new(comm: &Comm, op: Op, buf: &'b mut [u8]) -> Self {
        PersistentRequest {
            comm: comm.clone(),
            op,
            buf: Some(buf),
            active: None,
        }
    }

    /// Ends the run if its request completed: takes back a receive's buffer.
    fn settle(&mut self) {
        let Some(mut done) = self.active.take_if(|r| r.is_null()) else {
            return;
        };
        if let Op::Recv { .. } = self.op {
            self.buf = done.take_buf();
        }
    }

    fn active_error(&self, call: &'static str) -> Error {
        let (peer, tag) = self.peer_and_tag();
        Error::RequestActive {
            site: self.comm.site(call).peer(peer).tag(tag),
        }
    }

    /// The peer and tag the request names, for errors.
    fn peer_and_tag(&self) -> (Source, Tag) {
        match self.op {
            Op::Send { dest, tag, .. } => (Source::Rank(dest), Tag::Value(tag)),
            Op::Recv { pattern } => {
                pattern.map_or((Source::Rank(PROC_NULL), Tag::Any), |p| (p.source, p.tag))
            }
        }
    }
}

impl fmt::Debug for PersistentRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.op {
            Op::Send { mode, .. } => mode.call(),
            Op::Recv { .. } => "recv",
        };
        let (peer, tag) = self.peer_and_tag();
        f.debug_struct("PersistentRequest")
            .field("kind", &kind)
            .field("peer", &peer)
            .field("tag", &tag)
            .field("active", &self.is_active())
            .finish()
    }
}

/// Starts every request (MPI's `MPI_Startall`). If one is active, fails with
/// `Error::RequestActive` and starts none; otherwise starts them in order and stops at the
/// first error (the ones before it are active).
///
/// ```
/// mpsim::Launcher::new(2)
///     .run(|world| async move {
///         let peer = 1 - world.rank();
///         let (mut out, mut got) = ([world.rank()], [9u32]);
///         let recv = world.recv_init(&mut got, peer, 0)?;
///         let mut reqs = [recv, world.send_init(&mut out, peer, 0)?];
///         for _ in 0..3 {
///             mpsim::start_all(&mut reqs)?;
///             for r in &mut reqs {
///                 r.wait().await?;
///             }
///         }
///         assert_eq!(reqs[0].buffer::<u32>(), Some(&[peer][..]));
///         Ok(())
///     })
///     .expect("start_all");
/// ```
pub fn start_all(requests: &mut [PersistentRequest<'_>]) -> Result<()> {
    if let Some(active) = requests.iter().find(|r| r.is_active()) {
        return Err(active.active_error("start_all"));
    }
    requests
        .iter_mut()
        .try_for_each(|r| r.start_in("start_all"))
}

/// The persistent-request constructors (MPI's `MPI_*_init`).
impl Comm {
    /// A persistent standard send of `buf` to `dest` with `tag`; each start sends `buf` as it
    /// is then. The borrow is mutable so that the program can change the data between runs
    /// through [`PersistentRequest::buffer_mut`] (example on [`PersistentRequest`]).
    pub fn send_init<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        dest: u32,
        tag: i32,
    ) -> Result<PersistentRequest<'b>> {
        self.persistent_send(SendMode::Standard, buf, dest, tag)
    }

    /// A persistent buffered send: each start copies into the attached buffer (and may fail
    /// with `BufferOverflow`, which stops the run, as for [`Comm::bsend`]).
    pub fn bsend_init<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        dest: u32,
        tag: i32,
    ) -> Result<PersistentRequest<'b>> {
        self.persistent_send(SendMode::Buffered, buf, dest, tag)
    }

    /// A persistent synchronous send: each run completes when its receive took the data.
    pub fn ssend_init<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        dest: u32,
        tag: i32,
    ) -> Result<PersistentRequest<'b>> {
        self.persistent_send(SendMode::Synchronous, buf, dest, tag)
    }

    /// A persistent ready send: each start needs the matching receive posted.
    pub fn rsend_init<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        dest: u32,
        tag: i32,
    ) -> Result<PersistentRequest<'b>> {
        self.persistent_send(SendMode::Ready, buf, dest, tag)
    }

    /// A persistent receive into `buf` from `source` with `tag`; each run overwrites `buf`,
    /// read between runs through [`PersistentRequest::buffer`] (example on
    /// [`PersistentRequest`]).
    pub fn recv_init<'b, T: Pod>(
        &self,
        buf: &'b mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<PersistentRequest<'b>> {
        let pattern = self.pattern("recv_init", source.into(), tag.into())?;
        let buf = bytemuck::cast_slice_mut(buf);
        Ok(PersistentRequest::new(self, Op::Recv { pattern }, buf))
    }

    fn persistent_send<'b, T: Pod>(
        &self,
        mode: SendMode,
        buf: &'b mut [T],
        dest: u32,
        tag: i32,
    ) -> Result<PersistentRequest<'b>> {
        self.check_send(init_call(mode), dest, tag)?;
        let op = Op::Send { mode, dest, tag };
        Ok(PersistentRequest::new(
            self,
            op,
            bytemuck::cast_slice_mut(buf),
        ))
    }
}

/// One run of `op` on `comm` with the bound buffer `buf`, started by the program's call
/// `call` (arguments were validated at init, the communicator by the caller). A send's errors
/// come at the start and name `call`; a receive's come at its completion (`Truncate`) and name
/// `recv_init`, which set its buffer.
fn run<'b>(
    comm: &Comm,
    call: &'static str,
    op: Op,
    buf: &mut Option<&'b mut [u8]>,
) -> Result<Request<'b>> {
    // Invariant: the buffer is lent only to an active receive, and `start` checked inactive.
    const HELD: &str = "an inactive request holds its buffer";
    match op {
        Op::Send { mode, dest, tag } => {
            let bytes = buf.as_deref().expect(HELD);
            let names = Names {
                call,
                wait: mode.call(),
            };
            comm.post_send(comm.p2p_context(), names, mode, bytes, dest, tag)
        }
        Op::Recv { pattern } => {
            let names = Names {
                call: "recv_init",
                wait: "recv",
            };
            Ok(comm.post_recv(names, pattern, buf.take().expect(HELD)))
        }
    }
}

/// The call name of a persistent send's init.
fn init_call(mode: SendMode) -> &'static str {
    match mode {
        SendMode::Standard => "send_init",
        SendMode::Buffered => "bsend_init",
        SendMode::Synchronous => "ssend_init",
        SendMode::Ready => "rsend_init",
    }
}
