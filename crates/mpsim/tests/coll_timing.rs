//! The simulator's predicted time of each collective algorithm against its cost formula
//! (`mpsim::sim::collective_ns`, `docs/collectives.md` §4), on flat models: delays
//! `alpha + beta * bytes` (`D_bsend`: 1000 ns + 1 ns/byte; `D_ssend`: 1300 ns + 2 ns/byte),
//! an ack of 200 ns, every rank entering the call at time 0, one call. Two models: every
//! message eager (`eager`) and every message with data by rendezvous (`rendezvous`; empty
//! messages stay eager); the formulas are those `docs/timing.md` gives these protocols
//! (`collective_ns`'s module, `coll/cost.rs`, derives each).
//!
//! Every algorithm is checked at every size from 2 to 64 ranks, with counts that cut into
//! equal blocks: exactly, except the fold of recursive doubling, recursive halving and
//! Rabenseifner's algorithm on sizes that are not a power of two, where the formula is an
//! upper bound (ranks outside the fold start early and absorb part of it): there the test
//! checks `predicted <= formula <= predicted + fold`, with `fold` the two fold messages (and
//! so for the reproducible allreduce, whose bcast may be one of those).

use std::future::Future;

use mpsim::sim::{DelayTable, Model, collective_ns};
use mpsim::{Algorithm, Collective, Comm, Launcher, Op, Result};

/// `D(s) = alpha + beta * s`, exact for every size (a line through two points, extended).
fn line(alpha: u64, beta: u64) -> DelayTable {
    DelayTable::new("flat", vec![(0, alpha), (1000, alpha + 1000 * beta)]).expect("a table")
}

fn flat(eager_threshold: usize) -> Model {
    Model {
        bsend: line(1000, 1),
        ssend: line(1300, 2),
        ack_latency_ns: 200,
        eager_threshold,
        system_buffer: None,
        ..Model::worked_examples()
    }
}

fn eager() -> Model {
    flat(1 << 30)
}

fn rendezvous() -> Model {
    flat(0)
}

/// The predicted time of `program` on `p` ranks of `model`.
fn predicted<F, Fut>(model: &Model, p: u32, program: F) -> u64
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let outcome = Launcher::new(p).model(model.clone()).simulate(program);
    assert_eq!(outcome.error, None, "the run failed");
    outcome.report.run_ns()
}

