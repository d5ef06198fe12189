//! [`Stats`]: one rank's time counters while a simulation runs, kept small because a simulation
//! holds millions of ranks; the report's [`RankReport`] is made from them at the end, with the
//! traffic the rank's endpoint counted (`mpsim_proto::p2p::MessageCounts`: sent, received, and
//! what arrived and no receive took).
//!
//! Not stored: the rank (its index) and the final clock (the rank's clock).

use mpsim_proto::p2p::Endpoint;
use mpsim_proto::runtime::Payload;

use crate::report::RankReport;

/// Time counters of one rank (see the module doc).
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
}

impl Stats {
    /// The report of rank `rank` whose final clock is `clock_ns` and whose endpoint is
    /// `endpoint`.
    pub fn report(&self, rank: u32, clock_ns: u64, endpoint: &Endpoint<Payload>) -> RankReport {
        RankReport {
            rank,
            clock_ns,
            compute_ns: self.compute_ns,
            blocked_ns: self.blocked_ns,
            poll_ns: Some(self.poll_ns),
            overhead_ns: Some(self.overhead_ns),
            comm_ns: Some(
                self.blocked_ns
                    .saturating_add(self.poll_ns)
                    .saturating_add(self.overhead_ns),
            ),
            sent: endpoint.sent_counts().into(),
            received: endpoint.received_counts().into(),
            unreceived: endpoint.unreceived_counts().into(),
        }
    }
}
