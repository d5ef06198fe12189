//! Conservative parallel simulation (`docs/timing.md` §5):
//! the ranks are split into contiguous blocks, one per worker thread, each a [`Partition`]
//! with its own event queue, and the run goes in rounds where the workers meet. Nothing a rank
//! sends arrives sooner than the lookahead `L` after it is sent, so a partition may run, alone
//! and in key order, every event before its *horizon*: `L` past the earliest next event of any
//! other partition (packets in transit to it counted), and no further than the arrival of the
//! first packet it sends another partition in the round. (`L` past that arrival would be safe,
//! as the receiver may answer at once; stopping at it keeps the partitions in step: one that
//! got more than `L` ahead of another would wait for it each round, and the two would take
//! turns instead of running side by side.) Packets for other partitions are handed over at the
//! round's end. Every partition therefore runs the same events in the same order as a
//! sequential run, which is what makes the report the same byte for byte.
//!
//! A round costs a meeting (each worker reads the others' words once they have written them).
//! Where many ranks exchange at once (a halo exchange), a round holds about one lookahead of
//! every partition's events; where one message is in flight (a token ring), the token crosses
//! a whole partition in a round.
//!
use std::future::Future;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use crate::rank::SimRank;
use mpsim_proto::error::Error;

use crate::event::{Body, Key};
use crate::partition::{PartOutcome, Partition};
use crate::run::{OBSERVE_EVERY, Options, Outcome, Progress, merge, refused};

/// The number of worker threads `options` get: as asked, at most one per rank, and one when
/// the lookahead is 0 (a round would then hold nothing).
pub(crate) fn workers(options: &Options) -> u32 {
    if options.model.lookahead() == 0 {
        1
    } else {
        options.workers.clamp(1, options.ranks.max(1))
    }
}

/// The workers' meeting point before the first round (have all partitions been set up?),
/// crossed once: each worker counts itself in and spins, yielding the core after a while for
/// workers that outnumber the cores, until all have. A worker that panics poisons it (its
/// `poisoned` flag, which the rounds' waits watch too): the others then return instead of
/// waiting for ever. The rounds meet without it ([`Round::wait_for_others`]: a round can hold
/// a single event, and a shared counter costs more cache-line transfers than reading each
/// other's words).
struct StartGate {
    parties: usize,
    arrived: CachePadded<AtomicUsize>,
    poisoned: AtomicBool,
}

/// The others have gone (a worker panicked).
struct Poisoned;

impl StartGate {
    fn new(parties: usize) -> Self {
        StartGate {
            parties,
            arrived: CachePadded::new(AtomicUsize::new(0)),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Waits for every worker (a release of what this one wrote before, an acquire of what
    /// the others did).
    fn wait(&self) -> Result<(), Poisoned> {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        spin_until(
            || self.arrived.load(Ordering::Acquire) == self.parties,
            &self.poisoned,
        )
    }
}

/// Spins until `done` holds, yielding the core after a while (workers that outnumber the
/// cores); fails if `poisoned` is set (a worker panicked) first.
fn spin_until(done: impl Fn() -> bool, poisoned: &AtomicBool) -> Result<(), Poisoned> {
    let mut spins = 0u32;
    while !done() {
        if poisoned.load(Ordering::Relaxed) {
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

/// Poisons the start gate if its worker unwinds (a bug: programs' panics are caught).
struct PoisonOnPanic<'a>(&'a StartGate);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::SeqCst);
        }
    }
}

/// What a worker says at the start of a round, on cache lines of its own (a word written
/// by one worker must not take another's words away from it).
struct Words {
    /// The time of its next event (`u64::MAX`: none), mail not counted.
    next: AtomicU64,
    /// The earliest arrival of the mail the others handed it for this round (`u64::MAX`:
    /// none), written by them.
    mail: AtomicU64,
    /// Events run and ranks finished so far (progress, deadlock).
    events: AtomicU64,
    finished: AtomicU64,
    /// Where its first error ends the run (`Stop::end`; `u64::MAX`: none).
    stop_end: AtomicU64,
    /// For a livelock's checkpoint (`livelock`), looked at when every worker's next event is
    /// at or after it: whether its partition is quiet, its polls queued, its events that
    /// were not polls.
    quiet: AtomicBool,
    polls: AtomicU64,
    progress: AtomicU64,
    /// `i + 1` once the worker has written its words of round `i` (a release: what it wrote
    /// before, its words and the mail it posted for this round, is seen by whoever reads it).
    /// The others wait for it: the meeting point of the round.
    arrived: AtomicU64,
}

/// What the workers say at the start of a round, by worker.
struct Round(Vec<CachePadded<Words>>);

impl Round {
    fn new(workers: usize) -> Self {
        let words = || Words {
            next: AtomicU64::new(u64::MAX),
            mail: AtomicU64::new(u64::MAX),
            events: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            stop_end: AtomicU64::new(u64::MAX),
            quiet: AtomicBool::new(false),
            polls: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            arrived: AtomicU64::new(0),
        };
        Round((0..workers).map(|_| CachePadded::new(words())).collect())
    }

