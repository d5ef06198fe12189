//! Events and their order (`docs/timing.md` §5, S10).
//!
//! The key `(time, class, creator, n)` orders every event independently of host order: class 0
//! for packet deliveries (messages, acks), 1 for a rank resuming its program; `creator` is the
//! rank that made the event; `n` counts the events that creator has made.
//!
//! Memory is per event in flight, and a simulation holds millions of ranks, so the queue keeps
//! events small: its priority store (the "heap": `time_buckets`, entries grouped by time)
//! moves 24-byte entries, a delivery's packet waits in a slab, and a resume has no body at all
//! (its rank is its creator). The first resume of every rank, at time 0, is not queued one by
//! one either: it is a range of ranks ([`Queue::push_start`]).

use std::cmp::Ordering;
use std::num::NonZeroU64;
use std::ops::Range;

use mpsim_proto::p2p::Packet;
use mpsim_proto::runtime::Payload;

use crate::time_buckets::{TimeBuckets, Timed};

/// The class of an event, ordered as in its key. An enum rather than a number so that an
/// `Option<Key>` (what the queue hands out) is no larger than a key and tells `None` by the
/// class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Class {
    Delivery = 0,
    Resume = 1,
}

/// The class of packet deliveries (seen first at equal times).
pub(crate) const DELIVERY: Class = Class::Delivery;
/// The class of rank resumptions.
pub(crate) const RESUME: Class = Class::Resume;

/// An event's key `(time, class, creator, n)`, in three words: class and creator share one,
/// `(class + 1) << 32 | creator` (never zero, so that an `Option<Key>` is no larger than a key),
/// and the derived order is the key's. Whole words because a key is built and then soon copied
/// (into the queue's front, out of it): a load that spans several narrower stores made just
/// before cannot take its data from them and waits for them to reach the cache (a store-to-load
/// interlock, `perf stat -e ls_bad_status2.stli_other`), several times per simulated message
/// with a byte class beside a 4-byte creator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    pub time: u64,
    who: NonZeroU64,
    pub n: u64,
}

impl Key {
    #[inline(always)]
    pub fn new(time: u64, class: Class, creator: u32, n: u64) -> Key {
        let who = ((class as u64 + 1) << 32) | u64::from(creator);
        Key {
            time,
            who: NonZeroU64::new(who).expect("the class part is not zero"),
            n,
        }
    }

    /// The event's class.
    #[inline(always)]
    pub fn class(&self) -> Class {
        if self.who.get() >> 32 == Class::Resume as u64 + 1 {
            Class::Resume
        } else {
            Class::Delivery
        }
    }

    /// The rank that made the event.
    #[inline(always)]
    pub fn creator(&self) -> u32 {
        self.who.get() as u32
    }
}

pub(crate) enum Body {
    Deliver {
        from: u32,
        to: u32,
        /// The sender's time at the send (strict ready sends are checked against it).
        sent_at: u64,
        packet: Packet<Payload>,
    },
    /// Resumes rank `rank`, the event's creator.
    Resume { rank: u32 },
}

/// A key and where its body is, packed into 24 bytes: `tag` holds the class in its top bit and,
/// for a delivery, the body's slab index below it. Ordered by key alone.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    n: u64,
    creator: u32,
    tag: u32,
}

const RESUME_BIT: u32 = 1 << 31;

impl Entry {
    fn new(key: Key, slot: u32) -> Self {
        debug_assert!(slot < RESUME_BIT);
        Entry {
            time: key.time,
            n: key.n,
            creator: key.creator(),
            tag: if key.class() == RESUME {
                RESUME_BIT
            } else {
                slot
            },
        }
    }

    fn key(&self) -> Key {
        Key::new(
            self.time,
            if self.tag & RESUME_BIT != 0 {
                RESUME
            } else {
                DELIVERY
            },
            self.creator,
            self.n,
        )
    }

    /// The order of `(time, class, creator, n)`.
    #[inline]
    fn rank(&self) -> (u64, bool, u32, u64) {
        (self.time, self.tag & RESUME_BIT != 0, self.creator, self.n)
    }
}

