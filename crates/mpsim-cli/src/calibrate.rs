//! `mpsim calibrate`: a machine model measured by ping-pong on a real backend, or converted from
//! an `osu_latency` run (`docs/models.md`; `docs/timing.md` §4).
//!
//! ```text
//! mpsim calibrate --backend threads|mpi [--out DIR] [--reps N] [--max-size BYTES]
//!                 [--bsp [--bsp-procs P]]       (threads: BSP r, g, l; calibrate/bsp.rs)
//! mpsim calibrate --from-osu FILE [--mode ssend|bsend|both] [--out DIR]
//! ```
//!
//! The work splits into what differs per source and what must not:
//!
//! - measurement, per backend: `threads` (two ranks of the threads backend in this process,
//!   [`threads`]) and `mpi` (a C program built with the system's `mpicc` and run under its
//!   `mpirun`, [`mpi`]). Both follow one [`Plan`]: the sizes and iteration counts are computed
//!   here and handed to the C program on its command line, so the two time the same batches;
//! - fitting and writing, shared: [`fit`] turns round trips into delays, [`write_model`] writes
//!   the files and [`report`] the table printed on success. The OSU conversion ([`osu`]) skips
//!   the fit (its figures already are one-way delays) but writes and reports the same way.
//!
//! # The measurement
//!
//! Rank 0 times blocking round trips to rank 1 with the host's monotonic clock:
//!
//! 1. a 0-byte standard ping-pong: `rtt0`, and `one_way0 = rtt0 / 2`;
//! 2. for each size (1 B, 8 B, then powers of two up to 4 MiB or `--max-size`), rank 0
//!    `bsend`s `size` bytes (from an attached buffer) and rank 1 answers with a 0-byte standard
//!    send: round trip `rtt_b(size)`;
//! 3. the same with `ssend`: `rtt_s(size)`;
//! 4. threads only: both ranks send `size` bytes with standard sends, as real programs do
//!    (a symmetric ping-pong): round trip `rtt_std(size)`.
//!
//! Each round trip is the mean over a batch of iterations (after a short warm-up; fewer
//! iterations for big messages; [`CHUNKS`] says why not the fastest part of it), and the whole
//! sweep is repeated `--reps` times; the minimum over repetitions is kept
//! ([`Measured::record`]).
//!
//! The threads backend also measures the processor side of the model ([`Cpu`], the timing
//! extensions of `docs/extensions.md`), `--reps` times, minimum kept:
//!
//! - X1, per-request overhead: a burst exchange (both ranks post [`BURST`] receives and
//!   [`BURST`] standard 8-byte sends, nonblocking, then `wait_all`) against the symmetric
//!   8-byte ping-pong of blocking calls. The simulator times a burst round as
//!   `BURST (o_s + o_r) + D(8)` and a blocking one-way trip as `D(8)`, so
//!   `o_s + o_r = (round - rtt_std(8) / 2) / BURST`; `send_overhead` (`o_s`) is the time rank
//!   0's sends took alone per request (at most that sum), `recv_overhead` (`o_r`) the rest.
//! - X2, oversubscription: `cores` is this host's available parallelism; `wake_latency` comes
//!   from an 8-byte token passed around a ring of `cores + 1` ranks by blocking standard
//!   sends: every hop wakes a waiting rank, so the simulator times a hop as
//!   `rtt_std(8) / 2 + wake_latency`.
//! - X2, hand-over: `handover` is what a hop of the symmetric 8-byte ping-pong takes, with both
//!   ranks bound to one core (run from a thread bound to it), beyond a one-way trip and
//!   `wake_latency`: the hop hands the core from one rank to the other, which a wake-up alone
//!   does not cover. 0 where a thread cannot be bound.
//! - X2, concurrent compute: `concurrent_slowdown` is how much slower a memory-bound sweep
//!   runs per thread when every core runs one at once than alone ([`contention`]).
//! - X3, measured compute: the mean measured compute per stretch of a simulated 2-rank
//!   ping-pong that computes nothing (clock reads and simulator work): `measure_overhead`.
//!
//! # The fit
//!
//! In the simulator (`docs/timing.md` §4) a one-way trip of a message sent and received by
//! blocking calls takes `D(size)`, using `D_bsend` for a buffered or eager standard send and
//! `D_ssend` for a synchronous or rendezvous one (nonblocking calls add X1's per-request
//! overhead, which blocking calls do not pay). So:
//!
//! - `D_bsend(size) = rtt_std(size) / 2` for sizes up to the eager threshold (the table eager
//!   standard sends use, fitted from the sends that use it); beyond it, and when `rtt_std` was
//!   not measured (`--backend mpi`), `rtt_b(size) - one_way0` (a bsend ping plus a 0-byte
//!   answer that takes `one_way0`);
//! - `D_ssend(size) = rtt_std(size) / 2` beyond the eager threshold (standard sends of that
//!   size are rendezvous, timed by `D_ssend`), else `rtt_s(size) - one_way0`;
//! - every delay at least 1 ns. `ack_latency` is fitted as `one_way0`: an acknowledgement is a
//!   0-byte control message that travels the same path as a 0-byte payload message.
//!
//! Run it on an otherwise idle machine: the two ranks busy two cores, and when other work
//! competes for them round trips include scheduler delays (the minima filter most of that out,
//! but the run takes longer: about 1-2 s idle on 2 cores at the defaults, tens of seconds
//! under load).
//!
//! Everything else (eager threshold, bsend overhead, compute speed, ...) is taken from the
//! default machine model. The model is written with `ModelFile::write_to` (`model.toml`,
//! `ssend.csv`, `bsend.csv`) with a `[meta] description` saying what was measured, how and when.

