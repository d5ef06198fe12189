//! Launching a program: the flags every mpsim program understands, and the backend choice.

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};
use mpsim_proto::error::{Error, Result};
use mpsim_proto::p2p::Config;
use mpsim_sim::{ComputeMode, MemoryWatch, Model, ModelFile, ModelFileError, Outcome, Report};

use crate::comm::Comm;
use crate::measured::{empty_report, threads_report};
use crate::output::{exit_code, write_stdout};

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// Deterministic discrete-event simulation on a machine model: predicts run time, prints a
    /// report.
    Sim,
    /// One OS thread per rank, in this process.
    Threads,
    /// An installed MPI library via `mpirun` (not in this build yet).
    Mpi,
}

/// The flags of every mpsim program (flatten into your own `clap` parser to add yours).
#[derive(Clone, Debug, Args)]
pub struct LaunchArgs {
    /// Number of ranks (at least 1).
    #[arg(long, short = 'n', default_value_t = 4, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks: u32,
    /// Where to run the program.
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
    /// Standard sends up to this many bytes (`65536`, `64KiB`) are eager (complete without a
    /// matching receive) [default: under sim the model's `eager_threshold`, under threads
    /// 64KiB]. Overrides the model's when given.
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = mpsim_sim::units::size_bytes_usize)]
    pub eager_threshold: Option<usize>,
    /// Report an rsend that arrives before its receive is posted (ReadyNotPosted).
    #[arg(long)]
    pub strict: bool,
    /// Under sim: how computation between calls is charged [default: the model's `mode`,
    /// `modeled` for the embedded model]. Overrides the model file's mode when given.
    #[arg(long, value_enum)]
    pub compute: Option<Compute>,
    /// Under sim: the machine model, a model.toml, a directory holding one, or `default` (the
    /// model compiled in; `mpsim model show default` prints it). Its eager threshold is the
    /// one sim uses unless `--eager-threshold` is given.
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// The end-of-run report, on standard output unless `--report-out` names a file: under sim
    /// the prediction [default: text], under threads what each rank measured in host time
    /// (only when asked for, by this flag or `--report-out`). Both are the same report, with
    /// the same fields; one a backend cannot measure is `-` in text, `null` in JSON.
    #[arg(long, value_enum)]
    pub report: Option<ReportFormat>,
    /// Write the report to FILE instead of standard output, which then carries the program's
    /// own output alone. The file is written whole or not at all (beside FILE, then renamed
    /// over it). Without `--report`, the format is json when FILE ends in `.json`, else text.
    #[arg(long, value_name = "FILE")]
    pub report_out: Option<PathBuf>,
    /// Write a trace of every rank's compute, blocking waits and messages as Chrome trace-event
    /// JSON (open it in Perfetto or chrome://tracing; draw it with `mpsim plot`): in virtual
    /// time under sim, in host time since the run's start under threads.
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// Under `sim`: threads to simulate on, each running a block of ranks; the report and
    /// trace are the same whatever the number. Pays off for wide exchanges of many ranks; a
    /// token ring runs no faster, and a ping-pong between two blocks 3-11x slower (each
    /// message ends a round, and a round costs a hand-over between cores). At most 1024.
    #[arg(long, default_value_t = 1, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=i64::from(mpsim_sim::MAX_WORKERS)))]
    pub sim_threads: u32,
    /// Under `sim`: stop with a livelock error a run in which, for this long of virtual time,
    /// nothing but polls ran (no message in flight, every unfinished rank blocked or polling:
    /// a `test` loop for a message never sent); `0` never stops one. Written as times in model
    /// files: `500ms`, `2s`.
    #[arg(long, value_name = "TIME", default_value = "1s", allow_hyphen_values = true, value_parser = mpsim_sim::units::time_ns)]
    pub livelock_after: u64,
    /// Under `threads`: how a rank waits for a message. `auto` spins when every rank has a
    /// core, yields its core for up to 1 ms and then parks with at most two ranks per core,
    /// and parks after a few yields with more.
    #[arg(long, value_enum, default_value_t = Wait::Auto)]
    pub wait: Wait,
    /// Under `threads`: whether rank threads are bound to cores. `auto` binds them with up to
    /// two ranks per core: with a core per rank, rank r of R runs on every R-th core the
    /// process may use, from its r-th (no two spinning ranks share a core); with more ranks,
    /// on core r mod C (the same ranks share a core in every run). `none` leaves placement to
    /// the OS.
    #[arg(long, value_enum, default_value_t = Bind::Auto)]
    pub bind: Bind,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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
    fn policy(self) -> Option<mpsim_threads::WaitPolicy> {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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
    fn binding(self) -> Option<mpsim_threads::Binding> {
        match self {
            Bind::Auto => None,
            Bind::Cores => Some(mpsim_threads::Binding::Cores),
            Bind::None => Some(mpsim_threads::Binding::None),
        }
    }
}

