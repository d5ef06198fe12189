//! Conservative parallel simulation (`spec/timing.md` §5, DESIGN.md "Simulation kernel"):
//! the ranks are split into contiguous blocks, one per worker thread, each a [`Partition`]
//! with its own event queue, and the run goes in windows `[T, T + L)`, where `T` is the
//! earliest event of all and `L` the model's lookahead. Nothing a rank sends arrives sooner
//! than `L` after it is sent, so within a window no partition can affect another: each runs
//! its window's events alone, in key order, and the packets for other partitions are handed
//! over at the window's end. Every partition therefore runs the same events in the same order
//! as a sequential run, which is what makes the report the same byte for byte.
//!
//! A window costs a barrier, so this pays off only where many events share a window (wide
//! exchanges of many ranks); a token ring, with one message in flight, runs slower than on one
//! thread.

use std::future::Future;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use mpsim_proto::error::Error;
use mpsim_proto::runtime::RankRuntime;

use crate::event::{Body, Key};
use crate::partition::{PartOutcome, Partition};
use crate::run::{OBSERVE_EVERY, Options, Outcome, Progress, merge, refused};

/// The number of worker threads `options` get: as asked, at most one per rank, and one when
/// the lookahead is 0 (a window would then hold nothing).
pub(crate) fn workers(options: &Options) -> u32 {
    if options.model.lookahead() == 0 {
        1
    } else {
        options.workers.clamp(1, options.ranks.max(1))
    }
}

/// The workers' meeting point between windows: a sense-reversing barrier that spins (a
/// window can hold a single event, and a futex wait and wake-up cost 100 times a simulated
/// message), yielding the core after a while for workers that outnumber the cores. A worker
/// that panics poisons it: the others then return instead of waiting for ever.
struct WindowBarrier {
    parties: usize,
    waiting: AtomicUsize,
    sense: AtomicBool,
    poisoned: AtomicBool,
}

/// The others have gone (a worker panicked).
struct Poisoned;

impl WindowBarrier {
    fn new(parties: usize) -> Self {
        WindowBarrier {
            parties,
            waiting: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Waits for every worker; `local_sense` is the worker's own, flipped at each crossing.
    fn wait(&self, local_sense: &mut bool) -> Result<(), Poisoned> {
        *local_sense = !*local_sense;
        if self.waiting.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.waiting.store(0, Ordering::Relaxed);
            self.sense.store(*local_sense, Ordering::Release);
            return Ok(());
        }
        let mut spins = 0u32;
        while self.sense.load(Ordering::Acquire) != *local_sense {
            if self.poisoned.load(Ordering::Relaxed) {
                return Err(Poisoned);
            }
            spins = spins.saturating_add(1);
            if spins < 2_000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Ok(())
    }
}

/// Poisons the barrier if its worker unwinds (a bug: programs' panics are caught).
struct PoisonOnPanic<'a>(&'a WindowBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::SeqCst);
        }
    }
}

/// What the workers say at the start of a window.
struct Round {
    /// Per worker: the time of its next event, or of the earliest event it handed to another
    /// partition in the last window, whichever is earlier (`u64::MAX`: none).
    next: Vec<AtomicU64>,
    /// Per worker: events run and ranks finished so far (progress, deadlock).
    events: Vec<AtomicU64>,
    finished: Vec<AtomicU64>,
    /// A partition has stopped on an error (the run ends with the window it fell in).
    stopped: AtomicBool,
}

impl Round {
    fn new(workers: usize) -> Self {
        Round {
            next: (0..workers).map(|_| AtomicU64::new(u64::MAX)).collect(),
            events: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            finished: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            stopped: AtomicBool::new(false),
        }
    }
}

/// What the workers share: the barrier of the windows, what each says at the start of a
/// window, and the packets in transit between them.
///
/// One barrier per window. Before it, each worker says what it has (in `rounds[i % 2]` for
/// window `i`: a worker may write window `i + 1`'s while another still reads window `i`'s,
/// never further, as the next barrier waits for it); after it, each takes its mail and reads
/// the others' words. Mail posted by a worker already running the next window may come with
/// it: it arrives after that window's end, so taking it early changes nothing.
struct Shared {
    barrier: WindowBarrier,
    rounds: [Round; 2],
    /// A partition could not be set up (the run does not start).
    failed: AtomicBool,
    /// Per worker: events for its ranks made by other partitions.
    mail: Vec<Mutex<Vec<(Key, Body)>>>,
}

