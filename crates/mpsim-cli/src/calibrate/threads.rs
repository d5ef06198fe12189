//! `mpsim calibrate --backend threads`: the [`Plan`] measured by two ranks of the threads
//! backend in this process, timed with [`Instant`] on rank 0.
//!
//! The protocol of the bsend, ssend and 0-byte batches (batches, chunks, the order of pings)
//! is the one `peers/calibrate.c` follows for `--backend mpi`; a change there belongs here too.
//! The threads backend measures more than the MPI side (see the parent module, "The fit"):
//! symmetric standard-send ping-pongs per size, a burst exchange for the per-message CPU
//! overhead (X1), a token ring of more ranks than cores for the wake-up latency (X2), a
//! ping-pong of two ranks bound to one core for the hand-over (X2), and the cost of a
//! measured-compute stretch in the simulator (X3).

use std::sync::Mutex;
use std::time::Instant;

use mpsim::sim::{ComputeMode, Model};
use mpsim::{BSEND_OVERHEAD, Backend, Comm, Launcher, Request, wait_all};

use super::{BURST, CHUNKS, Cpu, Measured, Measurement, Ping, Plan, iterations};

/// Tag of the ping-pong messages.
const TAG: i32 = 1;
/// Tag of the empty exchange that synchronises the ranks before each batch.
const SYNC_TAG: i32 = 2;
/// Tag of the message that releases the idle ranks of the oversubscribed run.
const RELEASE_TAG: i32 = 3;
/// Size of the messages of the burst and oversubscribed measurements, bytes.
const SMALL: usize = 8;
/// Rounds of the burst exchange (each `BURST` messages each way), and its warm-up.
const BURST_ROUNDS: u64 = 2_000;
/// Simulated ping-pong iterations for the measured-compute stretch cost.
const STRETCH_ITERS: u64 = 20_000;

/// Runs the plan on 2 ranks of the threads backend; returns rank 0's measurements.
pub(super) fn measure(plan: &Plan) -> Result<Measurement, String> {
    let mut measured = rank0_result(2, async |world: &Comm| {
        let m = sweep(world.clone(), plan).await?;
        Ok((world.rank() == 0).then_some(m))
    })?;
    measured.cpu = Some(measure_cpu(plan)?);
    Ok(Measurement {
        measured,
        how: "2 ranks of the in-process threads backend".into(),
    })
}

/// Times the `iters` iterations that follow `warmup` untimed ones, in [`CHUNKS`] chunks of
/// `iters / CHUNKS` iterations (the last one shorter if need be); every measurement loop of
/// this module uses it, so that each counts its chunks, the last included, the same way.
struct ChunkClock {
    warmup: u64,
    iters: u64,
    chunk: u64,
    t0: Instant,
}

impl ChunkClock {
    fn new(warmup: u64, iters: u64) -> Self {
        ChunkClock {
            warmup,
            iters,
            chunk: iters.div_ceil(CHUNKS),
            t0: Instant::now(),
        }
    }

    /// Before iteration `k`: true when timing starts with it (the first timed iteration).
    fn start(&mut self, k: u64) -> bool {
        let first = k == self.warmup;
        if first {
            self.t0 = Instant::now();
        }
        first
    }

    /// After iteration `k`: the iterations of the chunk it ended and their host time in ns,
    /// when it ended one.
    fn end(&mut self, k: u64) -> Option<(u64, f64)> {
        let done = (k + 1).checked_sub(self.warmup).filter(|&d| d > 0)?;
        if !done.is_multiple_of(self.chunk) && done != self.iters {
            return None;
        }
        let ns = self.t0.elapsed().as_nanos() as f64;
        self.t0 = Instant::now();
        Some(((done - 1) % self.chunk + 1, ns))
    }
}

