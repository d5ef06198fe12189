//! A simulated run (`docs/timing.md` §5): its options, its partitions' event loops
//! (`partition.rs`) on one thread or several (`parallel.rs`), and the outcome made from what
//! they hand back: nothing left and a rank unfinished is a deadlock.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::rc::Rc;

use crate::rank::SimRank;
use mpsim_proto::deadlock::{DeadlockReport, LivelockReport, StuckRank};
use mpsim_proto::error::Error;
use mpsim_proto::interrupt::Interrupt;
use mpsim_proto::trace::{Trace, TraceEvent, TraceFilter};

use crate::event::Key;
use crate::host_memory::{self, CHECK_EVERY};
use crate::kernel::RankState;
use crate::model::{ComputeMode, Model};
use crate::parallel;
use crate::partition::{Livelocked, PartOutcome, Partition};
use crate::report::{Report, TimeBase};
use crate::waits::TopWaits;

/// The trace's process name: viewers show it above the rank tracks.
const PROCESS_NAME: &str = "mpsim sim";

/// The backend a simulated run's report names.
const BACKEND: &str = "sim";

/// How to simulate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of ranks.
    pub ranks: u32,
    /// The machine model.
    pub model: Model,
    /// Report an `rsend` that arrives before its receive (`ReadyNotPosted`).
    pub strict: bool,
    /// A buffered send that does not fit in the attached buffer is only returned to the
    /// program (`BufferOverflow`), not also the end of the run (the default).
    pub bsend_overflow_returns: bool,
    /// The order in which the ranks' programs are created (a permutation of `0..ranks`);
    /// `None` is ascending. Results never depend on it — tests shuffle it to prove that.
    pub spawn_order: Option<Vec<u32>>,
    /// Record a trace of every span and message ([`Outcome::trace`]).
    pub trace: bool,
    /// What the trace keeps: a window of virtual time and a set of ranks (`TraceFilter`'s
    /// rules); asked as each record is made, so that a long run's trace of a short window
    /// takes the memory of the window. Default: everything.
    pub trace_filter: TraceFilter,
    /// Stop the run with `Error::NoMemory` when the host has less than this many bytes of
    /// memory left available (Linux's `MemAvailable`), rather than be killed by the system
    /// when it runs out; `None`: 1% of the host's memory, at least 128 MiB.
    pub memory_floor: Option<u64>,
    /// Threads to run the simulation on (1: sequential). Each runs a contiguous block of
    /// ranks, as far ahead as the model's lookahead allows (`docs/timing.md` §5); the report
    /// and trace are the same, byte for byte, whatever the number. Used only when the
    /// lookahead is positive, and never more than one per rank. At most [`MAX_WORKERS`].
    pub workers: u32,
    /// Stop a run in which nothing but polls happened for this long (virtual ns) with
    /// [`Error::Livelock`]: no message in flight, every unfinished rank blocked or polling
    /// (a `test` loop for a message never sent). 0: never. Default 1 s.
    pub livelock_after_ns: u64,
    /// Stop the run when this flag is raised (a signal's handler raises it; `mpsim`'s
    /// `Launcher::run` installs one for `SIGINT` and `SIGTERM`), with
    /// [`Error::Interrupted`] and a report and trace of what ran until then. Looked at every
    /// 64 events, where the host's memory is (never per message). `None`: never stopped so.
    pub interrupt: Option<Interrupt>,
}

/// The most threads a simulation runs on ([`Options::workers`]). More threads than cores give
/// the same report more slowly (a round waits for every thread, each on a core in turn: a
/// one-trip ring of 1,000 ranks took 46 s on 1,000 threads and 2 cores), and tens of thousands
/// would exhaust the process's memory mappings (`vm.max_map_count`), which aborts it from
/// inside the Rust runtime at a thread's start.
pub const MAX_WORKERS: u32 = 1024;

impl Options {
    /// `ranks` ranks on `model`.
    pub fn new(ranks: u32, model: Model) -> Self {
        Options {
            ranks,
            model,
            strict: false,
            bsend_overflow_returns: false,
            spawn_order: None,
            trace: false,
            trace_filter: TraceFilter::default(),
            memory_floor: None,
            workers: 1,
            livelock_after_ns: crate::livelock::DEFAULT_AFTER_NS,
            interrupt: None,
        }
    }
}

/// The result of a simulated run: the report (also for a run stopped by an error, as of one
/// lookahead after the error's event, S16 as amended by D2 of `docs/extensions.md`)
/// and the error that stopped it.
#[derive(Debug)]
pub struct Outcome {
    /// The report.
    pub report: Report,
    /// The first error, if the run failed.
    pub error: Option<Error>,
    /// What each rank did, when [`Options::trace`] asked for it.
    pub trace: Option<Trace>,
}

