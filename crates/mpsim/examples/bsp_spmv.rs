//! BSP sparse matrix-vector product with DRMA (written here from the algorithm's
//! description): u = A v for an n x n sparse matrix distributed by blocks of rows, v by the
//! same blocks. Row i has 4 on the diagonal, -1 beside it, and 0.5 in column (7i + 3) mod n
//! (a long-range entry, so processes need values from far away). v_j = j + 1.
//!
//! 1. Each process registers its part of v and an area for the values it needs from others
//!    (its size differs per process), and sets its part of v.
//! 2. It gets every value it needs from its owner, one `get` per run of consecutive indices.
//! 3. It multiplies its rows, and checks each u_i against the value computed directly.
//!
//! `cargo run --release --example bsp_spmv -- --ranks 4 --n 100000`
//!
//! pid 0 prints `result example=bsp_spmv backend=B ranks=P n=N gets=G time_ns=T` (G: its
//! number of gets).

use std::collections::BTreeMap;
use std::io::Write;

use clap::Parser;
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "BSP sparse matrix-vector product with gets; checks every entry")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Order of the matrix.
    #[arg(long, default_value_t = 1000)]
    n: u64,
}

fn block_start(n: u64, p: u64, s: u64) -> u64 {
    (u128::from(s) * u128::from(n) / u128::from(p)) as u64
}

/// The process whose block holds index `j`.
fn owner(n: u64, p: u64, j: u64) -> u64 {
    (0..p)
        .collect::<Vec<_>>()
        .partition_point(|&s| block_start(n, p, s + 1) <= j) as u64
}

/// Row `i`: (column, value), columns distinct.
pub(crate) fn row(n: u64, i: u64) -> Vec<(u64, f64)> {
    let mut r = BTreeMap::new();
    r.insert(i, 4.0);
    if i > 0 {
        r.insert(i - 1, -1.0);
    }
    if i + 1 < n {
        r.insert(i + 1, -1.0);
    }
    r.entry((7 * i + 3) % n).or_insert(0.5);
    r.into_iter().collect()
}

fn v(j: u64) -> f64 {
    (j + 1) as f64
}

/// The product on one process: its block of u.
pub(crate) async fn spmv(mut ctx: Ctx, n: u64, backend: &str) -> Result<Vec<f64>> {
    let (s, p) = (u64::from(ctx.pid()), u64::from(ctx.nprocs()));
    let (lo, hi) = (block_start(n, p, s), block_start(n, p, s + 1));
    let rows: Vec<Vec<(u64, f64)>> = (lo..hi).map(|i| row(n, i)).collect();
    // The values needed from others, in index order, and where each lands in `ghosts`.
    let mut needed: BTreeMap<u64, usize> = BTreeMap::new();
    for r in &rows {
        for &(j, _) in r {
            if !(lo..hi).contains(&j) {
                needed.insert(j, 0);
            }
        }
    }
    for (slot, place) in needed.values_mut().enumerate() {
        *place = slot;
    }
    let vreg = ctx.push_reg::<f64>((hi - lo) as usize)?;
    let ghosts = ctx.push_reg::<f64>(needed.len())?;
    for (k, x) in ctx.local_mut(&vreg)?.iter_mut().enumerate() {
        *x = v(lo + k as u64);
    }
    ctx.sync().await?;
    // One get per run of consecutive indices with one owner.
    let mut gets = 0;
    let idx: Vec<u64> = needed.keys().copied().collect();
    let mut k = 0;
    while k < idx.len() {
        let t = owner(n, p, idx[k]);
        let mut e = k + 1;
        while e < idx.len() && idx[e] == idx[e - 1] + 1 && owner(n, p, idx[e]) == t {
            e += 1;
        }
        let start = (idx[k] - block_start(n, p, t)) as usize;
        ctx.get_into(t as u32, &vreg, start, &ghosts, k, e - k)?;
        gets += 1;
        k = e;
    }
    ctx.sync().await?;
    let (vl, gh) = (ctx.local(&vreg)?, ctx.local(&ghosts)?);
    let value = |j: u64| {
        if (lo..hi).contains(&j) {
            vl[(j - lo) as usize]
        } else {
            gh[needed[&j]]
        }
    };
    let u: Vec<f64> = rows
        .iter()
        .map(|r| r.iter().map(|&(j, a)| a * value(j)).sum())
        .collect();
    let nnz: usize = rows.iter().map(Vec::len).sum();
    ctx.compute_flops(2 * nnz as u64).await;
    for (i, (r, &got)) in (lo..).zip(rows.iter().zip(&u)) {
        let expected: f64 = r.iter().map(|&(j, a)| a * v(j)).sum();
        if got != expected {
            return Err(Error::program(format!(
                "pid {s}: u[{i}] = {got}, expected {expected}"
            )));
        }
    }
    if s == 0 {
        let t = (ctx.time() * 1e9).round() as u64;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_spmv backend={backend} ranks={p} n={n} gets={gets} time_ns={t}"
            )
        })?;
    }
    Ok(u)
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let n = args.n;
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        spmv(ctx, n, &backend).await.map(drop)
    });
    mpsim::exit_code(run)
}