mod bsp;
mod contention;
mod mpi;
mod osu;
mod threads;

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{ArgGroup, Args, ValueEnum};
use mpsim::sim::{CpuModel, DelayTable, Model, ModelFile};
use mpsim_sim::MODEL_TOML;

/// The largest message of the default sweep, 4 MiB.
const DEFAULT_MAX_SIZE: u64 = 4 << 20;
/// The largest `--max-size` accepted, 256 MiB (rank 0 allocates buffers of this size).
const MAX_MAX_SIZE: u64 = 256 << 20;
/// Bytes a batch of big messages moves: the iteration count is this over the size, clamped.
const BATCH_BYTES: u64 = 128 << 20;
/// Timed iterations for small messages (the most any size gets).
const MAX_ITERS: u64 = 5_000;
/// Timed iterations for the biggest messages (the fewest any size gets).
const MIN_ITERS: u64 = 10;
/// Messages each way per round of the burst exchange (X1).
const BURST: u64 = 16;
/// A batch's timed iterations are split into this many chunks, timed separately; the fastest
/// chunk's mean counts. One: a batch's mean over all its timed iterations, jitter included, as
/// a program's loop sees it (the examples `scripts/validate` compares with time whole loops,
/// and it reduces both sides alike); the minimum over repetitions still drops whole disturbed
/// batches. With 5 (until 2026-11-24) the fastest fifth of a batch described a
/// machine quieter than a whole loop ever sees, the more so the more batches were taken: with
/// 6 rounds of `scripts/validate` instead of 3, the 2-rank predictions fell 13-32% below the
/// measured times.
const CHUNKS: u64 = 1;

/// The backends `calibrate` can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CalibrateBackend {
    /// The in-process threads backend: 2 ranks as threads of this process.
    Threads,
    /// The system MPI (Open MPI here): a C program built with `mpicc -O2`, run by
    /// `mpirun -np 2`. Not mpsim's mpi backend: a model describes the machine and its MPI
    /// library, to which the simulator adds no cost of mpsim's own layer, so the C program,
    /// without that layer, is the measure.
    Mpi,
}

/// Which delay tables an `osu_latency` run fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OsuMode {
    /// Only `ssend.csv`; `bsend.csv` is the default model's.
    Ssend,
    /// Only `bsend.csv`; `ssend.csv` is the default model's.
    Bsend,
    /// Both tables (the default).
    Both,
}