/// The largest power of two not above `p`.
fn pof2(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// The count (in `u64`s) of the call's vector as the formula reads it, on `p` ranks: a
/// multiple of `p` and of the power of two below it.
fn count(coll: Collective, p: u32) -> usize {
    match coll {
        Collective::Alltoall | Collective::Alltoallv => 3,
        _ => (p * pof2(p)) as usize,
    }
}

/// One call of `coll` by `algo`, its vector `count` elements as `collective_ns` reads it.
async fn call(world: Comm, coll: Collective, algo: Algorithm, count: usize) -> Result<()> {
    world.force_algorithm(coll, Some(algo))?;
    let (p, me) = (world.size() as usize, world.rank());
    let sum = Op::<u64>::sum();
    let v = vec![u64::from(me) + 1; count];
    let mut out = vec![0u64; count];
    let b = count / p;
    let blocks = vec![b; p];
    match coll {
        Collective::Barrier => world.barrier().await,
        Collective::Bcast => world.bcast(&mut out, 0).await,
        Collective::Reduce => world.reduce(&v, &mut out, &sum, 0).await,
        Collective::Allreduce => world.allreduce(&v, &mut out, &sum).await,
        Collective::Gather => world.gather(&v[..b], &mut out, 0).await,
        Collective::Gatherv => world.gatherv(&v[..b], &mut out, &blocks, 0).await,
        Collective::Scatter => world.scatter(&v, &mut out[..b], 0).await,
        Collective::Scatterv => world.scatterv(&v, &blocks, &mut out[..b], 0).await,
        Collective::Allgather => world.allgather(&v[..b], &mut out).await,
        Collective::Allgatherv => world.allgatherv(&v[..b], &mut out, &blocks).await,
        Collective::Alltoall => {
            let (v, mut out) = (vec![1u64; count * p], vec![0u64; count * p]);
            world.alltoall(&v, &mut out).await
        }
        Collective::Alltoallv => {
            let (v, mut out) = (vec![1u64; count * p], vec![0u64; count * p]);
            let c = vec![count; p];
            world.alltoallv(&v, &c, &mut out, &c).await
        }
        Collective::ReduceScatter => world.reduce_scatter_block(&v, &mut out[..b], &sum).await,
        Collective::Scan => world.scan(&v, &mut out, &sum).await,
        Collective::Exscan => world.exscan(&v, &mut out, &sum).await,
        _ => unreachable!("every collective is above"),
    }
}

/// Whether `algo`'s formula for `coll` on `p` ranks folds a size that is not a power of two
/// (an upper bound there). A reproducible allreduce's bcast may be one that folds.
fn folds(coll: Collective, algo: Algorithm, p: u32) -> bool {
    use Algorithm as A;
    use Collective as C;
    let folding = matches!(
        (coll, algo),
        (C::Allreduce, A::RecursiveDoubling | A::Rabenseifner)
            | (C::Reduce, A::Rabenseifner)
            | (C::Allgather | C::Allgatherv, A::RecursiveDoubling)
            | (C::Bcast, A::ScatterRecursiveDoubling)
            | (C::ReduceScatter, A::RecursiveHalving)
            | (C::Allreduce, A::Reproducible)
    );
    folding && !p.is_power_of_two()
}

/// Checks every size from 2 to 64 ranks of `algo` for `coll` on both models.
fn check(coll: Collective, algo: Algorithm) {
    let mut wrong = Vec::new();
    for (name, model) in [("eager", eager()), ("rendezvous", rendezvous())] {
        for p in 2..=64u32 {
            let n = count(coll, p);
            let got = predicted(&model, p, |world| call(world, coll, algo, n));
            let formula = collective_ns(&model, coll, algo, p, n, 8);
            let ok = if folds(coll, algo, p) {
                let whole = (n * 8) as u64;
                let fold = 2 * (model.ssend.delay(whole) + model.ack_latency_ns);
                got <= formula && formula <= got + fold
            } else {
                got == formula
            };
            if !ok {
                wrong.push(format!("{name} p={p}: predicted {got}, formula {formula}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{coll} {algo}: {} of 126 cases off:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

macro_rules! timing_tests {
    ($($name:ident: $coll:ident $algo:ident;)*) => {$(
        #[test]
        fn $name() {
            check(Collective::$coll, Algorithm::$algo);
        }
    )*};
}

timing_tests! {
    coll_timing_barrier_dissemination: Barrier Dissemination;
    coll_timing_bcast_binomial: Bcast Binomial;
    coll_timing_bcast_scatter_recursive_doubling: Bcast ScatterRecursiveDoubling;
    coll_timing_bcast_scatter_ring: Bcast ScatterRing;
    coll_timing_reduce_binomial: Reduce Binomial;
    coll_timing_reduce_rabenseifner: Reduce Rabenseifner;
    coll_timing_reduce_reproducible: Reduce Reproducible;
    coll_timing_allreduce_recursive_doubling: Allreduce RecursiveDoubling;
    coll_timing_allreduce_rabenseifner: Allreduce Rabenseifner;
    coll_timing_allreduce_ring: Allreduce Ring;
    coll_timing_allreduce_reproducible: Allreduce Reproducible;
    coll_timing_gather_binomial: Gather Binomial;
    coll_timing_gather_linear: Gather Linear;
    coll_timing_gatherv_linear: Gatherv Linear;
    coll_timing_scatter_binomial: Scatter Binomial;
    coll_timing_scatter_linear: Scatter Linear;
    coll_timing_scatterv_linear: Scatterv Linear;
    coll_timing_allgather_recursive_doubling: Allgather RecursiveDoubling;
    coll_timing_allgather_bruck: Allgather Bruck;
    coll_timing_allgather_ring: Allgather Ring;
    coll_timing_allgatherv_recursive_doubling: Allgatherv RecursiveDoubling;
    coll_timing_allgatherv_ring: Allgatherv Ring;
    coll_timing_alltoall_bruck: Alltoall Bruck;
    coll_timing_alltoall_scattered: Alltoall Scattered;
    coll_timing_alltoall_pairwise: Alltoall Pairwise;
    coll_timing_alltoallv_scattered: Alltoallv Scattered;
    coll_timing_alltoallv_pairwise: Alltoallv Pairwise;
    coll_timing_reduce_scatter_recursive_halving: ReduceScatter RecursiveHalving;
    coll_timing_reduce_scatter_pairwise: ReduceScatter Pairwise;
    coll_timing_reduce_scatter_reduce_then_scatter: ReduceScatter ReduceThenScatter;
    coll_timing_reduce_scatter_reproducible: ReduceScatter Reproducible;
    coll_timing_scan_linear: Scan Linear;
    coll_timing_exscan_linear: Exscan Linear;
}

/// Every algorithm of every collective has a test above.
#[test]
fn coll_timing_every_algorithm_is_checked() {
    let pairs: usize = Collective::ALL.iter().map(|c| c.algorithms().len()).sum();
    assert_eq!(pairs, 33);
}
