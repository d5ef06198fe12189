//! Nonblocking collectives (`docs/collectives.md` §7): they complete through the wait and test
//! family, move on while the rank waits for anything (an unrelated request, a blocking send or
//! receive), several may be in flight on one communicator at once, and their results are the
//! sequential reference's, on `sim` and `threads`.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;
#[path = "common/coll.rs"]
mod coll;

use mpsim::{Backend, Collective, Comm, Op, wait_all};

use backends::{launcher, run_ok};
use coll::*;

fn ibcast_then_wait(backend: Backend) {
    for n in [1, 2, 3, 5, 8] {
        run_ok(launcher(n, backend), move |world: Comm| async move {
            let mut data = if world.rank() == 1 % n {
                [7u32, 8]
            } else {
                [0; 2]
            };
            let req = world.ibcast(&mut data, 1 % n)?;
            req.wait().await?;
            assert_eq!(data, [7, 8]);
            world.ibarrier()?.wait().await?;
            Ok(())
        });
    }
}
on_both!(ibcast_then_wait => coll_nb_ibcast_completes_by_wait_sim, coll_nb_ibcast_completes_by_wait_threads);

/// Rank 0 waits only on a point-to-point receive whose message rank 1 sends after its own
/// allreduce completes: rank 0's allreduce must move on inside that unrelated wait.
fn progress_in_unrelated_wait(backend: Backend) {
    for n in [2, 3, 4, 7] {
        run_ok(launcher(n, backend), move |world: Comm| async move {
            let me = world.rank();
            let mut sum = [0u64];
            let req = world.iallreduce(&[u64::from(me) + 1], &mut sum, &Op::sum())?;
            if me == 0 {
                let mut got = [0u64];
                world.recv(&mut got, 1, 5).await?;
                assert_eq!(got[0], u64::from(n) * u64::from(n + 1) / 2);
            } else {
                let mut reqs = [req];
                wait_all(&mut reqs).await?;
                drop(reqs);
                if me == 1 {
                    world.send(&[sum[0]], 0, 5).await?;
                }
                return Ok(());
            }
            req.wait().await?;
            assert_eq!(sum[0], u64::from(n) * u64::from(n + 1) / 2);
            Ok(())
        });
    }
}
on_both!(progress_in_unrelated_wait => coll_nb_progresses_in_an_unrelated_receive_sim, coll_nb_progresses_in_an_unrelated_receive_threads);

/// The `i`-th algorithm of every collective forced at once (the last one where it has fewer).
fn force_all(world: &Comm, i: usize) {
    for coll in Collective::ALL {
        let algos = coll.algorithms();
        world
            .force_algorithm(coll, Some(algos[i.min(algos.len() - 1)]))
            .expect("the collective has the algorithm");
    }
}

/// How many algorithm sets [`force_all`] has: the most any collective has.
fn algorithm_sets() -> usize {
    Collective::ALL
        .iter()
        .map(|c| c.algorithms().len())
        .max()
        .unwrap_or(1)
}

/// Whether the `i`-th set runs `coll` by an algorithm that takes a non-commutative operation.
fn ordered(coll: Collective, i: usize) -> bool {
    let algos = coll.algorithms();
    !algos[i.min(algos.len() - 1)].needs_commutative(coll)
}

/// Every nonblocking collective started at once, per count and root, around a ring exchange of
/// point-to-point messages, then completed by one `wait_all` over all of them: against the
/// sequential reference, for every size from 1 to 33 and every algorithm.
fn every_collective_at_once(backend: Backend) {
    for set in 0..algorithm_sets() {
        for n in SIZES {
            let got = run_set(backend, n, set);
            check_set(&got, n, set);
        }
    }
}
on_both!(every_collective_at_once => coll_nb_every_collective_in_flight_at_once_against_reference_sim, coll_nb_every_collective_in_flight_at_once_against_reference_threads);

/// The `v` calls' counts: rank `i` gives `(count + i) % 3` elements.
fn vcounts(n: u32, count: usize) -> Vec<usize> {
    (0..n as usize).map(|i| (count + i) % 3).collect()
}

/// The element rank `from` sends rank `to` in an alltoall: both ranks and the position.
fn a2a(from: u32, to: u32, i: usize) -> u64 {
    u64::from(from) << 40 | u64::from(to) << 20 | i as u64
}