/// Simulates `program` on `options.ranks` ranks.
///
/// `program` is called once per rank with that rank's runtime; the futures are polled only in
/// virtual-time order, each on the thread of its partition (this thread unless
/// [`Options::workers`] asks for more).
pub fn simulate<'a, F, Fut>(options: &Options, program: &'a F) -> Outcome
where
    F: Fn(Rc<SimRank>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    simulate_observed(options, program, &mut |_| {})
}

/// Where a run has got to, for a progress display ([`simulate_observed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Virtual time reached, ns.
    pub virtual_ns: u64,
    /// Events processed so far.
    pub events: u64,
    /// Ranks that have finished.
    pub finished: u32,
}

/// Events between two calls of the progress observer.
pub(crate) const OBSERVE_EVERY: u64 = 1 << 16;
// The observer is called from inside the memory watch's rarer branch (`enter_event`).
const _: () = assert!(OBSERVE_EVERY.is_multiple_of(CHECK_EVERY));

/// Like [`simulate`], calling `observe` every 65,536 events or so and once at the end. The
/// observer sees the run; it cannot change it (a progress bar reads the wall clock; the run
/// reads it only to pace its watch on the host's memory, `host_memory`).
pub fn simulate_observed<'a, F, Fut>(
    options: &Options,
    program: &'a F,
    observe: &mut dyn FnMut(Progress),
) -> Outcome
where
    F: Fn(Rc<SimRank>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let n = options.ranks;
    let checked = if n == 0 {
        Err(Error::InvalidArgument {
            what: "a simulated run needs at least 1 rank".into(),
        })
    } else {
        check_options(options)
            .and_then(|()| host_memory::check_fits(n, least_bytes_per_rank(size_of::<Fut>())))
    };
    if let Err(e) = checked {
        return refused(e, options.model.compute);
    }
    // Checked above: every partition takes its ranks from it.
    let order = options.spawn_order.as_deref();
    let workers = parallel::workers(options);
    if workers > 1 {
        return parallel::simulate(options, program, order, workers, observe);
    }
    let mut part = match Partition::new(options, program, 0..n, order) {
        Ok(part) => part,
        Err(e) => return refused(e, options.model.compute),
    };
    part.start_checkpoints();
    part.run::<false>(observe);
    let deadlock = {
        let k = part.kernel.borrow();
        k.stop.first.is_none() && k.counts.finished < n
    };
    merge(options, vec![part.close(deadlock)], observe)
}

/// The memory every rank surely needs when its program's future takes `future_bytes`: its
/// kernel state, its future and its runtime handle (two heap blocks, 16 bytes of allocator
/// header each), the handle itself and the slot pointing at the future. A lower bound (the
/// endpoints' queues grow with use), so a run refused for it could never have fitted.
fn least_bytes_per_rank(future_bytes: usize) -> u64 {
    (std::mem::size_of::<RankState>() + future_bytes + 2 * 16 + 32 + 8) as u64
}

/// The outcome of a run that could not start: its error, and a report of no ranks that says
/// why.
pub(crate) fn refused(error: Error, compute: ComputeMode) -> Outcome {
    Outcome {
        report: Report {
            backend: BACKEND,
            time_base: TimeBase::Virtual,
            ranks: Vec::new(),
            events: Some(0),
            top_waits: Vec::new(),
            stopped: Some(error.to_string()),
            warnings: Vec::new(),
            compute: Some(compute),
            collectives: Vec::new(),
            bsp: None,
        },
        error: Some(error),
        trace: None,
    }
}

