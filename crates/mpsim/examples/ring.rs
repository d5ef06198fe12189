//! A token goes around a ring of ranks `--iterations` times; rank 0 checks it came back intact.
//!
//! `cargo run --release -p mpsim --example ring -- --ranks 8 --iterations 1000`
//!
//! Rank 0 also prints one line for scripts (`scripts/validate` reads it):
//! `result example=ring backend=B ranks=R iterations=I timed_iterations=I-1 time_ns=T`, the
//! time of trips 2..=I on rank 0 (`world.now_ns()`: host time under threads, virtual time under
//! sim). The first trip is not timed: on threads it includes starting the ranks' threads, which
//! the simulator does not model; once the token is back every rank is in its loop.

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

async fn ring(world: Comm, iterations: u64, backend: &str) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let mut token = [0u64; 1];
    let mut t0 = world.now_ns();
    for i in 0..iterations {
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
        println!("ring: {n} ranks x {iterations} iterations, token intact");
        println!(
            "result example=ring backend={backend} ranks={n} iterations={iterations} \
             timed_iterations={} time_ns={}",
            iterations.saturating_sub(1),
            world.now_ns() - t0
        );
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let iterations = args.iterations;
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let start = std::time::Instant::now();
    match Launcher::from_args(args.launch).run(|world| ring(world, iterations, &backend)) {
        Ok(()) => {
            eprintln!("host time {:.3} s", start.elapsed().as_secs_f64());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpsim: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
