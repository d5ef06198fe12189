//! A rank's inbox: packets from peers, in arrival order per sender (FIFO per channel: a sender
//! pushes in its send order and the queue keeps each producer's order).
//!
//! Built for the ping-pong path: a lock-free queue (no mutex on a send), the owner's state and
//! counters each on a cache line of their own (a sender and the receiver do not bounce one line
//! between cores), and a sender unparks the owner only when it is parked. The park protocol is
//! Dekker-style: the owner publishes `Parked` then looks at the queue; a sender pushes then
//! looks at the owner's state; a `SeqCst` fence on each side means at least one of them sees
//! the other (and a timed park backs that up).

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering, fence};
use std::thread::Thread;

use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use mpsim_proto::p2p::Packet;
use mpsim_proto::runtime::Payload;

/// What a rank thread is doing, for senders (unpark or not) and the deadlock watchdog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Activity {
    Running = 0,
    Parked = 1,
    Finished = 2,
}

pub(crate) struct Mailbox {
    /// Written by senders, read by the owner.
    queue: CachePadded<SegQueue<(u32, Packet<Payload>)>>,
    /// Written by the owner, read by senders.
    activity: CachePadded<AtomicU8>,
    /// Packets the owner has taken in (written by the owner only): the watchdog's evidence of
    /// progress.
    taken: CachePadded<AtomicU64>,
    thread: OnceLock<Thread>,
    /// What the rank waits for, published when it parks (read by the watchdog).
    pub blocked_on: Mutex<Option<String>>,
    pub blocked_peer: Mutex<Option<u32>>,
}

impl Mailbox {
    pub fn new() -> Self {
        Mailbox {
            queue: CachePadded::new(SegQueue::new()),
            activity: CachePadded::new(AtomicU8::new(Activity::Running as u8)),
            taken: CachePadded::new(AtomicU64::new(0)),
            thread: OnceLock::new(),
            blocked_on: Mutex::new(None),
            blocked_peer: Mutex::new(None),
        }
    }

    pub fn register_thread(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Appends packets from `from` (in order) and wakes the owner if it is parked.
    pub fn push(&self, from: u32, packets: impl Iterator<Item = Packet<Payload>>) {
        for p in packets {
            self.queue.push((from, p));
        }
        fence(Ordering::SeqCst);
        if self.activity() == Activity::Parked {
            self.wake();
        }
    }

    /// Unparks the owner (also used to end a run).
    pub fn wake(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    #[inline]
    pub fn has_mail(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Moves every waiting packet into `out` (owner only).
    pub fn drain_into(&self, out: &mut Vec<(u32, Packet<Payload>)>) {
        let before = out.len();
        while let Some(p) = self.queue.pop() {
            out.push(p);
        }
        let n = (out.len() - before) as u64;
        if n > 0 {
            self.taken.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// Publishes the owner's state (owner only). Going to `Parked`, the caller must look at the
    /// queue again afterwards before it parks.
    pub fn set_activity(&self, a: Activity) {
        self.activity.store(a as u8, Ordering::SeqCst);
        if a == Activity::Parked {
            fence(Ordering::SeqCst);
        }
    }

    pub fn activity(&self) -> Activity {
        match self.activity.load(Ordering::SeqCst) {
            0 => Activity::Running,
            1 => Activity::Parked,
            _ => Activity::Finished,
        }
    }
}

/// Locks, ignoring poisoning: a rank that panicked is reported by the launcher; the data behind
/// these locks (diagnostic text) is never left half-written.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
