//! [`RunConfig`]: everything a run is configured with, as plain data, and the choices it is
//! made of (backend, report format, the threads backend's waiting and binding).
//!
//! Why a type of its own: the run path ([`crate::Launcher::run`] and the backend modules beside
//! this one) reads only this, so a program configures a run the same way whether the flags
//! filled it (`LaunchArgs`, behind the `cli` feature) or its own code did, and a library user
//! without `clap` loses nothing. What is checked when: a model file is loaded when the flags
//! are converted (a model here is already loaded); the rest (no ranks, a trace window naming
//! ranks past the last) when a run starts, as an [`Error`](crate::Error).

use std::path::PathBuf;

use mpsim_proto::collective::AlgorithmChoices;
use mpsim_sim::{ComputeMode, Model, RankSet, TraceFilter};

/// The configuration of a run: what the flags every mpsim program understands carry, as plain
/// data (`LaunchArgs`, with the `cli` feature, fills one from the command line). Every field is
/// public; [`RunConfig::new`] gives the flags' defaults. [`Launcher`](crate::Launcher) runs a
/// program with one ([`Launcher::with_config`](crate::Launcher::with_config)), and its builder
/// methods set the same fields.
///
/// ```
/// use mpsim::{Backend, Comm, Launcher, RunConfig};
///
/// // Three ranks on threads, strict about ready sends: no command line involved.
/// let config = RunConfig {
///     backend: Backend::Threads,
///     strict: true,
///     ..RunConfig::new(3)
/// };
/// let ran = Launcher::with_config(config).run(|world: Comm| async move {
///     assert_eq!(world.size(), 3);
///     Ok(())
/// });
/// assert!(ran.is_ok());
/// ```
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Number of ranks (`--ranks`; a run needs at least 1).
    pub ranks: u32,
    /// Where the program runs (`--backend`).
    pub backend: Backend,
    /// The machine model the simulator uses (`--model`, loaded; [`Model::default_machine`] by
    /// default). Its `compute` is how the simulator charges computation between calls
    /// (`--compute` sets it); its eager threshold is the one `sim` uses unless
    /// [`RunConfig::eager_threshold`] gives one.
    pub model: Model,
    /// Standard sends up to this many bytes are eager (`--eager-threshold`), on either
    /// backend: under `sim` instead of the model's; without it, `sim` uses the model's and
    /// `threads` 64 KiB.
    pub eager_threshold: Option<usize>,
    /// Report an `rsend` that arrives before its receive is posted (`--strict`).
    pub strict: bool,
    /// A buffered send that does not fit in the attached buffer only returns
    /// [`Error::BufferOverflow`](crate::Error::BufferOverflow) to the program, which may
    /// attach a larger buffer and go on (MPI's `MPI_ERRORS_RETURN`), on `sim` and `threads`.
    /// Off by default: the error also ends the run, naming the send (`docs/p2p.md`
    /// P-bsend). The C door (`mpsim run`) turns it on and ends the run itself where a
    /// communicator's errors are fatal. Under `mpi` the MPI library decides.
    pub bsend_overflow_returns: bool,
    /// The collective algorithms the run names (`--coll allreduce=ring,bcast=binomial`), and
    /// whether reductions are reproducible (`--reproducible`), on every backend; under `sim`
    /// they come before the model file's `[collectives]` (`docs/collectives.md` §4); under
    /// `mpi` what they name runs mpsim's algorithms rather than MPI's own (§9), and
    /// `reproducible` keeps every collective on mpsim's.
    pub collectives: AlgorithmChoices,
    /// The report's format (`--report`): under `sim` there is always a report (text unless
    /// said, or JSON for a [`RunConfig::report_out`] ending in `.json`); under `threads` only
    /// when this or [`RunConfig::report_out`] asks for one.
    pub report: Option<ReportFormat>,
    /// Where the report goes instead of standard output (`--report-out`), written whole or not
    /// at all.
    pub report_out: Option<PathBuf>,
    /// Where the trace goes (`--trace`), in the format its name asks for
    /// ([`TraceFormat::for_path`](crate::TraceFormat::for_path)); none without it.
    pub trace: Option<PathBuf>,
    /// With a trace: trace from this time on (`--trace-from`; virtual ns under `sim`, host ns
    /// since the run's start under `threads`).
    pub trace_from_ns: Option<u64>,
    /// With a trace: trace up to this time, included (`--trace-to`).
    pub trace_to_ns: Option<u64>,
    /// With a trace: trace only these ranks (`--trace-ranks`).
    pub trace_ranks: Option<RankSet>,
    /// Under `sim`: threads to simulate on (`--sim-threads`; 1, sequential, by default; 0 is
    /// taken as 1). The outcome is the same whatever the number.
    pub sim_threads: u32,
    /// Under `sim`: stop with a livelock error once nothing but polls has run for this long
    /// of virtual time (`--livelock-after`; 1 s by default, 0 never).
    pub livelock_after_ns: u64,
    /// Under `sim`: how BSP programs' supersteps are timed (`--bsp-timing`); `None`: as the
    /// model's `[bsp] timing` says.
    pub bsp_timing: Option<mpsim_sim::BspTiming>,
    /// Under `threads`: how a rank waits for a message (`--wait`).
    pub wait: Wait,
    /// Under `threads`: whether rank threads are bound to cores (`--bind`).
    pub bind: Bind,
    /// Under `sim`: create the ranks' programs in this order (a permutation of the ranks).
    /// Results never depend on it; determinism tests use it to show that.
    pub spawn_order: Option<Vec<u32>>,
    /// The backend-specific flags the command line gave, as typed (`"--model"`,
    /// `"--wait"`, ...): a run on a backend that ignores one of them names it on standard
    /// error rather than seem to obey. Empty for a configuration made in code: what a program
    /// sets is its own business, not a flag to warn about. Only the flags of one backend
    /// count: `--model`, `--sim-threads`, `--compute`, `--livelock-after` (sim), `--wait`,
    /// `--bind` (threads).
    pub flags_given: Vec<&'static str>,
}