/// `mpsim calibrate ...`.
#[derive(Args)]
#[command(group(ArgGroup::new("source").required(true).args(["backend", "from_osu"])))]
pub struct CalibrateArgs {
    /// The backend to measure by ping-pong (2 ranks on this host).
    #[arg(long, value_enum)]
    backend: Option<CalibrateBackend>,
    /// Convert the output of OSU micro-benchmarks' `osu_latency` (saved to FILE) instead of
    /// measuring. Its one-way latency per size becomes the delay (us x 1000 = ns); a 0-byte
    /// row, or else the smallest size, gives the ack latency. osu_latency times standard sends
    /// only (MPI_Send echoed by MPI_Send), so by default the same table serves ssend and
    /// bsend: neither a synchronous handshake nor a buffer copy is measured apart.
    #[arg(long, value_name = "FILE")]
    from_osu: Option<PathBuf>,
    /// With --from-osu: which tables the osu_latency figures fill; the other comes from the
    /// default model.
    // `conflicts_with` rather than `requires = "from_osu"`: clap waives a requirement that
    // conflicts with a present argument, and the `source` group makes `--from-osu` conflict
    // with `--backend`, so `--backend threads --mode ssend` would pass.
    #[arg(long, value_enum, default_value_t = OsuMode::Both, conflicts_with = "backend")]
    mode: OsuMode,
    /// Directory to write the model into (`model.toml`, `ssend.csv`, `bsend.csv`).
    #[arg(long, default_value = "model")]
    out: PathBuf,
    /// Repetitions of the whole sweep; the minimum round trip over them is kept.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..),
          conflicts_with = "from_osu")]
    reps: u32,
    /// Largest message size in bytes (the sweep is 1, 8, then powers of two up to it; at
    /// least 8: one size would make a table of one point, the same delay for every size).
    /// Lower it for a quick run, e.g. in tests.
    #[arg(long, default_value_t = DEFAULT_MAX_SIZE,
          value_parser = clap::value_parser!(u64).range(8..=MAX_MAX_SIZE),
          conflicts_with = "from_osu")]
    max_size: u64,
    /// With --backend threads: also measure the BSP parameters (r, g, l) on --bsp-procs BSP
    /// processes, bspbench's way (a DAXPY rate; h-relations of h = 0, p, 2p, ... 256 words, a
    /// least-squares fit T(h) = l + g*8h), and write them into the model: r as
    /// `[compute] flops_per_s`, g and l as `[bsp]`.
    #[arg(long, conflicts_with = "from_osu")]
    bsp: bool,
    /// Processes of the BSP measurement (at least 2).
    #[arg(long, default_value_t = 2, requires = "bsp", value_parser = clap::value_parser!(u32).range(2..=1024))]
    bsp_procs: u32,
}

/// What both backends measure: the sizes, the repetitions, and per size the iteration counts
/// ([`iterations`]).
#[derive(Clone, Debug)]
struct Plan {
    /// 1, 8, 16, ... up to `--max-size` (strictly increasing).
    sizes: Vec<u64>,
    /// Repetitions of the whole sweep.
    reps: u32,
}

impl Plan {
    fn new(max_size: u64, reps: u32) -> Self {
        let mut sizes = vec![1];
        sizes.extend(
            std::iter::successors(Some(8u64), |s| Some(s * 2)).take_while(|&s| s <= max_size),
        );
        Self { sizes, reps }
    }

    /// The largest size measured.
    fn max_size(&self) -> u64 {
        self.sizes.last().copied().unwrap_or(1)
    }
}

/// `(warm-up, timed)` iterations of a batch of `size`-byte pings.
fn iterations(size: u64) -> (u64, u64) {
    let iters = (BATCH_BYTES / size.max(1)).clamp(MIN_ITERS, MAX_ITERS);
    (iters.div_ceil(10), iters)
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
    /// A standard send answered by a standard send of the same size (threads only).
    Standard,
}

/// The processor side of the model (extensions X1–X3; module doc, "The measurement"): minima
/// in ns over the repetitions so far (infinite until measured).
#[derive(Clone, Debug)]
struct Cpu {
    /// A round of the burst exchange.
    burst_round: f64,
    /// Rank 0's `BURST` sends of a burst round alone.
    burst_sends: f64,
    /// The symmetric 8-byte standard ping-pong of a 2-rank run.
    rtt_small: f64,
    /// One hop of an 8-byte token around a ring of `cores + 1` ranks.
    hop_oversubscribed: f64,
    /// The symmetric 8-byte standard ping-pong of 2 ranks bound to one core (infinite when
    /// not measured).
    rtt_one_core: f64,
    /// Measured compute per stretch of a simulated rank that computes nothing.
    stretch: f64,
    /// A memory-bound sweep alone, ns ([`contention`]).
    sweep_alone: f64,
    /// The same sweep with every core running one at once, ns.
    sweep_together: f64,
    /// This host's available parallelism.
    cores: u32,
}

