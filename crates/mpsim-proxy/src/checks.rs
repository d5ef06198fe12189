//! The run's checks of a C program against MPI's rules, beside its execution: a ledger the
//! proxies of all ranks share (they all live in the `mpsim run` process), fed with what each
//! rank's calls say of their data (`mpsim_door::check`), read when the run has ended.
//!
//! Nothing here changes what the run sends or when: the simulated messages are the program's
//! own, and the ledger is host memory. The findings are a pure function of what the ledger
//! holds when the run ends, and a simulated run, sequential or parallel, makes the same calls
//! up to its end (the partitions run the same events as a sequential run), so the same run,
//! model and seed gives the same findings byte for byte: which rank reached a collective first
//! in host time never shows.
//!
//! - **collective-mismatch**: the calls of a communicator's `k`-th collective, one per rank,
//!   are compared when the last member makes it (or at the end of the run, if some never did):
//!   the same collective, root and operation, and each pair of ranks' type signatures match
//!   (what one sends to the other is what the other expects from it, MPI 5.1.2).
//! - **type-mismatch**: a point-to-point message's type signature against the receive's
//!   (`MPI_BYTE` and `MPI_PACKED` match anything, MPI 3.3.1).
//! - **comm-leak**, **group-leak**, **type-leak**, **op-leak**, **request-leak** (warnings):
//!   communicators, groups, datatypes, operations a rank never freed by `MPI_Finalize`, and
//!   requests it neither waited for nor freed that were not in flight (persistent requests
//!   left inactive, transfers with `MPI_PROC_NULL`). A request still in flight at
//!   `MPI_Finalize` is an error of the run, also classed `request-leak`.
//!
//! Each finding names the calls it is about with their source lines where the program's build
//! allows it (`crate::site`): looked up when the finding is made, never for a call that is fine.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use mpsim::Comm;
use mpsim_door::check::{Blocks, Coll, Sig};
use rustc_hash::FxHashMap as HashMap;

use crate::site::Sites;

/// How many findings of one class are written out; the rest are counted.
const SHOWN_PER_CLASS: usize = 10;

/// One thing the checks found.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// Virtual time it is about (the earliest call it names), for the order of the list.
    pub time_ns: u64,
    /// Its class: a stable name a script can count (`docs/c.md`).
    pub class: &'static str,
    /// Whether the run is wrong for it (else a warning).
    pub error: bool,
    /// What was found.
    pub text: String,
}

/// The shared ledger, and the source lines of the calls it names.
pub struct Checks {
    ledger: Mutex<Ledger>,
    /// Where the program's calls were made (`site`).
    pub(crate) sites: Sites,
}

#[derive(Default)]
struct Ledger {
    /// Collectives not yet made by every member: (communicator id, sequence number).
    colls: BTreeMap<(u64, u64), Entry>,
    /// Point-to-point sends not yet received: (communicator id, source, destination, tag),
    /// in the order they were sent (MPI's non-overtaking rule makes it the order they match).
    sends: HashMap<(u64, u32, u32, i32), VecDeque<Sent>>,
    /// How many queues of `sends` are empty: a stream's queue stays when its last message is
    /// received, for its next message to find (a ring's every message would otherwise add
    /// one and remove it), until the empty ones are many ([`Ledger::emptied`]).
    empty: usize,
    findings: Vec<Finding>,
}

/// Empty queues `sends` may hold before they are dropped, at least.
const EMPTY_KEPT: usize = 4096;

impl Ledger {
    /// A queue of `sends` became empty. When the empty ones pass [`EMPTY_KEPT`] and half the
    /// queues, all of them are dropped: a sweep of the map follows as many messages as half
    /// its length, constant time per message, and memory stays within twice the streams
    /// with messages in flight.
    fn emptied(&mut self) {
        self.empty += 1;
        if self.empty > EMPTY_KEPT.max(self.sends.len() / 2) {
            self.sends.retain(|_, q| !q.is_empty());
            self.empty = 0;
        }
    }
}

