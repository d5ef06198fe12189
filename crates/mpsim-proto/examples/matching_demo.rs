//! Matching at depth: 100,000 unexpected messages from 1,000 ranks with 100 tags, then exact and
//! wildcard receives drain them; prints the cost per match for the engine and the naive lists.
//!
//! Run: `cargo run --release -p mpsim-proto --example matching_demo`

use std::time::Instant;

use mpsim_proto::matching::reference::NaiveEngine;
use mpsim_proto::matching::{ContextId, Engine, Envelope, Pattern, Posted, Source, Tag};

const SOURCES: u32 = 1_000;
const TAGS: i32 = 100;
const CTX: ContextId = ContextId(0);

fn envelopes() -> impl Iterator<Item = Envelope> {
    (0..TAGS).flat_map(|t| (0..SOURCES).map(move |s| Envelope::new(CTX, s, t)))
}

/// Receives in reverse arrival order, one in four with a wildcard source, one in four with a
/// wildcard tag (a wildcard may take a message a later exact receive wanted: that receive is
/// cancelled, and leftovers are drained at the end).
fn patterns() -> Vec<Pattern> {
    let mut all: Vec<Envelope> = envelopes().collect();
    all.reverse();
    all.iter()
        .enumerate()
        .map(|(i, e)| match i % 4 {
            0 => Pattern::new(CTX, e.source, e.tag),
            1 => Pattern::new(CTX, e.source, Tag::Any),
            2 => Pattern::new(CTX, Source::Any, e.tag),
            _ => Pattern::new(CTX, e.source, e.tag),
        })
        .collect()
}

fn main() {
    let depth = (SOURCES as usize) * (TAGS as usize);
    let patterns = patterns();

    let start = Instant::now();
    let mut engine: Engine<usize, usize> = Engine::new();
    for (i, e) in envelopes().enumerate() {
        let _ = engine.arrive(e, i);
    }
    let mut fast_pairs = Vec::with_capacity(depth);
    for (r, p) in patterns.iter().enumerate() {
        match engine.post(*p, r) {
            Posted::Matched(m) => fast_pairs.push((m.recv, m.msg)),
            // A wildcard took this receive's message earlier: cancel, drain at the end.
            Posted::Queued(h) => fast_pairs.push((r, engine.cancel(h).map_or(usize::MAX, |_| 0))),
        }
    }
    let any = Pattern::new(CTX, Source::Any, Tag::Any);
    while let Some((_, m)) = engine.mprobe(&any) {
        fast_pairs.push((usize::MAX, m));
    }
    let fast = start.elapsed();
    assert!(engine.is_empty());

    let start = Instant::now();
    let mut naive: NaiveEngine<usize, usize> = NaiveEngine::default();
    for (i, e) in envelopes().enumerate() {
        let _ = naive.arrive(e, i);
    }
    let mut naive_pairs = Vec::with_capacity(depth);
    for (r, p) in patterns.iter().enumerate() {
        match naive.post(*p, r) {
            Ok(m) => naive_pairs.push((m.recv, m.msg)),
            Err(h) => naive_pairs.push((r, naive.cancel(h).map_or(usize::MAX, |_| 0))),
        }
    }
    while let Some((_, m)) = naive.mprobe(&any) {
        naive_pairs.push((usize::MAX, m));
    }
    let slow = start.elapsed();

    assert_eq!(fast_pairs, naive_pairs, "engine and reference disagree");
    let per = |d: std::time::Duration| d.as_nanos() as f64 / depth as f64;
    println!(
        "{depth} messages queued, then {depth} receives (exact and wildcard) in reverse order"
    );
    println!(
        "engine      : {:>10.1} ns per message (arrive + match)",
        per(fast)
    );
    println!("naive lists : {:>10.1} ns per message", per(slow));
    println!(
        "speed-up    : {:>10.0}x; pairings identical",
        per(slow) / per(fast)
    );
    println!(
        "engine memory after the drain: {} bytes",
        engine.heap_bytes()
    );
}
