//! A parallel sample sort of `--keys` random `u64` keys per rank: each rank sorts its keys and
//! picks `ranks - 1` regular samples; an `allgather` gives every rank all samples, from which
//! each picks the same `ranks - 1` splitters; each rank cuts its keys into one bucket per rank,
//! an `alltoall` tells every rank how many keys it will get from each, and an `alltoallv`
//! moves the buckets; each rank then sorts what it got. The result checks itself: every rank's
//! keys are sorted, each rank's last key is at most the next rank's first (a point-to-point
//! message), and the count and a checksum of all keys are what they were (`allreduce`).
//!
//! `cargo run --release -p mpsim --example sample_sort -- --ranks 64 --keys 100000`
//!
//! Rank 0 prints one line for scripts: `result example=sample_sort backend=B ranks=R keys=K
//! largest=L time_ns=T`, `L` the most keys any rank ends with, `T` the time of the sort on
//! rank 0 (virtual time under sim: sorting is charged as work at the model's speed).
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::Write;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Op, Result};

#[derive(Parser)]
#[command(about = "Sample sort of random keys with alltoallv; checks the order")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Keys per rank before the sort.
    #[arg(long, default_value_t = 10_000)]
    keys: usize,
}

/// Rank `rank`'s keys: a splitmix64 sequence seeded by the rank.
pub(crate) fn keys(rank: u32, count: usize) -> Vec<u64> {
    let mut s = u64::from(rank).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// Charges sorting `n` keys (about `n log2 n` comparisons) as work.
async fn charge_sort(world: &Comm, n: usize) {
    let log = usize::BITS - n.max(1).leading_zeros();
    world.compute_flops(n as u64 * u64::from(log)).await;
}

/// Sorts `mine` across the ranks; returns this rank's share, sorted, after checking the whole.
pub(crate) async fn sort(world: &Comm, mut mine: Vec<u64>) -> Result<Vec<u64>> {
    let (me, size) = (world.rank() as usize, world.size() as usize);
    let fail = |what: String| Error::program(format!("rank {me}: {what}"));
    let (count_before, sum_before) = (
        mine.len() as u64,
        mine.iter().fold(0u64, |a, &k| a.wrapping_add(k)),
    );
    mine.sort_unstable();
    charge_sort(world, mine.len()).await;
    // Regular samples (zeros where a rank has too few keys: they only skew the buckets).
    let samples: Vec<u64> = (1..size)
        .map(|j| mine.get(j * mine.len() / size).copied().unwrap_or(0))
        .collect();
    let mut all = vec![0u64; samples.len() * size];
    world.allgather(&samples, &mut all).await?;
    all.sort_unstable();
    let splitters: Vec<u64> = (1..size).map(|j| all[j * all.len() / size]).collect();
    // Bucket j: the keys below splitter j and at or above splitter j - 1.
    let mut send_counts = vec![0usize; size];
    let mut start = 0;
    for (j, count) in send_counts.iter_mut().enumerate() {
        let end = match splitters.get(j) {
            Some(&s) => start + mine[start..].partition_point(|&k| k < s),
            None => mine.len(),
        };
        *count = end - start;
        start = end;
    }
    let mut recv_counts = vec![0usize; size];
    world.alltoall(&send_counts, &mut recv_counts).await?;
    let mut got = vec![0u64; recv_counts.iter().sum()];
    world
        .alltoallv(&mine, &send_counts, &mut got, &recv_counts)
        .await?;
    got.sort_unstable();
    charge_sort(world, got.len()).await;
    // The checks: sorted here, in order across ranks, nothing lost or changed.
    if got.windows(2).any(|w| w[0] > w[1]) {
        return Err(fail("its keys are not sorted".into()));
    }
    let edges = [
        got.first().copied().unwrap_or(u64::MAX),
        got.last().copied().unwrap_or(0),
    ];
    let mut all_edges = vec![0u64; 2 * size];
    world.allgather(&edges, &mut all_edges).await?;
    let mut highest = 0;
    for (r, e) in all_edges.chunks(2).enumerate() {
        if e[0] <= e[1] {
            if e[0] < highest {
                return Err(fail(format!(
                    "rank {r}'s first key comes before an earlier rank's last"
                )));
            }
            highest = e[1];
        }
    }
    let mut totals = [0u64; 2];
    let sums = [
        got.len() as u64,
        got.iter().fold(0u64, |a, &k| a.wrapping_add(k)),
    ];
    world.allreduce(&sums, &mut totals, &Op::sum()).await?;
    let mut before = [0u64; 2];
    world
        .allreduce(&[count_before, sum_before], &mut before, &Op::sum())
        .await?;
    if totals != before {
        return Err(fail(format!(
            "the sort has {} keys of checksum {:#x}, the input {} of {:#x}",
            totals[0], totals[1], before[0], before[1]
        )));
    }
    Ok(got)
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let count = args.keys;
    let run = Launcher::from_args(args.launch).run(|world| {
        let backend = backend.clone();
        async move {
            let mine = keys(world.rank(), count);
            world.barrier().await?;
            let t0 = world.now_ns();
            let sorted = sort(&world, mine).await?;
            let elapsed = world.now_ns() - t0;
            let mut largest = [0u64];
            world
                .allreduce(&[sorted.len() as u64], &mut largest, &Op::max())
                .await?;
            if world.rank() == 0 {
                mpsim::write_stdout(|out| {
                    writeln!(
                        out,
                        "sample_sort: {} keys on {} ranks, sorted; at most {} on one rank",
                        count * world.size() as usize,
                        world.size(),
                        largest[0]
                    )?;
                    writeln!(
                        out,
                        "result example=sample_sort backend={backend} ranks={} keys={count} \
                         largest={} time_ns={elapsed}",
                        world.size(),
                        largest[0]
                    )
                })?;
            }
            Ok(())
        }
    });
    mpsim::exit_code(run)
}