struct Entry {
    size: u32,
    comm: String,
    calls: BTreeMap<u32, Call>,
}

/// One rank's collective call.
struct Call {
    world: u32,
    time_ns: u64,
    /// The call's return address in the program (`Sites`).
    site: u64,
    rec: Coll,
}

/// A kind of object a program makes and must free: its finding's class, its name, the call
/// that frees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leak {
    pub class: &'static str,
    pub what: &'static str,
    pub free: &'static str,
}

/// The kinds of objects whose leaks are warnings, in the order `MPI_Finalize` counts them.
pub(crate) const LEAKS: [Leak; 5] = [
    Leak {
        class: "comm-leak",
        what: "communicator",
        free: "MPI_Comm_free",
    },
    Leak {
        class: "group-leak",
        what: "group",
        free: "MPI_Group_free",
    },
    Leak {
        class: "type-leak",
        what: "datatype",
        free: "MPI_Type_free",
    },
    Leak {
        class: "op-leak",
        what: "operation",
        free: "MPI_Op_free",
    },
    Leak {
        class: "request-leak",
        what: "inactive or completed request",
        free: "MPI_Request_free, or a wait",
    },
];

/// A message sent, as its receive will see it.
pub(crate) struct Sent {
    /// Shared with the proxy's last record (`Proxy::take_record`).
    pub sig: Option<Arc<Sig>>,
    pub call: &'static str,
    pub world: u32,
    pub time_ns: u64,
    /// The send's return address in the program (`Sites`).
    pub site: u64,
}

/// A receive's expectation.
#[derive(Clone, Debug)]
pub(crate) struct Expect {
    pub sig: Arc<Sig>,
    pub call: &'static str,
    pub time_ns: u64,
    /// The receive's return address in the program (`Sites`).
    pub site: u64,
}

/// A receive's part in the type checks, held with it until it completes.
pub(crate) struct RecvCheck {
    pub comm: Comm,
    /// Its source and tag patterns (the wire's, wildcards included).
    pub source: i64,
    pub tag: i64,
    /// Its place among the rank's receives, in the order they were posted.
    pub seq: u64,
    pub expect: Option<Expect>,
}

/// How the report names communicator `c`.
pub(crate) fn describe(c: &Comm, world: &Comm) -> String {
    if c.id() == world.id() {
        return "MPI_COMM_WORLD".into();
    }
    let n = c.size();
    let shown: Vec<String> = (0..n.min(8))
        .map(|r| c.world_rank_of(r).to_string())
        .collect();
    format!(
        "a communicator of {n} rank{} (world ranks {}{})",
        if n == 1 { "" } else { "s" },
        shown.join(", "),
        if n > 8 { ", ..." } else { "" }
    )
}

impl Checks {
    /// The checks of a run of `ranks` ranks of the executable `program`.
    pub(crate) fn new(program: std::path::PathBuf, ranks: u32) -> Self {
        Checks {
            ledger: Mutex::default(),
            sites: Sites::new(program, ranks),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Rank `c.rank()` of `c` made its `seq`-th collective on `c`, as `rec` says, from
    /// return address `site` (looked up only when the collective's calls do not match).
    pub(crate) fn collective(&self, c: &Comm, world: &Comm, seq: u64, rec: Coll, site: u64) {
        let call = Call {
            world: world.rank(),
            time_ns: c.now_ns(),
            site,
            rec,
        };
        let mut l = self.ledger();
        let key = (c.id(), seq);
        let entry = l.colls.entry(key).or_insert_with(|| Entry {
            size: c.size(),
            comm: describe(c, world),
            calls: BTreeMap::new(),
        });
        entry.calls.insert(c.rank(), call);
        if entry.calls.len() as u32 == entry.size
            && let Some(e) = l.colls.remove(&key)
            && let Some(f) = judge(&e, seq, &self.sites)
        {
            l.findings.push(f);
        }
    }

    /// A point-to-point message from world rank `source` to world rank `dest` with `tag` on
    /// `c` was sent.
    pub(crate) fn sent(&self, c: &Comm, source: u32, dest: u32, tag: i32, s: Sent) {
        let mut l = self.ledger();
        let l = &mut *l;
        match l.sends.entry((c.id(), source, dest, tag)) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let queue = e.into_mut();
                if queue.is_empty() {
                    l.empty -= 1;
                }
                queue.push_back(s);
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(VecDeque::from([s]));
            }
        }
    }