impl Cpu {
    /// Nothing measured yet.
    fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            burst_round: f64::INFINITY,
            burst_sends: f64::INFINITY,
            rtt_small: f64::INFINITY,
            hop_oversubscribed: f64::INFINITY,
            rtt_one_core: f64::INFINITY,
            stretch: f64::INFINITY,
            sweep_alone: f64::INFINITY,
            sweep_together: f64::INFINITY,
            cores: u32::try_from(cores).unwrap_or(u32::MAX - 1),
        }
    }

    /// `(send_overhead, recv_overhead)` in ns (X1).
    fn overheads(&self) -> (u64, u64) {
        let per_pair = (self.burst_round - self.rtt_small / 2.0) / BURST as f64;
        let o = nonneg_ns(per_pair);
        let send = nonneg_ns(self.burst_sends / BURST as f64).min(o);
        (send, o - send)
    }

    /// The wake-up latency of a blocked rank when ranks outnumber cores, ns (X2): what a hop
    /// of the oversubscribed ring takes beyond a one-way trip.
    fn wake_latency(&self) -> u64 {
        nonneg_ns(self.hop_oversubscribed - self.rtt_small / 2.0)
    }

    /// The hand-over of a core from one rank to another, ns (X2): what a hop between two ranks
    /// on one core takes beyond a one-way trip and a wake-up (0 when not measured).
    fn handover(&self) -> u64 {
        nonneg_ns(self.rtt_one_core / 2.0 - self.rtt_small / 2.0 - self.wake_latency() as f64)
    }

    /// The model's processor part.
    fn model(&self) -> CpuModel {
        let (send_overhead_ns, recv_overhead_ns) = self.overheads();
        CpuModel {
            send_overhead_ns,
            recv_overhead_ns,
            cores: Some(self.cores),
            wake_latency_ns: self.wake_latency(),
            handover_ns: self.handover(),
            measure_overhead_ns: nonneg_ns(self.stretch),
            concurrent_slowdown_ppm: if self.cores >= 2 {
                nonneg_ns((self.sweep_together / self.sweep_alone - 1.0) * 1e6)
                    .min(1_000_000_000_000)
            } else {
                0
            },
        }
    }
}

/// `ns` rounded to whole ns, 0 if negative or not finite.
fn nonneg_ns(ns: f64) -> u64 {
    if ns.is_finite() {
        ns.round().max(0.0) as u64
    } else {
        0
    }
}

/// Rank 0's measurements: minimum mean round trips in ns over the repetitions so far
/// (infinite until a batch is recorded).
#[derive(Clone, Debug)]
struct Measured {
    /// The 0-byte ping-pong.
    rtt0: f64,
    /// `bsend` pings with 0-byte answers, per size of the plan.
    bsend: Vec<f64>,
    /// `ssend` pings with 0-byte answers, per size of the plan.
    ssend: Vec<f64>,
    /// Symmetric standard-send ping-pongs, per size of the plan (threads only).
    standard: Vec<f64>,
    /// The processor side (threads only).
    cpu: Option<Cpu>,
}

impl Measured {
    /// Nothing measured yet for `n` sizes.
    fn new(n: usize) -> Self {
        Self {
            rtt0: f64::INFINITY,
            bsend: vec![f64::INFINITY; n],
            ssend: vec![f64::INFINITY; n],
            standard: vec![f64::INFINITY; n],
            cpu: None,
        }
    }

    /// Keeps `rtt` ns for the `i`-th size (ignored for [`Ping::Zero`]) if it is the fastest yet.
    fn record(&mut self, ping: Ping, i: usize, rtt: f64) {
        let slot = match ping {
            Ping::Zero => &mut self.rtt0,
            Ping::Bsend => &mut self.bsend[i],
            Ping::Ssend => &mut self.ssend[i],
            Ping::Standard => &mut self.standard[i],
        };
        *slot = slot.min(rtt);
    }
}

