//! Program misuse through the public API gives a typed error that says where it happened
//! (`docs/p2p.md` §8): the program's own call (`isend`, not the `send` it runs as), the rank,
//! what the call named (peer, tag, communicator context) and, under the simulator, the virtual
//! time; never a panic, an abort or a silently wrong result. Each program runs on both
//! backends (the harness of `p2p_backends.rs`, `common/backends.rs`), except where only the
//! simulator has a virtual time.
//!
//! A send whose copy of the data the host cannot allocate is shown under an address-space
//! limit (`ulimit -v`) in a child process of this test binary, as
//! `mpsim-sim/tests/host_memory.rs` does for a whole run.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;
#[path = "../../mpsim-sim/tests/common/child.rs"]
mod child;

use std::time::Duration;

use mpsim::{
    ANY_SOURCE, ANY_TAG, Backend, Comm, Error, PROC_NULL, SendMode, Site, Source, Status, Tag,
};

use backends::{launcher, run_err, run_ok};
use child::under_address_space_limit;

/// The site of an error that has one.
#[track_caller]
fn site(e: &Error) -> &Site {
    e.site()
        .unwrap_or_else(|| panic!("an error with no site: {e}"))
}

/// `e` names the call `call`, in its site and in its text.
#[track_caller]
fn assert_call(e: &Error, call: &str) {
    assert_eq!(site(e).call, call, "{e}");
    assert!(e.to_string().contains(&format!(" in {call} ")), "{e}");
}

// ---------------------------------------------------------------------------------------------
// A send's copy of its data without memory for it
// ---------------------------------------------------------------------------------------------

/// A message far longer than the room the child has left for its copy.
const BIG: usize = 3 << 30;

/// The child's address space in KiB: the message (`BIG`, mapped but never touched) and 1.5 GiB
/// for the program, the ranks and their threads, but not a second `BIG` for the copy.
const LIMIT_KIB: u64 = ((BIG + (3 << 29)) >> 10) as u64;

/// Rank 0 has a 3 GiB message and no room for a second copy: an `isend` and a blocking `send`
/// of it each give `NoMemory` naming the rank, the call, the peer, the tag and the size, and
/// the rank goes on (a small message still goes through).
fn sends_without_memory_for_their_copy(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 1 {
            world.recv(&mut [0u8; 8], 0, 6).await?;
            return Ok(());
        }
        let data = vec![0u8; BIG];
        let check = |e: Error, call: &str| match e {
            Error::NoMemory { what } => {
                let at = format!("rank 0 in {call} (peer 1, tag 5, context 0)");
                assert!(what.contains(&at), "{what}");
                assert!(what.contains(&format!("{BIG} bytes")), "{what}");
            }
            other => panic!("{call}: expected NoMemory, got {other}"),
        };
        check(world.isend(&data, 1, 5).expect_err("no memory"), "isend");
        check(
            world.send(&data, 1, 5).await.expect_err("no memory"),
            "send",
        );
        drop(data);
        world.send(&[1u8; 8], 1, 6).await
    });
}

#[cfg(target_os = "linux")]
#[test]
fn p2p_send_whose_copy_cannot_be_allocated_is_no_memory_sim() {
    under_address_space_limit(
        "p2p_send_whose_copy_cannot_be_allocated_is_no_memory_sim",
        LIMIT_KIB,
        || sends_without_memory_for_their_copy(Backend::Sim),
    );
}

#[cfg(target_os = "linux")]
#[test]
fn p2p_send_whose_copy_cannot_be_allocated_is_no_memory_threads() {
    under_address_space_limit(
        "p2p_send_whose_copy_cannot_be_allocated_is_no_memory_threads",
        LIMIT_KIB,
        || sends_without_memory_for_their_copy(Backend::Threads),
    );
}

// ---------------------------------------------------------------------------------------------
// Virtual time
// ---------------------------------------------------------------------------------------------

