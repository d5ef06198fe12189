//! `mpsim`: the command-line tool that works *on* mpsim's inputs and outputs rather than running
//! programs (programs are ordinary binaries that call `mpsim::run`).
//!
//! Today it inspects machine models (`docs/models.md`):
//!
//! ```text
//! mpsim model show default            # every parameter of the embedded model, both tables
//! mpsim model show path/to/model.toml # or a directory holding model.toml
//! mpsim model check path/to/model     # "ok: PATH", or the first problem as FILE:LINE: ...
//! ```
//!
//! and makes them, by ping-pong on a backend or from a saved `osu_latency` run:
//!
//! ```text
//! mpsim calibrate --backend threads|mpi [--out DIR] [--reps N] [--max-size BYTES]
//! mpsim calibrate --from-osu FILE [--mode ssend|bsend|both] [--out DIR]
//! ```
//!
//! (`--backend mpi` builds a small C program with the system's `mpicc` and runs it under
//! `mpirun`, since mpsim has no MPI backend of its own yet), and plots traces (`--trace` of a
//! run) as timelines:
//!
//! ```text
//! mpsim plot trace.json -o timeline.svg [--width PX] [--from T] [--to T]
//! ```
//!
//! Each subcommand group lives in its own module (`model`, `calibrate`, `plot`). Errors print
//! on standard error and exit with status 1: one line, except that a failed `mpicc` or
//! `mpirun` is followed by the end of its own standard error. Standard output that cannot be
//! written is such an error too (`mpsim::exit_code`), but a reader that closed it early
//! (`mpsim model show default | head -3`) gets no message.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod calibrate;
mod cdoor;
mod model;
mod plot;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The `mpsim` command line.
#[derive(Parser)]
#[command(
    name = "mpsim",
    version,
    about = "Inspect and calibrate mpsim machine models; plot traces."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommand groups.
#[derive(Subcommand)]
enum Command {
    /// Machine models: print one, or check that it loads.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Measure a machine model by ping-pong on a real backend (or convert osu_latency output)
    /// and write it as files.
    Calibrate(calibrate::CalibrateArgs),
    /// Draw a trace (Chrome trace-event JSON) as an SVG timeline, one lane per rank.
    Plot(plot::PlotArgs),
    /// Compile a C MPI program against mpsim's mpi.h and MPI library (the system C compiler,
    /// `$CC` or `cc`, with the flags added; `-g` too unless a `-g` flag is given, so reports
    /// name source lines).
    Cc(cdoor::CcArgs),
    /// Run a C MPI program built with `mpsim cc`: simulated by default, or `--backend
    /// threads`; the same flags and report as any mpsim program (`--compute` defaults to
    /// `measured`: a rank's CPU time between MPI calls is its compute).
    Run(cdoor::RunArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(cdoor::rewrite_np(std::env::args_os().collect()));
    let result = match cli.command {
        Command::Run(args) => return cdoor::run(args),
        Command::Cc(args) => cdoor::cc(args),
        Command::Model(cmd) => model::run(cmd).map_err(|e| e.to_string()),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Plot(args) => plot::run(args),
    };
    match result {
        Ok(out) => mpsim::exit_code(mpsim::write_stdout(|stdout| {
            stdout.write_all(out.as_bytes())
        })),
        Err(e) => {
            eprintln!("mpsim: {e}");
            ExitCode::FAILURE
        }
    }
}
