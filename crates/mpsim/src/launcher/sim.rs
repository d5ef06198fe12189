//! `--backend sim`: a run on the simulator (`mpsim-sim`), every rank in this process, and its
//! report (always) and trace.
//!
//! With the `cli` feature a progress bar shows on standard error while it runs (virtual time
//! reached, events per second, ranks done; indicatif draws nothing when standard error is not
//! a terminal); without it the run is silent until its report.

use std::future::Future;
use std::sync::Arc;

use mpsim_proto::error::{Error, Result};
use mpsim_proto::interrupt::Interrupt;
use mpsim_sim::Outcome;

use super::config::{Backend, ReportFormat, RunConfig};
use super::outputs::{Outputs, warn_ignored};
use crate::coll::policy::Policy;
use crate::comm::Comm;
use crate::progress::driven;
use crate::runtime::Rt;

/// Runs `program` simulated as `config` says, stopped when `interrupt` is raised: writes the
/// report (unless the run could not start) and the trace, and returns the run's first error,
/// else the report's or trace's.
pub(super) fn run<F, Fut>(
    config: &RunConfig,
    program: F,
    interrupt: Option<Interrupt>,
    amend: &dyn Fn(&mut mpsim_sim::Report),
) -> Result<()>
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let mut outputs = Outputs::open(config)?;
    warn_ignored(&config.flags_only_for(Backend::Threads), "threads", "sim");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if config.sim_threads as usize > cores {
        eprintln!(
            "mpsim: --sim-threads {} on {cores} cores: threads beyond the cores give the same \
             results more slowly",
            config.sim_threads
        );
    }
    let listened = interrupt.clone();
    let mut outcome = simulate_shown(config, program, interrupt);
    amend(&mut outcome.report);
    if let Some(Error::Interrupted { signal, .. }) = &outcome.error {
        eprintln!(
            "mpsim: {signal}: the run stopped; writing its report and trace of what ran until \
             then (a second {signal} quits at once)"
        );
    }
    // A run that could not start (its error says why) has nothing to report.
    let started = !outcome.report.ranks.is_empty();
    let format = outputs.report.unwrap_or(ReportFormat::Text);
    let printed = if started {
        outputs.write_report(&outcome.report, format)
    } else {
        Ok(())
    };
    outputs.write_trace(outcome.trace.as_ref(), listened.as_ref())?;
    outcome.error.map_or(printed, Err)
}

/// Simulates `program` as `config` says and returns the report with the run's first error
/// ([`crate::Launcher::simulate`]).
pub(super) fn simulate<F, Fut>(config: &RunConfig, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let options = options(config);
    let policy = Arc::new(Policy::new(Some(&options.model), config.collectives));
    let program = |rt| driven(Rt::Sim(rt), Arc::clone(&policy), &program);
    let mut outcome = mpsim_sim::simulate(&options, &program);
    outcome.report.collectives = policy.lines();
    outcome
}

/// [`simulate`], stopped when `interrupt` is raised, with a progress bar on standard error
/// under the `cli` feature.
fn simulate_shown<F, Fut>(config: &RunConfig, program: F, interrupt: Option<Interrupt>) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let options = mpsim_sim::Options {
        interrupt,
        ..options(config)
    };
    let policy = Arc::new(Policy::new(Some(&options.model), config.collectives));
    let program = |rt| driven(Rt::Sim(rt), Arc::clone(&policy), &program);
    #[cfg(feature = "cli")]
    {
        let bar = indicatif::ProgressBar::new_spinner();
        let ranks = config.ranks;
        let mut observe = |p: mpsim_sim::Progress| {
            let secs = bar.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "virtual time {:.6} s | {} events | {:.0} events/s | {}/{ranks} ranks done",
                p.virtual_ns as f64 / 1e9,
                p.events,
                p.events as f64 / secs,
                p.finished
            ));
            bar.tick();
        };
        let mut outcome = mpsim_sim::simulate_observed(&options, &program, &mut observe);
        bar.finish_and_clear();
        outcome.report.collectives = policy.lines();
        outcome
    }
    #[cfg(not(feature = "cli"))]
    {
        let mut outcome = mpsim_sim::simulate(&options, &program);
        outcome.report.collectives = policy.lines();
        outcome
    }
}

/// What the simulator is given: the model, with `config`'s eager threshold if it has one.
fn options(config: &RunConfig) -> mpsim_sim::Options {
    let mut model = config.model.clone();
    if let Some(bytes) = config.eager_threshold {
        model.eager_threshold = bytes;
    }
    mpsim_sim::Options {
        ranks: config.ranks,
        model,
        strict: config.strict,
        bsend_overflow_returns: config.bsend_overflow_returns,
        spawn_order: config.spawn_order.clone(),
        trace: config.trace.is_some(),
        trace_filter: config.trace_filter(),
        memory_floor: None,
        workers: config.sim_threads.max(1),
        livelock_after_ns: config.livelock_after_ns,
        interrupt: None,
    }
}
