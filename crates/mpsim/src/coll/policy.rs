//! A run's collective policy: what the run names (`--coll`, `--reproducible`, the model
//! file's `[collectives]`), the machine model's costs to choose the others by, and the
//! counts, algorithms and times the run report lists per collective.
//!
//! One [`Policy`] per run, shared by every rank's communicators (an `Arc`: under
//! `--sim-threads` ranks run on several threads). What it records is integer sums, counts and
//! maxima in atomics, so the report's figures do not depend on the order the ranks ran in.
//! The model's choice for a call is memoised per host thread (the ranks of a simulated run
//! mostly make the same calls): a call costs its algorithms only when its shape changes.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use mpsim_proto::collective::ALGORITHMS;
use mpsim_sim::{CollectiveLine, Model};

use super::algo::{
    Algorithm, AlgorithmChoices, COLLECTIVES, Chosen, Collective, REASONS, Reason, Shape, table,
};
use super::cost::Costs;

/// Tells runs apart for the per-thread memo.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The policy of a run (module docs).
#[derive(Debug)]
pub(crate) struct Policy {
    id: u64,
    /// `--coll` and `--reproducible`.
    flag: AlgorithmChoices,
    /// The model file's `[collectives]` (simulated runs).
    file: AlgorithmChoices,
    /// The model's costs (simulated runs).
    costs: Option<Costs>,
    stats: Vec<Slot>,
}

/// What one (collective, algorithm, reason) has done in a run.
#[derive(Debug, Default)]
struct Slot {
    /// Calls, counted on each communicator's rank 0: one per collective operation.
    calls: AtomicU64,
    /// Calls on every rank.
    rank_calls: AtomicU64,
    /// Time every rank spent in them, summed, ns.
    rank_ns: AtomicU64,
    /// The longest one rank spent in one, ns.
    longest_ns: AtomicU64,
}

thread_local! {
    /// The last choice made on this thread: the policy's id, the call, and what was chosen.
    static MEMO: Cell<Option<(u64, Collective, Shape, Chosen)>> = const { Cell::new(None) };
}

impl Policy {
    /// A run on a machine `model` (a simulated run: the model file's `[collectives]` and the
    /// model's costs count), or without one (a real run); `flag` what the run names.
    pub fn new(model: Option<&Model>, flag: AlgorithmChoices) -> Self {
        let stats = (0..COLLECTIVES * ALGORITHMS * REASONS)
            .map(|_| Slot::default())
            .collect();
        Policy {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            flag,
            file: model.map(|m| m.collectives).unwrap_or_default(),
            costs: model.map(Costs::of),
            stats,
        }
    }

    /// The policy of a rank run on its own ([`crate::rank::run_one`]): no model, nothing named.
    pub fn unnamed() -> Arc<Policy> {
        static UNNAMED: LazyLock<Arc<Policy>> =
            LazyLock::new(|| Arc::new(Policy::new(None, AlgorithmChoices::default())));
        Arc::clone(&UNNAMED)
    }

    /// The algorithm the run names for `coll`, and why: `--coll`, then `--reproducible`, then
    /// the model file's, then its `reproducible`.
    pub fn named(&self, coll: Collective) -> Option<(Algorithm, Reason)> {
        let reproducible = coll.algorithms().contains(&Algorithm::Reproducible);
        let levels = [
            (&self.flag, Reason::Flag, Reason::FlagReproducible),
            (&self.file, Reason::ModelFile, Reason::ModelFileReproducible),
        ];
        levels.into_iter().find_map(|(choices, named, repro)| {
            if let Some(a) = choices.get(coll) {
                Some((a, named))
            } else if choices.reproducible && reproducible {
                Some((Algorithm::Reproducible, repro))
            } else {
                None
            }
        })
    }

    /// Whether the run keeps mpsim's own algorithms for every collective, where a backend
    /// could run its library's (`--reproducible`, or the model file's `reproducible`).
    pub fn keeps_own(&self) -> bool {
        self.flag.reproducible || self.file.reproducible
    }

    /// The algorithm for a call nobody named one for: its only one; else the cheapest by the
    /// model's costs (the first of the cheapest, in [`Collective::algorithms`]' order); else
    /// the fixed table.
    pub fn choose(&self, coll: Collective, shape: Shape) -> Chosen {
        if let Some((id, c, s, chosen)) = MEMO.get()
            && id == self.id
            && c == coll
            && s == shape
        {
            return chosen;
        }
        let chosen = self.choose_now(coll, shape);
        MEMO.set(Some((self.id, coll, shape, chosen)));
        chosen
    }

    fn choose_now(&self, coll: Collective, shape: Shape) -> Chosen {
        let algos = coll.algorithms();
        let runnable = || {
            algos.iter().copied().filter(move |a| {
                *a != Algorithm::Reproducible && (shape.commutative || !a.needs_commutative(coll))
            })
        };
        if algos.len() == 1 {
            return Chosen {
                algo: algos[0],
                reason: Reason::Only,
            };
        }
        let Some(costs) = self
            .costs
            .as_ref()
            .filter(|_| coll != Collective::Alltoallv)
        else {
            let reason = if coll == Collective::Alltoallv {
                Reason::TableRankCounts
            } else {
                Reason::TableNoModel
            };
            return Chosen {
                algo: table(coll, shape),
                reason,
            };
        };
        let mut best: Option<(u64, Algorithm)> = None;
        for a in runnable() {
            let c = costs.cost(coll, a, &shape);
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, a));
            }
        }
        match best {
            Some((_, algo)) => Chosen {
                algo,
                reason: Reason::ModelCost,
            },
            None => Chosen {
                algo: table(coll, shape),
                reason: Reason::TableNoModel,
            },
        }
    }

    /// Records one rank's call of `coll`, run by `chosen`, that took `ns`; `first` on the
    /// communicator's rank 0 (which counts the operation).
    pub fn record(&self, coll: Collective, chosen: Chosen, first: bool, ns: u64) {
        let i = (coll.index() * ALGORITHMS + chosen.algo.index()) * REASONS + chosen.reason.index();
        let slot = &self.stats[i];
        if first {
            slot.calls.fetch_add(1, Ordering::Relaxed);
        }
        slot.rank_calls.fetch_add(1, Ordering::Relaxed);
        slot.rank_ns.fetch_add(ns, Ordering::Relaxed);
        slot.longest_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The report's lines: every (collective, algorithm, reason) some rank called, in the
    /// order of [`Collective::ALL`], [`Algorithm::ALL`] and the reasons.
    pub fn lines(&self) -> Vec<CollectiveLine> {
        let mut lines = Vec::new();
        for coll in Collective::ALL {
            for algo in Algorithm::ALL {
                for reason in Reason::ALL {
                    let i = (coll.index() * ALGORITHMS + algo.index()) * REASONS + reason.index();
                    let slot = &self.stats[i];
                    if slot.rank_calls.load(Ordering::Relaxed) == 0 {
                        continue;
                    }
                    lines.push(CollectiveLine {
                        collective: coll.name(),
                        algorithm: algo.name(),
                        reason: reason.text(),
                        calls: slot.calls.load(Ordering::Relaxed),
                        rank_ns: slot.rank_ns.load(Ordering::Relaxed),
                        longest_ns: slot.longest_ns.load(Ordering::Relaxed),
                    });
                }
            }
        }
        lines
    }
}
