//! The command line of every mpsim program (the `cli` feature): [`LaunchArgs`], the flags a
//! program flattens into its own `clap` parser, their one conversion into a [`RunConfig`], and
//! [`run`], which parses them and runs a program.
//!
//! Why a module: the flags are one way to fill a [`RunConfig`], not the run's own
//! configuration; a library user who builds the configuration in code turns the feature off
//! and does without `clap` (and the simulator's progress bar, `indicatif`).
//!
//! What the conversion keeps beyond the values: which backend-specific flags the user typed
//! ([`GivenFlags`], read from `clap`'s matches), so that a run on a backend that ignores one
//! names it ([`RunConfig::flags_given`]).

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser};
use mpsim_proto::collective::AlgorithmChoices;
use mpsim_proto::error::Result;
use mpsim_sim::{Model, ModelFile, ModelFileError, RankSet};

use super::Launcher;
use super::config::{
    Backend, Bind, Compute, Flag, ReportFormat, RunConfig, SIM_ONLY, THREADS_ONLY, Wait,
};
use crate::comm::Comm;
use crate::output::exit_code;

/// The flags of every mpsim program (flatten into your own `clap` parser to add yours). They
/// fill a [`RunConfig`] (`RunConfig::try_from`, which loads `--model`), or a [`Launcher`]
/// ([`Launcher::from_args`]).
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
    /// Number of ranks (at least 1). Under `--backend mpi` each process mpirun starts is a
    /// rank, and a number that disagrees with theirs is an error; the default is then the
    /// number of processes, when the launcher says it (Open MPI's `OMPI_COMM_WORLD_SIZE`,
    /// MPICH's `PMI_SIZE`).
    #[arg(long, short = 'n', default_value_t = default_ranks(), allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks: u32,
    /// Where to run the program: `sim` simulates every rank in this process on a machine model;
    /// `threads` runs each rank on a thread of this process; `mpi` (a build with the `mpi`
    /// feature) runs each process `mpirun -np N` starts as one rank, on the installed MPI
    /// library.
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
    /// Collective algorithms to run, as `collective=algorithm` pairs
    /// (`allreduce=ring,bcast=binomial`; may be repeated), on either backend; under sim over
    /// the model file's `[collectives]`. A collective not named runs the cheapest algorithm by
    /// the machine model's costs (sim), the fixed table's (threads), or MPI's own collective
    /// where it has one (mpi: built-in operations on primitive types; `docs/collectives.md`
    /// §9). An algorithm that needs
    /// a commutative operation, named for a reduction given one that is not, fails that call
    /// (InvalidOp).
    #[arg(long, value_name = "LIST", value_parser = choices)]
    pub coll: Vec<AlgorithmChoices>,
    /// Reductions (reduce, allreduce, reduce_scatter) run their `reproducible` algorithm, whose
    /// floating-point results do not depend on the algorithm or the process count (a fixed
    /// binomial tree over ranks at rank 0), unless `--coll` names another. Under `--backend
    /// mpi` it also keeps every collective on mpsim's algorithms over MPI point-to-point, none
    /// on MPI's own, so that results are those of sim and threads.
    #[arg(long)]
    pub reproducible: bool,
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
    /// the prediction [default: text], under threads and mpi what each rank measured in host
    /// time (only when asked for, by this flag or `--report-out`; under mpi rank 0 writes
    /// it). All are the same report, with the same fields; one a backend cannot measure is `-`
    /// in text, `null` in JSON.
    #[arg(long, value_enum)]
    pub report: Option<ReportFormat>,
    /// Write the report to FILE instead of standard output, which then carries the program's
    /// own output alone. The file is written whole or not at all (beside FILE, then renamed
    /// over it). Without `--report`, the format is json when FILE ends in `.json`, else text.
    #[arg(long, value_name = "FILE")]
    pub report_out: Option<PathBuf>,
    /// Write a trace of every rank's compute, blocking waits and messages: in virtual time
    /// under sim, in host time since the run's start under threads and mpi (written by rank
    /// 0 under mpi, each rank's clock started at a barrier). A PATH ending in
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
    /// Under `sim`, for BSP programs (`mpsim::bsp`): `cost` times each superstep by the BSP
    /// cost model, w + h*g + l with g and l from the model's [bsp] section; `p2p` times the
    /// messages its sync really sends on the point-to-point model [default: the model's
    /// `[bsp] timing`, else p2p].
    #[arg(long, value_name = "TIMING", value_parser = bsp_timing)]
    pub bsp_timing: Option<mpsim_sim::BspTiming>,
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

