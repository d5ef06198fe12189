//! `docs/p2p.md` §9 behaviours through the public API, each program run unchanged on both
//! backends: every behaviour gets a `p2p_pN_<what>_sim` and a `p2p_pN_<what>_threads` test that
//! call one function with the backend.
//!
//! Covered elsewhere, on both backends too: `p2p_comms.rs` (P18 persistent requests, P20 dup,
//! P21 split, P22 freed communicators), `p2p_stress.rs` (random traffic); `p2p_threads.rs` keeps
//! the threads-only progress check of P28; the core-level versions are in
//! `mpsim-proto/tests/p2p_core.rs`.
//!
//! Rules the programs follow:
//! - Backend-agnostic: no wall-clock assertion, no thread tricks. "Not complete before the
//!   receiver posts" is shown by a handshake: the receiver posts the receive only after a second
//!   message that the sender sends after the check, so the check cannot race with the receive.
//!   A `test` loop is bounded by a count, never by time.
//! - Timing claims are checked only under `sim`, in virtual time (`world.now_ns()`), where
//!   `timing.md` fixes them exactly (P7, P28).
//! - Hangs: the threads backend reports deadlocks and the simulator cannot hang, but each run
//!   also happens on a helper thread with a generous cap (`TIME_LIMIT` in the harness,
//!   `common/backends.rs`, shared with `p2p_errors.rs`), so a library bug that does hang fails
//!   its test instead of the whole suite. This bounds the run, it asserts nothing about speed.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mpsim::sim::Model;
use mpsim::{
    ANY_SOURCE, ANY_TAG, BSEND_OVERHEAD, Backend, Comm, Error, PROC_NULL, Request, Result, Source,
    Status, Tag, TestAny, test_all, test_any, test_some, wait_all, wait_any, wait_some,
};

use backends::{Ended, launcher, run_bounded, run_err, run_ok};

/// The eager threshold of standard sends on both backends with default settings (the
/// launcher's default on threads, `Model::default_machine()` and `Model::worked_examples()`
/// under sim).
const EAGER: usize = 65_536;

/// How many `test`s a "still pending" check makes (a count, not a time).
const POLLS: usize = 50;

/// `len` bytes determined by `seed`.
fn bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[track_caller]
fn assert_status(s: &Status, source: u32, tag: i32, len: usize) {
    assert_eq!(
        (s.source, s.tag, s.bytes, s.cancelled),
        (source, tag, len, false),
        "status {s:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// P1 ring
// ---------------------------------------------------------------------------------------------

/// P1: a token ring of 5 ranks with blocking `send`/`recv`; each hop adds its rank; data and
/// status intact.
fn p1_ring(backend: Backend) {
    run_ok(launcher(5, backend), |world: Comm| async move {
        let (me, n) = (world.rank(), world.size());
        let (left, right) = ((me + n - 1) % n, (me + 1) % n);
        let mut token = vec![0u32; 100];
        if me == 0 {
            let start: Vec<u32> = (0..100).collect();
            world.send(&start, right, 3).await?;
        }
        let s = world.recv(&mut token, left, 3).await?;
        assert_status(&s, left, 3, 400);
        assert_eq!(s.count::<u32>(), Some(100));
        // Rank r receives the start plus the sum of the ranks before it (rank 0: of all ranks).
        let hops: u32 = if me == 0 { (0..n).sum() } else { (0..me).sum() };
        assert!(
            token.iter().enumerate().all(|(i, &x)| x == i as u32 + hops),
            "rank {me}: {token:?}"
        );
        if me != 0 {
            let next: Vec<u32> = token.iter().map(|x| x + me).collect();
            world.send(&next, right, 3).await?;
        }
        Ok(())
    });
}
on_both!(p1_ring => p2p_p1_ring_data_and_status_intact_sim, p2p_p1_ring_data_and_status_intact_threads);

// ---------------------------------------------------------------------------------------------
// P2 non-overtaking across protocols
// ---------------------------------------------------------------------------------------------

/// P2: 1 MiB (rendezvous) then 8 B (eager), same tag: received in that order.
fn p2_non_overtaking(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&bytes(7, 1 << 20), 1, 5).await?;
            world.send(&[9u8; 8], 1, 5).await?;
        } else {
            let mut big = vec![0u8; 1 << 20];
            let mut small = [0u8; 1 << 10];
            let a = world.recv(&mut big, 0, 5).await?;
            let b = world.recv(&mut small, 0, 5).await?;
            assert_eq!((a.bytes, b.bytes), (1 << 20, 8));
            assert!(big == bytes(7, 1 << 20) && small[..8] == [9; 8]);
        }
        Ok(())
    });
}
on_both!(p2_non_overtaking => p2p_p2_large_then_small_same_tag_not_overtaken_sim, p2p_p2_large_then_small_same_tag_not_overtaken_threads);

// ---------------------------------------------------------------------------------------------
// P3 tag selection, P4 wildcards
// ---------------------------------------------------------------------------------------------

/// P3: tag 1 then tag 2, once eager/eager and once rendezvous/eager; the receiver takes tag 2
/// first.
fn p3_tag_selection(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u32], 1, 1).await?;
            world.send(&[2u32], 1, 2).await?;
            // Above the threshold: a blocking send would wait for a receive that comes later.
            let big = world.isend(&bytes(1, EAGER + 1), 1, 1)?;
            world.send(&[4u32], 1, 2).await?;
            big.wait().await?;
        } else {
            let mut x = [0u32];
            assert_status(&world.recv(&mut x, 0, 2).await?, 0, 2, 4);
            assert_eq!(x, [2]);
            assert_status(&world.recv(&mut x, 0, 1).await?, 0, 1, 4);
            assert_eq!(x, [1]);
            assert_status(&world.recv(&mut x, 0, 2).await?, 0, 2, 4);
            assert_eq!(x, [4]);
            let mut big = vec![0u8; EAGER + 1];
            assert_status(&world.recv(&mut big, 0, 1).await?, 0, 1, EAGER + 1);
            assert_eq!(big, bytes(1, EAGER + 1));
        }
        Ok(())
    });
}
on_both!(p3_tag_selection => p2p_p3_tag_selection_takes_later_tag_first_sim, p2p_p3_tag_selection_takes_later_tag_first_threads);

/// P4's senders: rank `r` sends `[r, tag]` to rank 0 with tags `10 + r`, then `20 + r`.
async fn send_rank_and_tag(world: &Comm) -> mpsim::Result<()> {
    let me = world.rank() as i32;
    for tag in [10 + me, 20 + me] {
        world.send(&[me, tag], 0, tag).await?;
    }
    Ok(())
}

/// P4: ranks 1 and 2 each send `[rank, tag]` with tags `10 + rank` then `20 + rank`; rank 0
/// receives with `(ANY, tag)`, `(rank, ANY)` and `(ANY, ANY)`: every status names the real
/// source and tag, matching the data.
fn p4_wildcards(backend: Backend) {
    run_ok(launcher(3, backend), |world: Comm| async move {
        if world.rank() != 0 {
            return send_rank_and_tag(&world).await;
        }
        let mut got = [0i32; 2];
        let check = |s: &Status, got: [i32; 2]| {
            assert_eq!((s.source as i32, s.tag), (got[0], got[1]), "{s:?}");
            assert_eq!(s.bytes, 8);
        };
        let s = world.recv(&mut got, Source::Any, 22).await?;
        check(&s, got);
        assert_eq!((s.source, s.tag), (2, 22));
        let s = world.recv(&mut got, 1, Tag::Any).await?;
        check(&s, got);
        assert_eq!((s.source, s.tag), (1, 11), "non-overtaking from rank 1");
        let mut rest = Vec::new();
        for _ in 0..2 {
            let s = world.recv(&mut got, Source::Any, Tag::Any).await?;
            check(&s, got);
            rest.push((s.source, s.tag));
        }
        rest.sort_unstable();
        assert_eq!(rest, [(1, 21), (2, 12)]);
        Ok(())
    });
}
on_both!(p4_wildcards => p2p_p4_wildcards_report_real_source_and_tag_sim, p2p_p4_wildcards_report_real_source_and_tag_threads);

