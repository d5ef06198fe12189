//! What an endpoint counts of its traffic: the messages it sent and those its receives took,
//! by protocol ([`MessageCounts`]), for the end-of-run report of every backend.
//!
//! Counted by the driver where it moves messages anyway (`Endpoint::count_sent` as it
//! transmits one, `Endpoint::count_arrived` as it hands one to the endpoint): the same
//! increment made inside the endpoint's inlined send and packet code cost a simulated message
//! 12 more instructions in all, in registers it took from the code around it. What receives
//! took is worked out at the end, as what arrived less what no receive took: the messages
//! still waiting in the matching engine and those a matched probe holds
//! (`Endpoint::received_counts`); a message withdrawn by its sender's cancel no longer counts
//! as arrived. So a message costs one count where it arrives, and the completion of a receive
//! (inlined into every receive call) carries no counting code at all: counted there, it cost
//! the ring's receives 9 more instructions each, in registers.
//!
//! A simulator holds millions of endpoints, so the counts are kept small while they run
//! ([`Tally`]): 32 bits each, moved whole to a boxed 64-bit block the first time one would
//! overflow, which then takes every later count. Counts are exact whatever their size.

use super::packet::Protocol;

/// Messages and bytes by protocol, indexed by [`Protocol::index`] (eager, buffered,
/// rendezvous, ready).
///
/// ```
/// use mpsim_proto::p2p::{MessageCounts, Protocol};
/// let mut c = MessageCounts::default();
/// c.add(Protocol::Rendezvous, 100);
/// assert_eq!((c.messages[2], c.bytes[2]), (1, 100));
/// assert_eq!((c.total_messages(), c.total_bytes()), (1, 100));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageCounts {
    /// Message counts by protocol.
    pub messages: [u64; 4],
    /// Byte counts by protocol.
    pub bytes: [u64; 4],
}

impl MessageCounts {
    /// Counts a message of `bytes` bytes sent by `protocol` (saturating: 2^64 bytes is beyond
    /// any run).
    pub fn add(&mut self, protocol: Protocol, bytes: usize) {
        self.add_at(protocol.index(), bytes);
    }

    fn add_at(&mut self, i: usize, bytes: usize) {
        self.messages[i] = self.messages[i].saturating_add(1);
        self.bytes[i] = self.bytes[i].saturating_add(bytes as u64);
    }

    /// These counts less `other`'s (which they include).
    pub(crate) fn minus(&self, other: &MessageCounts) -> MessageCounts {
        MessageCounts {
            messages: std::array::from_fn(|i| self.messages[i].saturating_sub(other.messages[i])),
            bytes: std::array::from_fn(|i| self.bytes[i].saturating_sub(other.bytes[i])),
        }
    }

    /// Messages of every protocol.
    pub fn total_messages(&self) -> u64 {
        self.messages.iter().fold(0, |a, &m| a.saturating_add(m))
    }

    /// Bytes of every protocol.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().fold(0, |a, &b| a.saturating_add(b))
    }
}

/// The sent and arrived counts of one endpoint while it runs (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    sent: Narrow,
    arrived: Narrow,
    /// Sent and arrived counts, once a 32-bit count would have overflowed.
    wide: Option<Box<[MessageCounts; 2]>>,
}

/// Messages and bytes by protocol, 32 bits each.
#[derive(Clone, Copy, Debug, Default)]
struct Narrow {
    messages: [u32; 4],
    bytes: [u32; 4],
}

impl Narrow {
    /// Counts a message unless a count would overflow (then changes nothing: false).
    #[inline(always)]
    fn add(&mut self, i: usize, bytes: usize) -> bool {
        let m = u64::from(self.messages[i]) + 1;
        // Cannot wrap while `bytes` fits 32 bits, and the test below rejects it otherwise.
        let b = u64::from(self.bytes[i]).wrapping_add(bytes as u64);
        if (m | b | bytes as u64) > u64::from(u32::MAX) {
            return false;
        }
        // Both fit: checked just above.
        self.messages[i] = m as u32;
        self.bytes[i] = b as u32;
        true
    }

    fn widen(&self) -> MessageCounts {
        MessageCounts {
            messages: self.messages.map(u64::from),
            bytes: self.bytes.map(u64::from),
        }
    }
}

/// Which count: what the endpoint sent, or what arrived for it.
const SENT: usize = 0;
const ARRIVED: usize = 1;

impl Tally {
    /// Counts a message sent.
    #[inline(always)]
    pub fn sent(&mut self, protocol: Protocol, bytes: usize) {
        self.count(SENT, protocol, bytes);
    }