impl Timed for Entry {
    #[inline(always)]
    fn time(&self) -> u64 {
        self.time
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

/// The queue's front key, kept word by word (`who` 0 when empty) rather than as an
/// `Option<Key>`: a key is built in its three words just before it goes to the front, and the
/// compiler copied an `Option<Key>` with a 16-byte load over two 8-byte stores, which cannot
/// take its data from them and waits (a store-to-load interlock). The words lie in the reverse
/// order of a key's, so that they are never copied together.
#[derive(Default)]
struct Front {
    n: u64,
    who: u64,
    time: u64,
}

impl Front {
    #[inline(always)]
    fn get(&self) -> Option<Key> {
        NonZeroU64::new(self.who).map(|who| Key {
            time: self.time,
            who,
            n: self.n,
        })
    }

    #[inline(always)]
    fn set(&mut self, key: Key) {
        self.time = key.time;
        self.who = key.who.get();
        self.n = key.n;
    }

    #[inline(always)]
    fn clear(&mut self) {
        self.who = 0;
    }

    #[inline(always)]
    fn take(&mut self) -> Option<Key> {
        let key = self.get();
        self.clear();
        key
    }
}

/// The creator of a checkpoint's resume (`Queue::push_checkpoint`): no rank (ranks are below
/// `u32::MAX`).
pub(crate) const CHECKPOINT: u32 = u32::MAX;

/// A priority queue of events by key.
///
/// A one-event `front` sits before the heap: an event earlier than everything queued waits
/// there, so the common chain "an event makes the next event" (a message, then its receiver's
/// resume, then its next message) costs no heap operation. `start` holds the first resumes of
/// ranks not yet started: keys `(0, RESUME, r, 0)` for `r` in the range. Invariant: `front`,
/// when set, is smaller than every key in the heap and in `start`; `pop` therefore takes
/// `front` first.
///
/// [`Queue::pop`] hands out a key alone, and a delivery's body is taken after it
/// ([`Queue::take_delivery`]) from `delivery`, where the front's body waits too: a resume, half
/// of a ring's events, then moves 24 bytes rather than the 96 of a key with a packet, which
/// the compiler would copy whole through every `Option` and `match` on the way.
#[derive(Default)]
pub(crate) struct Queue {
    front: Front,
    /// Destination, send time and packet of the front event when it is a delivery, else of the
    /// delivery just popped until it is taken; else `None`.
    delivery: Option<(u32, u64, Packet<Payload>)>,
    start: Range<u32>,
    /// Every other queued event, in key order (the queue's "heap", whatever its structure).
    heap: TimeBuckets<Entry>,
    /// Deliveries in the heap: destination and packet (the sender is the key's creator).
    bodies: Vec<Option<(u32, u64, Packet<Payload>)>>,
    free: Vec<u32>,
    /// A sequential run's next checkpoint for a livelock, if any ([`Queue::push_checkpoint`]):
    /// kept apart from the heap, whose emptiness keeps the common push and pop cheap.
    checkpoint: Checkpoint,
}

/// The time of a queued checkpoint (`u64::MAX`: none).
struct Checkpoint(u64);

impl Default for Checkpoint {
    fn default() -> Self {
        Checkpoint(u64::MAX)
    }
}

impl Queue {
    /// Queues the first resume of each rank in `ranks`, `(0, RESUME, r, 0)`: the caller counts
    /// it as each rank's event 0. Only on an empty queue.
    pub fn push_start(&mut self, ranks: Range<u32>) {
        debug_assert!(self.front.get().is_none() && self.heap.is_empty() && self.start.is_empty());
        self.start = ranks;
    }

    #[inline]
    fn start_key(&self) -> Option<Key> {
        (!self.start.is_empty()).then_some(Key::new(0, RESUME, self.start.start, 0))
    }

    /// Queues an event. Inlined: its callers then build the body where it is stored. Not
    /// between the pop of a delivery and the take of its body.
    #[inline(always)]
    pub fn push(&mut self, key: Key, body: Body) {
        match self.front.get() {
            None if self.before_heap(key) && self.before_start(key) => {
                self.set_front(key, body);
            }
            Some(front_key) if key < front_key => {
                self.front.clear();
                let front_body = self.take_body(front_key);
                self.push_heap(front_key.time, front_key.who, front_key.n, front_body);
                self.set_front(key, body);
            }
            _ => self.push_heap(key.time, key.who, key.n, body),
        }
    }

    /// Puts an event in the (empty) front.
    #[inline(always)]
    fn set_front(&mut self, key: Key, body: Body) {
        debug_assert!(self.front.get().is_none() && self.delivery.is_none());
        self.front.set(key);
        if let Body::Deliver {
            to,
            sent_at,
            packet,
            ..
        } = body
        {
            // The slot is empty (above): nothing to drop, which an assignment would call code
            // for on every message.
            let empty = self.delivery.replace((to, sent_at, packet));
            debug_assert!(empty.is_none());
            std::mem::forget(empty);
        }
    }

    /// Whether `key` comes before every start resume still queued and no later than a queued
    /// checkpoint (which runs after every other event of its time): the rest of what the front
    /// must come before, beside the heap ([`Queue::before_heap`]).
    #[inline]
    fn before_start(&self, key: Key) -> bool {
        (self.start.is_empty() || self.start_key().is_none_or(|m| key < m))
            && key.time <= self.checkpoint.0
    }

    /// Whether `key` comes before every event in the heap. The empty heap is told inline: it
    /// is the common case of a chain of events (a ring's), and the out-of-line `heap_min`
    /// hands its key back through memory.
    #[inline(always)]
    fn before_heap(&self, key: Key) -> bool {
        self.heap.is_empty() || self.heap_min().is_none_or(|m| key < m)
    }

    #[inline]
    fn heap_min(&self) -> Option<Key> {
        self.heap.peek().map(|e| e.key())
    }

    /// Queues an event in the heap. The key comes in its three words, not as a `Key`: a key
    /// handed to a call by reference would live in memory on `push`'s every path, the front's
    /// too, and be copied from there with loads wider than its stores.
    #[inline(never)]
    fn push_heap(&mut self, time: u64, who: NonZeroU64, n: u64, body: Body) {
        let key = Key { time, who, n };
        let slot = match body {
            Body::Resume { rank } => {
                debug_assert_eq!(rank, key.creator(), "a resume is made by its rank");
                0
            }
            Body::Deliver {
                from,
                to,
                sent_at,
                packet,
            } => {
                debug_assert_eq!(from, key.creator(), "a packet is sent by its creator");
                self.store(to, sent_at, packet)
            }
        };
        self.heap.push(Entry::new(key, slot));
    }

    fn store(&mut self, to: u32, sent_at: u64, packet: Packet<Payload>) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.bodies[i as usize] = Some((to, sent_at, packet));
                i
            }
            None => {
                self.bodies.push(Some((to, sent_at, packet)));
                u32::try_from(self.bodies.len() - 1)
                    .ok()
                    .filter(|&i| i < RESUME_BIT)
                    .expect("fewer than 2^31 packets in flight")
            }
        }
    }

    /// The key of the earliest event, removed from the queue. A resume's body is its creator
    /// (`Body::Resume { rank: key.creator }`); a delivery's is taken next, with
    /// [`Queue::take_delivery`].
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Key> {
        if let Some(key) = self.front.take() {
            // A delivery's body stays in `delivery` for `take_delivery`.
            return Some(key);
        }
        if !self.start.is_empty() {
            return Some(self.pop_while_starting());
        }
        self.pop_heap()
    }

    /// The time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<u64> {
        if let Some(key) = self.front.get() {
            return Some(key.time);
        }
        let queued = match (self.heap_min(), self.start_key()) {
            (Some(h), Some(s)) => Some(h.min(s).time),
            (h, s) => h.or(s).map(|k| k.time),
        };
        let checkpoint = (self.checkpoint.0 != u64::MAX).then_some(self.checkpoint.0);
        queued.into_iter().chain(checkpoint).min()
    }

    /// `pop` when the earliest event is a resume in the front slot, else `None` (and nothing
    /// changes): a cheaper `pop` for the run loop right after a delivery, whose wake-up of its
    /// receiver lands there.
    #[inline]
    pub fn pop_front_resume(&mut self) -> Option<Key> {
        match self.front.get() {
            Some(key) if key.class() == RESUME => {
                self.front.clear();
                Some(key)
            }
            _ => None,
        }
    }

    /// Whether the queue holds resumes alone: no packet and no start (`livelock`).
    pub fn resumes_only(&self) -> bool {
        self.delivery.is_none() && self.bodies.len() == self.free.len() && self.start.is_empty()
    }

    /// Queues a sequential run's checkpoint for a livelock at `time` (`livelock`): a resume of
    /// no rank ([`CHECKPOINT`]), after every other event at `time`. One at a time.
    pub fn push_checkpoint(&mut self, time: u64) {
        debug_assert_eq!(self.checkpoint.0, u64::MAX, "one checkpoint at a time");
        self.checkpoint.0 = time;
        // The front stays before every queued event.
        if let Some(key) = self.front.get()
            && key.time > time
        {
            self.front.clear();
            let body = self.take_body(key);
            self.push_heap(key.time, key.who, key.n, body);
        }
    }

    /// The queued checkpoint's key, taken out, if it comes before the heap's first event.
    #[inline]
    fn pop_checkpoint(&mut self) -> Option<Key> {
        let t = self.checkpoint.0;
        if t == u64::MAX || self.heap_min().is_some_and(|m| m.time <= t) {
            return None;
        }
        self.checkpoint.0 = u64::MAX;
        Some(Key::new(t, RESUME, CHECKPOINT, 0))
    }

    /// The body of the delivery `pop` returned last: its destination, its send time and its
    /// packet (the sender is the key's creator).
    #[inline]
    pub fn take_delivery(&mut self) -> (u32, u64, Packet<Payload>) {
        // Invariant: called once after `pop` returned a delivery, which left its body here.
        self.delivery.take().expect("a delivery was popped")
    }

    /// The whole body of `key`, the event `pop` returned last (or the front being moved back
    /// into the heap): a resume's from its key, a delivery's taken as by
    /// [`Queue::take_delivery`].
    #[inline]
    fn take_body(&mut self, key: Key) -> Body {
        if key.class() == RESUME {
            return Body::Resume {
                rank: key.creator(),
            };
        }
        let (to, sent_at, packet) = self.take_delivery();
        Body::Deliver {
            from: key.creator(),
            to,
            sent_at,
            packet,
        }
    }

    /// `pop` while start resumes are queued: the earlier of the next start and the heap's top.
    #[cold]
    fn pop_while_starting(&mut self) -> Key {
        match (self.heap_min(), self.start_key()) {
            (Some(h), Some(s)) if h < s => self.pop_heap().expect("peeked"),
            (_, Some(s)) => {
                self.start.start += 1;
                s
            }
            // Invariant: the caller saw a start resume queued.
            (_, None) => unreachable!("start resumes are queued"),
        }
    }

    #[inline]
    fn pop_heap(&mut self) -> Option<Key> {
        if let Some(key) = self.pop_checkpoint() {
            return Some(key);
        }
        let entry = self.heap.pop()?;
        let key = entry.key();
        if key.class() == DELIVERY {
            // Invariant: a delivery's entry names a filled slot.
            let slot = entry.tag;
            self.delivery = self.bodies[slot as usize].take();
            debug_assert!(self.delivery.is_some(), "a delivery's body is in its slot");
            self.free.push(slot);
        }
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use mpsim_proto::matching::{ContextId, Envelope};
    use mpsim_proto::p2p::{Config, Endpoint, Packet, SendCall, SendMode, Transmit};
    use mpsim_proto::runtime::Payload;
    use proptest::prelude::*;

    use super::{Body, Class, DELIVERY, Key, Queue, RESUME};

    fn key(time: u64, class: Class, creator: u32, n: u64) -> Key {
        Key::new(time, class, creator, n)
    }

    /// A message packet whose tag names the event it belongs to.
    fn packet(n: u64) -> Packet<Payload> {
        let mut ep = Endpoint::new(0, Config::default());
        let env = Envelope::new(ContextId(0), 0, n as i32);
        let mut packet = None;
        let send = SendCall {
            call: "isend",
            mode: SendMode::Standard,
            to: 1,
            envelope: env,
            payload: Payload::new(),
            blocking: false,
        };
        let _ = ep.start_send(send, |t: Transmit<Payload>| packet = Some(t.packet));
        packet.expect("a send transmits")
    }

    fn body(k: Key) -> Body {
        if k.class() == RESUME {
            Body::Resume { rank: k.creator() }
        } else {
            Body::Deliver {
                from: k.creator(),
                to: k.creator() + 100,
                sent_at: k.n,
                packet: packet(k.n),
            }
        }
    }

    /// The next event with its body, as the run loop takes them.
    fn pop(q: &mut Queue) -> Option<(Key, Body)> {
        let key = q.pop()?;
        Some((key, q.take_body(key)))
    }

    /// The popped body is the one pushed with the key.
    fn check_body(k: Key, b: &Body) -> bool {
        match b {
            Body::Resume { rank } => k.class() == RESUME && *rank == k.creator(),
            Body::Deliver {
                from,
                to,
                sent_at,
                packet,
            } => {
                k.class() == DELIVERY
                    && *from == k.creator()
                    && *to == k.creator() + 100
                    && *sent_at == k.n
                    && matches!(packet, Packet::Message { envelope, .. } if envelope.tag as u64 == k.n)
            }
        }
    }

    /// An `Option<Key>` (what `pop` hands out, what the front reads as) is no larger than a
    /// key: `None` is told by the class.
    #[test]
    fn an_optional_key_is_a_key() {
        assert_eq!(size_of::<Option<Key>>(), size_of::<Key>());
    }

    proptest! {
        /// A key orders as the tuple `(time, class, creator, n)` it packs, and gives its class
        /// and creator back.
        #[test]
        fn key_orders_as_its_tuple(
            a in (0u64..3, any::<bool>(), prop_oneof![0u32..3, Just(u32::MAX)], 0u64..3),
            b in (0u64..3, any::<bool>(), prop_oneof![0u32..3, Just(u32::MAX)], 0u64..3),
        ) {
            let class = |resume: bool| if resume { RESUME } else { DELIVERY };
            let ka = key(a.0, class(a.1), a.2, a.3);
            let kb = key(b.0, class(b.1), b.2, b.3);
            prop_assert_eq!((ka.class(), ka.creator()), (class(a.1), a.2));
            prop_assert_eq!(ka.cmp(&kb), (a.0, a.1, a.2, a.3).cmp(&(b.0, b.1, b.2, b.3)));
        }

        /// Pops come out in key order whatever the interleaving of pushes and pops (the front
        /// slot never lets a later event overtake an earlier one, nor do the start resumes),
        /// each with the body it was pushed with.
        #[test]
        fn queue_pops_in_key_order(
            start in 0u32..4,
            ops in proptest::collection::vec((any::<bool>(), 0u64..20, 0u8..2, 0u32..4), 0..300),
        ) {
            let mut q = Queue::default();
            q.push_start(0..start);
            let mut reference: Vec<Key> = (0..start).map(|r| key(0, RESUME, r, 0)).collect();
            for (n, (push, time, class, creator)) in ops.into_iter().enumerate() {
                if push {
                    let class = if class == 0 { DELIVERY } else { RESUME };
                    let k = key(time, class, creator, n as u64 + 1);
                    q.push(k, body(k));
                    reference.push(k);
                } else {
                    reference.sort();
                    let expected = (!reference.is_empty()).then(|| reference.remove(0));
                    let popped = pop(&mut q);
                    prop_assert_eq!(popped.as_ref().map(|(k, _)| *k), expected);
                    if let Some((k, b)) = popped {
                        prop_assert!(check_body(k, &b));
                    }
                }
            }
            reference.sort();
            for k in reference {
                let popped = pop(&mut q);
                prop_assert_eq!(popped.as_ref().map(|(k, _)| *k), Some(k));
                let (k, b) = popped.expect("checked");
                prop_assert!(check_body(k, &b));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
