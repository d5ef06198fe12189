//! Communicators made with `split`: the ranks form a `rows` x `cols` grid (rank `r` at row
//! `r / cols`, column `r % cols`), split into one communicator per row and one per column (as
//! `MPI_Cart_sub` would), and each row and each column adds up its ranks' numbers by passing
//! a partial sum from its first member to its last. Every last member checks its sum.
//!
//! `cargo run --release -p mpsim --example grid_split -- --ranks 1000000`
//!
//! It is also the benchmark of `split` at scale (`bench/sim-split.sh`): two splits of every
//! rank, whose members are evenly spaced (a row's by 1, a column's by `cols`), so each child
//! keeps no table of its members (`crates/mpsim/src/comm/group.rs`).
//!
//! Rank 0 prints one line for scripts: `result example=grid_split backend=B ranks=R rows=Y
//! cols=X time_ns=T`, the time from before the first split to the end of the sums on rank 0.
//!
//! `tests/example_commands.rs` includes this file as a module and runs its `main` as a
//! command, hence `pub(crate)`.

use std::io::Write;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Result};

#[derive(Parser)]
#[command(about = "Row and column communicators of a grid, by split")]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Columns of the grid; must divide the rank count [default: the largest divisor of the
    /// rank count not above its square root].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    cols: Option<u32>,
}

/// The largest divisor of `n` not above its square root (1 for a prime).
fn squarest_cols(n: u32) -> u32 {
    (1..=n.isqrt())
        .rev()
        .find(|c| n.is_multiple_of(*c))
        .unwrap_or(1)
}

/// The sum of `first, first + step, ...`, `count` terms.
fn arithmetic_sum(first: u64, step: u64, count: u64) -> u64 {
    count * first + step * count * count.saturating_sub(1) / 2
}

/// Passes a partial sum of the members' world ranks from the first member of `c` to its last,
/// which returns the total (the others `None`).
async fn sum_along(c: &Comm, me: u32) -> Result<Option<u64>> {
    let (r, n) = (c.rank(), c.size());
    let mut partial = [0u64];
    if r > 0 {
        c.recv(&mut partial, r - 1, 5).await?;
    }
    partial[0] += u64::from(me);
    if r + 1 < n {
        c.send(&partial, r + 1, 5).await?;
        Ok(None)
    } else {
        Ok(Some(partial[0]))
    }
}

/// One rank's program on a grid of `cols` columns.
pub(crate) async fn grid(world: Comm, cols: u32, backend: &str) -> Result<()> {
    let (me, n) = (world.rank(), world.size());
    let rows = n / cols;
    let t0 = world.now_ns();
    let row = world.split(Some(me / cols), i64::from(me % cols)).await?;
    let column = world.split(Some(me % cols), i64::from(me / cols)).await?;
    let (row, column) = (
        row.expect("every rank has a row"),
        column.expect("and a column"),
    );
    assert_eq!((row.rank(), row.size()), (me % cols, cols));
    assert_eq!((column.rank(), column.size()), (me / cols, rows));
    if let Some(sum) = sum_along(&row, me).await? {
        let first = u64::from(me - (cols - 1));
        assert_eq!(
            sum,
            arithmetic_sum(first, 1, u64::from(cols)),
            "row of rank {me}"
        );
    }
    if let Some(sum) = sum_along(&column, me).await? {
        let first = u64::from(me % cols);
        let expected = arithmetic_sum(first, u64::from(cols), u64::from(rows));
        assert_eq!(sum, expected, "column of rank {me}");
    }
    if me == 0 {
        let time_ns = world.now_ns() - t0;
        mpsim::write_stdout(|out| {
            writeln!(
                out,
                "grid_split: {rows} x {cols} grid, every row and column sum checked"
            )?;
            writeln!(
                out,
                "result example=grid_split backend={backend} ranks={n} rows={rows} cols={cols} \
                 time_ns={time_ns}"
            )
        })?;
    }
    Ok(())
}

pub(crate) fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let n = args.launch.ranks;
    let cols = args.cols.unwrap_or_else(|| squarest_cols(n));
    if !n.is_multiple_of(cols) {
        let e = Error::InvalidArgument {
            what: format!("--cols {cols} does not divide --ranks {n}"),
        };
        return mpsim::exit_code(Err(e));
    }
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let start = std::time::Instant::now();
    let run = Launcher::from_args(args.launch).run(|world| grid(world, cols, &backend));
    if run.is_ok() {
        eprintln!("host time {:.3} s", start.elapsed().as_secs_f64());
    }
    mpsim::exit_code(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_as_square_as_the_rank_count_allows() {
        assert_eq!(squarest_cols(1_000_000), 1000);
        assert_eq!(squarest_cols(12), 3);
        assert_eq!(squarest_cols(7), 1);
        assert_eq!(squarest_cols(1), 1);
        assert_eq!(arithmetic_sum(3, 4, 3), 3 + 7 + 11);
        assert_eq!(arithmetic_sum(5, 1, 1), 5);
    }
}