/// Rank 0's measurements and a phrase saying what ran them, for the model's description.
struct Measurement {
    measured: Measured,
    /// e.g. "2 ranks of the in-process threads backend".
    how: String,
}

/// Runs `mpsim calibrate`; returns what to print.
pub fn run(args: CalibrateArgs) -> Result<String, String> {
    check_out(&args.out)?;
    if let Some(file) = &args.from_osu {
        return osu::run(file, args.mode, &args.out);
    }
    let backend = args
        .backend
        .ok_or("give --backend threads|mpi or --from-osu FILE")?;
    let plan = Plan::new(args.max_size, args.reps);
    let name = backend
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    eprintln!(
        "calibrating the {name} backend: 2 ranks, {} sizes up to {} B, {} rep(s)...",
        plan.sizes.len(),
        plan.max_size(),
        plan.reps
    );
    let started = Instant::now();
    let Measurement { measured: m, how } = match backend {
        CalibrateBackend::Threads => threads::measure(&plan)?,
        CalibrateBackend::Mpi => mpi::measure(&plan)?,
    };
    let bsp = match (args.bsp, backend) {
        (false, _) => None,
        (true, CalibrateBackend::Threads) => {
            eprintln!(
                "measuring BSP r, g and l on {} processes...",
                args.bsp_procs
            );
            Some(bsp::measure(args.bsp_procs, args.reps)?)
        }
        (true, CalibrateBackend::Mpi) => {
            return Err("--bsp measures on the threads backend only".into());
        }
    };
    let elapsed = started.elapsed();
    let (mut model, one_way0) = fit(&m, &plan.sizes)?;
    let mut bsp_note = String::new();
    if let Some(b) = &bsp {
        model.flops_per_s = b.r_flops_per_s;
        model.bsp_g_ps_per_byte = Some(b.g_ps_per_byte);
        model.bsp_l_ns = Some(b.l_ns);
        bsp_note = format!(
            " BSP (--bsp, {} processes of the threads backend, bspbench's method): \
             flops_per_s = r of a DAXPY loop of {} doubles; g and l a least-squares fit of \
             T(h) = l + g*8h over h-relations of h = p..{} words, {} supersteps each, minimum \
             over the reps; an empty superstep took {:.0} ns.",
            b.procs,
            1024,
            bsp::HMAX,
            bsp::SYNCS,
            b.empty_ns
        );
    }
    let reps = plan.reps;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let tables = if m.cpu.is_some() {
        let c = &model.cpu;
        format!(
            "bsend table up to the eager threshold and ssend table beyond it: symmetric \
             standard-send ping-pong (both ranks send the size), delay = half the round trip; \
             other sizes: bsend / ssend ping with a 0-byte standard answer, delay = round trip \
             - one_way0, where one_way0 = half a 0-byte ping-pong ({one_way0:.0} ns); at least \
             1 ns. ack_latency = one_way0 (an ack is a 0-byte control message). [cpu] \
             (extensions X1-X3): send_overhead {} ns and recv_overhead {} ns per nonblocking \
             request, from a burst exchange of {BURST} 8-byte isends and irecvs and wait_all \
             per round vs the blocking 8-byte ping-pong; cores = this host's; wake_latency {} \
             ns = a hop of an 8-byte token around a ring of {} ranks (ranks > cores) - half \
             that ping-pong; handover {} ns = a hop of that ping-pong between 2 ranks bound \
             to one core - half the ping-pong - wake_latency; measure_overhead {} ns = measured compute per stretch of a simulated ping-pong \
             that computes nothing; concurrent_slowdown {} = a 256x256 Jacobi sweep per \
             thread with every core sweeping at once / alone - 1.",
            c.send_overhead_ns,
            c.recv_overhead_ns,
            c.wake_latency_ns,
            c.cores.map_or(0, |n| n + 1),
            c.handover_ns,
            c.measure_overhead_ns,
            mpsim_sim::units::exact_decimal(c.concurrent_slowdown_ppm, 6),
        )
    } else {
        format!(
            "bsend table: bsend ping, 0-byte standard answer; ssend table: ssend ping, 0-byte \
             answer; delay = round trip - one_way0, where one_way0 = half a 0-byte ping-pong \
             ({one_way0:.0} ns), at least 1 ns. ack_latency = one_way0 (an ack is a 0-byte \
             control message)."
        )
    };
    let description = format!(
        "Calibrated by `mpsim calibrate --backend {name} --reps {reps} --max-size {}` \
         (mpsim {}) at {}, on this host ({} {}, {cores} cores): {how}; blocking ping-pong \
         timed on rank 0, minimum over {reps} rep(s) x {CHUNKS} chunk(s) of the mean round \
         trip of a chunk of iterations. {tables}{bsp_note} Other parameters (eager \
         threshold, bsend overhead, {}) are the default machine's.",
        args.max_size,
        env!("CARGO_PKG_VERSION"),
        utc_now(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        if bsp.is_some() {
            "compute mode"
        } else {
            "compute, BSP"
        },
    );
    let file = write_model(model, description, &args.out)?;
    Ok(report(
        &file,
        &format!(
            "0-byte round trip {:.0} ns; ack_latency = one_way0 = {} ns; {}{}measured in {:.1} s",
            m.rtt0,
            file.model.ack_latency_ns,
            m.cpu.as_ref().map_or_else(String::new, |_| {
                let c = &file.model.cpu;
                format!(
                    "send_overhead {} ns, recv_overhead {} ns, cores {}, wake_latency {} ns, \
                     handover {} ns, measure_overhead {} ns, concurrent_slowdown {}; ",
                    c.send_overhead_ns,
                    c.recv_overhead_ns,
                    c.cores
                        .map_or_else(|| "unlimited".into(), |n| n.to_string()),
                    c.wake_latency_ns,
                    c.handover_ns,
                    c.measure_overhead_ns,
                    mpsim_sim::units::exact_decimal(c.concurrent_slowdown_ppm, 6)
                )
            }),
            bsp.as_ref().map_or_else(String::new, |b| format!(
                "BSP on {} processes: r {} flop/s, g {} ps/byte, l {} ns (empty superstep {:.0} \
                 ns); ",
                b.procs, b.r_flops_per_s, b.g_ps_per_byte, b.l_ns, b.empty_ns
            )),
            elapsed.as_secs_f64()
        ),
        &args.out,
    ))
}

/// The model fitted to `m` (module doc, "The fit"), and `one_way0` in ns.
fn fit(m: &Measured, sizes: &[u64]) -> Result<(Model, f64), String> {
    let one_way0 = m.rtt0 / 2.0;
    let base = Model::default_machine();
    let cpu = m.cpu.as_ref().map_or_else(CpuModel::default, Cpu::model);
    let eager = base.eager_threshold as u64;
    // The one-way delay from the symmetric standard ping-pong, when measured.
    let standard = |i: usize| {
        Some(m.standard[i])
            .filter(|r| r.is_finite())
            .map(|r| r / 2.0)
    };
    let table = |name: &str, pings: &[f64], standard_sizes: &dyn Fn(u64) -> bool| {
        let points = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let one_way = match standard(i) {
                    Some(w) if standard_sizes(s) => w,
                    _ => pings[i] - one_way0,
                };
                (s, delay_ns(one_way))
            })
            .collect();
        DelayTable::new(name, points).map_err(|e| e.to_string())
    };
    let model = Model {
        bsend: table("bsend", &m.bsend, &|s| s <= eager)?,
        ssend: table("ssend", &m.ssend, &|s| s > eager)?,
        ack_latency_ns: (one_way0.round() as u64).max(1),
        cpu,
        ..base
    };
    Ok((model, one_way0))
}