/// Under the simulator, argument errors made by the API layer carry the virtual time of the
/// call, as the protocol core's do: after 3 us of compute, an invalid send reports
/// `at t=3000 ns`, and so do an invalid receive, a freed communicator, a second attach and a
/// detach with nothing attached; a restarted persistent request reports the time it is
/// restarted at.
#[test]
fn p2p_argument_errors_carry_the_virtual_time_sim() {
    run_ok(launcher(2, Backend::Sim), |world: Comm| async move {
        world.compute(Duration::from_micros(3)).await;
        let at_3000 = |e: Error| {
            assert_eq!(site(&e).time_ns, Some(3000), "{e}");
            assert!(e.to_string().contains("at t=3000 ns"), "{e}");
            e
        };
        let e = at_3000(world.send(&[1u8], 2, 4).await.expect_err("rank 2 of 2"));
        assert!(matches!(e, Error::InvalidRank { rank: 2, .. }), "{e}");
        assert_eq!(
            site(&e).tag,
            Some(Tag::Value(4)),
            "the rank's error names the tag"
        );
        let e = at_3000(world.isend(&[1u8], 0, -3).expect_err("tag -3"));
        assert!(matches!(e, Error::InvalidTag { .. }), "{e}");
        let e = at_3000(world.recv(&mut [0u8], 7, 2).await.expect_err("rank 7"));
        assert!(matches!(e, Error::InvalidRank { rank: 7, .. }), "{e}");
        assert_eq!(
            site(&e).tag,
            Some(Tag::Value(2)),
            "the rank's error names the tag"
        );
        let e = at_3000(world.iprobe(0, -2).await.expect_err("tag -2"));
        assert!(matches!(e, Error::InvalidTag { .. }), "{e}");

        let mut twin = world.dup()?;
        let clone = twin.clone();
        twin.free()?;
        let e = at_3000(clone.isend(&[1u8], 1, 9).expect_err("freed"));
        assert!(matches!(e, Error::InvalidComm { .. }), "{e}");
        let s = site(&e);
        assert_eq!(
            (s.peer, s.tag),
            (Some(Source::Rank(1)), Some(Tag::Value(9)))
        );
        assert!(
            s.context.is_some_and(|c| c.0 != 0),
            "the dup's context: {e}"
        );
        assert!(e.to_string().contains("(peer 1, tag 9, context "), "{e}");
        let e = at_3000(
            clone
                .recv(&mut [0u8], ANY_SOURCE, 3)
                .await
                .expect_err("freed"),
        );
        assert_eq!(
            (site(&e).peer, site(&e).tag),
            (Some(Source::Any), Some(Tag::Value(3)))
        );
        let e = at_3000(clone.buffer_attach(100).expect_err("freed"));
        assert!(e.to_string().contains("(context "), "{e}");

        world.buffer_attach(100)?;
        let e = at_3000(world.buffer_attach(100).expect_err("attached"));
        assert!(matches!(e, Error::BufferAlreadyAttached { .. }), "{e}");
        assert_eq!(world.buffer_detach().await?, 100);
        let e = world.buffer_detach().await.expect_err("detached");
        assert!(matches!(e, Error::NoBufferAttached { .. }), "{e}");
        assert_eq!(site(&e).time_ns, Some(world.now_ns()), "{e}");

        let peer = 1 - world.rank();
        let mut cell = [0u32];
        let mut req = world.recv_init(&mut cell, peer, 0)?;
        req.start()?;
        let e = req.start().expect_err("active");
        assert!(matches!(e, Error::RequestActive { .. }), "{e}");
        assert_eq!(site(&e).time_ns, Some(world.now_ns()), "{e}");
        world.send(&[7u32], peer, 0).await?;
        req.wait().await?;
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// The call errors name
// ---------------------------------------------------------------------------------------------

/// Argument errors name the program's call: the nonblocking sends their `i` names (and
/// `start_send` its mode's), `irecv` its own, the combined calls theirs, whichever of their
/// arguments is wrong.
fn argument_errors_name_the_call(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        let data = [1u8; 4];
        assert_call(&world.isend(&data, 9, 0).expect_err("rank 9"), "isend");
        assert_call(&world.issend(&data, 9, 0).expect_err("rank 9"), "issend");
        assert_call(&world.ibsend(&data, 0, -1).expect_err("tag -1"), "ibsend");
        assert_call(&world.irsend(&data, 9, 0).expect_err("rank 9"), "irsend");
        let e = world.start_send(SendMode::Synchronous, &data, 9, 0);
        assert_call(&e.expect_err("rank 9"), "issend");
        assert_call(&world.send(&data, 9, 0).await.expect_err("rank 9"), "send");
        assert_call(
            &world.ssend(&data, 9, 0).await.expect_err("rank 9"),
            "ssend",
        );
        let mut buf = [0u8; 4];
        assert_call(&world.irecv(&mut buf, 9, 0).expect_err("rank 9"), "irecv");
        assert_call(&world.recv(&mut buf, 0, -4).await.expect_err("tag"), "recv");
        let e = world.sendrecv(&data, 9, 0, &mut buf, 0, 0).await;
        assert_call(&e.expect_err("dest 9"), "sendrecv");
        let e = world.sendrecv(&data, 0, 0, &mut buf, 9, 0).await;
        assert_call(&e.expect_err("source 9"), "sendrecv");
        let e = world.sendrecv_replace(&mut buf, 0, -7, 0, 0).await;
        assert_call(&e.expect_err("tag -7"), "sendrecv_replace");
        assert_call(
            &world.recv_init(&mut buf, 0, -4).expect_err("tag"),
            "recv_init",
        );
        assert_call(
            &world.send_init(&mut buf, 9, 0).expect_err("rank 9"),
            "send_init",
        );
        Ok(())
    });
}
on_both!(argument_errors_name_the_call => p2p_argument_errors_name_the_program_call_sim, p2p_argument_errors_name_the_program_call_threads);

/// A truncated receive names the call that posted it: `recv`, `irecv`, `sendrecv`,
/// `sendrecv_replace`, `mrecv`, `imrecv`, and `recv_init` for a persistent receive.
fn truncation_names_the_call(backend: Backend) {
    const CALLS: [&str; 7] = [
        "recv",
        "irecv",
        "sendrecv",
        "sendrecv_replace",
        "mrecv",
        "imrecv",
        "recv_init",
    ];
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            // Eight bytes with each tag; the combined calls' sends come back (1 or 4 bytes).
            for (tag, call) in (0..).zip(CALLS) {
                world.send(&[tag as u8; 8], 1, tag).await?;
                if call.starts_with("sendrecv") {
                    world.recv(&mut [0u8; 4], 1, tag).await?;
                }
            }
            return Ok(());
        }
        let mut small = [0u8; 4];
        for (tag, call) in (0..).zip(CALLS) {
            let result = match call {
                "recv" => world.recv(&mut small, 0, tag).await,
                "irecv" => world.irecv(&mut small, 0, tag)?.wait().await,
                "sendrecv" => world.sendrecv(&[1u8], 0, tag, &mut small, 0, tag).await,
                "sendrecv_replace" => world.sendrecv_replace(&mut small, 0, tag, 0, tag).await,
                "mrecv" => world.mprobe(0, tag).await?.mrecv(&mut small).await,
                "imrecv" => world.mprobe(0, tag).await?.imrecv(&mut small)?.wait().await,
                _ => {
                    let mut req = world.recv_init(&mut small, 0, tag)?;
                    req.start()?;
                    req.wait().await
                }
            };
            let e = result.expect_err("8 bytes into 4");
            assert!(
                matches!(
                    e,
                    Error::Truncate {
                        message_bytes: 8,
                        buffer_bytes: 4,
                        ..
                    }
                ),
                "{call}: {e}"
            );
            assert_call(&e, call);
            assert_eq!(
                small, [tag as u8; 4],
                "{call}: the first 4 bytes are written"
            );
        }
        Ok(())
    });
}
on_both!(truncation_names_the_call => p2p_truncation_names_the_receiving_call_sim, p2p_truncation_names_the_receiving_call_threads);

