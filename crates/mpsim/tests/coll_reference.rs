//! Every collective and every algorithm it has, forced in turn, against a sequential
//! reference (`docs/collectives.md`): on every size from 1 to 33 ranks, counts 0,
//! 1, fewer than the ranks, more, and (up to 8 ranks) long enough for the rendezvous protocol,
//! every root up to 5 ranks (first, second, middle and last above), on `sim` and `threads`.
//! Integer results are exact; floating-point results of the all-reductions are the same bits
//! on every rank (and within 1e-9 of the sequential sum); a non-commutative operation (2x2
//! matrix products) comes out in rank order from every algorithm that takes one.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;
#[path = "common/coll.rs"]
mod coll;

use mpsim::{Algorithm, Backend, Collective, Comm, Loc, Op};

use coll::*;

/// Runs `check(n, algo)` for every size and every algorithm of `collective`.
fn each(collective: Collective, mut check: impl FnMut(u32, Algorithm)) {
    for &algo in collective.algorithms() {
        for n in SIZES {
            check(n, algo);
        }
    }
}

fn barrier(backend: Backend) {
    each(Collective::Barrier, |n, algo| {
        let got = sweep(
            backend,
            n,
            Collective::Barrier,
            algo,
            |world: Comm, rec| async move {
                // Nobody leaves round k before everybody entered it: rank r sends its round
                // number to rank 0 by p2p only after the barrier, and rank 0 checks that no
                // message of round k arrived before it left round k's barrier.
                for round in 0..3u32 {
                    world.barrier().await?;
                    rec.put(&world, format!("round {round}"), &[round]);
                }
                Ok(())
            },
        );
        for round in 0..3u32 {
            for r in 0..n {
                expect(&got, &format!("round {round}"), r, &[round]);
            }
        }
    });
}
on_both!(barrier => coll_barrier_every_size_sim, coll_barrier_every_size_threads);

fn bcast(backend: Backend) {
    each(Collective::Bcast, |n, algo| {
        let got = sweep(
            backend,
            n,
            Collective::Bcast,
            algo,
            move |world: Comm, rec| async move {
                for count in counts(n) {
                    for root in roots(n) {
                        let mut buf = if world.rank() == root {
                            ints(root, count, 1)
                        } else {
                            vec![0; count]
                        };
                        world.bcast(&mut buf, root).await?;
                        rec.put(&world, format!("{count} {root}"), &buf);
                    }
                }
                Ok(())
            },
        );
        for count in counts(n) {
            for root in roots(n) {
                for r in 0..n {
                    let case = format!("{count} {root}");
                    expect(&got, &case, r, &ints(root, count, 1));
                }
            }
        }
    });
}
on_both!(bcast => coll_bcast_every_algorithm_size_count_root_sim, coll_bcast_every_algorithm_size_count_root_threads);

fn reduce(backend: Backend) {
    each(Collective::Reduce, |n, algo| {
        let got = sweep(
            backend,
            n,
            Collective::Reduce,
            algo,
            move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    for root in roots(n) {
                        let mut sum = vec![0i64; if me == root { count } else { 0 }];
                        world
                            .reduce(&ints(me, count, 2), &mut sum, &Op::sum(), root)
                            .await?;
                        let mut prod = vec![Mat::default(); if me == root { count } else { 0 }];
                        world
                            .reduce(&mats(me, count, 3), &mut prod, &mat_op(), root)
                            .await?;
                        let mut min = vec![0i64; if me == root { count } else { 0 }];
                        world
                            .reduce(&ints(me, count, 4), &mut min, &Op::min(), root)
                            .await?;
                        if me == root {
                            rec.put(&world, format!("sum {count} {root}"), &sum);
                            rec.put(&world, format!("mat {count} {root}"), &prod);
                            rec.put(&world, format!("min {count} {root}"), &min);
                        }
                    }
                }
                Ok(())
            },
        );
        for count in counts(n) {
            for root in roots(n) {
                let sum = fold(0..n, |r| ints(r, count, 2), i64::wrapping_add);
                expect(&got, &format!("sum {count} {root}"), root, &sum);
                let prod = fold(0..n, |r| mats(r, count, 3), mat_mul);
                expect(&got, &format!("mat {count} {root}"), root, &prod);
                let min = fold(0..n, |r| ints(r, count, 4), i64::min);
                expect(&got, &format!("min {count} {root}"), root, &min);
            }
        }
    });
}
on_both!(reduce => coll_reduce_every_algorithm_in_rank_order_sim, coll_reduce_every_algorithm_in_rank_order_threads);

