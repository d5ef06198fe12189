//! The end-of-run report of every backend: a simulated run's prediction (`docs/timing.md` §6)
//! and a real run's measurement, in one type, [`Report`], so that a prediction reads beside
//! the run it predicts, field by field, rank by rank. Per rank: its final clock, compute,
//! communication and blocked time, and the messages it sent, received and left unreceived by
//! protocol; for the run: the longest waits, why it stopped, and its warnings. A figure one
//! backend cannot measure is `None` (`null` in JSON, `-` in text). Rendering is deterministic:
//! the same report prints the same bytes.

use std::fmt::{self, Write as _};

use mpsim_proto::p2p::MessageCounts;

use crate::bsp_report::BspReport;
use crate::model::ComputeMode;
use crate::waits::WaitReport;

/// Messages and bytes by protocol: eager (standard, small), buffered, rendezvous (ssend and
/// large standard), ready ([`PROTOCOLS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Traffic {
    /// Message counts by protocol.
    pub messages: [u64; 4],
    /// Byte counts by protocol.
    pub bytes: [u64; 4],
}

impl Traffic {
    /// Messages of every protocol.
    pub fn total_messages(&self) -> u64 {
        self.messages.iter().fold(0, |a, &m| a.saturating_add(m))
    }

    /// Bytes of every protocol.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().fold(0, |a, &b| a.saturating_add(b))
    }

    /// Adds `other`'s counts to these (saturating).
    pub fn add(&mut self, other: &Traffic) {
        for i in 0..4 {
            self.messages[i] = self.messages[i].saturating_add(other.messages[i]);
            self.bytes[i] = self.bytes[i].saturating_add(other.bytes[i]);
        }
    }
}

impl From<MessageCounts> for Traffic {
    fn from(c: MessageCounts) -> Self {
        Traffic {
            messages: c.messages,
            bytes: c.bytes,
        }
    }
}

/// Names of the [`Traffic`] columns.
pub const PROTOCOLS: [&str; 4] = ["eager", "buffered", "rendezvous", "ready"];

/// The clock a report's times are read on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeBase {
    /// The simulator's virtual time, ns since the run's start (the same in every run).
    #[default]
    Virtual,
    /// The host's time, ns since the run's start, as measured by a real run.
    Host,
}

/// One rank's figures, in the report's [`TimeBase`].
///
/// `None` marks what the backend cannot measure: the threads backend knows when a rank
/// computed and when it was blocked in a wait (from the trace it records for the report), but
/// not the time its polls and requests cost, which only the simulator charges.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RankReport {
    /// World rank.
    pub rank: u32,
    /// Final clock, ns: under `sim` the rank's virtual clock; under `threads` when its
    /// program ended, since the run's start.
    pub clock_ns: u64,
    /// Time in `compute` / `compute_flops`, ns.
    pub compute_ns: u64,
    /// Time blocked in waits (a blocking call's wait, `wait`, `wait_all`, probes, ...), ns.
    pub blocked_ns: u64,
    /// Time charged to polls that found nothing, ns (`sim` only).
    pub poll_ns: Option<u64>,
    /// Per-request CPU overhead of nonblocking calls (`docs/extensions.md` X1), ns (`sim`
    /// only).
    pub overhead_ns: Option<u64>,
    /// Time in communication calls: blocked, polling and request overhead
    /// (`blocked_ns + poll_ns + overhead_ns`), ns (`sim` only). The rest of the clock is
    /// compute: `clock_ns = compute_ns + comm_ns` for a rank that finished.
    pub comm_ns: Option<u64>,
    /// The messages it sent: one per send started, by protocol.
    pub sent: Traffic,
    /// The messages its receives took: one per message matched to a receive (`recv`, `irecv`,
    /// `mrecv`; also one the program let go of after it matched, whose data was discarded with
    /// a warning). A probe receives nothing.
    pub received: Traffic,
    /// The messages that arrived for it and no receive took by the end of the run (each is
    /// also a warning, "was never received"), by protocol.
    pub unreceived: Traffic,
}