/// Rank `i` sends `(i + j + count) % 4` elements to rank `j` in the alltoallv.
fn a2av(i: u32, j: u32, count: usize) -> usize {
    (i as usize + j as usize + count) % 4
}

/// Reduce-scatter blocks: block `i` has `(count + 2i) % 5` elements.
fn rs_counts(n: u32, count: usize) -> Vec<usize> {
    (0..n as usize).map(|i| (count + 2 * i) % 5).collect()
}

fn run_set(backend: Backend, n: u32, set: usize) -> Results {
    let rec = Recorder::default();
    let out = rec.clone();
    let program = move |world: Comm| {
        let rec = rec.clone();
        async move {
            force_all(&world, set);
            let me = world.rank();
            let nu = n as usize;
            for count in counts(n) {
                let count = count.min(1_000);
                for root in roots(n) {
                    let case = |what: &str| format!("{what} {count} {root}");
                    let is_root = me == root;
                    let vc = vcounts(n, count);
                    let rc = rs_counts(n, count);
                    let rtotal: usize = rc.iter().sum();
                    let sc: Vec<usize> = (0..n).map(|j| a2av(me, j, count)).collect();
                    let ac: Vec<usize> = (0..n).map(|i| a2av(i, me, count)).collect();
                    let a2a_send: Vec<u64> = (0..n)
                        .flat_map(|j| (0..count).map(move |i| a2a(me, j, i)))
                        .collect();
                    let a2av_send: Vec<u64> = (0..n)
                        .flat_map(|j| (0..sc[j as usize]).map(move |i| a2a(me, j, i)))
                        .collect();
                    let mut bcast = if is_root {
                        ints(root, count, 1)
                    } else {
                        vec![0; count]
                    };
                    let mut reduce = vec![0i64; if is_root { count } else { 0 }];
                    let mut mat_reduce = vec![Mat::default(); if is_root { count } else { 0 }];
                    let mut allreduce = vec![0i64; count];
                    let mut fsum = vec![0f64; count];
                    let mut mat_all = vec![Mat::default(); count];
                    let mut gather = vec![0i64; if is_root { count * nu } else { 0 }];
                    let mut gatherv = vec![0i64; if is_root { vc.iter().sum() } else { 0 }];
                    let scatter_send = if is_root {
                        ints(root, count * nu, 10)
                    } else {
                        Vec::new()
                    };
                    let mut scatter = vec![0i64; count];
                    let scatterv_send = if is_root {
                        ints(root, vc.iter().sum(), 10)
                    } else {
                        Vec::new()
                    };
                    let mut scatterv = vec![0i64; vc[me as usize]];
                    let mut allgather = vec![0i64; count * nu];
                    let mut allgatherv = vec![0i64; vc.iter().sum()];
                    let mut alltoall = vec![0u64; count * nu];
                    let mut alltoallv = vec![0u64; ac.iter().sum()];
                    let mut rs = vec![0i64; rc[me as usize]];
                    let mut mat_rs = vec![Mat::default(); rc[me as usize]];
                    let mut rsb = vec![0i64; count];
                    let mut scan = vec![0i64; count];
                    let mut exscan = vec![7i64; count];
                    let mut reqs = vec![
                        world.ibarrier()?,
                        world.ibcast(&mut bcast, root)?,
                        world.ireduce(&ints(me, count, 2), &mut reduce, &Op::sum(), root)?,
                        world.ireduce(&mats(me, count, 3), &mut mat_reduce, &mat_op(), root)?,
                        world.iallreduce(&ints(me, count, 5), &mut allreduce, &Op::sum())?,
                        world.iallreduce(&floats(me, count, 6), &mut fsum, &Op::sum())?,
                        world.igather(&ints(me, count, 9), &mut gather, root)?,
                        world.igatherv(
                            &ints(me, vc[me as usize], 9),
                            &mut gatherv,
                            if is_root { &vc } else { &[] },
                            root,
                        )?,
                        world.iscatter(&scatter_send, &mut scatter, root)?,
                        world.iscatterv(&scatterv_send, &vc, &mut scatterv, root)?,
                        world.iallgather(&ints(me, count, 11), &mut allgather)?,
                        world.iallgatherv(&ints(me, vc[me as usize], 11), &mut allgatherv, &vc)?,
                        world.ialltoall(&a2a_send, &mut alltoall)?,
                        world.ialltoallv(&a2av_send, &sc, &mut alltoallv, &ac)?,
                        world.ireduce_scatter(&ints(me, rtotal, 12), &mut rs, &rc, &Op::sum())?,
                        world.ireduce_scatter_block(
                            &ints(me, count * nu, 13),
                            &mut rsb,
                            &Op::max(),
                        )?,
                        world.iscan(&ints(me, count, 15), &mut scan, &Op::sum())?,
                        world.iexscan(&ints(me, count, 15), &mut exscan, &Op::sum())?,
                    ];
                    if ordered(Collective::Allreduce, set) {
                        reqs.push(world.iallreduce(
                            &mats(me, count, 8),
                            &mut mat_all,
                            &mat_op(),
                        )?);
                    }
                    if ordered(Collective::ReduceScatter, set) {
                        let send = mats(me, rtotal, 14);
                        reqs.push(world.ireduce_scatter(&send, &mut mat_rs, &rc, &mat_op())?);
                    }
                    // Point-to-point traffic while they are in flight, with the tags the
                    // collectives use on their own context.
                    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
                    let mut token = [0u32];
                    world
                        .sendrecv(&[me], right, 0x0101_0000, &mut token, left, 0x0101_0000)
                        .await?;
                    assert_eq!(token[0], left);
                    wait_all(&mut reqs).await?;
                    drop(reqs);
                    rec.put(&world, case("bcast"), &bcast);
                    if is_root {
                        rec.put(&world, case("reduce"), &reduce);
                        rec.put(&world, case("mat reduce"), &mat_reduce);
                        rec.put(&world, case("gather"), &gather);
                        rec.put(&world, case("gatherv"), &gatherv);
                    }
                    rec.put(&world, case("allreduce"), &allreduce);
                    rec.put(&world, case("fsum"), &fsum);
                    if ordered(Collective::Allreduce, set) {
                        rec.put(&world, case("mat allreduce"), &mat_all);
                    }
                    rec.put(&world, case("scatter"), &scatter);
                    rec.put(&world, case("scatterv"), &scatterv);
                    rec.put(&world, case("allgather"), &allgather);
                    rec.put(&world, case("allgatherv"), &allgatherv);
                    rec.put(&world, case("alltoall"), &alltoall);
                    rec.put(&world, case("alltoallv"), &alltoallv);
                    rec.put(&world, case("rs"), &rs);
                    if ordered(Collective::ReduceScatter, set) {
                        rec.put(&world, case("mat rs"), &mat_rs);
                    }
                    rec.put(&world, case("rsb"), &rsb);
                    rec.put(&world, case("scan"), &scan);
                    rec.put(&world, case("exscan"), &exscan);
                }
            }
            Ok(())
        }
    };
    if backend == Backend::Sim {
        let outcome = launcher(n, backend).simulate(program);
        if let Some(e) = outcome.error {
            panic!("set {set} on {n} ranks failed: {e}");
        }
    } else {
        run_ok(launcher(n, backend), program);
    }
    out.take()
}

