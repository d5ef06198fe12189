//! `mpsim calibrate --backend threads [--out DIR] [--reps N] [--max-size BYTES]`: a machine
//! model measured by ping-pong on a real backend (`DESIGN.md`, "Machine models").
//!
//! Two ranks run in this process on the threads backend. Rank 0 times blocking round trips to
//! rank 1 with the host clock:
//!
//! 1. a 0-byte standard ping-pong: `rtt0`, and `one_way0 = rtt0 / 2`;
//! 2. for each size (1 B, 8 B, then powers of two up to 4 MiB or `--max-size`), rank 0
//!    `bsend`s `size` bytes (from an attached buffer) and rank 1 answers with a 0-byte standard
//!    send: round trip `rtt_b(size)`;
//! 3. the same with `ssend`: `rtt_s(size)`.
//!
//! Each round trip is the smallest mean over the chunks of a batch of iterations (after a short
//! warm-up; fewer iterations for big messages), and the whole sweep is repeated `--reps` times;
//! the minimum over repetitions is kept. In the simulator (`spec/timing.md` §4) such a round trip takes
//! `D(size)` for the ping (`D_bsend` for a buffered send, `D_ssend` for a synchronous one) plus
//! the answer's one-way time, which is what the 0-byte ping-pong estimates, so
//! `D(size) = rtt(size) - one_way0`, clamped to at least 1 ns.
//!
//! `ack_latency` is fitted as `one_way0`: an acknowledgement is a 0-byte control message that
//! travels the same path as a 0-byte payload message, so its latency is the 0-byte one-way time.
//!
//! Run it on an otherwise idle machine: the two ranks busy two cores, and when other work
//! competes for them round trips include scheduler delays (the minima filter most of that out,
//! but the run takes longer: about 1-2 s idle on 2 cores at the defaults, tens of seconds
//! under load).
//!
//! Everything else (eager threshold, bsend overhead, compute speed, ...) is taken from the
//! default machine model. The model is written with `ModelFile::write_to` (`model.toml`,
//! `ssend.csv`, `bsend.csv`) with a `[meta] description` saying what was measured, how and when.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};
use mpsim::sim::{DelayTable, Model, ModelFile};
use mpsim::{BSEND_OVERHEAD, Backend, Comm, Launcher};

/// The largest message of the default sweep, 4 MiB.
const DEFAULT_MAX_SIZE: u64 = 4 << 20;
/// The largest `--max-size` accepted, 256 MiB (rank 0 allocates buffers of this size).
const MAX_MAX_SIZE: u64 = 256 << 20;
/// Tag of the ping-pong messages.
const TAG: i32 = 1;
/// Tag of the empty exchange that synchronises the ranks before each batch.
const SYNC_TAG: i32 = 2;
/// Bytes a batch of big messages moves: the iteration count is this over the size, clamped.
const BATCH_BYTES: u64 = 128 << 20;
/// Timed iterations for small messages (the most any size gets).
const MAX_ITERS: u64 = 5_000;
/// Timed iterations for the biggest messages (the fewest any size gets).
const MIN_ITERS: u64 = 10;
/// A batch's timed iterations are split into this many chunks, timed separately; the fastest
/// chunk's mean counts (host noise such as a preempted thread only slows a round trip down).
const CHUNKS: u64 = 5;

/// The backends `calibrate` can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CalibrateBackend {
    /// The in-process threads backend: 2 ranks as threads of this process.
    Threads,
}

/// `mpsim calibrate ...`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// The backend to measure.
    #[arg(long, value_enum)]
    backend: CalibrateBackend,
    /// Directory to write the model into (`model.toml`, `ssend.csv`, `bsend.csv`).
    #[arg(long, default_value = "model")]
    out: PathBuf,
    /// Repetitions of the whole sweep; the minimum round trip over them is kept.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Largest message size in bytes (the sweep is 1, 8, then powers of two up to it). Lower
    /// it for a quick run, e.g. in tests.
    #[arg(long, default_value_t = DEFAULT_MAX_SIZE,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MAX_SIZE))]
    max_size: u64,
}

/// Rank 0's measurements: minimum mean round trips in ns over the repetitions.
#[derive(Clone, Debug)]
struct Measured {
    /// The 0-byte ping-pong.
    rtt0: f64,
    /// `bsend` pings with 0-byte answers, per size.
    bsend: Vec<f64>,
    /// `ssend` pings with 0-byte answers, per size.
    ssend: Vec<f64>,
}

