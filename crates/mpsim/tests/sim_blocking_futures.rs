//! Blocking calls whose futures are not awaited where they are made: created ahead, joined,
//! interleaved with other calls, dropped unpolled. A blocking call posts when it is made, not
//! at its first poll (`crates/mpsim/src/blocking.rs`); none of that may show: a rank is
//! blocked only while it waits, each receive gets its own message, and a dropped receive waits
//! for nothing. Model: `Model::worked_examples()` (every delay 1000 ns).

mod common;

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use mpsim::sim::{Model, Outcome};
use mpsim::{Comm, Launcher};

fn sim<F, Fut>(ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let o = common::simulate_all_ways(
        Launcher::new(ranks).model(Model::worked_examples()),
        ranks,
        program,
    );
    assert!(o.error.is_none(), "{:?}", o.error);
    o
}

/// `(clock, compute, blocked)` of `rank`, ns.
fn times(o: &Outcome, rank: usize) -> (u64, u64, u64) {
    let r = &o.report.ranks[rank];
    (r.clock_ns, r.compute_ns, r.blocked_ns)
}

/// Polls both futures until both are done (a minimal `join`).
async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    (ra.expect("done"), rb.expect("done"))
}

/// Ranks 1 and 2 send rank 0 one word each, at 500 and 2000 ns (arrivals 1500 and 3000).
async fn senders(world: &Comm) -> mpsim::Result<()> {
    let at = if world.rank() == 1 { 500 } else { 2000 };
    world.compute(Duration::from_nanos(at)).await;
    world.send(&[u64::from(world.rank())], 0, 0).await
}

/// Two receives made first and then awaited together wait until the later message: blocked
/// from 0 to 3000 ns, each with its own message.
#[test]
fn joined_receives_wait_for_both() {
    let o = sim(3, |world: Comm| async move {
        if world.rank() != 0 {
            return senders(&world).await;
        }
        let (mut x, mut y) = ([0u64], [0u64]);
        let (a, b) = join(world.recv(&mut x, 1, 0), world.recv(&mut y, 2, 0)).await;
        assert_eq!((a?.source, b?.source), (1, 2));
        assert_eq!((x, y), ([1], [2]));
        Ok(())
    });
    assert_eq!(times(&o, 0), (3000, 0, 3000));
}

/// The same receives made in the other order than they are awaited in.
#[test]
fn receives_made_ahead_are_awaited_in_any_order() {
    let o = sim(3, |world: Comm| async move {
        if world.rank() != 0 {
            return senders(&world).await;
        }
        let (mut x, mut y) = ([0u64], [0u64]);
        let a = world.recv(&mut x, 1, 0);
        let b = world.recv(&mut y, 2, 0);
        b.await?;
        a.await?;
        assert_eq!((x, y), ([1], [2]));
        Ok(())
    });
    assert_eq!(times(&o, 0), (3000, 0, 3000));
}

/// A receive made, then computation, then the wait: the rank computes 0-300 ns and is
/// blocked from 300 ns to the message's arrival at 1500 ns, not from when the receive was made.
#[test]
fn computing_between_a_receive_and_its_wait_is_not_blocked_time() {
    let o = sim(2, |world: Comm| async move {
        if world.rank() == 1 {
            return senders(&world).await;
        }
        let mut x = [0u64];
        let recv = world.recv(&mut x, 1, 0);
        world.compute(Duration::from_nanos(300)).await;
        recv.await?;
        assert_eq!(x, [1]);
        Ok(())
    });
    assert_eq!(times(&o, 0), (1500, 300, 1200));
}

/// A receive dropped before it is polled is withdrawn, and waits for nothing: the next receive
/// takes the message.
#[test]
fn a_receive_dropped_unpolled_waits_for_nothing() {
    let o = sim(2, |world: Comm| async move {
        if world.rank() == 1 {
            return senders(&world).await;
        }
        let mut x = [0u64];
        drop(world.recv(&mut x, 1, 0));
        world.compute(Duration::from_nanos(300)).await;
        world.recv(&mut x, 1, 0).await?;
        assert_eq!(x, [1]);
        Ok(())
    });
    assert_eq!(times(&o, 0), (1500, 300, 1200));
    assert!(o.report.warnings.is_empty(), "{:?}", o.report.warnings);
}

/// A receive made while another waits, with a call that does not wait in between, and the
/// program then yielding: the rank still waits for (and gets) both messages.
#[test]
fn a_receive_made_during_another_wait_is_still_waited_for() {
    let o = sim(3, |world: Comm| async move {
        if world.rank() != 0 {
            return senders(&world).await;
        }
        let (mut x, mut y) = ([0u64], [0u64]);
        let mut first = pin!(world.recv(&mut x, 1, 0));
        // Poll the first receive once: it waits.
        poll_fn(|cx| {
            assert!(first.as_mut().poll(cx).is_pending());
            Poll::Ready(())
        })
        .await;
        let second = world.recv(&mut y, 2, 0);
        world.buffer_attach(64)?; // a call that does not wait

        let (a, b) = join(first, second).await;
        assert_eq!((a?.source, b?.source), (1, 2));
        assert_eq!(y, [2]);
        Ok(())
    });
    assert_eq!(times(&o, 0), (3000, 0, 3000));
}
