//! The matching benchmark's cases as a plain loop, for instruction counts under callgrind
//! (repeatable on a noisy machine, unlike wall time).
//!
//! `matching_cycles CASE DEPTH ITERS ENGINE`: CASE is `exact`, `wildcard`, `miss` or `arrive`
//! (as in `benches/matching.rs`), ENGINE `fast` or `naive`. Run it with ITERS = N and 2N under
//! `valgrind --tool=callgrind`; the difference in instructions over N is the cost of one
//! operation, free of set-up. `bench/matching-callgrind.sh` does exactly that.

use std::hint::black_box;

use mpsim_proto::matching::reference::NaiveEngine;
use mpsim_proto::matching::{Arrived, ContextId, Engine, Envelope, Pattern, Posted, Source, Tag};

const CTX: ContextId = ContextId(1);
/// The newest message (or receive) of a queue: the only one with its tag.
const BACK: Envelope = Envelope {
    context: CTX,
    source: 0,
    tag: 1_000_000,
};

fn envelope(i: u32) -> Envelope {
    Envelope::new(CTX, i % 1000, (i / 1000) as i32)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: matching_cycles exact|wildcard|miss|arrive DEPTH ITERS fast|naive";
    let [_, case, depth, iters, which] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (Ok(depth), Ok(iters)) = (depth.parse::<u32>(), iters.parse::<u64>()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let fast = match which.as_str() {
        "fast" => true,
        "naive" => false,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let mut e: Engine<u32, u32> = Engine::new();
    let mut n: NaiveEngine<u32, u32> = NaiveEngine::default();
    let exact_back = Pattern::new(CTX, BACK.source, BACK.tag);
    let pattern = match case.as_str() {
        "exact" | "arrive" => exact_back,
        "wildcard" => Pattern::new(CTX, Source::Any, BACK.tag),
        "miss" => Pattern::new(CTX, Source::Any, Tag::Value(i32::MAX)),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    for i in 0..depth {
        let env = if i + 1 == depth { BACK } else { envelope(i) };
        if case == "arrive" {
            let p = Pattern::new(CTX, env.source, env.tag);
            let _ = e.post(p, i);
            let _ = n.post(p, i);
        } else {
            let _ = e.arrive(env, i);
            let _ = n.arrive(env, i);
        }
    }
    for _ in 0..iters {
        match (case.as_str(), fast) {
            ("arrive", true) => {
                let Arrived::Matched(m) = e.arrive(black_box(BACK), 0) else {
                    panic!("no match")
                };
                let _ = e.post(exact_back, m.recv);
            }
            ("arrive", false) => {
                let m = n.arrive(black_box(BACK), 0).expect("no match");
                let _ = n.post(exact_back, m.recv);
            }
            ("miss", true) => {
                let Posted::Queued(h) = e.post(black_box(pattern), 0) else {
                    panic!("unexpected match")
                };
                black_box(e.cancel(h));
            }
            ("miss", false) => {
                let h = n.post(black_box(pattern), 0).expect_err("unexpected match");
                black_box(n.cancel(h));
            }
            (_, true) => {
                let Posted::Matched(m) = e.post(black_box(pattern), 0) else {
                    panic!("no match")
                };
                let _ = e.arrive(m.envelope, m.msg);
            }
            (_, false) => {
                let m = n.post(black_box(pattern), 0).expect("no match");
                let _ = n.arrive(m.envelope, m.msg);
            }
        }
    }
}
