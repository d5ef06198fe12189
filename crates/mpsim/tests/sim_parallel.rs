//! The parallel simulator (`--sim-threads`, `docs/timing.md` §5) on what the timing tests do
//! not cover: many ranks in wide exchanges with traces, probes and cancels across partitions,
//! and runs that end in a panic or an error in one partition while the others go on. Each
//! runs sequentially, on 2 threads and on one thread per rank (`common::simulate_all_ways`),
//! which must give the same report, error and trace.

mod common;

use std::future::Future;
use std::time::Duration;

use common::{simulate_all_ways, simulate_on_threads};
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

/// `program` on `ranks` ranks of the worked examples' model, traced, on 1 thread and on 2, 3,
/// 5 and 16: the same report, error and trace (`seed` names the case); checks that it ended
/// as fault `fault` makes it end (0: no error, 1: rank `panicked` panics, 2: a truncated
/// receive, 3: a buffered send's overflow).
fn faults_same_on_any_threads<F, Fut>(seed: u64, fault: u64, panicked: u32, ranks: u32, program: F)
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let launcher = Launcher::new(ranks)
        .model(Model::worked_examples())
        .trace("unused-by-simulate.json");
    let case = format!("seed {seed}: ");
    let sequential = simulate_on_threads(launcher, &[2, 3, 5, 16], &case, program);
    let expected = match fault {
        0 => sequential.error.is_none(),
        1 => matches!(sequential.error, Some(Error::Aborted { rank, .. }) if rank == panicked),
        2 => matches!(sequential.error, Some(Error::Truncate { .. })),
        _ => matches!(sequential.error, Some(Error::BufferOverflow { .. })),
    };
    assert!(expected, "{case}{:?}", sequential.error);
}

/// A well-mixed 64-bit hash (splitmix64): the random choices of the random-fault tests below,
/// the same in every rank and every run.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Random exchanges (a shift of the ranks per step, messages of 1 to 64 bytes) after compute
/// of random length, ending in an error at a random rank and step (a panic, a truncated
/// receive, a buffered send that overflows its buffer) or in none. The partitions run ahead
/// of one another by different amounts, and the run must stop at the same place (D2), with
/// the same report, error and trace, on 1, 2, 3, 5 and 16 threads.
#[test]
fn sim_parallel_random_errors_stop_the_same_way_on_any_number_of_threads() {
    const RANKS: u32 = 16;
    const STEPS: u64 = 10;
    for seed in 0..32u64 {
        let fault = seed % 4;
        let pick = |a: u64, b: u64| mix(mix(seed ^ (a << 32)) ^ b);
        let bad_rank = (pick(1, 1) % u64::from(RANKS)) as u32;
        let bad_step = pick(2, 2) % STEPS;
        let program = |world: Comm| async move {
            let (me, n) = (world.rank(), world.size());
            let faulty = |kind| fault == kind && me == bad_rank;
            if faulty(3) {
                world.buffer_attach(64)?;
            }
            for step in 0..STEPS {
                let work = pick(u64::from(me), step) % 700;
                world.compute(Duration::from_nanos(work)).await;
                let here = step == bad_step;
                if here && faulty(1) {
                    panic!("injected fault at step {step}");
                }
                if here && faulty(3) {
                    world.bsend(&[0u8; 128], (me + 1) % n, 99).await?;
                }
                let shift = 1 + (pick(99, step) % u64::from(n - 1)) as u32;
                let (to, from) = ((me + shift) % n, (me + n - shift) % n);
                let len = 1 + (pick(u64::from(me), 1000 + step) % 64) as usize;
                let mut buf = [0u8; 64];
                let room = if here && faulty(2) { 0 } else { 64 };
                let mut reqs = vec![
                    world.irecv(&mut buf[..room], from, 5)?,
                    world.isend(&vec![me as u8; len], to, 5)?,
                ];
                wait_all(&mut reqs).await?;
            }
            Ok(())
        };
        faults_same_on_any_threads(seed, fault, bad_rank, RANKS, program);
    }
}

/// A token's random walk over ranks 3 to 15, each holder passing it on after a little
/// compute, while ranks 0 to 2 (in the first partition on 2, 3 and 5 threads) only compute,
/// step after step; a random holder fails (a panic, a truncated receive, a buffered
/// send that overflows) or none does. The other partitions are idle but for the token, so a
/// partition's round is bounded by the token's arrival in another alone: running past it would
/// run the computing ranks past where the stop (D2) must leave them. The same report, error
/// and trace on 1, 2, 3, 5 and 16 threads.
#[test]
fn sim_parallel_random_walk_with_errors_stops_the_same_way_on_any_number_of_threads() {
    const RANKS: u32 = 16;
    const HOPS: u64 = 40;
    for seed in 0..32u64 {
        let fault = seed % 4;
        let pick = |a: u64, b: u64| mix(mix(seed ^ (a << 32)) ^ b);
        // The walk: hop h's holder; no rank holds it twice in a row.
        let walk: Vec<u32> = (0..=HOPS)
            .scan(RANKS, |last, h| {
                let mut r = 3 + (pick(7, h) % u64::from(RANKS - 3)) as u32;
                if r == *last {
                    r = 3 + (r - 3 + 1) % (RANKS - 3);
                }
                *last = r;
                Some(r)
            })
            .collect();
        let bad_hop = 1 + pick(2, 2) % HOPS;
        let walk = &walk;
        let program = |world: Comm| async move {
            let me = world.rank();
            if me < 3 {
                for step in 0..120 {
                    let work = 50 + pick(u64::from(me), step) % 250;
                    world.compute(Duration::from_nanos(work)).await;
                }
                return Ok(());
            }
            let faulty = |kind, h| fault == kind && h == bad_hop;
            if fault == 3 && walk.get(bad_hop as usize) == Some(&me) {
                world.buffer_attach(64)?;
            }
            for h in 0..=HOPS {
                if walk[h as usize] != me {
                    continue;
                }
                let mut token = [0u8; 8];
                if h > 0 {
                    let room = if faulty(2, h) { 0 } else { 8 };
                    world
                        .recv(&mut token[..room], walk[h as usize - 1], 1)
                        .await?;
                }
                world
                    .compute(Duration::from_nanos(pick(u64::from(me), h) % 150))
                    .await;
                if faulty(1, h) {
                    panic!("injected fault at hop {h}");
                }
                if faulty(3, h) {
                    world.bsend(&[0u8; 128], walk[h as usize - 1], 99).await?;
                }
                if h < HOPS {
                    world.send(&token, walk[h as usize + 1], 1).await?;
                }
            }
            Ok(())
        };
        let panicked = walk[bad_hop as usize];
        faults_same_on_any_threads(seed, fault, panicked, RANKS, program);
    }
}
