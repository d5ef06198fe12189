//! A 2D Jacobi stencil on a process grid: halo exchange with up to 4 neighbours, then a 4-point
//! average over each rank's `--n` x `--n` block, `--iterations` times. Real floating-point work,
//! so the threads backend measures it and the simulator can predict it.
//!
//! `cargo run --release -p mpsim --example stencil2d -- --ranks 4 --n 256 --iterations 100`
//!
//! The ranks form a `px` x `py` grid chosen like `MPI_Dims_create` (as square as the rank count
//! allows, `px >= py`: 2 -> 2x1, 3 -> 3x1, 4 -> 2x2). The global grid is `px·n` x `py·n` points
//! with fixed zero values outside it. Each iteration a rank posts one `irecv` and one `isend` of
//! `n` `f64`s per neighbour (rows as they lie in memory, columns packed), waits for all of them
//! with `wait_all`, unpacks the halos and sweeps its block (`v = (n + s + w + e) / 4`, 4 flops a
//! point).
//!
//! # How the simulator is told about the compute
//!
//! The sweep is ordinary Rust code, not `compute` calls, so the example charges it under `sim`
//! with `--compute measured` (the default here when `--compute` is not given; `docs/timing.md`
//! §7): the simulator charges the thread CPU time the sweep really took, times the model's
//! `host_to_target` (1.0 in a model calibrated on this host). Why not `compute_flops`: the
//! threads backend *spins* for a `compute_flops` call (it has no model to ask), so a program
//! that does the arithmetic and also calls `compute_flops` would pay twice on threads; and a
//! flop rate is a property of the kernel (this one is memory-bound), not of the machine, so
//! `flops_per_s` would have to be fitted to this very loop to predict it. Measured compute
//! predicts *this host* well and is not deterministic (the report says so); `--compute modeled`
//! or `ignored` predicts the communication alone.
//!
//! After each sweep the rank awaits `compute(Duration::ZERO)`: a suspension point that does no
//! work on either backend, but under measured compute the simulator charges a rank's CPU time
//! only when the rank suspends, and packets posted before that carry the time the rank last
//! resumed. Without the yield, the next iteration's halo sends would leave at the *start* of the
//! sweep and the prediction would hide one message delay per iteration.
//!
//! # Output
//!
//! One line for scripts (`scripts/validate` reads it), printed by rank 0:
//!
//! `result example=stencil2d backend=B ranks=R grid=PXxPY n=N iterations=I time_ns=T
//! sweep_ns=S checksum=C`
//!
//! - `time_ns`: from the start of the first iteration on the earliest rank to the end of the
//!   last on the latest (`world.now_ns()`: host time under threads, virtual time under sim),
//!   after a barrier so that thread start-up is not timed;
//! - `sweep_ns`: the most time any rank spent in its sweeps (how much of `time_ns` is compute);
//! - `checksum`: the sum of the final grid, added in a fixed order, so it is bit-identical on
//!   every backend (`tests/example_stencil2d.rs` checks it).
//!
//! `tests/example_stencil2d.rs` includes this file as a module, hence the `pub(crate)` items;
//! `tests/example_commands.rs` too, and runs its `main` as a command.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mpsim::{Comm, Error, LaunchArgs, Launcher, Request, Result, wait_all};

/// Tag of the barrier's empty messages.
const BARRIER_TAG: i32 = 1;
/// Tag of the partial results sent to rank 0 at the end.
const RESULT_TAG: i32 = 2;
/// Halo messages are tagged with the direction they travel in (`HALO_TAG + Dir as i32`).
const HALO_TAG: i32 = 10;

#[derive(Parser)]
#[command(about = "2D Jacobi stencil with halo exchange")]
#[command(mut_arg("compute", measured_compute))]
struct Args {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Each rank's block is n x n points.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=16_384))]
    n: u32,
    /// Halo exchanges and sweeps.
    #[arg(long, default_value_t = 100)]
    iterations: u32,
}

/// The launcher's `--compute` as this program takes it: `measured` by default, since the sweep
/// is real code, which only measured compute charges (the module doc says why not
/// `compute_flops`); the shared flag's default, the model's mode, would predict the
/// communication alone.
fn measured_compute(compute: clap::Arg) -> clap::Arg {
    compute.default_value("measured").help(
        "Under sim: how computation between calls is charged; `measured` charges the host CPU \
         time of the sweeps, `modeled` and `ignored` leave them free (communication alone). \
         Replaces the model file's mode",
    )
}

/// Directions a halo travels in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    North,
    South,
    West,
    East,
}

impl Dir {
    const ALL: [Dir; 4] = [Dir::North, Dir::South, Dir::West, Dir::East];

    fn opposite(self) -> Dir {
        match self {
            Dir::North => Dir::South,
            Dir::South => Dir::North,
            Dir::West => Dir::East,
            Dir::East => Dir::West,
        }
    }

    fn tag(self) -> i32 {
        HALO_TAG + self as i32
    }
}

