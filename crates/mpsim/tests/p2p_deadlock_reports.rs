//! Deadlock reports as data (`mpsim::DeadlockReport`, `docs/timing.md` S15, `docs/p2p.md` §8
//! `Deadlock`), each program run unchanged on both backends (`on_both!`): a test that expects
//! a deadlock asserts which ranks, calls, peers, tags and cycle it names, and the text every
//! backend prints says the same. A rank blocked in a wait on several requests is named with
//! every request it still waits on (a departure from S15's "first incomplete request",
//! `mpsim_proto::deadlock`'s docs).

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use mpsim::{
    Backend, BlockedRank, Comm, DeadlockReport, Error, Source, Tag, wait_all, wait_any, wait_some,
};

use backends::{launcher, run_err};

/// The deadlock report of `err`, which must be one.
#[track_caller]
fn report(err: &Error) -> &DeadlockReport {
    err.deadlock()
        .unwrap_or_else(|| panic!("expected a deadlock, got {err}"))
}

/// `b`'s requests as `(call, peer, tag)`, all on the world's context.
fn requests(b: &BlockedRank) -> Vec<(&'static str, Source, Tag)> {
    assert!(b.waiting_on.iter().all(|w| w.context.0 == 0), "{b:?}");
    b.waiting_on
        .iter()
        .map(|w| (w.call, w.peer, w.tag))
        .collect()
}

/// When a rank blocked: the virtual time under `sim`, unknown on threads.
fn since(backend: Backend, ns: u64) -> Option<u64> {
    (backend == Backend::Sim).then_some(ns)
}

/// Head-to-head `ssend` (P25, E6) as data: both ranks in `ssend`, each waiting on the other
/// with tag 0, neither peer finished, and the cycle from rank 0.
fn typed_head_to_head(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let peer = 1 - world.rank();
        world.ssend(&[1u8], peer, 0).await?;
        world.recv(&mut [0u8], peer, 0).await?;
        Ok(())
    });
    let r = report(&err);
    assert_eq!(r.cycle, [0, 1, 0]);
    assert_eq!(r.blocked.len(), 2);
    for (rank, b) in (0u32..).zip(&r.blocked) {
        assert_eq!(
            (b.rank, b.call, b.since_ns, b.waits_for, b.peer_finished),
            (rank, "ssend", since(backend, 0), Some(1 - rank), false)
        );
        assert_eq!(
            requests(b),
            [("ssend", Source::Rank(1 - rank), Tag::Value(0))]
        );
    }
    let text = err.to_string();
    assert!(text.ends_with("; cycle 0 → 1 → 0"), "{text}");
}
on_both!(typed_head_to_head => deadlock_as_data_head_to_head_ssend_sim, deadlock_as_data_head_to_head_ssend_threads);

/// A receive from a rank that has finished: no cycle, and the report says the peer finished.
fn typed_wait_on_a_finished_rank(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.recv(&mut [0u8], 2, 5).await?;
        }
        Ok(())
    });
    let r = report(&err);
    assert!(r.cycle.is_empty(), "{r:?}");
    let b = r.rank(0).expect("rank 0 is blocked");
    assert_eq!(
        (b.call, b.waits_for, b.peer_finished),
        ("recv", Some(2), true)
    );
    assert_eq!(requests(b), [("recv", Source::Rank(2), Tag::Value(5))]);
    assert!(r.rank(1).is_none() && r.rank(2).is_none(), "{r:?}");
    assert!(
        err.to_string().contains(", and rank 2 has finished"),
        "{err}"
    );
}
on_both!(typed_wait_on_a_finished_rank => deadlock_as_data_wait_on_a_finished_rank_sim, deadlock_as_data_wait_on_a_finished_rank_threads);