/// One batch: the smallest mean round trip in ns over its chunks (meaningful on rank 0).
async fn batch(world: &Comm, ping: Ping, buf: &mut [u8]) -> mpsim::Result<f64> {
    let (me, peer) = (world.rank(), 1 - world.rank());
    let n = buf.len() as u64;
    let (warmup, iters) = iterations(n);
    world
        .sendrecv::<u8, u8>(&[], peer, SYNC_TAG, &mut [], peer, SYNC_TAG)
        .await?;
    let mut best = f64::INFINITY;
    let mut clock = ChunkClock::new(warmup, iters);
    for k in 0..warmup + iters {
        clock.start(k);
        if me == 0 {
            match ping {
                Ping::Zero => world.send::<u8>(&[], peer, TAG).await?,
                Ping::Bsend => world.bsend(buf, peer, TAG).await?,
                Ping::Ssend => world.ssend(buf, peer, TAG).await?,
                Ping::Standard => world.send(buf, peer, TAG).await?,
            }
            if ping == Ping::Standard {
                world.recv(buf, peer, TAG).await?;
            } else {
                world.recv::<u8>(&mut [], peer, TAG).await?;
            }
        } else {
            world.recv(buf, peer, TAG).await?;
            if ping == Ping::Standard {
                world.send(buf, peer, TAG).await?;
            } else {
                world.send::<u8>(&[], peer, TAG).await?;
            }
        }
        if let Some((n, ns)) = clock.end(k) {
            best = best.min(ns / n as f64);
        }
    }
    Ok(best)
}

/// The whole plan on one rank; rank 0's result is the one that counts.
async fn sweep(world: Comm, plan: &Plan) -> mpsim::Result<Measured> {
    let max = plan.max_size() as usize;
    let mut buf = vec![b'a'; max];
    // Room for two messages in flight, so that a buffered message whose slot is not yet
    // reclaimed never makes the next `bsend` overflow.
    world.buffer_attach(2 * (max + BSEND_OVERHEAD))?;
    let mut m = Measured::new(plan.sizes.len());
    for _ in 0..plan.reps {
        m.record(Ping::Zero, 0, batch(&world, Ping::Zero, &mut []).await?);
        for (i, &n) in plan.sizes.iter().enumerate() {
            let b = &mut buf[..n as usize];
            m.record(Ping::Bsend, i, batch(&world, Ping::Bsend, b).await?);
            m.record(Ping::Ssend, i, batch(&world, Ping::Ssend, b).await?);
            m.record(Ping::Standard, i, batch(&world, Ping::Standard, b).await?);
        }
    }
    world.buffer_detach().await?;
    Ok(m)
}

/// The CPU side of the model (X1–X3), measured apart from the sweep: see [`Cpu`].
fn measure_cpu(plan: &Plan) -> Result<Cpu, String> {
    let mut cpu = Cpu::new();
    for _ in 0..plan.reps {
        let (round, sends) = run_burst()?;
        cpu.burst_round = cpu.burst_round.min(round);
        cpu.burst_sends = cpu.burst_sends.min(sends);
        cpu.rtt_small = cpu.rtt_small.min(run_pingpong(2)?);
        cpu.hop_oversubscribed = cpu.hop_oversubscribed.min(run_ring(cpu.cores + 1)?);
        if let Some(rtt) = run_pingpong_on_one_core()? {
            cpu.rtt_one_core = cpu.rtt_one_core.min(rtt);
        }
        cpu.stretch = cpu.stretch.min(stretch_cost()?);
        let (alone, together) = super::contention::measure(cpu.cores);
        cpu.sweep_alone = cpu.sweep_alone.min(alone);
        cpu.sweep_together = cpu.sweep_together.min(together);
    }
    Ok(cpu)
}

/// Runs `f` on every rank of a `ranks`-rank threads run; returns what it gave on rank 0.
fn rank0_result<T: Send>(
    ranks: u32,
    f: impl AsyncFn(&Comm) -> mpsim::Result<Option<T>> + Sync,
) -> Result<T, String> {
    let result: Mutex<Option<T>> = Mutex::new(None);
    Launcher::new(ranks)
        .backend(Backend::Threads)
        .run(|world| {
            let (result, f) = (&result, &f);
            async move {
                let got = f(&world).await?;
                if world.rank() == 0 {
                    *result.lock().unwrap_or_else(|e| e.into_inner()) = got;
                }
                Ok(())
            }
        })
        .map_err(|e| format!("calibration run failed: {e}"))?;
    result
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| "calibration run produced no measurements".into())
}

