//! Launching a program: [`Launcher`] runs it on every rank as a [`RunConfig`] says, on the
//! backend the configuration names.
//!
//! Files, one concern each: `config.rs` the configuration as plain data; `cli.rs` (the `cli`
//! feature) the flags every mpsim program understands, which fill one, and [`run`]; `sim.rs`
//! and `threads.rs` a run on each backend; `outputs.rs` what they share: the report and trace
//! files, each written whole or not at all, and the warnings about flags a backend ignores.
//! [`Launcher::run`] checks what every backend needs, listens for signals and dispatches;
//! `mpi.rs` (the `mpi` feature) runs this process as one rank of an `mpirun` job, and a build
//! without the feature refuses `--backend mpi` there. A program's rank run in a process of its
//! own (one rank per process) is [`crate::rank::run_one`]'s.

#[cfg(feature = "cli")]
mod cli;
mod config;
#[cfg(feature = "mpi")]
mod mpi;
mod outputs;
mod sim;
mod threads;

use std::future::Future;
use std::path::PathBuf;

use mpsim_proto::error::{Error, Result};
use mpsim_sim::{Model, Outcome, RankSet, Report};

use crate::comm::Comm;
use crate::measured::{empty_report, threads_report};
use crate::signals;

#[cfg(feature = "cli")]
pub(crate) use cli::run_parsed;
#[cfg(feature = "cli")]
pub use cli::{LaunchArgs, run};
pub use config::{Backend, Bind, Compute, ReportFormat, RunConfig, Wait};
pub use outputs::TraceFormat;

/// Runs a program: set the ranks and backend, then [`Launcher::run`] (or
/// [`Launcher::simulate`] for the simulator's report as a value).
///
/// ```
/// use mpsim::{Backend, Comm, Launcher};
/// let ranks = Launcher::new(3)
///     .backend(Backend::Threads)
///     .run(|world: Comm| async move {
///         assert_eq!(world.size(), 3);
///         Ok(())
///     });
/// assert!(ranks.is_ok());
///
/// // The same program simulated: a report with the predicted time.
/// let outcome = Launcher::new(2).simulate(|world: Comm| async move {
///     if world.rank() == 0 {
///         world.ssend(&[1u8; 64], 1, 0).await?;
///     } else {
///         world.recv(&mut [0u8; 64], 0, 0).await?;
///     }
///     Ok(())
/// });
/// assert!(outcome.error.is_none() && outcome.report.predicted_ns() > 0);
/// ```
#[derive(Clone, Debug)]
pub struct Launcher {
    config: RunConfig,
}

impl Launcher {
    /// `ranks` ranks, simulated on the default machine model ([`RunConfig::new`]).
    pub fn new(ranks: u32) -> Self {
        Launcher::with_config(RunConfig::new(ranks))
    }

    /// Runs programs as `config` says; the builder methods below change it.
    pub fn with_config(config: RunConfig) -> Self {
        Launcher { config }
    }

    /// The configuration runs use.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// The machine model the simulator uses (default: [`Model::default_machine`], or the
    /// `--model` file with `--compute` applied). This replaces that model whole, `compute` mode
    /// included. Its eager threshold is the one `sim` uses unless
    /// [`Launcher::eager_threshold`] sets one.
    pub fn model(mut self, model: Model) -> Self {
        self.config.model = model;
        self
    }

    /// Creates the simulated ranks' programs in this order (a permutation of the ranks).
    /// Results never depend on it; determinism tests use it to show that.
    pub fn spawn_order(mut self, order: Vec<u32>) -> Self {
        self.config.spawn_order = Some(order);
        self
    }

