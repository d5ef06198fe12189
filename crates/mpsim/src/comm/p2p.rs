//! The point-to-point calls of [`Comm`] (`docs/p2p.md` §2–§5, §7): sends in every mode,
//! receives, probes and matched probes, the combined calls, the attached buffer, and the
//! blocking fast paths that finish an operation in the pass that posts it.

use std::future::poll_fn;

use bytemuck::Pod;
use mpsim_proto::error::Result;
use mpsim_proto::matching::{Pattern, Source, Tag};
use mpsim_proto::p2p::{SendMode, Status};

use super::*;
use crate::blocking::{Blocking, SendDone};
use crate::message::Message;
use crate::request::{Names, Request, idle, wait_all_in};

impl Comm {
    // ---- sends ----

    /// Standard send: returns when `buf` may be reused (at once up to the eager threshold).
    #[inline(always)]
    pub fn send<'a, T: Pod>(
        &'a self,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> impl Future<Output = Result<()>> + use<'a, T> {
        SendDone(self.send_blocking(SendMode::Standard, bytemuck::cast_slice(buf), dest, tag))
    }

    /// Synchronous send: returns when the matching receive has taken the data.
    #[inline(always)]
    pub fn ssend<'a, T: Pod>(
        &'a self,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> impl Future<Output = Result<()>> + use<'a, T> {
        SendDone(self.send_blocking(SendMode::Synchronous, bytemuck::cast_slice(buf), dest, tag))
    }

    /// Buffered send: copies into the attached buffer and returns at once; `BufferOverflow`
    /// when it does not fit, which also stops the run (the simulator's report says which send
    /// did not fit: a program that sizes its buffer wrong should not go on with a send missing).
    #[inline(always)]
    pub fn bsend<'a, T: Pod>(
        &'a self,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> impl Future<Output = Result<()>> + use<'a, T> {
        SendDone(self.send_blocking(SendMode::Buffered, bytemuck::cast_slice(buf), dest, tag))
    }

    /// Ready send: the matching receive must already be posted (checked in strict mode).
    #[inline(always)]
    pub fn rsend<'a, T: Pod>(
        &'a self,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> impl Future<Output = Result<()>> + use<'a, T> {
        SendDone(self.send_blocking(SendMode::Ready, bytemuck::cast_slice(buf), dest, tag))
    }

