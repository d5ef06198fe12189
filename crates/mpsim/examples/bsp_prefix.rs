//! BSP parallel prefix sums (written here from the algorithm's description): `--n` values
//! a_i = i mod 10 + 1 distributed by blocks; each process computes the prefix sums of its
//! block, puts its block's total into every process's array of totals, and after the sync adds
//! the totals of the processes before it. Every process checks its block against the
//! sequential prefix sums.
//!
//! `cargo run --release --example bsp_prefix -- --ranks 4 --n 100000`
//!
//! pid 0 prints `result example=bsp_prefix backend=B ranks=P n=N total=S time_ns=T`.

use std::io::Write;

use clap::Parser;
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "BSP prefix sums of a distributed array; checks every element")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Number of values.
    #[arg(long, default_value_t = 1000)]
    n: u64,
}

/// The first index of process `s`'s block of `n` values on `p` processes.
pub(crate) fn block_start(n: u64, p: u64, s: u64) -> u64 {
    (u128::from(s) * u128::from(n) / u128::from(p)) as u64
}

fn value(i: u64) -> u64 {
    i % 10 + 1
}

/// Prefix sums on one process: its block of the inclusive prefix sums.
pub(crate) async fn prefix(mut ctx: Ctx, n: u64, backend: &str) -> Result<Vec<u64>> {
    let (s, p) = (u64::from(ctx.pid()), u64::from(ctx.nprocs()));
    let (lo, hi) = (block_start(n, p, s), block_start(n, p, s + 1));
    let totals = ctx.push_reg::<u64>(p as usize)?;
    ctx.sync().await?;
    let mut sums: Vec<u64> = (lo..hi)
        .scan(0u64, |acc, i| {
            *acc += value(i);
            Some(*acc)
        })
        .collect();
    ctx.compute_flops(hi - lo).await;
    let total = sums.last().copied().unwrap_or(0);
    for t in 0..ctx.nprocs() {
        ctx.put(t, &totals, s as usize, &[total])?;
    }
    ctx.sync().await?;
    let offset: u64 = ctx.local(&totals)?[..s as usize].iter().sum();
    for x in &mut sums {
        *x += offset;
    }
    ctx.compute_flops(hi - lo + s).await;
    // Check against the sequential prefix sums.
    let mut acc: u64 = (0..lo).map(value).sum();
    for (i, &got) in (lo..hi).zip(&sums) {
        acc += value(i);
        if got != acc {
            return Err(Error::program(format!(
                "pid {s}: prefix sum {i} is {got}, expected {acc}"
            )));
        }
    }
    if s == 0 {
        let all: u64 = ctx.local(&totals)?.iter().sum();
        let t = (ctx.time() * 1e9).round() as u64;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_prefix backend={backend} ranks={p} n={n} total={all} time_ns={t}"
            )
        })?;
    }
    Ok(sums)
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let n = args.n;
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        prefix(ctx, n, &backend).await.map(drop)
    });
    mpsim::exit_code(run)
}