/// An `ibsend` that does not fit in the attached buffer ends the run with `BufferOverflow`
/// naming `ibsend` (the error the protocol core raises, which ends the run, knows the call).
fn ibsend_overflow_names_ibsend(backend: Backend) {
    let e = run_err(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(10)?;
            world.ibsend(&[0u8; 100], 1, 3)?.wait().await?;
        }
        Ok(())
    });
    assert!(matches!(e, Error::BufferOverflow { .. }), "{e}");
    assert_call(&e, "ibsend");
}
on_both!(ibsend_overflow_names_ibsend => p2p_ibsend_overflow_names_ibsend_sim, p2p_ibsend_overflow_names_ibsend_threads);

/// With `bsend_overflow_returns` (MPI's `MPI_ERRORS_RETURN`, what the C door uses), a `bsend`
/// and an `ibsend` that do not fit return `BufferOverflow` naming their call, send nothing and
/// leave the run going: a larger buffer then carries the same message, and the receiver gets
/// exactly the messages that went.
fn bsend_overflow_returned_when_asked(backend: Backend) {
    let launcher = launcher(2, backend).bsend_overflow_returns(true);
    run_ok(launcher, |world: Comm| async move {
        if world.rank() == 1 {
            let mut got = [0u8; 100];
            world.recv(&mut got, 0, 4).await?;
            assert_eq!(got, [7u8; 100]);
            return Ok(());
        }
        world.buffer_attach(10)?;
        let e = world
            .bsend(&[7u8; 100], 1, 3)
            .await
            .expect_err("100 B in 10");
        assert!(matches!(e, Error::BufferOverflow { .. }), "{e}");
        assert_eq!(e.class().mpi_name(), "MPI_ERR_BUFFER");
        assert_call(&e, "bsend");
        let e = world.ibsend(&[7u8; 100], 1, 3).expect_err("100 B in 10");
        assert_call(&e, "ibsend");
        assert_eq!(world.buffer_detach().await?, 10);
        world.buffer_attach(100 + mpsim::BSEND_OVERHEAD)?;
        world.bsend(&[7u8; 100], 1, 4).await?;
        world.buffer_detach().await?;
        Ok(())
    });
}
on_both!(bsend_overflow_returned_when_asked => p2p_bsend_overflow_returned_when_asked_sim, p2p_bsend_overflow_returned_when_asked_threads);

