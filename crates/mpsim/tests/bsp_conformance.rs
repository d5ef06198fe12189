//! The numbered conformance behaviours of `spec/bsplib.md` §5, each a test named after its
//! number, on `sim` and `threads` (the cost-model ones, 27's cost and 30, in
//! `bsp_timing.rs`). Where the spec speaks C (addresses, tag buffers), the test says how the
//! Rust API expresses it.

#[macro_use]
#[path = "common/bsp.rs"]
mod harness;

use mpsim::bsp::Ctx;
use mpsim::{Backend, BspErrorKind, Disagreement, Result};

use harness::{Record, kind, run, run_ok};

/// 5.1: put copies its source at the call: `put(s, &x, x); x = 8; sync` delivers the old x.
fn put_copies_source(backend: Backend) {
    run_ok(4, backend, |mut ctx: Ctx| async move {
        let (s, p) = (ctx.pid(), ctx.nprocs());
        let x = ctx.push_reg::<u32>(1)?;
        let y = ctx.push_reg::<u32>(1)?;
        ctx.sync().await?;
        ctx.local_mut(&x)?[0] = s;
        ctx.put(s, &x, 0, ctx.local(&x)?)?;
        ctx.put((s + 1) % p, &y, 0, ctx.local(&x)?)?;
        ctx.local_mut(&x)?[0] = 8;
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[s]);
        assert_eq!(ctx.local(&y)?, &[(s + p - 1) % p]);
        Ok(())
    });
}
bsp_both!(put_copies_source => bsp_5_1_put_copies_its_source_at_the_call_sim, bsp_5_1_put_copies_its_source_at_the_call_threads);

/// 5.2: get reads its source at the sync: `x = s; sync; get(s, x -> x); x = 8; sync` gives 8.
fn get_reads_at_sync(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        ctx.local_mut(&x)?[0] = s;
        ctx.sync().await?;
        ctx.get_into(s, &x, 0, &x, 0, 1)?;
        ctx.local_mut(&x)?[0] = 8;
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[8]);
        Ok(())
    });
}
bsp_both!(get_reads_at_sync => bsp_5_2_get_reads_its_source_at_the_sync_sim, bsp_5_2_get_reads_its_source_at_the_sync_threads);

/// 5.3: p = 2, x = s, both get the other's x into their own x: a swap.
fn get_swap(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        ctx.local_mut(&x)?[0] = s;
        ctx.sync().await?;
        ctx.get_into(1 - s, &x, 0, &x, 0, 1)?;
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[1 - s]);
        Ok(())
    });
}
bsp_both!(get_swap => bsp_5_3_two_gets_swap_sim, bsp_5_3_two_gets_swap_threads);

/// 5.4: P1 puts 5 into P0.x while P2 gets P0.x (1): P2 receives 1.
fn get_before_put(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        ctx.local_mut(&x)?[0] = 1;
        ctx.sync().await?;
        let got = match s {
            1 => {
                ctx.put(0, &x, 0, &[5])?;
                None
            }
            2 => Some(ctx.get(0, &x, 0, 1)?),
            _ => None,
        };
        ctx.sync().await?;
        if let Some(got) = got {
            assert_eq!(ctx.take(got)?, [1]);
        }
        if s == 0 {
            assert_eq!(ctx.local(&x)?, &[5]);
        }
        Ok(())
    });
}
bsp_both!(get_before_put => bsp_5_4_a_get_reads_before_a_put_lands_sim, bsp_5_4_a_get_reads_before_a_put_lands_threads);

