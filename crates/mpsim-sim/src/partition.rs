//! A partition of a run: some ranks, their programs, their kernel, and the loop that runs their
//! events (`docs/timing.md` §5). A sequential run is one partition of every rank; a parallel
//! run (`parallel.rs`) gives each worker thread one, run round by round.
//!
//! Events run in key order; the loop stops at the kernel's horizon (the end of a parallel
//! round) or when the queue is empty. A run stopped by an error (S16 as amended by D2,
//! `docs/extensions.md`) goes on with the events less than one lookahead after the error's, so that
//! where it stops does not depend on how the ranks were split.

use std::cell::RefCell;
use std::future::Future;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use mpsim_proto::deadlock::{BlockedRank, PollingRank, SUSPENDED, StuckRank};
use mpsim_proto::error::Error;
use mpsim_proto::interrupt::Interrupt;
use mpsim_proto::p2p::never_received;
use mpsim_proto::trace::TraceEvent;

use crate::event::{CHECKPOINT, DELIVERY, Key};
use crate::host_memory::{CHECK_EVERY, MemoryWatch};
use crate::kernel::{Kernel, NOT_POLLING, RankState, vec_for};
use crate::livelock;
use crate::rank::{SimRank, Turn, turn};
use crate::run::{OBSERVE_EVERY, Options, Progress};
use crate::waits::TopWaits;

/// Ranks' programs made between two looks at the host clock while a partition is set up
/// (`MemoryWatch::poll`; a program is a few hundred bytes).
const SETUP_CHECK_EVERY: u64 = 4096;

/// The ranks' programs, by rank: boxed one by one (a future must not move once polled), of the
/// program's own type (the run loop calls its `poll` directly, and a slot is one thin pointer).
type Slots<Fut> = Vec<Option<Pin<Box<Fut>>>>;

/// Some ranks of a run and their programs.
pub(crate) struct Partition<Fut> {
    pub kernel: Rc<RefCell<Kernel>>,
    futures: Slots<Fut>,
    watch: MemoryWatch,
    /// Raised by a signal: the run stops (`Options::interrupt`), looked at with `watch`.
    interrupt: Option<Interrupt>,
    /// With a trace in a parallel run: how many trace records each event made, by its key, so
    /// that the partitions' traces merge into the sequential order.
    pub runs: Option<Vec<(Key, u32)>>,
    /// Trace records counted in `runs` so far.
    traced: usize,
}

/// A livelock as a partition saw it (`livelock`), in virtual ns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Livelocked {
    /// Since when nothing but polls ran, by this partition's ranks (`Kernel::quiet_since`).
    pub ranks_since: u64,
    /// The checkpoint since which the run was seen quiet (the same in every partition).
    pub quiet: u64,
    /// The checkpoint at which it was found (the same in every partition).
    pub at: u64,
    /// The limit.
    pub limit: u64,
}

impl Livelocked {
    /// Since when nothing but polls ran in the run whose partitions saw `parts`: the latest
    /// of their ranks' figures, and at the latest the checkpoint since which the run was seen
    /// quiet (it was quiet there, and nothing but polls ran after it).
    pub fn since(parts: &[Livelocked]) -> u64 {
        let ranks = parts.iter().map(|p| p.ranks_since).max().unwrap_or(0);
        parts.first().map_or(ranks, |p| ranks.min(p.quiet))
    }
}

/// What a partition hands back when its run is over.
pub(crate) struct PartOutcome {
    pub base: u32,
    pub states: Vec<RankState>,
    pub events: u64,
    pub finished: u32,
    pub now: u64,
    /// The first error: the error, its virtual time, the key of its event.
    pub stop: Option<(Error, u64, Key)>,
    /// A livelock (`livelock`).
    pub livelock: Option<Livelocked>,
    /// Messages never received, in rank order.
    pub warnings: Vec<String>,
    /// For a deadlock or a livelock: each unfinished rank, what it is blocked or polling in.
    pub blocked: Vec<StuckRank>,
    pub top_waits: TopWaits,
    pub trace: Option<Vec<TraceEvent>>,
    pub runs: Option<Vec<(Key, u32)>>,
}