/// `(px, py)` with `px * py == ranks`, as square as possible, `px >= py` (`MPI_Dims_create`).
pub(crate) fn dims(ranks: u32) -> (u32, u32) {
    let py = (1..=ranks)
        .take_while(|d| d * d <= ranks)
        .filter(|d| ranks.is_multiple_of(*d))
        .last()
        .unwrap_or(1);
    (ranks / py, py)
}

/// One rank's block with a ghost ring: `(n + 2)²` values, row-major, row 0 the north ghost row.
struct Block {
    n: usize,
    /// Neighbour ranks by `Dir` (`None` at the edge of the global grid).
    neighbour: [Option<u32>; 4],
    u: Vec<f64>,
    v: Vec<f64>,
}

impl Block {
    /// Rank `rank`'s block of the `px` x `py` grid, with a deterministic initial field; an
    /// out-of-memory error, not an abort, when the host cannot hold its two fields.
    fn new(rank: u32, (px, py): (u32, u32), n: usize) -> Result<Self> {
        let (rx, ry) = (rank % px, rank / px);
        let at = |x: u32, y: u32| Some(y * px + x);
        let neighbour = [
            if ry > 0 { at(rx, ry - 1) } else { None },
            if ry + 1 < py { at(rx, ry + 1) } else { None },
            if rx > 0 { at(rx - 1, ry) } else { None },
            if rx + 1 < px { at(rx + 1, ry) } else { None },
        ];
        let w = n + 2;
        // Every value is written here, ghosts included, so page faults happen before timing.
        let mut u = field_room(n)?;
        u.resize(w * w, 0.0);
        for i in 1..=n {
            for j in 1..=n {
                let gx = (rx as usize * n + j - 1) as u64;
                let gy = (ry as usize * n + i - 1) as u64;
                u[i * w + j] = ((gx * 31 + gy * 17) % 101) as f64;
            }
        }
        let mut v = field_room(n)?;
        v.extend_from_slice(&u);
        Ok(Block { n, neighbour, u, v })
    }

    /// Row stride.
    fn w(&self) -> usize {
        self.n + 2
    }

    /// The interior edge that goes to the neighbour in `dir`.
    fn edge(&self, dir: Dir, out: &mut [f64]) {
        let (n, w) = (self.n, self.w());
        match dir {
            Dir::North => out.copy_from_slice(&self.u[w + 1..w + 1 + n]),
            Dir::South => out.copy_from_slice(&self.u[n * w + 1..n * w + 1 + n]),
            Dir::West => out
                .iter_mut()
                .enumerate()
                .for_each(|(i, o)| *o = self.u[(i + 1) * w + 1]),
            Dir::East => out
                .iter_mut()
                .enumerate()
                .for_each(|(i, o)| *o = self.u[(i + 1) * w + n]),
        }
    }

    /// Stores a halo received from the neighbour in `dir` into the ghost cells on that side.
    fn set_ghost(&mut self, dir: Dir, halo: &[f64]) {
        let (n, w) = (self.n, self.w());
        match dir {
            Dir::North => self.u[1..1 + n].copy_from_slice(halo),
            Dir::South => self.u[(n + 1) * w + 1..(n + 1) * w + 1 + n].copy_from_slice(halo),
            Dir::West => halo
                .iter()
                .enumerate()
                .for_each(|(i, &h)| self.u[(i + 1) * w] = h),
            Dir::East => halo
                .iter()
                .enumerate()
                .for_each(|(i, &h)| self.u[(i + 1) * w + n + 1] = h),
        }
    }

    /// One Jacobi sweep of the interior into `v`, then `u` and `v` swap (ghosts are refreshed by
    /// the next exchange; at the global edge they stay 0 in both).
    fn sweep(&mut self) {
        let (n, w) = (self.n, self.w());
        for i in 1..=n {
            let up = &self.u[(i - 1) * w..i * w];
            let mid = &self.u[i * w..(i + 1) * w];
            let down = &self.u[(i + 1) * w..(i + 2) * w];
            let out = &mut self.v[i * w + 1..i * w + 1 + n];
            for (j, o) in out.iter_mut().enumerate() {
                *o = 0.25 * ((up[j + 1] + down[j + 1]) + (mid[j] + mid[j + 2]));
            }
        }
        std::mem::swap(&mut self.u, &mut self.v);
    }

    /// The sum of the interior, row by row (a fixed order: the same bits on every backend).
    fn sum(&self) -> f64 {
        let (n, w) = (self.n, self.w());
        (1..=n)
            .flat_map(|i| &self.u[i * w + 1..i * w + 1 + n])
            .sum()
    }
}

/// Every rank waits until all have arrived (gather to rank 0, then release).
async fn barrier(world: &Comm) -> Result<()> {
    if world.rank() == 0 {
        for r in 1..world.size() {
            world.recv::<u8>(&mut [], r, BARRIER_TAG).await?;
        }
        for r in 1..world.size() {
            world.send::<u8>(&[], r, BARRIER_TAG).await?;
        }
    } else {
        world.send::<u8>(&[], 0, BARRIER_TAG).await?;
        world.recv::<u8>(&mut [], 0, BARRIER_TAG).await?;
    }
    Ok(())
}