fn check_set(got: &Results, n: u32, set: usize) {
    let nu = n as usize;
    for count in counts(n) {
        let count = count.min(1_000);
        let vc = vcounts(n, count);
        let rc = rs_counts(n, count);
        let rtotal: usize = rc.iter().sum();
        for root in roots(n) {
            let case = |what: &str| format!("{what} {count} {root}");
            let sum = fold(0..n, |r| ints(r, count, 2), i64::wrapping_add);
            expect(got, &case("reduce"), root, &sum);
            let prod = fold(0..n, |r| mats(r, count, 3), mat_mul);
            expect(got, &case("mat reduce"), root, &prod);
            let all: Vec<i64> = (0..n).flat_map(|r| ints(r, count, 9)).collect();
            expect(got, &case("gather"), root, &all);
            let allv: Vec<i64> = (0..n).flat_map(|r| ints(r, vc[r as usize], 9)).collect();
            expect(got, &case("gatherv"), root, &allv);
            let bits = same_on_all(got, &case("fsum"), n);
            close(
                &case("fsum"),
                &bits,
                &fold(0..n, |r| floats(r, count, 6), |a, b| a + b),
            );
            let allsum = fold(0..n, |r| ints(r, count, 5), i64::wrapping_add);
            let allprod = fold(0..n, |r| mats(r, count, 8), mat_mul);
            let scattered = ints(root, count * nu, 10);
            let scatteredv = ints(root, vc.iter().sum(), 10);
            let gathered: Vec<i64> = (0..n).flat_map(|r| ints(r, count, 11)).collect();
            let gatheredv: Vec<i64> = (0..n).flat_map(|r| ints(r, vc[r as usize], 11)).collect();
            let rs_sum = fold(0..n, |r| ints(r, rtotal, 12), i64::wrapping_add);
            let rs_prod = fold(0..n, |r| mats(r, rtotal, 14), mat_mul);
            let rsb_max = fold(0..n, |r| ints(r, count * nu, 13), i64::max);
            for r in 0..n {
                let ru = r as usize;
                expect(got, &case("bcast"), r, &ints(root, count, 1));
                expect(got, &case("allreduce"), r, &allsum);
                if ordered(Collective::Allreduce, set) {
                    expect(got, &case("mat allreduce"), r, &allprod);
                }
                expect(
                    got,
                    &case("scatter"),
                    r,
                    &scattered[ru * count..(ru + 1) * count],
                );
                let v0: usize = vc[..ru].iter().sum();
                expect(got, &case("scatterv"), r, &scatteredv[v0..v0 + vc[ru]]);
                expect(got, &case("allgather"), r, &gathered);
                expect(got, &case("allgatherv"), r, &gatheredv);
                let a2a_expected: Vec<u64> = (0..n)
                    .flat_map(|i| (0..count).map(move |k| a2a(i, r, k)))
                    .collect();
                expect(got, &case("alltoall"), r, &a2a_expected);
                let a2av_expected: Vec<u64> = (0..n)
                    .flat_map(|i| (0..a2av(i, r, count)).map(move |k| a2a(i, r, k)))
                    .collect();
                expect(got, &case("alltoallv"), r, &a2av_expected);
                let r0: usize = rc[..ru].iter().sum();
                expect(got, &case("rs"), r, &rs_sum[r0..r0 + rc[ru]]);
                if ordered(Collective::ReduceScatter, set) {
                    expect(got, &case("mat rs"), r, &rs_prod[r0..r0 + rc[ru]]);
                }
                expect(got, &case("rsb"), r, &rsb_max[ru * count..(ru + 1) * count]);
                let scan = fold(0..=r, |q| ints(q, count, 15), i64::wrapping_add);
                expect(got, &case("scan"), r, &scan);
                let exscan = if r == 0 {
                    vec![7i64; count]
                } else {
                    fold(0..r, |q| ints(q, count, 15), i64::wrapping_add)
                };
                expect(got, &case("exscan"), r, &exscan);
            }
        }
    }
}

