//! T16 (`docs/matching.md` §4): the fast engine pairs exactly as the naive two-list reference on
//! random sequences of post / arrive / cancel / withdraw / probe / mprobe, over 3 contexts,
//! 5 sources and 5 tags with wildcards mixed in.
//!
//! Sequences are long and biased so that queues cross the engine's shallow/indexed switch (more
//! than 8 entries) and drain back, in both directions.

use mpsim_proto::matching::reference::NaiveEngine;
use mpsim_proto::matching::{
    Arrived, ContextId, Engine, Envelope, MsgHandle, Pattern, Posted, RecvHandle, Source, Tag,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Post(Pattern),
    Arrive(Envelope),
    /// Cancel the k-th receive ever queued (mod count): may be live or stale.
    Cancel(usize),
    /// Withdraw the k-th message ever queued (mod count).
    Withdraw(usize),
    Probe(Pattern),
    Mprobe(Pattern),
}

fn context() -> impl Strategy<Value = ContextId> {
    (0u64..3).prop_map(ContextId)
}

fn pattern() -> impl Strategy<Value = Pattern> {
    let source = prop_oneof![3 => (0u32..5).prop_map(Source::Rank), 1 => Just(Source::Any)];
    let tag = prop_oneof![3 => (0i32..5).prop_map(Tag::Value), 1 => Just(Tag::Any)];
    (context(), source, tag).prop_map(|(c, s, t)| Pattern::new(c, s, t))
}

fn envelope() -> impl Strategy<Value = Envelope> {
    (context(), 0u32..5, 0i32..5).prop_map(|(c, s, t)| Envelope::new(c, s, t))
}

/// `post_weight` vs `arrive_weight` sets which queue tends to grow.
fn op(post_weight: u32, arrive_weight: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        post_weight => pattern().prop_map(Op::Post),
        arrive_weight => envelope().prop_map(Op::Arrive),
        2 => any::<usize>().prop_map(Op::Cancel),
        2 => any::<usize>().prop_map(Op::Withdraw),
        2 => pattern().prop_map(Op::Probe),
        2 => pattern().prop_map(Op::Mprobe),
    ]
}

/// Ops in phases: some where receives pile up, some where messages do, some balanced.
fn ops() -> impl Strategy<Value = Vec<Op>> {
    let phase = prop_oneof![
        proptest::collection::vec(op(10, 2), 0..60),
        proptest::collection::vec(op(2, 10), 0..60),
        proptest::collection::vec(op(5, 5), 0..60),
    ];
    proptest::collection::vec(phase, 1..8).prop_map(|phases| phases.concat())
}