/// Runs `program` on `workers` threads (this one and `workers - 1` more), the ranks'
/// programs made in `order` (`Partition::new`).
pub(crate) fn simulate<'a, F, Fut>(
    options: &Options,
    program: &'a F,
    order: Option<&[u32]>,
    workers: u32,
    observe: &mut dyn FnMut(Progress),
) -> Outcome
where
    F: Fn(Rc<dyn RankRuntime>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let parts = split(options.ranks, workers);
    let shared = Shared {
        barrier: WindowBarrier::new(parts.len()),
        rounds: [Round::new(parts.len()), Round::new(parts.len())],
        failed: AtomicBool::new(false),
        mail: parts.iter().map(|_| Mutex::new(Vec::new())).collect(),
    };
    let mut results: Vec<Result<PartOutcome, Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..parts.len())
            .map(|w| {
                let (parts, shared) = (&parts, &shared);
                std::thread::Builder::new()
                    .name(format!("mpsim-sim-{w}"))
                    .spawn_scoped(s, move || {
                        work(w, options, program, order, parts, shared, &mut |_| {})
                    })
            })
            .collect();
        let spawned = handles.iter().all(Result::is_ok);
        let mut results = if spawned {
            vec![work(0, options, program, order, &parts, &shared, observe)]
        } else {
            // The threads that did start wait at the first barrier: let them go.
            shared.barrier.poisoned.store(true, Ordering::SeqCst);
            Vec::new()
        };
        for h in handles {
            results.push(match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(Error::Internal {
                        what: "a simulation worker thread panicked".into(),
                    })
                }),
                Err(e) => Err(Error::Io {
                    what: format!("cannot start a simulation worker thread: {e}"),
                }),
            });
        }
        results
    });
    let mut outs = Vec::with_capacity(results.len());
    // The first error by worker, but a thread that could not start before the others' word
    // that it is missing.
    let failed = results
        .iter()
        .position(|r| matches!(r, Err(Error::Io { .. })));
    if let Some(Err(e)) = failed.map(|i| results.swap_remove(i)) {
        return refused(e, options.model.compute);
    }
    for r in results {
        match r {
            Ok(out) => outs.push(out),
            Err(e) => return refused(e, options.model.compute),
        }
    }
    let finished = outs.iter().map(|o| o.finished).sum();
    let out = merge(options, outs);
    observe(Progress {
        virtual_ns: out
            .report
            .ranks
            .iter()
            .map(|r| r.clock_ns)
            .max()
            .unwrap_or(0),
        events: out.report.events,
        finished,
    });
    out
}

/// `n` ranks in `workers` contiguous blocks of sizes differing by at most one.
fn split(n: u32, workers: u32) -> Vec<Range<u32>> {
    let (size, extra) = (n / workers, n % workers);
    let mut start = 0;
    (0..workers)
        .map(|w| {
            let len = size + u32::from(w < extra);
            let part = start..start + len;
            start += len;
            part
        })
        .collect()
}

