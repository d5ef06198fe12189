//! What an endpoint counts of its traffic: the messages it sent and those its receives took,
//! by protocol ([`MessageCounts`]), for the end-of-run report of every backend.
//!
//! Counted where the protocol decides: a message when its send starts (`make_send`), a receive
//! when a message is matched to it (`complete_recv`, an `mrecv` included; a probe takes
//! nothing). A simulator holds millions of endpoints, so the counts are kept small while they
//! run ([`Tally`]): 32 bits each, moved whole to a boxed 64-bit block the first time one would
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

    /// Messages of every protocol.
    pub fn total_messages(&self) -> u64 {
        self.messages.iter().fold(0, |a, &m| a.saturating_add(m))
    }

    /// Bytes of every protocol.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().fold(0, |a, &b| a.saturating_add(b))
    }
}

/// The sent and received counts of one endpoint while it runs (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    sent: Narrow,
    received: Narrow,
    /// Sent and received counts, once a 32-bit count would have overflowed.
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

/// Which count: what the endpoint sent, or what its receives took.
const SENT: usize = 0;
const RECEIVED: usize = 1;

impl Tally {
    /// Counts a message sent.
    #[inline(always)]
    pub fn sent(&mut self, protocol: Protocol, bytes: usize) {
        self.count(SENT, protocol, bytes);
    }

    /// Counts a message a receive took.
    #[inline(always)]
    pub fn received(&mut self, protocol: Protocol, bytes: usize) {
        self.count(RECEIVED, protocol, bytes);
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
            &mut self.received
        };
        if !narrow.add(i, bytes) {
            self.widen_and_count(dir, i, bytes);
        }
    }

    #[cold]
    #[inline(never)]
    fn widen_and_count(&mut self, dir: usize, i: usize, bytes: usize) {
        let mut wide = [self.sent.widen(), self.received.widen()];
        wide[dir].add_at(i, bytes);
        self.wide = Some(Box::new(wide));
    }

    /// `(sent, received)`.
    pub fn counts(&self) -> (MessageCounts, MessageCounts) {
        let [sent, received] = self
            .wide
            .as_deref()
            .copied()
            .unwrap_or_else(|| [self.sent.widen(), self.received.widen()]);
        (sent, received)
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
        s.received(Protocol::Ready, 3);
        s.sent(Protocol::Rendezvous, u32::MAX as usize);
        assert!(s.wide.is_none(), "u32::MAX bytes still fit");
        s.sent(Protocol::Rendezvous, 1);
        assert!(s.wide.is_some());
        s.sent(Protocol::Eager, 5_000_000_000);
        s.received(Protocol::Ready, 4);
        let (sent, received) = s.counts();
        assert_eq!(sent.messages, [2, 0, 2, 0]);
        assert_eq!(sent.bytes, [5_000_000_008, 0, u32::MAX as u64 + 1, 0]);
        assert_eq!(received.messages, [0, 0, 0, 2]);
        assert_eq!(received.bytes, [0, 0, 0, 7]);
    }

    /// A byte count near 2^64 widens (the 32-bit sum must not wrap back into range).
    #[test]
    fn huge_byte_counts_widen() {
        let mut s = Tally::default();
        s.received(Protocol::Eager, 7);
        s.received(Protocol::Eager, usize::MAX);
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
