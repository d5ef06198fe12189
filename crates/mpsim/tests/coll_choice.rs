//! Which algorithm a collective call runs, and why (`docs/collectives.md` §4): the machine
//! model's cheapest, a `--coll` choice, the model file's `[collectives]`, `reproducible`, the
//! fixed table without a model; the report's collectives table (true, and the same bytes
//! sequential and on several simulator threads); and reproducible reductions, the same bits
//! whatever the algorithm, the backend or the number of ranks.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use std::sync::{Arc, Mutex};

use mpsim::sim::{CollectiveLine, Model, collective_choice, collective_ns};
use mpsim::{Algorithm, AlgorithmChoices, Backend, Collective, Comm, Error, Launcher, Op, Result};

/// The report's lines of a simulated run of `program` on `launcher`.
fn lines<F, Fut>(launcher: Launcher, program: F) -> Vec<CollectiveLine>
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: std::future::Future<Output = Result<()>>,
{
    let outcome = launcher.simulate(program);
    assert_eq!(outcome.error, None);
    outcome.report.collectives
}

fn choices(text: &str) -> AlgorithmChoices {
    text.parse().expect("choices parse")
}

/// An allreduce of `count` `f64`s.
async fn allreduce(world: Comm, count: usize) -> Result<()> {
    let mut out = vec![0.0f64; count];
    world
        .allreduce(&vec![1.0; count], &mut out, &Op::sum())
        .await
}

/// With nothing named, each call runs the model's cheapest algorithm, and the report says so;
/// on 16 ranks of the default model that is also the fastest of them simulated, at each of
/// 8 B, 64 KiB and 1 MiB.
#[test]
fn coll_choice_the_model_picks_the_cheapest() {
    let model = Model::default();
    for bytes in [8usize, 65_536, 1 << 20] {
        let count = bytes / 8;
        let chosen = collective_choice(&model, Collective::Allreduce, 16, count, 8, true)
            .expect("the model chooses");
        let got = lines(Launcher::new(16), move |w| allreduce(w, count));
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].algorithm, got[0].reason, got[0].calls),
            (chosen.name(), "model cost", 1)
        );
        let mut fastest = (u64::MAX, Algorithm::Ring);
        for &algo in Collective::Allreduce.algorithms() {
            if algo == Algorithm::Reproducible {
                continue;
            }
            let outcome = Launcher::new(16).simulate(move |w: Comm| async move {
                w.force_algorithm(Collective::Allreduce, Some(algo))?;
                allreduce(w, count).await
            });
            let t = outcome.report.run_ns();
            let formula = collective_ns(&model, Collective::Allreduce, algo, 16, count, 8);
            assert_eq!(t, formula, "{algo} at {bytes} B: simulated and formula");
            if t < fastest.0 {
                fastest = (t, algo);
            }
        }
        assert_eq!(chosen, fastest.1, "at {bytes} B");
    }
}

/// `--coll` names an algorithm for one collective; the others are still the model's; the
/// model file's choice gives way to it, and its `reproducible` applies where it names none.
#[test]
fn coll_choice_flag_over_model_file_over_cost() {
    let mut named = choices("allreduce=recursive_doubling,bcast=scatter_ring");
    named.reproducible = true;
    let model = Model {
        collectives: named,
        ..Model::default()
    };
    let launcher = Launcher::new(6)
        .model(model)
        .collectives(choices("allreduce=ring"));
    let got = lines(launcher, |world: Comm| async move {
        allreduce(world.clone(), 64).await?;
        let mut v = [1u32; 12];
        world.bcast(&mut v, 2).await?;
        let mut r = [0u32; 12];
        world.reduce(&v, &mut r, &Op::sum(), 1).await?;
        world.alltoall(&[0u8; 6], &mut [0u8; 6]).await?;
        world.barrier().await
    });
    let got: Vec<(&str, &str, &str, u64)> = got
        .iter()
        .map(|l| (l.collective, l.algorithm, l.reason, l.calls))
        .collect();
    assert_eq!(
        got,
        [
            ("barrier", "dissemination", "only algorithm", 1),
            ("bcast", "scatter_ring", "model file", 1),
            ("reduce", "reproducible", "model file: reproducible", 1),
            ("allreduce", "ring", "--coll", 1),
            ("alltoall", "scattered", "model cost", 1),
        ]
    );
}