    /// Counts a message that arrived.
    #[inline(always)]
    pub fn arrived(&mut self, protocol: Protocol, bytes: usize) {
        self.count(ARRIVED, protocol, bytes);
    }

    /// Takes back the count of a message that arrived and was then withdrawn (its sender
    /// cancelled it): it was never there for a receive.
    pub fn withdrawn(&mut self, protocol: Protocol, bytes: usize) {
        let i = protocol.index();
        if let Some(wide) = self.wide.as_deref_mut() {
            let w = &mut wide[ARRIVED];
            w.messages[i] = w.messages[i].saturating_sub(1);
            w.bytes[i] = w.bytes[i].saturating_sub(bytes as u64);
        } else {
            // Counted when it arrived: these counts include it (32 bits held it then).
            let n = &mut self.arrived;
            n.messages[i] = n.messages[i].saturating_sub(1);
            n.bytes[i] = n.bytes[i].saturating_sub(bytes.try_into().unwrap_or(u32::MAX));
        }
    }

    #[inline(always)]
    fn count(&mut self, dir: usize, protocol: Protocol, bytes: usize) {
        let i = protocol.index();
        if let Some(wide) = self.wide.as_deref_mut() {
            wide[dir].add_at(i, bytes);
            return;
        }
        let narrow = if dir == SENT {
            &mut self.sent
        } else {
            &mut self.arrived
        };
        if !narrow.add(i, bytes) {
            self.widen_and_count(dir, i, bytes);
        }
    }

    #[cold]
    #[inline(never)]
    fn widen_and_count(&mut self, dir: usize, i: usize, bytes: usize) {
        let mut wide = [self.sent.widen(), self.arrived.widen()];
        wide[dir].add_at(i, bytes);
        self.wide = Some(Box::new(wide));
    }

    /// `(sent, arrived)`.
    pub fn counts(&self) -> (MessageCounts, MessageCounts) {
        let [sent, arrived] = self
            .wide
            .as_deref()
            .copied()
            .unwrap_or_else(|| [self.sent.widen(), self.arrived.widen()]);
        (sent, arrived)
    }
}

#[cfg(test)]
mod tests {
    use super::{Protocol, Tally};

    /// Counts past 2^32 move to 64 bits without losing what was counted before.
    #[test]
    fn counts_widen_exactly_on_overflow() {
        let mut s = Tally::default();
        s.sent(Protocol::Eager, 8);
        s.arrived(Protocol::Ready, 3);
        s.sent(Protocol::Rendezvous, u32::MAX as usize);
        assert!(s.wide.is_none(), "u32::MAX bytes still fit");
        s.sent(Protocol::Rendezvous, 1);
        assert!(s.wide.is_some());
        s.sent(Protocol::Eager, 5_000_000_000);
        s.arrived(Protocol::Ready, 4);
        s.withdrawn(Protocol::Ready, 3);
        let (sent, arrived) = s.counts();
        assert_eq!(sent.messages, [2, 0, 2, 0]);
        assert_eq!(sent.bytes, [5_000_000_008, 0, u32::MAX as u64 + 1, 0]);
        assert_eq!(arrived.messages, [0, 0, 0, 1]);
        assert_eq!(arrived.bytes, [0, 0, 0, 4]);
    }

    /// A withdrawn message is taken back from narrow counts too.
    #[test]
    fn withdrawn_messages_are_taken_back() {
        let mut s = Tally::default();
        s.arrived(Protocol::Eager, 10);
        s.arrived(Protocol::Eager, 5);
        s.withdrawn(Protocol::Eager, 10);
        assert_eq!(s.counts().1.messages, [1, 0, 0, 0]);
        assert_eq!(s.counts().1.bytes, [5, 0, 0, 0]);
    }

    /// A byte count near 2^64 widens (the 32-bit sum must not wrap back into range).
    #[test]
    fn huge_byte_counts_widen() {
        let mut s = Tally::default();
        s.arrived(Protocol::Eager, 7);
        s.arrived(Protocol::Eager, usize::MAX);
        assert!(s.wide.is_some());
        assert_eq!(s.counts().1.messages[0], 2);
        assert_eq!(s.counts().1.bytes[0], u64::MAX);
    }

    /// A message count that would pass u32::MAX widens too.
    #[test]
    fn message_counts_widen() {
        let mut s = Tally::default();
        s.sent.messages[1] = u32::MAX;
        s.sent(Protocol::Buffered, 0);
        assert_eq!(s.counts().0.messages[1], u32::MAX as u64 + 1);
    }
}