impl RunConfig {
    /// `ranks` ranks, simulated on the default machine model; every other field as the flags'
    /// defaults.
    pub fn new(ranks: u32) -> Self {
        RunConfig {
            ranks,
            backend: Backend::Sim,
            model: Model::default(),
            eager_threshold: None,
            strict: false,
            bsend_overflow_returns: false,
            collectives: AlgorithmChoices::default(),
            report: None,
            report_out: None,
            trace: None,
            trace_from_ns: None,
            trace_to_ns: None,
            trace_ranks: None,
            sim_threads: 1,
            livelock_after_ns: mpsim_sim::DEFAULT_LIVELOCK_AFTER_NS,
            bsp_timing: None,
            wait: Wait::Auto,
            bind: Bind::Auto,
            spawn_order: None,
            flags_given: Vec::new(),
        }
    }

    /// What the trace keeps (the trace window and ranks).
    pub(super) fn trace_filter(&self) -> TraceFilter {
        TraceFilter {
            from_ns: self.trace_from_ns.unwrap_or(0),
            to_ns: self.trace_to_ns.unwrap_or(u64::MAX),
            ranks: self.trace_ranks.clone(),
        }
    }

    /// The flags that choose what a trace keeps, given without a trace.
    pub(super) fn trace_flags_without_trace(&self) -> Vec<&'static str> {
        trace_flags_without_trace(
            self.trace.is_some(),
            [
                self.trace_from_ns.is_some(),
                self.trace_to_ns.is_some(),
                self.trace_ranks.is_some(),
            ],
        )
    }

    /// The flags given that only `backend` reads: a run on another backend says it ignores
    /// them.
    pub(super) fn flags_only_for(&self, backend: Backend) -> Vec<&'static str> {
        let only: &[Flag] = match backend {
            Backend::Sim => &SIM_ONLY,
            Backend::Threads => &THREADS_ONLY,
            Backend::Mpi => &[],
        };
        only.iter()
            .filter(|flag| self.flags_given.contains(&flag.typed))
            .map(|flag| flag.typed)
            .collect()
    }
}

/// Of the flags that choose what a trace keeps (`--trace-from`, `--trace-to`, `--trace-ranks`,
/// whether each was `given`), those that apply to nothing: all given, without a trace.
pub(super) fn trace_flags_without_trace(traced: bool, given: [bool; 3]) -> Vec<&'static str> {
    let flags = ["--trace-from", "--trace-to", "--trace-ranks"];
    given
        .into_iter()
        .zip(flags)
        .filter_map(|(given, flag)| (given && !traced).then_some(flag))
        .collect()
}

/// A flag of one backend: its `clap` id (the field's name in `LaunchArgs`) and how the user
/// types it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flag {
    /// The `clap` id.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(super) id: &'static str,
    /// As typed on the command line.
    pub(super) typed: &'static str,
}

/// The flags only the simulator reads: a run on threads ignores them.
pub(super) const SIM_ONLY: [Flag; 5] = [
    Flag {
        id: "model",
        typed: "--model",
    },
    Flag {
        id: "sim_threads",
        typed: "--sim-threads",
    },
    Flag {
        id: "compute",
        typed: "--compute",
    },
    Flag {
        id: "livelock_after",
        typed: "--livelock-after",
    },
    Flag {
        id: "bsp_timing",
        typed: "--bsp-timing",
    },
];

/// The flags only the threads backend reads: a simulated run ignores them.
pub(super) const THREADS_ONLY: [Flag; 2] = [
    Flag {
        id: "wait",
        typed: "--wait",
    },
    Flag {
        id: "bind",
        typed: "--bind",
    },
];

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Backend {
    /// Deterministic discrete-event simulation on a machine model: predicts run time, prints a
    /// report.
    Sim,
    /// One OS thread per rank, in this process.
    Threads,
    /// An installed MPI library: each process that `mpirun` starts is one rank (`mpirun -np N
    /// prog --backend mpi`). Only in a build with mpsim's `mpi` feature; elsewhere an error.
    Mpi,
}