    /// The send `sent` recorded last on its stream failed without sending (a buffered send
    /// that did not fit, returned under `MPI_ERRORS_RETURN`): its signature is taken back, so
    /// that the stream's next receive is checked against the next message that went. Only
    /// this rank adds to the stream, so its last entry is that send's.
    pub(crate) fn unsent(&self, c: &Comm, source: u32, dest: u32, tag: i32) {
        let mut l = self.ledger();
        let key = (c.id(), source, dest, tag);
        if let Some(queue) = l.sends.get_mut(&key)
            && queue.pop_back().is_some()
            && queue.is_empty()
        {
            l.emptied();
        }
    }

    /// Rank `c.rank()` received a message from `source` with `tag` on `c` into a receive
    /// that expected `expect` (`None`: not known), the `k`-th of the messages of that stream
    /// not yet received it could be (the receives posted before it, still pending, may take
    /// the earlier ones: among those `k`, one that matches is taken first).
    pub(crate) fn received(
        &self,
        c: &Comm,
        world: &Comm,
        source: u32,
        tag: i32,
        expect: Option<&Expect>,
        k: usize,
    ) {
        let mut l = self.ledger();
        // World ranks, as `sent` keys them (an intercommunicator's ranks name two groups).
        let key = (c.id(), c.world_rank_of(source), world.rank(), tag);
        let Some(queue) = l.sends.get_mut(&key) else {
            return;
        };
        let window = k.clamp(1, queue.len().max(1));
        let pick = expect
            .and_then(|e| {
                queue.iter().take(window).position(|s| {
                    s.sig
                        .as_ref()
                        .is_none_or(|sig| sig.received_as(&e.sig, true) != Some(false))
                })
            })
            .unwrap_or(0);
        let Some(sent) = queue.remove(pick) else {
            return;
        };
        if queue.is_empty() {
            l.emptied();
        }
        let (Some(e), Some(sig)) = (expect, sent.sig.as_ref()) else {
            return;
        };
        if sig.received_as(&e.sig, true) != Some(false) {
            return;
        }
        let text = format!(
            "{}: rank {} sent {} with tag {tag} ({}{} at t={} ns); rank {} received it as {} \
             ({}{} at t={} ns): the type signatures differ",
            describe(c, world),
            sent.world,
            sig.text,
            sent.call,
            self.sites.from(sent.site),
            sent.time_ns,
            world.rank(),
            e.sig.text,
            e.call,
            self.sites.from(e.site),
            e.time_ns,
        );
        l.findings.push(Finding {
            time_ns: sent.time_ns.min(e.time_ns),
            class: "type-mismatch",
            error: true,
            text,
        });
    }

    /// Rank `world.rank()` finalized with `n` objects of a kind it never freed: a warning of
    /// class `leak.class` (`comm-leak`, `group-leak`, ...).
    /// `site`: `MPI_Finalize`'s return address in the program.
    pub(crate) fn leak(&self, world: &Comm, leak: Leak, n: usize, site: u64) {
        let text = format!(
            "rank {}: MPI_Finalize{} with {n} {}{} never freed ({}) at t={} ns",
            world.rank(),
            self.sites.from(site),
            leak.what,
            if n == 1 { "" } else { "s" },
            leak.free,
            world.now_ns()
        );
        self.ledger().findings.push(Finding {
            time_ns: world.now_ns(),
            class: leak.class,
            error: false,
            text,
        });
    }