/// One halo exchange: an `irecv` and an `isend` per neighbour, one `wait_all`, then unpacking.
async fn exchange(
    world: &Comm,
    b: &mut Block,
    send: &mut [Vec<f64>; 4],
    recv: &mut [Vec<f64>; 4],
) -> Result<()> {
    let mut requests: Vec<Request<'_>> = Vec::with_capacity(8);
    for (dir, buf) in Dir::ALL.into_iter().zip(recv.iter_mut()) {
        if let Some(peer) = b.neighbour[dir as usize] {
            // The neighbour to our north sends southwards, and so on.
            requests.push(world.irecv(buf, peer, dir.opposite().tag())?);
        }
    }
    for (dir, buf) in Dir::ALL.into_iter().zip(send.iter_mut()) {
        if let Some(peer) = b.neighbour[dir as usize] {
            b.edge(dir, buf);
            requests.push(world.isend(buf, peer, dir.tag())?);
        }
    }
    wait_all(&mut requests).await?;
    drop(requests);
    for (dir, buf) in Dir::ALL.into_iter().zip(recv.iter()) {
        if b.neighbour[dir as usize].is_some() {
            b.set_ghost(dir, buf);
        }
    }
    Ok(())
}

/// An empty field with room for the `(n + 2)^2` values of a block with its ghosts, or an
/// out-of-memory error: `--n` up to 16,384 asks for 2 GiB per field, which a host or its limits
/// (`ulimit -v`, a container) may refuse.
fn field_room(n: usize) -> Result<Vec<f64>> {
    let w = n + 2;
    let mut f = Vec::new();
    f.try_reserve_exact(w * w).map_err(|e| Error::NoMemory {
        what: format!(
            "--n {n}: no room for a block of {w} x {w} values ({} bytes): {e}",
            w * w * size_of::<f64>()
        ),
    })?;
    Ok(f)
}

/// What rank 0 prints.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Summary {
    /// From the first iteration's start on the earliest rank to the last one's end on the latest.
    pub time_ns: u64,
    /// The most time any rank spent sweeping.
    pub sweep_ns: u64,
    /// The sum of the final global grid.
    pub checksum: f64,
}

/// The stencil on one rank; rank 0 returns the summary.
pub(crate) async fn stencil(world: Comm, n: usize, iterations: u32) -> Result<Option<Summary>> {
    let (me, size) = (world.rank(), world.size());
    let mut b = Block::new(me, dims(size), n)?;
    let mut send: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; n]);
    let mut recv: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; n]);
    barrier(&world).await?;
    let t0 = world.now_ns();
    let mut sweep_ns = 0;
    for _ in 0..iterations {
        exchange(&world, &mut b, &mut send, &mut recv).await?;
        let s0 = world.now_ns();
        b.sweep();
        // The suspension point of the module docs: measured compute is charged here.
        world.compute(Duration::ZERO).await;
        sweep_ns += world.now_ns() - s0;
    }
    let t1 = world.now_ns();
    let sum = b.sum();
    if me != 0 {
        world.send(&[sum], 0, RESULT_TAG).await?;
        world.send(&[t0, t1, sweep_ns], 0, RESULT_TAG).await?;
        return Ok(None);
    }
    let (mut first, mut last, mut checksum) = (t0, t1, sum);
    for r in 1..size {
        let (mut s, mut t) = ([0.0f64], [0u64; 3]);
        world.recv(&mut s, r, RESULT_TAG).await?;
        world.recv(&mut t, r, RESULT_TAG).await?;
        checksum += s[0];
        first = first.min(t[0]);
        last = last.max(t[1]);
        sweep_ns = sweep_ns.max(t[2]);
    }
    Ok(Some(Summary {
        time_ns: last - first,
        sweep_ns,
        checksum,
    }))
}

pub(crate) fn main() -> ExitCode {
    let args = Args::parse();
    let (n, iterations, ranks) = (args.n as usize, args.iterations, args.launch.ranks);
    let backend = format!("{:?}", args.launch.backend).to_lowercase();
    let (px, py) = dims(ranks);
    let run = Launcher::from_args(args.launch).run(|world| {
        let backend = &backend;
        async move {
            if let Some(s) = stencil(world, n, iterations).await? {
                mpsim::write_stdout(|out| {
                    writeln!(
                        out,
                        "result example=stencil2d backend={backend} ranks={ranks} \
                         grid={px}x{py} n={n} iterations={iterations} time_ns={} sweep_ns={} \
                         checksum={:e}",
                        s.time_ns, s.sweep_ns, s.checksum
                    )
                })?;
            }
            Ok(())
        }
    });
    mpsim::exit_code(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_as_square_as_the_rank_count_allows() {
        assert_eq!(dims(1), (1, 1));
        assert_eq!(dims(2), (2, 1));
        assert_eq!(dims(3), (3, 1));
        assert_eq!(dims(4), (2, 2));
        assert_eq!(dims(6), (3, 2));
        assert_eq!(dims(12), (4, 3));
    }
}
