//! The collectives' algorithms by name, and which one a call runs: today a fixed table by
//! message size and process count (after MPICH's defaults; `docs/collectives.md` lists it),
//! unless one was forced on the communicator ([`Comm::force_algorithm`], for tests). A choice
//! from the machine model's costs and `--coll` flags come later.

use std::fmt;

use mpsim_proto::error::{Error, Result};

use crate::Comm;

/// A collective operation: what an algorithm is for ([`Algorithm`]), and the calls whose
/// traffic carries its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Collective {
    /// [`Comm::barrier`].
    Barrier,
    /// [`Comm::bcast`].
    Bcast,
    /// [`Comm::reduce`].
    Reduce,
    /// [`Comm::allreduce`].
    Allreduce,
    /// [`Comm::gather`].
    Gather,
    /// [`Comm::gatherv`].
    Gatherv,
    /// [`Comm::scatter`].
    Scatter,
    /// [`Comm::scatterv`].
    Scatterv,
    /// [`Comm::allgather`].
    Allgather,
    /// [`Comm::allgatherv`].
    Allgatherv,
    /// [`Comm::alltoall`].
    Alltoall,
    /// [`Comm::alltoallv`].
    Alltoallv,
    /// [`Comm::reduce_scatter`] and [`Comm::reduce_scatter_block`].
    ReduceScatter,
    /// [`Comm::scan`].
    Scan,
    /// [`Comm::exscan`].
    Exscan,
}

/// How many [`Collective`]s there are.
const COLLECTIVES: usize = 15;

impl Collective {
    /// Every collective.
    pub const ALL: [Collective; COLLECTIVES] = [
        Collective::Barrier,
        Collective::Bcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Gather,
        Collective::Gatherv,
        Collective::Scatter,
        Collective::Scatterv,
        Collective::Allgather,
        Collective::Allgatherv,
        Collective::Alltoall,
        Collective::Alltoallv,
        Collective::ReduceScatter,
        Collective::Scan,
        Collective::Exscan,
    ];

