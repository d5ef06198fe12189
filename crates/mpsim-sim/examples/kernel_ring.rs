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
use mpsim_proto::p2p::SendMode;
use mpsim_proto::runtime::{Payload, RankRuntime};
use mpsim_sim::{Model, Options, simulate};

async fn ring(rt: Rc<dyn RankRuntime>, iters: u64) -> Result<(), Error> {
    let (me, n) = (rt.rank(), rt.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let ctx = ContextId(0);
    for _ in 0..iters {
        if me != 0 {
            recv(&rt, left, ctx).await?;
        }
        let mut req = None;
        rt.with_endpoint(&mut |ep| {
            req = Some(ep.isend(
                SendMode::Standard,
                right,
                Envelope::new(ctx, me, 7),
                Payload::from_elem(0, 8),
            ))
        });
        let req = req.expect("ran")?;
        poll_fn(|cx| rt.poll_done(req, "send", cx)).await?;
        rt.with_endpoint(&mut |ep| drop(ep.test(req)));
        if me == 0 {
            recv(&rt, left, ctx).await?;
        }
    }
    Ok(())
}

async fn recv(rt: &Rc<dyn RankRuntime>, from: u32, ctx: ContextId) -> Result<(), Error> {
    let mut req = None;
    rt.with_endpoint(&mut |ep| req = Some(ep.irecv(Pattern::new(ctx, from, 7), 8)));
    let req = req.expect("ran");
    poll_fn(|cx| rt.poll_done(req, "recv", cx)).await?;
    rt.with_endpoint(&mut |ep| drop(ep.test(req)));
    Ok(())
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
