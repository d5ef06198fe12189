//! Tests for the numbered behaviours T1..T15 of `docs/matching.md` §4 (T16, the property test
//! against the reference model, lives elsewhere), plus the rules they cite (M1..M12).
//!
//! Every test drives the real [`Engine`] with `u32` receive ids and `u32` message ids that are
//! all distinct, so each assertion says exactly which receive got which message. Two extra tests
//! cover M10 (withdraw/cancel/probe never reorder) and the switch to indexed mode above 8 entries
//! per queue, checked against [`NaiveEngine`].

use mpsim_proto::matching::reference::NaiveEngine;
use mpsim_proto::matching::{
    Arrived, ContextId, Engine, Envelope, Match, MsgHandle, Pattern, Posted, RecvHandle, Source,
    Tag,
};

/// The context most tests use.
const CTX: ContextId = ContextId(0);

type Eng = Engine<u32, u32>;

fn env(source: u32, tag: i32) -> Envelope {
    Envelope::new(CTX, source, tag)
}

fn pat(source: impl Into<Source>, tag: impl Into<Tag>) -> Pattern {
    Pattern::new(CTX, source, tag)
}

/// Posts a receive that must match at once; returns the match.
#[track_caller]
fn post_matched(engine: &mut Eng, pattern: Pattern, recv: u32) -> Match<u32, u32> {
    match engine.post(pattern, recv) {
        Posted::Matched(m) => m,
        Posted::Queued(_) => panic!("receive {recv} with {pattern:?} was queued, expected a match"),
    }
}

/// Posts a receive that must be queued; returns its handle.
#[track_caller]
fn post_queued(engine: &mut Eng, pattern: Pattern, recv: u32) -> RecvHandle {
    match engine.post(pattern, recv) {
        Posted::Queued(h) => h,
        Posted::Matched(m) => {
            panic!("receive {recv} with {pattern:?} matched {m:?}, expected queued")
        }
    }
}

/// Delivers a message that must match a posted receive at once; returns the match.
#[track_caller]
fn arrive_matched(engine: &mut Eng, envelope: Envelope, msg: u32) -> Match<u32, u32> {
    match engine.arrive(envelope, msg) {
        Arrived::Matched(m) => m,
        Arrived::Queued(_) => panic!("message {msg} {envelope:?} was queued, expected a match"),
    }
}

/// Delivers a message that must be queued as unexpected; returns its handle.
#[track_caller]
fn arrive_queued(engine: &mut Eng, envelope: Envelope, msg: u32) -> MsgHandle {
    match engine.arrive(envelope, msg) {
        Arrived::Queued(h) => h,
        Arrived::Matched(m) => panic!("message {msg} {envelope:?} matched {m:?}, expected queued"),
    }
}

/// Asserts that a match paired receive `recv` with message `msg` carrying `envelope`.
#[track_caller]
fn assert_pair(m: &Match<u32, u32>, recv: u32, msg: u32, envelope: Envelope) {
    assert_eq!(
        (m.recv, m.msg, m.envelope),
        (recv, msg, envelope),
        "wrong pairing (recv, msg, envelope)"
    );
}

/// Contexts of the padding entries; nothing a test posts or sends uses them.
const PAD_RECV_CTX: ContextId = ContextId(99);
const PAD_MSG_CTX: ContextId = ContextId(98);

/// T1..T14 run twice: unpadded (shallow queues, scanned) and with this many padding entries in
/// each queue, which puts both queues in indexed mode (more than 8 entries).
const PADS: [u32; 2] = [0, 12];

fn is_pad(context: ContextId) -> bool {
    context == PAD_RECV_CTX || context == PAD_MSG_CTX
}

/// An engine holding `pad` never-matching receives (all four shapes) and `pad` messages.
fn engine(pad: u32) -> Eng {
    let mut e = Eng::new();
    for i in 0..pad {
        let (s, t) = (i % 3, (i % 5) as i32);
        let p = match i % 4 {
            0 => Pattern::new(PAD_RECV_CTX, s, t),
            1 => Pattern::new(PAD_RECV_CTX, s, Tag::Any),
            2 => Pattern::new(PAD_RECV_CTX, Source::Any, t),
            _ => Pattern::new(PAD_RECV_CTX, Source::Any, Tag::Any),
        };
        post_queued(&mut e, p, 900_000 + i);
        arrive_queued(&mut e, Envelope::new(PAD_MSG_CTX, s, t), 900_000 + i);
    }
    e
}

