//! An allreduce of `--count` `f64`s, `--iterations` times: every rank checks that it got the
//! same bits as every other (by comparing its result with rank 0's, broadcast) and that the sum
//! is right, and rank 0 prints the time per allreduce. The algorithm is the run's choice for
//! the count and rank count (`docs/collectives.md` §4: under sim the machine model's cheapest,
//! under threads the fixed table's, or what `--coll` names; the report says which), or the one
//! `--algorithm` forces (`recursive_doubling`, `rabenseifner`, `ring`, `reproducible`).
//!
//! `cargo run --release -p mpsim --example allreduce -- --ranks 64 --count 131072`
//!
//! Rank 0 prints one line for scripts: `result example=allreduce backend=B ranks=R count=C
//! bytes=BYTES algorithm=A iterations=I time_ns=T`, the mean time of one allreduce on rank 0
//! (after a barrier, so that every rank starts together; `world.now_ns()`: host time under
//! threads, virtual time under sim); `algorithm=chosen` when the run chose it.
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::Write;

use clap::Parser;
use mpsim::{Algorithm, Collective, Comm, Error, LaunchArgs, Launcher, Op, Result};

#[derive(Parser)]
#[command(about = "Allreduce of f64s; checks the same bits on every rank")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Elements (f64) per allreduce.
    #[arg(long, default_value_t = 1)]
    count: usize,
    /// Allreduces timed.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// Force this algorithm (recursive_doubling, rabenseifner, ring or reproducible) instead of
    /// the run's choice.
    #[arg(long)]
    algorithm: Option<String>,
}

/// What every rank's program reads.
struct Params {
    count: usize,
    iterations: u64,
    algorithm: Option<Algorithm>,
    backend: String,
}

/// Rank `r`'s contribution: sums of these depend on the order they are added in.
fn input(r: u32, count: usize) -> Vec<f64> {
    (0..count)
        .map(|i| 1.0 / f64::from(r + 1) + (i % 7) as f64 * 0.1)
        .collect()
}

async fn allreduce(world: Comm, params: &Params) -> Result<()> {
    let (me, n, count) = (world.rank(), world.size(), params.count);
    if let Some(algo) = params.algorithm {
        world.force_algorithm(Collective::Allreduce, Some(algo))?;
    }
    let mine = input(me, count);
    let mut sum = vec![0.0; count];
    world.barrier().await?;
    let t0 = world.now_ns();
    for _ in 0..params.iterations {
        world.allreduce(&mine, &mut sum, &Op::sum()).await?;
    }
    let elapsed = world.now_ns() - t0;
    // The same bits everywhere: rank 0's result, broadcast, is this rank's.
    let mut first = sum.clone();
    world.bcast(&mut first, 0).await?;
    let same = first
        .iter()
        .zip(&sum)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    let mut expected = vec![0.0; count];
    for r in 0..n {
        for (e, x) in expected.iter_mut().zip(input(r, count)) {
            *e += x;
        }
    }
    let right = sum
        .iter()
        .zip(&expected)
        .all(|(s, e)| (s - e).abs() <= 1e-9 * e.abs().max(1.0));
    if !same || !right {
        return Err(Error::program(format!(
            "rank {me}: allreduce result {} rank 0's and {} the sequential sum",
            if same { "is" } else { "differs from" },
            if right { "matches" } else { "does not match" },
        )));
    }
    if me == 0 {
        let algorithm = params.algorithm.map_or("chosen", Algorithm::name);
        let per = elapsed / params.iterations;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "allreduce: {n} ranks x {count} f64, the same bits on every rank"
            )?;
            writeln!(
                out,
                "result example=allreduce backend={} ranks={n} count={count} bytes={} \
                 algorithm={algorithm} iterations={} time_ns={per}",
                params.backend,
                count * 8,
                params.iterations,
            )
        })?;
    }
    Ok(())
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let algorithm = match args.algorithm.as_deref() {
        None => None,
        Some(name) => match Collective::Allreduce
            .algorithms()
            .iter()
            .find(|a| a.name() == name)
        {
            Some(&a) => Some(a),
            None => {
                let names: Vec<&str> = Collective::Allreduce
                    .algorithms()
                    .iter()
                    .map(|a| a.name())
                    .collect();
                eprintln!("--algorithm {name}: allreduce has {}", names.join(", "));
                return std::process::ExitCode::FAILURE;
            }
        },
    };
    let params = Params {
        count: args.count,
        iterations: args.iterations,
        algorithm,
        backend: format!("{:?}", args.launch.backend).to_lowercase(),
    };
    let run = Launcher::from_args(args.launch).run(|world| allreduce(world, &params));
    mpsim::exit_code(run)
}
