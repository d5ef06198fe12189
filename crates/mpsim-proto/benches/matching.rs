//! Matching cost vs queue depth: the fast engine against the naive two-list reference.
//!
//! Run: `cargo bench -p mpsim-proto --bench matching`. Each iteration leaves the queues as it
//! found them, so the depth is exact:
//! - `exact_back`: unexpected queue of depth D with distinct `(source, tag)`; an exact receive
//!   for the newest message (at the back) matches, then the message arrives again.
//! - `wildcard_back`: the same with an `(ANY_SOURCE, tag)` receive.
//! - `miss`: a receive that matches nothing is posted (scanning everything), then cancelled.
//! - `arrive_back`: posted queue of depth D with distinct exact patterns; a message for the newest
//!   receive arrives and matches, then that receive is posted again.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mpsim_proto::matching::reference::NaiveEngine;
use mpsim_proto::matching::{Arrived, ContextId, Engine, Envelope, Pattern, Posted, Source, Tag};

const DEPTHS: [u32; 5] = [1, 16, 256, 4096, 65536];
const CTX: ContextId = ContextId(1);

fn envelope(i: u32) -> Envelope {
    Envelope::new(CTX, i % 1000, (i / 1000) as i32)
}

/// The newest message of the `*_back` cases: the only one with its tag, so both an exact and an
/// `(ANY_SOURCE, tag)` receive can take nothing else.
const BACK: Envelope = Envelope {
    context: CTX,
    source: 0,
    tag: 1_000_000,
};

fn exact(i: u32) -> Pattern {
    let e = envelope(i);
    Pattern::new(CTX, e.source, e.tag)
}

/// A receive that matches no message of any case.
fn missing() -> Pattern {
    Pattern::new(CTX, Source::Any, Tag::Value(i32::MAX))
}

fn unexpected_side(c: &mut Criterion, name: &str, pattern: Pattern) {
    let mut group = c.benchmark_group(name);
    for depth in DEPTHS {
        let mut fast: Engine<u32, u32> = Engine::new();
        let mut naive: NaiveEngine<u32, u32> = NaiveEngine::default();
        for i in 0..depth {
            let e = if i == depth - 1 { BACK } else { envelope(i) };
            assert!(matches!(fast.arrive(e, i), Arrived::Queued(_)));
            assert!(naive.arrive(e, i).is_err());
        }
        group.bench_with_input(BenchmarkId::new("engine", depth), &depth, |b, _| {
            b.iter(|| {
                let Posted::Matched(m) = fast.post(black_box(pattern), 0) else {
                    panic!("no match")
                };
                assert!(matches!(fast.arrive(m.envelope, m.msg), Arrived::Queued(_)));
            })
        });
        group.bench_with_input(BenchmarkId::new("naive", depth), &depth, |b, _| {
            b.iter(|| {
                let m = naive.post(black_box(pattern), 0).expect("no match");
                assert!(naive.arrive(m.envelope, m.msg).is_err());
            })
        });
    }
    group.finish();
}

fn exact_back(c: &mut Criterion) {
    unexpected_side(c, "exact_back", Pattern::new(CTX, BACK.source, BACK.tag));
}

fn wildcard_back(c: &mut Criterion) {
    unexpected_side(c, "wildcard_back", Pattern::new(CTX, Source::Any, BACK.tag));
}

fn miss(c: &mut Criterion) {
    let mut group = c.benchmark_group("miss");
    for depth in DEPTHS {
        let mut fast: Engine<u32, u32> = Engine::new();
        let mut naive: NaiveEngine<u32, u32> = NaiveEngine::default();
        for i in 0..depth {
            let _ = fast.arrive(envelope(i), i);
            let _ = naive.arrive(envelope(i), i);
        }
        group.bench_with_input(BenchmarkId::new("engine", depth), &depth, |b, _| {
            b.iter(|| {
                let Posted::Queued(h) = fast.post(black_box(missing()), 0) else {
                    panic!("unexpected match")
                };
                assert!(fast.cancel(h).is_some());
            })
        });
        group.bench_with_input(BenchmarkId::new("naive", depth), &depth, |b, _| {
            b.iter(|| {
                let h = naive
                    .post(black_box(missing()), 0)
                    .expect_err("unexpected match");
                assert!(naive.cancel(h).is_some());
            })
        });
    }
    group.finish();
}

fn arrive_back(c: &mut Criterion) {
    let mut group = c.benchmark_group("arrive_back");
    for depth in DEPTHS {
        let back = depth - 1;
        let mut fast: Engine<u32, u32> = Engine::new();
        let mut naive: NaiveEngine<u32, u32> = NaiveEngine::default();
        for i in 0..depth {
            let _ = fast.post(exact(i), i);
            let _ = naive.post(exact(i), i);
        }
        group.bench_with_input(BenchmarkId::new("engine", depth), &depth, |b, _| {
            b.iter(|| {
                let Arrived::Matched(m) = fast.arrive(black_box(envelope(back)), 0) else {
                    panic!("no match")
                };
                assert!(matches!(fast.post(exact(back), m.recv), Posted::Queued(_)));
            })
        });
        group.bench_with_input(BenchmarkId::new("naive", depth), &depth, |b, _| {
            b.iter(|| {
                let m = naive
                    .arrive(black_box(envelope(back)), 0)
                    .expect("no match");
                assert!(naive.post(exact(back), m.recv).is_err());
            })
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(800))
        .sample_size(30)
}

criterion_group! {
    name = benches;
    config = config();
    targets = exact_back, wildcard_back, miss, arrive_back
}
criterion_main!(benches);