/// Asserts the queue lengths `(posted, unexpected)`, padding not counted.
#[track_caller]
fn assert_lens(engine: &Eng, posted: usize, unexpected: usize) {
    let p = engine.posted_iter().filter(|(p, _)| !is_pad(p.context));
    let u = engine.unexpected_iter().filter(|(e, _)| !is_pad(e.context));
    assert_eq!(
        (p.count(), u.count()),
        (posted, unexpected),
        "(posted, unexpected) without padding; totals ({}, {})",
        engine.posted_len(),
        engine.unexpected_len()
    );
    assert_eq!(
        engine.posted_iter().count(),
        engine.posted_len(),
        "posted_len"
    );
    assert_eq!(
        engine.unexpected_iter().count(),
        engine.unexpected_len(),
        "unexpected_len"
    );
}

/// Asserts that only the padding is left (and, unpadded, that the engine is empty).
#[track_caller]
fn assert_drained(engine: &Eng, pad: u32) {
    assert_lens(engine, 0, 0);
    let pad = pad as usize;
    assert_eq!((engine.posted_len(), engine.unexpected_len()), (pad, pad));
    assert_eq!(engine.is_empty(), pad == 0, "is_empty");
}

/// Message ids of the unexpected queue, in arrival order, padding left out.
fn unexpected_ids(engine: &Eng) -> Vec<u32> {
    let user = engine.unexpected_iter().filter(|(e, _)| !is_pad(e.context));
    user.map(|(_, m)| *m).collect()
}

/// Receive ids of the posted queue, in posting order, padding left out.
fn posted_ids(engine: &Eng) -> Vec<u32> {
    let user = engine.posted_iter().filter(|(p, _)| !is_pad(p.context));
    user.map(|(_, r)| *r).collect()
}

/// A tiny deterministic generator (64-bit LCG), so the deep test needs no extra crate.
struct Lcg(u64);

impl Lcg {
    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % u64::from(n)) as u32
    }
}

// ---- T1..T15 ----

#[test]
fn matching_t1_exact_receive_posted_first() {
    for pad in PADS {
        let mut e = engine(pad);
        let h = post_queued(&mut e, pat(1, 5), 10);
        assert_lens(&e, 1, 0);
        assert_eq!(e.posted(h), Some((pat(1, 5), &10)));
        let m = arrive_matched(&mut e, env(1, 5), 100);
        assert_pair(&m, 10, 100, env(1, 5));
        assert_drained(&e, pad);
        assert_eq!(e.posted(h), None, "a matched receive's handle is dead");
    }
}

#[test]
fn matching_t2_message_first_then_exact_receive() {
    for pad in PADS {
        let mut e = engine(pad);
        let h = arrive_queued(&mut e, env(1, 5), 100);
        assert_lens(&e, 0, 1);
        assert_eq!(e.unexpected(h), Some((env(1, 5), &100)));
        let m = post_matched(&mut e, pat(1, 5), 10);
        assert_pair(&m, 10, 100, env(1, 5));
        assert_drained(&e, pad);
        assert_eq!(e.unexpected(h), None, "a matched message's handle is dead");
    }
}