/// P4 with MPI's names: `ANY_SOURCE` and `ANY_TAG` (`Source::Any`, `Tag::Any`) are the
/// wildcards of a blocking receive, a nonblocking one, a persistent one,
/// probes and matched probes; each status names the real source and tag, matching the data.
fn p4_any_constants(backend: Backend) {
    run_ok(launcher(3, backend), |world: Comm| async move {
        if world.rank() != 0 {
            return send_rank_and_tag(&world).await;
        }
        let mut got = [0i32; 2];
        let mut seen = Vec::new();
        let mut check = |s: Status, got: [i32; 2]| {
            assert_eq!((s.source as i32, s.tag), (got[0], got[1]), "{s:?}");
            assert_eq!(s.bytes, 8);
            seen.push((s.source, s.tag));
        };
        // A probe, then the receive it announces.
        let probed = world.probe(ANY_SOURCE, ANY_TAG).await?;
        let s = world.recv(&mut got, ANY_SOURCE, ANY_TAG).await?;
        assert_eq!((s.source, s.tag), (probed.source, probed.tag));
        check(s, got);
        let s = world.irecv(&mut got, ANY_SOURCE, ANY_TAG)?.wait().await?;
        check(s, got);
        let mut persistent = world.recv_init(&mut got, ANY_SOURCE, ANY_TAG)?;
        persistent.start()?;
        let s = persistent.wait().await?;
        let data = persistent.buffer::<i32>().expect("inactive").try_into();
        drop(persistent);
        check(s, data.expect("two i32s"));
        let message = world.mprobe(ANY_SOURCE, ANY_TAG).await?;
        let s = message.mrecv(&mut got).await?;
        check(s, got);
        assert_eq!(world.iprobe(ANY_SOURCE, ANY_TAG).await?, None);
        // Every message once; from each sender in the order sent (non-overtaking).
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [(1, 11), (1, 21), (2, 12), (2, 22)]);
        for source in [1, 2] {
            let tags: Vec<i32> = seen.iter().filter(|s| s.0 == source).map(|s| s.1).collect();
            assert!(tags.is_sorted(), "from {source}: {tags:?}");
        }
        Ok(())
    });
}
on_both!(p4_any_constants => p2p_p4_any_source_and_any_tag_constants_receive_any_message_sim, p2p_p4_any_source_and_any_tag_constants_receive_any_message_threads);

// ---------------------------------------------------------------------------------------------
// P5..P9 send modes
// ---------------------------------------------------------------------------------------------

/// P5: `issend(tag A)` is not complete while rank 1 has not posted A (it posts A only after
/// B, which rank 0 sends after the checks); then `wait` completes.
fn p5_issend(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        let (a, b) = (1, 2);
        if world.rank() == 0 {
            let mut r = world.issend(&bytes(5, 16), 1, a)?;
            for i in 0..POLLS {
                assert!(r.test().await?.is_none(), "issend complete at test {i}");
            }
            world.send(&[0u8], 1, b).await?;
            r.wait().await?;
        } else {
            world.recv(&mut [0u8], 0, b).await?;
            let mut got = [0u8; 16];
            assert_status(&world.recv(&mut got, 0, a).await?, 0, a, 16);
            assert_eq!(got[..], bytes(5, 16)[..]);
        }
        Ok(())
    });
}
on_both!(p5_issend => p2p_p5_issend_not_complete_before_receive_posted_sim, p2p_p5_issend_not_complete_before_receive_posted_threads);

/// P6: `bsend` completes before the receiver posts, and once the receiver took the message
/// the attached buffer is whole again (a second bsend of the full size fits, detach returns the
/// size).
fn p6_bsend(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        const LEN: usize = 100;
        let attached = LEN + BSEND_OVERHEAD;
        if world.rank() == 0 {
            world.buffer_attach(attached)?;
            world.bsend(&bytes(6, LEN), 1, 1).await?; // completes at once: rank 1 waits for tag 2
            world.send(&[0u8], 1, 2).await?;
            // Rank 1 answers on tag 3 after it took the message: the buffer is whole again.
            world.recv(&mut [0u8], 1, 3).await?;
            let mut r = world.ibsend(&bytes(7, LEN), 1, 4)?;
            assert!(r.test().await?.is_some(), "ibsend is complete at once");
            assert_eq!(world.buffer_detach().await?, attached);
        } else {
            world.recv(&mut [0u8], 0, 2).await?;
            let mut got = [0u8; LEN];
            assert_status(&world.recv(&mut got, 0, 1).await?, 0, 1, LEN);
            assert_eq!(got[..], bytes(6, LEN)[..]);
            world.send(&[0u8], 0, 3).await?;
            assert_status(&world.recv(&mut got, 0, 4).await?, 0, 4, LEN);
            assert_eq!(got[..], bytes(7, LEN)[..]);
        }
        Ok(())
    });
}
on_both!(p6_bsend => p2p_p6_bsend_local_completion_and_buffer_freed_sim, p2p_p6_bsend_local_completion_and_buffer_freed_threads);

/// P6: a bsend that does not fit ends the run with `BufferOverflow` naming requested (message
/// plus overhead), attached and used bytes, whether the program handles the error or not
/// (`timing.md` §3: a real run aborts there). Rank 0's program here even ignores the error and
/// goes on to wait for a message that never comes: the run still ends with the overflow.
fn p6_overflow_ends_the_run(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        const LEN: usize = 100;
        if world.rank() == 0 {
            world.buffer_attach(LEN + BSEND_OVERHEAD)?;
            world.bsend(&bytes(6, LEN), 1, 1).await?;
            let _ignored = world.ibsend(&[1u8], 1, 9);
            world.recv(&mut [0u8], 1, 5).await?;
        } else {
            world.recv(&mut [0u8; LEN], 0, 1).await?;
            world.recv(&mut [0u8], 0, 9).await?;
        }
        Ok(())
    });
    match err {
        Error::BufferOverflow {
            requested,
            attached,
            used,
            site,
        } => {
            let full = 100 + BSEND_OVERHEAD;
            assert_eq!(
                (requested, attached, used),
                (1 + BSEND_OVERHEAD, full, full)
            );
            assert_eq!(
                (site.rank, site.peer, site.tag),
                (0, Some(Source::Rank(1)), Some(Tag::Value(9)))
            );
        }
        other => panic!("expected BufferOverflow, got {other}"),
    }
    // With no buffer attached at all: attached 0, used 0.
    let err = run_err(launcher(1, backend), |world: Comm| async move {
        world.bsend(&[1u8], 0, 9).await?;
        Ok(())
    });
    assert!(
        matches!(
            err,
            Error::BufferOverflow {
                attached: 0,
                used: 0,
                ..
            }
        ),
        "{err}"
    );
}
on_both!(p6_overflow_ends_the_run => p2p_p6_bsend_overflow_ends_the_run_sim, p2p_p6_bsend_overflow_ends_the_run_threads);

