//! How a BSP run is timed, and the table of its supersteps (`spec/bsplib.md` §3,
//! `docs/bsplib.md` §4).
//!
//! Two timings under the simulator, one protocol:
//!
//! - [`BspTiming::P2p`]: the sync's messages are timed by the machine model like any others,
//!   so the supersteps take what their messages take (what the BSP abstraction hides).
//! - [`BspTiming::Cost`]: the superstep costs `w + h·g + l`. The sync runs the same messages,
//!   but the launcher gives the simulator the model with a free network (every delay and
//!   overhead of point-to-point zero, `Model::free_network`), so they take no virtual time;
//!   the processes then agree on `w` and `h` (which the sync exchanges anyway) and each
//!   computes up to the superstep's end, `start + w + h·g + l`, the same instant on every
//!   process. No message or protocol step is skipped: only the clock is set by the formula.
//!
//! Every sync records its superstep ([`Superstep`]); pid 0 hands the table to the launcher
//! for the report.

use std::sync::{Arc, Mutex};

pub use mpsim_sim::{BspReport, BspTiming, Superstep};

/// A process's view of the run's timing: the mode, the cost model's parameters, and where
/// pid 0 leaves the table of supersteps.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timing {
    /// The simulator's cost-model timing (`None`: the sync takes what its messages take).
    pub cost: Option<CostModel>,
    /// Where pid 0 writes the table.
    pub table: Option<Arc<Mutex<Vec<Superstep>>>>,
    /// The supersteps so far (pid 0 only, when `table` is set).
    pub steps: Vec<Superstep>,
}

/// `g` and `l` of the cost model, in the clock's unit (nanoseconds).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CostModel {
    /// Picoseconds per byte of an h-relation.
    pub g_ps_per_byte: u64,
    /// Nanoseconds per superstep.
    pub l_ns: u64,
}

impl CostModel {
    /// `h·g + l` in nanoseconds (rounded down; saturating).
    pub fn comm_ns(&self, h_bytes: u64) -> u64 {
        let hg = u128::from(h_bytes) * u128::from(self.g_ps_per_byte) / 1000;
        u64::try_from(hg)
            .unwrap_or(u64::MAX)
            .saturating_add(self.l_ns)
    }
}

impl Timing {
    /// Records a superstep (pid 0).
    pub fn record(&mut self, step: Superstep) {
        if self.table.is_some() {
            self.steps.push(step);
        }
    }

    /// Hands the table to the launcher (pid 0, at the end).
    pub fn publish(&mut self) {
        if let Some(table) = &self.table
            && let Ok(mut t) = table.lock()
        {
            *t = std::mem::take(&mut self.steps);
        }
    }
}