// ---------------------------------------------------------------------------------------------
// ANY_SOURCE, ANY_TAG and PROC_NULL
// ---------------------------------------------------------------------------------------------

/// The wildcards are types of their own (`ANY_SOURCE` a `Source`, `ANY_TAG` a `Tag`), which
/// sends do not take: a send to `ANY_SOURCE` does not compile (the `compile_fail` examples of
/// `mpsim::ANY_SOURCE` and `mpsim::ANY_TAG`). A number is always a rank or a tag, never a
/// wildcard: MPI's `u32::MAX`-style sentinel is an invalid rank, `-1` an invalid tag, on sends
/// and receives alike; errors show them as numbers, `PROC_NULL` by name, and `PROC_NULL` works
/// on both sides.
fn numbers_are_never_wildcards(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        let e = world
            .send(&[1u8], u32::MAX, 0)
            .await
            .expect_err("rank u32::MAX");
        assert!(
            matches!(e, Error::InvalidRank { rank, .. } if rank == i64::from(u32::MAX)),
            "{e}"
        );
        assert!(e.to_string().contains("(peer 4294967295, tag 0"), "{e}");
        let e = world
            .recv(&mut [0u8], u32::MAX, 0)
            .await
            .expect_err("rank u32::MAX");
        assert!(matches!(e, Error::InvalidRank { .. }), "{e}");
        let e = world.isend(&[1u8], 1, -1).expect_err("tag -1");
        assert!(
            matches!(
                e,
                Error::InvalidTag {
                    tag: Tag::Value(-1),
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().ends_with("invalid tag -1"), "{e}");
        let e = world.irecv(&mut [0u8], 1, -1).expect_err("tag -1");
        assert!(
            matches!(
                e,
                Error::InvalidTag {
                    tag: Tag::Value(-1),
                    ..
                }
            ),
            "{e}"
        );
        let e = world.send(&[1u8], PROC_NULL, -5).await.expect_err("tag -5");
        assert_eq!(site(&e).peer, Some(Source::Rank(PROC_NULL)), "{e}");
        assert!(e.to_string().contains("(peer PROC_NULL"), "{e}");
        let e = world
            .recv(&mut [0u8], PROC_NULL, -5)
            .await
            .expect_err("tag -5");
        assert!(e.to_string().contains("(peer PROC_NULL"), "{e}");
        // PROC_NULL itself is fine on both sides.
        world.send(&[1u8], PROC_NULL, 0).await?;
        let s = world.recv(&mut [0u8], PROC_NULL, ANY_TAG).await?;
        assert_eq!((s.source, s.tag, s.bytes), (PROC_NULL, Status::NO_TAG, 0));
        // And a receive's wildcards are typed: `ANY_SOURCE` reaches its errors as a wildcard.
        let e = world
            .recv(&mut [0u8], ANY_SOURCE, -5)
            .await
            .expect_err("tag -5");
        assert!(e.to_string().contains("(peer ANY_SOURCE, "), "{e}");
        Ok(())
    });
}
on_both!(numbers_are_never_wildcards => p2p_numbers_are_ranks_and_tags_never_wildcards_sim, p2p_numbers_are_ranks_and_tags_never_wildcards_threads);

// ---------------------------------------------------------------------------------------------
// A zero-byte attached buffer
// ---------------------------------------------------------------------------------------------