/// 5.5: P0 gets P1.y (7) into x while P1 puts 5 into P0.x: x == 5 (the put lands after the
/// get result).
fn put_after_get(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        let y = ctx.push_reg::<u32>(1)?;
        ctx.local_mut(&y)?[0] = 7;
        ctx.sync().await?;
        if s == 0 {
            ctx.get_into(1, &y, 0, &x, 0, 1)?;
        } else {
            ctx.put(0, &x, 0, &[5])?;
        }
        ctx.sync().await?;
        if s == 0 {
            assert_eq!(ctx.local(&x)?, &[5]);
        }
        Ok(())
    });
}
bsp_both!(put_after_get => bsp_5_5_a_put_beats_a_get_into_the_same_bytes_sim, bsp_5_5_a_put_beats_a_get_into_the_same_bytes_threads);

/// 5.6: every pid puts s into P0.x: x == p - 1 (ascending source pid, last wins), whole.
fn last_source_wins(backend: Backend) {
    run_ok(5, backend, |mut ctx: Ctx| async move {
        let (s, p) = (ctx.pid(), ctx.nprocs());
        let x = ctx.push_reg::<u64>(1)?;
        ctx.sync().await?;
        ctx.put(0, &x, 0, &[u64::from(s) * 0x0101_0101_0101_0101])?;
        ctx.sync().await?;
        if s == 0 {
            assert_eq!(ctx.local(&x)?, &[u64::from(p - 1) * 0x0101_0101_0101_0101]);
        }
        Ok(())
    });
}
bsp_both!(last_source_wins => bsp_5_6_every_pid_puts_the_highest_wins_whole_sim, bsp_5_6_every_pid_puts_the_highest_wins_whole_threads);

/// 5.7: one pid puts 1 then 2 into the same bytes: 2.
fn last_issue_wins(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u32>(2)?;
        ctx.sync().await?;
        if ctx.pid() == 1 {
            ctx.put(0, &x, 0, &[1, 1])?;
            ctx.put(0, &x, 1, &[2])?;
        }
        ctx.sync().await?;
        if ctx.pid() == 0 {
            assert_eq!(ctx.local(&x)?, &[1, 2]);
        }
        Ok(())
    });
}
bsp_both!(last_issue_wins => bsp_5_7_the_later_put_wins_sim, bsp_5_7_the_later_put_wins_threads);

/// 5.8: a put to a registration pushed in the same superstep: not active until next sync.
fn not_active(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u32>(1)?;
        let e = ctx.put(0, &x, 0, &[1]).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::NotActive { reg: 0 });
        assert!(e.to_string().contains("not active until next sync"), "{e}");
        ctx.sync().await?;
        ctx.put(0, &x, 0, &[1])?;
        ctx.sync().await
    });
}
bsp_both!(not_active => bsp_5_8_put_to_a_new_registration_is_not_active_sim, bsp_5_8_put_to_a_new_registration_is_not_active_threads);

/// 5.9: a put in the superstep of the pop is delivered; a later one is NotRegistered. (The
/// popped area stays readable through its handle, as C's memory outlives its registration.)
fn pop_takes_effect_at_sync(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        ctx.sync().await?;
        ctx.put(1 - s, &x, 0, &[10 + s])?;
        ctx.pop_reg(x)?;
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[10 + 1 - s]);
        let e = ctx.put(1 - s, &x, 0, &[1]).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::NotRegistered { reg: 0 });
        Ok(())
    });
}
bsp_both!(pop_takes_effect_at_sync => bsp_5_9_pop_takes_effect_at_sync_sim, bsp_5_9_pop_takes_effect_at_sync_threads);

/// 5.10: a 4-byte registration, then an 8-byte one (C: the same address pushed twice); puts of
/// 8 bytes fit the newer; once it is popped, 8 bytes into the older are OutOfBounds. (Handles
/// name each registration, so the older is named by its own handle.)
fn stacked_registrations(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let r4 = ctx.push_reg::<u8>(4)?;
        ctx.sync().await?;
        let r8 = ctx.push_reg::<u8>(8)?;
        ctx.sync().await?;
        ctx.put(0, &r8, 0, &[1u8; 8])?;
        ctx.pop_reg(r8)?;
        ctx.sync().await?;
        let e = ctx.put(0, &r4, 0, &[1u8; 8]).unwrap_err();
        assert_eq!(
            kind(&e),
            &BspErrorKind::OutOfBounds {
                reg: 0,
                target: 0,
                offset: 0,
                n: 8,
                size: 4
            }
        );
        Ok(())
    });
}
bsp_both!(stacked_registrations => bsp_5_10_the_older_registration_is_back_after_a_pop_sim, bsp_5_10_the_older_registration_is_back_after_a_pop_threads);