impl<Fut> Partition<Fut>
where
    Fut: Future<Output = Result<(), Error>>,
{
    /// The ranks `part` of a run as `options` say, their programs made by `program` in the
    /// order `order` gives them (a permutation of all the run's ranks; `None`: ascending).
    pub fn new<F>(
        options: &Options,
        program: &F,
        part: Range<u32>,
        order: Option<&[u32]>,
    ) -> Result<Self, Error>
    where
        F: Fn(Rc<SimRank>) -> Fut,
    {
        let kernel = Kernel::partition(
            options.model.clone(),
            part.clone(),
            options.ranks,
            options.strict,
            options.bsend_overflow_returns,
        )?;
        let mut futures: Slots<Fut> = vec_for(part.len() as u32, "the ranks' program slots")?;
        futures.resize_with(part.len(), || None);
        let kernel = Rc::new(RefCell::new(kernel));
        if options.trace {
            let mut k = kernel.borrow_mut();
            k.trace.start(options.trace_filter.clone());
        }
        kernel.borrow_mut().livelock.watch = livelock::Watch::new(options.livelock_after_ns);
        let order: Box<dyn Iterator<Item = u32>> = match order {
            Some(order) => Box::new(order.iter().copied().filter(|r| part.contains(r))),
            None => Box::new(part.clone()),
        };
        // Making millions of programs takes memory a rank at a time, in allocations that
        // abort the process when refused (under `ulimit -v`, say): the host is watched as
        // the run loop watches it.
        let mut watch = MemoryWatch::new(options.memory_floor);
        for (made, rank) in order.enumerate() {
            if made as u64 % SETUP_CHECK_EVERY == SETUP_CHECK_EVERY - 1 {
                if let Some(signal) = options.interrupt.as_ref().and_then(Interrupt::raised) {
                    return Err(Error::Interrupted {
                        signal,
                        time_ns: None,
                    });
                }
                if let Some(shortage) = watch.poll() {
                    let at = format!(" after making {made} of the ranks' programs");
                    return Err(shortage.error(options.ranks, &at));
                }
            }
            let idx = (rank - part.start) as usize;
            let rt = Rc::new(SimRank {
                kernel: Rc::clone(&kernel),
                rank,
                idx,
            });
            futures[idx] = Some(Box::pin(program(rt)));
        }
        kernel.borrow_mut().schedule_start();
        Ok(Partition {
            kernel,
            futures,
            watch,
            interrupt: options.interrupt.clone(),
            runs: None,
            traced: 0,
        })
    }

    /// Queues a sequential run's first checkpoint for a livelock (`livelock`), if it watches
    /// for one.
    pub fn start_checkpoints(&mut self) {
        let mut k = self.kernel.borrow_mut();
        let at = k.livelock.watch.next_check;
        if at != u64::MAX {
            k.queue.push_checkpoint(at);
        }
    }

    /// Runs events in key order until none is left before the kernel's horizon (`u64::MAX`
    /// but in a parallel run) and, after an error, before its `stop_end`. `PARALLEL`: the
    /// partition is one of several (the loop then notes what the merge of the partitions
    /// needs: event keys, trace runs, and the horizon may come down as it runs).
    ///
    /// Each turn: the next resume (deliveries before it are run by [`Partition::next_resume`]),
    /// its rank's turn begun by its runtime ([`Turn::begin`]: woken, and measured compute it
    /// owes paid first), its program polled ([`Partition::poll`]), the turn ended
    /// ([`Turn::end`]), and what the poll returned handled ([`Partition::end_rank`],
    /// [`check_suspended`]).
    pub fn run<const PARALLEL: bool>(&mut self, observe: &mut dyn FnMut(Progress)) {
        // A run that measures its programs' compute times each poll (`rank::turn`); one that
        // does not runs a loop with no trace of it.
        if turn::measures(&self.kernel.borrow()) {
            self.run_turns::<PARALLEL, true>(observe);
        } else {
            self.run_turns::<PARALLEL, false>(observe);
        }
    }

    /// The body of [`Partition::run`], of turns `Turn<MEASURED>`.
    fn run_turns<const PARALLEL: bool, const MEASURED: bool>(
        &mut self,
        observe: &mut dyn FnMut(Progress),
    ) {
        let mut cx = Context::from_waker(Waker::noop());
        let kernel = Rc::clone(&self.kernel);
        loop {
            // One borrow per event, from the pop to the program's poll (a borrow is a check
            // and two writes of the flag), or per delivery and the resume it makes next.
            let mut k = kernel.borrow_mut();
            let Some(key) = self.next_resume::<PARALLEL>(&mut k, observe) else {
                break;
            };
            self.enter_event::<PARALLEL>(&mut k, key, observe);
            let Some(turn) = Turn::<MEASURED>::begin(&mut k, key) else {
                self.count_trace::<PARALLEL>(&k, key);
                continue;
            };
            let idx = turn.idx;
            drop(k);
            let polled = self.poll(idx, key.creator(), &mut cx);
            let mut k = kernel.borrow_mut();
            turn.end(&mut k);
            match polled {
                Poll::Ready(result) => self.end_rank(&mut k, idx, key.creator(), result),
                Poll::Pending => check_suspended(&mut k, idx, key.creator()),
            }
            self.count_trace::<PARALLEL>(&k, key);
        }
    }

    /// Pops events until a rank's resume, which it returns (not yet entered, `enter_event`),
    /// running the deliveries before it; `None` once nothing is left to run before the end
    /// (the horizon, a stopped run's `stop_end`, a livelock found at a checkpoint).
    #[inline(always)]
    fn next_resume<const PARALLEL: bool>(
        &mut self,
        k: &mut Kernel,
        observe: &mut dyn FnMut(Progress),
    ) -> Option<Key> {
        loop {
            if (PARALLEL || k.stop.first.is_some()) && !before_end(k) {
                return None;
            }
            let mut key = k.queue.pop()?;
            if key.class() == DELIVERY {
                self.enter_event::<PARALLEL>(k, key, observe);
                k.deliver_popped(key.creator());
                self.count_trace::<PARALLEL>(k, key);
                if PARALLEL || k.stop.first.is_some() {
                    continue;
                }
                // A delivery that completes a waiting rank's receive makes its resume the
                // next event, in the queue's front: it is taken here, as `pop` would take it,
                // without letting go of the kernel and starting over.
                match k.queue.pop_front_resume() {
                    Some(next) => key = next,
                    None => continue,
                }
            }
            // A resume: its rank is the event's creator; or a sequential run's checkpoint for
            // a livelock, which is not an event of the run.
            if !PARALLEL && key.creator() == CHECKPOINT {
                if checkpoint(k) {
                    return None;
                }
                continue;
            }
            return Some(key);
        }
    }

    /// Polls the program of `rank`, whose state is at `idx`, once, catching a panic: pending,
    /// or its result (a panic's is [`Error::from_panic`]).
    #[inline(always)]
    fn poll(&mut self, idx: usize, rank: u32, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let fut = self.futures[idx]
            .as_mut()
            .expect("an unfinished rank has its future");
        // What comes out of the unwind guard is whether the program is still pending, one
        // byte: its result, with an error as large as it is, is moved out only when it
        // ends (moved whole through the guard, it was copied twice on every poll).
        let mut ended = None;
        let pending = catch_unwind(AssertUnwindSafe(|| {
            let polled = fut.as_mut().poll(cx);
            let pending = polled.is_pending();
            if let Poll::Ready(result) = polled {
                ended = Some(result);
            }
            pending
        }));
        match pending {
            Ok(true) => Poll::Pending,
            Ok(false) => Poll::Ready(ended.expect("a program that ended has its result")),
            Err(panic) => Poll::Ready(Err(Error::from_panic(rank, &*panic))),
        }
    }

    /// The program of `rank` (state at `idx`) ended with `result`: its future is dropped, what
    /// it owes goes on its clock, which is its end ([`turn::settle_end`]), and a failure (its
    /// own, or requests it left pending) stops the run.
    fn end_rank(&mut self, k: &mut Kernel, idx: usize, rank: u32, result: Result<(), Error>) {
        self.futures[idx] = None;
        k.counts.finished += 1;
        let t = turn::settle_end(&mut k.ranks[idx]);
        if t == u64::MAX {
            let now = k.now;
            k.time_overflow(rank, now, "its end would come".into());
        }
        let result = result.and_then(|()| pending_at_exit(k, rank, t));
        if let Err(e) = result {
            program_failed(k, e, rank, t);
        }
        // Millions of finished ranks should hold no heap memory.
        k.ranks[idx].endpoint.shrink_to_fit();
    }

    /// Global time moves to the event `key`, which is counted; the observer sees every
    /// [`OBSERVE_EVERY`]th (for deliveries and resumes alike), and the host's memory is
    /// watched every [`CHECK_EVERY`]th: the run stops once the host has next to none left.
    #[inline(always)]
    fn enter_event<const PARALLEL: bool>(
        &mut self,
        k: &mut Kernel,
        key: Key,
        observe: &mut dyn FnMut(Progress),
    ) {
        let time = key.time;
        k.now = time;
        if PARALLEL {
            // Only merges read it: one partition's events are in key order already.
            k.round.current = key;
        }
        k.counts.events += 1;
        if k.counts.events.is_multiple_of(CHECK_EVERY) {
            if k.counts.events.is_multiple_of(OBSERVE_EVERY) {
                observe(progress(k));
            }
            if let Some(e) = self.look_outside(k.counts.events, time, k.total) {
                k.fail_now(e, time);
            }
        }
    }

    /// What stops a run from outside it, looked at every [`CHECK_EVERY`] events: a signal
    /// (`Options::interrupt`), then the host's memory ([`MemoryWatch::tick`]). Either stops
    /// the run at once, after the current event: the user or the host will not wait for the
    /// lookahead of D2.
    #[cold]
    #[inline(never)]
    fn look_outside(&mut self, events: u64, now: u64, ranks: u32) -> Option<Error> {
        if let Some(signal) = self.interrupt.as_ref().and_then(Interrupt::raised) {
            return Some(Error::Interrupted {
                signal,
                time_ns: Some(now),
            });
        }
        self.watch.tick(events, now, ranks)
    }

    /// With a trace in a parallel run, notes the records the event `key` made (nothing in a
    /// sequential run, whose records are in key order already).
    #[inline(always)]
    fn count_trace<const PARALLEL: bool>(&mut self, k: &Kernel, key: Key) {
        if !PARALLEL {
            return;
        }
        if let (Some(runs), Some(len)) = (self.runs.as_mut(), k.trace.len()) {
            let made = len - self.traced;
            if made > 0 {
                runs.push((key, made as u32));
                self.traced = len;
            }
        }
    }

    /// Ends the run of this partition: its programs still suspended are dropped (a deadlock, a
    /// livelock, a stop on error) and what is left is handed back; `stuck`: the run as a whole
    /// is deadlocked or livelocked, so say what each unfinished rank is blocked or polling in.
    pub fn close(self, stuck: bool) -> PartOutcome {
        let Partition {
            kernel,
            mut futures,
            runs,
            ..
        } = self;
        if stuck {
            ask_waits(&kernel, &mut futures);
        }
        let mut k = kernel.borrow_mut();
        let base = k.base();
        let mut blocked = Vec::new();
        if stuck {
            for (i, state) in k.ranks.iter().enumerate() {
                if state.done {
                    continue;
                }
                let rank = base + i as u32;
                blocked.push(match (k.describe_wait(rank), k.polling_in(i)) {
                    (Some(b), _) => StuckRank::Blocked(b),
                    (None, Some(call)) => StuckRank::Polling(PollingRank {
                        rank,
                        call,
                        since_ns: k.poll_began(i),
                    }),
                    (None, None) => StuckRank::Blocked(BlockedRank::new(
                        rank,
                        SUSPENDED,
                        Some(state.clock),
                        Vec::new(),
                    )),
                });
            }
        }
        let mut warnings = Vec::new();
        for (i, r) in k.ranks.iter().enumerate() {
            // Each rank's dropped receives, then its messages never received.
            if let Some(dropped) = k.report.discarded.get(&(base + i as u32)) {
                warnings.extend(dropped.iter().cloned());
            }
            for (from, e, bytes) in r.endpoint.unexpected_messages() {
                warnings.push(never_received(from, base + i as u32, &e, bytes));
            }
        }
        // Programs still suspended are dropped now; their requests' destructors must not act
        // on the simulation any more.
        k.closed = true;
        drop(k);
        drop(futures);
        let mut k = kernel.borrow_mut();
        // A livelock: since when nothing but polls ran, by this partition's ranks, and the
        // checkpoint since which the run has been seen quiet (`livelock`).
        let livelock = k.livelock.found.map(|(quiet, at)| Livelocked {
            ranks_since: k.quiet_since(),
            quiet,
            at,
            limit: k.livelock.watch.after_ns(),
        });
        PartOutcome {
            base,
            states: std::mem::take(&mut k.ranks),
            events: k.counts.events,
            finished: k.counts.finished,
            now: k.now,
            stop: k.stop.first.take().map(|(e, t)| (e, t, k.stop.key)),
            livelock,
            warnings,
            blocked,
            top_waits: std::mem::take(&mut k.report.top_waits),
            trace: k.trace.take(),
            runs,
        }
    }
}

