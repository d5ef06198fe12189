//! Launching a program: the flags every mpsim program understands, and the backend choice.

use std::future::Future;
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};
use mpsim_proto::error::{Error, Result};
use mpsim_proto::p2p::Config;

use crate::comm::Comm;

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// One OS thread per rank, in this process.
    Threads,
    /// Deterministic discrete-event simulation on a machine model (not in this build yet).
    Sim,
    /// An installed MPI library via `mpirun` (not in this build yet).
    Mpi,
}

/// The flags of every mpsim program (flatten into your own `clap` parser to add yours).
#[derive(Clone, Debug, Args)]
pub struct LaunchArgs {
    /// Number of ranks.
    #[arg(long, short = 'n', default_value_t = 4)]
    pub ranks: u32,
    /// Where to run the program.
    #[arg(long, value_enum, default_value_t = Backend::Threads)]
    pub backend: Backend,
    /// Standard sends up to this many bytes are eager (complete without a matching receive).
    #[arg(long, default_value_t = 65_536)]
    pub eager_threshold: usize,
    /// Report an rsend that arrives before its receive is posted (ReadyNotPosted).
    #[arg(long)]
    pub strict: bool,
}

#[derive(Parser)]
#[command(about = "An mpsim program. Runs the same code on threads or (soon) simulated.")]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

/// Runs a program: set the ranks and backend, then [`Launcher::run`].
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
/// ```
#[derive(Clone, Debug)]
pub struct Launcher {
    args: LaunchArgs,
}

impl Launcher {
    /// `ranks` ranks on the threads backend, default settings.
    pub fn new(ranks: u32) -> Self {
        Launcher {
            args: LaunchArgs {
                ranks,
                backend: Backend::Threads,
                eager_threshold: 65_536,
                strict: false,
            },
        }
    }

    /// From parsed flags.
    pub fn from_args(args: LaunchArgs) -> Self {
        Launcher { args }
    }

    /// Chooses the backend.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.args.backend = backend;
        self
    }

    /// Sets the eager threshold of standard sends.
    pub fn eager_threshold(mut self, bytes: usize) -> Self {
        self.args.eager_threshold = bytes;
        self
    }

    /// Turns strict mode on (`rsend` checks).
    pub fn strict(mut self, on: bool) -> Self {
        self.args.strict = on;
        self
    }

    /// Runs `program` on every rank; returns the run's first error.
    pub fn run<F, Fut>(&self, program: F) -> Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: Future<Output = Result<()>>,
    {
        let config = Config {
            eager_threshold: self.args.eager_threshold,
            system_buffer: None,
            strict_ready: self.args.strict,
            ..Config::default()
        };
        match self.args.backend {
            Backend::Threads => {
                let options = mpsim_threads::Options {
                    ranks: self.args.ranks,
                    config,
                };
                mpsim_threads::run(&options, |rt| program(Comm::world(rt)))
            }
            Backend::Sim | Backend::Mpi => Err(Error::Unsupported {
                what: format!(
                    "the {:?} backend is not in this build yet; use --backend threads",
                    self.args.backend
                ),
            }),
        }
    }
}

/// Parses the command line (`--help` lists the flags), runs `program`, prints the first error
/// on one line and exits non-zero on failure.
pub fn run<F, Fut>(program: F) -> ExitCode
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let cli = Cli::parse();
    match Launcher::from_args(cli.launch).run(program) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpsim: {e}");
            ExitCode::FAILURE
        }
    }
}