/// The report of a run, on any backend (see the module doc).
///
/// Under `sim` ([`TimeBase::Virtual`]) every field is known. Under `threads`
/// ([`TimeBase::Host`]) `events` and `compute` are `None`, and so are each rank's
/// `poll_ns`, `overhead_ns` and `comm_ns` ([`RankReport`]); its top waits are the longest wait
/// spans of its trace, each naming what it waited for when the wait was on one request.
///
/// ```
/// use mpsim_sim::{RankReport, Report, TimeBase};
///
/// // What a real run measured: no events, no poll or overhead time.
/// let report = Report {
///     backend: "threads",
///     time_base: TimeBase::Host,
///     ranks: vec![RankReport { rank: 0, clock_ns: 1500, compute_ns: 1000, ..RankReport::default() }],
///     ..Report::default()
/// };
/// let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
/// assert_eq!((json["run_ns"].as_u64(), json["time_base"].as_str()), (Some(1500), Some("host")));
/// assert!(json["predicted_ns"].is_null() && json["ranks"][0]["comm_ns"].is_null());
/// assert!(report.to_string().contains("\nevents           -\n"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// The backend that ran it: `sim` or `threads`.
    pub backend: &'static str,
    /// The clock of its times.
    pub time_base: TimeBase,
    /// Per rank, by rank.
    pub ranks: Vec<RankReport>,
    /// Events processed (`sim` only).
    pub events: Option<u64>,
    /// The longest blocking waits of the run, longest first (at most
    /// [`TOP_WAITS`](crate::TOP_WAITS); of equally long ones, those that ended first).
    pub top_waits: Vec<WaitReport>,
    /// Why the run stopped early, if it did: its error.
    pub stopped: Option<String>,
    /// Messages nobody received, receives dropped with their data, and similar remarks
    /// (`docs/timing.md` S14), on a failed run too.
    pub warnings: Vec<String>,
    /// How compute was charged (`sim` only).
    pub compute: Option<ComputeMode>,
    /// Per collective, algorithm and reason for choosing it: the calls and the time in them
    /// (empty for a run that made no collective call).
    pub collectives: Vec<CollectiveLine>,
    /// The supersteps of a BSP program (`mpsim::bsp`), absent for others (and from the JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bsp: Option<BspReport>,
}

/// One line of a report's collectives table: the calls of one collective that ran one
/// algorithm, chosen for one reason, and the time spent in them, in the report's
/// [`TimeBase`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CollectiveLine {
    /// The collective (`allreduce`; `reduce_scatter` for both reduce-scatters).
    pub collective: &'static str,
    /// The algorithm (`ring`).
    pub algorithm: &'static str,
    /// Why it was chosen: `forced`, `--coll`, `--reproducible`, `model file`, `model file:
    /// reproducible`, `only algorithm`, `model cost`, `table: no model`, `table: counts vary
    /// by rank` (`docs/collectives.md` §4), or `the backend's library` (algorithm
    /// `mpi_library`: MPI's own collective, on `--backend mpi`).
    pub reason: &'static str,
    /// Collective operations: each call on a communicator counts once (on its rank 0).
    pub calls: u64,
    /// Time from call to return, summed over every rank and call, ns.
    pub rank_ns: u64,
    /// The longest time one rank spent in one call, ns.
    pub longest_ns: u64,
}

impl Report {
    /// The run's time: its largest final clock, ns (under `sim` the predicted time, under
    /// `threads` when the last rank ended).
    pub fn run_ns(&self) -> u64 {
        self.ranks.iter().map(|r| r.clock_ns).max().unwrap_or(0)
    }

    /// Predicted run time: the largest final clock, ns ([`Report::run_ns`]; of a real run,
    /// the time it took, which its JSON does not call a prediction).
    pub fn predicted_ns(&self) -> u64 {
        self.run_ns()
    }