/// P7: `buffer_detach` returns only after the buffered message was delivered. Rank 1 posts its
/// receive only after a message rank 0 sends after the bsend, and raises a flag just before
/// posting: when detach returns the flag must be up (delivery needs the receive). Under sim
/// (`timing.md` worked-examples model) detach returns at exactly the ack's arrival (S8):
/// message G arrives at 1000, rank 1 computes 5000 and posts at 6000, the ack of the bsend
/// leaves at 6000 and arrives at 6000 + 200.
fn p7_detach_waits_for_delivery(backend: Backend) {
    let posting = Arc::new(AtomicBool::new(false));
    let model = Model::worked_examples();
    let ack_at = model.bsend.delay(1) + 5_000 + model.ack_latency_ns;
    let l = launcher(2, backend).model(model);
    run_ok(l, move |world: Comm| {
        let posting = Arc::clone(&posting);
        async move {
            if world.rank() == 0 {
                world.buffer_attach(1024)?;
                world.bsend(&bytes(3, 32), 1, 1).await?;
                assert!(
                    !posting.load(Ordering::SeqCst),
                    "rank 1 posts only after tag 2"
                );
                world.send(&[0u8], 1, 2).await?;
                assert_eq!(world.buffer_detach().await?, 1024);
                assert!(
                    posting.load(Ordering::SeqCst),
                    "buffer_detach returned before the receiver posted the receive"
                );
                if backend == Backend::Sim {
                    assert_eq!(world.now_ns(), ack_at, "detach ends at the ack's arrival");
                }
            } else {
                world.recv(&mut [0u8], 0, 2).await?;
                world.compute(Duration::from_nanos(5_000)).await;
                posting.store(true, Ordering::SeqCst);
                let mut got = [0u8; 32];
                assert_status(&world.recv(&mut got, 0, 1).await?, 0, 1, 32);
                assert_eq!(got[..], bytes(3, 32)[..]);
            }
            Ok(())
        }
    });
}
on_both!(p7_detach_waits_for_delivery => p2p_p7_buffer_detach_returns_after_delivery_sim, p2p_p7_buffer_detach_returns_after_delivery_threads);

/// P8: standard sends of exactly the threshold complete without a posted receive (`isend` +
/// one `test`, and a blocking `send`); one byte more does not (P5's handshake).
fn p8_standard_threshold(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            let mut at = world.isend(&bytes(1, EAGER), 1, 1)?;
            assert!(at.test().await?.is_some(), "{EAGER} B: complete at once");
            world.send(&bytes(2, EAGER), 1, 2).await?; // would deadlock if not eager
            let mut above = world.isend(&bytes(3, EAGER + 1), 1, 3)?;
            for i in 0..POLLS {
                assert!(
                    above.test().await?.is_none(),
                    "{} B complete at test {i} with no receive posted",
                    EAGER + 1
                );
            }
            world.send(&[0u8], 1, 9).await?;
            above.wait().await?;
        } else {
            world.recv(&mut [0u8], 0, 9).await?;
            let mut got = vec![0u8; EAGER + 1];
            for (tag, seed, len) in [(1, 1, EAGER), (2, 2, EAGER), (3, 3, EAGER + 1)] {
                assert_status(&world.recv(&mut got, 0, tag).await?, 0, tag, len);
                assert_eq!(got[..len], bytes(seed, len)[..], "tag {tag}");
            }
        }
        Ok(())
    });
}
on_both!(p8_standard_threshold => p2p_p8_standard_send_eager_threshold_sim, p2p_p8_standard_send_eager_threshold_threads);

/// P9, first half: in strict mode, `rsend` and `irsend` to posted receives deliver.
fn p9_rsend_posted(backend: Backend) {
    run_ok(
        launcher(2, backend).strict(true),
        |world: Comm| async move {
            if world.rank() == 1 {
                let (mut a, mut b) = ([0u8; 8], [0u8; 70_000]);
                let ra = world.irecv(&mut a, 0, 6)?;
                let rb = world.irecv(&mut b, 0, 7)?;
                world.send(&[0u8], 0, 9).await?; // "posted"
                assert_status(&ra.wait().await?, 0, 6, 8);
                assert_status(&rb.wait().await?, 0, 7, 70_000);
                assert!(a == [6; 8] && b[..] == bytes(7, 70_000)[..]);
            } else {
                world.recv(&mut [0u8], 1, 9).await?;
                world.rsend(&[6u8; 8], 1, 6).await?;
                world.irsend(&bytes(7, 70_000), 1, 7)?.wait().await?;
            }
            Ok(())
        },
    );
}
on_both!(p9_rsend_posted => p2p_p9_rsend_with_posted_receive_delivers_sim, p2p_p9_rsend_with_posted_receive_delivers_threads);

/// Rank 0 `irsend`s tag 6 before rank 1 posts it (rank 1 posts after tag 9, sent after the
/// rsend), then waits.
async fn late_ready_receiver(world: Comm) -> Result<()> {
    if world.rank() == 0 {
        let r = world.irsend(&[6u8; 8], 1, 6)?;
        world.send(&[0u8], 1, 9).await?;
        r.wait().await?;
    } else {
        world.recv(&mut [0u8], 0, 9).await?;
        let mut got = [0u8; 8];
        assert_status(&world.recv(&mut got, 0, 6).await?, 0, 6, 8);
        assert_eq!(got, [6; 8]);
    }
    Ok(())
}

/// P9, second half: strict mode ends the run with `ReadyNotPosted` naming the sender's call,
/// peer, tag and the receiver; without strict mode the same program behaves as `ssend`.
fn p9_strict_ready_not_posted(backend: Backend) {
    let err = run_err(launcher(2, backend).strict(true), late_ready_receiver);
    match &err {
        Error::ReadyNotPosted { site, receiver } => {
            assert_eq!(*receiver, 1, "{err}");
            assert_eq!(
                (site.rank, site.call, site.peer, site.tag),
                (0, "rsend", Some(Source::Rank(1)), Some(Tag::Value(6))),
                "{err}"
            );
        }
        other => panic!("expected ReadyNotPosted, got {other}"),
    }
    run_ok(launcher(2, backend).strict(false), late_ready_receiver);
}
on_both!(p9_strict_ready_not_posted => p2p_p9_strict_rsend_without_receive_is_ready_not_posted_sim, p2p_p9_strict_rsend_without_receive_is_ready_not_posted_threads);

// ---------------------------------------------------------------------------------------------
// P10 truncation, P11 zero bytes
// ---------------------------------------------------------------------------------------------

