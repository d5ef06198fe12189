//! Nonblocking collectives (`docs/collectives.md` §7): they complete through the wait and test
//! family, move on while the rank waits for anything (an unrelated request, a blocking send or
//! receive), several may be in flight on one communicator at once, and their results are the
//! sequential reference's, on `sim` and `threads`.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;
#[path = "common/coll.rs"]
mod coll;

use mpsim::{Backend, Comm, Op, wait_all};

use backends::{launcher, run_ok};
use coll::*;

fn ibcast_then_wait(backend: Backend) {
    for n in [1, 2, 3, 5, 8] {
        run_ok(launcher(n, backend), move |world: Comm| async move {
            let mut data = if world.rank() == 1 % n { [7u32, 8] } else { [0; 2] };
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
