//! BSP sample sort with BSMP (regular sampling, after Shi and Schaeffer; written here from the
//! algorithm): `--n` pseudo-random 64-bit keys distributed by blocks.
//!
//! 1. Each process sorts its keys and sends p regularly spaced samples to pid 0.
//! 2. pid 0 sorts the p² samples and sends the p − 1 splitters to everyone.
//! 3. Each process sends every key to the process whose range holds it (one message per
//!    destination, its keys as the payload).
//! 4. Each process sorts what it received, and sends pid 0 its count, first and last key and a
//!    checksum; pid 0 checks that the keys are all there, once, in order across processes.
//!
//! `cargo run --release --example bsp_sort -- --ranks 4 --n 100000`
//!
//! pid 0 prints `result example=bsp_sort backend=B ranks=P n=N max_bucket=M time_ns=T`.

use std::io::Write;

use clap::Parser;
use mpsim::bsp::{self, Ctx};
use mpsim::{Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "BSP sample sort of distributed keys with BSMP; checks the order")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Number of keys.
    #[arg(long, default_value_t = 1000)]
    n: u64,
}

/// Key `i` (splitmix64 of i).
pub(crate) fn key(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn block_start(n: u64, p: u64, s: u64) -> u64 {
    (u128::from(s) * u128::from(n) / u128::from(p)) as u64
}

fn bytes(keys: &[u64]) -> Vec<u8> {
    keys.iter().flat_map(|k| k.to_le_bytes()).collect()
}

fn keys(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
}

/// n log2 n, the comparisons a sort of n keys is charged.
fn sort_flops(n: usize) -> u64 {
    let n = n as u64;
    n * u64::from(64 - n.leading_zeros())
}

/// Sample sort on one process: its sorted bucket.
pub(crate) async fn sort(mut ctx: Ctx, n: u64, backend: &str) -> Result<Vec<u64>> {
    let (s, p) = (u64::from(ctx.pid()), u64::from(ctx.nprocs()));
    let mut mine: Vec<u64> = (block_start(n, p, s)..block_start(n, p, s + 1))
        .map(key)
        .collect();
    // 1. Local sort, regular samples to pid 0.
    mine.sort_unstable();
    ctx.compute_flops(sort_flops(mine.len())).await;
    let samples: Vec<u64> = (0..p)
        .filter_map(|j| mine.get((j * mine.len() as u64 / p) as usize).copied())
        .collect();
    ctx.send(0, &[], &bytes(&samples))?;
    ctx.sync().await?;
    // 2. pid 0 chooses the splitters.
    if s == 0 {
        let mut all: Vec<u64> = ctx.messages().flat_map(|m| keys(m.payload)).collect();
        all.sort_unstable();
        ctx.compute_flops(sort_flops(all.len())).await;
        let splitters: Vec<u64> = (1..p)
            .filter_map(|j| all.get((j * all.len() as u64 / p) as usize).copied())
            .collect();
        for t in 0..ctx.nprocs() {
            ctx.send(t, &[], &bytes(&splitters))?;
        }
    }
    ctx.sync().await?;
    // 3. Keys to the process whose range holds them: those below splitter j go to j.
    let splitters: Vec<u64> = ctx
        .hpmove()
        .map(|m| keys(m.payload).collect())
        .unwrap_or_default();
    let mut from = 0;
    for t in 0..ctx.nprocs() {
        let to = match splitters.get(t as usize) {
            Some(&sp) => from + mine[from..].partition_point(|&k| k < sp),
            None => mine.len(),
        };
        if to > from || t == s as u32 {
            ctx.send(t, &[], &bytes(&mine[from..to]))?;
        }
        from = to;
    }
    ctx.compute_flops(mine.len() as u64).await;
    ctx.sync().await?;
    // 4. Sort the bucket; tell pid 0 its count, ends and checksum.
    let mut bucket: Vec<u64> = ctx.messages().flat_map(|m| keys(m.payload)).collect();
    bucket.sort_unstable();
    ctx.compute_flops(sort_flops(bucket.len())).await;
    let sum = bucket.iter().fold(0u64, |a, &k| a.wrapping_add(k));
    let ends = [
        bucket.len() as u64,
        bucket.first().copied().unwrap_or(0),
        bucket.last().copied().unwrap_or(0),
        sum,
    ];
    ctx.send(0, &[], &bytes(&ends))?;
    ctx.sync().await?;
    if s == 0 {
        let (mut count, mut sum, mut last, mut max_bucket) = (0u64, 0u64, None, 0u64);
        for m in ctx.messages() {
            let e: Vec<u64> = keys(m.payload).collect();
            if e[0] > 0 {
                if last.is_some_and(|l| l > e[1]) {
                    return Err(Error::program("sort: buckets out of order"));
                }
                last = Some(e[2]);
            }
            count += e[0];
            max_bucket = max_bucket.max(e[0]);
            sum = sum.wrapping_add(e[3]);
        }
        let expected = (0..n).fold(0u64, |a, i| a.wrapping_add(key(i)));
        if count != n || sum != expected {
            return Err(Error::program(format!(
                "sort: {count} keys came out of {n}, or not the same keys"
            )));
        }
        let t = (ctx.time() * 1e9).round() as u64;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "result example=bsp_sort backend={backend} ranks={p} n={n} \
                 max_bucket={max_bucket} time_ns={t}"
            )
        })?;
    }
    if bucket.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::program(format!("pid {s}: bucket not sorted")));
    }
    Ok(bucket)
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let n = args.n;
    let launcher = Launcher::from_args(args.launch);
    let run = bsp::run_with(&launcher, |ctx| async {
        sort(ctx, n, &backend).await.map(drop)
    });
    mpsim::exit_code(run)
}
