//! The parallel simulator (`--sim-threads`, `spec/timing.md` §5) on what the timing tests do
//! not cover: many ranks in wide exchanges with traces, probes and cancels across partitions,
//! and runs that end in a panic or an error in one partition while the others go on. Each
//! runs sequentially, on 2 threads and on one thread per rank (`common::simulate_all_ways`),
//! which must give the same report, error and trace.

mod common;

use std::future::Future;
use std::time::Duration;

use common::simulate_all_ways;
use mpsim::sim::{Model, Outcome};
use mpsim::{Comm, Error, Launcher, Source, Tag, wait_all};

/// `program` on `ranks` ranks of the worked examples' model, every way (`simulate_all_ways`).
fn sim<F, Fut>(ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    simulate_all_ways(
        Launcher::new(ranks).model(Model::worked_examples()),
        ranks,
        program,
    )
}

/// A 2D halo exchange of 48 ranks on a 6 x 8 torus, with compute between rounds that differs
/// per rank, so that rounds hold a varying share of the ranks; traced.
#[test]
fn sim_parallel_halo_exchange_with_trace() {
    let launcher = Launcher::new(48)
        .model(Model::worked_examples())
        .trace("unused-by-simulate.json");
    let o = simulate_all_ways(launcher, 48, |world: Comm| async move {
        let (me, n) = (world.rank(), world.size());
        let (w, h) = (6, n / 6);
        let (x, y) = (me % w, me / w);
        let peers = [
            (x + 1) % w + y * w,
            (x + w - 1) % w + y * w,
            x + ((y + 1) % h) * w,
            x + ((y + h - 1) % h) * w,
        ];
        let mut halo = [[0u64; 4]; 4];
        for round in 0..5u64 {
            world
                .compute(Duration::from_nanos(100 * u64::from(me % 7) + 37 * round))
                .await;
            let [a, b, c, d] = &mut halo;
            let mut reqs = vec![
                world.irecv(a, peers[0], 1)?,
                world.irecv(b, peers[1], 0)?,
                world.irecv(c, peers[2], 3)?,
                world.irecv(d, peers[3], 2)?,
            ];
            for (i, &p) in peers.iter().enumerate() {
                reqs.push(world.isend(&[u64::from(me) + round; 4], p, i as i32)?);
            }
            wait_all(&mut reqs).await?;
            drop(reqs);
            assert_eq!(halo[0][0], u64::from(peers[0]) + round);
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert!(o.trace.is_some_and(|t| t.len() > 48 * 5 * 4));
}

/// Probes, wildcards and a send's cancel (D1) between ranks of different partitions.
#[test]
fn sim_parallel_probe_wildcards_and_cancel_across_partitions() {
    let o = sim(4, |world: Comm| async move {
        match world.rank() {
            0 => {
                let mut from = Vec::new();
                for _ in 0..2 {
                    let st = world.probe(Source::Any, Tag::Any).await?;
                    let mut b = [0u8; 4];
                    world.recv(&mut b, st.source, st.tag).await?;
                    from.push(st.source);
                }
                from.sort();
                assert_eq!(from, [1, 2]);
            }
            1 | 2 => world.send(&[world.rank() as u8; 4], 0, 5).await?,
            _ => {
                let mut s = world.issend(&[7u8; 8], 0, 9)?;
                world.compute(Duration::from_nanos(3000)).await;
                s.cancel()?;
                assert!(s.wait().await?.cancelled);
            }
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
}

/// A panic on one rank while ranks of the other partition keep exchanging: the same error
/// (the first by event key) and the same report as of one lookahead after it (D2).
#[test]
fn sim_parallel_panic_in_one_partition() {
    let o = sim(6, |world: Comm| async move {
        let me = world.rank();
        if me == 4 {
            world.compute(Duration::from_nanos(2500)).await;
            panic!("rank 4 gives up");
        }
        let peer = me ^ 1;
        for i in 0..20u32 {
            let mut got = [0u32];
            world.sendrecv(&[i], peer, 0, &mut got, peer, 0).await?;
        }
        Ok(())
    });
    match &o.error {
        Some(Error::Aborted { rank: 4, cause }) => assert!(cause.contains("gives up"), "{cause}"),
        other => panic!("expected rank 4's panic, got {other:?}"),
    }
}

/// A truncation in one partition, found at the receiver (another partition): the same error.
#[test]
fn sim_parallel_truncation_across_partitions() {
    let o = sim(4, |world: Comm| async move {
        match world.rank() {
            0 => world.send(&[1u8; 64], 3, 0).await?,
            3 => {
                world.recv(&mut [0u8; 8], 0, 0).await?;
            }
            _ => world.compute(Duration::from_nanos(10_000)).await,
        }
        Ok(())
    });
    assert!(
        matches!(o.error, Some(Error::Truncate { .. })),
        "{:?}",
        o.error
    );
}
