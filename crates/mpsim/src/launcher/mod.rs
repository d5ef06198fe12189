//! Launching a program: the flags every mpsim program understands, and the backend choice.

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};
use mpsim_proto::error::{Error, Result};
use mpsim_proto::interrupt::Interrupt;
use mpsim_proto::p2p::Config;
use mpsim_sim::output::OutputFile;
use mpsim_sim::{
    ComputeMode, MemoryWatch, Model, ModelFile, ModelFileError, Outcome, RankSet, Report, Trace,
    TraceFilter,
};

use crate::comm::Comm;
use crate::measured::{empty_report, threads_report};
use crate::output::{exit_code, write_stdout};
use crate::signals;

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// Deterministic discrete-event simulation on a machine model: predicts run time, prints a
    /// report.
    Sim,
    /// One OS thread per rank, in this process.
    Threads,
    /// Planned, not built yet: an installed MPI library via `mpirun`. Choosing it is an error.
    Mpi,
}

/// The flags of every mpsim program (flatten into your own `clap` parser to add yours).
///
/// A run names the flags that the command line gave and its backend ignores (`--model` under
/// threads, `--wait` under sim, ...) on standard error. Only flags the user typed (or set
/// through the environment) count: a default, the launcher's or one a program sets on a
/// shared flag with `mut_arg` (as `examples/stencil2d.rs` makes `--compute` default to
/// `measured`), is not the user's choice and goes unmentioned.
#[derive(Clone, Debug, Args)]
pub struct LaunchArgs {
    // Which flags the command line gave. First: it reads the matches before the fields below
    // take their values out of them (clap's derive removes each value it reads).
    #[command(flatten)]
    given: GivenFlags,
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
    /// Write a trace of every rank's compute, blocking waits and messages: in virtual time
    /// under sim, in host time since the run's start under threads. A PATH ending in
    /// `.pftrace` or `.perfetto-trace` gets Perfetto's protobuf format (about 40% of the
    /// size; Perfetto opens it), any other Chrome trace-event JSON (Perfetto and
    /// chrome://tracing open it, `mpsim plot` draws it up to 4 GiB).
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// With `--trace`: trace from this time on (virtual time under sim, host time since the
    /// run's start under threads; written as in model files: `500us`, `2s`). A span that
    /// crosses the window's edge is clipped to it; a message is kept if it is sent or arrives
    /// in the window.
    #[arg(long, value_name = "TIME", value_parser = mpsim_sim::units::time_ns)]
    pub trace_from: Option<u64>,
    /// With `--trace`: trace up to this time, included (like `--trace-from`).
    #[arg(long, value_name = "TIME", value_parser = mpsim_sim::units::time_ns)]
    pub trace_to: Option<u64>,
    /// With `--trace`: trace only these ranks (`0-3,64,1000-1023`): their spans, and the
    /// messages they send or receive (a peer outside the list gets a track with just those).
    #[arg(long, value_name = "LIST", value_parser = rank_list)]
    pub trace_ranks: Option<RankSet>,
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

/// The flags only the simulator reads, by clap id: a run on threads ignores them.
const SIM_ONLY: [Flag; 4] = [
    Flag("model", "--model"),
    Flag("sim_threads", "--sim-threads"),
    Flag("compute", "--compute"),
    Flag("livelock_after", "--livelock-after"),
];

/// The flags only the threads backend reads, by clap id: a simulated run ignores them.
const THREADS_ONLY: [Flag; 2] = [Flag("wait", "--wait"), Flag("bind", "--bind")];

/// A flag of [`LaunchArgs`]: its clap id (the field's name) and how the user types it.
#[derive(Clone, Copy, Debug)]
struct Flag(&'static str, &'static str);

/// Which of the backend-specific flags ([`SIM_ONLY`], [`THREADS_ONLY`]) the command line gave,
/// as their clap ids. A flag's value cannot tell: `--compute measured` typed by the user and
/// a program's own default of `measured` are the same `Some(Measured)`; clap's matches know
/// where each value came from. An empty set for a [`Launcher`] built in code: what a program
/// sets through the builder is the program's business, not a flag to warn about.
///
/// A flattened [`Args`] that adds no argument of its own and only reads the matches.
#[derive(Clone, Debug, Default)]
struct GivenFlags(Vec<&'static str>);

impl GivenFlags {
    /// The backend-specific flags `matches` has from the command line or the environment.
    fn of(matches: &clap::ArgMatches) -> Self {
        use clap::parser::ValueSource;
        let ids: Vec<&str> = matches.ids().map(clap::Id::as_str).collect();
        let given = SIM_ONLY
            .iter()
            .chain(&THREADS_ONLY)
            .filter(|Flag(id, _)| {
                // Only ids the matches have: asking for an unknown one panics in debug builds.
                ids.contains(id)
                    && matches!(
                        matches.value_source(id),
                        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                    )
            })
            .map(|Flag(id, _)| *id)
            .collect();
        GivenFlags(given)
    }

    /// Those of `flags` that were given, as the user types them.
    fn among(&self, flags: &[Flag]) -> Vec<&'static str> {
        flags
            .iter()
            .filter(|Flag(id, _)| self.0.contains(id))
            .map(|Flag(_, flag)| *flag)
            .collect()
    }
}

impl clap::FromArgMatches for GivenFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        Ok(GivenFlags::of(matches))
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        // An update parses more flags: those given before stay given.
        for id in GivenFlags::of(matches).0 {
            if !self.0.contains(&id) {
                self.0.push(id);
            }
        }
        Ok(())
    }
}

