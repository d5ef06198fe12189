//! `mpsim`: the command-line tool that works *on* mpsim's inputs and outputs rather than running
//! programs (programs are ordinary binaries that call `mpsim::run`).
//!
//! Today it inspects machine models (`DESIGN.md`, "Machine models"):
//!
//! ```text
//! mpsim model show default            # every parameter of the embedded model, both tables
//! mpsim model show path/to/model.toml # or a directory holding model.toml
//! mpsim model check path/to/model     # "ok: PATH", or the first problem as FILE:LINE: ...
//! ```
//!
//! Each subcommand group lives in its own module (`model`); calibration and trace plotting
//! join as further groups. Errors print as one line on standard error and exit with status 1.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod model;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The `mpsim` command line.
#[derive(Parser)]
#[command(name = "mpsim", version, about = "Inspect mpsim machine models.")]
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Model(cmd) => model::run(cmd),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpsim: {e}");
            ExitCode::FAILURE
        }
    }
}
