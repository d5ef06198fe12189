//! Determinism (`docs/timing.md` §5): the same program and model give the same report,
//! byte for byte, run after run and whatever order the ranks' programs were created in. The
//! program is built to stress ties: every delay is equal, so many messages arrive at the same
//! virtual instant and wildcard receives choose among them by the event key alone.

mod common;

use std::sync::Mutex;

use common::{Rank, run_in_order, run_with};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_sim::{Model, Options};

const RANKS: u32 = 16;
const ROUNDS: u32 = 20;

fn targets(rank: u32, round: u32) -> [u32; 2] {
    let a = (rank + 1 + round) % RANKS;
    let b = (rank * 3 + round) % RANKS;
    [a, if b == rank { (rank + 2) % RANKS } else { b }]
}

fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

async fn program(r: Rank, log: &Mutex<Vec<String>>) -> Result<(), Error> {
    let me = r.me();
    for round in 0..ROUNDS {
        let expected = (0..RANKS)
            .map(|s| targets(s, round).iter().filter(|&&t| t == me).count())
            .sum::<usize>();
        let recvs: Vec<_> = (0..expected)
            .map(|_| r.irecv(Source::Any, Tag::Any))
            .collect();
        let mut sends = Vec::new();
        for (i, to) in targets(me, round).into_iter().enumerate() {
            let h = mix(u64::from(me) << 32 | u64::from(round) << 8 | i as u64);
            let mode = [SendMode::Standard, SendMode::Synchronous][(h % 2) as usize];
            sends.push(r.isend(mode, to, (round * 2 + i as u32) as i32, (h % 4096) as usize)?);
        }
        r.compute(mix(u64::from(me) * 7919 + u64::from(round)) % 3 * 500)
            .await;
        for q in recvs {
            let c = r.wait(q).await?;
            log.lock().unwrap().push(format!(
                "rank {me} got {} bytes from {} tag {} at {}",
                c.status.bytes,
                c.status.source,
                c.status.tag,
                r.now()
            ));
        }
        for s in sends {
            r.wait(s).await?;
        }
    }
    Ok(())
}

/// The report and the receive log of one run with the programs created in `order`.
fn transcript(order: Vec<u32>) -> String {
    let log = Mutex::new(Vec::new());
    let out = run_in_order(RANKS, Model::worked_examples(), order, |r| program(r, &log));
    assert!(out.error.is_none(), "{:?}", out.error);
    let mut lines = log.into_inner().unwrap();
    // Ranks interleave in virtual-time order; the log's order is itself part of the contract.
    lines.push(out.report.to_string());
    lines.join("\n")
}

/// Each rank's receive log (each rank's lines in its order; the ranks' interleaving is the
/// threads' on a parallel run) and the report, on `workers` threads, the programs created in
/// `order`.
fn per_rank_transcript(workers: u32, order: Vec<u32>) -> String {
    let log = Mutex::new(Vec::new());
    let options = Options {
        workers,
        spawn_order: Some(order),
        ..Options::new(RANKS, Model::worked_examples())
    };
    let out = run_with(&options, |r| program(r, &log));
    assert!(out.error.is_none(), "{:?}", out.error);
    let mut lines = log.into_inner().unwrap();
    // Stable: a rank's own lines keep their order.
    lines.sort_by_key(|l| l.split(' ').nth(1).and_then(|r| r.parse::<u32>().ok()));
    lines.push(out.report.to_string());
    lines.join("\n")
}

/// `timing.md` §5: the parallel simulator prints the same report as the sequential one, and
/// each rank sees the same messages at the same times, whatever the number of threads and
/// the spawn order.
#[test]
fn sim_determinism_same_report_on_any_number_of_threads() {
    let ascending: Vec<u32> = (0..RANKS).collect();
    let reversed: Vec<u32> = ascending.iter().rev().copied().collect();
    let reference = per_rank_transcript(1, ascending.clone());
    for workers in [2, 3, 5, RANKS] {
        assert_eq!(
            per_rank_transcript(workers, ascending.clone()),
            reference,
            "{workers} threads"
        );
    }
    assert_eq!(
        per_rank_transcript(4, reversed),
        reference,
        "4 threads, reversed spawn order"
    );
}

#[test]
fn sim_determinism_same_report_twice_and_with_shuffled_spawn_order() {
    let ascending: Vec<u32> = (0..RANKS).collect();
    let reference = transcript(ascending.clone());
    assert_eq!(
        transcript(ascending.clone()),
        reference,
        "second run differs"
    );
    let reversed: Vec<u32> = ascending.iter().rev().copied().collect();
    assert_eq!(
        transcript(reversed),
        reference,
        "reversed spawn order differs"
    );
    let mut shuffled = ascending;
    for i in (1..shuffled.len()).rev() {
        let j = (mix(i as u64 + 99) % (i as u64 + 1)) as usize;
        shuffled.swap(i, j);
    }
    assert_eq!(
        transcript(shuffled),
        reference,
        "shuffled spawn order differs"
    );
    // The run really had ties to break: some rank got two messages at the same instant.
    let mut seen = std::collections::BTreeSet::new();
    let tie = reference
        .lines()
        .filter(|l| l.starts_with("rank "))
        .any(|l| {
            let (who, at) = (l.split(' ').nth(1), l.rsplit(' ').next());
            !seen.insert((who.map(str::to_owned), at.map(str::to_owned)))
        });
    assert!(
        tie,
        "no two arrivals at one instant: the test lost its point"
    );
}
