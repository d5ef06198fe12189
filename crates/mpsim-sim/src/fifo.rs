//! FIFO channels (`docs/timing.md` §5): a message's arrival is
//! `max(recv_ts, arrival of the previous message on its channel (from, to))`, and cancel
//! traffic goes behind the channel's last message.
//!
//! Why not one map of every channel: the kernel asks on every message sent and delivered, and
//! a hash lookup each time is a visible part of what a simulated message costs. Most ranks
//! have messages in flight to one peer at a time (rings, pipelines, ping-pong), so each rank
//! keeps its latest channel inline, in its state ([`LastSend`]); only the channels of a rank
//! with messages in flight to several peers at once go to a map ([`Channels`]).
//!
//! An arrival at or before the global time `now` is *spent*: every later send or cancel on its
//! channel happens at some `t >= now` (a rank acts at its clock, which is `now`, plus what it
//! owes, X1), and a message sent at `t` arrives after `t` (delays are `> 0`), so a spent
//! arrival decides nothing and is the same as none. That is why the inline slot is never
//! cleared, and may be taken for another peer once spent.
//!
//! Invariants:
//! - a channel `(from, to)` is in the map only while `from`'s slot names another peer;
//! - the latest arrival of a channel is its slot's (when the slot names it), else its map
//!   entry, else spent; the map drops an entry when the message it times is delivered.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

/// A rank's latest channel: the peer it last took the slot for and the latest arrival of a
/// message it sent there. 12 bytes (packed to 4-byte alignment, so that it costs the rank's
/// state 8 bytes, not 16); its fields are read and written by value only.
#[derive(Clone, Copy, Debug)]
#[repr(C, packed(4))]
pub(crate) struct LastSend {
    arrival: u64,
    to: u32,
}

impl Default for LastSend {
    /// No channel (arrival 0 is spent at every time).
    fn default() -> Self {
        LastSend {
            arrival: 0,
            to: u32::MAX,
        }
    }
}

/// The channels not held in their sender's [`LastSend`], with the latest arrival of each
/// (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Channels {
    others: FxHashMap<(u32, u32), u64>,
    /// Channels in `others` after the last [`Channels::prune`].
    pruned_len: usize,
}

impl Channels {
    /// The arrival of a message sent by `from` (whose slot is `slot`) to `to`, received at
    /// `recv_ts` unless an earlier message on the channel arrives later; `now` is the global
    /// time (the send's time is at or after it). Inlined: once per simulated message.
    #[inline(always)]
    pub fn arrival(
        &mut self,
        slot: &mut LastSend,
        from: u32,
        to: u32,
        recv_ts: u64,
        now: u64,
    ) -> u64 {
        if slot.to == to {
            let arrival = recv_ts.max(slot.arrival);
            slot.arrival = arrival;
            return arrival;
        }
        if slot.arrival <= now {
            // The slot's channel is spent: it holds this one from now on (out of the map).
            let before = self.take(from, to);
            let arrival = before.map_or(recv_ts, |b| recv_ts.max(b));
            *slot = LastSend { arrival, to };
            return arrival;
        }
        self.arrival_in_map(from, to, recv_ts)
    }

    /// The channel's latest arrival, where the slot is busy with another peer.
    #[cold]
    fn arrival_in_map(&mut self, from: u32, to: u32, recv_ts: u64) -> u64 {
        let last = self.others.entry((from, to)).or_insert(recv_ts);
        *last = recv_ts.max(*last);
        *last
    }

    /// Removes the channel from the map, returning its latest arrival.
    #[inline]
    fn take(&mut self, from: u32, to: u32) -> Option<u64> {
        if self.others.is_empty() {
            return None;
        }
        self.others.remove(&(from, to))
    }

    /// The latest arrival on channel `(from, to)`, `None` when nothing on it is in flight
    /// (or only spent arrivals are known).
    pub fn last(&self, slot: &LastSend, from: u32, to: u32) -> Option<u64> {
        if slot.to == to {
            Some(slot.arrival)
        } else {
            self.others.get(&(from, to)).copied()
        }
    }

    /// Forgets channels whose last message arrived by `now`, the earliest time any rank of
    /// this map can send again: a later message arrives after `now` anyway, so they no longer
    /// bear on any arrival. For a parallel run's partitions, whose receivers are in other
    /// partitions and cannot call [`Channels::delivered`]; a sweep of the map once it has
    /// doubled since the last one.
    pub fn prune(&mut self, now: u64) {
        if self.others.len() > 2 * self.pruned_len.max(32) {
            self.others.retain(|_, last| *last > now);
            self.pruned_len = self.others.len();
        }
    }

