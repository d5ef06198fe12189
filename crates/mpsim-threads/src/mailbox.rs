//! A rank's mailbox: the lanes that bring it packets (one per sending rank, FIFO each), the
//! owner's published state, and what the deadlock watchdog reads.
//!
//! A sender makes its lane to a rank on its first send there and registers it here; the owner
//! picks new lanes up when `lane_count` moves. The owner's state and counters each sit on a
//! cache line of their own (senders read `activity` on every send, the owner writes it only on
//! the way to and from parking), and a sender unparks the owner only when it is parked. The park
//! protocol is Dekker-style: the owner publishes `Parked` then looks at its lanes; a sender
//! pushes then looks at the owner's state; a `SeqCst` fence on each side means at least one of
//! them sees the other (and a timed park backs that up).

use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;

use crossbeam_utils::CachePadded;
use mpsim_proto::deadlock::{BlockedRank, Waiting};
use mpsim_proto::matching::Envelope;
use mpsim_proto::p2p::{Packet, Protocol};
use mpsim_proto::runtime::Payload;

use crate::lane::Lane;

/// What a rank thread is doing, for senders (unpark or not) and the deadlock watchdog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Activity {
    Running = 0,
    Parked = 1,
    Finished = 2,
}

/// The channel from one sending rank into a mailbox.
pub(crate) type PacketLane = Lane<Packet<Payload>>;

/// A lane with the world rank that sends on it.
#[derive(Clone)]
pub(crate) struct Inbound {
    pub from: u32,
    pub lane: Arc<PacketLane>,
}

pub(crate) struct Mailbox {
    /// Lanes into this rank, in registration order (senders append; the owner copies).
    lanes: Mutex<Vec<Inbound>>,
    /// `lanes.len()`, readable without the lock: the owner's cue to copy new lanes.
    lane_count: CachePadded<AtomicUsize>,
    /// Written by the owner, read by senders.
    activity: CachePadded<AtomicU8>,
    /// Packets the owner has taken in (written by the owner only): the watchdog's evidence of
    /// progress.
    taken: CachePadded<AtomicU64>,
    thread: OnceLock<Thread>,
    /// What the rank waits for, published when it parks (read by the watchdog).
    pub blocked: Mutex<Option<Blocked>>,
}

/// What a parked rank waits for: its call, and what the call awaits when it names it (its
/// request's or a probe's peer, tag and context, or the message a detach waits for, with the
/// call that awaited thing is: `bsend`; every request still incomplete of a wait on several).
/// Kept as data and put into a report only for a deadlock: a rank publishes it each time it
/// parks, every hop of an oversubscribed run, and a wait on one request allocates nothing.
#[derive(Clone, Debug)]
pub struct Blocked {
    pub call: &'static str,
    /// The first thing it waits on, if known.
    pub first: Option<Waiting>,
    /// The rest, for a wait on several requests.
    pub more: Vec<Waiting>,
}

impl Blocked {
    /// Rank `rank`'s line of a deadlock report (`deadlock::BlockedRank`: no virtual time).
    pub fn report(&self, rank: u32) -> BlockedRank {
        let waiting_on = self.first.iter().chain(&self.more).copied().collect();
        BlockedRank::new(rank, self.call, None, waiting_on)
    }
}

impl Mailbox {
    pub fn new() -> Self {
        Mailbox {
            lanes: Mutex::new(Vec::new()),
            lane_count: CachePadded::new(AtomicUsize::new(0)),
            activity: CachePadded::new(AtomicU8::new(Activity::Running as u8)),
            taken: CachePadded::new(AtomicU64::new(0)),
            thread: OnceLock::new(),
            blocked: Mutex::new(None),
        }
    }

    pub fn register_thread(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// A new lane from world rank `from` (its sender calls this once, before its first push).
    pub fn add_lane(&self, from: u32) -> Arc<PacketLane> {
        let lane = Arc::new(Lane::new());
        let mut lanes = lock(&self.lanes);
        lanes.push(Inbound {
            from,
            lane: Arc::clone(&lane),
        });
        self.lane_count.store(lanes.len(), Ordering::Release);
        lane
    }

    /// The messages still in this mailbox's lanes, `(sender, envelope, bytes, protocol)`, lane
    /// by lane in FIFO order, taken out: once every rank has ended or stopped (this thread is
    /// then the lanes' only consumer), the messages that reached a rank after its end, for the
    /// run's warnings and report.
    pub fn leftover_messages(&self) -> Vec<(u32, Envelope, usize, Protocol)> {
        let mut out = Vec::new();
        for inbound in lock(&self.lanes).iter() {
            while let Some(packet) = inbound.lane.pop() {
                if let Packet::Message {
                    envelope,
                    payload,
                    protocol,
                    ..
                } = packet
                {
                    out.push((inbound.from, envelope, payload.len(), protocol));
                }
            }
        }
        out
    }

    /// Number of lanes registered so far.
    #[inline]
    pub fn lane_count(&self) -> usize {
        self.lane_count.load(Ordering::Acquire)
    }

    /// Copies the lanes the owner does not know yet into `known` (owner only).
    pub fn new_lanes_into(&self, known: &mut Vec<Inbound>) {
        let lanes = lock(&self.lanes);
        known.extend_from_slice(&lanes[known.len()..]);
    }

    /// After a sender pushed packets here: wakes the owner if it is parked, or finished (it
    /// then serves its peers until every rank has finished, `run::serve_until_all_done`).
    #[inline]
    pub fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.activity() != Activity::Running {
            self.wake();
        }
    }

    /// Unparks the owner (also used to end a run).
    pub fn wake(&self) {
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// Whether any lane holds a packet (a snapshot: for the watchdog).
    pub fn has_mail(&self) -> bool {
        lock(&self.lanes).iter().any(|i| i.lane.has_items())
    }

    /// Counts `n` packets taken in (owner only: a plain store, no locked instruction).
    #[inline]
    pub fn add_taken(&self, n: u64) {
        self.taken
            .store(self.taken.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// Publishes the owner's state (owner only). Going to `Parked`, the caller must look at the
    /// lanes again afterwards before it parks.
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
