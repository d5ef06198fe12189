//! The run loop (`spec/timing.md` §5): pop the earliest event, deliver it or resume its rank,
//! repeat; nothing left and a rank unfinished is a deadlock. Fits on a screen by design.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use mpsim_proto::deadlock;
use mpsim_proto::error::Error;
use mpsim_proto::runtime::RankRuntime;
use mpsim_proto::trace::Trace;

use crate::event::DELIVERY;
use crate::host_memory::{self, CHECK_EVERY, MemoryWatch};
use crate::kernel::{Kernel, RankState, vec_for};
use crate::model::{ComputeMode, Model};
use crate::rank::SimRank;
use crate::report::Report;
use crate::waits;

/// The trace's process name: viewers show it above the rank tracks.
const PROCESS_NAME: &str = "mpsim sim";

/// How to simulate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of ranks.
    pub ranks: u32,
    /// The machine model.
    pub model: Model,
    /// Report an `rsend` that arrives before its receive (`ReadyNotPosted`).
    pub strict: bool,
    /// The order in which the ranks' programs are created (a permutation of `0..ranks`);
    /// `None` is ascending. Results never depend on it — tests shuffle it to prove that.
    pub spawn_order: Option<Vec<u32>>,
    /// Record a trace of every span and message ([`Outcome::trace`]).
    pub trace: bool,
    /// Stop the run with `Error::NoMemory` when the host has less than this many bytes of
    /// memory left available (Linux's `MemAvailable`), rather than be killed by the system
    /// when it runs out; `None`: 1% of the host's memory, at least 128 MiB.
    pub memory_floor: Option<u64>,
}

impl Options {
    /// `ranks` ranks on `model`.
    pub fn new(ranks: u32, model: Model) -> Self {
        Options {
            ranks,
            model,
            strict: false,
            spawn_order: None,
            trace: false,
            memory_floor: None,
        }
    }
}

/// The result of a simulated run: the report (also for a run stopped by an error, as of the
/// stop, S16) and the error that stopped it.
#[derive(Debug)]
pub struct Outcome {
    /// The report.
    pub report: Report,
    /// The first error, if the run failed.
    pub error: Option<Error>,
    /// What each rank did, when [`Options::trace`] asked for it.
    pub trace: Option<Trace>,
}

/// The ranks' programs, by rank: boxed one by one (a future must not move once polled), of the
/// program's own type (the run loop calls its `poll` directly, and a slot is one thin pointer).
type Slots<Fut> = Vec<Option<Pin<Box<Fut>>>>;

/// Simulates `program` on `options.ranks` ranks.
///
/// `program` is called once per rank with that rank's runtime; the futures are polled only in
/// virtual-time order, on this thread.
pub fn simulate<'a, F, Fut>(options: &Options, program: &'a F) -> Outcome
where
    F: Fn(Rc<dyn RankRuntime>) -> Fut,
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
const OBSERVE_EVERY: u64 = 1 << 16;
// The observer is called from inside the memory watch's rarer branch (`enter_event`).
const _: () = assert!(OBSERVE_EVERY.is_multiple_of(CHECK_EVERY));