/// The worker of block `w`: sets up its partition, then runs it window by window with the
/// others.
fn work<'a, F, Fut>(
    w: usize,
    options: &Options,
    program: &'a F,
    order: Option<&[u32]>,
    parts: &[Range<u32>],
    shared: &Shared,
    observe: &mut dyn FnMut(Progress),
) -> Result<PartOutcome, Error>
where
    F: Fn(Rc<dyn RankRuntime>) -> Fut,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let _poison = PoisonOnPanic(&shared.barrier);
    let mut sense = false;
    let poisoned = |_| Error::Internal {
        what: "another simulation worker thread panicked".into(),
    };
    let part = Partition::new(options, program, parts[w].clone(), order);
    if part.is_err() {
        shared.failed.store(true, Ordering::SeqCst);
    }
    shared.barrier.wait(&mut sense).map_err(poisoned)?;
    let mut part = part?;
    if shared.failed.load(Ordering::SeqCst) {
        // Another partition could not be set up: its error is the outcome.
        return Ok(part.close(false));
    }
    if options.trace {
        part.runs = Some(Vec::new());
    }
    let lookahead = options.model.lookahead();
    let mut observed = 0;
    let mut posted = u64::MAX;
    let mut window = 0usize;
    let (stopped, finished) = loop {
        let round = &shared.rounds[window % 2];
        window += 1;
        {
            let next = part.next_time().unwrap_or(u64::MAX).min(posted);
            round.next[w].store(next, Ordering::SeqCst);
            let k = part.kernel.borrow();
            round.events[w].store(k.events, Ordering::SeqCst);
            round.finished[w].store(u64::from(k.finished), Ordering::SeqCst);
            if k.stop.is_some() {
                round.stopped.store(true, Ordering::SeqCst);
            }
        }
        shared.barrier.wait(&mut sense).map_err(poisoned)?;
        let mail = std::mem::take(&mut *lock(&shared.mail[w]));
        {
            let mut k = part.kernel.borrow_mut();
            for (key, body) in mail {
                k.queue.push(key, body);
            }
            k.prune_channels();
        }
        let start = round.next.iter().map(|t| t.load(Ordering::SeqCst)).min();
        let start = start.unwrap_or(u64::MAX);
        let stopped = round.stopped.load(Ordering::SeqCst);
        let events: u64 = round.events.iter().map(|e| e.load(Ordering::SeqCst)).sum();
        let finished: u64 = round
            .finished
            .iter()
            .map(|f| f.load(Ordering::SeqCst))
            .sum();
        if stopped || start == u64::MAX {
            break (stopped, finished);
        }
        if events >= observed + OBSERVE_EVERY {
            observed = events;
            observe(Progress {
                virtual_ns: start,
                events,
                finished: finished as u32,
            });
        }
        let end = start.saturating_add(lookahead);
        part.kernel.borrow_mut().window_end = end;
        part.run::<true>(end, &mut |_| {});
        posted = post(&part, parts, shared);
    };
    let deadlock = !stopped && finished < u64::from(options.ranks);
    Ok(part.close(deadlock))
}

/// Hands the events this partition made for others in its window to their workers; returns
/// the earliest one's time (`u64::MAX`: none).
fn post<Fut>(part: &Partition<Fut>, parts: &[Range<u32>], shared: &Shared) -> u64 {
    let remote = std::mem::take(&mut part.kernel.borrow_mut().remote);
    let earliest = remote.iter().map(|(key, _)| key.time).min();
    let Some(earliest) = earliest else {
        return u64::MAX;
    };
    let mut by_worker: Vec<Vec<(Key, Body)>> = parts.iter().map(|_| Vec::new()).collect();
    for (key, body) in remote {
        let Body::Deliver { to, .. } = &body else {
            unreachable!("only deliveries go to other partitions");
        };
        let w = parts.partition_point(|p| p.end <= *to);
        by_worker[w].push((key, body));
    }
    for (w, events) in by_worker.into_iter().enumerate() {
        if !events.is_empty() {
            lock(&shared.mail[w]).extend(events);
        }
    }
    earliest
}

/// A mailbox, locked (a worker that panicked while holding it has ended the run anyway).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::{split, workers};
    use crate::model::Model;
    use crate::run::Options;

    #[test]
    fn workers_are_as_asked_but_one_per_rank_at_most_and_one_without_lookahead() {
        let with = |ranks, asked, ack| {
            let mut model = Model::worked_examples();
            model.ack_latency_ns = ack;
            let options = Options {
                workers: asked,
                ..Options::new(ranks, model)
            };
            workers(&options)
        };
        assert_eq!(with(16, 4, 200), 4);
        assert_eq!(with(3, 8, 200), 3);
        assert_eq!(with(16, 0, 200), 1);
        assert_eq!(with(16, 4, 0), 1, "a window of 0 ns holds nothing");
    }

    #[test]
    fn split_covers_every_rank_once_in_order() {
        for n in 1..40 {
            for w in 1..=n.min(9) {
                let parts = split(n, w);
                assert_eq!(parts.len(), w as usize);
                assert_eq!(parts[0].start, 0);
                assert_eq!(parts[parts.len() - 1].end, n);
                assert!(parts.windows(2).all(|p| p[0].end == p[1].start));
                assert!(
                    parts
                        .iter()
                        .all(|p| p.len() >= (n / w) as usize && !p.is_empty())
                );
            }
        }
    }
}
