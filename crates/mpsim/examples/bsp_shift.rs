//! A BSP shift: every process sends one BSMP message of `--bytes` bytes to the next process,
//! `--supersteps` times, and checks the one it received from the previous. The smallest BSP
//! traffic there is (an h-relation of one message), for measuring the simulator at many
//! processes (`bench/bsp-sim-scale.sh`).
//!
//! `cargo run --release --example bsp_shift -- --ranks 4096 --supersteps 10`
//!
//! pid 0 prints `result example=bsp_shift backend=B ranks=P bytes=N supersteps=S time_ns=T`.

use std::io::Write;

use clap::Parser;
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "BSP shift: one message per process per superstep; checks each")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Payload bytes per message.
    #[arg(long, default_value_t = 8)]
    bytes: usize,
    /// Supersteps.
    #[arg(long, default_value_t = 10)]
    supersteps: u64,
}

/// The shift on one process.
pub(crate) async fn shift(
    mut ctx: Ctx,
    bytes: usize,
    supersteps: u64,
    backend: &str,
) -> Result<()> {
    let (s, p) = (ctx.pid(), ctx.nprocs());
    let from = (s + p - 1) % p;
    for k in 0..supersteps {
        let mut msg = vec![0u8; bytes];
        for (i, b) in msg.iter_mut().enumerate() {
            *b = (s as usize + i + k as usize) as u8;
        }
        ctx.send((s + 1) % p, &[], &msg)?;
        ctx.sync().await?;
        let got = ctx.hpmove().map(|m| m.payload.to_vec());
        let right = got.as_deref().is_some_and(|g| {
            g.len() == bytes
                && g.iter()
                    .enumerate()
                    .all(|(i, &b)| b == (from as usize + i + k as usize) as u8)
        });
        if !right || ctx.qsize() != (0, 0) {
            return Err(Error::program(format!(
                "pid {s}: superstep {k}: not the message pid {from} sent"
            )));
        }
    }
    if s == 0 {
        let t = (ctx.time() * 1e9).round() as u64;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_shift backend={backend} ranks={p} bytes={bytes} \
                 supersteps={supersteps} time_ns={t}"
            )
        })?;
    }
    Ok(())
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let (bytes, supersteps) = (args.bytes, args.supersteps);
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        shift(ctx, bytes, supersteps, &backend).await
    });
    mpsim::exit_code(run)
}
