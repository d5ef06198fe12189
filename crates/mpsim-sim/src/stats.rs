//! [`Stats`]: one rank's counters while a simulation runs, kept small because a simulation
//! holds millions of ranks; the report's [`RankReport`] is made from them at the end.
//!
//! Not stored: the rank (its index) and the final clock (the rank's clock). Message and byte
//! counts by protocol are 32-bit; the first count that would overflow moves all of the rank's
//! traffic to a boxed 64-bit block (`wide`), which then takes every later count. So counts are
//! exact whatever their size, and a rank pays for 64-bit counters only once it needs them.

use mpsim_proto::p2p::Protocol;

use crate::report::{RankReport, Traffic};

/// Counters of one rank (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    /// Time in `compute`, ns.
    pub compute_ns: u64,
    /// Time blocked in waits, ns.
    pub blocked_ns: u64,
    /// Time charged to polls that found nothing, ns.
    pub poll_ns: u64,
    /// Per-request CPU overhead put on the clock (X1), ns.
    pub overhead_ns: u64,
    sent: Narrow,
    received: Narrow,
    /// Sent and received traffic, once a 32-bit count would have overflowed.
    wide: Option<Box<[Traffic; 2]>>,
}

/// Messages and bytes by protocol, 32 bits each.
#[derive(Clone, Copy, Debug, Default)]
struct Narrow {
    messages: [u32; 4],
    bytes: [u32; 4],
}

impl Narrow {
    /// Counts a message unless a count would overflow (then changes nothing: false).
    #[inline]
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

    fn widen(&self) -> Traffic {
        Traffic {
            messages: self.messages.map(u64::from),
            bytes: self.bytes.map(u64::from),
        }
    }
}

impl Stats {
    /// Counts a message this rank sent.
    #[inline]
    pub fn sent(&mut self, protocol: Protocol, bytes: usize) {
        self.count(0, protocol, bytes);
    }

    /// Counts a message delivered to this rank.
    #[inline]
    pub fn received(&mut self, protocol: Protocol, bytes: usize) {
        self.count(1, protocol, bytes);
    }

    #[inline]
    fn count(&mut self, dir: usize, protocol: Protocol, bytes: usize) {
        let i = column(protocol);
        if let Some(wide) = self.wide.as_deref_mut() {
            wide[dir].add(i, bytes);
            return;
        }
        let narrow = if dir == 0 {
            &mut self.sent
        } else {
            &mut self.received
        };
        if !narrow.add(i, bytes) {
            self.widen_and_count(dir, i, bytes);
        }
    }

    #[cold]
    fn widen_and_count(&mut self, dir: usize, i: usize, bytes: usize) {
        let mut wide = [self.sent.widen(), self.received.widen()];
        wide[dir].add(i, bytes);
        self.wide = Some(Box::new(wide));
    }

    /// The report of rank `rank` whose final clock is `clock_ns`.
    pub fn report(&self, rank: u32, clock_ns: u64) -> RankReport {
        let [sent, received] = self
            .wide
            .as_deref()
            .copied()
            .unwrap_or_else(|| [self.sent.widen(), self.received.widen()]);
        RankReport {
            rank,
            clock_ns,
            compute_ns: self.compute_ns,
            blocked_ns: self.blocked_ns,
            poll_ns: self.poll_ns,
            overhead_ns: self.overhead_ns,
            comm_ns: self
                .blocked_ns
                .saturating_add(self.poll_ns)
                .saturating_add(self.overhead_ns),
            sent,
            received,
        }
    }
}

/// The [`Traffic`] column of a protocol (`report::PROTOCOLS`).
#[inline]
fn column(protocol: Protocol) -> usize {
    match protocol {
        Protocol::Eager => 0,
        Protocol::Buffered => 1,
        Protocol::Rendezvous => 2,
        Protocol::Ready => 3,
    }
}

impl Traffic {
    /// Counts a message in column `i` (saturating: 2^64 bytes is beyond any run).
    fn add(&mut self, i: usize, bytes: usize) {
        self.messages[i] = self.messages[i].saturating_add(1);
        self.bytes[i] = self.bytes[i].saturating_add(bytes as u64);
    }
}

#[cfg(test)]
mod tests {
    use mpsim_proto::p2p::Protocol;

    use super::Stats;

    /// Counts past 2^32 move to 64 bits without losing what was counted before.
    #[test]
    fn counts_widen_exactly_on_overflow() {
        let mut s = Stats::default();
        s.sent(Protocol::Eager, 8);
        s.received(Protocol::Ready, 3);
        s.sent(Protocol::Rendezvous, u32::MAX as usize);
        assert!(s.wide.is_none(), "u32::MAX bytes still fit");
        s.sent(Protocol::Rendezvous, 1);
        assert!(s.wide.is_some());
        s.sent(Protocol::Eager, 5_000_000_000);
        s.received(Protocol::Ready, 4);
        let r = s.report(7, 99);
        assert_eq!((r.rank, r.clock_ns), (7, 99));
        assert_eq!(r.sent.messages, [2, 0, 2, 0]);
        assert_eq!(r.sent.bytes, [5_000_000_008, 0, u32::MAX as u64 + 1, 0]);
        assert_eq!(r.received.messages, [0, 0, 0, 2]);
        assert_eq!(r.received.bytes, [0, 0, 0, 7]);
    }

    /// A byte count near 2^64 widens (the 32-bit sum must not wrap back into range).
    #[test]
    fn huge_byte_counts_widen() {
        let mut s = Stats::default();
        s.received(Protocol::Eager, 7);
        s.received(Protocol::Eager, usize::MAX);
        assert!(s.wide.is_some());
        assert_eq!(s.report(0, 0).received.messages[0], 2);
        assert_eq!(s.report(0, 0).received.bytes[0], u64::MAX);
    }

    /// A message count that would pass u32::MAX widens too.
    #[test]
    fn message_counts_widen() {
        let mut s = Stats::default();
        s.sent.messages[1] = u32::MAX;
        s.sent(Protocol::Buffered, 0);
        assert_eq!(s.report(0, 0).sent.messages[1], u32::MAX as u64 + 1);
    }
}