/// P10: in every mode (standard eager and rendezvous, synchronous, buffered, ready) a message
/// longer than the buffer gives `Truncate` with both sizes, writes the first `len` bytes only,
/// is consumed (the next receive gets the next message), and the sender completes normally.
fn p10_truncation(backend: Backend) {
    run_ok(
        launcher(2, backend).strict(true),
        |world: Comm| async move {
            const BUF: usize = 4;
            let cases: [(&str, usize); 5] = [
                ("send", 10),
                ("send", EAGER + 10),
                ("ssend", 10),
                ("bsend", 10),
                ("rsend", 10),
            ];
            if world.rank() == 0 {
                world.buffer_attach(10 + BSEND_OVERHEAD)?;
                for (i, &(mode, len)) in cases.iter().enumerate() {
                    let tag = i as i32;
                    let data = bytes(tag as u8, len);
                    match mode {
                        "send" => world.send(&data, 1, tag).await?,
                        "ssend" => world.ssend(&data, 1, tag).await?,
                        "bsend" => world.bsend(&data, 1, tag).await?,
                        _ => {
                            world.recv(&mut [0u8], 1, 99).await?; // rank 1 posted
                            world.rsend(&data, 1, tag).await?;
                        }
                    }
                    world.send(&[tag as u8; 3], 1, tag).await?;
                }
                assert_eq!(world.buffer_detach().await?, 10 + BSEND_OVERHEAD);
            } else {
                for (i, &(mode, len)) in cases.iter().enumerate() {
                    let tag = i as i32;
                    let mut small = [0xEEu8; BUF];
                    let r = world.irecv(&mut small, 0, tag)?;
                    if mode == "rsend" {
                        world.send(&[0u8], 0, 99).await?;
                    }
                    match r.wait().await {
                        Err(Error::Truncate {
                            message_bytes,
                            buffer_bytes,
                            ref site,
                        }) => {
                            assert_eq!((message_bytes, buffer_bytes), (len, BUF), "{mode} {len}");
                            assert_eq!(site.rank, 1);
                        }
                        other => panic!("{mode} of {len} B into {BUF} B: {other:?}"),
                    }
                    assert_eq!(small[..], bytes(tag as u8, len)[..BUF], "{mode} {len}");
                    let mut next = [0xEEu8; BUF];
                    let s = world.recv(&mut next, 0, tag).await?;
                    assert_status(&s, 0, tag, 3);
                    assert_eq!(
                        next,
                        [tag as u8, tag as u8, tag as u8, 0xEE],
                        "{mode} {len}"
                    );
                }
            }
            Ok(())
        },
    );
}
on_both!(p10_truncation => p2p_p10_truncation_error_sizes_prefix_consumed_sim, p2p_p10_truncation_error_sizes_prefix_consumed_threads);

/// P11: zero-byte messages in every mode, blocking and nonblocking, into empty and non-empty
/// buffers: status bytes 0, count 0, buffers untouched.
fn p11_zero_bytes(backend: Backend) {
    run_ok(
        launcher(2, backend).strict(true),
        |world: Comm| async move {
            let empty: [u64; 0] = [];
            if world.rank() == 0 {
                world.buffer_attach(2 * BSEND_OVERHEAD)?;
                world.send(&empty, 1, 0).await?;
                world.ssend(&empty, 1, 1).await?;
                world.bsend(&empty, 1, 2).await?;
                world.recv(&mut [0u8], 1, 99).await?; // rank 1 posted tags 3 and 7
                world.rsend(&empty, 1, 3).await?;
                let mut reqs = [
                    world.irsend(&empty, 1, 7)?,
                    world.isend(&empty, 1, 4)?,
                    world.issend(&empty, 1, 5)?,
                    world.ibsend(&empty, 1, 6)?,
                    world.start_send(mpsim::SendMode::Synchronous, &empty, 1, 8)?,
                ];
                wait_all(&mut reqs).await?;
                assert_eq!(world.buffer_detach().await?, 2 * BSEND_OVERHEAD);
            } else {
                let (mut r3, mut r7) = ([0xEEu8; 4], [0u64; 0]);
                let ready3 = world.irecv(&mut r3, 0, 3)?;
                let ready7 = world.irecv(&mut r7, 0, 7)?;
                world.send(&[0u8], 0, 99).await?;
                let check = |s: Status, tag: i32| {
                    assert_status(&s, 0, tag, 0);
                    assert_eq!((s.count::<u64>(), s.count::<u8>()), (Some(0), Some(0)));
                };
                for tag in [0, 1, 2] {
                    let mut buf = [0xEEu8; 4];
                    check(world.recv(&mut buf, 0, tag).await?, tag);
                    assert_eq!(buf, [0xEE; 4], "tag {tag}");
                }
                check(ready3.wait().await?, 3);
                check(ready7.wait().await?, 7);
                assert_eq!(r3, [0xEE; 4]);
                for tag in [4, 5, 6, 8] {
                    let mut nothing: [u32; 0] = [];
                    check(world.recv(&mut nothing, 0, tag).await?, tag);
                }
            }
            Ok(())
        },
    );
}
on_both!(p11_zero_bytes => p2p_p11_zero_byte_messages_in_every_mode_sim, p2p_p11_zero_byte_messages_in_every_mode_threads);

// ---------------------------------------------------------------------------------------------
// P12 PROC_NULL, P13 probe
// ---------------------------------------------------------------------------------------------

/// P12: sends to `PROC_NULL` in every mode complete at once (no buffer needed for bsend);
/// receives and probes from it complete at once with source `PROC_NULL`, tag `Status::NO_TAG`
/// (MPI's `MPI_ANY_TAG` in a status), 0 B.
fn p12_proc_null(backend: Backend) {
    run_ok(launcher(1, backend), |world: Comm| async move {
        world.send(&[1u8], PROC_NULL, 0).await?;
        world.ssend(&[1u8], PROC_NULL, 0).await?;
        world.bsend(&[1u8; 1000], PROC_NULL, 0).await?;
        world.rsend(&[1u8], PROC_NULL, 0).await?;
        let mut r = world.issend(&[1u8], PROC_NULL, 0)?;
        assert!(r.test().await?.is_some());
        let null_status = |s: Status| {
            assert_eq!(
                (s.source, s.tag, s.bytes),
                (PROC_NULL, Status::NO_TAG, 0),
                "{s:?}"
            );
        };
        let mut buf = [5u8; 4];
        null_status(world.recv(&mut buf, PROC_NULL, 3).await?);
        null_status(world.irecv(&mut buf, PROC_NULL, Tag::Any)?.wait().await?);
        assert_eq!(buf, [5; 4]);
        null_status(world.probe(PROC_NULL, Tag::Any).await?);
        null_status(world.iprobe(PROC_NULL, 0).await?.expect("at once"));
        Ok(())
    });
}
on_both!(p12_proc_null => p2p_p12_proc_null_send_receive_probe_sim, p2p_p12_proc_null_send_receive_probe_threads);

/// P13: rank 0 `probe`s `(ANY, ANY)` and receives exactly what the status names (source,
/// tag, size), twice; `iprobe` for a message nobody sends returns `None`, and after all is
/// received `iprobe(ANY, ANY)` returns `None`.
fn p13_probe(backend: Backend) {
    run_ok(launcher(3, backend), |world: Comm| async move {
        let me = world.rank();
        if me != 0 {
            // Rank r sends r * 10 bytes, tag 30 + r.
            let len = me as usize * 10;
            world.send(&bytes(me as u8, len), 0, 30 + me as i32).await?;
            return Ok(());
        }
        assert_eq!(world.iprobe(1, 99).await?, None, "nobody sends tag 99");
        let mut seen = Vec::new();
        for _ in 0..2 {
            let p = world.probe(Source::Any, Tag::Any).await?;
            assert_eq!(p.tag, 30 + p.source as i32, "{p:?}");
            assert_eq!(p.bytes, p.source as usize * 10, "{p:?}");
            // Probing again gives the same message (probe does not take it).
            assert_eq!(world.iprobe(p.source, p.tag).await?, Some(p));
            let mut buf = vec![0u8; 64];
            let s = world.recv(&mut buf, p.source, p.tag).await?;
            assert_eq!(s, p, "recv got the probed message");
            assert_eq!(buf[..s.bytes], bytes(s.source as u8, s.bytes)[..]);
            seen.push(s.source);
        }
        seen.sort_unstable();
        assert_eq!(seen, [1, 2]);
        assert_eq!(world.iprobe(Source::Any, Tag::Any).await?, None);
        Ok(())
    });
}
on_both!(p13_probe => p2p_p13_probe_then_recv_gets_probed_message_sim, p2p_p13_probe_then_recv_gets_probed_message_threads);