impl LaunchArgs {
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

    /// The flags that choose what a trace keeps, given without `--trace` (a run of these flags
    /// names them: [`RunConfig`] says the same of its fields).
    #[cfg(test)]
    fn trace_flags_without_trace(&self) -> Vec<&'static str> {
        super::config::trace_flags_without_trace(
            self.trace.is_some(),
            [
                self.trace_from.is_some(),
                self.trace_to.is_some(),
                self.trace_ranks.is_some(),
            ],
        )
    }
}

/// The configuration the flags say: loads `--model` if given (else the embedded default
/// model), then applies `--compute` if given; keeps which backend-specific flags the command
/// line gave ([`RunConfig::flags_given`]). A model file that does not load is an error naming
/// its file and line.
impl TryFrom<LaunchArgs> for RunConfig {
    type Error = ModelFileError;

    fn try_from(args: LaunchArgs) -> std::result::Result<Self, ModelFileError> {
        let mut model = match &args.model {
            Some(path) => ModelFile::open(path)?.model,
            None => Model::default(),
        };
        if let Some(compute) = args.compute {
            model.compute = compute.into();
        }
        let flags_given = [args.sim_only_flags(), args.threads_only_flags()].concat();
        let mut collectives = AlgorithmChoices::default();
        for c in &args.coll {
            collectives = collectives.overlaid(c);
        }
        collectives.reproducible |= args.reproducible;
        Ok(RunConfig {
            ranks: args.ranks,
            backend: args.backend,
            model,
            eager_threshold: args.eager_threshold,
            strict: args.strict,
            bsend_overflow_returns: false,
            collectives,
            report: args.report,
            report_out: args.report_out,
            trace: args.trace,
            trace_from_ns: args.trace_from,
            trace_to_ns: args.trace_to,
            trace_ranks: args.trace_ranks,
            sim_threads: args.sim_threads,
            livelock_after_ns: args.livelock_after,
            bsp_timing: args.bsp_timing,
            wait: args.wait,
            bind: args.bind,
            spawn_order: None,
            flags_given,
        })
    }
}

/// Which of the backend-specific flags ([`SIM_ONLY`], [`THREADS_ONLY`]) the command line gave,
/// as their clap ids. A flag's value cannot tell: `--compute measured` typed by the user and
/// a program's own default of `measured` are the same `Some(Measured)`; clap's matches know
/// where each value came from.
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
            .filter(|Flag { id, .. }| {
                // Only ids the matches have: asking for an unknown one panics in debug builds.
                ids.contains(id)
                    && matches!(
                        matches.value_source(id),
                        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                    )
            })
            .map(|flag| flag.id)
            .collect();
        GivenFlags(given)
    }

    /// Those of `flags` that were given, as the user types them.
    fn among(&self, flags: &[Flag]) -> Vec<&'static str> {
        flags
            .iter()
            .filter(|flag| self.0.contains(&flag.id))
            .map(|flag| flag.typed)
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

/// `--ranks`'s default: the number of processes of the MPI job this process belongs to, when
/// its launcher says it (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`), else 4.
fn default_ranks() -> u32 {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|var| std::env::var(var).ok()?.parse::<u32>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(4)
}

/// Parses `--coll`.
fn choices(text: &str) -> std::result::Result<AlgorithmChoices, String> {
    text.parse()
}

/// Parses `--trace-ranks`.
/// `--bsp-timing`'s value.
fn bsp_timing(text: &str) -> std::result::Result<mpsim_sim::BspTiming, String> {
    match text {
        "cost" => Ok(mpsim_sim::BspTiming::Cost),
        "p2p" => Ok(mpsim_sim::BspTiming::P2p),
        _ => Err(format!("`{text}` is not a BSP timing: use cost or p2p")),
    }
}

fn rank_list(text: &str) -> std::result::Result<RankSet, String> {
    text.parse()
}

#[derive(Parser)]
#[command(
    about = "An mpsim program: simulated on a machine model (default), run for real on threads, \
             or (a build with the mpi feature) on an MPI library under mpirun.",
    after_help = "Ctrl-C (SIGINT) or SIGTERM stops a run: it still writes its report and trace of \
                  what ran until then, and exits with status 130 or 143; a second one quits at \
                  once. A --trace file is written whole or not at all."
)]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