fn allreduce(backend: Backend) {
    each(Collective::Allreduce, |n, algo| {
        let ordered = !algo.needs_commutative(Collective::Allreduce);
        let got = sweep(
            backend,
            n,
            Collective::Allreduce,
            algo,
            move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    let mut sum = vec![0i64; count];
                    world
                        .allreduce(&ints(me, count, 5), &mut sum, &Op::sum())
                        .await?;
                    rec.put(&world, format!("sum {count}"), &sum);
                    let mut fsum = vec![0f64; count];
                    world
                        .allreduce(&floats(me, count, 6), &mut fsum, &Op::sum())
                        .await?;
                    rec.put(&world, format!("fsum {count}"), &fsum);
                    let mine: Vec<Loc<f64, i32>> = floats(me, count, 7)
                        .iter()
                        .map(|&v| Loc {
                            value: v.round(),
                            index: me as i32,
                        })
                        .collect();
                    let mut loc = vec![
                        Loc {
                            value: 0.0,
                            index: 0
                        };
                        count
                    ];
                    world.allreduce(&mine, &mut loc, &Op::minloc()).await?;
                    rec.put(&world, format!("minloc {count}"), &loc);
                    if ordered {
                        let mut prod = vec![Mat::default(); count];
                        world
                            .allreduce(&mats(me, count, 8), &mut prod, &mat_op())
                            .await?;
                        rec.put(&world, format!("mat {count}"), &prod);
                    }
                }
                Ok(())
            },
        );
        for count in counts(n) {
            let sum = fold(0..n, |r| ints(r, count, 5), i64::wrapping_add);
            let minloc = fold(
                0..n,
                |r| {
                    floats(r, count, 7)
                        .iter()
                        .map(|&v| (v.round(), r as i32))
                        .collect()
                },
                |a, b| if b.0 < a.0 { b } else { a },
            );
            let minloc: Vec<Loc<f64, i32>> = minloc
                .iter()
                .map(|&(value, index)| Loc { value, index })
                .collect();
            let prod = fold(0..n, |r| mats(r, count, 8), mat_mul);
            for r in 0..n {
                expect(&got, &format!("sum {count}"), r, &sum);
                expect(&got, &format!("minloc {count}"), r, &minloc);
                if ordered {
                    expect(&got, &format!("mat {count}"), r, &prod);
                }
            }
            let case = format!("fsum {count} ({algo}, {n} ranks)");
            let bits = same_on_all(&got, &format!("fsum {count}"), n);
            close(
                &case,
                &bits,
                &fold(0..n, |r| floats(r, count, 6), |a, b| a + b),
            );
        }
    });
}
on_both!(allreduce => coll_allreduce_every_algorithm_same_bits_on_every_rank_sim, coll_allreduce_every_algorithm_same_bits_on_every_rank_threads);

fn gather_scatter(backend: Backend) {
    for coll in [
        Collective::Gather,
        Collective::Scatter,
        Collective::Gatherv,
        Collective::Scatterv,
    ] {
        each(coll, |n, algo| {
            let got = sweep(backend, n, coll, algo, move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    for root in roots(n) {
                        let is_root = me == root;
                        let case = format!("{count} {root}");
                        // The `v` calls: rank i gives (count + i) % 3 elements.
                        let vcounts: Vec<usize> =
                            (0..n as usize).map(|i| (count + i) % 3).collect();
                        match coll {
                            Collective::Gather => {
                                let mut all =
                                    vec![0i64; if is_root { count * n as usize } else { 0 }];
                                world.gather(&ints(me, count, 9), &mut all, root).await?;
                                if is_root {
                                    rec.put(&world, case, &all);
                                }
                            }
                            Collective::Gatherv => {
                                let mine = ints(me, vcounts[me as usize], 9);
                                let total = if is_root { vcounts.iter().sum() } else { 0 };
                                let mut all = vec![0i64; total];
                                let counts = if is_root { &vcounts[..] } else { &[] };
                                world.gatherv(&mine, &mut all, counts, root).await?;
                                if is_root {
                                    rec.put(&world, case, &all);
                                }
                            }
                            Collective::Scatter => {
                                let all = if is_root {
                                    ints(root, count * n as usize, 10)
                                } else {
                                    Vec::new()
                                };
                                let mut mine = vec![0i64; count];
                                world.scatter(&all, &mut mine, root).await?;
                                rec.put(&world, case, &mine);
                            }
                            _ => {
                                let total = vcounts.iter().sum();
                                let all = if is_root {
                                    ints(root, total, 10)
                                } else {
                                    Vec::new()
                                };
                                let mut mine = vec![0i64; vcounts[me as usize]];
                                world.scatterv(&all, &vcounts, &mut mine, root).await?;
                                rec.put(&world, case, &mine);
                            }
                        }
                    }
                }
                Ok(())
            });
            for count in counts(n) {
                for root in roots(n) {
                    let case = format!("{count} {root}");
                    let vcounts: Vec<usize> = (0..n as usize).map(|i| (count + i) % 3).collect();
                    match coll {
                        Collective::Gather => {
                            let all: Vec<i64> = (0..n).flat_map(|r| ints(r, count, 9)).collect();
                            expect(&got, &case, root, &all);
                        }
                        Collective::Gatherv => {
                            let all: Vec<i64> = (0..n)
                                .flat_map(|r| ints(r, vcounts[r as usize], 9))
                                .collect();
                            expect(&got, &case, root, &all);
                        }
                        Collective::Scatter => {
                            let all = ints(root, count * n as usize, 10);
                            for r in 0..n {
                                let r0 = r as usize * count;
                                expect(&got, &case, r, &all[r0..r0 + count]);
                            }
                        }
                        _ => {
                            let all = ints(root, vcounts.iter().sum(), 10);
                            for r in 0..n as usize {
                                let r0: usize = vcounts[..r].iter().sum();
                                expect(&got, &case, r as u32, &all[r0..r0 + vcounts[r]]);
                            }
                        }
                    }
                }
            }
        });
    }
}
on_both!(gather_scatter => coll_gather_scatter_and_v_every_algorithm_root_sim, coll_gather_scatter_and_v_every_algorithm_root_threads);

