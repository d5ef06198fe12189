//! A token goes around a ring of ranks `--iterations` times; rank 0 checks it came back intact.
//!
//! `cargo run --release -p mpsim --example ring -- --ranks 8 --iterations 1000`
//!
//! Rank 0 also prints one line for scripts (`scripts/validate` reads it):
//! `result example=ring backend=B ranks=R iterations=I timed_iterations=I-1 time_ns=T`, the
//! time of trips 2..=I on rank 0 (`world.now_ns()`: host time under threads, virtual time under
//! sim). The first trip is not timed: on threads it includes starting the ranks' threads, which
//! the simulator does not model; once the token is back every rank is in its loop.
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::Write;

use clap::Parser;
use mpsim::{Comm, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "Token ring")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Trips around the ring.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
}

/// What every rank's program reads (one reference: a simulation holds one future per rank, so
/// what a future keeps is memory per rank).
struct Params {
    iterations: u64,
    backend: String,
}

/// One rank's program.
async fn ring(world: Comm, params: &Params) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let mut token = [0u64; 1];
    let mut t0 = world.now_ns();
    for i in 0..params.iterations {
        if me == 0 {
            world.send(&[i * n as u64], right, 7).await?;
            world.recv(&mut token, left, 7).await?;
            assert_eq!(token[0], i * n as u64 + n as u64 - 1, "token damaged");
            if i == 0 {
                t0 = world.now_ns();
            }
        } else {
            world.recv(&mut token, left, 7).await?;
            world.send(&[token[0] + 1], right, 7).await?;
        }
    }
    if me == 0 {
        let (iterations, time_ns) = (params.iterations, world.now_ns() - t0);
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "ring: {n} ranks x {iterations} iterations, token intact"
            )?;
            writeln!(
                out,
                "result example=ring backend={} ranks={n} iterations={iterations} \
                     timed_iterations={} time_ns={time_ns}",
                params.backend,
                iterations.saturating_sub(1),
            )
        })?;
    }
    Ok(())
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let params = Params {
        iterations: args.iterations,
        backend: format!("{:?}", args.launch.backend).to_lowercase(),
    };
    let start = std::time::Instant::now();
    let run = Launcher::from_args(args.launch).run(|world| ring(world, &params));
    if run.is_ok() {
        eprintln!("host time {:.3} s", start.elapsed().as_secs_f64());
    }
    mpsim::exit_code(run)
}
