//! Misused collectives end in typed errors naming the rank, the call, the communicator and
//! (simulated) the virtual time, never a hang or a silent wrong result (`docs/collectives.md`
//! "Errors"), on both backends: a root outside the communicator, buffers of the wrong length,
//! counts that differ between ranks, a non-commutative operation with a forced algorithm that
//! needs a commutative one, a freed communicator, a collective that some ranks never call and
//! ranks that call different collectives (deadlocks naming each rank's collective).

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use mpsim::{Algorithm, Backend, Collective, Comm, Error, Op};

use backends::{launcher, run_err};

/// The context id errors name for `comm` (its `Debug` shows it).
fn context_of(comm: &Comm) -> u64 {
    let text = format!("{comm:?}");
    let at = text.find("context: ").expect("Debug names the context") + "context: ".len();
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|d| d.parse().ok())
        .expect("a number")
}

fn root_out_of_range(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        let mut buf = [0u8; 4];
        world.bcast(&mut buf, 3).await
    });
    let Error::InvalidRoot { site, root, size } = &err else {
        panic!("expected InvalidRoot, got {err}");
    };
    assert_eq!((site.call, *root, *size), ("bcast", 3, 3));
    assert_eq!(site.context.map(|c| c.0), Some(0), "the world's context");
    assert_eq!(site.time_ns.is_some(), backend == Backend::Sim);
    assert!(
        err.to_string()
            .contains("invalid root 3 (communicator size 3)"),
        "{err}"
    );
}
on_both!(root_out_of_range => coll_invalid_root_is_typed_sim, coll_invalid_root_is_typed_threads);

/// A rank's program as a plain function.
type Call = fn(Comm) -> std::pin::Pin<Box<dyn Future<Output = mpsim::Result<()>>>>;

fn wrong_buffer_lengths(backend: Backend) {
    // Each call is made by every rank with the same wrong arguments: each fails locally.
    let cases: [(&str, Call); 5] = [
        ("allgather", |w| {
            Box::pin(async move { w.allgather(&[1u32, 2], &mut [0u32; 3]).await })
        }),
        ("alltoall", |w| {
            Box::pin(async move { w.alltoall(&[1u8; 4], &mut [0u8; 4]).await })
        }),
        ("allreduce", |w| {
            Box::pin(async move { w.allreduce(&[1.0f64; 2], &mut [0.0; 1], &Op::sum()).await })
        }),
        ("gatherv", |w| {
            Box::pin(async move { w.gatherv(&[1u8], &mut [0u8; 3], &[1, 1], 0).await })
        }),
        ("reduce_scatter", |w| {
            Box::pin(async move {
                w.reduce_scatter(&[1i32; 3], &mut [0i32; 2], &[1, 1, 1], &Op::sum())
                    .await
            })
        }),
    ];
    for (call, program) in cases {
        let err = run_err(launcher(3, backend), move |world: Comm| program(world));
        let Error::InvalidBuffer { site, what } = &err else {
            panic!("{call}: expected InvalidBuffer, got {err}");
        };
        assert_eq!(site.call, call, "{err}");
        assert!(
            what.contains("elements") || what.contains("entries"),
            "{err}"
        );
        assert_eq!(site.time_ns.is_some(), backend == Backend::Sim);
    }
}
on_both!(wrong_buffer_lengths => coll_wrong_buffer_length_is_invalid_buffer_sim, coll_wrong_buffer_length_is_invalid_buffer_threads);

fn counts_disagree(backend: Backend) {
    for algo in Collective::Bcast.algorithms() {
        for long in [false, true] {
            // Rank 2 passes one element more (or fewer) than the others.
            let err = run_err(launcher(4, backend), move |world: Comm| async move {
                world.force_algorithm(Collective::Bcast, Some(*algo))?;
                let mut len = 16;
                if world.rank() == 2 {
                    len = if long { 17 } else { 15 };
                }
                let mut buf = vec![1u64; len];
                world.bcast(&mut buf, 0).await
            });
            let Error::CollectiveMismatch { site, what } = &err else {
                panic!("bcast by {algo}: expected CollectiveMismatch, got {err}");
            };
            assert_eq!(site.call, "bcast", "{err}");
            assert_eq!(
                site.context.map(|c| c.0),
                Some(0),
                "the world's context: {err}"
            );
            assert!(site.peer.is_some(), "names the peer: {err}");
            assert!(what.contains("counts that do not agree"), "{err}");
            assert_eq!(site.time_ns.is_some(), backend == Backend::Sim);
        }
    }
}
on_both!(counts_disagree => coll_counts_that_differ_between_ranks_are_a_mismatch_sim, coll_counts_that_differ_between_ranks_are_a_mismatch_threads);