/// 5.11: push x; push x; pop x; pop x; sync: no error, nothing registered.
fn push_push_pop_pop(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let a = ctx.push_reg::<u32>(1)?;
        let b = ctx.push_reg::<u32>(1)?;
        ctx.pop_reg(b)?;
        ctx.pop_reg(a)?;
        ctx.sync().await?;
        for r in [a, b] {
            let e = ctx.put(0, &r, 0, &[1]).unwrap_err();
            assert!(
                matches!(kind(&e), BspErrorKind::NotRegistered { .. }),
                "{e}"
            );
        }
        Ok(())
    });
}
bsp_both!(push_push_pop_pop => bsp_5_11_pushes_popped_in_their_superstep_leave_nothing_sim, bsp_5_11_pushes_popped_in_their_superstep_leave_nothing_threads);

/// Runs `program` on `p` processes, each noting the result of its first sync, then returning
/// Ok; returns the record.
fn first_sync_results<F, Fut>(p: u32, backend: Backend, program: F) -> Record
where
    F: Fn(Ctx, Record) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<()>>,
{
    let rec = Record::default();
    let r = rec.clone();
    run_ok(p, backend, move |ctx: Ctx| program(ctx, r.clone()));
    rec
}

/// 5.12: only pids != 0 push: every process gets the push-count mismatch at the sync.
fn push_count_mismatch(backend: Backend) {
    let rec = first_sync_results(4, backend, |mut ctx: Ctx, rec: Record| async move {
        if ctx.pid() != 0 {
            ctx.push_reg::<u32>(1)?;
        }
        let r = ctx.sync().await;
        rec.put(ctx.pid(), "sync", r.map_err(|e| kind(&e).clone()));
        // The context stays failed: a later call gives an error, not a hang.
        assert!(ctx.sync().await.is_err());
        Ok(())
    });
    let expected = BspErrorKind::Mismatch {
        what: Disagreement::PushCount,
        low: (0, 0),
        high: (1, 1),
    };
    for pid in 0..4 {
        assert_eq!(
            rec.get(pid, "sync"),
            format!("{:?}", Err::<(), _>(&expected))
        );
    }
}
bsp_both!(push_count_mismatch => bsp_5_12_push_count_mismatch_on_every_process_sim, bsp_5_12_push_count_mismatch_on_every_process_threads);

/// 5.13: pops naming different registrations: a mismatch at the sync on every process.
fn pop_mismatch(backend: Backend) {
    let rec = first_sync_results(3, backend, |mut ctx: Ctx, rec: Record| async move {
        let a = ctx.push_reg::<u32>(1)?;
        let b = ctx.push_reg::<u32>(1)?;
        ctx.sync().await?;
        ctx.pop_reg(if ctx.pid() == 0 { a } else { b })?;
        let r = ctx.sync().await;
        rec.put(ctx.pid(), "sync", r.map_err(|e| kind(&e).clone()));
        Ok(())
    });
    for pid in 0..3 {
        let got = rec.get(pid, "sync");
        assert!(got.contains("PopRegistrations"), "pid {pid}: {got}");
    }
}
bsp_both!(pop_mismatch => bsp_5_13_pops_of_different_registrations_mismatch_on_every_process_sim, bsp_5_13_pops_of_different_registrations_mismatch_on_every_process_threads);

