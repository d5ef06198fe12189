//! Communicators made in different orders (`docs/p2p.md` §6): MPI requires every member of a
//! communicator to make its collective calls on it in the same order. A rank whose `split`
//! meets another rank's `dup` (or an earlier `split`) used to get a communicator whose
//! context no other member shared, and the run ended as a deadlock between opaque context ids;
//! now the `split` fails on the ranks that learn of it with `Error::CommOrder`, naming each
//! rank's calls and what MPI requires, on both backends.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use mpsim::{Backend, Comm, Error};

use backends::{launcher, run_err};

/// Rank 0 dups the world then splits it; rank 1 splits it then dups it; then they talk on the
/// split. The split fails, saying who made what.
fn dup_and_split_swapped(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let half = if world.rank() == 0 {
            let _twin = world.dup()?;
            world.split(Some(0), 0).await?
        } else {
            let half = world.split(Some(0), 0).await?;
            let _twin = world.dup()?;
            half
        };
        let half = half.expect("every rank has color 0");
        if half.rank() == 0 {
            half.send(&[1u8], 1, 0).await?;
        } else {
            half.recv(&mut [0u8], 0, 0).await?;
        }
        Ok(())
    });
    let Error::CommOrder { site, order } = &err else {
        panic!("expected CommOrder, got {err}");
    };
    assert_eq!(site.call, "comm_split");
    let calls: Vec<(u32, Vec<&str>)> = order
        .ranks
        .iter()
        .map(|r| (r.rank, r.calls.clone()))
        .collect();
    assert_eq!(
        calls,
        [(0, vec!["comm_dup", "comm_split"]), (1, vec!["comm_split"])]
    );
    let text = err.to_string();
    for needle in [
        "rank 0 made comm_dup, comm_split; rank 1 made comm_split",
        "MPI requires every member of a communicator to make its collective calls on it \
         (comm_dup, comm_split) in the same order",
    ] {
        assert!(text.contains(needle), "no {needle:?} in: {text}");
    }
}
on_both!(dup_and_split_swapped => p2p_comm_order_dup_and_split_swapped_sim, p2p_comm_order_dup_and_split_swapped_threads);

/// Three ranks, one out of order and one without a color (it waits for no answer): rank 0 names
/// the rank that differs, and the run fails with it.
fn one_rank_out_of_three(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 2 {
            let _twin = world.dup()?;
        }
        let color = (world.rank() != 1).then_some(0);
        world.split(color, 0).await?;
        Ok(())
    });
    let Error::CommOrder { order, .. } = &err else {
        panic!("expected CommOrder, got {err}");
    };
    let ranks: Vec<u32> = order.ranks.iter().map(|r| r.rank).collect();
    assert!(ranks == [0, 2], "{err}");
    assert_eq!(order.ranks[1].calls, ["comm_dup", "comm_split"], "{err}");
}
on_both!(one_rank_out_of_three => p2p_comm_order_one_rank_out_of_three_sim, p2p_comm_order_one_rank_out_of_three_threads);

/// Splits in the same order of calls are not a mismatch, whatever their colors: two splits
/// made in the same order by every rank pair up as MPI pairs them.
fn same_order_is_fine(backend: Backend) {
    backends::run_ok(launcher(4, backend), |world: Comm| async move {
        let _twin = world.dup()?;
        let me = world.rank();
        let a = world.split(Some(me % 2), 0).await?.expect("a color");
        let b = world.split(Some(me / 2), 0).await?.expect("a color");
        assert_eq!((a.size(), b.size()), (2, 2));
        Ok(())
    });
}
on_both!(same_order_is_fine => p2p_comm_order_same_order_is_fine_sim, p2p_comm_order_same_order_is_fine_threads);
