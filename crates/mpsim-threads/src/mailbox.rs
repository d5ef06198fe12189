//! A rank's inbox: packets from peers, in arrival order per sender (FIFO per channel because a
//! sender pushes in its send order and the queue keeps push order).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::Thread;

use mpsim_proto::p2p::Packet;
use mpsim_proto::runtime::Payload;

/// What a rank thread is doing, for the deadlock watchdog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Activity {
    Running = 0,
    Parked = 1,
    Finished = 2,
}

pub(crate) struct Mailbox {
    packets: Mutex<Vec<(u32, Packet<Payload>)>>,
    has_mail: AtomicBool,
    /// Packets ever pushed here (the watchdog's evidence of progress).
    pushed: AtomicU64,
    activity: std::sync::atomic::AtomicU8,
    thread: std::sync::OnceLock<Thread>,
    /// What the rank waits for while parked: `(call, request description)`.
    pub blocked_on: Mutex<Option<String>>,
    pub blocked_peer: Mutex<Option<u32>>,
}

impl Mailbox {
    pub fn new() -> Self {
        Mailbox {
            packets: Mutex::new(Vec::new()),
            has_mail: AtomicBool::new(false),
            pushed: AtomicU64::new(0),
            activity: std::sync::atomic::AtomicU8::new(Activity::Running as u8),
            thread: std::sync::OnceLock::new(),
            blocked_on: Mutex::new(None),
            blocked_peer: Mutex::new(None),
        }
    }

    pub fn register_thread(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Appends packets from `from` (in order) and wakes the owner.
    pub fn push(&self, from: u32, packets: impl Iterator<Item = Packet<Payload>>) {
        let mut n = 0;
        {
            let mut q = lock(&self.packets);
            for p in packets {
                q.push((from, p));
                n += 1;
            }
        }
        if n > 0 {
            self.pushed.fetch_add(n, Ordering::Relaxed);
            self.has_mail.store(true, Ordering::Release);
            self.wake();
        }
    }

    pub fn wake(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    #[inline]
    pub fn has_mail(&self) -> bool {
        self.has_mail.load(Ordering::Acquire)
    }

    /// Moves every waiting packet into `out`.
    pub fn drain_into(&self, out: &mut Vec<(u32, Packet<Payload>)>) {
        if !self.has_mail() {
            return;
        }
        let mut q = lock(&self.packets);
        self.has_mail.store(false, Ordering::Release);
        out.append(&mut q);
    }

    pub fn pushed(&self) -> u64 {
        self.pushed.load(Ordering::Relaxed)
    }

    pub fn set_activity(&self, a: Activity) {
        self.activity.store(a as u8, Ordering::SeqCst);
    }

    pub fn activity(&self) -> Activity {
        match self.activity.load(Ordering::SeqCst) {
            0 => Activity::Running,
            1 => Activity::Parked,
            _ => Activity::Finished,
        }
    }
}

/// Locks, ignoring poisoning: a rank that panicked is reported by the launcher; the queue
/// itself is never left half-updated (pushes and drains are single `Vec` operations).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