    /// The report as one JSON object for scripts: every field of the report plus `run_ns`,
    /// `predicted_ns` (`null` for a real run), `protocols` (the names of the traffic
    /// columns), `total_sent` and `total_unreceived`. A field a backend cannot measure is
    /// `null`.
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            run_ns: u64,
            predicted_ns: Option<u64>,
            protocols: [&'static str; 4],
            total_sent: Traffic,
            total_unreceived: Traffic,
            #[serde(flatten)]
            report: &'a Report,
        }
        let json = Json {
            run_ns: self.run_ns(),
            predicted_ns: (self.time_base == TimeBase::Virtual).then(|| self.run_ns()),
            protocols: PROTOCOLS,
            total_sent: self.total_sent(),
            total_unreceived: self.total_unreceived(),
            report: self,
        };
        // Invariant: plain data with string keys always serialises.
        serde_json::to_string_pretty(&json).expect("a report serialises to JSON")
    }

    /// Traffic summed over ranks (sent).
    pub fn total_sent(&self) -> Traffic {
        let mut t = Traffic::default();
        for r in &self.ranks {
            t.add(&r.sent);
        }
        t
    }

    /// Messages never received, summed over ranks.
    pub fn total_unreceived(&self) -> Traffic {
        let mut t = Traffic::default();
        for r in &self.ranks {
            t.add(&r.unreceived);
        }
        t
    }
}

/// Ranks listed one per line up to this many; beyond, the first half of them and a count.
const LIST_RANKS: usize = 64;

/// A figure a backend measured, or `-` for one it cannot.
struct Cell(Option<u64>);

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) => fmt::Display::fmt(&v, f),
            None => f.pad("-"),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let t = self.run_ns();
        match self.time_base {
            TimeBase::Virtual => {
                writeln!(out, "mpsim {} report", self.backend).ok();
                writeln!(out, "ranks            {}", self.ranks.len()).ok();
                writeln!(out, "predicted time   {t} ns ({})", seconds(t)).ok();
            }
            TimeBase::Host => {
                writeln!(out, "mpsim {} report (measured, host time)", self.backend).ok();
                writeln!(out, "ranks            {}", self.ranks.len()).ok();
                writeln!(out, "run time         {t} ns ({})", seconds(t)).ok();
            }
        }
        writeln!(out, "events           {}", Cell(self.events)).ok();
        let compute = match self.compute {
            Some(ComputeMode::Modeled) => "modeled (explicit compute calls)",
            Some(ComputeMode::Measured) => "measured (host CPU time; NOT deterministic)",
            Some(ComputeMode::Ignored) => "ignored",
            None => "-",
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
        let unreceived = self.total_unreceived();
        if unreceived.total_messages() > 0 {
            writeln!(
                out,
                "never received   {} messages, {} bytes (arrived, taken by no receive)",
                unreceived.total_messages(),
                unreceived.total_bytes()
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
                Cell(r.comm_ns),
                r.blocked_ns,
                r.sent.total_messages(),
                r.received.total_messages()
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
        write_collectives(&mut out, &self.collectives);
        if let Some(bsp) = &self.bsp {
            bsp.write_text(&mut out);
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

/// The collectives table of a report (nothing when the run made no collective call).
pub fn write_collectives(out: &mut String, lines: &[CollectiveLine]) {
    if lines.is_empty() {
        return;
    }
    let row = |out: &mut String, cells: [&dyn fmt::Display; 6]| {
        let [a, b, c, d, e, g] = cells;
        writeln!(out, "  {a:<15} {b:<27} {c:<26} {d:>9} {e:>16} {g:>14}").ok();
    };
    writeln!(out, "collectives").ok();
    row(
        out,
        [
            &"collective",
            &"algorithm",
            &"chosen by",
            &"calls",
            &"rank_time_ns",
            &"longest_ns",
        ],
    );
    for l in lines {
        row(
            out,
            [
                &l.collective,
                &l.algorithm,
                &l.reason,
                &l.calls,
                &l.rank_ns,
                &l.longest_ns,
            ],
        );
    }
}

/// The "top waits" table of a report (nothing when there are none).
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
