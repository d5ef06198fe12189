//! A broadcast of `--bytes` bytes from rank 0, `--iterations` times: every rank checks that it
//! got rank 0's bytes, and rank 0 prints the time per broadcast. The algorithm is the run's
//! choice for the size and rank count (`docs/collectives.md` §4), or what `--coll bcast=NAME`
//! names; the report says which. With `examples/allreduce.rs`, this is what the collective
//! benchmarks (`bench/coll-vs-ompi.sh`, `bench/sim-coll-vs-smpi.sh`) and `scripts/validate`'s
//! collective rows time.
//!
//! `cargo run --release -p mpsim --example bcast -- --ranks 64 --bytes 1048576`
//!
//! Rank 0 prints one line for scripts: `result example=bcast backend=B ranks=R bytes=BYTES
//! iterations=I time_ns=T`, the mean time of one broadcast on rank 0 (after a barrier, so that
//! every rank starts together; `world.now_ns()`: host time under threads, virtual time under
//! sim). Rank 0 finishes a broadcast before the others do: like `osu_bcast`, the time is the
//! root's, over many back-to-back calls.

use std::io::Write;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "Broadcast of bytes from rank 0; checks every rank's copy")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Bytes per broadcast.
    #[arg(long, default_value_t = 8)]
    bytes: usize,
    /// Broadcasts timed.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
}

/// Byte `i` of iteration `it`'s message: every iteration sends different bytes.
fn byte(it: u64, i: usize) -> u8 {
    (i as u64).wrapping_mul(31).wrapping_add(it) as u8
}

async fn bcast(world: Comm, bytes: usize, iterations: u64, backend: &str) -> Result<()> {
    let me = world.rank();
    let mut buf = vec![0u8; bytes];
    world.barrier().await?;
    let t0 = world.now_ns();
    for it in 0..iterations {
        if me == 0 {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = byte(it, i);
            }
        }
        world.bcast(&mut buf, 0).await?;
        if let Some(i) = (0..bytes).find(|&i| buf[i] != byte(it, i)) {
            return Err(Error::program(format!(
                "rank {me}: broadcast {it}: byte {i} is {}, rank 0 sent {}",
                buf[i],
                byte(it, i)
            )));
        }
    }
    let elapsed = world.now_ns() - t0;
    if me == 0 {
        let n = world.size();
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "bcast: {n} ranks x {bytes} B, every rank's copy checked"
            )?;
            writeln!(
                out,
                "result example=bcast backend={backend} ranks={n} bytes={bytes} \
                 iterations={iterations} time_ns={}",
                elapsed / iterations
            )
        })?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let (bytes, iterations) = (args.bytes, args.iterations);
    let run =
        Launcher::from_args(args.launch).run(|world| bcast(world, bytes, iterations, &backend));
    mpsim::exit_code(run)
}