/// The outcome of a run from what its partitions (in rank order) handed back: the first error
/// by event key (S16), or a deadlock if ranks are unfinished and nothing could move (S15), and
/// the report, each clock capped at the stop. `observe` hears where the run ended.
pub(crate) fn merge(
    options: &Options,
    parts: Vec<PartOutcome>,
    observe: &mut dyn FnMut(Progress),
) -> Outcome {
    let n = options.ranks;
    let events = parts.iter().map(|p| p.events).sum();
    let finished: u32 = parts.iter().map(|p| p.finished).sum();
    let now = parts.iter().map(|p| p.now).max().unwrap_or(0);
    observe(Progress {
        virtual_ns: now,
        events,
        finished,
    });
    let mut stop: Option<(Error, u64, Key)> = None;
    // Every partition found the same livelock, if any (`livelock`); each knows when its own
    // ranks last did anything but poll.
    let livelocked: Vec<Livelocked> = parts.iter().filter_map(|p| p.livelock).collect();
    let livelock = livelocked
        .first()
        .map(|first| (Livelocked::since(&livelocked), first.at, first.limit));
    let mut warnings = Vec::new();
    let mut blocked = Vec::new();
    let mut top_waits = Vec::with_capacity(parts.len());
    let mut traces = Vec::with_capacity(parts.len());
    let mut states = Vec::with_capacity(parts.len());
    for p in parts {
        if let Some(s) = p.stop
            && stop.as_ref().is_none_or(|first| s.2 < first.2)
        {
            stop = Some(s);
        }
        warnings.extend(p.warnings);
        blocked.extend(p.blocked);
        top_waits.push(p.top_waits);
        traces.push((p.trace, p.runs));
        states.push((p.base, p.states));
    }
    let mut stop = stop.map(|(e, t, _)| (e, t));
    if stop.is_none() && finished < n {
        // Whether `rank` has finished: in the partition holding it, the last whose first rank
        // is not past it.
        let finished = |rank: u32| {
            states
                .iter()
                .rev()
                .find(|(base, _)| *base <= rank)
                .is_some_and(|(base, s)| s.get((rank - base) as usize).is_some_and(|r| r.done))
        };
        stop = Some(match livelock {
            Some((since, at, limit)) => {
                let mut report = LivelockReport {
                    from_ns: since,
                    to_ns: at,
                    limit_ns: limit,
                    ranks: blocked,
                };
                for r in &mut report.ranks {
                    if let StuckRank::Blocked(b) = r {
                        b.peer_finished = b.waits_for.is_some_and(finished);
                    }
                }
                let report = Box::new(report);
                (Error::Livelock { report }, at)
            }
            None => {
                // Every unfinished rank is blocked (none polls in a deadlock).
                let blocked = blocked
                    .into_iter()
                    .filter_map(|r| match r {
                        StuckRank::Blocked(b) => Some(b),
                        StuckRank::Polling(_) => None,
                    })
                    .collect();
                let report = Box::new(DeadlockReport::new(blocked, n, &finished));
                (Error::Deadlock { report }, now)
            }
        });
    }
    let stop_time = stop.as_ref().map(|(_, t)| *t);
    let error = stop.map(|(e, _)| e);
    let trace = options.trace.then(|| {
        let mut records = merge_traces(traces);
        if let Some(t) = stop_time {
            end_at_stop(&mut records, &states, t);
        }
        Trace::new(PROCESS_NAME, n, records).with_filter(options.trace_filter.clone())
    });
    // The per-rank reports take the ranks' place in memory (an in-place collect: no second
    // array of millions of entries at the end of a run).
    let mut ranks = Vec::new();
    for (base, part) in states {
        let reports = part.into_iter().enumerate().map(|(i, r)| {
            let clock = stop_time.map_or(r.clock, |t| r.clock.min(t));
            r.stats.report(base + i as u32, clock, &r.endpoint)
        });
        if ranks.is_empty() {
            ranks = reports.collect();
        } else {
            ranks.extend(reports);
        }
    }
    Outcome {
        trace,
        report: Report {
            backend: BACKEND,
            time_base: TimeBase::Virtual,
            ranks,
            events: Some(events),
            top_waits: TopWaits::merge(top_waits).into_list(),
            stopped: error.as_ref().map(ToString::to_string),
            warnings,
            compute: Some(options.model.compute),
            collectives: Vec::new(),
            bsp: None,
        },
        error,
    }
}

/// A partition's trace records, and how many each event made (`Partition::runs`).
type PartTrace = (Option<Vec<TraceEvent>>, Option<Vec<(Key, u32)>>);

/// The partitions' trace records in the order a sequential run makes them: by the key of the
/// event that made them (`runs`, when there are several partitions), messages numbered in
/// that order.
fn merge_traces(parts: Vec<PartTrace>) -> Vec<TraceEvent> {
    let mut parts: Vec<_> = parts
        .into_iter()
        .map(|(t, runs)| (t.unwrap_or_default().into_iter(), runs.unwrap_or_default()))
        .collect();
    if parts.len() == 1 {
        return parts.pop().map(|(t, _)| t.collect()).unwrap_or_default();
    }
    let total = parts.iter().map(|(t, _)| t.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut next: Vec<usize> = vec![0; parts.len()];
    let mut heap: BinaryHeap<Reverse<(Key, usize)>> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, (_, runs))| runs.first().map(|r| Reverse((r.0, i))))
        .collect();
    while let Some(Reverse((_, i))) = heap.pop() {
        let (records, runs) = &mut parts[i];
        out.extend(records.by_ref().take(runs[next[i]].1 as usize));
        next[i] += 1;
        if let Some(r) = runs.get(next[i]) {
            heap.push(Reverse((r.0, i)));
        }
    }
    // Records made outside events (programs dropped at the end), in rank order, as a
    // sequential run drops them.
    for (records, _) in parts {
        out.extend(records);
    }
    let mut id = 0;
    for e in &mut out {
        if let TraceEvent::Message { id: m, .. } = e {
            id += 1;
            *m = id;
        }
    }
    out
}