/// P14: rank 0 takes rank 1's message with `mprobe`; a wildcard receive posted afterwards does
/// not get it (it gets the next message), and `mrecv` receives exactly the probed one.
/// `PROC_NULL`'s matched probe gives the no-proc message.
fn p14_mprobe(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 1 {
            world.ssend(&bytes(1, 12), 0, 40).await?;
            world.ssend(&bytes(2, 20), 0, 41).await?;
            return Ok(());
        }
        assert!(world.improbe(1, 99).await?.is_none(), "nobody sends tag 99");
        let message = world.mprobe(1, 40).await?;
        assert_eq!((message.status().tag, message.status().bytes), (40, 12));
        // A wildcard receive cannot steal the probed message.
        let mut other = vec![0u8; 64];
        let s = world.recv(&mut other, Source::Any, Tag::Any).await?;
        assert_eq!(
            (s.tag, s.bytes),
            (41, 20),
            "the wildcard got the next message"
        );
        assert_eq!(other[..20], bytes(2, 20)[..]);
        let mut buf = vec![0u8; 64];
        let s = message.mrecv(&mut buf).await?;
        assert_eq!((s.source, s.tag, s.bytes), (1, 40, 12));
        assert_eq!(buf[..12], bytes(1, 12)[..]);
        let none = world.mprobe(PROC_NULL, Tag::Any).await?;
        assert_eq!(none.mrecv(&mut buf).await?.source, PROC_NULL);
        Ok(())
    });
}
on_both!(p14_mprobe => p2p_p14_mprobe_not_stolen_by_wildcard_sim, p2p_p14_mprobe_not_stolen_by_wildcard_threads);

// ---------------------------------------------------------------------------------------------
// P15, P16 cancel
// ---------------------------------------------------------------------------------------------

/// P15: rank 1 posts three receives for `(0, 2)`, cancels the first (then `wait`) and the
/// second (then `test`): both report `cancelled`, their buffers untouched; the message rank 0
/// sends afterwards goes to the third receive.
fn p15_cancel_receive(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.recv(&mut [0u8], 1, 8).await?; // rank 1 cancelled
            world.send(&[42u32], 1, 2).await?;
            return Ok(());
        }
        let (mut a, mut b, mut c) = ([7u32], [7u32], [7u32]);
        let mut ra = world.irecv(&mut a, 0, 2)?;
        let mut rb = world.irecv(&mut b, 0, 2)?;
        let rc = world.irecv(&mut c, 0, 2)?;
        ra.cancel()?;
        let sa = ra.wait().await?;
        assert!(sa.cancelled, "{sa:?}");
        rb.cancel()?;
        let sb = rb.test().await?.expect("a cancelled receive is complete");
        assert!(sb.cancelled, "{sb:?}");
        world.send(&[0u8], 0, 8).await?;
        assert_status(&rc.wait().await?, 0, 2, 4);
        drop(rb);
        assert_eq!((a, b, c), ([7], [7], [42]));
        Ok(())
    });
}
on_both!(p15_cancel_receive => p2p_p15_cancel_pending_receive_sim, p2p_p15_cancel_pending_receive_threads);

/// P16: cancelling an unmatched send (synchronous, eager standard, rendezvous standard,
/// buffered) succeeds: `wait` reports `cancelled`, the receiver never sees the message, the
/// bsend's bytes are freed (the whole buffer fits again). Cancelling a matched send (the
/// receive was posted first) fails: `wait` returns a status that is not cancelled and the
/// receiver gets the data.
fn p16_cancel_send(backend: Backend) {
    use mpsim::SendMode::{Buffered, Standard, Synchronous};
    run_ok(launcher(2, backend), |world: Comm| async move {
        const ATTACHED: usize = 100 + BSEND_OVERHEAD;
        if world.rank() == 0 {
            world.buffer_attach(ATTACHED)?;
            // Unmatched: rank 1 posts nothing for tag 1.
            for (mode, len) in [
                (Synchronous, 16),
                (Standard, 16),
                (Standard, EAGER + 1),
                (Buffered, 100),
            ] {
                let mut r = world.start_send(mode, &bytes(1, len), 1, 1)?;
                r.cancel()?;
                let s = r.wait().await?;
                assert!(
                    s.cancelled,
                    "unmatched {mode:?} of {len} B not cancelled: {s:?}"
                );
            }
            // The cancelled bsend's bytes are free: the whole buffer fits again.
            world.ibsend(&bytes(2, 100), 1, 5)?.wait().await?;
            world.send(&[0u8], 1, 9).await?; // "cancels done"
            // Rank 1 took tag 5 (buffer free again) and posted tags 3, 4, 6.
            world.recv(&mut [0u8], 1, 10).await?;
            for (mode, tag) in [(Synchronous, 3), (Standard, 4), (Buffered, 6)] {
                let mut r = world.start_send(mode, &bytes(tag as u8, 16), 1, tag)?;
                r.cancel()?;
                let s = r.wait().await?;
                assert!(!s.cancelled, "matched {mode:?} was cancelled: {s:?}");
            }
            assert_eq!(world.buffer_detach().await?, ATTACHED);
        } else {
            world.recv(&mut [0u8], 0, 9).await?;
            assert_eq!(
                world.iprobe(0, 1).await?,
                None,
                "a cancelled send reached the receiver"
            );
            let mut got = [0u8; 100];
            assert_status(&world.recv(&mut got, 0, 5).await?, 0, 5, 100);
            assert_eq!(got[..], bytes(2, 100)[..]);
            let (mut a, mut b, mut c) = ([0u8; 16], [0u8; 16], [0u8; 16]);
            let ra = world.irecv(&mut a, 0, 3)?;
            let rb = world.irecv(&mut b, 0, 4)?;
            let rc = world.irecv(&mut c, 0, 6)?;
            world.send(&[0u8], 0, 10).await?;
            assert_status(&ra.wait().await?, 0, 3, 16);
            assert_status(&rb.wait().await?, 0, 4, 16);
            assert_status(&rc.wait().await?, 0, 6, 16);
            assert_eq!(
                (a.to_vec(), b.to_vec(), c.to_vec()),
                (bytes(3, 16), bytes(4, 16), bytes(6, 16))
            );
            assert_eq!(world.iprobe(Source::Any, Tag::Any).await?, None);
        }
        Ok(())
    });
}
on_both!(p16_cancel_send => p2p_p16_cancel_unmatched_send_succeeds_matched_fails_sim, p2p_p16_cancel_unmatched_send_succeeds_matched_fails_threads);

// ---------------------------------------------------------------------------------------------
// P17 wait/test families
// ---------------------------------------------------------------------------------------------