/// A zero-byte buffer counts as attached: a second attach is `BufferAlreadyAttached`, a detach
/// returns 0 and then nothing is attached (a second detach is `NoBufferAttached`).
fn zero_byte_buffer(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        world.buffer_attach(0)?;
        let e = world.buffer_attach(0).expect_err("attached");
        assert!(
            matches!(e, Error::BufferAlreadyAttached { attached: 0, .. }),
            "{e}"
        );
        let e = world.buffer_attach(64).expect_err("attached");
        assert!(
            matches!(e, Error::BufferAlreadyAttached { attached: 0, .. }),
            "{e}"
        );
        assert_eq!(world.buffer_detach().await?, 0);
        let e = world.buffer_detach().await.expect_err("detached");
        assert!(matches!(e, Error::NoBufferAttached { .. }), "{e}");
        world.buffer_attach(0)?;
        assert_eq!(world.buffer_detach().await?, 0);
        Ok(())
    });
}
on_both!(zero_byte_buffer => p2p_zero_byte_buffer_counts_as_attached_sim, p2p_zero_byte_buffer_counts_as_attached_threads);

// ---------------------------------------------------------------------------------------------
// Every request's own error (docs/p2p.md §4)
// ---------------------------------------------------------------------------------------------

/// The message lengths rank 0 sends on tags 0..4, to receives of 4 bytes each: tags 0 and 2
/// are truncated, 1 and 3 fit.
const LENGTHS: [usize; 4] = [8, 2, 6, 4];

/// Rank 0's side: one standard send per tag, in tag order.
async fn send_lengths(world: &Comm) -> mpsim::Result<()> {
    for (tag, &n) in LENGTHS.iter().enumerate() {
        world.send(&vec![7u8; n], 1, tag as i32).await?;
    }
    Ok(())
}

/// `outcome` is a truncation of tag `tag`'s message, named `call`, or a status of its length.
#[track_caller]
fn assert_outcome(outcome: &mpsim::Result<mpsim::Status>, tag: usize, call: &str) {
    match outcome {
        Err(
            e @ Error::Truncate {
                message_bytes,
                buffer_bytes: 4,
                ..
            },
        ) => {
            assert!(LENGTHS[tag] > 4, "tag {tag} fits, yet: {e}");
            assert_eq!(*message_bytes, LENGTHS[tag]);
            assert_eq!(site(e).tag, Some(Tag::from(tag as i32)), "{e}");
            assert_eq!(site(e).call, call, "{e}");
        }
        Ok(s) => {
            assert!(LENGTHS[tag] <= 4, "tag {tag} is truncated, yet: {s:?}");
            assert_eq!((s.tag, s.bytes), (tag as i32, LENGTHS[tag]));
        }
        Err(e) => panic!("tag {tag}: {e}"),
    }
}

/// §4 "`wait_all` reports every request's own error": `wait_all_results` gives each of four
/// receives its own outcome, both truncations and both statuses, where `wait_all` gives the
/// first error only; `test_all_results` likewise once all are complete.
fn wait_all_results_reports_each_error(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            send_lengths(&world).await?;
            return send_lengths(&world).await;
        }
        let mut bufs = [[0u8; 4]; 4];
        let mut reqs = irecv_each(&world, &mut bufs)?;
        let outcomes = mpsim::wait_all_results(&mut reqs).await;
        assert_eq!(outcomes.len(), 4);
        for (tag, outcome) in outcomes.iter().enumerate() {
            assert_outcome(outcome, tag, "irecv");
        }
        assert!(reqs.iter().all(mpsim::Request::is_null), "all completed");
        let mut bufs = [[0u8; 4]; 4];
        let mut reqs = irecv_each(&world, &mut bufs)?;
        let outcomes = loop {
            if let Some(all) = mpsim::test_all_results(&mut reqs).await {
                break all;
            }
        };
        for (tag, outcome) in outcomes.iter().enumerate() {
            assert_outcome(outcome, tag, "irecv");
        }
        Ok(())
    });
}
on_both!(wait_all_results_reports_each_error => p2p_4_wait_all_results_reports_every_requests_own_error_sim, p2p_4_wait_all_results_reports_every_requests_own_error_threads);

/// One receive of 4 bytes per tag of [`LENGTHS`].
fn irecv_each<'a>(
    world: &Comm,
    bufs: &'a mut [[u8; 4]; 4],
) -> mpsim::Result<Vec<mpsim::Request<'a>>> {
    bufs.iter_mut()
        .enumerate()
        .map(|(tag, b)| world.irecv(b, 0, tag as i32))
        .collect()
}

