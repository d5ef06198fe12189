//! osu_latency-style blocking ping-pong between exactly 2 ranks (the default `--ranks` here),
//! sizes 1 B, 8 B, 16 B .. 4 MiB:
//! the mpsim twin of `bench/peers/pingpong.c` (same sizes, warm-up and timed iteration counts,
//! same output). One-way latency = round trip / 2 on rank 0's clock (`world.now_ns()`: host time
//! under threads, the predicted virtual time under sim); the whole sweep is repeated `--reps`
//! times and the minimum and median per size are printed. `--sizes` runs some sizes only.
//!
//! `cargo run --release -p mpsim --example pingpong -- --backend threads --reps 5`
//!
//! After the table, one line per size for scripts (`scripts/validate` reads them):
//! `result example=pingpong backend=B ranks=2 size=S reps=R time_ns=MIN median_ns=MED`, the
//! one-way latency in ns.
//!
//! `bench/pingpong-vs-ompi.sh` runs it back to back with Open MPI's pingpong.
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Result};

/// Largest message, 4 MiB.
const MAX_SIZE: usize = 4 << 20;
/// Tag of the ping-pong messages (as in pingpong.c).
const TAG: i32 = 1;
/// Tag of the empty messages of the barrier before each size.
const BARRIER_TAG: i32 = 2;

#[derive(Parser)]
#[command(about = "Blocking ping-pong latency/bandwidth between ranks 0 and 1")]
#[command(mut_arg("ranks", two_ranks))]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Repetitions of the whole size sweep (min and median are taken over them).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Only these sizes in bytes (comma-separated, each at most 4 MiB) [default: 1, 8, 16, ..
    /// 4 MiB].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=MAX_SIZE as u64))]
    sizes: Vec<u64>,
}

/// The launcher's `--ranks` as this program takes it: 2 by default, the only count it runs on
/// (the shared flag's default, 4, would be an error here).
fn two_ranks(ranks: clap::Arg) -> clap::Arg {
    ranks
        .default_value("2")
        .help("Number of ranks: exactly 2, ranks 0 and 1 play ping-pong")
}

/// 1, 8, 16, .. `MAX_SIZE`.
fn all_sizes() -> Vec<usize> {
    let mut sizes = vec![1];
    sizes.extend(std::iter::successors(Some(8), |s| Some(s * 2)).take_while(|&s| s <= MAX_SIZE));
    sizes
}

/// `(warmup, timed)` iterations of a size, as in pingpong.c.
fn iterations(size: usize) -> (u32, u32) {
    if size > 8192 {
        (10, 1000)
    } else {
        (100, 10_000)
    }
}

/// Room for `reps` latencies of each of `sizes` sizes, had before the first message is timed:
/// a `--reps` too large for memory is an out-of-memory error at once, not an abort part way.
fn latency_storage(reps: u32, sizes: usize) -> Result<Vec<Vec<f64>>> {
    (0..sizes)
        .map(|_| {
            let mut l = Vec::new();
            l.try_reserve_exact(reps as usize)
                .map_err(|e| Error::NoMemory {
                    what: format!("--reps {reps}: no room for {reps} latencies of a size: {e}"),
                })?;
            Ok(l)
        })
        .collect()
}

/// One-way latencies in microseconds, `lat[size index][rep]` (meaningful on rank 0).
async fn pingpong(world: Comm, reps: u32, sizes: &[usize]) -> Result<Vec<Vec<f64>>> {
    let (me, peer) = (world.rank(), 1 - world.rank());
    let mut lat = latency_storage(reps, sizes.len())?;
    let mut buf = vec![b'a'; MAX_SIZE];
    for _ in 0..reps {
        for (i, &n) in sizes.iter().enumerate() {
            let (warmup, iters) = iterations(n);
            // Barrier of two ranks: an empty exchange.
            world
                .sendrecv::<u8, u8>(&[], peer, BARRIER_TAG, &mut [], peer, BARRIER_TAG)
                .await?;
            let mut t0 = world.now_ns();
            for k in 0..warmup + iters {
                if k == warmup {
                    t0 = world.now_ns();
                }
                if me == 0 {
                    world.send(&buf[..n], peer, TAG).await?;
                    world.recv(&mut buf[..n], peer, TAG).await?;
                } else {
                    world.recv(&mut buf[..n], peer, TAG).await?;
                    world.send(&buf[..n], peer, TAG).await?;
                }
            }
            let elapsed_us = (world.now_ns() - t0) as f64 / 1e3;
            lat[i].push(elapsed_us / (2.0 * f64::from(iters)));
        }
    }
    Ok(lat)
}

/// Writes the table of pingpong.c from rank 0's latencies, then the lines for scripts.
fn report(
    out: &mut impl Write,
    reps: u32,
    sizes: &[usize],
    lat: &mut [Vec<f64>],
    backend: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "# size_bytes min_latency_us median_latency_us bandwidth_MBps_at_min (reps={reps})"
    )?;
    let mut results = Vec::new();
    for (&size, l) in sizes.iter().zip(lat) {
        l.sort_by(f64::total_cmp);
        let r = l.len();
        let med = if r % 2 == 1 {
            l[r / 2]
        } else {
            (l[r / 2 - 1] + l[r / 2]) / 2.0
        };
        writeln!(out, "{size} {:.3} {med:.3} {:.1}", l[0], size as f64 / l[0])?;
        results.push(format!(
            "result example=pingpong backend={backend} ranks=2 size={size} reps={reps} \
             time_ns={:.1} median_ns={:.1}",
            l[0] * 1e3,
            med * 1e3
        ));
    }
    for r in results {
        writeln!(out, "{r}")?;
    }
    Ok(())
}

pub(crate) fn main() -> ExitCode {
    let args = Args::parse();
    if args.launch.ranks != 2 {
        eprintln!("pingpong needs exactly 2 ranks, got {}", args.launch.ranks);
        return ExitCode::FAILURE;
    }
    let reps = args.reps;
    let sizes: Vec<usize> = if args.sizes.is_empty() {
        all_sizes()
    } else {
        args.sizes.iter().map(|&s| s as usize).collect()
    };
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let launcher = Launcher::from_args(args.launch);
    let run = launcher.run(|world| {
        let (sizes, backend) = (&sizes, &backend);
        async move {
            let mut lat = pingpong(world.clone(), reps, sizes).await?;
            if world.rank() == 0 {
                mpsim::write_stdout(|out| report(out, reps, sizes, &mut lat, backend))?;
            }
            Ok(())
        }
    });
    mpsim::exit_code(run)
}
