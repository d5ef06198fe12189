//! What a simulated run tells the user (`spec/timing.md` §6): predicted time, per-rank clocks,
//! compute / communication / blocked time, traffic by protocol, and the longest waits.
//! Rendering is deterministic: the same run prints the same bytes.

use std::fmt::{self, Write as _};

use crate::model::ComputeMode;
use crate::waits::WaitReport;

/// Messages and bytes by protocol: eager (standard, small), buffered, rendezvous (ssend and
/// large standard), ready.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    /// Message counts by protocol.
    pub messages: [u64; 4],
    /// Byte counts by protocol.
    pub bytes: [u64; 4],
}

/// Names of the [`Traffic`] columns.
pub const PROTOCOLS: [&str; 4] = ["eager", "buffered", "rendezvous", "ready"];

/// One rank's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RankReport {
    /// World rank.
    pub rank: u32,
    /// Final virtual clock, ns.
    pub clock_ns: u64,
    /// Time in `compute`, ns.
    pub compute_ns: u64,
    /// Time blocked in waits, ns.
    pub blocked_ns: u64,
    /// Time charged to polls that found nothing, ns.
    pub poll_ns: u64,
    /// Per-request CPU overhead of nonblocking calls (EXTENSIONS.md X1), ns.
    pub overhead_ns: u64,
    /// Time in communication calls: blocked, polling and request overhead
    /// (`blocked_ns + poll_ns + overhead_ns`), ns. The rest of the clock is compute:
    /// `clock_ns = compute_ns + comm_ns` for a rank that finished.
    pub comm_ns: u64,
    /// What it sent.
    pub sent: Traffic,
    /// What it received.
    pub received: Traffic,
}

/// The report of a simulated run.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Per rank, by rank.
    pub ranks: Vec<RankReport>,
    /// Events processed.
    pub events: u64,
    /// The longest blocking waits of the run, longest first (at most
    /// [`TOP_WAITS`](crate::TOP_WAITS); of equally long ones, those that ended first).
    pub top_waits: Vec<WaitReport>,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// Messages nobody received, and similar remarks (S14).
    pub warnings: Vec<String>,
    /// How compute was charged.
    pub compute: ComputeMode,
}

impl Report {
    /// Predicted run time: the largest final clock, ns.
    pub fn predicted_ns(&self) -> u64 {
        self.ranks.iter().map(|r| r.clock_ns).max().unwrap_or(0)
    }

    /// The report as one JSON object for scripts: every field of the report plus
    /// `predicted_ns`, `protocols` (the names of the traffic columns) and `total_sent`.
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            predicted_ns: u64,
            protocols: [&'static str; 4],
            total_sent: Traffic,
            #[serde(flatten)]
            report: &'a Report,
        }
        let json = Json {
            predicted_ns: self.predicted_ns(),
            protocols: PROTOCOLS,
            total_sent: self.total_sent(),
            report: self,
        };
        // Invariant: plain data with string keys always serialises.
        serde_json::to_string_pretty(&json).expect("a report serialises to JSON")
    }

    /// Traffic summed over ranks (sent).
    pub fn total_sent(&self) -> Traffic {
        let mut t = Traffic::default();
        for r in &self.ranks {
            for i in 0..4 {
                t.messages[i] += r.sent.messages[i];
                t.bytes[i] += r.sent.bytes[i];
            }
        }
        t
    }
}

/// Ranks listed one per line up to this many; beyond, a summary.
const LIST_RANKS: usize = 64;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let p = self.predicted_ns();
        writeln!(out, "mpsim sim report").ok();
        writeln!(out, "ranks            {}", self.ranks.len()).ok();
        writeln!(out, "predicted time   {} ns ({})", p, seconds(p)).ok();
        writeln!(out, "events           {}", self.events).ok();
        let compute = match self.compute {
            ComputeMode::Modeled => "modeled (explicit compute calls)",
            ComputeMode::Measured => "measured (host CPU time; NOT deterministic)",
            ComputeMode::Ignored => "ignored",
        };
        writeln!(out, "compute          {compute}").ok();
        if let Some(why) = &self.stopped {
            writeln!(out, "stopped          {why}").ok();
        }
        let total = self.total_sent();
        writeln!(out, "traffic          messages        bytes").ok();
        for (i, name) in PROTOCOLS.iter().enumerate() {
            writeln!(
                out,
                "  {name:<12} {:>10} {:>12}",
                total.messages[i], total.bytes[i]
            )
            .ok();
        }
        writeln!(
            out,
            "rank        clock_ns    compute_ns       comm_ns    blocked_ns   sent_msgs   recv_msgs"
        )
        .ok();
        let line = |out: &mut String, r: &RankReport| {
            writeln!(
                out,
                "{:<6} {:>13} {:>13} {:>13} {:>13} {:>11} {:>11}",
                r.rank,
                r.clock_ns,
                r.compute_ns,
                r.comm_ns,
                r.blocked_ns,
                r.sent.messages.iter().sum::<u64>(),
                r.received.messages.iter().sum::<u64>()
            )
            .ok();
        };
        if self.ranks.len() <= LIST_RANKS {
            for r in &self.ranks {
                line(&mut out, r);
            }
        } else {
            for r in &self.ranks[..LIST_RANKS / 2] {
                line(&mut out, r);
            }
            writeln!(out, "... {} more ranks", self.ranks.len() - LIST_RANKS / 2).ok();
        }
        write_top_waits(&mut out, &self.top_waits);
        write_warnings(&mut out, "warning: ", &self.warnings);
        f.write_str(&out)
    }
}

/// Warnings a text report lists one by one; the rest are counted (the JSON report has them
/// all). A run of millions of ranks can leave a warning per rank.
pub const LIST_WARNINGS: usize = 20;

/// `warnings`, a line each after `prefix`, as a text report lists them: the first
/// [`LIST_WARNINGS`], then how many more (the simulator's report, a real run's, and a real
/// run's warnings on standard error when it prints no report).
pub fn write_warnings(out: &mut String, prefix: &str, warnings: &[String]) {
    for w in warnings.iter().take(LIST_WARNINGS) {
        writeln!(out, "{prefix}{w}").ok();
    }
    if warnings.len() > LIST_WARNINGS {
        writeln!(
            out,
            "{prefix}... and {} more warnings (`--report json` lists them all)",
            warnings.len() - LIST_WARNINGS
        )
        .ok();
    }
}

/// The "top waits" table of a report (nothing when there are none): the simulator's, and the
/// measured report of a real run.
pub fn write_top_waits(out: &mut String, waits: &[WaitReport]) {
    if waits.is_empty() {
        return;
    }
    let row = |out: &mut String, cells: [&dyn fmt::Display; 6]| {
        let [a, b, c, d, e, g] = cells;
        writeln!(out, "{a:<9} {b:>13} {c:>6}  {d:<8} {e:>13}  {g}").ok();
    };
    row(
        out,
        [
            &"top waits",
            &"waited_ns",
            &"rank",
            &"call",
            &"since_ns",
            &"waiting for",
        ],
    );
    for w in waits {
        row(
            out,
            [
                &"",
                &w.waited_ns,
                &w.rank,
                &w.call,
                &w.since_ns,
                &w.waiting_for.as_deref().unwrap_or("-"),
            ],
        );
    }
}

/// `ns` as seconds with nine decimals (`1.500000000 s`).
pub fn seconds(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}
