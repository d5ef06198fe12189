//! X2's `concurrent_slowdown`: how much slower a memory-bound loop runs when every core runs
//! one at once than when it runs alone (shared caches and memory bandwidth), measured with
//! plain threads (`crates/mpsim-sim/EXTENSIONS.md`, X2).
//!
//! The loop is a 5-point Jacobi sweep over a 256 x 256 block of `f64` (two arrays, 1 MiB per
//! thread): a typical memory-bound kernel. The figure depends on the kernel (compute-bound
//! code slows down less); it is the machine's figure for loops of this kind.

use std::sync::Barrier;
use std::time::Instant;

/// Points per side of a thread's block.
const N: usize = 256;
/// Sweeps per timed chunk.
const SWEEPS: u32 = 40;
/// Timed chunks per thread (the fastest counts), after one warm-up chunk.
const CHUNKS: u32 = 5;

/// The fastest chunk's time per sweep, ns, of one thread sweeping its own block.
fn sweeper(start: &Barrier) -> f64 {
    let w = N + 2;
    let mut u: Vec<f64> = (0..w * w).map(|i| (i % 101) as f64).collect();
    let mut v = u.clone();
    start.wait();
    let mut best = f64::INFINITY;
    for chunk in 0..=CHUNKS {
        let t0 = Instant::now();
        for _ in 0..SWEEPS {
            for i in 1..=N {
                for j in 1..=N {
                    let k = i * w + j;
                    v[k] = 0.25 * ((u[k - w] + u[k + w]) + (u[k - 1] + u[k + 1]));
                }
            }
            std::mem::swap(&mut u, &mut v);
        }
        if chunk > 0 {
            best = best.min(t0.elapsed().as_nanos() as f64 / f64::from(SWEEPS));
        }
    }
    // Keeps the sweeps from being optimised away.
    std::hint::black_box(&u);
    best
}

/// The mean over `threads` threads sweeping at once of their fastest time per sweep, ns.
fn sweep_ns(threads: u32) -> f64 {
    let start = Barrier::new(threads as usize);
    let times: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| sweeper(&start))).collect();
        handles
            .into_iter()
            // A sweeper does not panic (plain arithmetic on in-bounds indices); if it did, the
            // calibration would report no slowdown rather than fail.
            .map(|h| h.join().unwrap_or(f64::NAN))
            .collect()
    });
    times.iter().sum::<f64>() / f64::from(threads)
}

/// `(alone, together)`: ns per sweep of one thread alone and of `cores` threads at once.
pub(super) fn measure(cores: u32) -> (f64, f64) {
    (sweep_ns(1), sweep_ns(cores.max(1)))
}