    /// Its name, as the call is named (`"reduce_scatter"` for both reduce-scatters).
    pub fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "barrier",
            Collective::Bcast => "bcast",
            Collective::Reduce => "reduce",
            Collective::Allreduce => "allreduce",
            Collective::Gather => "gather",
            Collective::Gatherv => "gatherv",
            Collective::Scatter => "scatter",
            Collective::Scatterv => "scatterv",
            Collective::Allgather => "allgather",
            Collective::Allgatherv => "allgatherv",
            Collective::Alltoall => "alltoall",
            Collective::Alltoallv => "alltoallv",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Scan => "scan",
            Collective::Exscan => "exscan",
        }
    }

    /// The algorithms it has, the first being what the table falls back to.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Collective::Barrier => &[Dissemination],
            Collective::Bcast => &[Binomial, ScatterRecursiveDoubling, ScatterRing],
            Collective::Reduce => &[Binomial, Rabenseifner],
            Collective::Allreduce => &[RecursiveDoubling, Rabenseifner, Ring],
            Collective::Gather | Collective::Scatter => &[Binomial, Linear],
            Collective::Gatherv | Collective::Scatterv | Collective::Scan | Collective::Exscan => {
                &[Linear]
            }
            Collective::Allgather => &[RecursiveDoubling, Bruck, Ring],
            Collective::Allgatherv => &[RecursiveDoubling, Ring],
            Collective::Alltoall => &[Bruck, Scattered, Pairwise],
            Collective::Alltoallv => &[Scattered, Pairwise],
            Collective::ReduceScatter => &[RecursiveHalving, Pairwise, ReduceThenScatter],
        }
    }

    fn index(self) -> usize {
        Collective::ALL
            .iter()
            .position(|&c| c == self)
            .expect("every collective is in ALL")
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective algorithm (`docs/collectives.md` describes each, and which collective has
/// which: [`Collective::algorithms`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Barrier: in round `k`, rank `r` signals `r + 2^k` and waits for `r - 2^k`.
    Dissemination,
    /// A binomial tree rooted at the root (bcast, reduce, gather, scatter).
    Binomial,
    /// Bcast as a binomial scatter then a recursive-doubling allgather.
    ScatterRecursiveDoubling,
    /// Bcast as a binomial scatter then a ring allgather.
    ScatterRing,
    /// Reduce-scatter by recursive vector halving, then a gather (reduce) or an allgather
    /// (allreduce) by recursive doubling.
    Rabenseifner,
    /// Partners at distance 1, 2, 4, ... exchange everything they hold (allreduce,
    /// allgather); a power of two is folded in first for other sizes.
    RecursiveDoubling,
    /// Each rank passes blocks to its right neighbour, `size - 1` steps per phase.
    Ring,
    /// Bruck's algorithm: `ceil(log2 size)` steps, at distances 1, 2, 4, ... (allgather,
    /// alltoall).
    Bruck,
    /// Every send and receive posted at once (alltoall, alltoallv).
    Scattered,
    /// `size - 1` steps, in step `k` rank `r` sends to `r + k` and receives from `r - k`
    /// (alltoall, reduce-scatter).
    Pairwise,
    /// Reduce-scatter by recursive halving of the vector among a power of two of ranks.
    RecursiveHalving,
    /// The root sends to or receives from each rank in turn (gatherv, scatterv), or each rank
    /// passes its prefix to the next (scan, exscan).
    Linear,
    /// Reduce-scatter as a binomial reduce to rank 0 then a scatterv: the one for operations
    /// that are not commutative.
    ReduceThenScatter,
}

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; 13] = [
        Algorithm::Dissemination,
        Algorithm::Binomial,
        Algorithm::ScatterRecursiveDoubling,
        Algorithm::ScatterRing,
        Algorithm::Rabenseifner,
        Algorithm::RecursiveDoubling,
        Algorithm::Ring,
        Algorithm::Bruck,
        Algorithm::Scattered,
        Algorithm::Pairwise,
        Algorithm::RecursiveHalving,
        Algorithm::Linear,
        Algorithm::ReduceThenScatter,
    ];

    /// Its name (what `--coll` will take).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Dissemination => "dissemination",
            Algorithm::Binomial => "binomial",
            Algorithm::ScatterRecursiveDoubling => "scatter_recursive_doubling",
            Algorithm::ScatterRing => "scatter_ring",
            Algorithm::Rabenseifner => "rabenseifner",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::Ring => "ring",
            Algorithm::Bruck => "bruck",
            Algorithm::Scattered => "scattered",
            Algorithm::Pairwise => "pairwise",
            Algorithm::RecursiveHalving => "recursive_halving",
            Algorithm::Linear => "linear",
            Algorithm::ReduceThenScatter => "reduce_then_scatter",
        }
    }

    /// Whether it needs a commutative operation for `coll` (reductions combine in another
    /// order than rank order).
    pub fn needs_commutative(self, coll: Collective) -> bool {
        matches!(
            (coll, self),
            (Collective::Allreduce, Algorithm::Ring)
                | (Collective::ReduceScatter, Algorithm::RecursiveHalving)
                | (Collective::ReduceScatter, Algorithm::Pairwise)
        )
    }

    fn index(self) -> usize {
        Algorithm::ALL
            .iter()
            .position(|&a| a == self)
            .expect("every algorithm is in ALL")
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The algorithms forced on a communicator, by collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Forced([Option<Algorithm>; COLLECTIVES]);

impl Forced {
    /// Nothing forced: the table chooses.
    pub const NONE: Forced = Forced([None; COLLECTIVES]);

    fn get(self, coll: Collective) -> Option<Algorithm> {
        self.0[coll.index()]
    }
}

/// Message sizes of the table, in bytes (MPICH's defaults of the same names).
const BCAST_SHORT: usize = 12_288;
const BCAST_LONG: usize = 524_288;
const BCAST_MIN_PROCS: u32 = 8;
const REDUCE_SHORT: usize = 2_048;
const ALLREDUCE_SHORT: usize = 2_048;
/// Above this an allreduce on a size that is not a power of two goes around a ring: the
/// fold of Rabenseifner's algorithm sends the whole vector twice more.
const ALLREDUCE_RING: usize = 524_288;
const ALLGATHER_SHORT: usize = 81_920;
const ALLGATHER_LONG: usize = 524_288;
const ALLTOALL_SHORT: usize = 256;
const ALLTOALL_MEDIUM: usize = 32_768;
const ALLTOALL_BRUCK_MIN_PROCS: u32 = 8;
const REDUCE_SCATTER_LONG: usize = 524_288;

/// What a call tells the choice.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// The communicator's size.
    pub size: u32,
    /// The bytes of the call's vector: a bcast's or reduction's whole vector, an allgather's
    /// or gather's whole result, an alltoall's one block.
    pub bytes: usize,
    /// Elements of the vector (reductions).
    pub count: usize,
    /// Whether the reduction's operation is commutative (`true` for the others).
    pub commutative: bool,
}