impl Args for GivenFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd
    }
}

/// Parses `--trace-ranks`.
fn rank_list(text: &str) -> std::result::Result<RankSet, String> {
    text.parse()
}

/// The format of a trace file, chosen by its name ([`TraceFormat::for_path`]).
///
/// ```
/// use mpsim::TraceFormat;
/// assert_eq!(TraceFormat::for_path("ring.pftrace".as_ref()), TraceFormat::Perfetto);
/// assert_eq!(TraceFormat::for_path("ring.json".as_ref()), TraceFormat::ChromeJson);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Chrome trace-event JSON: Perfetto, chrome://tracing and `mpsim plot` read it.
    ChromeJson,
    /// Perfetto's protobuf trace format: about 40% of the JSON's size; Perfetto reads it.
    Perfetto,
}

impl TraceFormat {
    /// [`TraceFormat::Perfetto`] for a name ending in `.pftrace` or `.perfetto-trace` (in any
    /// case), else [`TraceFormat::ChromeJson`].
    pub fn for_path(path: &Path) -> Self {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext.eq_ignore_ascii_case("pftrace") || ext.eq_ignore_ascii_case("perfetto-trace") {
            TraceFormat::Perfetto
        } else {
            TraceFormat::ChromeJson
        }
    }
}

impl LaunchArgs {
    /// What the trace keeps (`--trace-from`, `--trace-to`, `--trace-ranks`).
    fn trace_filter(&self) -> TraceFilter {
        TraceFilter {
            from_ns: self.trace_from.unwrap_or(0),
            to_ns: self.trace_to.unwrap_or(u64::MAX),
            ranks: self.trace_ranks.clone(),
        }
    }

    /// The flags that choose what a trace keeps, given without `--trace`.
    fn trace_flags_without_trace(&self) -> Vec<&'static str> {
        let given = [
            (self.trace_from.is_some(), "--trace-from"),
            (self.trace_to.is_some(), "--trace-to"),
            (self.trace_ranks.is_some(), "--trace-ranks"),
        ];
        given
            .into_iter()
            .filter_map(|(given, flag)| (given && self.trace.is_none()).then_some(flag))
            .collect()
    }

    /// The flags given that only the simulator reads (`--model`, `--sim-threads`, `--compute`,
    /// `--livelock-after`): a run on threads says it ignores them rather than seem to obey.
    fn sim_only_flags(&self) -> Vec<&'static str> {
        self.given.among(&SIM_ONLY)
    }

    /// The flags given that only the threads backend reads (`--wait`, `--bind`): a simulated
    /// run says it ignores them.
    fn threads_only_flags(&self) -> Vec<&'static str> {
        self.given.among(&THREADS_ONLY)
    }
}