/// The format of the end-of-run report (`--report`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A table for people.
    Text,
    /// One JSON object for scripts.
    Json,
}

/// How the simulator charges computation between communication calls (`--compute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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

impl LaunchArgs {
    /// The flags given that only the simulator reads (`--model`, `--sim-threads`, `--compute`,
    /// `--livelock-after`): a run on threads says it ignores them rather than seem to obey.
    fn sim_only_flags(&self) -> Vec<&'static str> {
        let given = [
            (self.model.is_some(), "--model"),
            (self.sim_threads != 1, "--sim-threads"),
            (self.compute.is_some(), "--compute"),
            (
                self.livelock_after != mpsim_sim::DEFAULT_LIVELOCK_AFTER_NS,
                "--livelock-after",
            ),
        ];
        given
            .into_iter()
            .filter_map(|(given, flag)| given.then_some(flag))
            .collect()
    }
}

#[derive(Parser)]
#[command(
    about = "An mpsim program: simulated on a machine model (default) or run for real on threads."
)]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

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
    args: LaunchArgs,
    model: Model,
    spawn_order: Option<Vec<u32>>,
}

impl Launcher {
    /// `ranks` ranks, simulated on the default machine model.
    pub fn new(ranks: u32) -> Self {
        Launcher {
            args: LaunchArgs {
                ranks,
                backend: Backend::Sim,
                eager_threshold: None,
                strict: false,
                compute: None,
                model: None,
                report: None,
                report_out: None,
                trace: None,
                sim_threads: 1,
                livelock_after: mpsim_sim::DEFAULT_LIVELOCK_AFTER_NS,
                wait: Wait::Auto,
                bind: Bind::Auto,
            },
            model: Model::default(),
            spawn_order: None,
        }
    }

    /// From parsed flags: loads `--model` if given (else the embedded default model), then
    /// applies `--compute` if given (`--eager-threshold`, if given, is applied at each run, to
    /// whatever model the launcher then has). A model file that does not load is an error
    /// naming its file and line.
    pub fn try_from_args(args: LaunchArgs) -> std::result::Result<Self, ModelFileError> {
        let mut model = match &args.model {
            Some(path) => ModelFile::open(path)?.model,
            None => Model::default(),
        };
        if let Some(compute) = args.compute {
            model.compute = compute.into();
        }
        Ok(Launcher {
            args,
            model,
            spawn_order: None,
        })
    }

    /// From parsed flags, like [`Launcher::try_from_args`]; but, like `clap`'s own parsing of
    /// bad flags, a `--model` that does not load ends the process: it prints the error on one
    /// line to standard error and exits with status 1.
    pub fn from_args(args: LaunchArgs) -> Self {
        Launcher::try_from_args(args).unwrap_or_else(|e| {
            eprintln!("mpsim: {e}");
            std::process::exit(1)
        })
    }

    /// The machine model the simulator uses (default: [`Model::default_machine`], or the
    /// `--model` file with `--compute` applied). This replaces that model whole, `compute` mode
    /// included. Its eager threshold is the one `sim` uses unless
    /// [`Launcher::eager_threshold`] sets one.
    pub fn model(mut self, model: Model) -> Self {
        self.model = model;
        self
    }

    /// Creates the simulated ranks' programs in this order (a permutation of the ranks).
    /// Results never depend on it; determinism tests use it to show that.
    pub fn spawn_order(mut self, order: Vec<u32>) -> Self {
        self.spawn_order = Some(order);
        self
    }