/// Runs `f` on rank 0 of a `ranks`-rank threads run whose ranks 0 and 1 take part and the
/// others wait, blocked, until rank 0 is done; returns rank 0's result.
fn on_rank0<T: Send>(
    ranks: u32,
    f: impl AsyncFn(&Comm) -> mpsim::Result<Option<T>> + Sync,
) -> Result<T, String> {
    rank0_result(ranks, async |world: &Comm| {
        let rank = world.rank();
        if rank >= 2 {
            world.recv::<u8>(&mut [], 0, RELEASE_TAG).await?;
            return Ok(None);
        }
        let got = f(world).await?;
        if rank == 0 {
            for r in 2..world.size() {
                world.send::<u8>(&[], r, RELEASE_TAG).await?;
            }
        }
        Ok(got)
    })
}

/// A symmetric ping-pong of `SMALL`-byte standard sends between ranks 0 and 1 of a
/// `ranks`-rank run (the others blocked): the best mean round trip, ns.
fn run_pingpong(ranks: u32) -> Result<f64, String> {
    on_rank0(ranks, async |world: &Comm| {
        let mut buf = [0u8; SMALL];
        let rtt = batch(world, Ping::Standard, &mut buf).await?;
        Ok((world.rank() == 0).then_some(rtt))
    })
}

/// [`run_pingpong`] of 2 ranks from a thread bound to one core, so that the threads backend
/// runs both ranks on it (it binds rank `r` to core `r mod C` of the `C` cores its caller may
/// use), taking turns as ranks that share a core do: the best mean round trip, ns. `None`
/// where a thread cannot be bound (not Linux, or refused).
fn run_pingpong_on_one_core() -> Result<Option<f64>, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            if !mpsim_threads::bind_to_one_core() {
                return Ok(None);
            }
            run_pingpong(2).map(Some)
        })
        .join()
        .unwrap_or_else(|_| Err("the same-core ping-pong's thread panicked".into()))
    })
}

/// A token of `SMALL` bytes passed around a ring of all `ranks` ranks by blocking standard
/// sends: the best mean time of one hop (a trip over the ranks), ns, on rank 0. With more
/// ranks than cores every rank is waiting for the token most of the time, as the ranks of a
/// program waiting for their neighbours are.
fn run_ring(ranks: u32) -> Result<f64, String> {
    const TRIPS: u64 = 2_000;
    rank0_result(ranks, async |world: &Comm| {
        let (me, n) = (world.rank(), world.size());
        let (left, right) = ((me + n - 1) % n, (me + 1) % n);
        let mut token = [0u8; SMALL];
        let mut clock = ChunkClock::new(TRIPS / 10, TRIPS);
        let mut fastest = f64::INFINITY;
        for k in 0..TRIPS / 10 + TRIPS {
            if me == 0 {
                clock.start(k);
                world.send(&token, right, TAG).await?;
                world.recv(&mut token, left, TAG).await?;
                if let Some((trips, ns)) = clock.end(k) {
                    fastest = fastest.min(ns / (trips * u64::from(n)) as f64);
                }
            } else {
                world.recv(&mut token, left, TAG).await?;
                world.send(&token, right, TAG).await?;
            }
        }
        Ok((me == 0).then_some(fastest))
    })
}

