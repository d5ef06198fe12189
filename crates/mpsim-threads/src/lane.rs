//! A lane: the FIFO channel from one sending rank to one receiving rank — a single-producer,
//! single-consumer queue built for the latency of one small message.
//!
//! Why not a general queue: on the ping-pong path the cost of a message is the cache lines
//! that cross cores. Here a message crosses in exactly the line of its slot: the slot's
//! sequence number and the packet sit together in one line (`Packet` is at most 56 bytes), the
//! producer's and consumer's positions are private to each side (the producer reads the
//! consumer's once per lap of the ring at most), and no step is a locked read-modify-write. (A
//! multi-producer queue such as crossbeam's `SegQueue` costs two to three contended lines and a
//! compare-and-swap per message, and about 200 more instructions.)
//!
//! The ring is bounded ([`LANE_SLOTS`]); a sender never blocks on a full ring (an eager send
//! must complete whatever the receiver does): past the ring, packets go to an overflow list
//! under a mutex, and while that list is non-empty every later packet goes there too, so the
//! lane stays FIFO. Only the producer sets the `overflowing` flag and only the consumer clears
//! it (after emptying the list, under the lock), which is what makes the fast path a plain
//! check of the flag.
//!
//! The slot protocol: only the producer writes a slot. The producer at position `t` writes the
//! value into slot `t % N` and publishes it by setting the slot's sequence to `t + 1`; the
//! consumer at position `h` may read slot `h % N` when its sequence is `h + 1` (no older lap can
//! show that number), then advances its own position `head`. The producer reuses a slot only
//! when `head` says the consumer is past its previous value, and reads `head` only when its
//! cached copy says the ring is full (once per lap at most). So a small message costs the slot's
//! line moving to the consumer and nothing else: the consumer never writes into the ring (a
//! Vyukov queue's hand-back write would pull the line back to its side before every reuse).
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use crate::mailbox::lock;

/// Slots of a lane's ring. A ping-pong uses one; bursts of small nonblocking sends use more
/// before spilling into the overflow list.
pub(crate) const LANE_SLOTS: usize = 32;

