//! X2's `concurrent_slowdown`: how much slower a memory-bound loop runs when every core runs
//! one at once than when it runs alone (shared caches and memory bandwidth), measured with
//! plain threads (`docs/extensions.md`, X2).
//!
//! The loop is a 5-point Jacobi sweep over a 256 x 256 block of `f64` (two arrays, 1 MiB per
//! thread): a typical memory-bound kernel. The figure depends on the kernel (compute-bound
//! code slows down less); it is the machine's figure for loops of this kind.

use std::sync::Barrier;
use std::time::Instant;

/// Points per side of a thread's block.
const N: usize = 256;
/// Sweeps of a run: long enough (tens of ms) that threads started together overlap for all
/// but a sliver of it.
const SWEEPS: u32 = 400;
/// Untimed sweeps first (caches, page faults, clock speed).
const WARMUP: u32 = 40;

/// The mean time per sweep, ns, of one thread sweeping its own block (the loop of
/// `examples/stencil2d.rs`: row slices, so that it vectorises as real code does).
fn sweeper(start: &Barrier) -> f64 {
    let w = N + 2;
    let mut u: Vec<f64> = (0..w * w).map(|i| (i % 101) as f64).collect();
    let mut v = u.clone();
    let sweep = |u: &[f64], v: &mut [f64]| {
        for i in 1..=N {
            let up = &u[(i - 1) * w..i * w];
            let mid = &u[i * w..(i + 1) * w];
            let down = &u[(i + 1) * w..(i + 2) * w];
            let out = &mut v[i * w + 1..i * w + 1 + N];
            for (j, o) in out.iter_mut().enumerate() {
                *o = 0.25 * ((up[j + 1] + down[j + 1]) + (mid[j] + mid[j + 2]));
            }
        }
    };
    start.wait();
    for _ in 0..WARMUP {
        sweep(&u, &mut v);
        std::mem::swap(&mut u, &mut v);
    }
    let t0 = Instant::now();
    for _ in 0..SWEEPS {
        sweep(&u, &mut v);
        std::mem::swap(&mut u, &mut v);
    }
    let ns = t0.elapsed().as_nanos() as f64 / f64::from(SWEEPS);
    // Keeps the sweeps from being optimised away.
    std::hint::black_box(&u);
    ns
}

/// The mean over `threads` threads sweeping at once of their mean time per sweep, ns.
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