/// Completion by `test` in a loop, by `wait_any` and `wait_some` over collectives' and
/// point-to-point requests mixed, and inside a blocking send's wait: each rank's last
/// request is a receive from its left neighbour, whose message comes after that neighbour's
/// collectives complete.
fn completion_by_every_call(backend: Backend) {
    for n in [1, 2, 3, 6] {
        run_ok(launcher(n, backend), move |world: Comm| async move {
            let me = world.rank();
            let (left, right) = ((me + n - 1) % n, (me + 1) % n);
            // test in a loop
            let mut max = [0u32];
            let mut req = world.iallreduce(&[me], &mut max, &Op::max())?;
            while req.test().await?.is_none() {}
            drop(req);
            assert_eq!(max[0], n - 1);
            // wait_any / wait_some over a collective and a receive
            let mut all = vec![0u32; n as usize];
            let mut got = [0u32];
            let mut reqs = [
                world.iallgather(&[me], &mut all)?,
                world.irecv(&mut got, left, 3)?,
            ];
            world.send(&[me], right, 3).await?;
            let mut done = 0;
            while done < 2 {
                let (i, _) = mpsim::wait_any(&mut reqs)
                    .await?
                    .expect("an active request");
                assert!(reqs[i].is_null());
                done += 1;
            }
            assert!(mpsim::wait_some(&mut reqs).await?.is_empty());
            drop(reqs);
            assert_eq!(all, (0..n).collect::<Vec<_>>());
            assert_eq!(got[0], left);
            // a blocking synchronous send's wait moves a scan on
            let mut prefix = [0u64];
            let scan = world.iscan(&[1u64], &mut prefix, &Op::sum())?;
            if n > 1 {
                if me.is_multiple_of(2) {
                    world.ssend(&[me], right, 4).await?;
                    world.recv(&mut got, left, 4).await?;
                } else {
                    world.recv(&mut got, left, 4).await?;
                    world.ssend(&[me], right, 4).await?;
                }
            }
            scan.wait().await?;
            assert_eq!(prefix[0], u64::from(me) + 1);
            Ok(())
        });
    }
}
on_both!(completion_by_every_call => coll_nb_complete_by_test_wait_any_wait_some_and_blocking_calls_sim, coll_nb_complete_by_test_wait_any_wait_some_and_blocking_calls_threads);

