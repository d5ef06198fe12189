//! `mpsim calibrate --backend threads`: the [`Plan`] measured by two ranks of the threads
//! backend in this process, timed with [`Instant`] on rank 0.
//!
//! The protocol (batches, chunks, the order of pings) is the one `peers/calibrate.c` follows
//! for `--backend mpi`; a change here belongs there too.

use std::sync::Mutex;
use std::time::Instant;

use mpsim::{BSEND_OVERHEAD, Backend, Comm, Launcher};

use super::{CHUNKS, Measured, Measurement, Ping, Plan, iterations};

/// Tag of the ping-pong messages.
const TAG: i32 = 1;
/// Tag of the empty exchange that synchronises the ranks before each batch.
const SYNC_TAG: i32 = 2;

/// Runs the plan on 2 ranks of the threads backend; returns rank 0's measurements.
pub(super) fn measure(plan: &Plan) -> Result<Measurement, String> {
    let result: Mutex<Option<Measured>> = Mutex::new(None);
    Launcher::new(2)
        .backend(Backend::Threads)
        .run(|world| {
            let result = &result;
            async move {
                let rank = world.rank();
                let m = sweep(world, plan).await?;
                if rank == 0 {
                    *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(m);
                }
                Ok(())
            }
        })
        .map_err(|e| format!("calibration run failed: {e}"))?;
    let measured = result
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or("calibration run produced no measurements")?;
    Ok(Measurement {
        measured,
        how: "2 ranks of the in-process threads backend".into(),
    })
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
        }
    }
    world.buffer_detach().await?;
    Ok(m)
}