/// Before the report of a stuck run: each rank blocked in a wait on several requests has its
/// program polled once more, with the kernel `reporting`, so that its wait records every
/// request it waits on (`Kernel::wait_on_set`): done here, not each time such a wait blocks
/// (a halo exchange's `wait_all` blocks once per round and rank, and copying its requests
/// then cost a 256-rank `stencil2d` 2% more instructions). Nothing can complete any more,
/// so no wait returns, and a wait polled so changes nothing else.
fn ask_waits<Fut: Future<Output = Result<(), Error>>>(
    kernel: &Rc<RefCell<Kernel>>,
    futures: &mut Slots<Fut>,
) {
    let mut cx = Context::from_waker(Waker::noop());
    let n = kernel.borrow().ranks.len();
    for (i, slot) in futures.iter_mut().enumerate().take(n) {
        {
            let mut k = kernel.borrow_mut();
            let r = &k.ranks[i];
            if r.done || r.resume_scheduled || !r.wait.is_some_and(|w| w.set) {
                continue;
            }
            (k.report.asking, k.polling) = (true, i);
        }
        if let Some(fut) = slot.as_mut() {
            let _ = catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)));
        }
        let mut k = kernel.borrow_mut();
        (k.report.asking, k.polling) = (false, NOT_POLLING);
    }
}

