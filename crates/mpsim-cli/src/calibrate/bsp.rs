//! `mpsim calibrate --backend threads --bsp`: the BSP parameters `r`, `g` and `l`
//! (`spec/bsplib.md` §3) measured on BSP processes of the threads backend, the way BSPedupack's
//! bspbench does (written here from its description):
//!
//! - `r`: a DAXPY loop (`y += a·x` over 1,024 doubles, 2 flops per element) timed on this
//!   thread, the best of the repetitions; it becomes the model's `flops_per_s`;
//! - for h = 0, p, 2p, ... up to [`HMAX`], each process puts h 8-byte words, word i to process
//!   `(s + 1 + i mod (p − 1)) mod p` (an h-relation: every process sends and receives h words),
//!   [`SYNCS`] supersteps timed on pid 0, the minimum over the repetitions of the mean;
//! - `g` and `l`: a least-squares fit of `T(h) = l + g·8h` over h in [p, HMAX]. The time of
//!   an empty superstep (h = 0) is reported beside them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use mpsim::bsp::{self, Ctx};
use mpsim::{Backend, Launcher};

/// The largest h of the sweep, in words.
pub(super) const HMAX: u64 = 256;
/// Supersteps timed per h.
pub(super) const SYNCS: u64 = 100;
/// Elements of the DAXPY vectors.
const DAXPY_N: usize = 1024;

/// What the BSP calibration measured and fitted.
#[derive(Clone, Debug)]
pub(super) struct Bsp {
    /// Processes.
    pub procs: u32,
    /// DAXPY flops per second.
    pub r_flops_per_s: u64,
    /// Time per byte of an h-relation, picoseconds.
    pub g_ps_per_byte: u64,
    /// Superstep latency (the fit's intercept), ns.
    pub l_ns: u64,
    /// Mean time of an empty superstep, ns.
    pub empty_ns: f64,
}

/// Measures `r`, `g` and `l` on `procs` processes (at least 2), `reps` times.
pub(super) fn measure(procs: u32, reps: u32) -> Result<Bsp, String> {
    if procs < 2 {
        return Err("--bsp-procs: an h-relation needs at least 2 processes".into());
    }
    let r_flops_per_s = (0..reps).map(|_| daxpy_rate()).fold(0.0, f64::max);
    let hs: Vec<u64> = std::iter::once(0)
        .chain(
            (1..)
                .map(|k| k * u64::from(procs))
                .take_while(|&h| h <= HMAX),
        )
        .collect();
    let mut best = vec![f64::INFINITY; hs.len()];
    for _ in 0..reps {
        let times = Arc::new(Mutex::new(Vec::new()));
        let (t, hs2) = (times.clone(), hs.clone());
        bsp::run_with(
            &Launcher::new(procs).backend(Backend::Threads),
            move |ctx: Ctx| sweep(ctx, hs2.clone(), t.clone()),
        )
        .map_err(|e| format!("the BSP sweep failed: {e}"))?;
        let times = times.lock().map_err(|_| "a poisoned lock")?;
        for (b, &t) in best.iter_mut().zip(times.iter()) {
            *b = b.min(t);
        }
    }
    // Least squares over h >= p: T = l + g x, x = 8h bytes.
    let points: Vec<(f64, f64)> = hs
        .iter()
        .zip(&best)
        .filter(|&(&h, _)| h >= u64::from(procs))
        .map(|(&h, &t)| ((8 * h) as f64, t))
        .collect();
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = points.iter().map(|&(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    let g_ns = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let l_ns = (my - g_ns * mx).max(1.0);
    Ok(Bsp {
        procs,
        r_flops_per_s: r_flops_per_s.round().max(1.0) as u64,
        g_ps_per_byte: (g_ns * 1000.0).round() as u64,
        l_ns: l_ns.round() as u64,
        empty_ns: best[0],
    })
}

/// One sweep over `hs`: pid 0 pushes each h's mean superstep time, ns.
async fn sweep(mut ctx: Ctx, hs: Vec<u64>, times: Arc<Mutex<Vec<f64>>>) -> mpsim::Result<()> {
    let (s, p) = (ctx.pid(), ctx.nprocs());
    let area = ctx.push_reg::<u64>(HMAX as usize)?;
    ctx.sync().await?;
    for &h in &hs {
        ctx.sync().await?; // start together
        let start = Instant::now();
        for _ in 0..SYNCS {
            for i in 0..h {
                let to = (s + 1 + (i % u64::from(p - 1)) as u32) % p;
                ctx.put(to, &area, i as usize, &[i])?;
            }
            ctx.sync().await?;
        }
        if s == 0 {
            let mean = start.elapsed().as_nanos() as f64 / SYNCS as f64;
            times
                .lock()
                .map_err(|_| mpsim::Error::program("a poisoned lock"))?
                .push(mean);
        }
    }
    Ok(())
}

/// Flops per second of a DAXPY loop on this thread.
fn daxpy_rate() -> f64 {
    let x = vec![1.000_001f64; DAXPY_N];
    let mut y = vec![0.5f64; DAXPY_N];
    let a = std::hint::black_box(0.999_999f64);
    let mut passes = 0u64;
    let start = Instant::now();
    while start.elapsed().as_millis() < 50 {
        for _ in 0..100 {
            for (yi, xi) in y.iter_mut().zip(&x) {
                *yi += a * xi;
            }
            std::hint::black_box(&mut y);
        }
        passes += 100;
    }
    (2 * DAXPY_N as u64 * passes) as f64 / start.elapsed().as_secs_f64()
}