/// The algorithm of `coll` for a call of `shape` on `comm`: the forced one, checked, or the
/// table's. `call` names the call in the error of a forced algorithm that cannot run it.
pub(crate) fn choose(
    comm: &Comm,
    coll: Collective,
    call: &'static str,
    shape: Shape,
) -> Result<Algorithm> {
    if let Some(algo) = comm.coll_forced().get().get(coll) {
        if algo.needs_commutative(coll) && !shape.commutative {
            return Err(Error::InvalidOp {
                site: comm.site(call),
                what: format!(
                    "the operation is not commutative, and the algorithm forced for {coll} \
                     ({algo}) needs a commutative one"
                ),
            });
        }
        return Ok(algo);
    }
    Ok(table(coll, shape))
}

/// The fixed table (`docs/collectives.md`, "Which algorithm").
pub(crate) fn table(coll: Collective, s: Shape) -> Algorithm {
    use Algorithm::*;
    let pof2 = s.size.is_power_of_two();
    let below_pof2 = 1usize << (31 - s.size.max(1).leading_zeros());
    match coll {
        Collective::Barrier => Dissemination,
        Collective::Bcast => {
            if s.bytes < BCAST_SHORT || s.size < BCAST_MIN_PROCS {
                Binomial
            } else if s.bytes < BCAST_LONG && pof2 {
                ScatterRecursiveDoubling
            } else {
                ScatterRing
            }
        }
        Collective::Reduce => {
            if s.commutative && s.bytes > REDUCE_SHORT && s.count >= below_pof2 {
                Rabenseifner
            } else {
                Binomial
            }
        }
        Collective::Allreduce => {
            if s.bytes <= ALLREDUCE_SHORT || s.count < below_pof2 {
                RecursiveDoubling
            } else if s.commutative && !pof2 && s.bytes > ALLREDUCE_RING {
                Ring
            } else {
                Rabenseifner
            }
        }
        Collective::Gather | Collective::Scatter => Binomial,
        Collective::Gatherv | Collective::Scatterv | Collective::Scan | Collective::Exscan => {
            Linear
        }
        Collective::Allgather => {
            if s.bytes < ALLGATHER_LONG && pof2 {
                RecursiveDoubling
            } else if s.bytes < ALLGATHER_SHORT {
                Bruck
            } else {
                Ring
            }
        }
        Collective::Allgatherv => {
            if s.bytes < ALLGATHER_LONG && pof2 {
                RecursiveDoubling
            } else {
                Ring
            }
        }
        Collective::Alltoall => {
            if s.bytes <= ALLTOALL_SHORT && s.size >= ALLTOALL_BRUCK_MIN_PROCS {
                Bruck
            } else if s.bytes <= ALLTOALL_MEDIUM {
                Scattered
            } else {
                Pairwise
            }
        }
        Collective::Alltoallv => Scattered,
        Collective::ReduceScatter => {
            if !s.commutative {
                ReduceThenScatter
            } else if s.bytes < REDUCE_SCATTER_LONG {
                RecursiveHalving
            } else {
                Pairwise
            }
        }
    }
}

/// The tag of `coll`'s messages run by `algo` with `root` (0 for the collectives without one)
/// on the collective context (module docs of `crate::coll`, "Tags"): bits 24-29 the
/// collective, 16-23 the algorithm, 0-15 the root's low bits. Never `comm_split`'s tag (whose
/// top byte is `0x53`).
pub(crate) fn tag(coll: Collective, algo: Algorithm, root: u32) -> i32 {
    let kind = coll.index() as i32 + 1;
    let algo = algo.index() as i32 + 1;
    (kind << 24) | (algo << 16) | (root & 0xFFFF) as i32
}

impl Comm {
    /// Forces `algo` for every later call of `coll` on this communicator and its clones, not
    /// on the communicators `dup` and `split` make from it (`None`: back to the fixed table). Not for programs: the tests use it to run every
    /// algorithm; a program will choose with `--coll` and the model file. An algorithm that
    /// `coll` does not have is `Error::InvalidArgument`; a forced algorithm that needs a
    /// commutative operation, used with one that is not, fails the call with
    /// `Error::InvalidOp`.
    #[doc(hidden)]
    pub fn force_algorithm(&self, coll: Collective, algo: Option<Algorithm>) -> Result<()> {
        if let Some(a) = algo
            && !coll.algorithms().contains(&a)
        {
            return Err(Error::InvalidArgument {
                what: format!(
                    "{}: {coll} has no algorithm {a}",
                    self.site("force_algorithm")
                ),
            });
        }
        let mut forced = self.coll_forced().get();
        forced.0[coll.index()] = algo;
        self.coll_forced().set(forced);
        Ok(())
    }
}