impl Launcher {
    /// From parsed flags: [`RunConfig::try_from`] them (which loads `--model` if given, else
    /// the embedded default model, then applies `--compute` if given; `--eager-threshold`, if
    /// given, is applied at each run, to whatever model the launcher then has). A model file
    /// that does not load is an error naming its file and line.
    pub fn try_from_args(args: LaunchArgs) -> std::result::Result<Self, ModelFileError> {
        RunConfig::try_from(args).map(Launcher::with_config)
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
}

/// Parses the command line (`--help` lists the flags), runs `program`, prints the first error
/// on one line and exits non-zero on failure ([`exit_code`]: quietly when the reader of
/// standard output closed it; with the code a rank gave [`Comm::abort`], as `mpirun` does). A
/// `--model` that does not load is such an error: the program does not start.
pub fn run<F, Fut>(program: F) -> ExitCode
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    run_parsed(|launcher| launcher.run(program))
}

/// Parses the command line into a launcher and runs `run` with it, as [`run`] does (the BSP
/// layer's `bsp::run`).
pub(crate) fn run_parsed(run: impl FnOnce(Launcher) -> Result<()>) -> ExitCode {
    let cli = Cli::parse();
    let launcher = match Launcher::try_from_args(cli.launch) {
        Ok(launcher) => launcher,
        Err(e) => {
            eprintln!("mpsim: {e}");
            return ExitCode::FAILURE;
        }
    };
    exit_code(run(launcher))
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

    /// The flags fill a run's configuration field by field, with which backend-specific
    /// flags were typed (in the order the warnings name them).
    #[test]
    fn the_flags_fill_a_run_configuration() {
        let config = super::RunConfig::try_from(args(&[
            "--ranks",
            "8",
            "--backend",
            "threads",
            "--eager-threshold",
            "1KiB",
            "--strict",
            "--report",
            "json",
            "--report-out",
            "r.json",
            "--trace",
            "t.pftrace",
            "--trace-from",
            "1ms",
            "--trace-to",
            "2ms",
            "--trace-ranks",
            "0-3",
            "--bind",
            "none",
            "--wait",
            "park",
            "--livelock-after",
            "0",
            "--sim-threads",
            "3",
            "--compute",
            "ignored",
        ]))
        .expect("the default model loads");
        assert_eq!((config.ranks, config.backend), (8, super::Backend::Threads));
        assert_eq!((config.eager_threshold, config.strict), (Some(1024), true));
        assert_eq!(config.report, Some(super::ReportFormat::Json));
        assert_eq!(config.report_out.as_deref(), Some("r.json".as_ref()));
        assert_eq!(config.trace.as_deref(), Some("t.pftrace".as_ref()));
        assert_eq!(
            (config.trace_from_ns, config.trace_to_ns),
            (Some(1_000_000), Some(2_000_000))
        );
        assert_eq!(
            config.trace_ranks,
            Some("0-3".parse().expect("a rank list"))
        );
        assert_eq!((config.sim_threads, config.livelock_after_ns), (3, 0));
        assert_eq!(
            (config.wait, config.bind),
            (super::Wait::Park, super::Bind::None)
        );
        assert_eq!(config.model.compute, mpsim_sim::ComputeMode::Ignored);
        assert_eq!(
            config.flags_given,
            [
                "--sim-threads",
                "--compute",
                "--livelock-after",
                "--wait",
                "--bind"
            ]
        );
        // Defaults typed by no one are not given.
        assert!(
            super::RunConfig::try_from(args(&[]))
                .expect("loads")
                .flags_given
                .is_empty()
        );
    }

    /// `--coll` names algorithms (repeated: a later one for the same collective wins) and
    /// `--reproducible` makes reductions reproducible; a collective or algorithm that does
    /// not exist is a parse error naming the ones that do.
    #[test]
    fn coll_flags_name_algorithms() {
        use mpsim_proto::collective::{Algorithm, Collective};
        let config = super::RunConfig::try_from(args(&[
            "--coll",
            "allreduce=ring,bcast=binomial",
            "--coll",
            "allreduce=rabenseifner",
            "--reproducible",
        ]))
        .expect("loads");
        let c = config.collectives;
        assert_eq!(c.get(Collective::Allreduce), Some(Algorithm::Rabenseifner));
        assert_eq!(c.get(Collective::Bcast), Some(Algorithm::Binomial));
        assert!(c.reproducible);
        for (flag, expected) in [
            ("bcast=ring", "bcast has no algorithm `ring`: use binomial"),
            (
                "alreduce=ring",
                "`alreduce` is not a collective: use barrier, bcast",
            ),
            ("allreduce", "is not `collective=algorithm`"),
        ] {
            let e = Cli::try_parse_from(["prog", "--coll", flag])
                .err()
                .expect("a bad --coll")
                .to_string();
            assert!(e.contains(expected), "{e}");
        }
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
