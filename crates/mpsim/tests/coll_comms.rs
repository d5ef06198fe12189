//! Collectives on communicators made by `dup` and `split`, interleaved with the program's own
//! point-to-point traffic on the same tags (which they never match: the hidden collective
//! context), with the algorithms the fixed table chooses (nothing forced) across message
//! sizes, on both backends; and a simulated run of them gives the same report, error and trace
//! sequentially and on several threads (`docs/timing.md` §5).

#[macro_use]
#[path = "common/backends.rs"]
mod backends;
#[path = "common/coll.rs"]
mod coll;
mod common;

use mpsim::{ANY_SOURCE, ANY_TAG, Backend, Comm, Launcher, Op, Result};

use backends::{launcher, run_ok};
use coll::{fold, ints};

/// On halves of the world made by `split` (reversed order), and on a `dup` of each: an
/// allreduce, a bcast from the last rank and an allgather give what the members' inputs say.
async fn on_split_and_dup(world: Comm) -> Result<()> {
    let me = world.rank();
    let half = world
        .split(Some(me % 2), -i64::from(me))
        .await?
        .expect("every rank has a color");
    let twin = half.dup()?;
    for comm in [&half, &twin] {
        let (r, n) = (comm.rank(), comm.size());
        // The world ranks of `comm`'s members, by their comm rank (reversed order).
        let members: Vec<u32> = (0..world.size())
            .filter(|w| w % 2 == me % 2)
            .rev()
            .collect();
        assert_eq!(members[r as usize], me);
        for count in [0, 1, 5, 3_000] {
            let mut sum = vec![0i64; count];
            comm.allreduce(&ints(me, count, 1), &mut sum, &Op::sum())
                .await?;
            let expected = fold(
                members.iter().copied(),
                |w| ints(w, count, 1),
                i64::wrapping_add,
            );
            assert_eq!(sum, expected, "allreduce of {count} on a split");
            let mut b = if r == n - 1 {
                ints(me, count, 2)
            } else {
                vec![0; count]
            };
            comm.bcast(&mut b, n - 1).await?;
            assert_eq!(b, ints(members[n as usize - 1], count, 2));
            let mut all = vec![0i64; count * n as usize];
            comm.allgather(&ints(me, count, 3), &mut all).await?;
            let expected: Vec<i64> = members.iter().flat_map(|&w| ints(w, count, 3)).collect();
            assert_eq!(all, expected);
        }
        comm.barrier().await?;
    }
    Ok(())
}

fn split_and_dup(backend: Backend) {
    for n in [1, 2, 5, 8, 13] {
        run_ok(launcher(n, backend), on_split_and_dup);
    }
}
on_both!(split_and_dup => coll_on_split_and_dup_communicators_sim, coll_on_split_and_dup_communicators_threads);

/// Every rank sends its right neighbour a user message with tag `t` before each collective and
/// receives its left neighbour's after it, with the same tags the collectives could use and
/// with wildcards: the user's messages meet only the user's receives, the collectives' only
/// theirs.
async fn interleaved(world: Comm) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    // Tags the collectives' own are made of (`coll/algo.rs`), and small ones.
    let tags = [0, 1, 0x0101_0000, 0x0204_0000, 0x0305_0001];
    for (k, &tag) in tags.iter().enumerate() {
        let note = [me, k as u32];
        let sent = world.isend(&note, right, tag)?;
        let mut sum = [0u32; 3];
        world
            .allreduce(&[1, me, k as u32], &mut sum, &Op::sum())
            .await?;
        assert_eq!(sum, [n, n * (n - 1) / 2, n * k as u32]);
        let mut b = [me; 4];
        world.bcast(&mut b, (k as u32) % n).await?;
        assert_eq!(b, [(k as u32) % n; 4]);
        world.barrier().await?;
        let mut got = [0u32; 2];
        // A wildcard receive takes the user's message, not a collective's.
        let status = world.recv(&mut got, ANY_SOURCE, ANY_TAG).await?;
        assert_eq!(
            (status.source, status.tag, got),
            (left, tag, [left, k as u32])
        );
        sent.wait().await?;
    }
    Ok(())
}

fn with_p2p(backend: Backend) {
    for n in [1, 2, 3, 4, 7] {
        run_ok(launcher(n, backend), interleaved);
    }
}
on_both!(with_p2p => coll_interleaved_with_user_p2p_on_the_same_tags_never_cross_match_sim, coll_interleaved_with_user_p2p_on_the_same_tags_never_cross_match_threads);

/// The table's own choices (nothing forced) at sizes on both sides of its thresholds.
async fn table_choices(world: Comm) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    for count in [1, 300, 2_000, 70_000] {
        let mut sum = vec![0i64; count];
        world
            .allreduce(&ints(me, count, 4), &mut sum, &Op::sum())
            .await?;
        assert_eq!(sum, fold(0..n, |r| ints(r, count, 4), i64::wrapping_add));
        let mut red = vec![0i64; count];
        world
            .reduce(&ints(me, count, 5), &mut red, &Op::max(), n / 2)
            .await?;
        if me == n / 2 {
            assert_eq!(red, fold(0..n, |r| ints(r, count, 5), i64::max));
        }
        let mut b = if me == 0 {
            ints(0, count, 6)
        } else {
            vec![0; count]
        };
        world.bcast(&mut b, 0).await?;
        assert_eq!(b, ints(0, count, 6));
        let per = count / n as usize;
        let mut all = vec![0i64; per * n as usize];
        world.allgather(&ints(me, per, 7), &mut all).await?;
        assert_eq!(
            all,
            (0..n).flat_map(|r| ints(r, per, 7)).collect::<Vec<_>>()
        );
        let send: Vec<i64> = (0..n).flat_map(|j| ints(me * 1000 + j, per, 8)).collect();
        let mut recv = vec![0i64; send.len()];
        world.alltoall(&send, &mut recv).await?;
        assert_eq!(
            recv,
            (0..n)
                .flat_map(|i| ints(i * 1000 + me, per, 8))
                .collect::<Vec<_>>()
        );
        let mut block = vec![0i64; per];
        world
            .reduce_scatter_block(&ints(me, per * n as usize, 9), &mut block, &Op::sum())
            .await?;
        let full = fold(0..n, |r| ints(r, per * n as usize, 9), i64::wrapping_add);
        assert_eq!(block, full[me as usize * per..(me as usize + 1) * per]);
    }
    Ok(())
}

fn table(backend: Backend) {
    for n in [1, 3, 8, 9, 16] {
        run_ok(launcher(n, backend), table_choices);
    }
}
on_both!(table => coll_table_choices_across_sizes_sim, coll_table_choices_across_sizes_threads);

/// A simulated run of collectives is deterministic: the same report, error and trace on 1, 2
/// and one thread per rank.
#[test]
fn coll_simulated_runs_are_the_same_sequential_and_parallel() {
    for n in [5, 16] {
        let outcome = common::simulate_all_ways(
            Launcher::new(n).trace("coll.json"), /* kept in the outcome, not written */
            n,
            |w| async move {
                interleaved(w.clone()).await?;
                table_choices(w).await
            },
        );
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
    }
}
