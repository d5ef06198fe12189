//! A conjugate-gradient solver: `A x = b` for the tridiagonal matrix `A = tridiag(-1, 3, -1)`
//! of `--n` rows per rank (the rows split in blocks, one per rank), with the sparse
//! matrix-vector product by point-to-point halo exchange (each rank sends its first and last
//! entries to its neighbours: `sendrecv`, `PROC_NULL` at the ends) and the dot products by
//! `allreduce`. It stops when the residual's norm is below `--tolerance` times `b`'s, then
//! checks itself: it computes `b - A x` afresh, and fails unless that is as small.
//!
//! `cargo run --release -p mpsim --example cg -- --ranks 64 --n 4096`
//!
//! Rank 0 prints one line for scripts: `result example=cg backend=B ranks=R n=N iterations=I
//! residual=E time_ns=T`, the relative residual checked and the time of the solve on rank 0
//! (virtual time under sim: the local work is charged as flops at the model's speed).
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::Write;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Op, PROC_NULL, Result};

#[derive(Parser)]
#[command(about = "Conjugate gradients on a tridiagonal system; checks its residual")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Rows per rank.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    n: u64,
    /// The relative residual to reach.
    #[arg(long, default_value_t = 1e-10)]
    tolerance: f64,
}

/// What the solve found on one rank.
pub(crate) struct Solved {
    pub iterations: u32,
    /// `|b - A x| / |b|`, computed afresh from `x`.
    pub residual: f64,
}

/// The right-hand side at global row `i`.
fn rhs(i: u64) -> f64 {
    1.0 + ((i * 37) % 101) as f64 / 101.0
}

/// `y = A x` on this rank's rows: its neighbours' edge entries arrive by halo exchange.
async fn matvec(world: &Comm, x: &[f64], y: &mut [f64]) -> Result<()> {
    let (me, size) = (world.rank(), world.size());
    let left = if me == 0 { PROC_NULL } else { me - 1 };
    let right = if me + 1 == size { PROC_NULL } else { me + 1 };
    let (mut from_left, mut from_right) = ([0.0f64], [0.0f64]);
    let last = x.len() - 1;
    world
        .sendrecv(&x[last..], right, 1, &mut from_left, left, 1)
        .await?;
    world
        .sendrecv(&x[..1], left, 2, &mut from_right, right, 2)
        .await?;
    for i in 0..x.len() {
        let l = if i == 0 { from_left[0] } else { x[i - 1] };
        let r = if i == last { from_right[0] } else { x[i + 1] };
        y[i] = 3.0 * x[i] - l - r;
    }
    world.compute_flops(4 * x.len() as u64).await;
    Ok(())
}

/// The dot product of two distributed vectors.
async fn dot(world: &Comm, a: &[f64], b: &[f64]) -> Result<f64> {
    let mine: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    world.compute_flops(2 * a.len() as u64).await;
    let mut all = [0.0];
    world.allreduce(&[mine], &mut all, &Op::sum()).await?;
    Ok(all[0])
}

/// Solves on `n` rows per rank to `tolerance`; every rank checks its residual.
pub(crate) async fn solve(world: &Comm, n: usize, tolerance: f64) -> Result<Solved> {
    let first = u64::from(world.rank()) * n as u64;
    let b: Vec<f64> = (0..n as u64).map(|i| rhs(first + i)).collect();
    let mut x = vec![0.0; n];
    let mut r = b.clone();
    let mut p = r.clone();
    let mut ap = vec![0.0; n];
    let bb = dot(world, &b, &b).await?;
    let mut rr = bb;
    let limit = 10 * n as u32 * world.size() + 10;
    let mut iterations = 0;
    while rr > tolerance * tolerance * bb {
        if iterations == limit {
            return Err(Error::program(format!(
                "rank {}: no convergence in {limit} iterations",
                world.rank()
            )));
        }
        matvec(world, &p, &mut ap).await?;
        let alpha = rr / dot(world, &p, &ap).await?;
        for i in 0..n {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        let next = dot(world, &r, &r).await?;
        let beta = next / rr;
        for i in 0..n {
            p[i] = r[i] + beta * p[i];
        }
        world.compute_flops(6 * n as u64).await;
        rr = next;
        iterations += 1;
    }
    // The check: b - A x afresh, not the recurrence's residual.
    matvec(world, &x, &mut ap).await?;
    let fresh: Vec<f64> = b.iter().zip(&ap).map(|(b, ax)| b - ax).collect();
    let residual = (dot(world, &fresh, &fresh).await? / bb).sqrt();
    if residual > 10.0 * tolerance {
        return Err(Error::program(format!(
            "rank {}: the residual |b - Ax| / |b| is {residual:e} after {iterations} \
             iterations, above {tolerance:e}",
            world.rank()
        )));
    }
    Ok(Solved {
        iterations,
        residual,
    })
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let (n, tolerance) = (args.n as usize, args.tolerance);
    let run = Launcher::from_args(args.launch).run(|world| {
        let backend = backend.clone();
        async move {
            let t0 = world.now_ns();
            let solved = solve(&world, n, tolerance).await?;
            let elapsed = world.now_ns() - t0;
            if world.rank() == 0 {
                mpsim::write_stdout(|out| {
                    writeln!(
                        out,
                        "cg: {} rows on {} ranks, relative residual {:.3e} after {} iterations",
                        n * world.size() as usize,
                        world.size(),
                        solved.residual,
                        solved.iterations
                    )?;
                    writeln!(
                        out,
                        "result example=cg backend={backend} ranks={} n={n} iterations={} \
                         residual={:e} time_ns={elapsed}",
                        world.size(),
                        solved.iterations,
                        solved.residual
                    )
                })?;
            }
            Ok(())
        }
    });
    mpsim::exit_code(run)
}