/// 5.14: P0 registers nothing (0 elements), the others 4 bytes: a 4-byte put to P0 is
/// OutOfBounds, to the others fine.
fn null_registration(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let len = if ctx.pid() == 0 { 0 } else { 1 };
        let x = ctx.push_reg::<u32>(len)?;
        assert_eq!(x.is_empty(), ctx.pid() == 0);
        ctx.sync().await?;
        let e = ctx.put(0, &x, 0, &[7]).unwrap_err();
        assert_eq!(
            kind(&e),
            &BspErrorKind::OutOfBounds {
                reg: 0,
                target: 0,
                offset: 0,
                n: 4,
                size: 0
            }
        );
        ctx.put(1, &x, 0, &[7])?;
        ctx.put(2, &x, 0, &[7])?;
        ctx.sync().await?;
        if ctx.pid() != 0 {
            assert_eq!(ctx.local(&x)?, &[7]);
        }
        Ok(())
    });
}
bsp_both!(null_registration => bsp_5_14_a_null_registration_has_size_zero_sim, bsp_5_14_a_null_registration_has_size_zero_threads);

/// 5.15: put, get and send to pid p or -1 are InvalidPid; a put of nothing to a bad offset is
/// a no-op.
fn invalid_pid(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u32>(1)?;
        ctx.sync().await?;
        for pid in [3, u32::MAX] {
            let target = if pid == u32::MAX { -1 } else { 3 };
            let expected = BspErrorKind::InvalidPid { target, nprocs: 3 };
            assert_eq!(kind(&ctx.put(pid, &x, 0, &[1]).unwrap_err()), &expected);
            assert_eq!(kind(&ctx.get(pid, &x, 0, 1).unwrap_err()), &expected);
            assert_eq!(kind(&ctx.send(pid, &[], &[1]).unwrap_err()), &expected);
            // n = 0: the pid is still checked.
            assert_eq!(
                kind(&ctx.put::<u32>(pid, &x, 0, &[]).unwrap_err()),
                &expected
            );
        }
        ctx.put::<u32>(1, &x, 1000, &[])?;
        ctx.get_into(1, &x, 1000, &x, 0, 0)?;
        ctx.sync().await
    });
}
bsp_both!(invalid_pid => bsp_5_15_bad_pids_are_errors_empty_transfers_no_ops_sim, bsp_5_15_bad_pids_are_errors_empty_transfers_no_ops_threads);

/// 5.16: with the default tag size 0, a message's tag is empty (C: `get_tag` leaves the
/// caller's tag buffer untouched; in Rust a tag is the slice `get_tag` lends, of length 0, and
/// a send given a non-empty tag is a TagSize error).
fn default_tag_size(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        assert_eq!(ctx.tagsize(), 0);
        let e = ctx.send(0, &[42], &[1]).unwrap_err();
        assert_eq!(
            kind(&e),
            &BspErrorKind::TagSize {
                expected: 0,
                got: 1
            }
        );
        ctx.send(0, &[], &[1, 2, 3])?;
        ctx.sync().await?;
        if ctx.pid() == 0 {
            let (len, tag) = ctx.get_tag().expect("two messages");
            assert_eq!((len, tag), (3, &[][..]));
        }
        Ok(())
    });
}
bsp_both!(default_tag_size => bsp_5_16_the_default_tag_is_empty_sim, bsp_5_16_the_default_tag_is_empty_threads);

/// 5.17: set_tagsize returns the size asked for before.
fn set_tagsize_returns(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        assert_eq!(ctx.set_tagsize(1), 0);
        assert_eq!(ctx.set_tagsize(0), 1);
        assert_eq!(ctx.set_tagsize(1), 0);
        ctx.sync().await?;
        assert_eq!(ctx.set_tagsize(5), 1);
        assert_eq!(ctx.set_tagsize(5), 5);
        ctx.sync().await
    });
}
bsp_both!(set_tagsize_returns => bsp_5_17_set_tagsize_returns_the_previous_request_sim, bsp_5_17_set_tagsize_returns_the_previous_request_threads);

