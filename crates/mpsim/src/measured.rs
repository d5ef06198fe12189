//! The report of a real run (`--report` under `threads`, [`Launcher::measure`]): what each
//! rank did in host time, as the same [`Report`] the simulator gives, so that a prediction
//! reads beside the run it predicts, field by field.
//!
//! Made from what the threads backend measured (`mpsim_threads::Options::measure`): each
//! rank's time in compute and blocked in waits and its longest waits, which name what they
//! waited for when they were on one request; and the traffic its endpoint counted by protocol
//! (sent, received, and arrived but never received). A real run has no events and charges no
//! poll or request overhead: those fields are `None`.
//!
//! [`Launcher::measure`]: crate::Launcher::measure

use mpsim_proto::deadlock;
use mpsim_sim::{RankReport, Report, TimeBase, WaitReport};

/// The backend a real run's report names.
const BACKEND: &str = "threads";

// Each rank keeps as many of its longest waits as the report lists.
const _: () = assert!(mpsim_threads::LONGEST_WAITS >= mpsim_sim::TOP_WAITS);

/// The report of a threads run from its outcome.
pub(crate) fn threads_report(outcome: &mpsim_threads::Outcome) -> Report {
    let ranks = outcome
        .ranks
        .iter()
        .enumerate()
        .map(|(rank, f)| RankReport {
            rank: rank as u32,
            clock_ns: outcome.finish_ns.get(rank).copied().unwrap_or(0),
            compute_ns: f.compute_ns,
            blocked_ns: f.blocked_ns,
            poll_ns: None,
            overhead_ns: None,
            comm_ns: None,
            sent: f.sent.into(),
            received: f.received.into(),
            unreceived: f.unreceived.into(),
        })
        .collect();
    let top_waits = outcome
        .longest_waits
        .iter()
        .take(mpsim_sim::TOP_WAITS)
        .map(|w| WaitReport {
            rank: w.rank,
            call: w.call,
            since_ns: w.since_ns,
            waited_ns: w.waited_ns,
            waiting_for: w.awaited.map(|(call, peer, tag, context)| {
                deadlock::waiting_for(call, peer, tag, context).0
            }),
        })
        .collect();
    Report {
        ranks,
        top_waits,
        stopped: outcome.error.as_ref().map(ToString::to_string),
        warnings: outcome.warnings.clone(),
        ..empty_report()
    }
}

/// The report of a real run that measured nothing (it could not start): no ranks.
pub(crate) fn empty_report() -> Report {
    Report {
        backend: BACKEND,
        time_base: TimeBase::Host,
        events: None,
        compute: None,
        ..Report::default()
    }
}