    /// What the checks found, once the run is over: in order of virtual time.
    pub fn findings(&self) -> Vec<Finding> {
        let mut l = self.ledger();
        let open = std::mem::take(&mut l.colls);
        for ((_, seq), e) in open {
            if let Some(f) = judge(&e, seq, &self.sites) {
                l.findings.push(f);
            }
        }
        let mut out = std::mem::take(&mut l.findings);
        out.sort();
        out
    }
}

/// Writes `findings` (to standard error, after the run's own error if any): one line each,
/// `mpsim: finding [CLASS] ...` (`[CLASS, warning]` for a warning), at most
/// [`SHOWN_PER_CLASS`] of a class, then a count. `run_error`: the class of the run's own
/// error, counted as a finding of its class unless a finding of that class explains it
/// already (a collective's counts that differ make both the run's error and a finding).
pub fn write_findings(findings: &[Finding], run_error: Option<&'static str>) -> String {
    let run_error = run_error.filter(|c| !findings.iter().any(|f| f.class == *c));
    let mut out = String::new();
    let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        let n = shown.entry(f.class).or_default();
        *n += 1;
        if *n <= SHOWN_PER_CLASS {
            let warn = if f.error { "" } else { ", warning" };
            out.push_str(&format!("mpsim: finding [{}{warn}] {}\n", f.class, f.text));
        }
    }
    for (class, &n) in &shown {
        if n > SHOWN_PER_CLASS {
            out.push_str(&format!(
                "mpsim: finding [{class}] ... and {} more\n",
                n - SHOWN_PER_CLASS
            ));
        }
    }
    if let Some(class) = run_error {
        out.push_str(&format!(
            "mpsim: finding [{class}] the run's error (above)\n"
        ));
    }
    let errors = findings.iter().filter(|f| f.error).count() + run_error.is_some() as usize;
    let warnings = findings.len() + run_error.is_some() as usize - errors;
    if errors + warnings > 0 {
        out.push_str(&format!(
            "mpsim: findings: {errors} error{}, {warnings} warning{}\n",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        ));
    }
    out
}

/// The finding of a collective's calls, if they do not match: the first difference, ranks in
/// order (so the same calls give the same finding, whichever rank made its call first).
fn judge(e: &Entry, seq: u64, sites: &Sites) -> Option<Finding> {
    let mut calls = e.calls.iter();
    let (_, first) = calls.next()?;
    let head = |c: &Call| {
        let from = sites.from(c.site);
        format!(
            "rank {} ({}{from} at t={} ns)",
            c.world, c.rec.call, c.time_ns
        )
    };
    let partial = if e.calls.len() < e.size as usize {
        format!(
            " ({} of its {} ranks made the call before the run ended)",
            e.calls.len(),
            e.size
        )
    } else {
        String::new()
    };
    let found = |a: &Call, b: &Call, what: String| Finding {
        time_ns: a.time_ns.min(b.time_ns),
        class: "collective-mismatch",
        error: true,
        text: format!(
            "{}, collective #{}{partial}: {} and {}: {what}",
            e.comm,
            seq + 1,
            head(a),
            head(b)
        ),
    };
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
    for (_, c) in calls {
        if c.rec.call != first.rec.call {
            return Some(found(first, c, "different collectives".into()));
        }
        if c.rec.root != first.rec.root {
            let (a, b) = (first.rec.root.unwrap_or(-1), c.rec.root.unwrap_or(-1));
            return Some(found(first, c, format!("roots differ ({a} and {b})")));
        }
        if c.rec.op != first.rec.op {
            return Some(found(
                first,
                c,
                format!(
                    "operations differ ({} and {})",
                    show(&first.rec.op),
                    show(&c.rec.op)
                ),
            ));
        }
    }
    let (i, j, s, x) = data_mismatch(e)?;
    let (ci, cj) = (&e.calls[&i], &e.calls[&j]);
    let what = if s.bytes != x.bytes {
        format!(
            "rank {} sends {} ({} bytes) to rank {}, which expects {} ({} bytes)",
            ci.world, s.text, s.bytes, cj.world, x.text, x.bytes
        )
    } else {
        format!(
            "rank {} sends {} to rank {}, which expects {}: the type signatures differ",
            ci.world, s.text, cj.world, x.text
        )
    };
    Some(found(ci, cj, what))
}