/// 5.18: set_tagsize(1) and a send in k: its tag has 0 bytes; a send in k+1 has 1.
fn tagsize_takes_effect_next_superstep(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let other = 1 - ctx.pid();
        ctx.set_tagsize(1);
        ctx.send(other, &[], &[7])?;
        ctx.sync().await?;
        assert_eq!(ctx.get_tag(), Some((1, &[][..])));
        assert_eq!(ctx.tagsize(), 1);
        ctx.send(other, &[9], &[8])?;
        ctx.sync().await?;
        let m = ctx.hpmove().expect("a message");
        assert_eq!((m.tag, m.payload), (&[9][..], &[8][..]));
        Ok(())
    });
}
bsp_both!(tagsize_takes_effect_next_superstep => bsp_5_18_a_tag_size_applies_from_the_next_superstep_sim, bsp_5_18_a_tag_size_applies_from_the_next_superstep_threads);

/// 5.19: different tag sizes, or different numbers of calls: a mismatch at the sync on all.
fn tagsize_mismatch(backend: Backend) {
    let rec = first_sync_results(3, backend, |mut ctx: Ctx, rec: Record| async move {
        ctx.set_tagsize(if ctx.pid() == 2 { 4 } else { 2 });
        let r = ctx.sync().await;
        rec.put(ctx.pid(), "value", r.map_err(|e| kind(&e).clone()));
        Ok(())
    });
    let expected = BspErrorKind::Mismatch {
        what: Disagreement::TagsizeValue,
        low: (0, 2),
        high: (2, 4),
    };
    for pid in 0..3 {
        assert_eq!(
            rec.get(pid, "value"),
            format!("{:?}", Err::<(), _>(&expected))
        );
    }
    let rec = first_sync_results(3, backend, |mut ctx: Ctx, rec: Record| async move {
        ctx.set_tagsize(2);
        if ctx.pid() == 1 {
            ctx.set_tagsize(2);
        }
        let r = ctx.sync().await;
        rec.put(ctx.pid(), "calls", r.map_err(|e| kind(&e).clone()));
        Ok(())
    });
    let expected = BspErrorKind::Mismatch {
        what: Disagreement::TagsizeCalls,
        low: (0, 1),
        high: (1, 2),
    };
    for pid in 0..3 {
        assert_eq!(
            rec.get(pid, "calls"),
            format!("{:?}", Err::<(), _>(&expected))
        );
    }
}
bsp_both!(tagsize_mismatch => bsp_5_19_tag_sizes_that_differ_mismatch_on_every_process_sim, bsp_5_19_tag_sizes_that_differ_mismatch_on_every_process_threads);

/// 5.20: every pid sends n bytes to every pid: qsize = (p, p·n), then (p−1, (p−1)·n).
fn qsize_counts(backend: Backend) {
    run_ok(4, backend, |mut ctx: Ctx| async move {
        let (p, n) = (ctx.nprocs() as usize, 5);
        for pid in 0..ctx.nprocs() {
            ctx.send(pid, &[], &[1u8; 5])?;
        }
        assert_eq!(ctx.qsize(), (0, 0));
        ctx.sync().await?;
        assert_eq!(ctx.qsize(), (p, p * n));
        let mut buf = [0u8; 5];
        assert_eq!(ctx.move_into(&mut buf)?, 5);
        assert_eq!(ctx.qsize(), (p - 1, (p - 1) * n));
        Ok(())
    });
}
bsp_both!(qsize_counts => bsp_5_20_qsize_counts_messages_and_payload_bytes_sim, bsp_5_20_qsize_counts_messages_and_payload_bytes_threads);