/// P17: `test_all`, `test_some`, `test_any`, `wait_any`, `wait_some` on mixes of complete
/// (an eager send; receives whose messages arrived), pending (receives whose message rank 1
/// sends only after a "go") and null (`PROC_NULL`, already completed) requests.
fn p17_wait_test_families(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 1 {
            let mut x = [0u32];
            world.recv(&mut x, 0, 5).await?; // rank 0's eager isend
            world.recv(&mut x, 0, 0).await?; // go
            world.send(&[1u32], 0, 1).await?;
            for tag in [2, 3, 7, 6] {
                world.send(&[tag as u32], 0, tag).await?;
            }
            world.recv(&mut x, 0, 8).await?; // go 2
            world.send(&[4u32], 0, 4).await?;
            return Ok(());
        }
        let indices = |done: &[(usize, Status)]| -> Vec<(usize, i32)> {
            done.iter().map(|(i, s)| (*i, s.tag)).collect()
        };

        // Phase 1: null, pending, complete, null.
        let (mut got, mut untouched) = ([0u32], [9u32]);
        let mut reqs = [
            world.isend(&[0u32], PROC_NULL, 0)?,
            world.irecv(&mut got, 1, 1)?,
            world.isend(&[5u32], 1, 5)?,
            world.irecv(&mut untouched, PROC_NULL, 0)?,
        ];
        assert!(reqs[0].is_null() && reqs[3].is_null(), "PROC_NULL requests");
        assert_eq!(test_all(&mut reqs).await?, None, "index 1 is pending");
        assert!(
            !reqs[1].is_null() && !reqs[2].is_null(),
            "a test_all that fails completes nothing"
        );
        assert_eq!(
            indices(&test_some(&mut reqs).await?.expect("active")),
            [(2, 0)]
        );
        assert!(reqs[2].is_null(), "test_some completed the eager send");
        assert_eq!(test_any(&mut reqs).await?, TestAny::Pending);
        assert_eq!(test_some(&mut reqs).await?, Some(vec![]));
        world.send(&[0u32], 1, 0).await?; // go
        let (i, s) = wait_any(&mut reqs).await?.expect("index 1 is active");
        assert_eq!(i, 1);
        assert_status(&s, 1, 1, 4);
        assert_eq!(wait_any(&mut reqs).await?, None, "no active request");
        assert!(wait_some(&mut reqs).await?.is_empty());
        assert_eq!(test_any(&mut reqs).await?, TestAny::NoneActive);
        assert_eq!(test_some(&mut reqs).await?, None, "none active");
        let all = test_all(&mut reqs)
            .await?
            .expect("no active request: all complete");
        assert_eq!(all.len(), 4);
        assert_eq!((all[3].source, all[3].tag), (PROC_NULL, Status::NO_TAG));
        drop(reqs);
        assert_eq!((got, untouched), ([1], [9]));

        // Phase 2: complete (tags 2, 3, 7 arrived before tag 6), pending (4), null.
        let (mut a, mut b, mut c, mut d, mut e) = ([0u32], [0u32], [0u32], [0u32], [9u32]);
        let mut reqs: [Request<'_>; 5] = [
            world.irecv(&mut a, 1, 2)?,
            world.irecv(&mut b, 1, 3)?,
            world.irecv(&mut c, 1, 7)?,
            world.irecv(&mut d, 1, 4)?,
            world.irecv(&mut e, PROC_NULL, 0)?,
        ];
        world.recv(&mut [0u32], 1, 6).await?;
        let (i, s) = wait_any(&mut reqs).await?.expect("three complete");
        assert_eq!(
            (i, s.tag),
            (0, 2),
            "wait_any takes the lowest complete index"
        );
        assert_eq!(indices(&wait_some(&mut reqs).await?), [(1, 3), (2, 7)]);
        assert_eq!(test_all(&mut reqs).await?, None, "index 3 is pending");
        assert_eq!(test_some(&mut reqs).await?, Some(vec![]));
        assert_eq!(test_any(&mut reqs).await?, TestAny::Pending);
        world.send(&[0u32], 1, 8).await?; // go 2
        assert_eq!(indices(&wait_some(&mut reqs).await?), [(3, 4)]);
        assert_eq!(wait_any(&mut reqs).await?, None);
        drop(reqs);
        assert_eq!((a, b, c, d, e), ([2], [3], [7], [4], [9]));
        Ok(())
    });
}
on_both!(p17_wait_test_families => p2p_p17_wait_and_test_families_on_mixed_requests_sim, p2p_p17_wait_and_test_families_on_mixed_requests_threads);

// ---------------------------------------------------------------------------------------------
// P19 sendrecv
// ---------------------------------------------------------------------------------------------

/// P19: `sendrecv` ring shift right of 320 KB per rank (rendezvous on every link: a blocking
/// send ring would deadlock), a wildcard shift left, and a `sendrecv_replace` shift left.
fn p19_sendrecv(backend: Backend) {
    run_ok(launcher(4, backend), |world: Comm| async move {
        const LEN: usize = 40_000; // u64s: 320,000 bytes
        let (me, n) = (world.rank(), world.size());
        let (left, right) = ((me + n - 1) % n, (me + 1) % n);
        let tagged =
            |r: u32| -> Vec<u64> { (0..LEN as u64).map(|i| i ^ (u64::from(r) << 40)).collect() };
        let mut got = vec![0u64; LEN];
        let s = world
            .sendrecv(&tagged(me), right, 1, &mut got, left, 1)
            .await?;
        assert_status(&s, left, 1, LEN * 8);
        assert!(got == tagged(left), "rank {me}: shift right");

        let mut one = [0u64];
        let s = world
            .sendrecv(
                &[u64::from(me) + 100],
                left,
                2,
                &mut one,
                Source::Any,
                Tag::Any,
            )
            .await?;
        assert_status(&s, right, 2, 8);
        assert_eq!(one, [u64::from(right) + 100]);

        let mut buf = tagged(me);
        let s = world.sendrecv_replace(&mut buf, left, 3, right, 3).await?;
        assert_status(&s, right, 3, LEN * 8);
        assert!(buf == tagged(right), "rank {me}: replace");
        Ok(())
    });
}
on_both!(p19_sendrecv => p2p_p19_sendrecv_ring_shift_and_replace_sim, p2p_p19_sendrecv_ring_shift_and_replace_threads);

// ---------------------------------------------------------------------------------------------
// P22 errors
// ---------------------------------------------------------------------------------------------