#[test]
fn matching_t3_same_pattern_receives_match_in_order() {
    for pad in PADS {
        // Receives first (M1).
        let mut e = engine(pad);
        post_queued(&mut e, pat(1, 5), 10);
        post_queued(&mut e, pat(1, 5), 11);
        assert_pair(&arrive_matched(&mut e, env(1, 5), 100), 10, 100, env(1, 5));
        assert_pair(&arrive_matched(&mut e, env(1, 5), 101), 11, 101, env(1, 5));
        assert_drained(&e, pad);

        // Messages first (M2, M4).
        let mut e = engine(pad);
        arrive_queued(&mut e, env(1, 5), 100);
        arrive_queued(&mut e, env(1, 5), 101);
        assert_pair(&post_matched(&mut e, pat(1, 5), 10), 10, 100, env(1, 5));
        assert_pair(&post_matched(&mut e, pat(1, 5), 11), 11, 101, env(1, 5));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t4_any_source_posted_before_exact_wins() {
    for pad in PADS {
        let mut e = engine(pad);
        post_queued(&mut e, pat(Source::Any, 5), 10);
        let exact = post_queued(&mut e, pat(1, 5), 11);
        assert_pair(&arrive_matched(&mut e, env(1, 5), 100), 10, 100, env(1, 5));
        assert_lens(&e, 1, 0);
        assert_eq!(
            e.posted(exact),
            Some((pat(1, 5), &11)),
            "the exact receive still waits"
        );
        assert_pair(&arrive_matched(&mut e, env(1, 5), 101), 11, 101, env(1, 5));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t5_exact_posted_before_wildcard_wins() {
    for pad in PADS {
        let mut e = engine(pad);
        post_queued(&mut e, pat(1, 5), 10);
        let wild = post_queued(&mut e, pat(Source::Any, 5), 11);
        assert_pair(&arrive_matched(&mut e, env(1, 5), 100), 10, 100, env(1, 5));
        assert_lens(&e, 1, 0);
        assert_eq!(
            e.posted(wild),
            Some((pat(Source::Any, 5), &11)),
            "the wildcard receive still waits"
        );
        assert_pair(&arrive_matched(&mut e, env(2, 5), 101), 11, 101, env(2, 5));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t6_tag_receive_skips_earlier_tags_then_any_tag_gets_first() {
    for pad in PADS {
        let mut e = engine(pad);
        arrive_queued(&mut e, env(1, 1), 101);
        arrive_queued(&mut e, env(1, 2), 102);
        arrive_queued(&mut e, env(1, 3), 103);
        assert_pair(&post_matched(&mut e, pat(1, 3), 10), 10, 103, env(1, 3));
        assert_eq!(unexpected_ids(&e), [101, 102]);
        let any_tag = pat(1, Tag::Any);
        assert_pair(&post_matched(&mut e, any_tag, 11), 11, 101, env(1, 1));
        assert_pair(&post_matched(&mut e, any_tag, 12), 12, 102, env(1, 2));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t7_any_source_gets_earliest_arrival() {
    for pad in PADS {
        let mut e = engine(pad);
        arrive_queued(&mut e, env(4, 9), 104);
        arrive_queued(&mut e, env(2, 9), 102);
        arrive_queued(&mut e, env(7, 9), 107);
        let any_source = pat(Source::Any, 9);
        assert_pair(&post_matched(&mut e, any_source, 10), 10, 104, env(4, 9));
        assert_pair(&post_matched(&mut e, any_source, 11), 11, 102, env(2, 9));
        assert_pair(&post_matched(&mut e, any_source, 12), 12, 107, env(7, 9));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t8_any_any_gets_earliest_of_its_context() {
    for pad in PADS {
        let other = ContextId(1);
        let mut e = engine(pad);
        // The overall earliest message is on another context and must be skipped.
        arrive_queued(&mut e, Envelope::new(other, 0, 0), 200);
        arrive_queued(&mut e, env(3, 8), 103);
        arrive_queued(&mut e, env(1, 2), 101);
        arrive_queued(&mut e, Envelope::new(other, 3, 8), 201);
        arrive_queued(&mut e, env(3, 1), 102);
        let any = pat(Source::Any, Tag::Any);
        assert_pair(&post_matched(&mut e, any, 10), 10, 103, env(3, 8));
        assert_pair(&post_matched(&mut e, any, 11), 11, 101, env(1, 2));
        assert_pair(&post_matched(&mut e, any, 12), 12, 102, env(3, 1));
        post_queued(&mut e, any, 13);
        assert_eq!(
            unexpected_ids(&e),
            [200, 201],
            "context 1's messages untouched"
        );
    }
}

#[test]
fn matching_t9_contexts_are_isolated() {
    for pad in PADS {
        let (a, b) = (ContextId(10), ContextId(11));
        let mut e = engine(pad);
        // A's message waits; a receive on B with the same source and tag does not take it.
        arrive_queued(&mut e, Envelope::new(a, 1, 5), 100);
        let on_b = post_queued(&mut e, Pattern::new(b, 1, 5), 10);
        post_queued(&mut e, Pattern::new(b, Source::Any, Tag::Any), 11);
        assert_lens(&e, 2, 1);
        // Another message on A does not go to B's waiting receives either.
        arrive_queued(&mut e, Envelope::new(a, 1, 5), 101);
        assert_lens(&e, 2, 2);
        // B's message goes to B's first receive.
        let m = arrive_matched(&mut e, Envelope::new(b, 1, 5), 110);
        assert_pair(&m, 10, 110, Envelope::new(b, 1, 5));
        assert_eq!(e.posted(on_b), None);
        // A's receives get A's messages, in order.
        let m = post_matched(&mut e, Pattern::new(a, 1, 5), 20);
        assert_pair(&m, 20, 100, Envelope::new(a, 1, 5));
        let m = post_matched(&mut e, Pattern::new(a, Source::Any, Tag::Any), 21);
        assert_pair(&m, 21, 101, Envelope::new(a, 1, 5));
        assert_lens(&e, 1, 0);
        assert_eq!(posted_ids(&e), [11]);
    }
}

#[test]
fn matching_t10_cancel_posted_receive() {
    for pad in PADS {
        let mut e = engine(pad);
        let r1 = post_queued(&mut e, pat(1, 5), 10);
        let r2 = post_queued(&mut e, pat(1, 5), 11);
        assert_eq!(
            e.cancel(r1),
            Some(10),
            "cancelling a waiting receive returns it"
        );
        assert_lens(&e, 1, 0);
        assert_eq!(e.cancel(r1), None, "cancelling twice fails");
        // The next matching arrival goes to the next receive.
        assert_pair(&arrive_matched(&mut e, env(1, 5), 100), 11, 100, env(1, 5));
        // No receive left: the next one goes to the unexpected queue.
        let h = arrive_queued(&mut e, env(1, 5), 101);
        assert_lens(&e, 0, 1);
        // Cancel after match fails and changes nothing.
        let waiting = post_queued(&mut e, pat(2, 5), 12);
        assert_eq!(e.cancel(r2), None, "cancel after match returns None");
        assert_lens(&e, 1, 1);
        assert_eq!(posted_ids(&e), [12]);
        assert_eq!(e.unexpected(h), Some((env(1, 5), &101)));
        assert_eq!(e.posted(waiting), Some((pat(2, 5), &12)));

        // A cancelled wildcard receive: the arrival goes to the unexpected queue.
        let mut e = engine(pad);
        let w = post_queued(&mut e, pat(Source::Any, Tag::Any), 20);
        assert_eq!(e.cancel(w), Some(20));
        arrive_queued(&mut e, env(3, 3), 120);
        assert_lens(&e, 0, 1);
    }
}

#[test]
fn matching_t11_withdraw_unexpected_message() {
    for pad in PADS {
        let mut e = engine(pad);
        let h1 = arrive_queued(&mut e, env(1, 5), 100);
        let h2 = arrive_queued(&mut e, env(1, 5), 101);
        assert_eq!(e.withdraw(h1), Some((env(1, 5), 100)));
        assert_lens(&e, 0, 1);
        assert_eq!(e.withdraw(h1), None, "withdrawing twice fails");
        assert_pair(&post_matched(&mut e, pat(1, 5), 10), 10, 101, env(1, 5));
        // A matched message cannot be withdrawn; nothing changes.
        let h3 = arrive_queued(&mut e, env(1, 5), 102);
        assert_eq!(e.withdraw(h2), None, "withdraw after match returns None");
        assert_lens(&e, 0, 1);
        assert_eq!(e.unexpected(h3), Some((env(1, 5), &102)));
    }
}

#[test]
fn matching_t12_probe_then_receive_gets_same_message() {
    let mut fresh = Eng::new();
    assert_eq!(
        fresh.probe(&pat(Source::Any, Tag::Any)),
        None,
        "probe on empty"
    );
    assert!(fresh.is_empty(), "probe on empty changes nothing");
    for pad in PADS {
        let mut e = engine(pad);
        let lens = |e: &Eng| (e.posted_len(), e.unexpected_len());
        assert_eq!(
            e.probe(&pat(Source::Any, Tag::Any)),
            None,
            "nothing to probe"
        );
        assert_eq!(e.probe(&pat(1, 5)), None, "nothing to probe");
        let h1 = arrive_queued(&mut e, env(2, 6), 100);
        let h2 = arrive_queued(&mut e, env(1, 5), 101);
        arrive_queued(&mut e, env(1, 6), 102);
        let before = lens(&e);

        let p = e
            .probe(&pat(Source::Any, 5))
            .expect("probe (ANY,5) finds a message");
        assert_eq!((p.handle, p.envelope, *p.msg), (h2, env(1, 5), 101));
        assert_lens(&e, 0, 3);
        let p = e
            .probe(&pat(Source::Any, Tag::Any))
            .expect("probe (ANY,ANY) finds a message");
        assert_eq!((p.handle, p.envelope, *p.msg), (h1, env(2, 6), 100));
        assert_eq!(e.probe(&pat(3, Tag::Any)), None, "no message from 3");
        assert_eq!(lens(&e), before, "probe does not change lengths");
        assert_lens(&e, 0, 3);
        assert_eq!(
            unexpected_ids(&e),
            [100, 101, 102],
            "probe does not reorder"
        );

        // The receive with the same pattern gets the probed message.
        let any_source = pat(Source::Any, 5);
        assert_pair(&post_matched(&mut e, any_source, 10), 10, 101, env(1, 5));
        let any_tag = pat(1, Tag::Any);
        let p = e.probe(&any_tag).expect("probe (1,ANY) finds a message");
        assert_eq!((p.envelope, *p.msg), (env(1, 6), 102));
        assert_pair(&post_matched(&mut e, any_tag, 11), 11, 102, env(1, 6));
        assert_lens(&e, 0, 1);
        // Probe ignores posted receives and does not match them.
        post_queued(&mut e, pat(5, 5), 12);
        assert_eq!(e.probe(&pat(5, 5)), None);
        assert_lens(&e, 1, 1);
    }
}

#[test]
fn matching_t13_mprobed_message_not_given_to_later_wildcard() {
    for pad in PADS {
        let mut e = engine(pad);
        let h = arrive_queued(&mut e, env(1, 5), 100);
        let (envelope, msg) = e
            .mprobe(&pat(1, 5))
            .expect("mprobe (1,5) takes the message");
        assert_eq!((envelope, msg), (env(1, 5), 100));
        assert_lens(&e, 0, 0);
        assert_eq!(e.unexpected(h), None, "the mprobed message left the engine");
        assert_eq!(
            e.withdraw(h),
            None,
            "the mprobed message cannot be withdrawn"
        );
        assert_eq!(e.probe(&pat(Source::Any, Tag::Any)), None);
        assert_eq!(e.mprobe(&pat(1, 5)), None, "mprobe on empty");
        // A wildcard receive posted afterwards does not get it: it is queued.
        post_queued(&mut e, pat(Source::Any, Tag::Any), 10);
        assert_lens(&e, 1, 0);
        // ... and takes the next arrival instead.
        assert_pair(&arrive_matched(&mut e, env(1, 5), 101), 10, 101, env(1, 5));
        assert_drained(&e, pad);

        // mprobe takes exactly the message a receive would (M8/M9), leaving the others in order.
        let mut e = engine(pad);
        arrive_queued(&mut e, env(2, 5), 200);
        arrive_queued(&mut e, env(1, 7), 201);
        arrive_queued(&mut e, env(1, 5), 202);
        let taken = e.mprobe(&pat(1, Tag::Any)).expect("mprobe (1,ANY)");
        assert_eq!(taken, (env(1, 7), 201));
        let any_tag = pat(1, Tag::Any);
        assert_pair(&post_matched(&mut e, any_tag, 20), 20, 202, env(1, 5));
        assert_eq!(unexpected_ids(&e), [200]);
    }
}

#[test]
fn matching_t14_mixed_shapes_pair_in_posting_order() {
    for pad in PADS {
        let mut e = engine(pad);
        post_queued(&mut e, pat(1, 5), 1);
        post_queued(&mut e, pat(Source::Any, 5), 2);
        post_queued(&mut e, pat(1, Tag::Any), 3);
        post_queued(&mut e, pat(Source::Any, Tag::Any), 4);
        assert_pair(&arrive_matched(&mut e, env(1, 5), 101), 1, 101, env(1, 5));
        assert_pair(&arrive_matched(&mut e, env(2, 5), 102), 2, 102, env(2, 5));
        assert_pair(&arrive_matched(&mut e, env(1, 6), 103), 3, 103, env(1, 6));
        assert_pair(&arrive_matched(&mut e, env(3, 3), 104), 4, 104, env(3, 3));
        assert_drained(&e, pad);
    }
}

#[test]
fn matching_t15_depth_100k_reverse_receives_and_memory_returns() {
    const SOURCES: u32 = 1_000;
    const TAGS: u32 = 100;
    let id = |s: u32, t: u32| s * TAGS + t;
    let mut e = Eng::new();
    assert_eq!(e.heap_bytes(), 0, "a fresh engine holds no heap memory");
    // Arrival order: tag-major, so one source's messages are spread through the queue.
    let mut order = Vec::with_capacity((SOURCES * TAGS) as usize);
    for t in 0..TAGS {
        for s in 0..SOURCES {
            arrive_queued(&mut e, env(s, t as i32), id(s, t));
            order.push((s, t));
        }
    }
    assert_lens(&e, 0, 100_000);
    let deep = e.heap_bytes();
    assert!(deep > 0, "a deep engine holds heap memory");
    // M12: linear memory, a generous bound per entry.
    assert!(
        deep < 100_000 * 1024,
        "{deep} bytes for 100,000 entries is not linear"
    );

    for (n, &(s, t)) in order.iter().rev().enumerate() {
        let recv = 1_000_000 + n as u32;
        let m = post_matched(&mut e, pat(s, t as i32), recv);
        assert_pair(&m, recv, id(s, t), env(s, t as i32));
    }
    assert!(e.is_empty());
    assert_eq!(e.heap_bytes(), 0, "memory returns to the empty state");
}

// ---- extra: M10 and the indexed mode ----

/// Builds `n` unexpected messages and `n` posted receives on disjoint contexts, removes entries
/// in the middle by withdraw and cancel, probes in the middle, and checks the remaining order.
fn check_m10_order(n: u32) {
    let msgs_ctx = CTX;
    let recv_ctx = ContextId(1);
    let mut e = Eng::new();
    // Unexpected side: sources and tags vary so different bins are involved.
    let handles: Vec<MsgHandle> = (0..n)
        .map(|i| {
            arrive_queued(
                &mut e,
                Envelope::new(msgs_ctx, i % 3, (i % 4) as i32),
                100 + i,
            )
        })
        .collect();
    // Posted side on another context, mixed shapes.
    let recvs: Vec<RecvHandle> = (0..n)
        .map(|i| {
            let p = match i % 4 {
                0 => Pattern::new(recv_ctx, Source::Any, Tag::Any),
                1 => Pattern::new(recv_ctx, Source::Any, 0),
                2 => Pattern::new(recv_ctx, 0, Tag::Any),
                _ => Pattern::new(recv_ctx, 0, 0),
            };
            post_queued(&mut e, p, i)
        })
        .collect();
    assert_lens(&e, n as usize, n as usize);

    let mid = (n / 2) as usize;
    let expect_withdrawn = Envelope::new(msgs_ctx, mid as u32 % 3, (mid % 4) as i32);
    assert_eq!(
        e.withdraw(handles[mid]),
        Some((expect_withdrawn, 100 + mid as u32))
    );
    assert_eq!(e.cancel(recvs[mid]), Some(mid as u32));
    // Probe something that sits in the middle (the message after the withdrawn one).
    let next = mid + 1;
    let probe = Pattern::new(msgs_ctx, next as u32 % 3, (next % 4) as i32);
    let first_of_shape = (0..n as usize)
        .filter(|&i| i != mid && i % 3 == next % 3 && i % 4 == next % 4)
        .min()
        .expect("some message fits the probe");
    let p = e.probe(&probe).expect("probe finds a message");
    assert_eq!(p.handle, handles[first_of_shape]);
    assert_lens(&e, n as usize - 1, n as usize - 1);

    let expect_msgs: Vec<u32> = (0..n)
        .filter(|&i| i as usize != mid)
        .map(|i| 100 + i)
        .collect();
    let expect_recvs: Vec<u32> = (0..n).filter(|&i| i as usize != mid).collect();
    assert_eq!(unexpected_ids(&e), expect_msgs);
    assert_eq!(posted_ids(&e), expect_recvs);

    // Drain the messages with (ANY, ANY) receives: arrival order without the withdrawn one.
    let drained: Vec<u32> = (0..n - 1)
        .map(|k| {
            post_matched(
                &mut e,
                Pattern::new(msgs_ctx, Source::Any, Tag::Any),
                1_000 + k,
            )
            .msg
        })
        .collect();
    assert_eq!(drained, expect_msgs, "messages drain in arrival order");
    // Drain the receives with messages (0, 0) that every one of them accepts: posting order.
    let taken: Vec<u32> = (0..n - 1)
        .map(|k| arrive_matched(&mut e, Envelope::new(recv_ctx, 0, 0), 2_000 + k).recv)
        .collect();
    assert_eq!(taken, expect_recvs, "receives drain in posting order");
    assert!(e.is_empty());
}

#[test]
fn matching_m10_cancel_and_probe_keep_order() {
    check_m10_order(6); // shallow (scan) mode
    check_m10_order(20); // indexed mode
}

/// The real engine and the reference, fed the same operations, compared after each one.
struct Twin {
    fast: Eng,
    naive: NaiveEngine<u32, u32>,
    recvs: Vec<(RecvHandle, u64)>,
    msgs: Vec<(MsgHandle, u64)>,
    next_id: u32,
    step: usize,
    max_depth: (usize, usize),
}

impl Twin {
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    fn check_lens(&mut self) {
        let fast = (self.fast.posted_len(), self.fast.unexpected_len());
        let naive = (self.naive.posted_len(), self.naive.unexpected_len());
        assert_eq!(fast, naive, "step {}: queue lengths differ", self.step);
        self.max_depth = (self.max_depth.0.max(fast.0), self.max_depth.1.max(fast.1));
        self.step += 1;
    }

    fn post(&mut self, p: Pattern) {
        let r = self.id();
        let (fast, naive) = (self.fast.post(p, r), self.naive.post(p, r));
        match (fast, naive) {
            (Posted::Matched(a), Ok(b)) => assert_eq!(a, b, "step {}: post {p:?}", self.step),
            (Posted::Queued(h), Err(s)) => self.recvs.push((h, s)),
            (a, b) => panic!(
                "step {}: post {p:?}: engine {a:?}, reference {b:?}",
                self.step
            ),
        }
        self.check_lens();
    }

    fn arrive(&mut self, en: Envelope) {
        let m = self.id();
        let (fast, naive) = (self.fast.arrive(en, m), self.naive.arrive(en, m));
        match (fast, naive) {
            (Arrived::Matched(a), Ok(b)) => assert_eq!(a, b, "step {}: arrive {en:?}", self.step),
            (Arrived::Queued(h), Err(s)) => self.msgs.push((h, s)),
            (a, b) => panic!(
                "step {}: arrive {en:?}: engine {a:?}, reference {b:?}",
                self.step
            ),
        }
        self.check_lens();
    }

    /// Cancels a remembered receive (perhaps already matched: then both must say `None`).
    fn cancel(&mut self, i: usize) {
        let (h, s) = self.recvs.swap_remove(i);
        assert_eq!(
            self.fast.cancel(h),
            self.naive.cancel(s),
            "step {}: cancel",
            self.step
        );
        self.check_lens();
    }

    /// Withdraws a remembered message (perhaps already matched: then both must say `None`).
    fn withdraw(&mut self, i: usize) {
        let (h, s) = self.msgs.swap_remove(i);
        let (a, b) = (self.fast.withdraw(h), self.naive.withdraw(s));
        assert_eq!(a, b, "step {}: withdraw", self.step);
        self.check_lens();
    }

    fn probe(&mut self, p: Pattern) {
        let a = self.fast.probe(&p).map(|x| (x.envelope, *x.msg));
        let b = self.naive.probe(&p).map(|(_, en, m)| (en, *m));
        assert_eq!(a, b, "step {}: probe {p:?}", self.step);
        self.check_lens();
    }

    fn mprobe(&mut self, p: Pattern) {
        let (a, b) = (self.fast.mprobe(&p), self.naive.mprobe(&p));
        assert_eq!(a, b, "step {}: mprobe {p:?}", self.step);
        self.check_lens();
    }
}

fn random_pattern(rng: &mut Lcg) -> Pattern {
    let context = ContextId(u64::from(rng.below(4) == 0));
    let source = match rng.below(3) {
        0 => Source::Any,
        _ => Source::Rank(rng.below(4)),
    };
    let tag = match rng.below(3) {
        0 => Tag::Any,
        _ => Tag::Value(rng.below(4) as i32),
    };
    Pattern::new(context, source, tag)
}

fn random_envelope(rng: &mut Lcg) -> Envelope {
    let context = ContextId(u64::from(rng.below(4) == 0));
    Envelope::new(context, rng.below(4), rng.below(4) as i32)
}

/// A mixed stretch of `n` operations of every kind.
fn mixed_ops(t: &mut Twin, rng: &mut Lcg, n: usize) {
    for _ in 0..n {
        match rng.below(20) {
            0..=7 => t.arrive(random_envelope(rng)),
            8..=12 => t.post(random_pattern(rng)),
            13 | 14 if !t.recvs.is_empty() => t.cancel(rng.below(t.recvs.len() as u32) as usize),
            15 | 16 if !t.msgs.is_empty() => t.withdraw(rng.below(t.msgs.len() as u32) as usize),
            17 | 18 => t.probe(random_pattern(rng)),
            _ => t.mprobe(random_pattern(rng)),
        }
    }
}

#[test]
fn matching_deep_wildcards_across_index_threshold() {
    let mut rng = Lcg(0x5eed_0002);
    let mut t = Twin {
        fast: Eng::new(),
        naive: NaiveEngine::default(),
        recvs: Vec::new(),
        msgs: Vec::new(),
        next_id: 0,
        step: 0,
        max_depth: (0, 0),
    };
    for round in 0..6 {
        for depth in (7..=20).chain((7..20).rev()) {
            // Grow the posted side to `depth` (each post either queues or consumes a message).
            while t.fast.posted_len() < depth {
                t.post(random_pattern(&mut rng));
            }
            mixed_ops(&mut t, &mut rng, depth);
            // Grow the unexpected side to `depth` (arrivals consume receives first).
            while t.fast.unexpected_len() < depth {
                t.arrive(random_envelope(&mut rng));
            }
            mixed_ops(&mut t, &mut rng, depth);
        }
        // Drain completely every other round so the engine leaves indexed mode and re-enters.
        if round % 2 == 1 {
            while !t.recvs.is_empty() {
                t.cancel(t.recvs.len() - 1);
            }
            while !t.msgs.is_empty() {
                t.withdraw(0);
            }
            assert!(t.fast.is_empty(), "step {}: drained", t.step);
        }
    }
    assert!(
        t.max_depth.0 >= 20 && t.max_depth.1 >= 20,
        "depths reached: {:?}",
        t.max_depth
    );
}