/// One slot: the sequence number and the value on the same cache line(s).
#[repr(align(64))]
struct Slot<T> {
    seq: AtomicU64,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A single-producer, single-consumer FIFO of `T`, unbounded.
///
/// Safety contract (upheld by the threads backend, not checked here): at most one thread at a
/// time calls [`Lane::push`] (the sending rank's thread) and at most one calls [`Lane::pop`]
/// (the receiving rank's thread). [`Lane::has_items`] may be called from anywhere.
pub(crate) struct Lane<T> {
    slots: Box<[Slot<T>]>,
    /// The producer's private positions.
    producer: CachePadded<Producer>,
    /// The consumer's next position (written by the consumer only; read by the producer when
    /// the ring looks full, and by the watchdog).
    head: CachePadded<AtomicU64>,
    /// Set by the producer when it spills, cleared by the consumer once the list is empty.
    overflowing: CachePadded<AtomicBool>,
    overflow: Mutex<VecDeque<T>>,
}

/// What only the producer touches (atomics only because the lane is shared; Relaxed).
struct Producer {
    /// The next position to write.
    tail: AtomicU64,
    /// The consumer's position as last read: the ring is full when `tail - head_seen == N`.
    head_seen: AtomicU64,
}

// SAFETY: values move from the producer's thread to the consumer's (T: Send). A slot's value is
// accessed by one side at a time: the producer only after seeing the consumer's `head` past the
// slot's previous value (Acquire, paired with the consumer's Release after its read), the
// consumer only after seeing the producer's publication (Acquire, paired with the producer's
// Release after its write).
unsafe impl<T: Send> Send for Lane<T> {}
// SAFETY: as above; shared access is limited to one producer and one consumer by contract.
unsafe impl<T: Send> Sync for Lane<T> {}

impl<T> Lane<T> {
    pub fn new() -> Self {
        Lane {
            slots: (0..LANE_SLOTS)
                .map(|_| Slot {
                    // Never `h + 1` for a position `h` before the first write.
                    seq: AtomicU64::new(0),
                    value: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            producer: CachePadded::new(Producer {
                tail: AtomicU64::new(0),
                head_seen: AtomicU64::new(0),
            }),
            head: CachePadded::new(AtomicU64::new(0)),
            overflowing: CachePadded::new(AtomicBool::new(false)),
            overflow: Mutex::new(VecDeque::new()),
        }
    }

    fn slot(&self, pos: u64) -> &Slot<T> {
        &self.slots[(pos % LANE_SLOTS as u64) as usize]
    }

    /// Appends `value` (producer only). Never blocks on the consumer.
    pub fn push(&self, value: T) {
        if !self.overflowing.load(Ordering::Acquire) {
            let value = match self.try_push_ring(value) {
                Ok(()) => return,
                Err(v) => v,
            };
            let mut list = lock(&self.overflow);
            // The consumer may have emptied the ring meanwhile, but packets must not pass the
            // ones already in the ring: spilling keeps the order (the consumer takes the ring
            // first, then the list).
            list.push_back(value);
            self.overflowing.store(true, Ordering::Release);
            return;
        }
        let mut list = lock(&self.overflow);
        if self.overflowing.load(Ordering::Acquire) {
            list.push_back(value);
            return;
        }
        // The consumer emptied the list and cleared the flag since we looked: back to the ring.
        drop(list);
        if let Err(value) = self.try_push_ring(value) {
            let mut list = lock(&self.overflow);
            list.push_back(value);
            self.overflowing.store(true, Ordering::Release);
        }
    }

    fn try_push_ring(&self, value: T) -> Result<(), T> {
        let p = &self.producer;
        let t = p.tail.load(Ordering::Relaxed);
        if t - p.head_seen.load(Ordering::Relaxed) >= LANE_SLOTS as u64 {
            // Looks full: see how far the consumer has got.
            let head = self.head.load(Ordering::Acquire);
            p.head_seen.store(head, Ordering::Relaxed);
            if t - head >= LANE_SLOTS as u64 {
                return Err(value);
            }
        }
        let slot = self.slot(t);
        // SAFETY: the consumer is past position `t - N`, this slot's previous value (its `head`,
        // stored with Release after reading that value, seen with Acquire above, now or when
        // `head_seen` was read), so nothing reads the slot; only this thread produces.
        unsafe { (*slot.value.get()).write(value) };
        slot.seq.store(t + 1, Ordering::Release);
        p.tail.store(t + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Takes the oldest value (consumer only).
    pub fn pop(&self) -> Option<T> {
        if let Some(value) = self.pop_ring() {
            return Some(value);
        }
        if !self.overflowing.load(Ordering::Acquire) {
            return None;
        }
        // The producer spilled. Look at the ring again: the first look may predate packets
        // the producer put there before it spilled (seeing the flag, Acquire, makes them
        // visible), and those come first.
        if let Some(value) = self.pop_ring() {
            return Some(value);
        }
        // Every ring packet from before the spill was taken: the list comes next in FIFO order
        // (the producer puts nothing in the ring while the flag is set).
        let mut list = lock(&self.overflow);
        let value = list.pop_front();
        if list.is_empty() {
            self.overflowing.store(false, Ordering::Release);
        }
        value
    }

    #[inline]
    fn pop_ring(&self) -> Option<T> {
        let h = self.head.load(Ordering::Relaxed);
        let slot = self.slot(h);
        if slot.seq.load(Ordering::Acquire) != h + 1 {
            return None;
        }
        // SAFETY: sequence `h + 1` means the producer wrote this slot and published it (Release,
        // seen by the Acquire above); only this thread consumes.
        let value = unsafe { (*slot.value.get()).assume_init_read() };
        // Hands the slot back: the producer reuses it only after seeing this (Acquire).
        self.head.store(h + 1, Ordering::Release);
        Some(value)
    }

    /// Whether a value is waiting: exact for the consumer; a snapshot for anyone else.
    #[inline]
    pub fn has_items(&self) -> bool {
        let h = self.head.load(Ordering::Relaxed);
        self.slot(h).seq.load(Ordering::Acquire) == h + 1
            || self.overflowing.load(Ordering::Acquire)
    }
}

impl<T> Drop for Lane<T> {
    fn drop(&mut self) {
        // Values still in the ring (a run that aborted): drop them.
        let (mut h, t) = (*self.head.get_mut(), *self.producer.tail.get_mut());
        while h < t {
            let slot = &mut self.slots[(h % LANE_SLOTS as u64) as usize];
            // SAFETY: positions head..tail hold values written and not read (exclusive access
            // in drop).
            unsafe { slot.value.get_mut().assume_init_drop() };
            h += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_through_ring_and_overflow_single_thread() {
        let lane = Lane::new();
        for i in 0..(3 * LANE_SLOTS as u64) {
            lane.push(i);
        }
        assert!(lane.has_items());
        for i in 0..(3 * LANE_SLOTS as u64) {
            assert_eq!(lane.pop(), Some(i));
            // Interleave: pushes after partial draining keep the order.
            if i == 5 {
                lane.push(1_000);
            }
        }
        assert_eq!(lane.pop(), Some(1_000));
        assert_eq!(lane.pop(), None);
        assert!(!lane.has_items());
    }

    /// Two threads, bursts that overflow and drains that race with spilling: every value
    /// arrives once and in order.
    #[test]
    fn fifo_across_threads_with_bursts() {
        const N: u64 = 1_000_000;
        let lane = Arc::new(Lane::new());
        let producer = {
            let lane = Arc::clone(&lane);
            std::thread::spawn(move || {
                for i in 0..N {
                    lane.push(Box::new(i)); // a heap value: a double drop or a leak would show
                    if i % 1_000 == 0 {
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut next = 0;
        while next < N {
            match lane.pop() {
                Some(v) => {
                    assert_eq!(*v, next);
                    next += 1;
                }
                None => std::hint::spin_loop(),
            }
        }
        producer.join().unwrap();
        assert_eq!(lane.pop(), None);
    }

    #[test]
    fn dropping_a_lane_drops_what_it_holds() {
        let counter = Arc::new(());
        let lane = Lane::new();
        for _ in 0..(2 * LANE_SLOTS) {
            lane.push(Arc::clone(&counter));
        }
        let _ = lane.pop();
        drop(lane);
        assert_eq!(Arc::strong_count(&counter), 1);
    }
}