/// P22: invalid rank (send and receive), negative tag (`-1`, MPI's `MPI_ANY_TAG`, included: a
/// send with `ANY_TAG` does not compile), and a freed communicator give typed errors that the
/// program can catch.
fn p22_errors(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        let e = world.send(&[1u8], 2, 0).await.expect_err("rank 2 of 2");
        assert!(
            matches!(
                e,
                Error::InvalidRank {
                    rank: 2,
                    size: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = world.recv(&mut [0u8], 5, 0).await.expect_err("rank 5 of 2");
        assert!(
            matches!(
                e,
                Error::InvalidRank {
                    rank: 5,
                    size: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = world.send(&[1u8], 1, -1).await.expect_err("tag -1");
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
        let e = world.isend(&[1u8], 1, -5).expect_err("negative tag");
        assert!(
            matches!(
                e,
                Error::InvalidTag {
                    tag: Tag::Value(-5),
                    ..
                }
            ),
            "{e}"
        );
        let e = world
            .recv(&mut [0u8], 0, -5)
            .await
            .expect_err("negative tag");
        assert!(
            matches!(
                e,
                Error::InvalidTag {
                    tag: Tag::Value(-5),
                    ..
                }
            ),
            "{e}"
        );
        let mut twin = world.dup()?;
        let clone = twin.clone();
        twin.free()?;
        let e = clone.send(&[1u8], 0, 0).await.expect_err("freed");
        assert!(matches!(e, Error::InvalidComm { .. }), "{e}");
        let e = clone.iprobe(0, 0).await.expect_err("freed");
        assert!(matches!(e, Error::InvalidComm { .. }), "{e}");
        // Nothing was sent: the world is still clean and usable.
        let peer = 1 - world.rank();
        let mut x = [0u8];
        world.sendrecv(&[7u8], peer, 0, &mut x, peer, 0).await?;
        assert_eq!(x, [7]);
        assert_eq!(world.iprobe(Source::Any, Tag::Any).await?, None);
        Ok(())
    });
}
on_both!(p22_errors => p2p_p22_invalid_rank_tag_and_freed_comm_are_typed_errors_sim, p2p_p22_invalid_rank_tag_and_freed_comm_are_typed_errors_threads);

/// A blocking call's future dropped before it completes (a `select`-style program) lets go
/// of what it posted, as a dropped `Request` does (`docs/p2p.md` §4 "Memory safety"): a
/// receive is withdrawn, so the message goes to the next receive; a synchronous send goes on
/// and completes when it is received. Blocking calls post when called, so even a future that
/// was never polled has posted, and dropping it must withdraw the receive.
fn memory_safety_dropped_blocking_futures(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            let mut unused = [0u8; 4];
            drop(world.recv(&mut unused, 1, 3)); // posted, never polled, withdrawn
            drop(world.ssend(&[7u8, 7], 1, 4)); // posted, never polled: goes on
            world.send(&[1u8], 1, 5).await?; // "rank 0 is done dropping"
            let mut got = [0u8; 4];
            let status = world.recv(&mut got, 1, 3).await?;
            assert_eq!(
                (status.bytes, got[0]),
                (1, 42),
                "the message went to the live receive"
            );
            assert_eq!(
                unused, [0; 4],
                "a withdrawn receive never writes its buffer"
            );
        } else {
            let mut go = [0u8];
            world.recv(&mut go, 0, 5).await?;
            world.send(&[42u8], 0, 3).await?;
            let mut two = [0u8; 2];
            let status = world.recv(&mut two, 0, 4).await?;
            assert_eq!(
                (status.bytes, two),
                (2, [7, 7]),
                "the dropped ssend still arrived"
            );
        }
        Ok(())
    });
}

on_both!(memory_safety_dropped_blocking_futures => p2p_memory_safety_dropped_blocking_futures_let_go_sim, p2p_memory_safety_dropped_blocking_futures_let_go_threads);

// ---------------------------------------------------------------------------------------------
// P23 pending at exit, P24 failing rank, P25 deadlock
// ---------------------------------------------------------------------------------------------

/// P23: a receive and an `issend` left active at the end of rank 0: `PendingAtExit` naming
/// rank 0 and each request (call, peer, tag).
fn p23_pending_at_exit(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            let mut buf = [0u8; 4];
            std::mem::forget(world.irecv(&mut buf, 1, 9)?);
            std::mem::forget(world.issend(&[1u8], 1, 4)?);
        }
        Ok(())
    });
    match err {
        Error::PendingAtExit {
            rank: 0,
            mut requests,
            ..
        } => {
            requests.sort_by_key(|r| r.call);
            let named: Vec<_> = requests.iter().map(|r| (r.call, r.peer, r.tag)).collect();
            assert_eq!(
                named,
                [
                    ("irecv", Source::Rank(1), Tag::Value(9)),
                    ("issend", Source::Rank(1), Tag::Value(4)),
                ]
            );
        }
        other => panic!("expected PendingAtExit of rank 0, got {other}"),
    }
}
on_both!(p23_pending_at_exit => p2p_p23_request_active_at_end_is_pending_at_exit_sim, p2p_p23_request_active_at_end_is_pending_at_exit_threads);

/// P24: rank 2 returns an error while ranks 0 and 1 wait for it: the run ends with that error.
fn p24_error_ends_run(backend: Backend) {
    let err = run_err(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 2 {
            return world.send(&[1u8], 7, 0).await; // InvalidRank
        }
        world.recv(&mut [0u8], 2, 0).await?;
        Ok(())
    });
    match &err {
        Error::InvalidRank {
            site,
            rank: 7,
            size: 3,
        } => assert_eq!((site.rank, site.call), (2, "send"), "{err}"),
        other => panic!("expected rank 2's InvalidRank, got {other}"),
    }
}
on_both!(p24_error_ends_run => p2p_p24_a_rank_returning_an_error_ends_the_run_sim, p2p_p24_a_rank_returning_an_error_ends_the_run_threads);

/// P24: rank 2 panics while ranks 0 and 1 wait for it: the run ends with an error naming the
/// panic (a panic escaping `Launcher::run` is a failure).
fn p24_panic_ends_run(backend: Backend) {
    let ended = run_bounded(launcher(3, backend), |world: Comm| async move {
        if world.rank() == 2 {
            panic!("rank 2 gives up");
        }
        world.recv(&mut [0u8], 2, 0).await?;
        Ok(())
    });
    match ended {
        Ended::Returned(Err(e)) => assert!(e.to_string().contains("rank 2 gives up"), "{e}"),
        Ended::Returned(Ok(())) => panic!("the run succeeded although rank 2 panicked"),
        Ended::Panicked(p) => panic!(
            "rank 2's panic escaped Launcher::run instead of ending the run with an error: {p}"
        ),
    }
}
on_both!(p24_panic_ends_run => p2p_p24_a_panicking_rank_ends_the_run_sim, p2p_p24_a_panicking_rank_ends_the_run_threads);

/// P25: head-to-head `ssend`: `Deadlock` naming both ranks, their call and peer, and the cycle.
fn p25_deadlock(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let peer = 1 - world.rank();
        world.ssend(&[1u8], peer, 0).await?;
        world.recv(&mut [0u8], peer, 0).await?;
        Ok(())
    });
    assert_deadlock_report(
        &err,
        &[
            "rank 0 blocked in ssend",
            "rank 1 blocked in ssend",
            "(peer 1, tag 0",
            "(peer 0, tag 0",
            "cycle 0 → 1 → 0",
        ],
    );
}

/// `err` is a `Deadlock` whose report contains every one of `needles`.
#[track_caller]
fn assert_deadlock_report(err: &Error, needles: &[&str]) {
    let Error::Deadlock { report } = err else {
        panic!("expected Deadlock, got {err}");
    };
    let report = report.to_string();
    for needle in needles {
        assert!(report.contains(needle), "no {needle:?} in: {report}");
    }
}
on_both!(p25_deadlock => p2p_p25_head_to_head_ssend_is_a_deadlock_sim, p2p_p25_head_to_head_ssend_is_a_deadlock_threads);

/// P25 and §8 for the blocking probes, which hold no request: head-to-head `probe` and
/// `mprobe` name each rank's call, peer and tag, and the cycle, as a receive's deadlock does
/// (the peer a world rank: here on a communicator whose ranks are the world's reversed).
fn p25_probe_deadlock(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        let key = i64::from(world.size() - world.rank());
        let reversed = world.split(Some(0), key).await?.expect("in color 0");
        let peer = 1 - reversed.rank();
        if world.rank() == 0 {
            reversed.probe(peer, 3).await?;
        } else {
            drop(reversed.mprobe(peer, 4).await?);
        }
        Ok(())
    });
    assert_deadlock_report(
        &err,
        &[
            "rank 0 blocked in probe",
            "probe (peer 1, tag 3, context",
            "rank 1 blocked in mprobe",
            "mprobe (peer 0, tag 4, context",
            "cycle 0 → 1 → 0",
        ],
    );
}
on_both!(p25_probe_deadlock => p2p_p25_head_to_head_probe_is_a_deadlock_naming_peer_and_tag_sim, p2p_p25_head_to_head_probe_is_a_deadlock_naming_peer_and_tag_threads);

