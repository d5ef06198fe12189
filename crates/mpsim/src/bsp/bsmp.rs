//! BSMP, bulk synchronous message passing (`spec/bsplib.md` §1): `set_tagsize`, `send`, and
//! the queue calls `qsize`, `get_tag`, `move` and `hpmove`.
//!
//! A message sent in superstep k is in its destination's queue during superstep k+1 only
//! (messages not taken are dropped by the next sync). The tag size follows the state machine
//! (A, B, C) of the spec: `set_tagsize` asks for C, sends of the next superstep use it (B),
//! and the queue's messages have the tag size their superstep sent with (A).
//!
//! The safe `hpmove` is [`Ctx::hpmove`] (and [`Ctx::messages`]): it lends the message's bytes
//! where the queue holds them, and the borrow ends before the next sync can run, which
//! `sync(&mut self)` makes the compiler check:
//!
//! ```compile_fail,E0502
//! # async fn demo(mut ctx: mpsim::bsp::Ctx) -> mpsim::Result<()> {
//! let msg = ctx.hpmove().expect("a message");
//! ctx.sync().await?; // error: `ctx` is still borrowed by `msg`
//! println!("{:?}", msg.payload);
//! # Ok(()) }
//! ```

use mpsim_proto::error::{BspErrorKind, Result};

use super::ctx::Ctx;
use super::queue::Msg;

const SEND: &str = "bsp_send";

impl Ctx {
    /// Asks for tag size `bytes` for the sends of the next superstep on (`bsp_set_tagsize`);
    /// returns the size asked for before (C). Collective: every process makes the same number
    /// of calls in a superstep, the last with the same size (the sync checks it).
    pub fn set_tagsize(&self, bytes: usize) -> usize {
        let t = &self.core().tags;
        t.calls.set(t.calls.get() + 1);
        t.requested.replace(bytes)
    }

    /// The tag size of sends in this superstep (B).
    pub fn tagsize(&self) -> usize {
        self.core().tags.send
    }

    /// Sends a message to process `pid` (`bsp_send`): `tag` (exactly [`Ctx::tagsize`] bytes)
    /// and `payload` are copied now; the message is in `pid`'s queue in the next superstep.
    /// Sends to this process and empty payloads are allowed.
    pub fn send(&self, pid: u32, tag: &[u8], payload: &[u8]) -> Result<()> {
        self.check_poisoned(SEND)?;
        self.check_pid(SEND, pid)?;
        let core = self.core();
        if tag.len() != core.tags.send {
            let kind = BspErrorKind::TagSize {
                expected: core.tags.send,
                got: tag.len(),
            };
            return Err(self.error(SEND, kind));
        }
        let mut out = core.out.borrow_mut();
        out.bundles.entry(pid).or_default().send(tag, payload);
        Ok(())
    }

    /// The messages still in the queue and the sum of their payloads' lengths, tags excluded
    /// (`bsp_qsize`).
    pub fn qsize(&self) -> (usize, usize) {
        self.core().queue.size()
    }

    /// The payload length and tag of the message at the head of the queue, not taken
    /// (`bsp_get_tag`); `None` when the queue is empty (C's status −1).
    pub fn get_tag(&self) -> Option<(usize, &[u8])> {
        self.core().queue.peek().map(|m| (m.payload.len(), m.tag))
    }

    /// Takes the message at the head of the queue, copying the first `buf.len()` bytes of its
    /// payload into `buf` (the rest is lost); returns how many were copied (`bsp_move`).
    /// [`BspErrorKind::QueueEmpty`] on an empty queue.
    pub fn move_into(&self, buf: &mut [u8]) -> Result<usize> {
        self.check_poisoned("bsp_move")?;
        match self.core().queue.take() {
            Some(m) => {
                let n = m.payload.len().min(buf.len());
                buf[..n].copy_from_slice(&m.payload[..n]);
                Ok(n)
            }
            None => Err(self.error("bsp_move", BspErrorKind::QueueEmpty)),
        }
    }

    /// Takes the message at the head of the queue and lends its tag and payload where the
    /// queue holds them, until the next sync (`bsp_hpmove`); `None` when the queue is empty.
    pub fn hpmove(&self) -> Option<Msg<'_>> {
        self.core().queue.take()
    }

    /// Takes the queue's messages one by one as it is iterated ([`Ctx::hpmove`] in a loop).
    pub fn messages(&self) -> impl Iterator<Item = Msg<'_>> + '_ {
        std::iter::from_fn(|| self.hpmove())
    }
}