    /// Whether any channel is in the map: when none is, a delivery has nothing to forget
    /// (`delivered`), and the kernel need not look up the sender's slot.
    #[inline]
    pub fn any_in_map(&self) -> bool {
        !self.others.is_empty()
    }

    /// A message on `(from, to)` (whose sender's slot is `slot`) was delivered at `t`: when
    /// it was the channel's latest, the map forgets the channel (every later message is sent
    /// after `t` and arrives after it). A slot needs nothing: its arrival is now spent.
    #[inline]
    pub fn delivered(&mut self, slot: &LastSend, from: u32, to: u32, t: u64) {
        if slot.to == to || self.others.is_empty() {
            return;
        }
        if let Entry::Occupied(last) = self.others.entry((from, to))
            && *last.get() <= t
        {
            last.remove();
        }
    }

    /// Channels held in the map (for tests).
    #[cfg(test)]
    fn in_map(&self) -> usize {
        self.others.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::{Channels, LastSend};

    /// The rule as a plain map of every channel with a message in flight (the kernel's
    /// bookkeeping before [`LastSend`]).
    #[derive(Default)]
    struct Reference {
        last: HashMap<(u32, u32), u64>,
    }

    impl Reference {
        fn arrival(&mut self, from: u32, to: u32, recv_ts: u64) -> u64 {
            let last = self.last.entry((from, to)).or_insert(recv_ts);
            *last = recv_ts.max(*last);
            *last
        }

        fn delivered(&mut self, from: u32, to: u32, t: u64) {
            if self.last.get(&(from, to)).is_some_and(|&l| l <= t) {
                self.last.remove(&(from, to));
            }
        }
    }

    /// A run: the global time advances, messages are delivered in arrival order as it
    /// reaches them, and ranks send (at `now` plus up to 3 ns owed) with delays of 1..=20 ns.
    /// Every arrival and every cancel's time (`max(t, last)`) agrees with the plain map.
    fn check(ranks: u32, ops: &[(u8, u32, u32, u64)]) -> Result<(), TestCaseError> {
        let mut slots = vec![LastSend::default(); ranks as usize];
        let mut channels = Channels::default();
        let mut reference = Reference::default();
        let mut in_flight: Vec<(u64, u32, u32)> = Vec::new();
        let mut now = 0;
        for &(op, from, to, n) in ops {
            let (from, to) = (from % ranks, to % ranks);
            let t = now + n % 4;
            match op % 3 {
                0 => {
                    // Time passes; messages arriving at the new `now` are delivered now or
                    // (as events of the same time may come first) later.
                    now += n % 8;
                    let bound = if n & 8 != 0 { now + 1 } else { now };
                    in_flight.sort();
                    while in_flight.first().is_some_and(|m| m.0 < bound) {
                        let (at, f, d) = in_flight.remove(0);
                        channels.delivered(&slots[f as usize], f, d, at);
                        reference.delivered(f, d, at);
                    }
                }
                1 => {
                    let recv_ts = t + 1 + n % 20;
                    let a = channels.arrival(&mut slots[from as usize], from, to, recv_ts, now);
                    prop_assert_eq!(a, reference.arrival(from, to, recv_ts));
                    in_flight.push((a, from, to));
                }
                _ => {
                    let fast = channels.last(&slots[from as usize], from, to);
                    let slow = reference.last.get(&(from, to)).copied();
                    prop_assert_eq!(fast.map_or(t, |l| t.max(l)), slow.map_or(t, |l| t.max(l)));
                }
            }
            prop_assert!(channels.in_map() <= reference.last.len());
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn fifo_arrivals_match_a_map_of_every_channel(
            ranks in 1u32..5,
            ops in proptest::collection::vec((0u8..3, 0u32..5, 0u32..5, 0u64..64), 0..200),
        ) {
            check(ranks, &ops)?;
        }
    }

    /// A ring's pattern (each rank sends to one peer) never touches the map.
    #[test]
    fn one_peer_at_a_time_needs_no_map() {
        let mut slot = LastSend::default();
        let mut channels = Channels::default();
        for now in 0..100 {
            let a = channels.arrival(&mut slot, 0, 1, now + 10, now);
            assert_eq!(a, now + 10);
            channels.delivered(&slot, 0, 1, a);
        }
        // A second peer while the first is in flight goes to the map, and leaves it at its
        // delivery.
        let a = channels.arrival(&mut slot, 0, 2, 105, 100);
        assert_eq!((a, channels.in_map()), (105, 1));
        channels.delivered(&slot, 0, 2, 105);
        assert_eq!(channels.in_map(), 0);
        assert_eq!(size_of::<LastSend>(), 12);
    }
}