/// How a ping is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ping {
    /// A 0-byte standard send (the reference round trip).
    Zero,
    /// A buffered send.
    Bsend,
    /// A synchronous send.
    Ssend,
}

/// 1, 8, 16, ... up to `max` (strictly increasing).
fn sizes(max: u64) -> Vec<u64> {
    let mut sizes = vec![1];
    sizes.extend(std::iter::successors(Some(8u64), |s| Some(s * 2)).take_while(|&s| s <= max));
    sizes
}

/// `(warm-up, timed)` iterations of a batch of `size`-byte pings.
fn iterations(size: u64) -> (u64, u64) {
    let iters = (BATCH_BYTES / size.max(1)).clamp(MIN_ITERS, MAX_ITERS);
    (iters.div_ceil(10), iters)
}

/// One batch: the smallest mean round trip in ns over its chunks (meaningful on rank 0).
async fn batch(world: &Comm, ping: Ping, buf: &mut [u8]) -> mpsim::Result<f64> {
    let (me, peer) = (world.rank(), 1 - world.rank());
    let n = buf.len() as u64;
    let (warmup, iters) = iterations(n);
    let chunk = iters.div_ceil(CHUNKS);
    world
        .sendrecv::<u8, u8>(&[], peer, SYNC_TAG, &mut [], peer, SYNC_TAG)
        .await?;
    let mut best = f64::INFINITY;
    let mut t0 = Instant::now();
    for k in 0..warmup + iters {
        if k >= warmup && (k - warmup) % chunk == 0 {
            if k > warmup {
                best = best.min(t0.elapsed().as_nanos() as f64 / chunk as f64);
            }
            t0 = Instant::now();
        }
        if me == 0 {
            match ping {
                Ping::Zero => world.send::<u8>(&[], peer, TAG).await?,
                Ping::Bsend => world.bsend(buf, peer, TAG).await?,
                Ping::Ssend => world.ssend(buf, peer, TAG).await?,
            }
            world.recv::<u8>(&mut [], peer, TAG).await?;
        } else {
            world.recv(buf, peer, TAG).await?;
            world.send::<u8>(&[], peer, TAG).await?;
        }
    }
    let last = (iters - 1) % chunk + 1;
    Ok(best.min(t0.elapsed().as_nanos() as f64 / last as f64))
}

/// The whole measurement on one rank; rank 0's result is the one that counts.
async fn measure(world: Comm, sizes: &[u64], reps: u32) -> mpsim::Result<Measured> {
    let max = sizes.last().copied().unwrap_or(1) as usize;
    let mut buf = vec![b'a'; max];
    // Room for two messages in flight, so that a buffered message whose slot is not yet
    // reclaimed never makes the next `bsend` overflow.
    world.buffer_attach(2 * (max + BSEND_OVERHEAD))?;
    let mut m = Measured {
        rtt0: f64::INFINITY,
        bsend: vec![f64::INFINITY; sizes.len()],
        ssend: vec![f64::INFINITY; sizes.len()],
    };
    for _ in 0..reps {
        m.rtt0 = m.rtt0.min(batch(&world, Ping::Zero, &mut []).await?);
        for (i, &n) in sizes.iter().enumerate() {
            let b = &mut buf[..n as usize];
            m.bsend[i] = m.bsend[i].min(batch(&world, Ping::Bsend, b).await?);
            m.ssend[i] = m.ssend[i].min(batch(&world, Ping::Ssend, b).await?);
        }
    }
    world.buffer_detach().await?;
    Ok(m)
}

/// `delay(s) = rtt(s) - one_way0` in whole ns, at least 1.
fn delay_ns(rtt: f64, one_way0: f64) -> u64 {
    (rtt - one_way0).round().max(1.0) as u64
}

/// The delay table `name` from round trips per size.
fn table(
    name: &str,
    sizes: &[u64],
    rtts: &[f64],
    one_way0: f64,
) -> Result<DelayTable, mpsim::sim::ModelError> {
    let points = sizes
        .iter()
        .zip(rtts)
        .map(|(&s, &rtt)| (s, delay_ns(rtt, one_way0)))
        .collect();
    DelayTable::new(name, points)
}

