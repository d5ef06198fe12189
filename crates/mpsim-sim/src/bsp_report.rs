//! The BSP part of a run's report (`mpsim::bsp`, `spec/bsplib.md` §3): one row per superstep
//! — its local work `w`, its h-relation in bytes and in messages, the process that set `h`,
//! its cost — and their total, under the timing the run used ([`BspTiming`]).
//!
//! The table is the BSP layer's (which knows what a superstep is); the simulator only carries
//! and prints it, so that a prediction's report shows the supersteps beside the ranks.

use std::fmt::Write as _;

/// How the simulator times a BSP program's supersteps (`--bsp-timing`, the model's
/// `[bsp] timing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BspTiming {
    /// Each superstep costs `w + h·g + l` (`g`, `l` from the model's `[bsp]` section).
    Cost,
    /// Each superstep takes what the messages of its sync take on the point-to-point model.
    #[default]
    P2p,
}

impl BspTiming {
    /// Its name in flags, model files and reports: `cost`, `p2p`.
    pub fn name(self) -> &'static str {
        match self {
            BspTiming::Cost => "cost",
            BspTiming::P2p => "p2p",
        }
    }
}

/// One superstep of a BSP run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Superstep {
    /// 0 for the code before the first sync; the last row is the code after the last sync,
    /// ended by the program's end (`kind` `end`).
    pub index: u64,
    /// `sync` or `end`.
    pub kind: &'static str,
    /// The largest local work of a process in it (its clock from the superstep's start to its
    /// sync), ns.
    pub w_ns: u64,
    /// The h-relation: the most bytes a process sent or received (self-traffic excluded).
    pub h_bytes: u64,
    /// The most messages (puts, gets, sends) a process sent or received.
    pub h_msgs: u64,
    /// The first process that sent or received `h_bytes`.
    pub h_pid: u32,
    /// Its cost, ns: `w + h·g + l` under [`BspTiming::Cost`]; under [`BspTiming::P2p`] the
    /// time it took on pid 0's clock (from the end of the previous sync to the end of this).
    pub cost_ns: u64,
    /// When it ended on pid 0's clock, ns.
    pub end_ns: u64,
}

/// The BSP section of a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BspReport {
    /// The timing of the run (under `threads`, [`BspTiming::P2p`]: what the run took).
    pub timing: BspTiming,
    /// `g` of the cost model, picoseconds per byte (cost timing only).
    pub g_ps_per_byte: Option<u64>,
    /// `l` of the cost model, ns (cost timing only).
    pub l_ns: Option<u64>,
    /// The supersteps, in order.
    pub supersteps: Vec<Superstep>,
}

/// Supersteps a text report lists one by one; beyond, the first half of them and a count.
const LIST_SUPERSTEPS: usize = 64;

impl BspReport {
    /// The sum of the supersteps' costs, ns.
    pub fn total_ns(&self) -> u64 {
        self.supersteps
            .iter()
            .fold(0, |a, s| a.saturating_add(s.cost_ns))
    }

    /// The table as the text report prints it.
    pub fn write_text(&self, out: &mut String) {
        let model = match (self.g_ps_per_byte, self.l_ns) {
            (Some(g), Some(l)) => format!(
                ": w + h*g + l, g = {}.{:03} ns/byte, l = {l} ns",
                g / 1000,
                g % 1000
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "bsp              {} supersteps, total {} ns, timing {}{model}",
            self.supersteps.len(),
            self.total_ns(),
            self.timing.name()
        )
        .ok();
        writeln!(
            out,
            "superstep          w_ns    h_bytes   h_msgs  h_pid       cost_ns        end_ns"
        )
        .ok();
        let row = |out: &mut String, s: &Superstep| {
            writeln!(
                out,
                "{:<5} {:<4} {:>9} {:>10} {:>8} {:>6} {:>13} {:>13}",
                s.index, s.kind, s.w_ns, s.h_bytes, s.h_msgs, s.h_pid, s.cost_ns, s.end_ns
            )
            .ok();
        };
        if self.supersteps.len() <= LIST_SUPERSTEPS {
            for s in &self.supersteps {
                row(out, s);
            }
        } else {
            for s in &self.supersteps[..LIST_SUPERSTEPS / 2] {
                row(out, s);
            }
            writeln!(
                out,
                "... {} more supersteps (`--report json` lists them all)",
                self.supersteps.len() - LIST_SUPERSTEPS / 2
            )
            .ok();
        }
    }
}
