//! A BSP total exchange, for throughput (`bench/bsp-exchange.sh` runs it beside Open MPI):
//! each superstep every process sends one message of `--bytes` bytes to every other process,
//! with BSMP (`--mode bsmp`: `send`, then `hpmove` of the p − 1 messages) or DRMA
//! (`--mode drma`: `put` into a registered area), `--supersteps` times after one warm-up
//! superstep; every process checks what it received.
//!
//! `cargo run --release --example bsp_exchange -- --backend threads --ranks 4 --bytes 1024`
//!
//! pid 0 prints `result example=bsp_exchange backend=B ranks=P mode=M bytes=N supersteps=S
//! time_ns=T msgs_per_s=X bytes_per_s=Y`: T is pid 0's time for the timed supersteps (host
//! time on threads), X and Y count the messages and payload bytes of all processes.

use std::io::Write;

use clap::{Parser, ValueEnum};
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// Messages (`send`, `hpmove`).
    Bsmp,
    /// Remote writes (`put`).
    Drma,
}

#[derive(Parser)]
#[command(about = "BSP total exchange of messages or puts; reports messages and bytes per second")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// How the data moves.
    #[arg(long, value_enum, default_value_t = Mode::Bsmp)]
    mode: Mode,
    /// Bytes per message.
    #[arg(long, default_value_t = 1024)]
    bytes: usize,
    /// Supersteps timed.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    supersteps: u64,
}

fn fill(from: u32, k: u64, bytes: usize) -> Vec<u8> {
    (0..bytes)
        .map(|i| (from as usize * 31 + i + k as usize) as u8)
        .collect()
}

/// The exchange on one process.
pub(crate) async fn exchange(
    mut ctx: Ctx,
    mode: Mode,
    bytes: usize,
    supersteps: u64,
    backend: &str,
) -> Result<()> {
    let (s, p) = (ctx.pid(), ctx.nprocs());
    let area = ctx.push_reg::<u8>(bytes * p as usize)?;
    ctx.sync().await?;
    let mut start = None;
    for k in 0..=supersteps {
        if k == 1 {
            start = Some(std::time::Instant::now());
        }
        let data = fill(s, k, bytes);
        for t in (0..p).filter(|&t| t != s) {
            match mode {
                Mode::Bsmp => ctx.send(t, &[], &data)?,
                Mode::Drma => ctx.put(t, &area, s as usize * bytes, &data)?,
            }
        }
        ctx.sync().await?;
        let ok = match mode {
            Mode::Bsmp => {
                let mut from = (0..p).filter(|&t| t != s);
                ctx.qsize() == ((p - 1) as usize, (p - 1) as usize * bytes)
                    && ctx
                        .messages()
                        .all(|m| from.next().is_some_and(|f| m.payload == fill(f, k, bytes)))
            }
            Mode::Drma => {
                let area = ctx.local(&area)?;
                (0..p).filter(|&t| t != s).all(|t| {
                    let at = t as usize * bytes;
                    area[at..at + bytes] == fill(t, k, bytes)[..]
                })
            }
        };
        if !ok {
            return Err(Error::program(format!(
                "pid {s}: superstep {k}: not what was sent"
            )));
        }
    }
    if s == 0 {
        let ns = start.map_or(0, |t| t.elapsed().as_nanos() as u64).max(1);
        let msgs = supersteps * u64::from(p) * u64::from(p - 1);
        let secs = ns as f64 / 1e9;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_exchange backend={backend} ranks={p} mode={} bytes={bytes} \
                 supersteps={supersteps} time_ns={ns} msgs_per_s={:.0} bytes_per_s={:.0}",
                format!("{mode:?}").to_lowercase(),
                msgs as f64 / secs,
                (msgs * bytes as u64) as f64 / secs
            )
        })?;
    }
    Ok(())
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let (mode, bytes, supersteps) = (args.mode, args.bytes, args.supersteps);
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        exchange(ctx, mode, bytes, supersteps, &backend).await
    });
    mpsim::exit_code(run)
}