    /// Waits until every worker but `me` has arrived at round `i` (whose words these are),
    /// spinning on their words, which it reads next anyway: no shared counter, so a round
    /// costs each worker one cache line from each other worker. Fails if a worker panicked
    /// (`poisoned`).
    fn wait_for_others(&self, me: usize, i: usize, poisoned: &AtomicBool) -> Result<(), Poisoned> {
        let round = i as u64 + 1;
        for (v, words) in self.0.iter().enumerate() {
            if v == me {
                continue;
            }
            spin_until(|| words.arrived.load(Ordering::Acquire) >= round, poisoned)?;
        }
        Ok(())
    }
}

/// What the workers share: the gate before the first round, what each says at the start of
/// a round, and the packets in transit between them.
///
/// Round `i`'s words are in `rounds[i % 3]`: each worker writes its own and then says it
/// has arrived (a mail word is written by the senders, once they have run round `i - 1` and
/// before they arrive at round `i`), and each reads the others' once all have arrived
/// ([`Round::wait_for_others`]; so no worker is more than one round ahead of another). A
/// worker clears its mail word of round `i + 2` during round `i`: round `i - 1`, which used
/// the same slot, has been read by all (they have arrived at round `i`, after reading it),
/// and no one writes it before it has seen this worker arrive at round `i + 1`. Mail posted
/// by a worker already running the next round may be taken with this round's: it arrives
/// after this worker's horizon, so taking it early changes nothing.
struct Shared {
    start: StartGate,
    rounds: [Round; 3],
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
    F: Fn(Rc<SimRank>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let parts = split(options.ranks, workers);
    let shared = Shared {
        start: StartGate::new(parts.len()),
        rounds: [(); 3].map(|()| Round::new(parts.len())),
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
            // The threads that did start wait at the start gate: let them go.
            shared.start.poisoned.store(true, Ordering::SeqCst);
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
    merge(options, outs, observe)
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

/// The worker of block `w`: sets up its partition, then runs it round by round with the
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
    F: Fn(Rc<SimRank>) -> Fut,
    Fut: Future<Output = Result<(), Error>> + 'a,
{
    let _poison = PoisonOnPanic(&shared.start);
    let poisoned = |_| Error::Internal {
        what: "another simulation worker thread panicked".into(),
    };
    let part = Partition::new(options, program, parts[w].clone(), order);
    if part.is_err() {
        shared.failed.store(true, Ordering::SeqCst);
    }
    shared.start.wait().map_err(poisoned)?;
    let mut part = part?;
    if shared.failed.load(Ordering::SeqCst) {
        // Another partition could not be set up: its error is the outcome.
        return Ok(part.close(false));
    }
    if options.trace {
        part.runs = Some(Vec::new());
    }
    let lookahead = options.model.lookahead();
    // What the observer was last told: events, and virtual time (never going back).
    let (mut observed, mut reached) = (0, 0);
    // The mailbox's storage, swapped with it each time there is mail.
    let mut inbox = Vec::new();
    // The words are ordered by `arrived` (written before a worker's release store of it, read
    // after the others' acquire loads of it): relaxed accesses suffice.
    let relaxed = Ordering::Relaxed;
    let mut i = 0usize;
    // Whether this partition was quiet (`Kernel::quiet`) when it had run this many events: its
    // ranks change only as events run (mail, which changes its queue, is looked at afresh
    // first), and a partition may wait at a checkpoint for several rounds.
    let mut quiet_at: Option<(u64, Option<(u64, u64)>)> = None;
    let (stopped, finished) = loop {
        let round = &shared.rounds[i % 3].0;
        {
            let k = part.kernel.borrow();
            let mine = &round[w];
            let next = k.queue.peek_time().unwrap_or(u64::MAX);
            mine.next.store(next, relaxed);
            mine.events.store(k.counts.events, relaxed);
            mine.finished.store(u64::from(k.counts.finished), relaxed);
            mine.stop_end.store(k.stop.end, relaxed);
            // Read only when every worker's next event is at the checkpoint or after it.
            let quiet = if next <= k.livelock.watch.next_check || !k.queue.resumes_only() {
                None
            } else {
                match quiet_at {
                    Some((events, quiet)) if events == k.counts.events => quiet,
                    _ => {
                        let quiet = k.quiet();
                        quiet_at = Some((k.counts.events, quiet));
                        quiet
                    }
                }
            };
            let (polls, progress) = quiet.unwrap_or_default();
            mine.quiet.store(quiet.is_some(), relaxed);
            mine.polls.store(polls, relaxed);
            mine.progress.store(progress, relaxed);
            mine.arrived.store(i as u64 + 1, Ordering::Release);
        }
        shared.rounds[i % 3]
            .wait_for_others(w, i, &shared.start.poisoned)
            .map_err(poisoned)?;
        shared.rounds[(i + 2) % 3].0[w]
            .mail
            .store(u64::MAX, relaxed);
        // The earliest next event of all, and of all but this worker, mail counted; where a
        // stopped run ends; progress of all, and of all but this worker.
        let (mut start, mut others, mut own) = (u64::MAX, u64::MAX, u64::MAX);
        let mut stop_end = u64::MAX;
        let (mut events, mut others_events, mut finished, mut others_finished) = (0, 0, 0, 0);
        for (v, words) in round.iter().enumerate() {
            let t = words.next.load(relaxed).min(words.mail.load(relaxed));
            let (e, f) = (words.events.load(relaxed), words.finished.load(relaxed));
            start = start.min(t);
            events += e;
            finished += f;
            if v == w {
                own = t;
            } else {
                others = others.min(t);
                others_events += e;
                others_finished += f;
            }
            stop_end = stop_end.min(words.stop_end.load(relaxed));
        }
        // Mail comes with a word; mail without one (posted early for the next round) waits.
        {
            let mut k = part.kernel.borrow_mut();
            if round[w].mail.load(relaxed) != u64::MAX {
                std::mem::swap(&mut *lock(&shared.mail[w]), &mut inbox);
                for (key, body) in inbox.drain(..) {
                    k.queue.push(key, body);
                }
            }
            k.prune_channels();
        }
        // Nothing is left to run anywhere, or nothing before the end of a stopped run.
        if start == u64::MAX || start >= stop_end {
            break (stop_end != u64::MAX, finished);
        }
        // A livelock's checkpoint, as a sequential run looks at it (`partition::checkpoint`):
        // every worker reads the same words and decides the same.
        {
            let mut k = part.kernel.borrow_mut();
            if stop_end != u64::MAX {
                k.livelock.watch.next_check = u64::MAX;
            } else if start > k.livelock.watch.next_check {
                let no_mail = round.iter().all(|v| v.mail.load(relaxed) == u64::MAX);
                let quiet = no_mail
                    && round.iter().all(|v| v.quiet.load(relaxed))
                    && round.iter().any(|v| v.polls.load(relaxed) > 0);
                let progress = round.iter().map(|v| v.progress.load(relaxed)).sum();
                k.livelock.found = k.livelock.watch.check(start, quiet, progress);
                if k.livelock.found.is_some() {
                    break (false, finished);
                }
            }
        }
        if events >= observed + OBSERVE_EVERY {
            observed = events;
            reached = reached.max(start);
            observe(Progress {
                virtual_ns: reached,
                events,
                finished: finished as u32,
            });
        }
        // A round may be long (a partition a token crosses alone): the observer also hears
        // of this one's progress while it runs, the others' counts as of the round's start.
        let mut during = |p: Progress| {
            reached = reached.max(p.virtual_ns);
            observed = others_events + p.events;
            observe(Progress {
                virtual_ns: reached,
                events: observed,
                finished: others_finished as u32 + p.finished,
            });
        };
        {
            let mut k = part.kernel.borrow_mut();
            k.round.horizon = others
                .saturating_add(lookahead)
                .min(k.livelock.watch.next_check.saturating_add(1));
            k.stop.end = stop_end;
            k.round.remote_floor = own.saturating_add(lookahead);
        }
        part.run::<true>(&mut during);
        i += 1;
        post(&part, parts, shared, &shared.rounds[i % 3]);
    };
    let deadlock = !stopped && finished < u64::from(options.ranks);
    Ok(part.close(deadlock))
}

/// Hands the events this partition made for others in its round to their workers, and says
/// in `next` (the next round's words) the earliest arrival handed to each.
fn post<Fut>(part: &Partition<Fut>, parts: &[Range<u32>], shared: &Shared, next: &Round) {
    let mut k = part.kernel.borrow_mut();
    if k.round.remote.is_empty() {
        return;
    }
    let worker = |body: &Body| {
        let Body::Deliver { to, .. } = body else {
            unreachable!("only deliveries go to other partitions");
        };
        parts.partition_point(|p| p.end <= *to)
    };
    // By worker, each one's in the order made (a stable sort); handed over from the last.
    let remote = &mut k.round.remote;
    remote.sort_by_key(|(_, body)| worker(body));
    while let Some((_, body)) = remote.last() {
        let v = worker(body);
        let from = remote.partition_point(|(_, b)| worker(b) < v);
        let earliest = remote[from..].iter().map(|(key, _)| key.time).min();
        next.0[v]
            .mail
            .fetch_min(earliest.unwrap_or(u64::MAX), Ordering::Relaxed);
        lock(&shared.mail[v]).extend(remote.drain(from..));
    }
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
        assert_eq!(with(16, 4, 0), 1, "a round of 0 ns holds nothing");
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
