//! The predicted time of every algorithm of a collective on a machine model, by process
//! count and message size, beside the algorithm the model chooses (`bench/coll-table.sh`
//! runs it for `docs/measurements.md`).
//!
//! Each figure is the algorithm's cost formula (`mpsim::sim::collective_ns`,
//! `docs/collectives.md` §4), which the simulator matches exactly on flat models
//! (`tests/coll_timing.rs`); where the run fits in memory (`ranks * bytes` up to
//! `--sim-limit`), the chosen algorithm is also simulated and its time printed beside, with
//! their ratio. Each other algorithm's column is its time over the chosen one's.
//!
//! ```text
//! cargo run --release -p mpsim --example coll_table -- --ranks 16,256 --bytes 8,65536
//! ```

use std::process::ExitCode;

use clap::Parser;
use mpsim::sim::{Model, ModelFile, collective_choice, collective_ns};
use mpsim::{Algorithm, Collective, Comm, Launcher, Op};

#[derive(Parser)]
struct Args {
    /// Process counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,256,4096,65536")]
    ranks: Vec<u32>,
    /// Message sizes in bytes (a multiple of 8), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "8,65536,1048576")]
    bytes: Vec<usize>,
    /// Collectives (allreduce, bcast, reduce, allgather, alltoall, reduce_scatter).
    #[arg(long, value_delimiter = ',', default_value = "allreduce,bcast")]
    collectives: Vec<String>,
    /// The machine model (`default`, a model.toml or its directory).
    #[arg(long, default_value = "default")]
    model: String,
    /// Simulate the chosen algorithm too when ranks x bytes is at most this.
    #[arg(long, default_value_t = 1 << 28)]
    sim_limit: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let model = match ModelFile::open(&args.model) {
        Ok(f) => f.model,
        Err(e) => {
            eprintln!("coll_table: {e}");
            return ExitCode::FAILURE;
        }
    };
    for name in &args.collectives {
        let coll = match Collective::from_name(name) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("coll_table: {e}");
                return ExitCode::FAILURE;
            }
        };
        table(&model, coll, &args);
    }
    ExitCode::SUCCESS
}

/// The vector's count of `u64`s as the choice reads it, for `bytes` per rank.
fn count(coll: Collective, ranks: u32, bytes: usize) -> usize {
    match coll {
        // The whole result of ranks blocks of `bytes`.
        Collective::Allgather | Collective::Gather => bytes / 8 * ranks as usize,
        _ => bytes / 8,
    }
}

fn table(model: &Model, coll: Collective, args: &Args) {
    let algos: Vec<Algorithm> = coll.algorithms().to_vec();
    println!("\n{coll}: predicted time per algorithm (ns), and over the chosen one's");
    print!(
        "{:>7} {:>9}  {:<26} {:>13}",
        "ranks", "bytes", "chosen", "chosen_ns"
    );
    for a in &algos {
        print!(" {:>26}", a.name());
    }
    println!(" {:>13} {:>9}", "simulated_ns", "sim/form");
    for &p in &args.ranks {
        for &bytes in &args.bytes {
            let n = count(coll, p, bytes);
            let Some(chosen) = collective_choice(model, coll, p, n, 8, true) else {
                continue;
            };
            let best = collective_ns(model, coll, chosen, p, n, 8);
            print!("{p:>7} {bytes:>9}  {:<26} {best:>13}", chosen.name());
            for &a in &algos {
                let t = collective_ns(model, coll, a, p, n, 8);
                let cell = format!("{t} ({:.2}x)", t as f64 / best.max(1) as f64);
                print!(" {cell:>26}");
            }
            let fits = u64::from(p) * bytes as u64 <= args.sim_limit;
            if fits {
                let sim = simulate(model, coll, p, n);
                println!(" {sim:>13} {:>9.4}", sim as f64 / best.max(1) as f64);
            } else {
                println!(" {:>13} {:>9}", "-", "-");
            }
        }
    }
}

/// One call of `coll` by the model's choice on `p` ranks, simulated: its predicted time. Each
/// collective is its own program (one `run` each), so that a rank's future holds that
/// collective's state only, not the largest of them all: at a million ranks, each byte of it
/// is a megabyte (`bench/sim-allreduce-scale.sh`).
fn simulate(model: &Model, coll: Collective, p: u32, n: usize) -> u64 {
    match coll {
        Collective::Bcast => run(model, p, move |world| async move {
            world.bcast(&mut vec![0u64; n], 0).await
        }),
        Collective::Reduce => run(model, p, move |world| async move {
            let mut out = vec![0u64; n];
            world.reduce(&vec![1; n], &mut out, &Op::sum(), 0).await
        }),
        Collective::Allgather => run(model, p, move |world| async move {
            let mut out = vec![0u64; n];
            let b = n / world.size() as usize;
            world.allgather(&vec![1; b], &mut out).await
        }),
        Collective::Alltoall => run(model, p, move |world| async move {
            let all = vec![1u64; n * world.size() as usize];
            let mut got = vec![0u64; all.len()];
            world.alltoall(&all, &mut got).await
        }),
        Collective::ReduceScatter => run(model, p, move |world| async move {
            let b = n / world.size() as usize;
            let mut mine = vec![0u64; b];
            let send = vec![1u64; b * world.size() as usize];
            world
                .reduce_scatter_block(&send, &mut mine, &Op::sum())
                .await
        }),
        _ => run(model, p, move |world| async move {
            let mut out = vec![0u64; n];
            world.allreduce(&vec![1; n], &mut out, &Op::sum()).await
        }),
    }
}

/// `program` on `p` ranks, simulated on `model`: its predicted time.
fn run<F, Fut>(model: &Model, p: u32, program: F) -> u64
where
    F: Fn(Comm) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = mpsim::Result<()>>,
{
    let outcome = Launcher::new(p).model(model.clone()).simulate(program);
    outcome.report.run_ns()
}
