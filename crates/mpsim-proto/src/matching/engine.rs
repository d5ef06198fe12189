//! [`Engine`]: pairs arriving messages with posted receives by MPI's rules (`docs/matching.md`
//! §2, M1–M12), in O(1) expected time per operation whatever the queue depths (§3).
//!
//! The engine is per rank and serves all of that rank's contexts. It knows no payload bytes,
//! clocks or threads: a receive carries an `R` and a message an `M`, both opaque to it.
//!
//! Methods, by kind:
//! - inputs: [`Engine::post`] (a receive is posted), [`Engine::arrive`] (a message arrives);
//! - commands: [`Engine::cancel`] (a posted receive), [`Engine::withdraw`] (an unexpected
//!   message, for send cancel), [`Engine::mprobe`] (take a message for a later `mrecv`);
//! - queries: [`Engine::probe`], [`Engine::posted`], [`Engine::unexpected`], lengths, iterators.
//!
//! Every input gets a sequence number from one counter; "earliest" means smallest sequence
//! number and nothing else (M11).

use std::num::NonZeroU64;

use super::arena::Slot;
use super::envelope::{Envelope, Key, Pattern};
use super::queue::Queue;
use super::{ContextId, Rank};

/// A handle to a posted receive, to [`cancel`](Engine::cancel) it or look at it.
///
/// It stays valid until the receive matches or is cancelled; after that every use of it is a
/// harmless miss (it names a sequence number, which is never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecvHandle {
    idx: u32,
    /// Nonzero, so that an `Option<RecvHandle>` (a request slot holds one) takes no more room.
    seq: NonZeroU64,
}

/// A handle to an unexpected message, to [`withdraw`](Engine::withdraw) it or look at it.
///
/// Valid until the message matches, is withdrawn or is taken by `mprobe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MsgHandle {
    idx: u32,
    seq: u64,
}

/// A receive paired with a message.
#[derive(Debug, PartialEq, Eq)]
pub struct Match<R, M> {
    /// What the receive carried.
    pub recv: R,
    /// The message's envelope.
    pub envelope: Envelope,
    /// What the message carried.
    pub msg: M,
}

/// What became of a posted receive.
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub enum Posted<R, M> {
    /// It took the earliest unexpected message it accepts (M2).
    Matched(Match<R, M>),
    /// Nothing matched; it waits in the posted queue.
    Queued(RecvHandle),
}

/// What became of an arriving message.
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub enum Arrived<R, M> {
    /// The earliest-posted receive that accepts it took it (M1).
    Matched(Match<R, M>),
    /// No receive accepts it; it waits in the unexpected queue.
    Queued(MsgHandle),
}

/// A message seen by [`Engine::probe`], left in place.
#[derive(Debug, PartialEq, Eq)]
pub struct Probed<'a, M> {
    /// Handle of the message (for `withdraw`, or to recognise it later).
    pub handle: MsgHandle,
    /// Its envelope.
    pub envelope: Envelope,
    /// What it carries.
    pub msg: &'a M,
}

/// The tag-matching engine of one rank: a posted-receive queue and an unexpected-message queue
/// over all of the rank's contexts.
///
/// ```
/// use mpsim_proto::matching::{Arrived, ContextId, Engine, Envelope, Pattern, Posted, Tag};
///
/// let ctx = ContextId(0);
/// let mut engine: Engine<&str, &str> = Engine::new();
/// // A message from rank 3 with tag 7 arrives before anyone asks for it.
/// let queued = engine.arrive(Envelope::new(ctx, 3, 7), "payload");
/// assert!(matches!(queued, Arrived::Queued(_)));
/// // A receive for any tag from rank 3 takes it.
/// match engine.post(Pattern::new(ctx, 3, Tag::Any), "my buffer") {
///     Posted::Matched(m) => assert_eq!((m.recv, m.envelope.tag, m.msg), ("my buffer", 7, "payload")),
///     Posted::Queued(_) => unreachable!(),
/// }
/// assert!(engine.is_empty());
/// ```
pub struct Engine<R, M> {
    posted: Queue<R, 2>,
    /// Allocated at the first unexpected message: many ranks never get one, and a simulation
    /// holds millions of engines.
    unexpected: Option<Box<Queue<M, 5>>>,
    /// Posted receives per pattern shape (exact, any tag, any source, both), so an arrival
    /// looks only at the shapes that exist. Kept only while the posted queue is indexed (a
    /// shallow queue is scanned whatever the shapes, and most never deepen): counted afresh
    /// when the index is built, meaningless otherwise.
    posted_shapes: [u32; 4],
    next_seq: NonZeroU64,
}

impl<R, M> Default for Engine<R, M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R, M> Engine<R, M> {
    /// An empty engine. Allocates nothing until the first entry is queued.
    pub const fn new() -> Self {
        Engine {
            posted: Queue::new(),
            unexpected: None,
            posted_shapes: [0; 4],
            next_seq: NonZeroU64::MIN,
        }
    }

    // ---- getters ----

