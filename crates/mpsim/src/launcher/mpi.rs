//! `--backend mpi` (the `mpi` cargo feature): this process is one rank of a run that `mpirun`
//! started, on the installed MPI library (`mpsim-mpi`). Rank and size come from MPI; a
//! configuration whose `ranks` disagrees with the number of processes is refused on every rank.
//!
//! A rank whose program fails prints its error (`mpsim: ...`, naming the rank and the call)
//! and ends the whole job with `MPI_Abort`, as MPI's default error handler does: the other
//! ranks may be waiting for it, and would otherwise hang. A deadlock (the backend's watchdog,
//! `mpsim-mpi`'s `watch.rs`) is known to every rank at once: rank 0 prints it with the report
//! of every rank, then every process exits with status 1 (after `MPI_Finalize`). A run that
//! succeeds on every rank returns `Ok` on every rank, after every rank finished.
//!
//! `--report` and `--trace`: each rank measures itself in host time (`mpsim-mpi`'s
//! `measure.rs`); at the end rank 0 gathers the measurements over the control communicator
//! and writes the report (the threads backend's, built by the same code, named `mpi`) and the
//! trace (the same writers). A run that fails writes neither.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use mpsim_mpi::{MpiRank, World};
use mpsim_proto::error::{Error, Result};

use super::config::{Backend, RunConfig};
use mpsim_threads::{MeasuredWait, RankFigures};

use super::outputs::{Outputs, warn_ignored};
use crate::coll::policy::Policy;
use crate::comm::Comm;
use crate::measured::threads_report;
use crate::rank::{RankRuntime, run_one_with};

/// Runs `program` as this process's rank.
pub(super) fn run<F, Fut>(config: &RunConfig, program: F) -> Result<()>
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let world = World::init()?;
    let (rank, size) = world.rank_size();
    if config.ranks != size {
        return Err(Error::InvalidArgument {
            what: format!(
                "the run asks for {} ranks (--ranks), but mpirun started {size} processes: \
                 under --backend mpi each process is a rank (leave --ranks out, or give \
                 mpirun's -np)",
                config.ranks
            ),
        });
    }
    // Rank 0 writes the report and the trace: their files are started there before the run
    // (a path that cannot be written fails at once, on rank 0, which ends the job).
    let mut outputs = None;
    if rank == 0 {
        warn_ignored(&config.flags_only_for(Backend::Sim), "sim", "mpi");
        warn_ignored(&config.flags_only_for(Backend::Threads), "threads", "mpi");
        let unsupported: Vec<&str> = [
            (config.strict, "--strict"),
            (config.eager_threshold.is_some(), "--eager-threshold"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect();
        if !unsupported.is_empty() {
            eprintln!(
                "mpsim: warning: the mpi backend does not implement {} (MPI's protocols are \
                 the library's): ignored",
                unsupported.join(", ")
            );
        }
        outputs = match Outputs::open(config) {
            Ok(o) => Some(o),
            Err(e) => world.fail(&e, 1),
        };
    }
    let measuring = config.trace.is_some() || report_asked(config);
    let policy = Arc::new(Policy::new(None, config.collectives));
    let mut rank_runtime = world.rank()?;
    if measuring {
        rank_runtime.measure(config.trace.is_some());
    }
    let runtime = Rc::new(rank_runtime);
    let shared: Rc<dyn RankRuntime> = Rc::clone(&runtime) as Rc<dyn RankRuntime>;
    let ended = run_one_with(shared, Arc::clone(&policy), &program).and_then(|()| runtime.finish());
    if let Err(e) = ended {
        if runtime.deadlocked() {
            // Every rank learnt it at the same round of the watchdog, and rank 0 has the
            // report: it prints it (as the other backends' error reads), then every process
            // ends with status 1 once rank 0 has (the barrier: a process that ends with a
            // failure makes mpirun end the others, which could cut rank 0's report off).
            // No report or trace is written.
            if rank == 0 {
                eprintln!("mpsim: {e}");
                use std::io::Write;
                let _ = std::io::stderr().flush();
            }
            let _ = world.barrier();
            drop(runtime);
            drop(world);
            std::process::exit(1);
        }
        let code = match e {
            Error::Abort { code, .. } => code,
            _ => 1,
        };
        world.fail(&e, code);
    }
    let Some(end) = runtime.take_end() else {
        print_warnings(&runtime);
        return world.barrier();
    };
    // Every rank has finished (the watchdog's last round): the measurements to rank 0.
    let ends = world.gather_ends(&end)?;
    let (Some(ends), Some(mut outputs)) = (ends, outputs) else {
        return world.barrier();
    };
    let printed = outputs.report.map_or(Ok(()), |format| {
        let mut report = mpi_report(&ends);
        report.collectives = policy.lines();
        outputs.write_report(&report, format)
    });
    let trace = config
        .trace
        .is_some()
        .then(|| mpsim_mpi::merge_trace(&ends).filtered(config.trace_filter()));
    let traced = outputs.write_trace(trace.as_ref(), None);
    world.barrier()?;
    traced.and(printed)
}

/// Whether `config` asks for a report (`--report`, `--report-out`).
fn report_asked(config: &RunConfig) -> bool {
    config.report.is_some() || config.report_out.is_some()
}

/// The report of a run whose ranks measured `ends`: the threads backend's, of the same
/// figures (host time), under the name `mpi`.
fn mpi_report(ends: &[mpsim_mpi::RankEnd]) -> mpsim_sim::Report {
    let mut longest: Vec<MeasuredWait> = ends
        .iter()
        .enumerate()
        .flat_map(|(rank, e)| {
            e.longest.iter().map(move |w| MeasuredWait {
                rank: rank as u32,
                call: w.call,
                since_ns: w.since_ns,
                waited_ns: w.waited_ns,
                awaited: w.awaited,
            })
        })
        .collect();
    longest.sort_by_key(|w| (std::cmp::Reverse(w.waited_ns), w.since_ns, w.rank));
    let outcome = mpsim_threads::Outcome {
        error: None,
        trace: None,
        finish_ns: ends.iter().map(|e| e.finish_ns).collect(),
        ranks: ends
            .iter()
            .map(|e| RankFigures {
                compute_ns: e.compute_ns,
                blocked_ns: e.blocked_ns,
                sent: e.sent,
                received: e.received,
                unreceived: e.unreceived,
            })
            .collect(),
        longest_waits: longest,
        warnings: ends
            .iter()
            .flat_map(|e| e.warnings.iter().cloned())
            .collect(),
    };
    mpsim_sim::Report {
        backend: "mpi",
        ..threads_report(&outcome)
    }
}

/// The rank's warnings, on standard error.
fn print_warnings(runtime: &MpiRank) {
    let mut text = String::new();
    mpsim_sim::write_warnings(&mut text, "mpsim: warning: ", &runtime.take_warnings());
    eprint!("{text}");
}
