//! BSP inner product (Bisseling, *Parallel Scientific Computation*, ch. 1; written here from
//! the algorithm): x and y of length `--n` distributed cyclically (element i on process
//! i mod p), x_i = i and y_i = 2; each process computes its partial sum in superstep 0 and
//! puts it into every process's array of partial sums; after the sync every process adds them
//! up and checks the sum against n(n-1).
//!
//! `cargo run --release --example bsp_inprod -- --ranks 4 --n 1000000`
//!
//! pid 0 prints `result example=bsp_inprod backend=B ranks=P n=N sum=S time_ns=T` (T: pid 0's
//! clock at the end, virtual under sim) and the report ends with the table of supersteps.

use std::io::Write;

use clap::Parser;
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "BSP inner product of two distributed vectors; checks the sum")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Length of the vectors.
    #[arg(long, default_value_t = 1000)]
    n: u64,
}

/// The inner product on one process; `backend` names the run in the result line.
pub(crate) async fn inprod(mut ctx: Ctx, n: u64, backend: &str) -> Result<f64> {
    let (s, p) = (u64::from(ctx.pid()), u64::from(ctx.nprocs()));
    let partial = ctx.push_reg::<f64>(p as usize)?;
    ctx.sync().await?;
    // Superstep 1: the local partial sum, broadcast by puts.
    let mine: f64 = (s..n).step_by(p as usize).map(|i| i as f64 * 2.0).sum();
    let local = n.saturating_sub(s).div_ceil(p);
    ctx.compute_flops(2 * local).await;
    for t in 0..ctx.nprocs() {
        ctx.put(t, &partial, s as usize, &[mine])?;
    }
    ctx.sync().await?;
    // Superstep 2: everyone adds the partial sums, in pid order (the same bits everywhere).
    let sum: f64 = ctx.local(&partial)?.iter().sum();
    ctx.compute_flops(p).await;
    let expected = n as f64 * (n as f64 - 1.0);
    if sum != expected {
        return Err(Error::program(format!(
            "pid {s}: inner product {sum}, expected {expected}"
        )));
    }
    if s == 0 {
        let t = (ctx.time() * 1e9).round() as u64;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_inprod backend={backend} ranks={p} n={n} sum={sum} time_ns={t}"
            )
        })?;
    }
    Ok(sum)
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let n = args.n;
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        inprod(ctx, n, &backend).await.map(drop)
    });
    mpsim::exit_code(run)
}