/// `wait_some_results` and `test_some_results` lose no completion to another request's error:
/// every receive is returned exactly once, with its own outcome, whatever batches they
/// complete in.
fn some_results_lose_nothing(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            send_lengths(&world).await?;
            return send_lengths(&world).await;
        }
        for testing in [false, true] {
            let mut bufs = [[0u8; 4]; 4];
            let mut reqs = irecv_each(&world, &mut bufs)?;
            let mut seen = [0; 4];
            while seen.iter().sum::<i32>() < 4 {
                let batch = if testing {
                    mpsim::test_some_results(&mut reqs)
                        .await
                        .expect("active until all are seen")
                } else {
                    mpsim::wait_some_results(&mut reqs).await?
                };
                assert!(
                    testing || !batch.is_empty(),
                    "wait_some waits for one at least"
                );
                for (i, outcome) in &batch {
                    seen[*i] += 1;
                    assert_outcome(outcome, *i, "irecv");
                }
            }
            assert_eq!(seen, [1; 4], "each exactly once");
            assert!(
                mpsim::wait_some_results(&mut reqs).await?.is_empty(),
                "none active"
            );
        }
        Ok(())
    });
}
on_both!(some_results_lose_nothing => p2p_4_some_results_lose_no_completion_to_an_error_sim, p2p_4_some_results_lose_no_completion_to_an_error_threads);

// ---------------------------------------------------------------------------------------------
// A communicator kept past its run
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// Where the program below keeps its world communicator past the run.
    static KEPT: std::cell::RefCell<Option<Comm>> = const { std::cell::RefCell::new(None) };
}

/// Polls `f` a few times with a waker that does nothing: a future whose run has ended must
/// finish at once, not wait for a simulator that is gone.
fn poll_briefly<F: std::future::Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    (0..3).find_map(|_| match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    })
}

/// §8 (MPI's use after `MPI_Finalize`): a `Comm` a simulated program keeps past its run (in a
/// `thread_local`) gives `RunEnded` naming the rank, the call and the run's end time for
/// every wait and blocking call, where it used to panic on the state the run had handed to its
/// report; its nonblocking calls start nothing that can complete, `compute` does nothing and
/// the clock stays at the run's end.
#[test]
fn p2p_8_a_comm_kept_past_its_simulated_run_gives_run_ended() {
    let world = mpsim::Launcher::new(2)
        .run(|world: Comm| async move {
            world.compute(Duration::from_nanos(500)).await;
            if world.rank() == 1 {
                KEPT.with(|k| *k.borrow_mut() = Some(world.clone()));
            }
            Ok(())
        })
        .map(|()| KEPT.with(|k| k.borrow_mut().take()))
        .expect("the run succeeds")
        .expect("a rank kept its world");
    let check = |e: Error, call: &str| {
        assert!(matches!(e, Error::RunEnded { .. }), "{call}: {e}");
        assert_eq!((site(&e).call, site(&e).time_ns), (call, Some(500)), "{e}");
        assert!(e.to_string().contains("has ended"), "{e}");
    };
    let sent = poll_briefly(world.send(&[1u8], 0, 3)).expect("send finishes");
    check(sent.expect_err("after the run"), "send");
    let got = poll_briefly(world.recv(&mut [0u8; 1], 0, 3)).expect("recv finishes");
    check(got.expect_err("after the run"), "recv");
    let req = world
        .isend(&[1u8], 0, 3)
        .expect("an isend starts, going nowhere");
    // A wait names the operation it waits for, as deadlock reports do.
    let waited = poll_briefly(req.wait()).expect("wait finishes");
    check(waited.expect_err("after the run"), "send");
    // Nonblocking calls after that act on a fresh endpoint: nothing there, no panic.
    let mut buf = [0u8; 1];
    let mut req = world
        .irecv(&mut buf, 0, 3)
        .expect("an irecv starts, going nowhere");
    let probed = poll_briefly(world.iprobe(0, 3)).expect("iprobe finishes");
    assert!(matches!(probed, Ok(None)), "{probed:?}");
    let tested = poll_briefly(req.test()).expect("test finishes");
    assert!(!matches!(tested, Ok(Some(_))), "{tested:?}");
    drop(req);
    assert!(poll_briefly(world.compute(Duration::from_secs(1))).is_some());
    assert_eq!(world.now_ns(), 500, "the clock stays at the run's end");
    assert_eq!((world.rank(), world.size()), (1, 2));
}

