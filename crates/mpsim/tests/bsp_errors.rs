//! The errors of `spec/bsplib.md` §2 that `bsp_conformance.rs` does not already meet, on both
//! backends: what each names (process, superstep, operation, registration, offset, size), its
//! MPI class, and that a collective one reaches every process.

#[macro_use]
#[path = "common/bsp.rs"]
mod harness;

use mpsim::bsp::Ctx;
use mpsim::{Backend, BspErrorKind, Disagreement, Error, ErrorClass};

use harness::{Record, kind, run, run_ok};

/// An out-of-range put names the pid, superstep, operation, registration, offset and the
/// target's size, which differs per process (every process knows every size).
fn out_of_bounds_names_everything(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        // pid k registers k + 1 elements.
        let x = ctx.push_reg::<u32>(s as usize + 1)?;
        ctx.sync().await?;
        ctx.put(2, &x, 0, &[1, 2, 3])?;
        let e = ctx.put(1, &x, 1, &[1, 2]).unwrap_err();
        assert_eq!(
            kind(&e),
            &BspErrorKind::OutOfBounds {
                reg: 0,
                target: 1,
                offset: 4,
                n: 8,
                size: 8
            }
        );
        assert_eq!(e.class(), ErrorClass::Arg);
        let Error::Bsp(b) = &e else { unreachable!() };
        assert_eq!((b.pid, b.superstep, b.op), (s, 1, "bsp_put"));
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("pid {s} in bsp_put (superstep 1"))
                && text
                    .contains("bytes 4..12 of registration 0 on pid 1, which registered 8 bytes"),
            "{text}"
        );
        // A get is checked against the target's size too, a get_into against this one's.
        let e = ctx.get(0, &x, 1, 1).unwrap_err();
        assert!(
            matches!(kind(&e), BspErrorKind::OutOfBounds { size: 4, .. }),
            "{e}"
        );
        let e = ctx.get_into(2, &x, 0, &x, s as usize, 2).unwrap_err();
        assert!(
            matches!(kind(&e), BspErrorKind::OutOfBounds { target, .. } if *target == s),
            "{e}"
        );
        ctx.sync().await?;
        if s == 2 {
            assert_eq!(ctx.local(&x)?, &[1, 2, 3]);
        }
        Ok(())
    });
}
bsp_both!(out_of_bounds_names_everything => bsp_errors_out_of_bounds_names_the_target_and_its_size_sim, bsp_errors_out_of_bounds_names_the_target_and_its_size_threads);

/// Popping a registration twice (a copied handle) is NotRegistered, at the call.
fn pop_unknown(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u8>(1)?;
        ctx.sync().await?;
        ctx.pop_reg(x)?;
        let e = ctx.pop_reg(x).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::NotRegistered { reg: 0 });
        ctx.sync().await?;
        let e = ctx.pop_reg(x).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::NotRegistered { reg: 0 });
        ctx.sync().await
    });
}
bsp_both!(pop_unknown => bsp_errors_pop_of_an_unknown_registration_sim, bsp_errors_pop_of_an_unknown_registration_threads);

/// A get's result read before its sync is NotDelivered; after, it is there.
fn take_before_sync(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u8>(1)?;
        ctx.local_mut(&x)?[0] = 5;
        ctx.sync().await?;
        let early = ctx.get(1 - ctx.pid(), &x, 0, 1)?;
        let e = ctx.take(early).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::NotDelivered { issued: 1 });
        let got = ctx.get(1 - ctx.pid(), &x, 0, 1)?;
        ctx.sync().await?;
        assert_eq!(ctx.take(got)?, [5]);
        Ok(())
    });
}
bsp_both!(take_before_sync => bsp_errors_a_get_result_read_before_its_sync_sim, bsp_errors_a_get_result_read_before_its_sync_threads);

/// Pop counts that differ: a mismatch on every process, naming the first with each count.
fn pop_count_mismatch(backend: Backend) {
    let rec = Record::default();
    let r = rec.clone();
    run_ok(4, backend, move |mut ctx: Ctx| {
        let r = r.clone();
        async move {
            let a = ctx.push_reg::<u8>(1)?;
            ctx.sync().await?;
            if ctx.pid() >= 2 {
                ctx.pop_reg(a)?;
            }
            let got = ctx.sync().await;
            r.put(ctx.pid(), "sync", got.map_err(|e| kind(&e).clone()));
            Ok(())
        }
    });
    let expected = BspErrorKind::Mismatch {
        what: Disagreement::PopCount,
        low: (0, 0),
        high: (2, 1),
    };
    for pid in 0..4 {
        assert_eq!(
            rec.get(pid, "sync"),
            format!("{:?}", Err::<(), _>(&expected))
        );
    }
}
bsp_both!(pop_count_mismatch => bsp_errors_pop_count_mismatch_on_every_process_sim, bsp_errors_pop_count_mismatch_on_every_process_threads);

/// After a failed sync every call is an error (Poisoned), none hangs; the program that returns
/// Ok ends without another exchange.
fn poisoned_after_failed_sync(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        if ctx.pid() == 1 {
            ctx.set_tagsize(3);
        }
        assert!(ctx.sync().await.is_err());
        let x = ctx.push_reg::<u8>(1);
        assert!(matches!(kind(&x.unwrap_err()), BspErrorKind::Poisoned));
        let e = ctx.sync().await.unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::Poisoned);
        assert_eq!(e.class(), ErrorClass::Other);
        Ok(())
    });
}
bsp_both!(poisoned_after_failed_sync => bsp_errors_a_failed_sync_poisons_the_context_sim, bsp_errors_a_failed_sync_poisons_the_context_threads);

/// A program that returns its error (here `?` on a bad put) fails the run with it, and the
/// others, waiting in a sync, do not hang.
fn local_error_ends_run(backend: Backend) {
    let e = run(3, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u8>(1)?;
        ctx.sync().await?;
        if ctx.pid() == 2 {
            ctx.put(0, &x, 1, &[1])?;
        }
        ctx.sync().await
    })
    .unwrap_err();
    let Error::Bsp(b) = &e else { panic!("{e}") };
    assert_eq!((b.pid, b.op, b.superstep), (2, "bsp_put", 1));
    assert!(matches!(b.kind, BspErrorKind::OutOfBounds { .. }));
}
bsp_both!(local_error_ends_run => bsp_errors_a_returned_error_ends_the_run_sim, bsp_errors_a_returned_error_ends_the_run_threads);

/// Messages from a program that also uses the world communicator itself (none here: the sync
/// runs on a communicator of its own) — and a process whose program ends after syncing more
/// often than the others: the others' end meets its sync.
fn extra_sync_at_the_end(backend: Backend) {
    let e = run(4, backend, |mut ctx: Ctx| async move {
        ctx.sync().await?;
        if ctx.pid() == 3 {
            ctx.sync().await?;
        }
        Ok(())
    })
    .unwrap_err();
    assert_eq!(
        kind(&e),
        &BspErrorKind::SyncEndMismatch {
            syncing: 3,
            ending: 0
        }
    );
}
bsp_both!(extra_sync_at_the_end => bsp_errors_one_sync_too_many_is_sync_end_mismatch_sim, bsp_errors_one_sync_too_many_is_sync_end_mismatch_threads);