    /// Receives waiting for a message.
    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }

    /// Messages waiting for a receive.
    pub fn unexpected_len(&self) -> usize {
        self.unexpected.as_deref().map_or(0, Queue::len)
    }

    /// Whether both queues are empty.
    pub fn is_empty(&self) -> bool {
        self.posted.len() == 0 && self.unexpected_len() == 0
    }

    /// The posted receive behind `handle`, if it is still waiting.
    pub fn posted(&self, handle: RecvHandle) -> Option<(Pattern, &R)> {
        let slot = self.posted.live(handle.idx, handle.seq.get())?;
        Some((pattern_of(&slot.key), value_of(slot)))
    }

    /// The unexpected message behind `handle`, if it is still waiting.
    pub fn unexpected(&self, handle: MsgHandle) -> Option<(Envelope, &M)> {
        let slot = self.unexpected.as_deref()?.live(handle.idx, handle.seq)?;
        Some((envelope_of(&slot.key), value_of(slot)))
    }

    /// Mutable access to a waiting unexpected message's payload descriptor.
    pub fn unexpected_mut(&mut self, handle: MsgHandle) -> Option<&mut M> {
        let queue = self.unexpected.as_deref_mut()?;
        queue.live(handle.idx, handle.seq)?;
        queue.slot_mut(handle.idx).value.as_mut()
    }

    /// Posted receives in posting order (for diagnostics such as deadlock reports).
    pub fn posted_iter(&self) -> impl Iterator<Item = (Pattern, &R)> + '_ {
        self.posted
            .iter()
            .map(|(_, slot)| (pattern_of(&slot.key), value_of(slot)))
    }

    /// Unexpected messages in arrival order.
    pub fn unexpected_iter(&self) -> impl Iterator<Item = (Envelope, &M)> + '_ {
        self.unexpected
            .as_deref()
            .into_iter()
            .flat_map(Queue::iter)
            .map(|(_, slot)| (envelope_of(&slot.key), value_of(slot)))
    }

    /// Unexpected messages in arrival order, with their handles (to find one to withdraw).
    pub fn unexpected_handles(&self) -> impl Iterator<Item = (MsgHandle, Envelope, &M)> + '_ {
        let queue = self.unexpected.as_deref().into_iter();
        queue.flat_map(Queue::iter).map(|(idx, slot)| {
            (
                MsgHandle { idx, seq: slot.seq },
                envelope_of(&slot.key),
                value_of(slot),
            )
        })
    }

    /// Gives back the memory that empty queues keep for reuse (an owner that will queue
    /// little more, such as a rank that has finished).
    pub fn shrink_to_fit(&mut self) {
        self.posted.shrink_to_fit();
        if self.unexpected_len() == 0 {
            self.unexpected = None;
        }
    }

    /// Bytes of heap memory the engine holds now (entries, index, free capacity).
    ///
    /// Zero for a fresh engine, and zero again after deep queues drain (M12).
    pub fn heap_bytes(&self) -> usize {
        self.posted.heap_bytes()
            + self
                .unexpected
                .as_deref()
                .map_or(0, |q| std::mem::size_of::<Queue<M, 5>>() + q.heap_bytes())
    }

    // ---- inputs ----

    /// A receive with `pattern` is posted (M2): it takes the earliest-arrived unexpected message
    /// it accepts, or waits in the posted queue. Always inlined, as what it calls: see
    /// `Endpoint::post_recv`.
    #[inline(always)]
    pub fn post(&mut self, pattern: Pattern, recv: R) -> Posted<R, M> {
        let key = pattern.key();
        if let Some(idx) = self.find_unexpected(&key) {
            let (msg_key, msg) = self.take_unexpected(idx);
            return Posted::Matched(Match {
                recv,
                envelope: envelope_of(&msg_key),
                msg,
            });
        }
        let seq = self.next_seq();
        let indexed = self.posted.is_indexed();
        let idx = self.posted.push(seq.get(), key, recv);
        if indexed {
            self.posted_shapes[key.shape()] += 1;
        } else if self.posted.is_indexed() {
            self.count_posted_shapes();
        }
        Posted::Queued(RecvHandle { idx, seq })
    }

    /// A message with `envelope` arrives (M1): the earliest-posted receive that accepts it takes
    /// it, or it waits in the unexpected queue.
    #[inline]
    pub fn arrive(&mut self, envelope: Envelope, msg: M) -> Arrived<R, M> {
        let key = envelope.key();
        if let Some(idx) = self.find_posted(&key) {
            let recv = self.take_posted(idx);
            return Arrived::Matched(Match {
                recv,
                envelope,
                msg,
            });
        }
        let seq = self.next_seq();
        let idx = self.unexpected_queue().push(seq.get(), key, msg);
        Arrived::Queued(MsgHandle {
            idx,
            seq: seq.get(),
        })
    }

    // ---- commands ----

    /// Cancels a posted receive (M6). `None` when it already matched or was cancelled: nothing
    /// changes then.
    pub fn cancel(&mut self, handle: RecvHandle) -> Option<R> {
        self.posted.live(handle.idx, handle.seq.get())?;
        Some(self.take_posted(handle.idx))
    }

    /// Withdraws an unexpected message, as a send cancel does (M7). `None` when it already
    /// matched, was withdrawn or was taken by `mprobe`.
    pub fn withdraw(&mut self, handle: MsgHandle) -> Option<(Envelope, M)> {
        self.unexpected.as_deref()?.live(handle.idx, handle.seq)?;
        let (key, msg) = self.take_unexpected(handle.idx);
        Some((envelope_of(&key), msg))
    }

    /// Looks at the message a receive with `pattern` would take now, without taking it (M8).
    ///
    /// Takes `&mut self` only to extend the engine's index for a wildcard shape on first use;
    /// the queues' contents and order do not change (M10).
    pub fn probe(&mut self, pattern: &Pattern) -> Option<Probed<'_, M>> {
        let idx = self.find_unexpected(&pattern.key())?;
        let slot = self.unexpected_queue().slot(idx);
        Some(Probed {
            handle: MsgHandle { idx, seq: slot.seq },
            envelope: envelope_of(&slot.key),
            msg: value_of(slot),
        })
    }

    /// Takes the message a receive with `pattern` would take now (M9): no receive can match it
    /// any more; the caller completes it (`mrecv`) without the engine.
    pub fn mprobe(&mut self, pattern: &Pattern) -> Option<(Envelope, M)> {
        let idx = self.find_unexpected(&pattern.key())?;
        let (key, msg) = self.take_unexpected(idx);
        Some((envelope_of(&key), msg))
    }

    // ---- internals ----

    /// Takes entry `idx` off the unexpected queue. A queue that drained from deep (its memory
    /// given back, M12) goes too; a shallow one stays for the next message.
    #[inline]
    fn take_unexpected(&mut self, idx: u32) -> (Key, M) {
        let queue = self.unexpected_queue();
        let taken = queue.remove(idx);
        if queue.len() == 0 && queue.heap_bytes() == 0 {
            self.unexpected = None;
        }
        taken
    }

    /// The unexpected queue, allocated if it is not yet.
    #[inline]
    fn unexpected_queue(&mut self) -> &mut Queue<M, 5> {
        self.unexpected.get_or_insert_with(Box::default)
    }

    #[inline]
    fn next_seq(&mut self) -> NonZeroU64 {
        let seq = self.next_seq;
        // 2^64 inputs are beyond any run.
        self.next_seq = seq.saturating_add(1);
        seq
    }

    /// The earliest unexpected message accepted by `pattern`. Always inlined: see `post`.
    #[inline(always)]
    fn find_unexpected(&mut self, pattern: &Key) -> Option<u32> {
        let queue = self.unexpected.as_deref_mut()?;
        if queue.len() == 0 {
            None
        } else if queue.is_indexed() {
            queue.ensure_shape(pattern.shape());
            queue.bin_head(pattern)
        } else {
            queue.scan(|msg| pattern.accepts(msg))
        }
    }

    /// The earliest posted receive that accepts `envelope`.
    #[inline]
    fn find_posted(&self, envelope: &Key) -> Option<u32> {
        if self.posted.len() == 0 {
            return None;
        }
        if !self.posted.is_indexed() {
            return self.posted.scan(|pattern| pattern.accepts(envelope));
        }
        let mut best: Option<(u64, u32)> = None;
        for (shape, key) in envelope.generalizations().iter().enumerate() {
            if self.posted_shapes[shape] == 0 {
                continue;
            }
            if let Some(idx) = self.posted.bin_head(key) {
                let seq = self.posted.slot(idx).seq;
                if best.is_none_or(|(s, _)| seq < s) {
                    best = Some((seq, idx));
                }
            }
        }
        best.map(|(_, idx)| idx)
    }

    #[inline]
    fn take_posted(&mut self, idx: u32) -> R {
        let (key, recv) = self.posted.remove(idx);
        // A queue that drains drops its index: the counts then no longer matter.
        if self.posted.is_indexed() {
            self.posted_shapes[key.shape()] -= 1;
        }
        recv
    }

    /// Counts the posted receives per shape, as the posted queue becomes indexed.
    #[cold]
    fn count_posted_shapes(&mut self) {
        self.posted_shapes = [0; 4];
        for (_, slot) in self.posted.iter() {
            self.posted_shapes[slot.key.shape()] += 1;
        }
    }
}

#[inline]
fn value_of<T, const L: usize>(slot: &Slot<T, L>) -> &T {
    // Invariant: slots reached through a queue's lists or a live handle are occupied.
    slot.value.as_ref().expect("occupied slot")
}

fn envelope_of(key: &Key) -> Envelope {
    Envelope {
        context: ContextId(key.context),
        source: key.source as Rank,
        tag: key.tag,
    }
}

fn pattern_of(key: &Key) -> Pattern {
    use super::envelope::{ANY_SOURCE_RAW, ANY_TAG_RAW};
    use super::{Source, Tag};
    Pattern {
        context: ContextId(key.context),
        source: if key.source == ANY_SOURCE_RAW {
            Source::Any
        } else {
            Source::Rank(key.source)
        },
        tag: if key.tag == ANY_TAG_RAW {
            Tag::Any
        } else {
            Tag::Value(key.tag)
        },
    }
}
