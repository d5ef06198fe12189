//! The BSMP receive queue of one process: the messages sent to it in the previous superstep,
//! in the order of `spec/bsplib.md` §1 "Ours" (ascending source pid, then send order), read
//! front to back during the superstep and replaced whole at the next sync.
//!
//! Why a head index in a `Cell`: taking a message (`move`, `hpmove`) only moves the head, so
//! it needs no `&mut` of the context, and the bytes of the messages already taken stay where
//! they are until the sync: `hpmove` lends them to the program for the rest of the superstep,
//! and the borrow checker ends every such loan before `sync(&mut self)` can run.

use std::cell::Cell;
use std::ops::Range;

/// A message of the queue, borrowed from it until the next sync (`hpmove`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg<'a> {
    /// Its tag (as long as the queue's tag size).
    pub tag: &'a [u8],
    /// Its payload.
    pub payload: &'a [u8],
}

/// The queue.
#[derive(Default)]
pub(crate) struct Queue {
    data: Vec<u8>,
    msgs: Vec<(Range<usize>, Range<usize>)>,
    head: Cell<usize>,
    /// Payload bytes of the messages from the head on.
    left: Cell<usize>,
}

impl Queue {
    /// Appends a message (while the next queue is built, at sync).
    pub fn push(&mut self, tag: &[u8], payload: &[u8]) {
        let t = self.data.len();
        self.data.extend_from_slice(tag);
        let p = self.data.len();
        self.data.extend_from_slice(payload);
        self.msgs.push((t..p, p..self.data.len()));
        self.left.set(self.left.get() + payload.len());
    }

    /// Messages not taken yet, and the sum of their payloads' lengths.
    pub fn size(&self) -> (usize, usize) {
        (self.msgs.len() - self.head.get(), self.left.get())
    }

    /// The head, not taken.
    pub fn peek(&self) -> Option<Msg<'_>> {
        let (t, p) = self.msgs.get(self.head.get())?;
        Some(Msg {
            tag: &self.data[t.clone()],
            payload: &self.data[p.clone()],
        })
    }

    /// Takes the head.
    pub fn take(&self) -> Option<Msg<'_>> {
        let m = self.peek()?;
        self.head.set(self.head.get() + 1);
        self.left.set(self.left.get() - m.payload.len());
        Some(m)
    }
}