/// The first pair (receiver `j`, then sender `i`, both in rank order) whose signatures do not
/// match: (i, j, what i sends, what j expects). Linear in the ranks when every rank sends and
/// expects the same of all (all but the `v` and `w` collectives).
fn data_mismatch(e: &Entry) -> Option<(u32, u32, &Sig, &Sig)> {
    let differ = |s: &Sig, x: &Sig| s.received_as(x, false) == Some(false);
    let uniform = e.calls.values().all(|c| {
        !matches!(c.rec.sends, Blocks::Each(_)) && !matches!(c.rec.expects, Blocks::Each(_))
    });
    if uniform {
        // The distinct signatures sent, each with the first rank that sends it (usually one).
        let mut senders: Vec<(u32, &Sig)> = Vec::new();
        for (&i, c) in &e.calls {
            if let Blocks::All(s) = &c.rec.sends
                && !senders.iter().any(|(_, t)| *t == s)
            {
                senders.push((i, s));
            }
        }
        for (&j, c) in &e.calls {
            let Blocks::All(x) = &c.rec.expects else {
                continue;
            };
            if let Some(&(i, s)) = senders
                .iter()
                .filter(|(_, s)| differ(s, x))
                .min_by_key(|(i, _)| *i)
            {
                return Some((i, j, s, x));
            }
        }
        return None;
    }
    for (&j, cj) in &e.calls {
        for (&i, ci) in &e.calls {
            if let (Some(s), Some(x)) =
                (ci.rec.sends.get(j as usize), cj.rec.expects.get(i as usize))
                && differ(s, x)
            {
                return Some((i, j, s, x));
            }
        }
    }
    None
}

/// The class of a run's own error, as the findings name classes (`docs/c.md`).
pub fn classify(e: &mpsim::Error) -> &'static str {
    use mpsim::Error as E;
    match e {
        E::Deadlock { .. } => return "deadlock",
        E::Livelock { .. } => return "livelock",
        E::CollectiveMismatch { .. } | E::CommOrder { .. } => return "collective-mismatch",
        E::Truncate { .. } => return "truncation",
        E::BufferOverflow { .. } => return "bsend-overflow",
        E::InvalidRank { .. }
        | E::InvalidTag { .. }
        | E::InvalidComm { .. }
        | E::InvalidRoot { .. }
        | E::InvalidBuffer { .. }
        | E::InvalidOp { .. }
        | E::InvalidRequest { .. }
        | E::InvalidArgument { .. } => return "invalid-argument",
        E::Abort { .. } => return "abort",
        E::PendingAtExit { .. } => return "request-leak",
        _ => {}
    }
    let t = e.to_string();
    if t.contains("MPI_Finalize with") && t.contains("request") {
        "request-leak"
    } else if t.contains("was written while its nonblocking") && t.contains("was in flight") {
        "buffer-in-flight"
    } else if t.contains("before MPI_Finalize; its last MPI call") {
        "crash"
    } else if t.contains("truncated") {
        "truncation"
    } else if let Some(class) = t
        .rsplit_once("(MPI error class ")
        .and_then(|(_, c)| c.trim_end_matches(')').parse::<i32>().ok())
    {
        match class {
            1..=13 => "invalid-argument",
            15 => "truncation",
            _ => "error",
        }
    } else {
        "error"
    }
}
