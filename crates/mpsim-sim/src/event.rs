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
///
/// A one-event `front` sits before the heap: an event earlier than everything queued waits
/// there, so the common chain "an event makes the next event" (a message, then its receiver's
/// resume, then its next message) costs no heap operation. Invariant: `front`, when set, is
/// smaller than every key in the heap; `pop` therefore takes `front` first.
#[derive(Default)]
pub(crate) struct Queue {
    front: Option<(Key, Body)>,
    heap: BinaryHeap<Reverse<(Key, u32)>>,
    bodies: Vec<Option<Body>>,
    free: Vec<u32>,
}

impl Queue {
    pub fn push(&mut self, key: Key, body: Body) {
        let heap_min = self.heap.peek().map(|Reverse((k, _))| *k);
        match &self.front {
            None if heap_min.is_none_or(|m| key < m) => self.front = Some((key, body)),
            Some((front_key, _)) if key < *front_key => {
                let (k, b) = self.front.replace((key, body)).expect("front is set");
                self.push_heap(k, b);
            }
            _ => self.push_heap(key, body),
        }
    }

    fn push_heap(&mut self, key: Key, body: Body) {
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
        if let Some(front) = self.front.take() {
            return Some(front);
        }
        let Reverse((key, slot)) = self.heap.pop()?;
        // Invariant: every heap entry names a filled slot.
        let body = self.bodies[slot as usize].take().expect("event body");
        self.free.push(slot);
        Some((key, body))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Body, Key, Queue};

    fn key(time: u64, class: u8, creator: u32, n: u64) -> Key {
        Key {
            time,
            class,
            creator,
            n,
        }
    }

    proptest! {
        /// Pops come out in key order whatever the interleaving of pushes and pops (the front
        /// slot never lets a later event overtake an earlier one).
        #[test]
        fn queue_pops_in_key_order(ops in proptest::collection::vec((any::<bool>(), 0u64..20, 0u8..2, 0u32..4), 0..300)) {
            let mut q = Queue::default();
            let mut reference: Vec<Key> = Vec::new();
            for (n, (push, time, class, creator)) in ops.into_iter().enumerate() {
                if push {
                    let k = key(time, class, creator, n as u64);
                    q.push(k, Body::Resume { rank: creator });
                    reference.push(k);
                } else {
                    reference.sort();
                    let expected = (!reference.is_empty()).then(|| reference.remove(0));
                    prop_assert_eq!(q.pop().map(|(k, _)| k), expected);
                }
            }
            reference.sort();
            for k in reference {
                prop_assert_eq!(q.pop().map(|(k, _)| k), Some(k));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