/// The trace of a run stopped at `stop` (an error's time, a deadlock's or a livelock's) drawn
/// up to the stop, as the report is (its clocks are capped there, S16 and D2): a span that
/// runs past it ends there, marked unfinished, and one that starts at or after it is dropped
/// (the events of D2's lookahead after an error ran, but the report does not count them); a
/// message sent at or after it is dropped, and one that arrives after it keeps its start
/// only. Each rank still blocked (`states`, by partition) gets its blocking call as a span
/// open until the stop, in rank order after the records: a deadlocked run would otherwise
/// show none of the waits it is made of. The same records are cut the same way whatever the
/// partitions, so a parallel run's trace stays the sequential one's.
fn end_at_stop(records: &mut Vec<TraceEvent>, states: &[(u32, Vec<RankState>)], stop: u64) {
    records.retain_mut(|e| match e {
        TraceEvent::Span {
            start_ns,
            end_ns,
            unfinished,
            ..
        } => {
            if *end_ns > stop {
                *end_ns = stop;
                *unfinished = true;
            }
            *start_ns < stop
        }
        TraceEvent::Message {
            sent_ns,
            arrival_ns,
            ..
        } => {
            if arrival_ns.is_some_and(|a| a > stop) {
                *arrival_ns = None;
            }
            *sent_ns < stop
        }
    });
    let open = |r: &RankState| r.wait.is_some_and(|w| !r.done && w.since < stop);
    let count = states
        .iter()
        .map(|(_, part)| part.iter().filter(|r| open(r)).count())
        .sum();
    // Room for them, if it can be had: a trace too big for one more span per blocked rank
    // goes without them rather than abort the process.
    if records.try_reserve_exact(count).is_err() {
        return;
    }
    for (base, part) in states {
        for (i, r) in part.iter().enumerate() {
            if let Some(w) = r.wait.filter(|_| open(r)) {
                records.push(TraceEvent::Span {
                    rank: base + i as u32,
                    name: w.call,
                    start_ns: w.since,
                    end_ns: stop,
                    unfinished: true,
                });
            }
        }
    }
}

/// The options a run cannot start with: a model that breaks its invariants (a model built in
/// code skips the loader's checks; a zero `poll_cost_ns` would let a polling loop run for ever
/// at one virtual time), a spawn order that is not a permutation of the ranks, a trace filter
/// that does not fit the run. Out of line:
/// inlined into the generic entry point, it changed how the run loop was compiled (+6
/// instructions per simulated ring message, callgrind).
#[inline(never)]
fn check_options(options: &Options) -> Result<(), Error> {
    options
        .model
        .validate()
        .map_err(|e| Error::InvalidArgument {
            what: format!("the machine model: {e}"),
        })?;
    if options.workers > MAX_WORKERS {
        return Err(Error::InvalidArgument {
            what: format!(
                "{} simulation threads: at most {MAX_WORKERS} (more threads than cores give the \
                 same report more slowly)",
                options.workers
            ),
        });
    }
    if options.trace {
        options
            .trace_filter
            .check(options.ranks)
            .map_err(|what| Error::InvalidArgument { what })?;
    }
    match options.spawn_order.as_deref() {
        Some(order) if !is_permutation(order, options.ranks) => Err(Error::InvalidArgument {
            what: format!(
                "the spawn order ({} ranks listed) is not a permutation of the {} ranks",
                order.len(),
                options.ranks
            ),
        }),
        _ => Ok(()),
    }
}

fn is_permutation(order: &[u32], n: u32) -> bool {
    let mut seen = vec![false; n as usize];
    order.len() == n as usize
        && order
            .iter()
            .all(|&r| (r as usize) < seen.len() && !std::mem::replace(&mut seen[r as usize], true))
}

#[cfg(test)]
mod tests {
    use crate::kernel::vec_for;
    use mpsim_proto::error::Error;

    /// A per-rank array that cannot be had is an out-of-memory error naming it, not an abort
    /// (here the size overflows, which fails without asking the allocator).
    #[test]
    fn unallocatable_rank_arrays_are_out_of_memory_errors() {
        match vec_for::<[u8; 1 << 33]>(u32::MAX, "a table") {
            Err(Error::NoMemory { what }) => {
                assert!(what.starts_with("a table for 4294967295 ranks"), "{what}")
            }
            other => panic!("expected NoMemory, got {:?}", other.map(|v| v.len())),
        }
    }
}