    /// Nonblocking standard send. The data is copied now; `buf` is free when this returns.
    pub fn isend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Standard, buf, dest, tag)
    }

    /// Nonblocking synchronous send.
    pub fn issend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Synchronous, buf, dest, tag)
    }

    /// Nonblocking buffered send; a send that does not fit is `BufferOverflow` and stops the
    /// run, as for [`Comm::bsend`].
    pub fn ibsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Buffered, buf, dest, tag)
    }

    /// Nonblocking ready send.
    pub fn irsend<T: Pod>(&self, buf: &[T], dest: u32, tag: i32) -> Result<Request<'static>> {
        self.start_send(SendMode::Ready, buf, dest, tag)
    }

    /// Any send mode, nonblocking (errors name the mode's call: `isend`, `issend`, `ibsend`,
    /// `irsend`).
    pub fn start_send<T: Pod>(
        &self,
        mode: SendMode,
        buf: &[T],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        self.isend_as(mode.icall(), mode, bytemuck::cast_slice(buf), dest, tag)
    }

    /// A nonblocking send in `mode` for the program's call `call`, which its errors name.
    fn isend_as(
        &self,
        call: &'static str,
        mode: SendMode,
        bytes: &[u8],
        dest: u32,
        tag: i32,
    ) -> Result<Request<'static>> {
        self.check_send(call, dest, tag)?;
        let names = Names {
            call,
            wait: mode.call(),
        };
        self.post_send(self.inner.p2p, names, mode, bytes, dest, tag)
    }

    // ---- receives and probes ----

    /// Receives into `buf` a message from `source` (a rank or [`Source::Any`]) with `tag` (a
    /// tag or [`Tag::Any`]). A longer message fills `buf` and gives `Error::Truncate`.
    #[inline(always)]
    pub fn recv<'a, T: Pod>(
        &'a self,
        buf: &'a mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> impl Future<Output = Result<Status>> + 'a {
        self.recv_blocking(source.into(), tag.into(), bytemuck::cast_slice_mut(buf))
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
        let buf = bytemuck::cast_slice_mut(buf);
        self.irecv_as("irecv", buf, source.into(), tag.into())
    }

    /// A nonblocking receive for the program's call `call`, which its errors name.
    fn irecv_as<'b>(
        &self,
        call: &'static str,
        buf: &'b mut [u8],
        source: Source,
        tag: Tag,
    ) -> Result<Request<'b>> {
        let pattern = self.pattern(call, source, tag)?;
        let names = Names { call, wait: "recv" };
        Ok(self.post_recv(names, pattern, buf))
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
        let found = self
            .rt()
            .probe(pattern, false)
            .map_err(|e| stamped(self.rt(), e))?
            .map(|(status, _)| status);
        if found.is_none() {
            idle(self.rt(), "iprobe").await;
        }
        Ok(found)
    }

    /// Waits for a message a receive with this pattern would get, without taking it. Under
    /// `sim` it returns at the message's arrival (`timing.md` §5: it blocks like a receive).
    pub async fn probe(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Status> {
        let Some(pattern) = self.pattern("probe", source.into(), tag.into())? else {
            return Ok(proc_null_status());
        };
        let awaited = self.awaited(&pattern);
        let rt = self.rt();
        let (status, _) = poll_fn(|_| rt.wait_probe(&pattern, false, "probe", awaited)).await?;
        Ok(status)
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
        let found = self
            .rt()
            .probe(pattern, true)
            .map_err(|e| stamped(self.rt(), e))?;
        match found {
            Some((status, id)) => Ok(Some(Message::new(self.rt().clone(), id, status))),
            None => {
                idle(self.rt(), "improbe").await;
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
        let awaited = self.awaited(&pattern);
        let rt = self.rt();
        let (status, id) = poll_fn(|_| rt.wait_probe(&pattern, true, "mprobe", awaited)).await?;
        Ok(Message::new(self.rt().clone(), id, status))
    }

    // ---- combined ----

    /// Sends `send` to `dest` and receives into `recv` from `source`, without deadlocking on a
    /// ring shift (`docs/p2p.md` §7).
    pub async fn sendrecv<S: Pod, R: Pod>(
        &self,
        send: &[S],
        dest: u32,
        send_tag: i32,
        recv: &mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<Tag>,
    ) -> Result<Status> {
        const CALL: &str = "sendrecv";
        let recv = bytemuck::cast_slice_mut(recv);
        let send = bytemuck::cast_slice(send);
        let mut reqs = [
            self.irecv_as(CALL, recv, source.into(), recv_tag.into())?,
            self.isend_as(CALL, SendMode::Standard, send, dest, send_tag)?,
        ];
        Ok(wait_all_in(&mut reqs, CALL).await?[0])
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
        const CALL: &str = "sendrecv_replace";
        let buf = bytemuck::cast_slice_mut(buf);
        // The send copies `buf` now.
        let send = self.isend_as(CALL, SendMode::Standard, buf, dest, send_tag)?;
        let recv = self.irecv_as(CALL, buf, source.into(), recv_tag.into())?;
        let mut reqs = [recv, send];
        Ok(wait_all_in(&mut reqs, CALL).await?[0])
    }

    // ---- buffers ----

    /// Attaches a buffer of `bytes` bytes for buffered sends (one per rank; a zero-byte one
    /// counts: attaching another is `BufferAlreadyAttached`).
    pub fn buffer_attach(&self, bytes: usize) -> Result<()> {
        self.check_live("buffer_attach")?;
        self.rt()
            .buffer_attach(bytes)
            .map_err(|e| stamped(self.rt(), e))
    }

    /// Waits until every buffered message has been delivered, then detaches the buffer and
    /// returns its size; `NoBufferAttached` when none is attached.
    pub async fn buffer_detach(&self) -> Result<usize> {
        self.check_live("buffer_detach")?;
        let rt = self.rt();
        poll_fn(|_| rt.wait_buffer_free()).await?;
        rt.buffer_detach().map_err(|e| stamped(rt, e))
    }

    // ---- blocking fast paths ----

    /// A blocking send: posts it and, when it completes at once (eager, buffered), finishes it
    /// in the same pass through the endpoint, with no request to wait for. Inlined, so that
    /// the program's future builds the [`Blocking`] in place.
    #[inline(always)]
    fn send_blocking(&self, mode: SendMode, bytes: &[u8], dest: u32, tag: i32) -> Blocking<'_> {
        let call = mode.call();
        let rt = self.rt();
        if let Err(e) = self.check_send(call, dest, tag) {
            return Blocking::done(rt, Err(e));
        }
        if dest == PROC_NULL {
            return Blocking::sent(rt);
        }
        let payload = match self.copy_data(call, bytes, dest, tag) {
            Ok(payload) => payload,
            Err(e) => return Blocking::done(rt, Err(e)),
        };
        let to = self.world_rank(dest);
        let envelope = Envelope::new(self.inner.p2p, self.rank(), tag);
        let started = rt.send(mode, to, envelope, payload);
        Blocking::started(rt, started, call, None)
    }

    /// The result of a blocking receive that does not post: the error of an invalid one, or
    /// the empty status of a receive from `PROC_NULL`.
    #[cold]
    #[inline(never)]
    fn recv_at_once(&self, source: Source, tag: Tag) -> Result<Status> {
        self.pattern("recv", source, tag).map(|pattern| {
            debug_assert!(pattern.is_none(), "a receive that does not post");
            proc_null_status()
        })
    }

    /// A blocking receive: validates it, posts it and, when a waiting message matches at
    /// once, completes it in the same pass through the endpoint. One call from the program's
    /// future: the pattern is made here (`Comm::pattern` inlined), not handed in as a `Result`.
    #[inline(always)]
    fn recv_blocking<'a>(&'a self, source: Source, tag: Tag, buf: &'a mut [u8]) -> Blocking<'a> {
        let rt = self.rt();
        // Checked here rather than through `Comm::pattern`: its `Result<Option<Pattern>>` went
        // through memory.
        if !self.posts_receive(source, tag) {
            return Blocking::done(rt, self.recv_at_once(source, tag));
        }
        let pattern = Pattern::new(self.p2p_context(), source, tag);
        let started = rt.recv_into(pattern, buf, self.source_world(&pattern));
        Blocking::started(rt, started, "recv", Some(buf))
    }
}