/// A model file names algorithms in `[collectives]`; bad names and values are errors naming
/// the file's line and the names it could have been.
#[test]
fn coll_choice_model_file_collectives_section() {
    let head = "[network]\nssend_table = \"s.csv\"\nbsend_table = \"b.csv\"\nack_latency = 100\n";
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("s.csv"), "8,1000\n").expect("write");
    std::fs::write(dir.path().join("b.csv"), "8,900\n").expect("write");
    let load = |section: &str| Model::from_toml_str(&format!("{head}{section}"), dir.path());
    let m = load("[collectives]\nallreduce = \"ring\"\nreproducible = true\n").expect("loads");
    assert_eq!(
        m.collectives.get(Collective::Allreduce),
        Some(Algorithm::Ring)
    );
    assert!(m.collectives.reproducible);
    let cases = [
        (
            "[collectives]\n\nallreduse = \"ring\"\n",
            "7: `collectives.allreduse`: `allreduse` is not a collective: use barrier",
        ),
        (
            "[collectives]\nbcast = \"ring\"\n",
            "6: `collectives.bcast`: bcast has no algorithm `ring`: use binomial, \
             scatter_recursive_doubling, scatter_ring",
        ),
        (
            "[collectives]\nbcast = 3\n",
            "6: `collectives.bcast`: expected an algorithm's name as a string",
        ),
        (
            "[collectives]\nreproducible = \"yes\"\n",
            "6: `collectives.reproducible`: expected true or false",
        ),
    ];
    for (section, expected) in cases {
        let e = load(section).expect_err("a bad section").to_string();
        assert!(e.contains(expected), "{e}\nshould contain\n{expected}");
    }
    // What the model writes, it reads back.
    let out = tempfile::tempdir().expect("a directory");
    m.write_to(out.path()).expect("writes");
    assert_eq!(
        Model::load(out.path()).expect("loads").collectives,
        m.collectives
    );
}

/// An algorithm named for a reduction that needs a commutative operation, given one that is
/// not, fails that call with `InvalidOp` naming where it was named.
#[test]
fn coll_choice_a_named_algorithm_that_cannot_run_the_op_is_an_error() {
    let outcome = Launcher::new(3)
        .collectives(choices("allreduce=ring"))
        .simulate(|world: Comm| async move {
            let op = Op::<f64>::user(|a, b| b.copy_from_slice(a), false);
            let mut out = [0.0];
            world.allreduce(&[1.0], &mut out, &op).await
        });
    match outcome.error {
        Some(Error::InvalidOp { what, .. }) => {
            assert!(
                what.contains("named by --coll for allreduce (ring)"),
                "{what}"
            )
        }
        other => panic!("expected InvalidOp, got {other:?}"),
    }
}

/// A nonblocking collective runs what its blocking form would (a `--coll` name, the model
/// file's `reproducible`, the only algorithm), and the report counts it on its blocking
/// collective's line, beside the blocking calls (`docs/collectives.md` §7, §8).
#[test]
fn coll_choice_nonblocking_calls_follow_the_policy_and_are_counted() {
    let mut named = AlgorithmChoices::default();
    named.reproducible = true;
    let model = Model {
        collectives: named,
        ..Model::default()
    };
    let launcher = Launcher::new(6)
        .model(model)
        .collectives(choices("allreduce=ring"));
    let got = lines(launcher, |world: Comm| async move {
        let mut a = vec![0.0f64; 64];
        let mut r = [0u32; 12];
        let mut reqs = vec![
            world.iallreduce(&[1.0; 64], &mut a, &Op::sum())?,
            world.ireduce(&[1u32; 12], &mut r, &Op::sum(), 1)?,
            world.ibarrier()?,
        ];
        mpsim::wait_all(&mut reqs).await?;
        drop(reqs);
        assert_eq!(a, vec![6.0; 64]);
        allreduce(world.clone(), 64).await
    });
    let summary: Vec<(&str, &str, &str, u64)> = got
        .iter()
        .map(|l| (l.collective, l.algorithm, l.reason, l.calls))
        .collect();
    assert_eq!(
        summary,
        [
            ("barrier", "dissemination", "only algorithm", 1),
            ("reduce", "reproducible", "model file: reproducible", 1),
            ("allreduce", "ring", "--coll", 2),
        ]
    );
    assert!(got.iter().all(|l| l.rank_ns > 0 && l.longest_ns > 0));
}

/// A real run has no model: the fixed table chooses, and says so; `--coll` still applies.
#[test]
fn coll_choice_threads_use_the_table_and_the_flags() {
    let (report, error) = Launcher::new(4)
        .backend(Backend::Threads)
        .collectives(choices("bcast=scatter_ring"))
        .measure(|world: Comm| async move {
            allreduce(world.clone(), 4).await?;
            let mut v = [0u8; 40];
            world.bcast(&mut v, 0).await
        });
    assert_eq!(error, None);
    let got: Vec<(&str, &str, &str, u64)> = report
        .collectives
        .iter()
        .map(|l| (l.collective, l.algorithm, l.reason, l.calls))
        .collect();
    assert_eq!(
        got,
        [
            ("bcast", "scatter_ring", "--coll", 1),
            ("allreduce", "recursive_doubling", "table: no model", 1),
        ]
    );
}

