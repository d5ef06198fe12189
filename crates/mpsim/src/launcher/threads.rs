//! `--backend threads`: a real run on the threads backend (`mpsim-threads`), one OS thread per
//! rank in this process, measured for a report when one is asked for, and its trace.
//!
//! As the simulator does, a run that is about to exhaust the host's memory stops with an error
//! rather than be killed without a word; a signal stops it too. Both are looked at by the
//! backend's watchdog ([`mpsim_threads::run_watched`]) and stop each rank at its next call.

use std::future::Future;
use std::sync::Arc;

use mpsim_proto::error::{Error, Result};
use mpsim_proto::interrupt::Interrupt;
use mpsim_proto::p2p::Config;
use mpsim_sim::MemoryWatch;

use super::config::{Backend, RunConfig};
use super::outputs::{Outputs, warn_ignored};
use crate::coll::policy::Policy;
use crate::comm::Comm;
use crate::measured::threads_report;
use crate::progress::driven;
use crate::runtime::Rt;

/// Runs `program` on threads as `config` says, stopped when `interrupt` is raised: writes the
/// report if one is asked for and the trace, and returns the run's first error, else the
/// report's or trace's.
pub(super) fn run<F, Fut>(
    config: &RunConfig,
    program: F,
    interrupt: Option<&Interrupt>,
    amend: &dyn Fn(&mut mpsim_sim::Report),
) -> Result<()>
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let mut outputs = Outputs::open(config)?;
    warn_ignored(&config.flags_only_for(Backend::Sim), "sim", "threads");
    let (outcome, policy) = run_threads(config, program, outputs.report.is_some(), interrupt);
    if outputs.report.is_none() && outcome.error.is_none() {
        // No report to hold them: the warnings go where a user looks anyway. Those of a
        // failed run (messages in flight when it stopped, say) only in a report: its error
        // says why they were not received.
        let mut text = String::new();
        mpsim_sim::write_warnings(&mut text, "mpsim: warning: ", &outcome.warnings);
        eprint!("{text}");
    }
    let printed = outputs.report.map_or(Ok(()), |format| {
        let mut report = threads_report(&outcome);
        report.collectives = policy.lines();
        amend(&mut report);
        outputs.write_report(&report, format)
    });
    outputs.write_trace(outcome.trace.as_ref(), interrupt)?;
    outcome.into_result().and(printed)
}

/// `program` on the threads backend (at least 1 rank), measured for a report when `measure`,
/// with a trace when `config` asks for one; stopped when `interrupt` is raised. With the run's
/// collective policy, which holds the report's collectives table.
pub(super) fn run_threads<F, Fut>(
    config: &RunConfig,
    program: F,
    measure: bool,
    interrupt: Option<&Interrupt>,
) -> (mpsim_threads::Outcome, Arc<Policy>)
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let defaults = Config::default();
    let protocol = Config {
        eager_threshold: config.eager_threshold.unwrap_or(defaults.eager_threshold),
        system_buffer: None,
        strict_ready: config.strict,
        bsend_overflow_returns: config.bsend_overflow_returns,
        ..defaults
    };
    let options = mpsim_threads::Options {
        ranks: config.ranks,
        config: protocol,
        trace: config.trace.is_some(),
        trace_filter: config.trace_filter(),
        measure,
        wait: config.wait.policy(),
        bind: config.bind.binding(),
    };
    // As the simulator does: a run that is about to exhaust the host's memory stops with an
    // error rather than be killed without a word. Its ranks are real threads, which stop at
    // their next call: one that only computes may still be killed, so the reason is said at
    // once too.
    let mut memory = MemoryWatch::new(None);
    let ranks = config.ranks;
    let mut check = || {
        if let Some(signal) = interrupt.and_then(Interrupt::raised) {
            eprintln!(
                "mpsim: {signal}: stopping the run (each rank stops at its next mpsim call; \
                 its trace and report are written then; a second {signal} quits at once)"
            );
            return Some(Error::Interrupted {
                signal,
                time_ns: None,
            });
        }
        let shortage = memory.poll()?;
        eprintln!(
            "mpsim: {shortage}: stopping the run (each rank stops at its next mpsim call; one \
             that only computes may still be killed by the system)"
        );
        Some(shortage.error(ranks, ""))
    };
    let policy = Arc::new(Policy::new(None, config.collectives));
    let outcome = mpsim_threads::run_watched(
        &options,
        |rt| driven(Rt::Threads(rt), Arc::clone(&policy), &program),
        &mut check,
    );
    (outcome, policy)
}