/// S15, extended: `wait_any` on receives from ranks 1 and 2, both blocked in receives from rank
/// 0, is named with both receives (either would end it), its edge the first one's peer.
fn wait_any_names_every_request(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 0 {
            let (mut a, mut b) = ([0u8], [0u8]);
            let mut reqs = [world.irecv(&mut a, 1, 1)?, world.irecv(&mut b, 2, 2)?];
            wait_any(&mut reqs).await?;
        } else {
            world.recv(&mut [0u8], 0, 9).await?;
        }
        Ok(())
    });
    let r = report(&err);
    let b = r.rank(0).expect("rank 0 is blocked");
    assert_eq!(
        (b.call, b.any_of, b.waits_for, b.since_ns),
        ("wait_any", true, Some(1), since(backend, 0))
    );
    assert_eq!(
        requests(b),
        [
            ("recv", Source::Rank(1), Tag::Value(1)),
            ("recv", Source::Rank(2), Tag::Value(2))
        ]
    );
    assert_eq!(r.cycle, [0, 1, 0]);
    let text = err.to_string();
    assert!(
        text.contains(
            "waiting for recv (peer 1, tag 1, context 0) or recv (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
}
on_both!(wait_any_names_every_request => timing_s15_wait_any_names_every_request_sim, timing_s15_wait_any_names_every_request_threads);

/// `wait_some` likewise, with a request already inactive (waited for) left out.
fn wait_some_names_every_active_request(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        match world.rank() {
            0 => {
                let (mut a, mut b, mut c) = ([0u8], [0u8], [0u8]);
                let mut reqs = [
                    world.irecv(&mut a, 2, 0)?,
                    world.irecv(&mut b, 1, 1)?,
                    world.irecv(&mut c, 2, 2)?,
                ];
                let done = wait_some(&mut reqs).await?;
                assert_eq!(done.iter().map(|d| d.0).collect::<Vec<_>>(), [0]);
                wait_some(&mut reqs).await?;
            }
            1 => {
                world.recv(&mut [0u8], 0, 9).await?;
            }
            _ => {
                world.send(&[7u8], 0, 0).await?;
                world.recv(&mut [0u8], 0, 9).await?;
            }
        }
        Ok(())
    });
    let b = report(&err).rank(0).cloned().expect("rank 0 is blocked");
    assert_eq!((b.call, b.any_of), ("wait_some", true));
    assert_eq!(
        requests(&b),
        [
            ("recv", Source::Rank(1), Tag::Value(1)),
            ("recv", Source::Rank(2), Tag::Value(2))
        ]
    );
}
on_both!(wait_some_names_every_active_request => timing_s15_wait_some_names_every_active_request_sim, timing_s15_wait_some_names_every_active_request_threads);

/// `wait_all` needs them all: its first request completes (rank 2 sends it), the two left are
/// named, joined by "and".
fn wait_all_names_every_incomplete_request(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        match world.rank() {
            0 => {
                let (mut a, mut b, mut c) = ([0u8], [0u8], [0u8]);
                let mut reqs = [
                    world.irecv(&mut a, 2, 0)?,
                    world.irecv(&mut b, 1, 1)?,
                    world.irecv(&mut c, 2, 2)?,
                ];
                wait_all(&mut reqs).await?;
            }
            1 => {
                world.recv(&mut [0u8], 0, 9).await?;
            }
            _ => {
                world.send(&[7u8], 0, 0).await?;
                world.recv(&mut [0u8], 0, 9).await?;
            }
        }
        Ok(())
    });
    let b = report(&err).rank(0).cloned().expect("rank 0 is blocked");
    assert_eq!(
        (b.call, b.any_of, b.waits_for, b.since_ns),
        ("wait_all", false, Some(1), since(backend, 0))
    );
    assert_eq!(
        requests(&b),
        [
            ("recv", Source::Rank(1), Tag::Value(1)),
            ("recv", Source::Rank(2), Tag::Value(2))
        ]
    );
    let text = err.to_string();
    assert!(
        text.contains(
            "waiting for recv (peer 1, tag 1, context 0) and recv (peer 2, tag 2, context 0)"
        ),
        "{text}"
    );
}
on_both!(wait_all_names_every_incomplete_request => timing_s15_wait_all_names_every_incomplete_request_sim, timing_s15_wait_all_names_every_incomplete_request_threads);

/// A `sendrecv` whose receive never comes (a synchronous-size send is not needed: the send is
/// eager and completes): named as `sendrecv`, waiting for its receive.
fn sendrecv_names_its_receive(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let peer = 1 - world.rank();
        world.sendrecv(&[1u8], peer, 3, &mut [0u8], peer, 4).await?;
        Ok(())
    });
    let r = report(&err);
    for (rank, b) in (0u32..).zip(&r.blocked) {
        assert_eq!((b.rank, b.call), (rank, "sendrecv"));
        assert_eq!(
            requests(b),
            [("recv", Source::Rank(1 - rank), Tag::Value(4))]
        );
    }
    assert_eq!(r.cycle, [0, 1, 0]);
}
on_both!(sendrecv_names_its_receive => deadlock_as_data_sendrecv_names_its_receive_sim, deadlock_as_data_sendrecv_names_its_receive_threads);