thread_local! {
    /// "The" world communicator, kept where every function reaches it, as MPI programs keep
    /// `MPI_COMM_WORLD`.
    static GLOBAL_WORLD: std::cell::RefCell<Option<Comm>> = const { std::cell::RefCell::new(None) };
    /// A request one rank leaves for another.
    static LEFT_REQUEST: std::cell::RefCell<Option<mpsim::Request<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// §8: a `Comm` kept in a `thread_local` (an MPI program's global world communicator, ported)
/// is one per rank under threads, where the ring below passes its token, but one for all ranks
/// under sim, where every rank runs on the same thread: the last rank to store it is the one
/// every rank would act as. The simulator used to let rank 0 send as rank 2 (or fail later with
/// a misleading "awaited something the simulator does not drive"); the first call through
/// another rank's `Comm` now stops the run with `ForeignRank`, naming the call, the rank whose
/// program made it, the rank it belongs to and the time.
fn a_comm_kept_in_a_thread_local(backend: Backend) {
    let launcher = launcher(3, backend);
    let program = |world: Comm| async move {
        GLOBAL_WORLD.with(|w| *w.borrow_mut() = Some(world.clone()));
        // Every rank stores its world before any goes on.
        world.compute(Duration::from_nanos(10)).await;
        let w = GLOBAL_WORLD.with(|w| w.borrow().clone().expect("stored"));
        let (me, n) = (w.rank(), w.size());
        let mut token = [0u32];
        if me == 0 {
            w.send(&[0u32], 1, 5).await?;
            w.recv(&mut token, n - 1, 5).await?;
            assert_eq!(token[0], n - 1, "the token went around");
        } else {
            w.recv(&mut token, me - 1, 5).await?;
            w.send(&[token[0] + 1], (me + 1) % n, 5).await?;
        }
        Ok(())
    };
    if backend == Backend::Threads {
        return run_ok(launcher, program);
    }
    let err = run_err(launcher, program);
    match &err {
        Error::ForeignRank { site, running } => {
            // Rank 0 resumes first, as rank 2 (the last to store its world): its receive is
            // the first call through rank 2's `Comm`.
            assert_eq!(*running, 0, "{err}");
            assert_eq!((site.rank, site.call, site.time_ns), (2, "recv", Some(10)));
        }
        other => panic!("expected ForeignRank, got {other}"),
    }
    let text = err.to_string();
    assert!(text.contains("called from the program of rank 0"), "{text}");
    assert!(text.contains("thread_local"), "{text}");
}
on_both!(a_comm_kept_in_a_thread_local => p2p_8_a_comm_kept_in_a_thread_local_is_one_per_rank_or_refused_sim, p2p_8_a_comm_kept_in_a_thread_local_is_one_per_rank_or_refused_threads);

/// §8, as above for a request: rank 0 leaves its `isend`'s request where rank 1 (on the same
/// thread under sim) takes it; waiting for it there stops the run with `ForeignRank`, and the
/// clock rank 1 reads through rank 0's `Comm` is refused the same way.
#[test]
fn p2p_8_a_request_waited_by_another_rank_is_refused_under_sim() {
    for read_clock in [false, true] {
        let err = run_err(launcher(2, Backend::Sim), move |world: Comm| async move {
            if world.rank() == 0 {
                let req = world.isend(&[7u8], 1, 3)?;
                LEFT_REQUEST.with(|r| *r.borrow_mut() = Some(req));
                GLOBAL_WORLD.with(|w| *w.borrow_mut() = Some(world.clone()));
                world.recv(&mut [0u8; 1], 1, 4).await?;
                return Ok(());
            }
            world.compute(Duration::from_nanos(100)).await;
            if read_clock {
                let w = GLOBAL_WORLD.with(|w| w.borrow().clone().expect("left"));
                let _ = w.now_ns();
            } else {
                let req = LEFT_REQUEST.with(|r| r.borrow_mut().take().expect("left"));
                req.wait().await?;
            }
            world.send(&[0u8], 0, 4).await?;
            world.recv(&mut [0u8; 1], 0, 3).await.map(drop)
        });
        match &err {
            Error::ForeignRank { site, running } => {
                let call = if read_clock { "now_ns" } else { "send" };
                assert_eq!((*running, site.rank, site.call), (1, 0, call), "{err}");
                assert_eq!(site.time_ns, Some(100), "{err}");
            }
            other => panic!("expected ForeignRank, got {other}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Futures mpsim does not drive
// ---------------------------------------------------------------------------------------------

/// A rank that awaits a future no mpsim call drives (here one that never wakes; a timer of
/// another runtime is the same) ends the run with `Unsupported` on both backends, whatever
/// the other ranks do: the threads backend used to spin on it forever once the others had
/// finished, or to report a deadlock of ranks "blocked in ?" while they waited for it.
fn awaiting_a_foreign_future(backend: Backend) {
    for others_wait in [false, true] {
        let err = run_err(launcher(2, backend), move |world: Comm| async move {
            if world.rank() == 0 {
                std::future::pending::<()>().await;
            } else if others_wait {
                world.recv(&mut [0u8; 1], 0, 0).await?;
            }
            Ok(())
        });
        match &err {
            Error::Unsupported { what } => {
                assert!(what.starts_with("rank 0 awaited something"), "{what}");
                assert!(what.contains("does not drive"), "{what}");
            }
            other => panic!("expected Unsupported, got {other}"),
        }
    }
}
on_both!(awaiting_a_foreign_future => p2p_8_awaiting_a_future_mpsim_does_not_drive_is_unsupported_sim, p2p_8_awaiting_a_future_mpsim_does_not_drive_is_unsupported_threads);

/// A request that failed reports its error once; waited for or tested again it is an
/// inactive request, with MPI's empty status, never a success carrying the failed message's
/// length (it reported 8 bytes received into a 4-byte buffer).
fn a_failed_request_waited_again_is_inactive(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 8], 1, 0).await?;
            return world.send(&[2u8; 8], 1, 1).await;
        }
        let empty = mpsim::Status {
            source: Status::NO_SOURCE,
            tag: Status::NO_TAG,
            bytes: 0,
            cancelled: false,
        };
        let mut buf = [0u8; 4];
        let mut reqs = [world.irecv(&mut buf, 0, 0)?];
        let e = mpsim::wait_all(&mut reqs).await.expect_err("truncated");
        assert!(matches!(e, Error::Truncate { .. }), "{e}");
        assert_eq!(mpsim::wait_all(&mut reqs).await?, [empty]);
        let [req] = reqs;
        assert_eq!(req.wait().await?, empty);
        let mut buf = [0u8; 4];
        let mut req = world.irecv(&mut buf, 0, 1)?;
        let tested = loop {
            if let Some(outcome) = req.test().await.transpose() {
                break outcome;
            }
        };
        assert!(matches!(tested, Err(Error::Truncate { .. })), "{tested:?}");
        assert_eq!(req.test().await?, Some(empty));
        Ok(())
    });
}
on_both!(a_failed_request_waited_again_is_inactive => p2p_4_a_failed_request_waited_again_is_inactive_sim, p2p_4_a_failed_request_waited_again_is_inactive_threads);