/// Runs `mpsim calibrate`; returns what to print.
pub fn run(args: CalibrateArgs) -> Result<String, String> {
    let CalibrateBackend::Threads = args.backend;
    let sizes = sizes(args.max_size);
    let reps = args.reps;
    eprintln!(
        "calibrating the threads backend: 2 ranks, {} sizes up to {} B, {reps} rep(s)...",
        sizes.len(),
        sizes.last().copied().unwrap_or(1)
    );
    let started = Instant::now();
    let result: Mutex<Option<Measured>> = Mutex::new(None);
    Launcher::new(2)
        .backend(Backend::Threads)
        .run(|world| {
            let (result, sizes) = (&result, &sizes);
            async move {
                let rank = world.rank();
                let m = measure(world, sizes, reps).await?;
                if rank == 0 {
                    *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(m);
                }
                Ok(())
            }
        })
        .map_err(|e| format!("calibration run failed: {e}"))?;
    let elapsed = started.elapsed();
    let m = result
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or("calibration run produced no measurements")?;

    let one_way0 = m.rtt0 / 2.0;
    let ack_latency_ns = (one_way0.round() as u64).max(1);
    let bsend = table("bsend", &sizes, &m.bsend, one_way0).map_err(|e| e.to_string())?;
    let ssend = table("ssend", &sizes, &m.ssend, one_way0).map_err(|e| e.to_string())?;
    let model = Model {
        ssend,
        bsend,
        ack_latency_ns,
        ..Model::default_machine()
    };
    let when = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let description = format!(
        "Calibrated by `mpsim calibrate --backend threads --reps {reps} --max-size {}` \
         (mpsim {}) at {when} s since the Unix epoch, on this host ({} {}, {cores} cores): \
         2 ranks of the in-process threads backend, blocking ping-pong timed on rank 0, \
         minimum over {reps} rep(s) x {CHUNKS} chunks of the mean round trip of a chunk of iterations. bsend table: bsend ping, \
         0-byte standard answer; ssend table: ssend ping, 0-byte answer; \
         delay = round trip - one_way0, where one_way0 = half a 0-byte ping-pong \
         ({one_way0:.0} ns), at least 1 ns. ack_latency = one_way0 (an ack is a 0-byte control \
         message). Other parameters (eager threshold, bsend overhead, compute, BSP) are the \
         default machine's.",
        args.max_size,
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    let file = ModelFile {
        model,
        description: Some(description),
        path: args.out.join("model.toml"),
        ssend_table: args.out.join("ssend.csv"),
        bsend_table: args.out.join("bsend.csv"),
    };
    file.write_to(&args.out).map_err(|e| e.to_string())?;

    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        s,
        "# 0-byte round trip {:.0} ns; ack_latency = one_way0 = {ack_latency_ns} ns; \
         measured in {:.1} s",
        m.rtt0,
        elapsed.as_secs_f64()
    );
    let _ = writeln!(s, "{:>10} {:>12} {:>12}", "size_B", "bsend_ns", "ssend_ns");
    for ((&size, &(_, b)), &(_, ss)) in sizes
        .iter()
        .zip(file.model.bsend.points())
        .zip(file.model.ssend.points())
    {
        let _ = writeln!(s, "{size:>10} {b:>12} {ss:>12}");
    }
    let _ = writeln!(s, "wrote {}", args.out.display());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_strictly_increase_and_stop_at_max() {
        assert_eq!(sizes(1), vec![1]);
        assert_eq!(sizes(7), vec![1]);
        assert_eq!(sizes(64), vec![1, 8, 16, 32, 64]);
        assert_eq!(sizes(100), vec![1, 8, 16, 32, 64]);
        let all = sizes(DEFAULT_MAX_SIZE);
        assert_eq!((all.len(), all.last()), (21, Some(&DEFAULT_MAX_SIZE)));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn delays_are_clamped_to_one_ns() {
        assert_eq!(delay_ns(1000.0, 300.0), 700);
        assert_eq!(delay_ns(200.0, 300.0), 1);
        assert_eq!(delay_ns(300.4, 300.0), 1);
    }

    #[test]
    fn iteration_counts_shrink_for_big_messages() {
        assert_eq!(iterations(1), (500, MAX_ITERS));
        assert_eq!(iterations(DEFAULT_MAX_SIZE), (4, 32));
        assert_eq!(iterations(256 << 20), (1, MIN_ITERS));
    }
}