/// 5.21: on an empty queue get_tag and hpmove give None, move is QueueEmpty.
fn empty_queue(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        ctx.sync().await?;
        assert_eq!(ctx.get_tag(), None);
        assert_eq!(ctx.hpmove(), None);
        let e = ctx.move_into(&mut [0u8; 4]).unwrap_err();
        assert_eq!(kind(&e), &BspErrorKind::QueueEmpty);
        Ok(())
    });
}
bsp_both!(empty_queue => bsp_5_21_an_empty_queue_sim, bsp_5_21_an_empty_queue_threads);

/// 5.22: move into a 4-byte buffer takes the first 4 bytes of an 8-byte payload and the
/// message.
fn move_truncates(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        ctx.send(1 - ctx.pid(), &[], &[1, 2, 3, 4, 5, 6, 7, 8])?;
        ctx.sync().await?;
        let mut buf = [0u8; 4];
        assert_eq!(ctx.move_into(&mut buf)?, 4);
        assert_eq!(buf, [1, 2, 3, 4]);
        assert_eq!(ctx.qsize(), (0, 0));
        Ok(())
    });
}
bsp_both!(move_truncates => bsp_5_22_move_copies_at_most_the_buffer_sim, bsp_5_22_move_copies_at_most_the_buffer_threads);

/// 5.23: messages not moved are dropped by the next sync.
fn messages_dropped(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        ctx.send(0, &[], &[1])?;
        ctx.sync().await?;
        ctx.sync().await?;
        assert_eq!(ctx.qsize(), (0, 0));
        Ok(())
    });
}
bsp_both!(messages_dropped => bsp_5_23_unread_messages_are_dropped_at_the_next_sync_sim, bsp_5_23_unread_messages_are_dropped_at_the_next_sync_threads);

/// 5.24: an empty message to self: one message, payload 0 bytes.
fn empty_self_message(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        ctx.send(ctx.pid(), &[], &[])?;
        ctx.sync().await?;
        assert_eq!(ctx.qsize(), (1, 0));
        assert_eq!(ctx.get_tag(), Some((0, &[][..])));
        assert_eq!(ctx.move_into(&mut [])?, 0);
        Ok(())
    });
}
bsp_both!(empty_self_message => bsp_5_24_an_empty_message_to_self_sim, bsp_5_24_an_empty_message_to_self_threads);

/// 5.25: a put or send to self arrives only after the sync.
fn self_traffic_after_sync(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u32>(1)?;
        ctx.sync().await?;
        ctx.put(s, &x, 0, &[9])?;
        ctx.send(s, &[], &[9])?;
        assert_eq!(ctx.local(&x)?, &[0]);
        assert_eq!(ctx.qsize(), (0, 0));
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[9]);
        assert_eq!(ctx.qsize(), (1, 1));
        Ok(())
    });
}
bsp_both!(self_traffic_after_sync => bsp_5_25_self_traffic_arrives_after_the_sync_sim, bsp_5_25_self_traffic_arrives_after_the_sync_threads);

/// 5.26: hpmove and messages() lend what was sent; qsize drops; the bytes stay readable to
/// the end of the superstep (a compile-time guarantee: see the `bsmp` module's
/// `compile_fail` doctest).
fn hpmove_lends(backend: Backend) {
    run_ok(3, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        ctx.set_tagsize(1);
        ctx.sync().await?;
        for pid in 0..ctx.nprocs() {
            ctx.send(pid, &[s as u8], &[s as u8; 3])?;
        }
        ctx.sync().await?;
        let first = ctx.hpmove().expect("a message");
        assert_eq!(ctx.qsize(), (2, 6));
        let rest: Vec<_> = ctx.messages().collect();
        assert_eq!(ctx.qsize(), (0, 0));
        // Still readable after the queue is empty.
        assert_eq!((first.tag, first.payload), (&[0][..], &[0, 0, 0][..]));
        for (i, m) in rest.iter().enumerate() {
            let from = i as u8 + 1;
            assert_eq!((m.tag, m.payload), (&[from][..], &[from; 3][..]));
        }
        Ok(())
    });
}
bsp_both!(hpmove_lends => bsp_5_26_hpmove_lends_the_messages_until_the_sync_sim, bsp_5_26_hpmove_lends_the_messages_until_the_sync_threads);