/// P25 for `buffer_detach`, which holds no request: it waits for its buffered messages to be
/// received, so the report names the first of them (peer and tag), and the cycle through the
/// rank that does not receive it.
fn p25_detach_deadlock(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.buffer_attach(4096)?;
            world.bsend(&[1u8; 64], 1, 5).await?;
            world.buffer_detach().await?;
        } else {
            world.recv(&mut [0u8; 64], 0, 6).await?;
        }
        Ok(())
    });
    assert_deadlock_report(
        &err,
        &[
            "rank 0 blocked in buffer_detach",
            "bsend (peer 1, tag 5, context 0)",
            "rank 1 blocked in recv",
            "cycle 0 → 1 → 0",
        ],
    );
}
on_both!(p25_detach_deadlock => p2p_p25_detach_waiting_for_an_unreceived_bsend_names_it_sim, p2p_p25_detach_waiting_for_an_unreceived_bsend_names_it_threads);

/// P25 for a communicator call: a `split` that only rank 0 makes waits for rank 1's part, and
/// the report names it by the call and peer, not by the library's own tag and context.
fn p25_split_deadlock(backend: Backend) {
    let err = run_err(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.split(Some(0), 0).await?;
        }
        Ok(())
    });
    assert_deadlock_report(
        &err,
        &[
            "rank 0 blocked in comm_split",
            "comm_split (peer 1), and rank 1 has finished",
            "; comm_split is collective: MPI requires every member of a communicator to make \
             its collective calls on it, in the same order",
        ],
    );
    assert!(!err.to_string().contains("tag"), "{err}");
    let report = err.deadlock().expect("a deadlock");
    assert_eq!(
        report
            .rank(0)
            .map(|b| (b.call, b.waits_for, b.peer_finished)),
        Some(("comm_split", Some(1), true))
    );
}
on_both!(p25_split_deadlock => p2p_p25_split_deadlock_names_the_call_and_peer_sim, p2p_p25_split_deadlock_names_the_call_and_peer_threads);

// ---------------------------------------------------------------------------------------------
// P26 typed buffers, P27 64 MiB, P28 progress
// ---------------------------------------------------------------------------------------------

/// P26: `[u64; 4]` into `[u32; 8]` (count::<u64>() == Some(4)); `[u16; 6]` into bytes
/// (count::<u64>() == None); `f64`s keep their bits.
fn p26_typed_buffers(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u64, 2, 3, u64::MAX], 1, 0).await?;
            world.send(&[1u16, 2, 3, 4, 5, 6], 1, 1).await?;
            world.send(&[1.5f64, -0.0, f64::MIN_POSITIVE], 1, 2).await?;
        } else {
            let mut words = [0u32; 8];
            let s = world.recv(&mut words, 0, 0).await?;
            assert_eq!((s.count::<u64>(), s.count::<u32>()), (Some(4), Some(8)));
            assert_eq!(s.count::<[u8; 3]>(), None);
            let longs: &[u64] = bytemuck::cast_slice(&words);
            assert_eq!(longs, &[1, 2, 3, u64::MAX]);
            let mut raw = [0u8; 16];
            let s = world.recv(&mut raw, 0, 1).await?;
            assert_eq!(
                (s.bytes, s.count::<u16>(), s.count::<u64>()),
                (12, Some(6), None)
            );
            let shorts: &[u16] = bytemuck::cast_slice(&raw[..12]);
            assert_eq!(shorts, &[1, 2, 3, 4, 5, 6]);
            let mut bits = [0u64; 3];
            let s = world.recv(&mut bits, 0, 2).await?;
            assert_eq!(s.count::<f64>(), Some(3));
            assert_eq!(bits, [1.5f64, -0.0, f64::MIN_POSITIVE].map(f64::to_bits));
        }
        Ok(())
    });
}
on_both!(p26_typed_buffers => p2p_p26_typed_buffers_and_count_sim, p2p_p26_typed_buffers_and_count_threads);

/// P27: a 64 MiB message (`u64`s, each distinct) arrives intact.
fn p27_64_mib(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        const BYTES: usize = 64 << 20;
        const N: usize = BYTES / 8;
        let word = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5;
        if world.rank() == 0 {
            let data: Vec<u64> = (0..N).map(word).collect();
            world.send(&data, 1, 0).await?;
        } else {
            let mut got = vec![0u64; N];
            assert_status(&world.recv(&mut got, 0, 0).await?, 0, 0, BYTES);
            let bad = got.iter().enumerate().position(|(i, &x)| x != word(i));
            assert_eq!(bad, None, "first wrong word");
        }
        Ok(())
    });
}
on_both!(p27_64_mib => p2p_p27_64_mib_message_intact_sim, p2p_p27_64_mib_message_intact_threads);

/// P28 (the threads version with a real check is in `p2p_threads.rs`): rank 0 `isend`s 1 MiB,
/// then computes 10 ms; rank 1's blocking receive completes. Under sim the receive ends long
/// before the computation (virtual time), and rank 0's `wait` afterwards costs nothing.
fn p28_progress(backend: Backend) {
    run_ok(launcher(2, backend), move |world: Comm| async move {
        const COMPUTE: Duration = Duration::from_millis(10);
        let compute_ns = COMPUTE.as_nanos() as u64;
        if world.rank() == 0 {
            let r = world.isend(&bytes(3, 1 << 20), 1, 0)?;
            world.compute(COMPUTE).await;
            let t = world.now_ns();
            r.wait().await?;
            if backend == Backend::Sim {
                assert_eq!(t, compute_ns);
                assert_eq!(
                    world.now_ns(),
                    t,
                    "the send completed during the computation"
                );
            }
        } else {
            let mut buf = vec![0u8; 1 << 20];
            assert_status(&world.recv(&mut buf, 0, 0).await?, 0, 0, 1 << 20);
            assert!(buf == bytes(3, 1 << 20));
            if backend == Backend::Sim {
                assert!(
                    world.now_ns() < compute_ns,
                    "receive ended at {} ns, after the sender's computation",
                    world.now_ns()
                );
            }
        }
        Ok(())
    });
}
on_both!(p28_progress => p2p_p28_progress_while_the_sender_computes_sim, p2p_p28_progress_while_the_sender_computes_threads);

/// §5 "either way `wait` returns": cancelling a send whose receiver has already ended. The
/// receiver still answers (MPI_Finalize waits for its peers; the simulator's finished ranks
/// answer too): an unmatched message is withdrawn, one it had received is not. On threads
/// this used to end in a deadlock (nobody answered the cancel).
fn cancel_to_a_finished_receiver(backend: Backend) {
    run_ok(launcher(2, backend), |world: Comm| async move {
        if world.rank() == 1 {
            world.recv(&mut [0u8; 4], 0, 3).await?;
            return world.send(&[1u8], 0, 9).await;
        }
        let mut received = world.isend(&[3u8; 4], 1, 3)?;
        world.recv(&mut [0u8; 1], 1, 9).await?;
        // Rank 1 has ended, or is about to.
        world.compute(std::time::Duration::from_millis(20)).await;
        received.cancel()?;
        assert!(!received.wait().await?.cancelled, "it was received");
        for ssend in [false, true] {
            let mut r = if ssend {
                world.issend(&[1u8; 4], 1, 0)?
            } else {
                world.isend(&[1u8; 4], 1, 0)?
            };
            r.cancel()?;
            assert!(r.wait().await?.cancelled, "ssend {ssend}: withdrawn");
        }
        Ok(())
    });
}
on_both!(cancel_to_a_finished_receiver => p2p_5_cancelling_a_send_to_a_finished_receiver_returns_sim, p2p_5_cancelling_a_send_to_a_finished_receiver_returns_threads);