/// How a rank of the threads backend waits for a message (`--wait`).
///
/// ```
/// use mpsim::{Backend, Comm, Launcher, Wait};
/// // Eight ranks passing a token, parked between messages whatever the host's cores.
/// let ran = Launcher::new(8)
///     .backend(Backend::Threads)
///     .wait(Wait::Park)
///     .run(|world: Comm| async move {
///         let (me, n) = (world.rank(), world.size());
///         let mut token = [0u8; 1];
///         if me == 0 {
///             world.send(&token, 1, 0).await?;
///             world.recv(&mut token, n - 1, 0).await?;
///         } else {
///             world.recv(&mut token, me - 1, 0).await?;
///             world.send(&token, (me + 1) % n, 0).await?;
///         }
///         Ok(())
///     });
/// assert!(ran.is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Wait {
    /// By ranks per core: `spin` when every rank has a core, `yield` with at most two ranks
    /// per core, `park` with more.
    Auto,
    /// Spin on the mailbox for a while, then park (for ranks that have a core each).
    Spin,
    /// Yield the core for up to 1 ms, then park.
    Yield,
    /// Yield a few times, then park.
    Park,
}

impl Wait {
    /// The threads backend's policy; `None` for `auto`.
    pub(super) fn policy(self) -> Option<mpsim_threads::WaitPolicy> {
        match self {
            Wait::Auto => None,
            Wait::Spin => Some(mpsim_threads::WaitPolicy::Spin),
            Wait::Yield => Some(mpsim_threads::WaitPolicy::Yield),
            Wait::Park => Some(mpsim_threads::WaitPolicy::Park),
        }
    }
}

/// Whether the threads backend binds rank threads to cores (`--bind`).
///
/// ```
/// use mpsim::{Backend, Bind, Comm, Launcher};
/// // Two ranks left wherever the OS puts them (for a machine shared with pinned jobs, say).
/// let ran = Launcher::new(2)
///     .backend(Backend::Threads)
///     .bind(Bind::None)
///     .run(|world: Comm| async move {
///         let peer = 1 - world.rank();
///         let mut got = [0u8; 1];
///         world.sendrecv(&[1u8], peer, 0, &mut got, peer, 0).await?;
///         Ok(())
///     });
/// assert!(ran.is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Bind {
    /// `cores` with up to two ranks per core, else `none`.
    Auto,
    /// Rank r of R runs only on every R-th core the process may use, from its r-th, so that
    /// no two ranks share a core; with fewer cores than ranks, on core r mod C of the C it
    /// may use.
    Cores,
    /// The OS places the ranks' threads.
    None,
}

impl Bind {
    /// The threads backend's binding; `None` for `auto`.
    pub(super) fn binding(self) -> Option<mpsim_threads::Binding> {
        match self {
            Bind::Auto => None,
            Bind::Cores => Some(mpsim_threads::Binding::Cores),
            Bind::None => Some(mpsim_threads::Binding::None),
        }
    }
}

/// The format of the end-of-run report (`--report`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ReportFormat {
    /// A table for people.
    Text,
    /// One JSON object for scripts.
    Json,
}

/// How the simulator charges computation between communication calls (`--compute`; in a
/// [`RunConfig`], the model's `compute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Compute {
    /// Only explicit `compute` / `compute_flops` calls advance the clock (deterministic).
    Modeled,
    /// Host CPU time of the program's own code also counts (not deterministic).
    Measured,
    /// Computation is free (communication-only studies).
    Ignored,
}

impl From<Compute> for ComputeMode {
    fn from(c: Compute) -> Self {
        match c {
            Compute::Modeled => ComputeMode::Modeled,
            Compute::Measured => ComputeMode::Measured,
            Compute::Ignored => ComputeMode::Ignored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, RunConfig};

    /// A configuration made in code names the flags it says were given that a backend
    /// ignores, and only those of the other backend; by default none.
    #[test]
    fn a_configuration_names_the_given_flags_of_the_other_backend() {
        let config = RunConfig {
            flags_given: vec!["--bind", "--compute", "--model", "--ranks"],
            ..RunConfig::new(2)
        };
        assert_eq!(
            config.flags_only_for(Backend::Sim),
            ["--model", "--compute"]
        );
        assert_eq!(config.flags_only_for(Backend::Threads), ["--bind"]);
        assert!(RunConfig::new(2).flags_only_for(Backend::Sim).is_empty());
    }

    /// The trace window and ranks without a trace are named, as ignored; with one, not.
    #[test]
    fn trace_settings_without_a_trace_are_named() {
        let config = RunConfig {
            trace_to_ns: Some(5),
            trace_ranks: Some("0".parse().expect("a rank list")),
            ..RunConfig::new(2)
        };
        assert_eq!(
            config.trace_flags_without_trace(),
            ["--trace-to", "--trace-ranks"]
        );
        let traced = RunConfig {
            trace: Some("t.json".into()),
            ..config
        };
        assert!(traced.trace_flags_without_trace().is_empty());
    }
}
