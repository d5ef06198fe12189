//! The report of a real run (`--report` under `threads`): what each rank did in host time,
//! in the shape of the simulator's report, so that a prediction can be read beside the run it
//! predicts, rank by rank.
//!
//! Made from the run's trace (the backend records it when a report is asked for) and the time
//! each rank's program ended: compute is the time in `compute` calls, blocked the time in
//! blocking waits, messages and bytes are counted per rank, and the top waits are the longest
//! wait spans. A real run does not tell which request a wait was for, so no top wait says what
//! it waited for, and the traffic is not split by protocol.

use std::fmt::{self, Write as _};

use mpsim_proto::trace::{Trace, TraceEvent};
use mpsim_sim::{TOP_WAITS, WaitReport, seconds, write_top_waits, write_warnings};

/// One rank of a real run, host time in ns since the run's start.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MeasuredRank {
    /// World rank.
    pub rank: u32,
    /// When its program ended.
    pub end_ns: u64,
    /// Time in `compute` / `compute_flops` calls.
    pub compute_ns: u64,
    /// Time blocked in waits (a blocking call's wait, `wait`, `wait_all`, probes, ...).
    pub blocked_ns: u64,
    /// Messages it sent.
    pub sent_msgs: u64,
    /// Bytes it sent.
    pub sent_bytes: u64,
    /// Messages it took in.
    pub recv_msgs: u64,
    /// Bytes it took in.
    pub recv_bytes: u64,
}

/// The report of a real run (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MeasuredReport {
    /// The backend that ran it (`threads`).
    pub backend: &'static str,
    /// Per rank, by rank.
    pub ranks: Vec<MeasuredRank>,
    /// The longest waits, longest first (at most [`TOP_WAITS`]).
    pub top_waits: Vec<WaitReport>,
    /// What the run should be told about, e.g. messages never received (empty from
    /// [`MeasuredReport::new`]; the launcher adds the run's).
    pub warnings: Vec<String>,
}

impl MeasuredReport {
    /// The report of a run of `backend` from its `trace` (`None`: a run that recorded
    /// nothing, such as one that could not start) and the time each rank ended.
    pub fn new(backend: &'static str, trace: Option<&Trace>, finish_ns: &[u64]) -> Self {
        let events = trace.map_or(&[][..], Trace::events);
        let n = trace.map_or(0, Trace::ranks).max(finish_ns.len() as u32);
        let mut ranks: Vec<MeasuredRank> = (0..n)
            .map(|rank| MeasuredRank {
                rank,
                end_ns: finish_ns.get(rank as usize).copied().unwrap_or(0),
                ..MeasuredRank::default()
            })
            .collect();
        let mut waits = Vec::new();
        for e in events {
            match *e {
                TraceEvent::Span {
                    rank,
                    name,
                    start_ns,
                    end_ns,
                    ..
                } => {
                    let r = &mut ranks[rank as usize];
                    if name == "compute" {
                        r.compute_ns += end_ns - start_ns;
                    } else {
                        r.blocked_ns += end_ns - start_ns;
                        waits.push(WaitReport {
                            rank,
                            call: name,
                            since_ns: start_ns,
                            waited_ns: end_ns - start_ns,
                            waiting_for: None,
                        });
                    }
                }
                TraceEvent::Message {
                    from,
                    to,
                    arrival_ns,
                    bytes,
                    ..
                } => {
                    ranks[from as usize].sent_msgs += 1;
                    ranks[from as usize].sent_bytes += bytes as u64;
                    if arrival_ns.is_some() {
                        ranks[to as usize].recv_msgs += 1;
                        ranks[to as usize].recv_bytes += bytes as u64;
                    }
                }
            }
        }
        // Longest first; equally long ones by start, then rank (the trace is in start order).
        waits.sort_by_key(|w| (std::cmp::Reverse(w.waited_ns), w.since_ns, w.rank));
        waits.truncate(TOP_WAITS);
        MeasuredReport {
            backend,
            ranks,
            top_waits: waits,
            warnings: Vec::new(),
        }
    }

    /// The run's time: when its last rank ended, ns.
    pub fn run_ns(&self) -> u64 {
        self.ranks.iter().map(|r| r.end_ns).max().unwrap_or(0)
    }

    /// The report as one JSON object for scripts: every field plus `run_ns`.
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            run_ns: u64,
            #[serde(flatten)]
            report: &'a MeasuredReport,
        }
        let json = Json {
            run_ns: self.run_ns(),
            report: self,
        };
        // Invariant: plain data with string keys always serialises.
        serde_json::to_string_pretty(&json).expect("a report serialises to JSON")
    }
}

/// Ranks listed one per line up to this many; beyond, the first half of them and a count.
const LIST_RANKS: usize = 64;

impl fmt::Display for MeasuredReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let t = self.run_ns();
        writeln!(out, "mpsim {} report (measured, host time)", self.backend).ok();
        writeln!(out, "ranks            {}", self.ranks.len()).ok();
        writeln!(out, "run time         {t} ns ({})", seconds(t)).ok();
        let (msgs, bytes) = self
            .ranks
            .iter()
            .fold((0, 0), |(m, b), r| (m + r.sent_msgs, b + r.sent_bytes));
        writeln!(out, "traffic          messages        bytes").ok();
        writeln!(out, "  {:<12} {msgs:>10} {bytes:>12}", "all").ok();
        writeln!(
            out,
            "rank          end_ns    compute_ns    blocked_ns   sent_msgs   recv_msgs"
        )
        .ok();
        let shown = if self.ranks.len() <= LIST_RANKS {
            &self.ranks[..]
        } else {
            &self.ranks[..LIST_RANKS / 2]
        };
        for r in shown {
            writeln!(
                out,
                "{:<6} {:>13} {:>13} {:>13} {:>11} {:>11}",
                r.rank, r.end_ns, r.compute_ns, r.blocked_ns, r.sent_msgs, r.recv_msgs
            )
            .ok();
        }
        if shown.len() < self.ranks.len() {
            writeln!(out, "... {} more ranks", self.ranks.len() - shown.len()).ok();
        }
        write_top_waits(&mut out, &self.top_waits);
        write_warnings(&mut out, "warning: ", &self.warnings);
        f.write_str(&out)
    }
}