    /// Chooses the backend.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.args.backend = backend;
        self
    }

    /// Sets the eager threshold of standard sends (`--eager-threshold`), on either backend:
    /// under `sim` it overrides the model's, whether set before or after [`Launcher::model`].
    /// Without it, `sim` uses the model's and `threads` 64 KiB.
    pub fn eager_threshold(mut self, bytes: usize) -> Self {
        self.args.eager_threshold = Some(bytes);
        self
    }

    /// Simulates on `n` threads (`--sim-threads`; 1, the default, is sequential). The outcome
    /// is the same whatever `n`.
    pub fn sim_threads(mut self, n: u32) -> Self {
        self.args.sim_threads = n.max(1);
        self
    }

    /// Under `sim`, stops a run with a livelock error once nothing but polls has run for `ns`
    /// of virtual time (`--livelock-after`; 1 s by default, 0 never).
    pub fn livelock_after_ns(mut self, ns: u64) -> Self {
        self.args.livelock_after = ns;
        self
    }

    /// How ranks of the threads backend wait for messages (`--wait`; `Wait::Auto` by
    /// default).
    pub fn wait(mut self, wait: Wait) -> Self {
        self.args.wait = wait;
        self
    }

    /// Whether ranks of the threads backend are bound to cores (`--bind`; `Bind::Auto` by
    /// default).
    pub fn bind(mut self, bind: Bind) -> Self {
        self.args.bind = bind;
        self
    }

    /// Turns strict mode on (`rsend` checks).
    pub fn strict(mut self, on: bool) -> Self {
        self.args.strict = on;
        self
    }

    /// Simulates `program` and returns the report with the run's first error, if any (the
    /// report then describes the run as of one lookahead after the error, `timing.md` S16 as
    /// amended by D2 of `crates/mpsim-sim/EXTENSIONS.md`).
    pub fn simulate<F, Fut>(&self, program: F) -> Outcome
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        let program = |rt| program(Comm::world(rt));
        mpsim_sim::simulate(&self.sim_options(), &program)
    }

    /// [`Launcher::simulate`] with a progress bar on standard error (virtual time reached, events
    /// per second, ranks done); indicatif draws nothing when standard error is not a terminal.
    fn simulate_with_progress_bar<F, Fut>(&self, program: F) -> Outcome
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        let bar = indicatif::ProgressBar::new_spinner();
        let ranks = self.args.ranks;
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
        let options = self.sim_options();
        let program = |rt| program(Comm::world(rt));
        let outcome = mpsim_sim::simulate_observed(&options, &program, &mut observe);
        bar.finish_and_clear();
        outcome
    }

    /// What the simulator is given: the model, with the eager threshold of
    /// [`Launcher::eager_threshold`] if one was set.
    fn sim_options(&self) -> mpsim_sim::Options {
        let mut model = self.model.clone();
        if let Some(bytes) = self.args.eager_threshold {
            model.eager_threshold = bytes;
        }
        mpsim_sim::Options {
            ranks: self.args.ranks,
            model,
            strict: self.args.strict,
            spawn_order: self.spawn_order.clone(),
            trace: self.args.trace.is_some(),
            memory_floor: None,
            workers: self.args.sim_threads,
            livelock_after_ns: self.args.livelock_after,
        }
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
        self.args.report_out = Some(path.into());
        self
    }

    /// The report's format and destination, if `run` makes one on `backend`: under `sim`
    /// always (text by default), under `threads` when `--report` or `--report-out` asks.
    fn report_target(&self) -> Option<(ReportFormat, Option<&Path>)> {
        let out = self.args.report_out.as_deref();
        let format = self.args.report.or_else(|| {
            out.map(|path| {
                if path.extension().is_some_and(|e| e == "json") {
                    ReportFormat::Json
                } else {
                    ReportFormat::Text
                }
            })
        });
        match self.args.backend {
            Backend::Sim => Some((format.unwrap_or(ReportFormat::Text), out)),
            Backend::Threads | Backend::Mpi => format.map(|f| (f, out)),
        }
    }

    /// Asks for a trace written to `path` at the end of [`Launcher::run`], under `sim` or
    /// `threads` (and recorded in [`Outcome::trace`] by [`Launcher::simulate`]).
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.args.trace = Some(path.into());
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
        if let Some(e) = self.no_ranks() {
            let report = Report {
                stopped: Some(e.to_string()),
                ..empty_report()
            };
            return (report, Some(e));
        }
        let outcome = self.run_threads(program, true);
        (threads_report(&outcome), outcome.error)
    }

    /// The error of a launcher with no ranks, which no backend can run.
    fn no_ranks(&self) -> Option<Error> {
        (self.args.ranks == 0).then(|| Error::InvalidArgument {
            what: "a run needs at least 1 rank".into(),
        })
    }

    /// `program` on the threads backend (at least 1 rank), measured for a report when
    /// `measure`, with a trace when `--trace` asks for one.
    fn run_threads<F, Fut>(&self, program: F, measure: bool) -> mpsim_threads::Outcome
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        let defaults = Config::default();
        let config = Config {
            eager_threshold: self
                .args
                .eager_threshold
                .unwrap_or(defaults.eager_threshold),
            system_buffer: None,
            strict_ready: self.args.strict,
            ..defaults
        };
        let options = mpsim_threads::Options {
            ranks: self.args.ranks,
            config,
            trace: self.args.trace.is_some(),
            measure,
            wait: self.args.wait.policy(),
            bind: self.args.bind.binding(),
        };
        // As the simulator does: a run that is about to exhaust the host's memory stops with
        // an error rather than be killed without a word. Its ranks are real threads, which
        // stop at their next call: one that only computes may still be killed, so the reason
        // is said at once too.
        let mut memory = MemoryWatch::new(None);
        let ranks = self.args.ranks;
        let mut check = || {
            let shortage = memory.poll()?;
            eprintln!(
                "mpsim: {shortage}: stopping the run (each rank stops at its next mpsim call; \
                 one that only computes may still be killed by the system)"
            );
            Some(shortage.error(ranks, ""))
        };
        mpsim_threads::run_watched(&options, |rt| program(Comm::world(rt)), &mut check)
    }

    /// Runs `program` on every rank; returns the run's first error. Under `sim` the report is
    /// printed to standard output at the end, under `threads` when `--report` asks for it; to
    /// the file of [`Launcher::report_out`] instead when one is given. A report that cannot be
    /// written is an [`Error::Io`], the error returned when the trace was written and the run
    /// itself did not fail.
    pub fn run<F, Fut>(&self, program: F) -> Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        if let Some(e) = self.no_ranks() {
            return Err(e);
        }
        // The trace's file is made now: a path it cannot be written to is an error before
        // the run, not after hours of simulation.
        let trace_file = match self.args.backend {
            Backend::Mpi => None,
            Backend::Threads | Backend::Sim => self.create_trace_file()?,
        };
        // Likewise the report's file, made beside its target now and renamed over it once
        // written.
        let report = self.report_target();
        let report_file = match (self.args.backend, report) {
            (Backend::Threads | Backend::Sim, Some((_, Some(path)))) => {
                Some(ReportFile::create(path)?)
            }
            _ => None,
        };
        match self.args.backend {
            Backend::Threads => {
                let ignored = self.args.sim_only_flags();
                if !ignored.is_empty() {
                    eprintln!(
                        "mpsim: {} only apply under --backend sim: ignored under threads",
                        ignored.join(", ")
                    );
                }
                let outcome = self.run_threads(program, report.is_some());
                if report.is_none() && outcome.error.is_none() {
                    // No report to hold them: the warnings go where a user looks anyway. Those
                    // of a failed run (messages in flight when it stopped, say) only in a
                    // report: its error says why they were not received.
                    let mut text = String::new();
                    mpsim_sim::write_warnings(&mut text, "mpsim: warning: ", &outcome.warnings);
                    eprint!("{text}");
                }
                let printed = report.map_or(Ok(()), |(format, _)| {
                    write_report(&threads_report(&outcome), format, report_file)
                });
                write_trace(trace_file, outcome.trace.as_ref())?;
                outcome.into_result().and(printed)
            }
            Backend::Sim => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                if self.args.sim_threads as usize > cores {
                    eprintln!(
                        "mpsim: --sim-threads {} on {cores} cores: threads beyond the cores \
                         give the same results more slowly",
                        self.args.sim_threads
                    );
                }
                let outcome = self.simulate_with_progress_bar(program);
                // A run that could not start (its error says why) has nothing to report.
                let started = !outcome.report.ranks.is_empty();
                let format = report.map_or(ReportFormat::Text, |(format, _)| format);
                let printed = if started {
                    write_report(&outcome.report, format, report_file)
                } else {
                    Ok(())
                };
                write_trace(trace_file, outcome.trace.as_ref())?;
                outcome.error.map_or(printed, Err)
            }
            Backend::Mpi => Err(Error::Unsupported {
                what: format!(
                    "the {:?} backend is not in this build yet; use --backend threads",
                    self.args.backend
                ),
            }),
        }
    }

    /// Creates (or empties) the `--trace` file, if one is asked for.
    fn create_trace_file(&self) -> Result<Option<TraceFile>> {
        let Some(path) = &self.args.trace else {
            return Ok(None);
        };
        let file = std::fs::File::create(path).map_err(|e| trace_error(path, &e))?;
        Ok(Some(TraceFile {
            path: path.clone(),
            file,
        }))
    }
}