/// Whether the queue's next event comes before the end of what may run: the horizon of a
/// parallel round, or a stopped run's `stop_end` (D2).
#[inline(always)]
fn before_end(k: &Kernel) -> bool {
    let end = k.round.horizon.min(k.stop.end);
    k.queue.peek_time().is_some_and(|t| t < end)
}

/// The program of the rank at `idx` returned pending: it must have suspended in a call of the
/// simulator (a wait, a compute, a poll), which either recorded its wait or scheduled its
/// resume. Otherwise it awaited something the simulator does not drive, which would never wake
/// it: the run stops with [`Error::Unsupported`].
#[inline(always)]
fn check_suspended(k: &mut Kernel, idx: usize, rank: u32) {
    let r = &k.ranks[idx];
    if r.wait.is_none() && !r.resume_scheduled {
        foreign_await(k, rank);
    }
}

/// The error of [`check_suspended`], out of line.
#[cold]
#[inline(never)]
fn foreign_await(k: &mut Kernel, rank: u32) {
    let t = k.ranks[k.at(rank)].clock;
    k.fail(
        Error::Unsupported {
            what: format!(
                "rank {rank} awaited something the simulator does not drive (only mpsim \
                 calls may suspend a simulated rank)"
            ),
        },
        t,
    );
}