/// The report's collectives table holds true figures: calls counted once per operation, the
/// time summed over ranks and the longest one rank spent; and it is the same, byte for byte,
/// sequential and on several simulator threads.
#[test]
fn coll_choice_report_is_true_and_deterministic() {
    let program = |world: Comm| async move {
        for i in 0..3usize {
            allreduce(world.clone(), 1 + 5000 * i).await?;
        }
        let half = world
            .split(Some(world.rank() % 2), 0)
            .await?
            .expect("every rank has a color");
        half.barrier().await?;
        let mut v = vec![0u64; 100];
        half.bcast(&mut v, 0).await
    };
    let run = |threads: u32| {
        let outcome = Launcher::new(64).sim_threads(threads).simulate(program);
        assert_eq!(outcome.error, None);
        outcome.report
    };
    let one = run(1);
    for threads in [2, 4] {
        let many = run(threads);
        assert_eq!(one.to_string(), many.to_string());
        assert_eq!(one.to_json(), many.to_json());
    }
    let barrier = one
        .collectives
        .iter()
        .find(|l| l.collective == "barrier")
        .expect("a barrier line");
    // Two communicators of 32 each: two operations, 64 rank-calls of 5 rounds each.
    assert_eq!(barrier.calls, 2);
    let text = one.to_string();
    assert!(
        text.contains("collectives\n  collective      algorithm"),
        "{text}"
    );
    let allreduce: u64 = one
        .collectives
        .iter()
        .filter(|l| l.collective == "allreduce")
        .map(|l| l.calls)
        .sum();
    assert_eq!(allreduce, 3);
    // 64 rank-calls, none longer than the longest, which is at least the 5 rounds of 32.
    assert!(barrier.rank_ns <= 64 * barrier.longest_ns && barrier.longest_ns > 0);
    let five_rounds = collective_ns(
        &Model::default(),
        Collective::Barrier,
        Algorithm::Dissemination,
        32,
        0,
        1,
    );
    assert!(barrier.longest_ns >= five_rounds);
}

/// `x[r]` for rank `r`: magnitudes from 1e-8 to 1e8 and both signs, so that the order of a
/// sum changes its bits.
fn value(r: u32, i: usize) -> f64 {
    let m = [1e-8, 3.7, -1e8, 0.1, 2.5e4, -7.25, 1e8 + 1.0][(r as usize + i) % 7];
    m * (1.0 + f64::from(r) / 3.0)
}

/// The reproducible bracketing, sequentially: the binomial tree over ranks at rank 0, the
/// lower ranks' part on the left.
fn tree(x: &[f64]) -> f64 {
    fn sub(x: &[f64], v: usize, low: usize) -> f64 {
        let mut acc = x[v];
        let mut m = 1;
        while m < low && v + m < x.len() {
            acc += sub(x, v + m, m);
            m <<= 1;
        }
        acc
    }
    sub(x, 0, x.len().next_power_of_two())
}

/// Every reduction under `reproducible` gives the bits of the fixed tree: on every rank, for
/// every bcast algorithm the allreduce's second half runs, and on more ranks whose extra
/// ranks contribute zeros (the same bits as on fewer).
fn reproducible(backend: Backend) {
    const COUNT: usize = 7;
    let mut on = AlgorithmChoices::default();
    on.reproducible = true;
    for k in 1..=6u32 {
        let expected: Vec<u64> = (0..COUNT)
            .map(|i| tree(&(0..k).map(|r| value(r, i)).collect::<Vec<_>>()).to_bits())
            .collect();
        for p in [k, k + 1, k + 3, 2 * k + 5] {
            for &bcast in Collective::Bcast.algorithms() {
                let got = Arc::new(Mutex::new(Vec::new()));
                let seen = Arc::clone(&got);
                let ran = backends::launcher(p, backend)
                    .collectives(on)
                    .run(move |world: Comm| {
                        let seen = Arc::clone(&seen);
                        async move {
                            world.force_algorithm(Collective::Bcast, Some(bcast))?;
                            let me = world.rank();
                            let x: Vec<f64> = (0..COUNT)
                                .map(|i| if me < k { value(me, i) } else { 0.0 })
                                .collect();
                            let mut all = [0.0; COUNT];
                            world.allreduce(&x, &mut all, &Op::sum()).await?;
                            let mut at_root = [0.0; COUNT];
                            world.reduce(&x, &mut at_root, &Op::sum(), p - 1).await?;
                            let wide: Vec<f64> = (0..p as usize).flat_map(|_| x.clone()).collect();
                            let mut block = [0.0; COUNT];
                            world
                                .reduce_scatter_block(&wide, &mut block, &Op::sum())
                                .await?;
                            let mut results = vec![all, block];
                            if me == p - 1 {
                                results.push(at_root);
                            }
                            seen.lock().expect("results").push(results);
                            Ok(())
                        }
                    });
                assert_eq!(ran, Ok(()));
                for results in got.lock().expect("results").iter() {
                    for r in results {
                        let bits: Vec<u64> = r.iter().map(|v| v.to_bits()).collect();
                        assert_eq!(bits, expected, "k={k} p={p} bcast={bcast}");
                    }
                }
            }
        }
    }
}
on_both!(reproducible => coll_reproducible_same_bits_sim, coll_reproducible_same_bits_threads);
