//! The collectives' algorithms by name, and which one a call runs (`docs/collectives.md` §4):
//! one forced on the communicator ([`Comm::force_algorithm`], for tests), else one the run
//! names (`--coll`, `--reproducible`, then the model file's `[collectives]`), else the
//! cheapest by the machine model's costs (`cost.rs`), else a fixed table by message size and
//! process count after MPICH's defaults, when there is no model to cost with (a backend that
//! runs for real) or the ranks' arguments differ (`alltoallv`). Every rank makes the same
//! choice from the same arguments.

use std::fmt;

use mpsim_proto::error::{Error, Result};

use crate::Comm;

pub use mpsim_proto::collective::{Algorithm, AlgorithmChoices, COLLECTIVES, Collective};

/// Why a call runs the algorithm it runs, as the run report says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Forced on the communicator (`Comm::force_algorithm`, tests).
    Forced,
    /// Named by `--coll` (or a [`RunConfig`](crate::RunConfig)'s `collectives`).
    Flag,
    /// `--reproducible`.
    FlagReproducible,
    /// Named in the model file's `[collectives]`.
    ModelFile,
    /// `reproducible = true` in the model file's `[collectives]`.
    ModelFileReproducible,
    /// The collective has one algorithm.
    Only,
    /// The cheapest by the machine model's costs.
    ModelCost,
    /// The fixed table: no machine model to cost with (a real run).
    TableNoModel,
    /// The fixed table: the ranks' counts differ (`alltoallv`), so no rank knows the call's
    /// size.
    TableRankCounts,
    /// Run by the backend's library (`--backend mpi`), nothing naming an algorithm
    /// (`coll/native.rs`).
    Library,
}

/// How many [`Reason`]s there are.
pub(crate) const REASONS: usize = 10;

impl Reason {
    /// What the report says.
    pub fn text(self) -> &'static str {
        match self {
            Reason::Forced => "forced",
            Reason::Flag => "--coll",
            Reason::FlagReproducible => "--reproducible",
            Reason::ModelFile => "model file",
            Reason::ModelFileReproducible => "model file: reproducible",
            Reason::Only => "only algorithm",
            Reason::ModelCost => "model cost",
            Reason::TableNoModel => "table: no model",
            Reason::TableRankCounts => "table: counts vary by rank",
            Reason::Library => "the backend's library",
        }
    }

    pub(crate) const ALL: [Reason; REASONS] = [
        Reason::Forced,
        Reason::Flag,
        Reason::FlagReproducible,
        Reason::ModelFile,
        Reason::ModelFileReproducible,
        Reason::Only,
        Reason::ModelCost,
        Reason::TableNoModel,
        Reason::TableRankCounts,
        Reason::Library,
    ];

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// A call's algorithm and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub algo: Algorithm,
    pub reason: Reason,
}

/// The algorithms forced on a communicator, by collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Forced([Option<Algorithm>; COLLECTIVES]);

impl Forced {
    /// Nothing forced: the run's policy chooses.
    pub const NONE: Forced = Forced([None; COLLECTIVES]);

    pub(crate) fn get(self, coll: Collective) -> Option<Algorithm> {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The communicator's size.
    pub size: u32,
    /// The bytes of the call's vector: a bcast's or reduction's whole vector, an allgather's
    /// or gather's whole result, an alltoall's one block.
    pub bytes: usize,
    /// Elements of that vector.
    pub count: usize,
    /// Bytes per element.
    pub elem: usize,
    /// Whether the reduction's operation is commutative (`true` for the others).
    pub commutative: bool,
}

/// The algorithm of `coll` for a call of `shape` on `comm`, and why (module docs). `call`
/// names the call in the error of a forced or named algorithm that needs a commutative
/// operation given one that is not (`InvalidOp`).
pub(crate) fn choose(
    comm: &Comm,
    coll: Collective,
    call: &'static str,
    shape: Shape,
) -> Result<Chosen> {
    let policy = comm.coll_policy();
    let named = comm
        .coll_forced()
        .get()
        .get(coll)
        .map(|a| (a, Reason::Forced))
        .or_else(|| policy.named(coll));
    if let Some((algo, reason)) = named {
        if algo.needs_commutative(coll) && !shape.commutative {
            let by = match reason {
                Reason::Forced => "forced",
                Reason::Flag => "named by --coll",
                _ => "named in the model file",
            };
            return Err(Error::InvalidOp {
                site: comm.site(call),
                what: format!(
                    "the operation is not commutative, and the algorithm {by} for {coll} \
                     ({algo}) needs a commutative one"
                ),
            });
        }
        return Ok(Chosen { algo, reason });
    }
    Ok(policy.choose(coll, shape))
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
        other => other.algorithms()[0],
    }
}

/// The tag of `coll`'s messages run by `algo` with `root` (0 for the collectives without one)
/// on the collective context (module docs of `crate::coll`, "Tags"): bits 24-29 the
/// collective, 16-23 the algorithm, 0-15 the root's low bits. Never `comm_split`'s tag (whose
/// top byte is `0x53`).
pub(crate) fn tag(coll: Collective, algo: Algorithm, root: u32) -> i32 {
    let kind = coll.index() as i32 + 1;
    debug_assert!(kind < 64 && Algorithm::ALL.len() < 256);
    let algo = algo.index() as i32 + 1;
    (kind << 24) | (algo << 16) | (root & 0xFFFF) as i32
}

impl Comm {
    /// Forces `algo` for every later call of `coll` on this communicator and its clones, not
    /// on the communicators `dup` and `split` make from it (`None`: back to the run's choice).
    /// Not for programs: the tests use it to run every algorithm; a program chooses with
    /// `--coll` and the model file. An algorithm that
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