/// A sequential run's checkpoint for a livelock (`livelock`), just popped: true if the run is
/// livelocked (and stops); else the next checkpoint is queued, unless nothing else is (the
/// run is ending) or the run is stopping on an error.
#[cold]
#[inline(never)]
fn checkpoint(k: &mut Kernel) -> bool {
    let Some(next) = k.queue.peek_time() else {
        return false;
    };
    if k.stop.first.is_some() {
        return false;
    }
    // Without a poll so far, the run is not livelocked (and the ranks need no look).
    let quiet = if k.has_polled() { k.quiet() } else { None };
    let (quiet, progress) = match quiet {
        Some((polls, progress)) => (polls > 0, progress),
        None => (false, 0),
    };
    k.livelock.found = k.livelock.watch.check(next, quiet, progress);
    if k.livelock.found.is_none() {
        let at = k.livelock.watch.next_check;
        k.queue.push_checkpoint(at);
    }
    k.livelock.found.is_some()
}

fn progress(k: &Kernel) -> Progress {
    Progress {
        virtual_ns: k.now,
        events: k.counts.events,
        finished: k.counts.finished,
    }
}

/// The program of `rank` ended at `t` with `e`: the run stops with it, stamped with the time
/// and, for a program's own failure, the rank (out of the run loop: once per failed run).
#[cold]
#[inline(never)]
fn program_failed(k: &mut Kernel, mut e: Error, rank: u32, t: u64) {
    e.stamp_time(t);
    e.stamp_rank(rank);
    k.fail(e, t);
}

fn pending_at_exit(k: &Kernel, rank: u32, t: u64) -> Result<(), Error> {
    let requests = k.ranks[k.at(rank)].endpoint.pending_requests();
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