    /// Chooses the backend.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.config.backend = backend;
        self
    }

    /// Sets the eager threshold of standard sends (`--eager-threshold`), on either backend:
    /// under `sim` it overrides the model's, whether set before or after [`Launcher::model`].
    /// Without it, `sim` uses the model's and `threads` 64 KiB.
    pub fn eager_threshold(mut self, bytes: usize) -> Self {
        self.config.eager_threshold = Some(bytes);
        self
    }

    /// Simulates on `n` threads (`--sim-threads`; 1, the default, is sequential). The outcome
    /// is the same whatever `n`.
    pub fn sim_threads(mut self, n: u32) -> Self {
        self.config.sim_threads = n.max(1);
        self
    }

    /// Under `sim`, stops a run with a livelock error once nothing but polls has run for `ns`
    /// of virtual time (`--livelock-after`; 1 s by default, 0 never).
    pub fn livelock_after_ns(mut self, ns: u64) -> Self {
        self.config.livelock_after_ns = ns;
        self
    }

    /// How ranks of the threads backend wait for messages (`--wait`; `Wait::Auto` by
    /// default).
    pub fn wait(mut self, wait: Wait) -> Self {
        self.config.wait = wait;
        self
    }

    /// Whether ranks of the threads backend are bound to cores (`--bind`; `Bind::Auto` by
    /// default).
    pub fn bind(mut self, bind: Bind) -> Self {
        self.config.bind = bind;
        self
    }

    /// Turns strict mode on (`rsend` checks).
    pub fn strict(mut self, on: bool) -> Self {
        self.config.strict = on;
        self
    }

    /// Whether a buffered send that does not fit in the attached buffer only returns
    /// `BufferOverflow` to the program rather than also ending the run
    /// ([`RunConfig::bsend_overflow_returns`]; off by default).
    ///
    /// ```
    /// use mpsim::{Comm, Error, Launcher};
    ///
    /// let ran = Launcher::new(2).bsend_overflow_returns(true).run(|world: Comm| async move {
    ///     if world.rank() == 0 {
    ///         world.buffer_attach(16)?;
    ///         // Too large for 16 bytes: the program gets the error and goes on.
    ///         let e = world.bsend(&[0u8; 100], 1, 0).await.expect_err("does not fit");
    ///         assert!(matches!(e, Error::BufferOverflow { .. }));
    ///         world.buffer_detach().await?;
    ///         world.buffer_attach(100 + mpsim::BSEND_OVERHEAD)?;
    ///         world.bsend(&[0u8; 100], 1, 0).await?;
    ///     } else {
    ///         let mut got = [0u8; 100];
    ///         world.recv(&mut got, 0, 0).await?;
    ///     }
    ///     Ok(())
    /// });
    /// assert!(ran.is_ok());
    /// ```
    pub fn bsend_overflow_returns(mut self, on: bool) -> Self {
        self.config.bsend_overflow_returns = on;
        self
    }

    /// The collective algorithms the run names, and whether reductions are reproducible
    /// (`--coll`, `--reproducible`; [`RunConfig::collectives`]).
    ///
    /// ```
    /// use mpsim::{AlgorithmChoices, Launcher, Op};
    /// let choices: AlgorithmChoices = "allreduce=ring".parse().unwrap();
    /// let outcome = Launcher::new(4).collectives(choices).simulate(|world| async move {
    ///     let mut sum = [0u64];
    ///     world.allreduce(&[1u64], &mut sum, &Op::sum()).await?;
    ///     assert_eq!(sum, [4]);
    ///     Ok(())
    /// });
    /// let line = &outcome.report.collectives[0];
    /// assert_eq!((line.algorithm, line.reason, line.calls), ("ring", "--coll", 1));
    /// ```
    pub fn collectives(mut self, choices: crate::AlgorithmChoices) -> Self {
        self.config.collectives = choices;
        self
    }

    /// Simulates `program` and returns the report with the run's first error, if any (the
    /// report then describes the run as of one lookahead after the error, `timing.md` S16 as
    /// amended by D2 of `docs/extensions.md`).
    pub fn simulate<F, Fut>(&self, program: F) -> Outcome
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        sim::simulate(&self.config, program)
    }

    /// Writes the report of [`Launcher::run`] to `path` instead of standard output
    /// (`--report-out`), under `sim` or `threads` (which then measures its ranks for it): in
    /// JSON when `path` ends in `.json`, else as text, unless `--report` chose. The file is
    /// written whole or not at all: beside `path`, then renamed over it.
    ///
    /// ```
    /// use mpsim::{Comm, Launcher};
    ///
    /// let path = std::env::temp_dir().join(format!("mpsim-doc-report-{}.json", std::process::id()));
    /// Launcher::new(2)
    ///     .report_out(&path)
    ///     .run(|world: Comm| async move {
    ///         let peer = 1 - world.rank();
    ///         let mut got = [0u8];
    ///         world.sendrecv(&[1u8], peer, 0, &mut got, peer, 0).await?;
    ///         Ok(())
    ///     })
    ///     .unwrap();
    /// let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    /// assert_eq!(json["backend"], "sim");
    /// assert_eq!(json["ranks"][1]["received"]["messages"][0], 1);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn report_out(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.report_out = Some(path.into());
        self
    }

    /// Asks for a trace written to `path` at the end of [`Launcher::run`], under `sim` or
    /// `threads` (and recorded in [`Outcome::trace`] by [`Launcher::simulate`]), in the
    /// format its name asks for ([`TraceFormat::for_path`]).
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.trace = Some(path.into());
        self
    }

    /// Traces from `ns` on (`--trace-from`): virtual time under `sim`, host time since the
    /// run's start under `threads`. Spans crossing the edge are clipped to it.
    ///
    /// ```
    /// use mpsim::{Comm, Launcher};
    /// use mpsim::sim::{TraceEvent, RankSet};
    ///
    /// // Rank 1 computes 10 us, then 10 us more; trace rank 1 from 15 us to 30 us.
    /// let outcome = Launcher::new(2)
    ///     .trace("unused.json")
    ///     .trace_from_ns(15_000)
    ///     .trace_to_ns(30_000)
    ///     .trace_ranks("1".parse::<RankSet>().unwrap())
    ///     .simulate(|world: Comm| async move {
    ///         world.compute(std::time::Duration::from_micros(10)).await;
    ///         world.compute(std::time::Duration::from_micros(10)).await;
    ///         Ok(())
    ///     });
    /// let trace = outcome.trace.unwrap();
    /// let spans: Vec<_> = trace.events().iter().map(|e| match *e {
    ///     TraceEvent::Span { rank, start_ns, end_ns, .. } => (rank, start_ns, end_ns),
    ///     TraceEvent::Message { .. } => unreachable!("no messages"),
    /// }).collect();
    /// assert_eq!(spans, [(1, 15_000, 20_000)]);
    /// ```
    pub fn trace_from_ns(mut self, ns: u64) -> Self {
        self.config.trace_from_ns = Some(ns);
        self
    }

    /// Traces up to `ns`, included (`--trace-to`; see [`Launcher::trace_from_ns`]).
    pub fn trace_to_ns(mut self, ns: u64) -> Self {
        self.config.trace_to_ns = Some(ns);
        self
    }

    /// Traces only these ranks (`--trace-ranks`): their spans and the messages they send or
    /// receive (see [`Launcher::trace_from_ns`]).
    pub fn trace_ranks(mut self, ranks: RankSet) -> Self {
        self.config.trace_ranks = Some(ranks);
        self
    }

    /// Runs `program` for real on the threads backend (whatever [`Launcher::backend`] says) and
    /// returns what each rank measured, with the run's first error if any: the real run's
    /// counterpart of [`Launcher::simulate`] (`--report` under `threads` prints it).
    ///
    /// The report is the simulator's type, [`Report`], with the same fields: those a real run
    /// cannot measure (events, compute mode, poll and overhead time) are `None`, and its
    /// `stopped` is the run's error.
    ///
    /// ```
    /// use mpsim::sim::TimeBase;
    /// use mpsim::{Comm, Launcher};
    ///
    /// let program = |world: Comm| async move {
    ///     let peer = 1 - world.rank();
    ///     let mut got = [0u8];
    ///     world.sendrecv(&[1u8], peer, 0, &mut got, peer, 0).await?;
    ///     Ok(())
    /// };
    /// let (measured, error) = Launcher::new(2).measure(program);
    /// assert!(error.is_none());
    /// assert_eq!((measured.backend, measured.time_base), ("threads", TimeBase::Host));
    /// assert_eq!(measured.ranks[0].sent.total_messages(), 1);
    /// assert!(measured.run_ns() > 0 && measured.ranks[0].comm_ns.is_none());
    /// // The prediction of the same program, field by field.
    /// let predicted = Launcher::new(2).simulate(program).report;
    /// assert_eq!(predicted.ranks[1].received, measured.ranks[1].received);
    /// ```
    pub fn measure<F, Fut>(&self, program: F) -> (Report, Option<Error>)
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        if let Some(e) = no_ranks(&self.config) {
            let report = Report {
                stopped: Some(e.to_string()),
                ..empty_report()
            };
            return (report, Some(e));
        }
        let (outcome, policy) = threads::run_threads(&self.config, program, true, None);
        let mut report = threads_report(&outcome);
        report.collectives = policy.lines();
        (report, outcome.error)
    }

    /// Runs `program` on every rank; returns the run's first error. Under `sim` the report is
    /// printed to standard output at the end, under `threads` when `--report` asks for it; to
    /// the file of [`Launcher::report_out`] instead when one is given. A report that cannot be
    /// written is an [`Error::Io`], the error returned when the trace was written and the run
    /// itself did not fail.
    ///
    /// The trace file is written whole or not at all: its temporary file is made beside it
    /// before the run (a path that cannot be written fails at once) and renamed over it once
    /// complete, so a run that fails, is stopped or fills the disk leaves the file that was
    /// there, or none, never a truncated one.
    ///
    /// While it runs, `SIGINT` (Ctrl-C) and `SIGTERM` stop it: under `sim` at the next 64
    /// events, on threads each rank at its next call; the report and trace of what ran until
    /// then are written, and the run ends with [`Error::Interrupted`] (which [`exit_code`](crate::exit_code)
    /// makes status 130 or 143, as a shell reports a process the signal ended). A second
    /// signal ends the process at once, leaving the trace's temporary file
    /// (`.NAME.XXXXXX.tmp`) beside it; a first one while the trace is being written stops
    /// the writing and leaves no trace. Outside runs the signals keep their default.
    pub fn run<F, Fut>(&self, program: F) -> Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        self.run_amended(program, &|_| {})
    }

    /// [`Launcher::run`], with `amend` applied to the report before it is written (the BSP
    /// layer adds its table of supersteps).
    pub(crate) fn run_amended<F, Fut>(&self, program: F, amend: &dyn Fn(&mut Report)) -> Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        let config = &self.config;
        if let Some(e) = no_ranks(config) {
            return Err(e);
        }
        outputs::warn_trace_flags_ignored(&config.trace_flags_without_trace());
        if config.trace.is_some() {
            config
                .trace_filter()
                .check(config.ranks)
                .map_err(|what| Error::InvalidArgument { what })?;
        }
        // From here to the end of the outputs, a first signal stops the run, not the process
        // (listening before the trace file is made: a signal that finds its temporary file
        // finds the run listening).
        let listening = signals::listen();
        let interrupt = listening.as_ref().map(|l| l.interrupt().clone());
        match config.backend {
            Backend::Sim => sim::run(config, program, interrupt, amend),
            Backend::Threads => threads::run(config, program, interrupt.as_ref(), amend),
            #[cfg(feature = "mpi")]
            Backend::Mpi => mpi::run(config, program),
            #[cfg(not(feature = "mpi"))]
            Backend::Mpi => Err(Error::Unsupported {
                what: "this build has no mpi backend: build with mpsim's `mpi` feature (cargo \
                       build --release --features mpsim/mpi, which needs an MPI library and \
                       libclang) and launch with mpirun; or use --backend threads"
                    .into(),
            }),
        }
    }
}

impl From<RunConfig> for Launcher {
    fn from(config: RunConfig) -> Self {
        Launcher::with_config(config)
    }
}

/// The error of a configuration with no ranks, which no backend can run.
fn no_ranks(config: &RunConfig) -> Option<Error> {
    (config.ranks == 0).then(|| Error::InvalidArgument {
        what: "a run needs at least 1 rank".into(),
    })
}