/// A one-way time as a delay: whole ns, at least 1.
fn delay_ns(one_way: f64) -> u64 {
    one_way.round().max(1.0) as u64
}

/// Checks that `out` can be what `--out` takes, a directory to create or to write `model.toml`,
/// `ssend.csv` and `bsend.csv` into ([`ModelFile::write_to`]), before anything is measured: a
/// measurement takes up to tens of seconds, and a path that cannot hold the model should fail
/// before it, not after. Whether it can be written is tried too (only writing tells:
/// permissions, a read-only file system), by making a file in it, or in the nearest existing
/// directory above it, and removing it.
fn check_out(out: &Path) -> Result<(), String> {
    check_out_shape(out)?;
    mpsim_sim::output::check_writable_dir(out).map_err(|(dir, e)| {
        format!(
            "--out {}: cannot write into {}: {e}; give a directory you can write (checked \
             before measuring)",
            out.display(),
            dir.display()
        )
    })
}

/// The part of [`check_out`] that looks at what `out` is.
fn check_out_shape(out: &Path) -> Result<(), String> {
    let err = |what: String| {
        Err(format!(
            "--out {}: {what}; --out names a directory to create, or to write model.toml, \
             ssend.csv and bsend.csv into",
            out.display()
        ))
    };
    match fs::metadata(out) {
        Ok(m) if m.is_dir() => {
            for name in [MODEL_TOML, "ssend.csv", "bsend.csv"] {
                if out.join(name).is_dir() {
                    return err(format!("its {name} is a directory"));
                }
            }
            Ok(())
        }
        Ok(_) => err("exists and is not a directory".into()),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            // It will be created with its missing parents: the nearest existing one must be a
            // directory.
            let existing = out
                .ancestors()
                .skip(1)
                .filter(|p| !p.as_os_str().is_empty())
                .find(|p| fs::symlink_metadata(p).is_ok());
            match existing {
                Some(p) if !p.is_dir() => err(format!(
                    "cannot be created: {} is not a directory",
                    p.display()
                )),
                _ => Ok(()),
            }
        }
        Err(e) => err(format!("cannot be checked: {e}")),
    }
}

