//! External waits (`crates/mpsim-sim/src/external.rs`): a rank waits for an event outside the
//! simulation and resumes at the virtual time it is fired for; a wait nobody fires is a
//! deadlock that names it. Here another rank's program fires it, as the C interface's proxy
//! ranks will be fired by their processes.

mod common;

use std::cell::RefCell;

use common::{Rank, clocks, run};
use mpsim_proto::error::Error;
use mpsim_sim::{ExternalWake, Model};

thread_local! {
    /// Rank 1's handle, for rank 0 to fire (a sequential run: one thread).
    static WAKE: RefCell<Option<ExternalWake>> = const { RefCell::new(None) };
}

fn share(r: &Rank) {
    WAKE.with(|w| *w.borrow_mut() = Some(r.sim().external_wake()));
}

fn fire(at: u64) -> Result<(), Error> {
    let wake = WAKE
        .with(|w| w.borrow().clone())
        .expect("rank 1 shared its handle");
    assert_eq!(wake.rank(), 1);
    wake.fire(at)
}

/// Rank 1 waits at 0; rank 0 computes 3 us, then fires for 2 us later: rank 1's wait returns
/// at 5 us, all of it blocked.
#[test]
fn external_wait_returns_at_the_time_it_was_fired_for() {
    let outcome = run(2, Model::worked_examples(), |r| async move {
        if r.me() == 1 {
            share(&r);
            let at = r.sim().wait_external("proxy_call").await?;
            assert_eq!(at, 5_000);
            assert_eq!(r.now(), 5_000);
        } else {
            r.compute(3_000).await;
            fire(r.now() + 2_000)?;
        }
        Ok(())
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(clocks(&outcome), [3_000, 5_000]);
    assert_eq!(outcome.report.ranks[1].blocked_ns, 5_000);
}

/// Fired before the rank waits: for a time it has passed, its wait returns at once, its
/// clock unchanged; for a later time, it waits until then.
#[test]
fn external_wait_fired_before_it_waits() {
    for (fired, end) in [(4_000, 10_000), (20_000, 20_000)] {
        let outcome = run(2, Model::worked_examples(), move |r| async move {
            if r.me() == 1 {
                share(&r);
                r.compute(10_000).await;
                let at = r.sim().wait_external("proxy_call").await?;
                assert_eq!(at, end);
            } else {
                r.compute(1_000).await;
                fire(fired)?;
            }
            Ok(())
        });
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        assert_eq!(clocks(&outcome), [1_000, end]);
        assert_eq!(outcome.report.ranks[1].blocked_ns, end - 10_000);
    }
}

/// A wait nobody fires: the run deadlocks, and the report names the rank as waiting for an
/// external event since it blocked.
#[test]
fn external_wait_nobody_fires_is_a_deadlock_naming_it() {
    let outcome = run(2, Model::worked_examples(), |r| async move {
        if r.me() == 1 {
            r.compute(7_000).await;
            r.sim().wait_external("proxy_call").await?;
        }
        Ok(())
    });
    let error = outcome.error.expect("a deadlock");
    assert!(matches!(error, Error::Deadlock { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains(
            "rank 1 blocked in proxy_call since t=7000 ns, waiting for an external event"
        ),
        "{text}"
    );
}

/// A handle fired for a time before the present, or twice before the rank took the first
/// event, is refused with a typed error naming the rank and the times.
#[test]
fn external_wake_refuses_the_past_and_a_second_fire() {
    let outcome = run(2, Model::worked_examples(), |r| async move {
        if r.me() == 1 {
            share(&r);
            r.sim().wait_external("proxy_call").await?;
        } else {
            r.compute(3_000).await;
            let past = fire(1_000).expect_err("the past is refused");
            assert!(matches!(past, Error::InvalidArgument { .. }), "{past}");
            assert!(past.to_string().contains("rank 1"), "{past}");
            assert!(past.to_string().contains("t=3000 ns"), "{past}");
            fire(4_000)?;
            let twice = fire(5_000).expect_err("a second fire is refused");
            assert!(twice.to_string().contains("t=4000 ns"), "{twice}");
        }
        Ok(())
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(clocks(&outcome), [3_000, 4_000]);
}