/// Runs `ops` through both engines, failing at the first difference.
fn check_equivalent(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut fast: Engine<usize, usize> = Engine::new();
    let mut naive: NaiveEngine<usize, usize> = NaiveEngine::default();
    let mut recvs: Vec<(RecvHandle, u64)> = Vec::new();
    let mut msgs: Vec<(MsgHandle, u64)> = Vec::new();
    for (id, op) in ops.iter().enumerate() {
        match op {
            Op::Post(p) => match (fast.post(*p, id), naive.post(*p, id)) {
                (Posted::Matched(a), Ok(b)) => prop_assert_eq!(a, b, "op {}: {:?}", id, op),
                (Posted::Queued(h), Err(n)) => recvs.push((h, n)),
                (a, b) => prop_assert!(false, "op {id}: {op:?}: engine {a:?}, reference {b:?}"),
            },
            Op::Arrive(e) => match (fast.arrive(*e, id), naive.arrive(*e, id)) {
                (Arrived::Matched(a), Ok(b)) => prop_assert_eq!(a, b, "op {}: {:?}", id, op),
                (Arrived::Queued(h), Err(n)) => msgs.push((h, n)),
                (a, b) => prop_assert!(false, "op {id}: {op:?}: engine {a:?}, reference {b:?}"),
            },
            Op::Cancel(k) if !recvs.is_empty() => {
                let (h, n) = recvs[k % recvs.len()];
                prop_assert_eq!(fast.cancel(h), naive.cancel(n), "op {}: {:?}", id, op);
                // A second cancel of the same receive is always a miss.
                prop_assert_eq!(fast.cancel(h), None);
            }
            Op::Withdraw(k) if !msgs.is_empty() => {
                let (h, n) = msgs[k % msgs.len()];
                prop_assert_eq!(fast.withdraw(h), naive.withdraw(n), "op {}: {:?}", id, op);
                prop_assert_eq!(fast.withdraw(h), None);
            }
            Op::Cancel(_) | Op::Withdraw(_) => {}
            Op::Probe(p) => {
                let a = fast.probe(p).map(|x| (x.envelope, *x.msg));
                let b = naive.probe(p).map(|(_, e, m)| (e, *m));
                prop_assert_eq!(a, b, "op {}: {:?}", id, op);
                if let Some(handle) = fast.probe(p).map(|x| x.handle) {
                    // The probe's handle names that very message.
                    prop_assert_eq!(fast.unexpected(handle).map(|(e, m)| (e, *m)), a);
                }
            }
            Op::Mprobe(p) => {
                prop_assert_eq!(fast.mprobe(p), naive.mprobe(p), "op {}: {:?}", id, op)
            }
        }
        prop_assert_eq!(fast.posted_len(), naive.posted_len(), "op {}", id);
        prop_assert_eq!(fast.unexpected_len(), naive.unexpected_len(), "op {}", id);
    }
    // The queues hold the same entries in the same order: drain both per context.
    let posted: Vec<usize> = fast.posted_iter().map(|(_, r)| *r).collect();
    let unexpected: Vec<(Envelope, usize)> = fast.unexpected_iter().map(|(e, m)| (e, *m)).collect();
    let mut drain_fast = Vec::new();
    let mut drain_naive = Vec::new();
    for ctx in 0..3 {
        let all = Pattern::new(ContextId(ctx), Source::Any, Tag::Any);
        while let Some(m) = fast.mprobe(&all) {
            drain_fast.push(m);
        }
        while let Some(m) = naive.mprobe(&all) {
            drain_naive.push(m);
        }
    }
    prop_assert_eq!(&drain_fast, &drain_naive);
    let mut by_context = unexpected;
    by_context.sort_by_key(|(e, _)| e.context); // stable: arrival order within a context
    prop_assert_eq!(
        by_context,
        drain_fast,
        "unexpected_iter is in arrival order"
    );
    prop_assert!(
        posted.windows(2).all(|w| w[0] < w[1]),
        "posted_iter in posting order"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn matching_t16_reference_equivalence(ops in ops()) {
        check_equivalent(&ops)?;
    }
}

/// A fixed long sequence (deterministic, no shrinking) that drives both queues deep and back
/// to empty several times.
#[test]
fn matching_t16_reference_equivalence_deep_cycles() {
    let mut ops = Vec::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    for cycle in 0..6 {
        let (posts, arrives) = if cycle % 2 == 0 { (9, 1) } else { (1, 9) };
        for _ in 0..400 {
            let r = next(11);
            let c = ContextId(next(3));
            let s = next(6) as u32;
            let t = next(6) as i32;
            let src = if s == 5 { Source::Any } else { Source::Rank(s) };
            let tag = if t == 5 { Tag::Any } else { Tag::Value(t) };
            ops.push(if r < posts {
                Op::Post(Pattern::new(c, src, tag))
            } else if r < posts + arrives {
                Op::Arrive(Envelope::new(c, s % 5, t % 5))
            } else {
                Op::Probe(Pattern::new(c, src, tag))
            });
        }
        // Drain whatever piled up.
        for c in 0..3 {
            for _ in 0..400 {
                ops.push(Op::Arrive(Envelope::new(
                    ContextId(c),
                    next(5) as u32,
                    next(5) as i32,
                )));
                ops.push(Op::Post(Pattern::new(ContextId(c), Source::Any, Tag::Any)));
            }
        }
    }
    if let Err(e) = check_equivalent(&ops) {
        panic!("{e}");
    }
}