/// A dropped request's collective goes on in the background: the others complete theirs, and
/// the rank's program ends after it.
fn dropped_goes_on(backend: Backend) {
    run_ok(launcher(5, backend), |world: Comm| async move {
        let mut data = [world.rank(); 3];
        let req = world.ibcast(&mut data, 2)?;
        if world.rank() == 4 {
            drop(req);
            return Ok(());
        }
        req.wait().await?;
        assert_eq!(data, [2; 3]);
        Ok(())
    });
}
on_both!(dropped_goes_on => coll_nb_a_dropped_request_goes_on_in_the_background_sim, coll_nb_a_dropped_request_goes_on_in_the_background_threads);

/// Misuse found at the call is the blocking form's error, naming the nonblocking call.
fn misuse_at_the_call(backend: Backend) {
    let err = backends::run_err(launcher(3, backend), |world: Comm| async move {
        let mut buf = [0u8; 4];
        world.ibcast(&mut buf, 3).map(drop)
    });
    let mpsim::Error::InvalidRoot { site, root, .. } = &err else {
        panic!("expected InvalidRoot, got {err}");
    };
    assert_eq!((site.call, *root), ("ibcast", 3));
    let err = backends::run_err(launcher(2, backend), |world: Comm| async move {
        let mut all = [0u8; 3];
        world.iallgather(&[1u8], &mut all).map(drop)
    });
    assert!(
        matches!(&err, mpsim::Error::InvalidBuffer { site, .. } if site.call == "iallgather"),
        "{err}"
    );
    let err = backends::run_err(launcher(2, backend), |world: Comm| async move {
        let mut req = world.ibarrier()?;
        let cancelled = req.cancel();
        req.wait().await?;
        cancelled
    });
    assert!(
        matches!(&err, mpsim::Error::InvalidArgument { what } if what.contains("ibarrier")),
        "{err}"
    );
}
on_both!(misuse_at_the_call => coll_nb_misuse_is_the_blocking_forms_error_naming_the_call_sim, coll_nb_misuse_is_the_blocking_forms_error_naming_the_call_threads);

/// Counts that do not agree between ranks are `CollectiveMismatch` at the wait.
fn counts_disagree(backend: Backend) {
    let err = backends::run_err(launcher(2, backend), |world: Comm| async move {
        let len = 2 + world.rank() as usize;
        let mut buf = vec![0u32; len];
        world.ibcast(&mut buf, 0)?.wait().await.map(drop)
    });
    assert!(
        matches!(&err, mpsim::Error::CollectiveMismatch { site, .. } if site.call == "ibcast"),
        "{err}"
    );
}
on_both!(counts_disagree => coll_nb_counts_that_disagree_are_a_mismatch_at_the_wait_sim, coll_nb_counts_that_disagree_are_a_mismatch_at_the_wait_threads);

/// A nonblocking collective that one rank never starts is a deadlock whose report names the
/// ranks waiting in it, by the collective's name.
fn never_started(backend: Backend) {
    let err = backends::run_err(launcher(4, backend), |world: Comm| async move {
        if world.rank() == 1 {
            let mut got = [0u8];
            return world.recv(&mut got, 0, 9).await.map(drop);
        }
        world.ibarrier()?.wait().await.map(drop)
    });
    let report = err
        .deadlock()
        .unwrap_or_else(|| panic!("expected a deadlock, got {err}"));
    let calls: Vec<(u32, &str)> = report.blocked.iter().map(|b| (b.rank, b.call)).collect();
    assert!(calls.contains(&(1, "recv")), "{err}");
    assert!(
        calls.iter().any(|&(r, c)| r != 1 && c == "ibarrier"),
        "the report names the ranks in the ibarrier: {err}"
    );
}
on_both!(never_started => coll_nb_a_collective_some_ranks_never_start_is_a_deadlock_naming_it_sim, coll_nb_a_collective_some_ranks_never_start_is_a_deadlock_naming_it_threads);
