//! `--backend mpi` (the `mpi` cargo feature): this process is one rank of a run that `mpirun`
//! started, on the installed MPI library (`mpsim-mpi`). Rank and size come from MPI; a
//! configuration whose `ranks` disagrees with the number of processes is refused on every rank.
//!
//! A rank whose program fails prints its error (`mpsim: ...`, naming the rank and the call)
//! and ends the whole job with `MPI_Abort`, as MPI's default error handler does: the other
//! ranks may be waiting for it, and would otherwise hang. A deadlock (the backend's watchdog,
//! `mpsim-mpi`'s `watch.rs`) is known to every rank at once: rank 0 returns it with the report
//! of every rank, the others exit with status 1 without a word. A run that succeeds on every
//! rank returns `Ok` on every rank, after every rank finished.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use mpsim_mpi::{MpiRank, World};
use mpsim_proto::error::{Error, Result};

use super::config::{Backend, RunConfig};
use super::outputs::warn_ignored;
use crate::coll::policy::Policy;
use crate::comm::Comm;
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
    if rank == 0 {
        warn_ignored(&config.flags_only_for(Backend::Sim), "sim", "mpi");
        warn_ignored(&config.flags_only_for(Backend::Threads), "threads", "mpi");
        let unsupported: Vec<&str> = [
            (config.trace.is_some(), "--trace"),
            (
                config.report.is_some() || config.report_out.is_some(),
                "--report",
            ),
            (config.strict, "--strict"),
            (config.eager_threshold.is_some(), "--eager-threshold"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect();
        if !unsupported.is_empty() {
            eprintln!(
                "mpsim: warning: the mpi backend does not implement {} yet: ignored",
                unsupported.join(", ")
            );
        }
    }
    let policy = Arc::new(Policy::new(None, config.collectives));
    let runtime = Rc::new(world.rank()?);
    let shared: Rc<dyn RankRuntime> = Rc::clone(&runtime) as Rc<dyn RankRuntime>;
    let ended = run_one_with(shared, policy, &program).and_then(|()| runtime.finish());
    if let Err(e) = ended {
        if runtime.deadlocked() {
            // Every rank learnt it at the same round of the watchdog, and rank 0 has the
            // report: it returns the error (printed as on the other backends), the others end
            // without a word, all with a failure status, after MPI_Finalize.
            if rank == 0 {
                return Err(e);
            }
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
    print_warnings(&runtime);
    world.barrier()
}

/// The rank's warnings, on standard error.
fn print_warnings(runtime: &MpiRank) {
    let mut text = String::new();
    mpsim_sim::write_warnings(&mut text, "mpsim: warning: ", &runtime.take_warnings());
    eprint!("{text}");
}