/// Writes `report` in `format` to its file if it has one (complete, or not at all), else to
/// standard output.
fn write_report(report: &Report, format: ReportFormat, file: Option<ReportFile>) -> Result<()> {
    let text = match format {
        ReportFormat::Text => report.to_string(),
        ReportFormat::Json => format!("{}\n", report.to_json()),
    };
    match file {
        Some(file) => file.write(&text),
        None => write_stdout(|out| out.write_all(text.as_bytes())),
    }
}

/// The `--report-out` file: a temporary file beside its target, made before the run (a path
/// that cannot be written is an error then, not after it) and renamed over the target once
/// the report is in it, so that the target holds a whole report or what it held before.
/// A target that exists and is not a regular file (`/dev/stdout`, a pipe) is written in
/// place: nothing can be renamed over it.
enum ReportFile {
    Beside {
        temp: tempfile::NamedTempFile,
        path: PathBuf,
    },
    InPlace {
        file: std::fs::File,
        path: PathBuf,
    },
}

impl ReportFile {
    fn create(path: &Path) -> Result<Self> {
        let error = |e: std::io::Error| report_error(path, &e);
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(error)?;
            return Ok(ReportFile::InPlace {
                file,
                path: path.to_owned(),
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // As a file made by `File::create`: readable by others, as the umask allows.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir).map_err(error)?;
        Ok(ReportFile::Beside {
            temp,
            path: path.to_owned(),
        })
    }

    /// Writes `text` and puts it in place (on failure the temporary file is removed).
    fn write(self, text: &str) -> Result<()> {
        match self {
            ReportFile::Beside { mut temp, path } => {
                let error = |e: std::io::Error| report_error(&path, &e);
                temp.write_all(text.as_bytes()).map_err(error)?;
                temp.as_file().sync_all().map_err(error)?;
                temp.persist(&path).map_err(|e| error(e.error))?;
                Ok(())
            }
            ReportFile::InPlace { mut file, path } => file
                .write_all(text.as_bytes())
                .and_then(|()| file.flush())
                .map_err(|e| report_error(&path, &e)),
        }
    }
}

/// The error of a report that cannot be written to `path`.
fn report_error(path: &Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the report to {}: {e}", path.display()),
    }
}

/// The `--trace` file, made before the run.
struct TraceFile {
    path: PathBuf,
    file: std::fs::File,
}

/// Writes `trace` to the `--trace` file, if both are there (a run that failed still writes its
/// trace: it shows what led to the error).
fn write_trace(file: Option<TraceFile>, trace: Option<&mpsim_sim::Trace>) -> Result<()> {
    let (Some(TraceFile { path, file }), Some(trace)) = (file, trace) else {
        return Ok(());
    };
    // Streamed: a trace of millions of events needs no text of its size in memory.
    let mut out = std::io::BufWriter::new(file);
    trace
        .write_chrome_json(&mut out)
        .and_then(|()| out.flush())
        .map_err(|e| trace_error(&path, &e))
}

/// The error of a trace that cannot be written to `path`.
fn trace_error(path: &std::path::Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the trace to {}: {e}", path.display()),
    }
}

/// Parses the command line (`--help` lists the flags), runs `program`, prints the first error
/// on one line and exits non-zero on failure ([`exit_code`]: quietly when the reader of
/// standard output closed it). A `--model` that does not load is such an error: the program
/// does not start.
pub fn run<F, Fut>(program: F) -> ExitCode
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let cli = Cli::parse();
    let launcher = match Launcher::try_from_args(cli.launch) {
        Ok(launcher) => launcher,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::FAILURE;
        }
    };
    exit_code(launcher.run(program))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Cli;

    /// A run on threads names the simulator's flags it was given, which it ignores.
    #[test]
    fn threads_names_the_sim_only_flags_it_ignores() {
        let args = |line: &[&str]| {
            Cli::try_parse_from(["prog"].iter().chain(line))
                .expect("parses")
                .launch
        };
        assert!(args(&["--backend", "threads"]).sim_only_flags().is_empty());
        let given = args(&[
            "--backend",
            "threads",
            "--sim-threads",
            "2",
            "--livelock-after",
            "2s",
            "--compute",
            "ignored",
            "--model",
            "default",
        ]);
        assert_eq!(
            given.sim_only_flags(),
            ["--model", "--sim-threads", "--compute", "--livelock-after"]
        );
    }
}