/// Like [`simulate`], calling `observe` every 65,536 events and once at the end. The observer
/// sees the run; it cannot change it (a progress bar reads the wall clock; the run reads it
/// only to pace its watch on the host's memory, `host_memory`).
pub fn simulate_observed<'a, F, Fut>(
    options: &Options,
    program: &'a F,
    observe: &mut dyn FnMut(Progress),
) -> Outcome
where
    F: Fn(Rc<dyn RankRuntime>) -> Fut,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let n = options.ranks;
    let started: Result<(Kernel, Slots<Fut>), Error> = if n == 0 {
        Err(Error::InvalidArgument {
            what: "a simulated run needs at least 1 rank".into(),
        })
    } else {
        host_memory::check_fits(n, least_bytes_per_rank(std::mem::size_of::<Fut>()))
            .and_then(|()| Kernel::new(options.model.clone(), n, options.strict))
            .and_then(|k| Ok((k, vec_for(n, "the ranks' program slots")?)))
    };
    let (kernel, mut futures) = match started {
        Ok(started) => started,
        Err(e) => return refused(e, options.model.compute),
    };
    futures.resize_with(n as usize, || None);
    let kernel = Rc::new(RefCell::new(kernel));
    if options.trace {
        kernel.borrow_mut().trace = Some(Vec::new());
    }
    let order: Vec<u32> = options
        .spawn_order
        .clone()
        .filter(|o| is_permutation(o, n))
        .unwrap_or_else(|| (0..n).collect());
    for rank in order {
        let rt: Rc<dyn RankRuntime> = Rc::new(SimRank {
            kernel: Rc::clone(&kernel),
            rank,
        });
        futures[rank as usize] = Some(Box::pin(program(rt)));
    }
    kernel.borrow_mut().schedule_start();

    let mut cx = Context::from_waker(Waker::noop());
    let mut watch = MemoryWatch::new(options.memory_floor);
    loop {
        // One borrow per event, from the pop to the program's poll (a borrow is a check and
        // two writes of the flag), or per delivery and the resume it makes next.
        let mut k = kernel.borrow_mut();
        let Some(mut key) = k.queue.pop() else {
            break;
        };
        if key.class() == DELIVERY {
            enter_event(&mut k, key.time, observe, &mut watch);
            let (to, sent_at, packet) = k.queue.take_delivery();
            k.deliver(key.creator(), to, sent_at, packet);
            if k.stop.is_some() {
                break;
            }
            // A delivery that completes a waiting rank's receive makes its resume the next
            // event, in the queue's front: it is taken here, as `pop` would take it, without
            // letting go of the kernel and starting over.
            match k.queue.pop_front_resume() {
                Some(next) => key = next,
                None => continue,
            }
        }
        enter_event(&mut k, key.time, observe, &mut watch);
        // A resume: its rank is the event's creator.
        let rank = key.creator();
        // The rank's state is looked up once; the trace and the top waits are told of its wait
        // once it is let go.
        let floor = k.top_waits.floor();
        let r = &mut k.ranks[rank as usize];
        r.resume_scheduled = false;
        if r.done {
            continue;
        }
        let clock = r.clock.max(key.time);
        let waited = r.wait.take();
        if let Some(w) = waited {
            r.stats.blocked_ns += clock - w.since;
        }
        // Measured compute of its last run comes before the rank's next action.
        let debt = std::mem::take(&mut r.debt_ns);
        r.clock = clock + debt;
        if let Some(w) = waited {
            k.record_span(rank, w.call, w.since, clock);
            if clock - w.since > floor {
                waits::offer(&mut k, rank, w.call, w.since, clock, w.req);
            }
        }
        if debt > 0 {
            k.record_span(rank, "compute", clock, clock + debt);
            k.schedule_resume(rank, clock + debt);
            continue;
        }
        let measured = k.model().compute == ComputeMode::Measured;
        drop(k);
        let fut = futures[rank as usize]
            .as_mut()
            .expect("an unfinished rank has its future");
        let cpu = measured.then(cpu_time::ThreadTime::now);
        let polled = catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)))
            .unwrap_or_else(|panic| Poll::Ready(Err(Error::from_panic(rank, &*panic))));
        let mut k = kernel.borrow_mut();
        if let Some(cpu) = cpu {
            let host_ns = u64::try_from(cpu.elapsed().as_nanos()).unwrap_or(u64::MAX);
            let ns = k.model().measured_stretch_ns(host_ns, n);
            let r = &mut k.ranks[rank as usize];
            r.debt_ns += ns;
            r.stats.compute_ns += ns;
        }
        match polled {
            Poll::Ready(result) => {
                futures[rank as usize] = None;
                k.finished += 1;
                let r = &mut k.ranks[rank as usize];
                r.done = true;
                let owed = std::mem::take(&mut r.overhead_ns);
                r.stats.overhead_ns += owed;
                r.clock += std::mem::take(&mut r.debt_ns) + owed;
                let t = r.clock;
                let result = result.and_then(|()| pending_at_exit(&k, rank, t));
                if let Err(mut e) = result {
                    e.stamp_time(t);
                    k.fail(e, t);
                }
                // Millions of finished ranks should hold no heap memory.
                k.ranks[rank as usize].endpoint.shrink_to_fit();
            }
            Poll::Pending => {
                let r = &k.ranks[rank as usize];
                let t = r.clock;
                if r.wait.is_none() && !r.resume_scheduled {
                    k.fail(
                        Error::Unsupported {
                            what: format!(
                                "rank {rank} awaited something the simulator does not \
                                 drive (only mpsim calls may suspend a simulated rank)"
                            ),
                        },
                        t,
                    );
                }
            }
        }
        if k.stop.is_some() {
            break;
        }
    }
    observe(progress(&kernel.borrow()));
    let (mut outcome, stop_time) = finish(&mut kernel.borrow_mut());
    // Programs still suspended (a deadlock, a stop on error) are dropped now; their requests'
    // destructors must not act on the simulation any more.
    kernel.borrow_mut().closed = true;
    drop(futures);
    // The per-rank reports take the ranks' place in memory (an in-place collect: no second
    // array of millions of entries at the end of a run).
    let ranks = std::mem::take(&mut kernel.borrow_mut().ranks);
    outcome.report.ranks = ranks
        .into_iter()
        .enumerate()
        .map(|(rank, r)| {
            let clock = stop_time.map_or(r.clock, |t| r.clock.min(t));
            r.stats.report(rank as u32, clock)
        })
        .collect();
    outcome
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
fn refused(error: Error, compute: ComputeMode) -> Outcome {
    Outcome {
        report: Report {
            ranks: Vec::new(),
            events: 0,
            top_waits: Vec::new(),
            stopped: Some(error.to_string()),
            warnings: Vec::new(),
            compute,
        },
        error: Some(error),
        trace: None,
    }
}