/// 5.27: p = 1: every operation to pid 0 works (the cost of an empty superstep: `bsp_timing`).
fn one_process(backend: Backend) {
    run_ok(1, backend, |mut ctx: Ctx| async move {
        let x = ctx.push_reg::<u32>(2)?;
        ctx.set_tagsize(2);
        ctx.sync().await?;
        ctx.put(0, &x, 0, &[1, 2])?;
        let got = ctx.get(0, &x, 0, 2)?;
        ctx.send(0, &[1, 2], &[3])?;
        ctx.sync().await?;
        assert_eq!(ctx.take(got)?, [0, 0]);
        assert_eq!(ctx.local(&x)?, &[1, 2]);
        let m = ctx.hpmove().expect("a message");
        assert_eq!((m.tag, m.payload), (&[1, 2][..], &[3][..]));
        ctx.pop_reg(x)?;
        ctx.sync().await
    });
}
bsp_both!(one_process => bsp_5_27_one_process_does_everything_to_itself_sim, bsp_5_27_one_process_does_everything_to_itself_threads);

/// 5.28: P0 syncs while the others end: SyncEndMismatch, on P0 and as the run's error, no hang.
fn sync_end_mismatch(backend: Backend) {
    let rec = Record::default();
    let r = rec.clone();
    let e = run(3, backend, move |mut ctx: Ctx| {
        let r = r.clone();
        async move {
            if ctx.pid() == 0 {
                let got = ctx.sync().await;
                r.put(0, "sync", got.map_err(|e| kind(&e).clone()));
            }
            Ok(())
        }
    })
    .unwrap_err();
    let expected = BspErrorKind::SyncEndMismatch {
        syncing: 0,
        ending: 1,
    };
    assert_eq!(kind(&e), &expected);
    // P0's sync returned the same error. Under `sim` the run stops when the first process's
    // program returns its error, which may be before P0's code after its sync runs.
    if backend == Backend::Threads {
        assert_eq!(rec.get(0, "sync"), format!("{:?}", Err::<(), _>(&expected)));
    }
}
bsp_both!(sync_end_mismatch => bsp_5_28_sync_while_others_end_is_an_error_not_a_hang_sim, bsp_5_28_sync_while_others_end_is_an_error_not_a_hang_threads);

/// 5.29: abort("m") on P1: the run fails with Aborted { by: 1, msg: "m" }.
fn abort(backend: Backend) {
    let e = run(3, backend, |mut ctx: Ctx| async move {
        if ctx.pid() == 1 {
            return Err(ctx.abort("m"));
        }
        ctx.sync().await?;
        ctx.sync().await
    })
    .unwrap_err();
    assert_eq!(
        kind(&e),
        &BspErrorKind::Aborted {
            by: 1,
            msg: "m".into()
        }
    );
    assert_eq!(e.class(), mpsim::ErrorClass::ProcAborted);
}
bsp_both!(abort => bsp_5_29_abort_stops_the_run_naming_its_pid_sim, bsp_5_29_abort_stops_the_run_naming_its_pid_threads);

/// 5.31: a local hpput with a nonzero offset lands at that offset.
fn hpput_offset(backend: Backend) {
    run_ok(2, backend, |mut ctx: Ctx| async move {
        let s = ctx.pid();
        let x = ctx.push_reg::<u16>(4)?;
        ctx.sync().await?;
        ctx.hpput(s, &x, 2, &[7, 8])?;
        ctx.sync().await?;
        assert_eq!(ctx.local(&x)?, &[0, 0, 7, 8]);
        Ok(())
    });
}
bsp_both!(hpput_offset => bsp_5_31_a_local_hpput_lands_at_its_offset_sim, bsp_5_31_a_local_hpput_lands_at_its_offset_threads);
