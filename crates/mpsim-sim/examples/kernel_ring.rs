//! The simulator kernel alone on a ring (no public API layer): `RANKS ITERS` → simulated
//! messages per second of host time and peak memory per rank. For the kernel's own cost; the
//! product benchmark goes through `mpsim` (bench/sim-ring.sh).
//!
//! `cargo run --release -p mpsim-sim --example kernel_ring -- 1024 1000`

use std::future::poll_fn;
use std::rc::Rc;
use std::time::Instant;

use mpsim_proto::error::Error;
use mpsim_proto::matching::{ContextId, Envelope, Pattern};
use mpsim_proto::p2p::{ReqId, SendMode};
use mpsim_proto::runtime::{Call, Payload, RankRuntime, Started, Wait};
use mpsim_sim::{Model, Options, SimRank, simulate};

async fn ring(rt: Rc<SimRank>, iters: u64) -> Result<(), Error> {
    let (me, n) = (rt.rank(), rt.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let ctx = ContextId(0);
    for _ in 0..iters {
        if me != 0 {
            recv(&rt, left, ctx).await?;
        }
        let send = Call::Send {
            call: "isend",
            mode: SendMode::Standard,
            to: right,
            envelope: Envelope::new(ctx, me, 7),
            payload: Payload::from_elem(0, 8),
            blocking: false,
        };
        let req = posted(rt.start(send)?);
        wait(&rt, req, "send").await?;
        if me == 0 {
            recv(&rt, left, ctx).await?;
        }
    }
    Ok(())
}

async fn recv(rt: &Rc<SimRank>, from: u32, ctx: ContextId) -> Result<(), Error> {
    let post = Call::Recv {
        pattern: Pattern::new(ctx, from, 7),
        capacity: 8,
        source_world: Some(from),
        blocking: false,
    };
    let req = posted(rt.start(post)?);
    wait(rt, req, "recv").await
}

/// The request a send or receive posted.
fn posted(started: Started) -> ReqId {
    match started {
        Started::Request(Some(req)) => req,
        other => panic!("a nonblocking call answered {other:?}"),
    }
}

/// Waits for `req` through the seam, dropping its completion.
async fn wait(rt: &Rc<SimRank>, req: ReqId, call: &'static str) -> Result<(), Error> {
    poll_fn(|_| rt.poll_wait(Wait::Request { req, call }).map_ok(drop)).await
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (ranks, iters) = (
        args.first().copied().unwrap_or(1024),
        args.get(1).copied().unwrap_or(1000),
    );
    let before = peak_rss_kib();
    let start = Instant::now();
    let program = |rt| ring(rt, iters);
    let out = simulate(&Options::new(ranks as u32, Model::default()), &program);
    let secs = start.elapsed().as_secs_f64();
    if let Some(e) = out.error {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let msgs = ranks * iters;
    let rss = peak_rss_kib();
    println!(
        "kernel ring: {ranks} ranks x {iters} iters = {msgs} msgs in {secs:.3} s = {:.0} msgs/s; predicted {} ns; peak RSS {} MiB ({:.0} B/rank over baseline)",
        msgs as f64 / secs,
        out.report.predicted_ns(),
        rss / 1024,
        (rss.saturating_sub(before) * 1024) as f64 / ranks as f64
    );
}
