//! Events and their order (`spec/timing.md` §5, S10).
//!
//! The key `(time, class, creator, n)` orders every event independently of host order: class 0
//! for packet deliveries (messages, acks), 1 for a rank resuming its program; `creator` is the
//! rank that made the event; `n` counts the events that creator has made. Bodies live in a slab
//! so the heap moves 24-byte keys, not packets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use mpsim_proto::p2p::Packet;
use mpsim_proto::runtime::Payload;

/// The class of packet deliveries (seen first at equal times).
pub(crate) const DELIVERY: u8 = 0;
/// The class of rank resumptions.
pub(crate) const RESUME: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    pub time: u64,
    pub class: u8,
    pub creator: u32,
    pub n: u64,
}

pub(crate) enum Body {
    Deliver {
        from: u32,
        to: u32,
        packet: Packet<Payload>,
    },
    Resume {
        rank: u32,
    },
}

/// A priority queue of events by key.
#[derive(Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Reverse<(Key, u32)>>,
    bodies: Vec<Option<Body>>,
    free: Vec<u32>,
}

impl Queue {
    pub fn push(&mut self, key: Key, body: Body) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.bodies[i as usize] = Some(body);
                i
            }
            None => {
                self.bodies.push(Some(body));
                u32::try_from(self.bodies.len() - 1).expect("fewer than 2^32 events in flight")
            }
        };
        self.heap.push(Reverse((key, slot)));
    }

    pub fn pop(&mut self) -> Option<(Key, Body)> {
        let Reverse((key, slot)) = self.heap.pop()?;
        // Invariant: every heap entry names a filled slot.
        let body = self.bodies[slot as usize].take().expect("event body");
        self.free.push(slot);
        Some((key, body))
    }
}
