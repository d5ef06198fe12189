//! The names of the collective operations and of their algorithms, and a per-collective choice
//! of algorithm ([`AlgorithmChoices`]).
//!
//! Why here, below the API layer: the names are shared vocabulary. The collectives (in the
//! `mpsim` crate) run them and put them in their messages' tags; a machine model file's
//! `[collectives]` section (read by the simulator's model parser) and the `--coll` flag name
//! them; the run report lists them. Each of those checks a name against the same lists, so a
//! model file that `mpsim model check` accepts is one a run accepts.

use std::fmt;

/// A collective operation: what an algorithm is for ([`Algorithm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Collective {
    /// `barrier`.
    Barrier,
    /// `bcast`.
    Bcast,
    /// `reduce`.
    Reduce,
    /// `allreduce`.
    Allreduce,
    /// `gather`.
    Gather,
    /// `gatherv`.
    Gatherv,
    /// `scatter`.
    Scatter,
    /// `scatterv`.
    Scatterv,
    /// `allgather`.
    Allgather,
    /// `allgatherv`.
    Allgatherv,
    /// `alltoall`.
    Alltoall,
    /// `alltoallv`.
    Alltoallv,
    /// `reduce_scatter` and `reduce_scatter_block`.
    ReduceScatter,
    /// `scan`.
    Scan,
    /// `exscan`.
    Exscan,
}

/// How many [`Collective`]s there are.
pub const COLLECTIVES: usize = 15;

/// How many [`Algorithm`]s there are.
pub const ALGORITHMS: usize = 15;

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

    /// The collective named `name` ([`Collective::name`]; `reduce_scatter_block` is
    /// [`Collective::ReduceScatter`]), or an error listing the names.
    ///
    /// ```
    /// use mpsim_proto::collective::Collective;
    /// assert_eq!(Collective::from_name("allreduce"), Ok(Collective::Allreduce));
    /// assert!(Collective::from_name("allreduse").unwrap_err().contains("barrier, bcast"));
    /// ```
    pub fn from_name(name: &str) -> Result<Collective, String> {
        if name == "reduce_scatter_block" {
            return Ok(Collective::ReduceScatter);
        }
        Collective::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Collective::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "`{}` is not a collective: use {}",
                    shown(name),
                    names.join(", ")
                )
            })
    }

    /// The algorithms it has, the first being the fixed table's last resort.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Collective::Barrier => &[Dissemination],
            Collective::Bcast => &[Binomial, ScatterRecursiveDoubling, ScatterRing],
            Collective::Reduce => &[Binomial, Rabenseifner, Reproducible],
            Collective::Allreduce => &[RecursiveDoubling, Rabenseifner, Ring, Reproducible],
            Collective::Gather | Collective::Scatter => &[Binomial, Linear],
            Collective::Gatherv | Collective::Scatterv | Collective::Scan | Collective::Exscan => {
                &[Linear]
            }
            Collective::Allgather => &[RecursiveDoubling, Bruck, Ring],
            Collective::Allgatherv => &[RecursiveDoubling, Ring],
            Collective::Alltoall => &[Bruck, Scattered, Pairwise],
            Collective::Alltoallv => &[Scattered, Pairwise],
            Collective::ReduceScatter => {
                &[RecursiveHalving, Pairwise, ReduceThenScatter, Reproducible]
            }
        }
    }

    /// `algo` if this collective has it (by name), or an error naming the ones it has.
    ///
    /// ```
    /// use mpsim_proto::collective::{Algorithm, Collective};
    /// assert_eq!(Collective::Bcast.algorithm("binomial"), Ok(Algorithm::Binomial));
    /// let e = Collective::Bcast.algorithm("ring").unwrap_err();
    /// assert!(e.contains("bcast has no algorithm `ring`: use binomial, scatter_recursive_doubling"));
    /// ```
    pub fn algorithm(self, algo: &str) -> Result<Algorithm, String> {
        self.algorithms()
            .iter()
            .copied()
            .find(|a| a.name() == algo)
            .ok_or_else(|| {
                let names: Vec<&str> = self.algorithms().iter().map(|a| a.name()).collect();
                format!(
                    "{self} has no algorithm `{}`: use {}",
                    shown(algo),
                    names.join(", ")
                )
            })
    }

    /// Whether it combines values with an operation (and so has a `reproducible` algorithm,
    /// or is reproducible already: `scan`, `exscan`).
    pub fn is_reduction(self) -> bool {
        matches!(
            self,
            Collective::Reduce
                | Collective::Allreduce
                | Collective::ReduceScatter
                | Collective::Scan
                | Collective::Exscan
        )
    }

    /// Its position in [`Collective::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective algorithm (`docs/collectives.md` describes each, and which collective has
/// which: [`Collective::algorithms`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// Reductions whose floating-point result does not depend on the algorithm or the process
    /// count: a binomial reduce to rank 0 over rank numbers (a fixed bracketing), then a
    /// bcast (allreduce), a send to the root (reduce) or a scatterv (reduce-scatter).
    Reproducible,
    /// The backend's library's own collective (MPI's `MPI_Iallreduce` and kin, on `--backend
    /// mpi`): what the run report names a call that ran so; no collective lists it, so `--coll`
    /// cannot name it.
    Native,
}

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; ALGORITHMS] = [
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
        Algorithm::Reproducible,
        Algorithm::Native,
    ];

    /// Its name (what `--coll` and a model's `[collectives]` take).
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
            Algorithm::Reproducible => "reproducible",
            Algorithm::Native => "mpi_library",
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

    /// Its position in [`Algorithm::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An algorithm chosen per collective, by name: what `--coll allreduce=ring,bcast=binomial`