/// A message a matched probe took and the program never received is listed at the rank's end
/// as its `mprobe`, with the message's sender and tag (it was `improbe (peer ANY_SOURCE, tag
/// ANY_TAG)`).
fn a_message_never_received_after_mprobe(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            return world.send(&[1u8; 4], 1, 6).await;
        }
        let message = world.mprobe(0, 6).await?;
        std::mem::forget(message);
        Ok(())
    });
    match &err {
        Error::PendingAtExit { rank: 1, .. } => {
            assert!(err.to_string().contains("mprobe (peer 0, tag 6)"), "{err}");
        }
        other => panic!("expected PendingAtExit, got {other}"),
    }
}
on_both!(a_message_never_received_after_mprobe => p2p_8_a_message_never_received_after_mprobe_names_it_sim, p2p_8_a_message_never_received_after_mprobe_names_it_threads);

/// A `split` dropped after its first poll has drawn its child index and sent its `(color,
/// key)`: the next `split` on that communicator is `Unsupported`, naming the call, where it
/// used to pair with the others' current call and give the rank a communicator of its own,
/// silently. (Every member must complete a collective call, in the same order.)
fn a_split_dropped_unfinished(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 1 {
            let mut early = Box::pin(world.split(Some(5), 0));
            std::future::poll_fn(|cx| {
                let _ = std::future::Future::poll(early.as_mut(), cx);
                std::task::Poll::Ready(())
            })
            .await;
        }
        let half = world.split(Some(0), 0).await?;
        assert_eq!(half.map(|c| c.size()), Some(3));
        Ok(())
    });
    match &err {
        Error::Unsupported { what } => {
            assert!(what.starts_with("rank 1 in comm_split"), "{what}");
            assert!(
                what.contains("dropped or failed before it completed"),
                "{what}"
            );
        }
        other => panic!("expected Unsupported, got {other}"),
    }
}
on_both!(a_split_dropped_unfinished => p2p_6_a_split_dropped_unfinished_makes_the_next_one_an_error_sim, p2p_6_a_split_dropped_unfinished_makes_the_next_one_an_error_threads);