fn non_commutative_forced(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        world.force_algorithm(Collective::Allreduce, Some(Algorithm::Ring))?;
        let concat = Op::user(|a: &[u32], b: &mut [u32]| b[0] += a[0] * 10, false);
        world.allreduce(&[world.rank()], &mut [0], &concat).await
    });
    let Error::InvalidOp { site, what } = &err else {
        panic!("expected InvalidOp, got {err}");
    };
    assert_eq!(site.call, "allreduce");
    assert!(
        what.contains("not commutative") && what.contains("ring"),
        "{err}"
    );
}
on_both!(non_commutative_forced => coll_non_commutative_op_with_forced_ring_is_invalid_op_sim, coll_non_commutative_op_with_forced_ring_is_invalid_op_threads);

/// An algorithm a collective does not have cannot be forced.
#[test]
fn coll_forcing_an_algorithm_the_collective_lacks_is_an_error() {
    let err = run_err(launcher(2, Backend::Sim), |world: Comm| async move {
        world.force_algorithm(Collective::Bcast, Some(Algorithm::Bruck))
    });
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
}

fn freed_comm(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let mut twin = world.dup()?;
        let clone = twin.clone();
        twin.free()?;
        clone.barrier().await
    });
    let Error::InvalidComm { site } = &err else {
        panic!("expected InvalidComm, got {err}");
    };
    assert_eq!(site.call, "barrier");
}
on_both!(freed_comm => coll_on_a_freed_communicator_is_invalid_comm_sim, coll_on_a_freed_communicator_is_invalid_comm_threads);

fn some_ranks_never_call(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() != 1 {
            world.barrier().await?;
        }
        // Rank 1 waits for a message nobody sends: every rank ends blocked.
        let mut x = [0u8];
        if world.rank() == 1 {
            world.recv(&mut x, 0, 99).await?;
        }
        Ok(())
    });
    let report = err
        .deadlock()
        .unwrap_or_else(|| panic!("expected a deadlock, got {err}"));
    let calls: Vec<(u32, &str)> = report.blocked.iter().map(|b| (b.rank, b.call)).collect();
    assert!(calls.contains(&(1, "recv")), "{err}");
    assert!(
        calls.iter().any(|&(r, c)| r != 1 && c == "barrier"),
        "the report names the ranks in the barrier: {err}"
    );
}
on_both!(some_ranks_never_call => coll_a_barrier_some_ranks_never_call_is_a_deadlock_naming_it_sim, coll_a_barrier_some_ranks_never_call_is_a_deadlock_naming_it_threads);

fn different_collectives(backend: Backend) {
    let err = run_err(launcher(4, backend), |world: Comm| async move {
        let mut buf = [1u32; 2];
        if world.rank() == 3 {
            world.allreduce(&[1u32; 2], &mut buf, &Op::sum()).await
        } else {
            world.bcast(&mut buf, 0).await?;
            world.barrier().await
        }
    });
    let report = err
        .deadlock()
        .unwrap_or_else(|| panic!("expected a deadlock, got {err}"));
    let calls: Vec<&str> = report.blocked.iter().map(|b| b.call).collect();
    assert!(calls.contains(&"allreduce"), "{err}");
    assert!(
        calls.contains(&"barrier") || calls.contains(&"bcast"),
        "{err}"
    );
}
on_both!(different_collectives => coll_ranks_in_different_collectives_deadlock_naming_each_sim, coll_ranks_in_different_collectives_deadlock_naming_each_threads);

/// Errors name the communicator's own context, not the hidden collective one.
#[test]
fn coll_errors_name_the_communicators_context() {
    let err = run_err(launcher(2, Backend::Sim), |world: Comm| async move {
        let twin = world.dup()?;
        let ctx = context_of(&twin);
        match twin.gather(&[1u8], &mut [0u8; 1], 0).await {
            Err(Error::InvalidBuffer { site, .. }) if site.context.map(|c| c.0) == Some(ctx) => {
                Err(Error::Unsupported { what: "ok".into() })
            }
            other => panic!("{other:?}"),
        }
    });
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}