/// and a model file's `[collectives]` section say, and whether reductions are to be
/// reproducible (`--reproducible`, `reproducible = true`).
///
/// ```
/// use mpsim_proto::collective::{Algorithm, AlgorithmChoices, Collective};
/// let c: AlgorithmChoices = "allreduce=ring, bcast=binomial".parse().unwrap();
/// assert_eq!(c.get(Collective::Allreduce), Some(Algorithm::Ring));
/// assert_eq!(c.get(Collective::Barrier), None);
/// assert_eq!(c.to_string(), "bcast=binomial,allreduce=ring");
/// assert!("bcast=ring".parse::<AlgorithmChoices>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlgorithmChoices {
    by: [Option<Algorithm>; COLLECTIVES],
    /// Reductions run their `reproducible` algorithm unless one is named for them.
    pub reproducible: bool,
}

impl AlgorithmChoices {
    /// The algorithm named for `coll`, if one is.
    pub fn get(&self, coll: Collective) -> Option<Algorithm> {
        self.by[coll.index()]
    }

    /// Names `algo` for `coll`, or takes the name back (`None`). An algorithm `coll` does not
    /// have is an error naming the ones it has.
    pub fn set(&mut self, coll: Collective, algo: Option<Algorithm>) -> Result<(), String> {
        if let Some(a) = algo
            && !coll.algorithms().contains(&a)
        {
            return Err(coll
                .algorithm(a.name())
                .expect_err("an algorithm it does not have"));
        }
        self.by[coll.index()] = algo;
        Ok(())
    }

    /// Whether it names nothing and is not reproducible.
    pub fn is_empty(&self) -> bool {
        !self.reproducible && self.by.iter().all(Option::is_none)
    }

    /// The collectives with an algorithm named, in [`Collective::ALL`]'s order.
    pub fn named(&self) -> impl Iterator<Item = (Collective, Algorithm)> + '_ {
        Collective::ALL
            .into_iter()
            .filter_map(|c| self.get(c).map(|a| (c, a)))
    }

    /// Parses one `collective=algorithm` pair and names it.
    pub fn add(&mut self, pair: &str) -> Result<(), String> {
        let (coll, algo) = pair.split_once('=').ok_or_else(|| {
            format!(
                "`{}` is not `collective=algorithm` (as in `allreduce=ring`)",
                shown(pair)
            )
        })?;
        let coll = Collective::from_name(coll.trim())?;
        let algo = coll.algorithm(algo.trim())?;
        self.set(coll, Some(algo))
    }

    /// `self` with what `over` names put over it (its reproducible flag added).
    pub fn overlaid(mut self, over: &AlgorithmChoices) -> AlgorithmChoices {
        for (c, a) in over.named() {
            self.by[c.index()] = Some(a);
        }
        self.reproducible |= over.reproducible;
        self
    }
}

/// `collective=algorithm` pairs separated by commas (`allreduce=ring,bcast=binomial`); an
/// empty string names nothing. A later pair for the same collective wins.
impl std::str::FromStr for AlgorithmChoices {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut choices = AlgorithmChoices::default();
        for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            choices.add(pair)?;
        }
        Ok(choices)
    }
}

/// The pairs it names, as [`AlgorithmChoices::from_str`] reads them (without the reproducible
/// flag).
impl fmt::Display for AlgorithmChoices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (c, a) in self.named() {
            if !first {
                f.write_str(",")?;
            }
            write!(f, "{c}={a}")?;
            first = false;
        }
        Ok(())
    }
}

/// `text` for an error message: cut to 40 characters.
fn shown(text: &str) -> String {
    if text.chars().count() > 40 {
        format!("{}...", text.chars().take(40).collect::<String>())
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back() {
        for c in Collective::ALL {
            assert_eq!(Collective::from_name(c.name()), Ok(c));
            assert_eq!(Collective::ALL[c.index()], c);
            for &a in c.algorithms() {
                assert_eq!(c.algorithm(a.name()), Ok(a));
            }
        }
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::ALL[a.index()], a);
        }
    }

    #[test]
    fn bad_choices_say_what_is_wrong() {
        let e = "allreduce".parse::<AlgorithmChoices>().unwrap_err();
        assert!(e.contains("not `collective=algorithm`"), "{e}");
        let e = "allreduse=ring".parse::<AlgorithmChoices>().unwrap_err();
        assert!(
            e.starts_with("`allreduse` is not a collective: use barrier"),
            "{e}"
        );
        let e = "allreduce=bruck".parse::<AlgorithmChoices>().unwrap_err();
        assert!(e.starts_with("allreduce has no algorithm `bruck`"), "{e}");
        let c: AlgorithmChoices = "reduce_scatter_block=pairwise,".parse().expect("parses");
        assert_eq!(c.get(Collective::ReduceScatter), Some(Algorithm::Pairwise));
    }
}