/// Says on standard error that the flags `ignored` (if any) only apply under `backend` and
/// are ignored under `running`.
fn warn_ignored(ignored: &[&str], backend: &str, running: &str) {
    if !ignored.is_empty() {
        let verb = if ignored.len() == 1 {
            "applies"
        } else {
            "apply"
        };
        eprintln!(
            "mpsim: {} only {verb} under --backend {backend}: ignored under {running}",
            ignored.join(", ")
        );
    }
}

#[derive(Parser)]
#[command(
    about = "An mpsim program: simulated on a machine model (default) or run for real on threads.",
    after_help = "Ctrl-C (SIGINT) or SIGTERM stops a run: it still writes its report and trace of \
                  what ran until then, and exits with status 130 or 143; a second one quits at \
                  once. A --trace file is written whole or not at all."
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
                given: GivenFlags::default(),
                ranks,
                backend: Backend::Sim,
                eager_threshold: None,
                strict: false,
                compute: None,
                model: None,
                report: None,
                report_out: None,
                trace: None,
                trace_from: None,
                trace_to: None,
                trace_ranks: None,
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
    /// amended by D2 of `docs/extensions.md`).
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
    fn simulate_with_progress_bar<F, Fut>(
        &self,
        program: F,
        interrupt: Option<Interrupt>,
    ) -> Outcome
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
        let options = mpsim_sim::Options {
            interrupt,
            ..self.sim_options()
        };
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
            trace_filter: self.args.trace_filter(),
            memory_floor: None,
            workers: self.args.sim_threads,
            livelock_after_ns: self.args.livelock_after,
            interrupt: None,
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
    /// `threads` (and recorded in [`Outcome::trace`] by [`Launcher::simulate`]), in the
    /// format its name asks for ([`TraceFormat::for_path`]).
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.args.trace = Some(path.into());
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
        self.args.trace_from = Some(ns);
        self
    }

    /// Traces up to `ns`, included (`--trace-to`; see [`Launcher::trace_from_ns`]).
    pub fn trace_to_ns(mut self, ns: u64) -> Self {
        self.args.trace_to = Some(ns);
        self
    }

    /// Traces only these ranks (`--trace-ranks`): their spans and the messages they send or
    /// receive (see [`Launcher::trace_from_ns`]).
    pub fn trace_ranks(mut self, ranks: RankSet) -> Self {
        self.args.trace_ranks = Some(ranks);
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
        let outcome = self.run_threads(program, true, None);
        (threads_report(&outcome), outcome.error)
    }

    /// The error of a launcher with no ranks, which no backend can run.
    fn no_ranks(&self) -> Option<Error> {
        (self.args.ranks == 0).then(|| Error::InvalidArgument {
            what: "a run needs at least 1 rank".into(),
        })
    }

    /// `program` on the threads backend (at least 1 rank), measured for a report when
    /// `measure`, with a trace when `--trace` asks for one; stopped when `interrupt` is raised.
    fn run_threads<F, Fut>(
        &self,
        program: F,
        measure: bool,
        interrupt: Option<&Interrupt>,
    ) -> mpsim_threads::Outcome
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
            trace_filter: self.args.trace_filter(),
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
    ///
    /// The trace file is written whole or not at all: its temporary file is made beside it
    /// before the run (a path that cannot be written fails at once) and renamed over it once
    /// complete, so a run that fails, is stopped or fills the disk leaves the file that was
    /// there, or none, never a truncated one.
    ///
    /// While it runs, `SIGINT` (Ctrl-C) and `SIGTERM` stop it: under `sim` at the next 64
    /// events, on threads each rank at its next call; the report and trace of what ran until
    /// then are written, and the run ends with [`Error::Interrupted`] (which [`exit_code`]
    /// makes status 130 or 143, as a shell reports a process the signal ended). A second
    /// signal ends the process at once, leaving the trace's temporary file
    /// (`.NAME.XXXXXX.tmp`) beside it; a first one while the trace is being written stops
    /// the writing and leaves no trace. Outside runs the signals keep their default.
    pub fn run<F, Fut>(&self, program: F) -> Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        if let Some(e) = self.no_ranks() {
            return Err(e);
        }
        let ignored = self.args.trace_flags_without_trace();
        if !ignored.is_empty() {
            let verb = if ignored.len() == 1 {
                "applies"
            } else {
                "apply"
            };
            eprintln!(
                "mpsim: {} only {verb} with --trace: ignored",
                ignored.join(", ")
            );
        }
        let filter = self.args.trace_filter();
        if self.args.trace.is_some() {
            filter
                .check(self.args.ranks)
                .map_err(|what| Error::InvalidArgument { what })?;
        }
        // From here to the end of the outputs, a first signal stops the run, not the process
        // (listening before the trace file is made: a signal that finds its temporary file
        // finds the run listening).
        let listening = signals::listen();
        let interrupt = listening.as_ref().map(|l| l.interrupt().clone());
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
                warn_ignored(&self.args.sim_only_flags(), "sim", "threads");
                let outcome = self.run_threads(program, report.is_some(), interrupt.as_ref());
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
                write_trace(trace_file, outcome.trace.as_ref(), interrupt.as_ref())?;
                outcome.into_result().and(printed)
            }
            Backend::Sim => {
                warn_ignored(&self.args.threads_only_flags(), "threads", "sim");
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                if self.args.sim_threads as usize > cores {
                    eprintln!(
                        "mpsim: --sim-threads {} on {cores} cores: threads beyond the cores \
                         give the same results more slowly",
                        self.args.sim_threads
                    );
                }
                let outcome = self.simulate_with_progress_bar(program, interrupt.clone());
                if let Some(Error::Interrupted { signal, .. }) = &outcome.error {
                    eprintln!(
                        "mpsim: {signal}: the run stopped; writing its report and trace of what \
                         ran until then (a second {signal} quits at once)"
                    );
                }
                // A run that could not start (its error says why) has nothing to report.
                let started = !outcome.report.ranks.is_empty();
                let format = report.map_or(ReportFormat::Text, |(format, _)| format);
                let printed = if started {
                    write_report(&outcome.report, format, report_file)
                } else {
                    Ok(())
                };
                write_trace(trace_file, outcome.trace.as_ref(), interrupt.as_ref())?;
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

    /// Starts the `--trace` file, if one is asked for: its temporary file, made now beside it
    /// ([`OutputFile`]), so that a path it cannot be written to is an error before the run,
    /// not after hours of simulation.
    fn create_trace_file(&self) -> Result<Option<TraceFile>> {
        let Some(path) = &self.args.trace else {
            return Ok(None);
        };
        let file = OutputFile::create(path).map_err(|e| trace_error(path, &e))?;
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

/// The `--report-out` file: started before the run ([`OutputFile`]: a temporary file beside
/// its target, so that a path that cannot be written is an error then, not after it) and
/// renamed over the target once the report is in it, so that the target holds a whole report
/// or what it held before. A target that is not a regular file (`/dev/stdout`, a pipe) is
/// written in place.
struct ReportFile {
    file: OutputFile,
    path: PathBuf,
}

impl ReportFile {
    fn create(path: &Path) -> Result<Self> {
        let file = OutputFile::create(path).map_err(|e| report_error(path, &e))?;
        Ok(ReportFile {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Writes `text` as the whole report and puts it under its name.
    fn write(self, text: &str) -> Result<()> {
        let ReportFile { mut file, path } = self;
        file.write_all(text.as_bytes())
            .and_then(|()| file.commit())
            .map_err(|e| report_error(&path, &e))
    }
}

/// The error of a report that cannot be written to `path`.
fn report_error(path: &Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the report to {}: {e}", path.display()),
    }
}

/// The `--trace` file, started before the run; nothing is under its name until it is complete.
struct TraceFile {
    path: PathBuf,
    file: OutputFile,
}

/// Writes `trace` to the `--trace` file, if both are there (a run that failed still writes its
/// trace: it shows what led to the error), in the format its name asks for, and puts it under
/// its name once complete. Without a trace (a run that could not start) the file is not made.
/// A signal raised while it is written (`interrupt`, not raised before) stops the writing: the
/// trace is then not written at all, and the error is [`Error::Interrupted`]. A JSON trace
/// larger than `mpsim plot` reads is warned of on standard error.
fn write_trace(
    file: Option<TraceFile>,
    trace: Option<&Trace>,
    interrupt: Option<&Interrupt>,
) -> Result<()> {
    let (Some(TraceFile { path, mut file }), Some(trace)) = (file, trace) else {
        return Ok(());
    };
    // A signal that stopped the run was for the run: the trace of what ran is still written.
    let interrupt = interrupt.filter(|i| i.raised().is_none());
    // Streamed: a trace of millions of events needs no text of its size in memory.
    let mut out = std::io::BufWriter::new(Interruptible {
        file: &mut file,
        interrupt,
    });
    let written = match TraceFormat::for_path(&path) {
        TraceFormat::ChromeJson => trace
            .write_chrome_json_sized(&mut out, Trace::PLOT_MAX_BYTES)
            .map(Some),
        TraceFormat::Perfetto => trace.write_perfetto(&mut out).map(|()| None),
    };
    let written = written.and_then(|size| out.flush().map(|()| size));
    drop(out);
    if let Some(signal) = interrupt.and_then(Interrupt::raised) {
        eprintln!(
            "mpsim: {signal} while writing the trace: {} was not written",
            path.display()
        );
        return Err(Error::Interrupted {
            signal,
            time_ns: None,
        });
    }
    let size = written
        .and_then(|size| file.commit().map(|()| size))
        .map_err(|e| trace_error(&path, &e))?;
    if let Some(size) = size.filter(|s| s.bytes > Trace::PLOT_MAX_BYTES) {
        eprintln!(
            "mpsim: warning: {}",
            too_big_for_plot(&path, size, trace.len())
        );
    }
    Ok(())
}

/// The warning for a JSON trace of `size` holding `events` events, larger than `mpsim plot`
/// reads.
fn too_big_for_plot(path: &Path, size: mpsim_proto::trace::JsonSize, events: usize) -> String {
    let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
    format!(
        "the trace {} is {:.1} GiB, more than the {:.0} GiB mpsim plot reads ({} of its {events} \
         events are past that); trace less with --trace-from/--trace-to (a window of time) or \
         --trace-ranks (some ranks), or write Perfetto's smaller format (a .pftrace file)",
        path.display(),
        gib(size.bytes),
        gib(Trace::PLOT_MAX_BYTES),
        size.events_past_limit,
    )
}

/// A trace file's writer that fails once a signal is raised (looked at per buffer written,
/// 8 KiB, under the `BufWriter`).
struct Interruptible<'a> {
    file: &'a mut OutputFile,
    interrupt: Option<&'a Interrupt>,
}

impl std::io::Write for Interruptible<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.interrupt.is_some_and(|i| i.raised().is_some()) {
            return Err(std::io::Error::other("interrupted by a signal"));
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The error of a trace that cannot be written to `path`.
fn trace_error(path: &std::path::Path, e: &std::io::Error) -> Error {
    Error::Io {
        what: format!("cannot write the trace to {}: {e}", path.display()),
    }
}

/// Parses the command line (`--help` lists the flags), runs `program`, prints the first error
/// on one line and exits non-zero on failure ([`exit_code`]: quietly when the reader of
/// standard output closed it; with the code a rank gave [`Comm::abort`], as `mpirun` does). A `--model` that does not load is such an error: the program
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
    use clap::{Args, CommandFactory, FromArgMatches, Parser};

    use super::{Cli, LaunchArgs};

    /// `LaunchArgs` parsed from `line` (after the program's name).
    fn args(line: &[&str]) -> LaunchArgs {
        Cli::try_parse_from(["prog"].iter().chain(line))
            .expect("parses")
            .launch
    }

    /// The warning of a JSON trace too large for `mpsim plot` says by how much and what to do.
    #[test]
    fn a_trace_past_plots_limit_is_warned_of_with_the_flags_that_shrink_it() {
        let size = mpsim_proto::trace::JsonSize {
            bytes: 6_549_825_126,
            events_past_limit: 12_345,
        };
        let text = super::too_big_for_plot("ring.json".as_ref(), size, 40_000_000);
        assert_eq!(
            text,
            "the trace ring.json is 6.1 GiB, more than the 4 GiB mpsim plot reads (12345 of its \
             40000000 events are past that); trace less with --trace-from/--trace-to (a window \
             of time) or --trace-ranks (some ranks), or write Perfetto's smaller format (a \
             .pftrace file)"
        );
    }

    /// The trace flags given without `--trace` are named, as ignored.
    #[test]
    fn trace_flags_without_trace_are_named() {
        let given = args(&["--trace-to", "1ms", "--trace-ranks", "0"]);
        assert_eq!(
            given.trace_flags_without_trace(),
            ["--trace-to", "--trace-ranks"]
        );
        let traced = args(&["--trace", "t.json", "--trace-to", "1ms"]);
        assert!(traced.trace_flags_without_trace().is_empty());
    }

    /// A run on threads names the simulator's flags it was given, which it ignores, and only
    /// those: a flag typed with its default value is given too.
    #[test]
    fn threads_names_the_sim_only_flags_it_ignores() {
        assert!(args(&["--backend", "threads"]).sim_only_flags().is_empty());
        let given = args(&[
            "--backend",
            "threads",
            "--sim-threads",
            "1",
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
        assert!(given.threads_only_flags().is_empty());
    }

    /// A simulated run names the threads backend's flags it was given (`--wait`, `--bind`),
    /// which it ignores.
    #[test]
    fn sim_names_the_threads_only_flags_it_ignores() {
        assert!(args(&[]).threads_only_flags().is_empty());
        let given = args(&["--bind", "none", "--wait", "auto", "--ranks", "3"]);
        assert_eq!(given.threads_only_flags(), ["--wait", "--bind"]);
        assert!(given.sim_only_flags().is_empty());
    }

    /// A program's own default for a shared flag (`examples/stencil2d.rs` makes `--compute`
    /// default to `measured`) is not a flag the user gave: a run on threads does not say it
    /// ignores it. Typed, it is named.
    #[test]
    fn a_programs_default_for_a_flag_is_not_given() {
        let parse = |line: &[&str]| {
            let cmd = LaunchArgs::augment_args(clap::Command::new("prog"))
                .mut_arg("compute", |a| a.default_value("measured"));
            let matches = cmd
                .try_get_matches_from(["prog"].iter().chain(line))
                .expect("parses");
            LaunchArgs::from_arg_matches(&matches).expect("parses")
        };
        let defaulted = parse(&["--backend", "threads"]);
        assert_eq!(defaulted.compute, Some(super::Compute::Measured));
        assert!(defaulted.sim_only_flags().is_empty());
        let typed = parse(&["--backend", "threads", "--compute", "measured"]);
        assert_eq!(typed.sim_only_flags(), ["--compute"]);
        // The launcher's own command is well formed (clap's debug checks).
        Cli::command().debug_assert();
    }

    /// Flags given in a later update of parsed flags add to those given first.
    #[test]
    fn an_update_keeps_the_flags_given_before() {
        let mut launch = args(&["--model", "default"]);
        let cmd = LaunchArgs::augment_args_for_update(clap::Command::new("prog"));
        let matches = cmd
            .try_get_matches_from(["prog", "--wait", "park"])
            .expect("parses");
        launch.update_from_arg_matches(&matches).expect("updates");
        assert_eq!(launch.sim_only_flags(), ["--model"]);
        assert_eq!(launch.threads_only_flags(), ["--wait"]);
    }
}