fn allgather(backend: Backend) {
    for coll in [Collective::Allgather, Collective::Allgatherv] {
        each(coll, |n, algo| {
            let got = sweep(backend, n, coll, algo, move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    if coll == Collective::Allgather {
                        let mut all = vec![0i64; count * n as usize];
                        world.allgather(&ints(me, count, 11), &mut all).await?;
                        rec.put(&world, format!("{count}"), &all);
                    } else {
                        let vcounts: Vec<usize> =
                            (0..n as usize).map(|i| (count * i) % 5).collect();
                        let mut all = vec![0i64; vcounts.iter().sum()];
                        let mine = ints(me, vcounts[me as usize], 11);
                        world.allgatherv(&mine, &mut all, &vcounts).await?;
                        rec.put(&world, format!("{count}"), &all);
                    }
                }
                Ok(())
            });
            for count in counts(n) {
                let all: Vec<i64> = if coll == Collective::Allgather {
                    (0..n).flat_map(|r| ints(r, count, 11)).collect()
                } else {
                    (0..n)
                        .flat_map(|r| ints(r, (count * r as usize) % 5, 11))
                        .collect()
                };
                for r in 0..n {
                    expect(&got, &format!("{count}"), r, &all);
                }
            }
        });
    }
}
on_both!(allgather => coll_allgather_and_v_every_algorithm_sim, coll_allgather_and_v_every_algorithm_threads);

/// The element rank `from` sends rank `to` in an alltoall: both ranks and the position.
fn a2a(from: u32, to: u32, i: usize) -> u64 {
    u64::from(from) << 40 | u64::from(to) << 20 | i as u64
}

fn alltoall(backend: Backend) {
    for coll in [Collective::Alltoall, Collective::Alltoallv] {
        each(coll, |n, algo| {
            // The `v` call: rank i sends (i + j + count) % 4 elements to rank j.
            let vc = move |i: u32, j: u32, count: usize| (i as usize + j as usize + count) % 4;
            let got = sweep(backend, n, coll, algo, move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    let count = count.min(1_000);
                    if coll == Collective::Alltoall {
                        let send: Vec<u64> = (0..n)
                            .flat_map(|j| (0..count).map(move |i| a2a(me, j, i)))
                            .collect();
                        let mut recv = vec![0u64; send.len()];
                        world.alltoall(&send, &mut recv).await?;
                        rec.put(&world, format!("{count}"), &recv);
                    } else {
                        let sc: Vec<usize> = (0..n).map(|j| vc(me, j, count)).collect();
                        let rc: Vec<usize> = (0..n).map(|i| vc(i, me, count)).collect();
                        let send: Vec<u64> = (0..n)
                            .flat_map(|j| (0..sc[j as usize]).map(move |i| a2a(me, j, i)))
                            .collect();
                        let mut recv = vec![0u64; rc.iter().sum()];
                        world.alltoallv(&send, &sc, &mut recv, &rc).await?;
                        rec.put(&world, format!("{count}"), &recv);
                    }
                }
                Ok(())
            });
            for count in counts(n) {
                let count = count.min(1_000);
                for r in 0..n {
                    let expected: Vec<u64> = if coll == Collective::Alltoall {
                        (0..n)
                            .flat_map(|i| (0..count).map(move |k| a2a(i, r, k)))
                            .collect()
                    } else {
                        (0..n)
                            .flat_map(|i| (0..vc(i, r, count)).map(move |k| a2a(i, r, k)))
                            .collect()
                    };
                    expect(&got, &format!("{count}"), r, &expected);
                }
            }
        });
    }
}
on_both!(alltoall => coll_alltoall_and_v_every_algorithm_sim, coll_alltoall_and_v_every_algorithm_threads);