/// Writes `model` with `description` into `out`; returns the file as written.
fn write_model(model: Model, description: String, out: &Path) -> Result<ModelFile, String> {
    let file = ModelFile {
        model,
        description: Some(description),
        path: out.join("model.toml"),
        ssend_table: out.join("ssend.csv"),
        bsend_table: out.join("bsend.csv"),
    };
    file.write_to(out).map_err(|e| e.to_string())?;
    Ok(file)
}

/// What `calibrate` prints on success: `# summary`, both tables (side by side when they have
/// the same sizes), `wrote OUT`.
fn report(file: &ModelFile, summary: &str, out: &Path) -> String {
    let (bsend, ssend) = (file.model.bsend.points(), file.model.ssend.points());
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# {summary}");
    if bsend.iter().map(|p| p.0).eq(ssend.iter().map(|p| p.0)) {
        let _ = writeln!(s, "{:>10} {:>12} {:>12}", "size_B", "bsend_ns", "ssend_ns");
        for (&(size, b), &(_, ss)) in bsend.iter().zip(ssend) {
            let _ = writeln!(s, "{size:>10} {b:>12} {ss:>12}");
        }
    } else {
        for (name, points) in [("bsend_ns", bsend), ("ssend_ns", ssend)] {
            let _ = writeln!(s, "{:>10} {name:>12}", "size_B");
            for &(size, d) in points {
                let _ = writeln!(s, "{size:>10} {d:>12}");
            }
        }
    }
    let _ = writeln!(s, "wrote {}", out.display());
    s
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ` (UTC), for descriptions: a reader of a model
/// file wants a date, and the standard library has no calendar.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    utc_timestamp(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC), by
/// Howard Hinnant's `civil_from_days`.
fn utc_timestamp(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 0000-03-01, so that a leap day ends each 4-year cycle.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_strictly_increase_and_stop_at_max() {
        let sizes = |max| Plan::new(max, 1).sizes;
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
        assert_eq!(delay_ns(700.0), 700);
        assert_eq!(delay_ns(-100.0), 1);
        assert_eq!(delay_ns(0.4), 1);
        assert_eq!(delay_ns(f64::NAN), 1);
    }

    #[test]
    fn iteration_counts_shrink_for_big_messages() {
        assert_eq!(iterations(1), (500, MAX_ITERS));
        assert_eq!(iterations(DEFAULT_MAX_SIZE), (4, 32));
        assert_eq!(iterations(256 << 20), (1, MIN_ITERS));
    }

    #[test]
    fn measurements_keep_the_minimum() {
        let mut m = Measured::new(2);
        m.record(Ping::Zero, 0, 500.0);
        m.record(Ping::Zero, 0, 400.0);
        m.record(Ping::Bsend, 1, 900.0);
        m.record(Ping::Bsend, 1, 950.0);
        m.record(Ping::Ssend, 0, 700.0);
        m.record(Ping::Standard, 1, 600.0);
        m.record(Ping::Standard, 1, 650.0);
        assert_eq!(m.rtt0, 400.0);
        assert_eq!(m.bsend, vec![f64::INFINITY, 900.0]);
        assert_eq!(m.ssend, vec![700.0, f64::INFINITY]);
        assert_eq!(m.standard, vec![f64::INFINITY, 600.0]);
    }

    #[test]
    fn fit_subtracts_one_way0() {
        let m = Measured {
            rtt0: 400.0,
            bsend: vec![500.0, 1200.0],
            ssend: vec![900.0, 150.0],
            ..Measured::new(2)
        };
        let (model, one_way0) = fit(&m, &[1, 8]).expect("valid tables");
        assert_eq!(one_way0, 200.0);
        assert_eq!(model.ack_latency_ns, 200);
        assert_eq!(model.bsend.points(), &[(1, 300), (8, 1000)]);
        assert_eq!(model.ssend.points(), &[(1, 700), (8, 1)]);
        assert_eq!(
            model.cpu,
            CpuModel::default(),
            "nothing measured: X1-X3 off"
        );
    }

    #[test]
    fn fit_takes_eager_delays_from_symmetric_standard_ping_pongs() {
        let eager = Model::default_machine().eager_threshold as u64;
        let sizes = [8, eager, 2 * eager];
        let cpu = Cpu {
            // o_s + o_r = (1988 - 1000 / 2) / 16 = 93; the sends alone 40 each.
            burst_round: 1988.0,
            burst_sends: 16.0 * 40.0,
            rtt_small: 1000.0,
            // 3500 - 1000 / 2 = 3000.
            hop_oversubscribed: 3500.0,
            // 8000 / 2 - 1000 / 2 - 3000 = 500.
            rtt_one_core: 8000.0,
            stretch: 712.4,
            sweep_alone: 1000.0,
            sweep_together: 1090.0,
            cores: 2,
        };
        let m = Measured {
            rtt0: 400.0,
            bsend: vec![5000.0, 6000.0, 7000.0],
            ssend: vec![5100.0, 6100.0, 7100.0],
            standard: vec![1000.0, 3000.0, 9000.0],
            cpu: Some(cpu),
        };
        let (model, _) = fit(&m, &sizes).expect("valid tables");
        assert_eq!(
            model.cpu,
            CpuModel {
                send_overhead_ns: 40,
                recv_overhead_ns: 53,
                cores: Some(2),
                wake_latency_ns: 3000,
                handover_ns: 500,
                measure_overhead_ns: 712,
                concurrent_slowdown_ppm: 90_000,
            }
        );
        // Eager sizes: half the symmetric round trip; beyond: bsend ping - one_way0.
        assert_eq!(
            model.bsend.points(),
            &[(8, 500), (eager, 1500), (2 * eager, 6800)]
        );
        // Up to the threshold: ssend ping - one_way0; beyond: half the symmetric round trip.
        assert_eq!(
            model.ssend.points(),
            &[(8, 4900), (eager, 5900), (2 * eager, 4500)]
        );
    }

    #[test]
    fn overheads_never_go_negative() {
        let cpu = Cpu {
            burst_round: 100.0,
            burst_sends: 9000.0,
            rtt_small: 1000.0,
            hop_oversubscribed: 400.0,
            rtt_one_core: f64::INFINITY,
            stretch: f64::INFINITY,
            sweep_alone: 1000.0,
            sweep_together: 900.0,
            cores: 2,
        };
        assert_eq!(cpu.overheads(), (0, 0));
        assert_eq!(cpu.wake_latency(), 0);
        assert_eq!(cpu.handover(), 0, "not measured");
        let same_core_faster = Cpu {
            rtt_one_core: 900.0,
            ..cpu
        };
        assert_eq!(same_core_faster.handover(), 0);
        assert_eq!(cpu.model().measure_overhead_ns, 0);
        assert_eq!(cpu.model().concurrent_slowdown_ppm, 0);
    }

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_795_442_953), "2026-11-23T14:09:13Z");
    }
}