/// Global time moves to an event at `time`, which is counted; the observer sees every
/// [`OBSERVE_EVERY`]th (for deliveries and resumes alike), and the host's memory is watched
/// every [`CHECK_EVERY`]th: the run stops once the host has next to none left.
#[inline(always)]
fn enter_event(
    k: &mut Kernel,
    time: u64,
    observe: &mut dyn FnMut(Progress),
    watch: &mut MemoryWatch,
) {
    k.now = time;
    k.events += 1;
    if k.events.is_multiple_of(CHECK_EVERY) {
        if k.events.is_multiple_of(OBSERVE_EVERY) {
            observe(progress(k));
        }
        if let Some(e) = watch.tick(k.events, time, k.ranks.len() as u32) {
            k.fail(e, time);
        }
    }
}

fn progress(k: &Kernel) -> Progress {
    Progress {
        virtual_ns: k.now,
        events: k.events,
        finished: k.finished,
    }
}

fn pending_at_exit(k: &Kernel, rank: u32, t: u64) -> Result<(), Error> {
    let requests = k.ranks[rank as usize].endpoint.pending_requests();
    if requests.is_empty() {
        Ok(())
    } else {
        Err(Error::PendingAtExit {
            rank,
            time_ns: Some(t),
            requests,
        })
    }
}

/// Builds the report but for its per-rank part (see the caller), and returns the time the run
/// stopped at on an error; declares a deadlock if ranks are unfinished and nothing can move.
fn finish(k: &mut Kernel) -> (Outcome, Option<u64>) {
    if k.stop.is_none() && k.finished < k.ranks.len() as u32 {
        let report = deadlock_report(k);
        let t = k.now;
        k.fail(Error::Deadlock { report }, t);
    }
    let stop_time = k.stop.as_ref().map(|(_, t)| *t);
    let mut warnings = Vec::new();
    for (rank, r) in k.ranks.iter().enumerate() {
        for (from, e, bytes) in r.endpoint.unexpected_messages() {
            warnings.push(format!(
                "a message of {bytes} bytes from rank {from} to rank {rank} (tag {}, context {}) \
                 was never received",
                e.tag, e.context.0
            ));
        }
    }
    let error = k.stop.take().map(|(e, _)| e);
    let n = k.ranks.len() as u32;
    let trace = k
        .trace
        .take()
        .map(|events| Trace::new(PROCESS_NAME, n, events));
    let outcome = Outcome {
        trace,
        report: Report {
            ranks: Vec::new(),
            events: k.events,
            top_waits: std::mem::take(&mut k.top_waits).into_list(),
            stopped: error.as_ref().map(ToString::to_string),
            warnings,
            compute: k.model().compute,
        },
        error,
    };
    (outcome, stop_time)
}

/// Each blocked rank (S15) and the wait-for cycle that holds the lowest rank.
fn deadlock_report(k: &Kernel) -> String {
    let n = k.ranks.len();
    let mut lines = Vec::new();
    let mut edges: Vec<Option<u32>> = vec![None; n];
    for (r, state) in k.ranks.iter().enumerate() {
        if state.done {
            continue;
        }
        match k.describe_wait(r as u32) {
            Some((what, peer)) => {
                edges[r] = peer;
                lines.push(format!("rank {r} blocked in {what}"));
            }
            None => lines.push(format!("rank {r} suspended at t={} ns", state.clock)),
        }
    }
    deadlock::report(&lines, &edges)
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