fn reduce_scatter(backend: Backend) {
    each(Collective::ReduceScatter, |n, algo| {
        let ordered = !algo.needs_commutative(Collective::ReduceScatter);
        let got = sweep(
            backend,
            n,
            Collective::ReduceScatter,
            algo,
            move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    // Block i has (count + 2i) % 5 elements.
                    let rc: Vec<usize> = (0..n as usize).map(|i| (count + 2 * i) % 5).collect();
                    let total: usize = rc.iter().sum();
                    let mut mine = vec![0i64; rc[me as usize]];
                    world
                        .reduce_scatter(&ints(me, total, 12), &mut mine, &rc, &Op::sum())
                        .await?;
                    rec.put(&world, format!("v {count}"), &mine);
                    let mut block = vec![0i64; count];
                    let send = ints(me, count * n as usize, 13);
                    world
                        .reduce_scatter_block(&send, &mut block, &Op::max())
                        .await?;
                    rec.put(&world, format!("block {count}"), &block);
                    if ordered {
                        let mut mine = vec![Mat::default(); rc[me as usize]];
                        world
                            .reduce_scatter(&mats(me, total, 14), &mut mine, &rc, &mat_op())
                            .await?;
                        rec.put(&world, format!("mat {count}"), &mine);
                    }
                }
                Ok(())
            },
        );
        for count in counts(n) {
            let rc: Vec<usize> = (0..n as usize).map(|i| (count + 2 * i) % 5).collect();
            let total: usize = rc.iter().sum();
            let sum = fold(0..n, |r| ints(r, total, 12), i64::wrapping_add);
            let max = fold(0..n, |r| ints(r, count * n as usize, 13), i64::max);
            let prod = fold(0..n, |r| mats(r, total, 14), mat_mul);
            for r in 0..n as usize {
                let r0: usize = rc[..r].iter().sum();
                expect(&got, &format!("v {count}"), r as u32, &sum[r0..r0 + rc[r]]);
                expect(
                    &got,
                    &format!("block {count}"),
                    r as u32,
                    &max[r * count..(r + 1) * count],
                );
                if ordered {
                    expect(
                        &got,
                        &format!("mat {count}"),
                        r as u32,
                        &prod[r0..r0 + rc[r]],
                    );
                }
            }
        }
    });
}
on_both!(reduce_scatter => coll_reduce_scatter_and_block_every_algorithm_sim, coll_reduce_scatter_and_block_every_algorithm_threads);

fn scans(backend: Backend) {
    for coll in [Collective::Scan, Collective::Exscan] {
        each(coll, |n, algo| {
            let got = sweep(backend, n, coll, algo, move |world: Comm, rec| async move {
                let me = world.rank();
                for count in counts(n) {
                    let mut sum = vec![7i64; count];
                    let mut prod = vec![Mat::default(); count];
                    if coll == Collective::Scan {
                        world
                            .scan(&ints(me, count, 15), &mut sum, &Op::sum())
                            .await?;
                        world
                            .scan(&mats(me, count, 16), &mut prod, &mat_op())
                            .await?;
                    } else {
                        world
                            .exscan(&ints(me, count, 15), &mut sum, &Op::sum())
                            .await?;
                        world
                            .exscan(&mats(me, count, 16), &mut prod, &mat_op())
                            .await?;
                    }
                    rec.put(&world, format!("sum {count}"), &sum);
                    rec.put(&world, format!("mat {count}"), &prod);
                }
                Ok(())
            });
            for count in counts(n) {
                for r in 0..n {
                    let upto = if coll == Collective::Scan { r + 1 } else { r };
                    if upto == 0 {
                        // Exscan leaves rank 0's buffer as it was.
                        expect(&got, &format!("sum {count}"), r, &vec![7i64; count]);
                        continue;
                    }
                    let sum = fold(0..upto, |q| ints(q, count, 15), i64::wrapping_add);
                    expect(&got, &format!("sum {count}"), r, &sum);
                    let prod = fold(0..upto, |q| mats(q, count, 16), mat_mul);
                    expect(&got, &format!("mat {count}"), r, &prod);
                }
            }
        });
    }
}
on_both!(scans => coll_scan_exscan_in_rank_order_sim, coll_scan_exscan_in_rank_order_threads);