/// The burst exchange: each round, both ranks post `BURST` receives and `BURST` standard sends
/// of `SMALL` bytes, then `wait_all`. Returns the best mean round time and the best mean time
/// of rank 0's `BURST` sends alone, ns.
fn run_burst() -> Result<(f64, f64), String> {
    on_rank0(2, async |world: &Comm| {
        let peer = 1 - world.rank();
        let out = [1u8; SMALL];
        let mut inb = vec![[0u8; SMALL]; BURST as usize];
        world
            .sendrecv::<u8, u8>(&[], peer, SYNC_TAG, &mut [], peer, SYNC_TAG)
            .await?;
        let mut clock = ChunkClock::new(BURST_ROUNDS / 10, BURST_ROUNDS);
        let (mut best_round, mut best_sends) = (f64::INFINITY, f64::INFINITY);
        let mut sends = 0u128;
        for k in 0..BURST_ROUNDS / 10 + BURST_ROUNDS {
            if clock.start(k) {
                sends = 0;
            }
            let mut reqs: Vec<Request<'_>> = Vec::with_capacity(2 * BURST as usize);
            for b in inb.iter_mut() {
                reqs.push(world.irecv(b, peer, TAG)?);
            }
            let s0 = Instant::now();
            for _ in 0..BURST {
                reqs.push(world.isend(&out, peer, TAG)?);
            }
            sends += s0.elapsed().as_nanos();
            wait_all(&mut reqs).await?;
            if let Some((n, ns)) = clock.end(k) {
                best_round = best_round.min(ns / n as f64);
                best_sends = best_sends.min(sends as f64 / n as f64);
                sends = 0;
            }
        }
        Ok((world.rank() == 0).then_some((best_round, best_sends)))
    })
}

/// What the simulator charges as measured compute per stretch of a rank that computes
/// nothing (a 2-rank ping-pong of `SMALL`-byte sends, one stretch per iteration and rank):
/// reading the thread CPU clock and the simulator's own work, ns.
fn stretch_cost() -> Result<f64, String> {
    let model = Model {
        compute: ComputeMode::Measured,
        ..Model::default_machine()
    };
    let outcome = Launcher::new(2)
        .model(model)
        .simulate(|world: Comm| async move {
            let peer = 1 - world.rank();
            let mut buf = [0u8; SMALL];
            for _ in 0..STRETCH_ITERS {
                if world.rank() == 0 {
                    world.send(&buf, peer, TAG).await?;
                    world.recv(&mut buf, peer, TAG).await?;
                } else {
                    world.recv(&mut buf, peer, TAG).await?;
                    world.send(&buf, peer, TAG).await?;
                }
            }
            Ok(())
        });
    if let Some(e) = outcome.error {
        return Err(format!("the simulated stretch measurement failed: {e}"));
    }
    let compute: u64 = outcome.report.ranks.iter().map(|r| r.compute_ns).sum();
    // Each rank suspends once per iteration (in its receive), plus its first and last stretch.
    let stretches = outcome.report.ranks.len() as u64 * (STRETCH_ITERS + 1);
    Ok(compute as f64 / stretches as f64)
}

#[cfg(test)]
mod tests {
    use super::{CHUNKS, ChunkClock};

    /// The chunks cover every timed iteration once, the last one included, and none of the
    /// warm-up: the loops of this module once left their last chunk out, which with one chunk
    /// measured nothing.
    #[test]
    fn chunk_clock_counts_every_timed_iteration_once() {
        for (warmup, iters) in [(0, 1), (0, 7), (3, 5), (10, 1000), (100, 10_001)] {
            let mut clock = ChunkClock::new(warmup, iters);
            let mut chunks = Vec::new();
            let mut started = Vec::new();
            for k in 0..warmup + iters {
                if clock.start(k) {
                    started.push(k);
                }
                if let Some((n, _)) = clock.end(k) {
                    chunks.push((k, n));
                }
            }
            assert_eq!(
                started,
                [warmup],
                "timing starts at the first timed iteration"
            );
            assert_eq!(chunks.iter().map(|c| c.1).sum::<u64>(), iters);
            assert!(chunks.len() as u64 <= CHUNKS && !chunks.is_empty());
            assert_eq!(chunks.last().map(|c| c.0), Some(warmup + iters - 1));
        }
    }
}
