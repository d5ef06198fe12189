//! Launching a run: one scoped thread per rank, the launching thread as deadlock watchdog, the
//! first error ending every rank (`docs/p2p.md` §8 `Aborted`, `Deadlock`).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpsim_proto::deadlock::{BlockedRank, DeadlockReport};
use mpsim_proto::error::Error;
use mpsim_proto::p2p::{Config, never_received};
use mpsim_proto::trace::{Trace, TraceFilter};

use crate::binding::{Binding, allowed_cores, bind_rank};
use crate::mailbox::{Activity, Mailbox, lock};
use crate::measure::{self, MeasuredWait, RankFigures};
use crate::rank::{ThreadRank, WaitPolicy, block_on};
use crate::trace;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of ranks (threads).
    pub ranks: u32,
    /// Protocol settings of every endpoint.
    pub config: Config,
    /// Record a trace in host time ([`Outcome::trace`]): each rank into its own buffer,
    /// merged when the run ends.
    pub trace: bool,
    /// What the trace keeps: a window of host time since the run's start and a set of ranks
    /// (`TraceFilter`'s rules), asked as each rank records. Default: everything.
    pub trace_filter: TraceFilter,
    /// Measure each rank's time in compute and blocked in waits, and its longest waits, for
    /// the report ([`Outcome::ranks`], [`Outcome::longest_waits`]); without it those are 0 and
    /// empty (the traffic counts are there either way).
    pub measure: bool,
    /// How waiting ranks wait; `None` picks by ranks per core ([`WaitPolicy::for_run`]).
    pub wait: Option<WaitPolicy>,
    /// Whether rank threads are bound to cores; `None` picks by ranks per core
    /// ([`Binding::for_run`]).
    pub bind: Option<Binding>,
}

/// How a run ended.
#[derive(Debug)]
#[must_use = "a run's outcome holds its first error"]
pub struct Outcome {
    /// The run's first error, if any.
    pub error: Option<Error>,
    /// What each rank did, when [`Options::trace`] asked for it (also after an error: it shows
    /// what led there).
    pub trace: Option<Trace>,
    /// When each rank's program ended, host ns since the run's start, by rank (0 for a rank
    /// whose thread never started).
    pub finish_ns: Vec<u64>,
    /// What each rank did, by rank: its traffic, and with [`Options::measure`] its time in
    /// compute and blocked (all 0 for a rank whose thread never started).
    pub ranks: Vec<RankFigures>,
    /// With [`Options::measure`]: the run's longest waits, longest first, then by start and
    /// rank (at most [`LONGEST_WAITS`](crate::LONGEST_WAITS)).
    pub longest_waits: Vec<MeasuredWait>,
    /// Receives the program dropped after they had matched, and messages no receive took,
    /// in the simulator's words (`mpsim_proto::p2p::never_received`), by receiving rank, each
    /// rank's in arrival order. A failed run lists them too: what had reached each rank when
    /// it stopped and no receive took.
    pub warnings: Vec<String>,
}

impl Outcome {
    /// The first error as a `Result`, dropping the trace.
    pub fn into_result(self) -> Result<(), Error> {
        self.error.map_or(Ok(()), Err)
    }
}

pub(crate) struct Shared {
    pub mailboxes: Vec<Mailbox>,
    pub abort: AtomicBool,
    /// Every rank has finished: the ranks that serve their peers after their end stop.
    pub all_done: AtomicBool,
    /// How ranks wait for packets: `Options::wait`, or chosen by ranks per core.
    pub wait_policy: WaitPolicy,
    first_error: Mutex<Option<Error>>,
    pub start: Instant,
}

impl Shared {
    /// Records `err` if it is the first, and ends the run on every rank.
    pub fn fail(&self, err: Error) {
        {
            let mut first = lock(&self.first_error);
            if first.is_none() {
                *first = Some(err);
            }
        }
        self.abort.store(true, Ordering::Release);
        for m in &self.mailboxes {
            m.wake();
        }
    }

    /// The first error's text once the run is aborting.
    pub fn aborted(&self) -> Option<String> {
        if !self.abort.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.first_error).as_ref().map(ToString::to_string)
    }
}

/// Runs `program` on `options.ranks` threads; returns the run's first error, if any, and the
/// trace if asked for.
///
/// `program` is called once per rank, on that rank's thread, with the rank's runtime.
pub fn run<F, Fut>(options: &Options, program: F) -> Outcome
where
    F: Fn(Rc<ThreadRank>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    run_watched(options, program, &mut || None)
}

/// [`run`], with `check` called on the launching thread every 1 to 50 ms while the ranks run:
/// an error it returns ends the run as a rank's would (every rank stops at its next call).
/// The launcher watches the host's memory with it.
pub fn run_watched<F, Fut>(
    options: &Options,
    program: F,
    check: &mut dyn FnMut() -> Option<Error>,
) -> Outcome
where
    F: Fn(Rc<ThreadRank>) -> Fut + Sync,
    Fut: Future<Output = Result<(), Error>>,
{
    let n = options.ranks;
    let filter = options.trace_filter.clone();
    let checked = crate::host_limits::check_threads(n).and_then(|()| {
        if options.trace {
            filter
                .check(n)
                .map_err(|what| Error::InvalidArgument { what })?;
        }
        Ok(())
    });
    if let Err(e) = checked {
        return Outcome {
            error: Some(e),
            trace: options.trace.then(|| trace::merge(Vec::new(), &filter).0),
            finish_ns: vec![0; n as usize],
            ranks: vec![RankFigures::default(); n as usize],
            longest_waits: Vec::new(),
            warnings: Vec::new(),
        };
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let bound_cores = allowed_cores(
        options
            .bind
            .unwrap_or_else(|| Binding::for_run(n as usize, cores)),
    );
    let shared = Arc::new(Shared {
        mailboxes: (0..n).map(|_| Mailbox::new()).collect(),
        abort: AtomicBool::new(false),
        all_done: AtomicBool::new(false),
        wait_policy: options
            .wait
            .unwrap_or_else(|| WaitPolicy::for_run(n as usize, cores)),
        first_error: Mutex::new(None),
        start: Instant::now(),
    });
    let watchdog = std::thread::current();
    let rank_filter = options.trace.then(|| Arc::new(filter.clone()));
    let mut ranks = std::thread::scope(|scope| {
        let mut threads = Vec::with_capacity(n as usize);
        for rank in 0..n {
            let spawned = {
                let shared = Arc::clone(&shared);
                let program = &program;
                let watchdog = watchdog.clone();
                let bound_cores = &bound_cores;
                let rank_filter = rank_filter.clone();
                std::thread::Builder::new()
                    .name(format!("rank-{rank}"))
                    .spawn_scoped(scope, move || {
                        bind_rank(rank, n, bound_cores);
                        let mailbox = &shared.mailboxes[rank as usize];
                        mailbox.register_thread();
                        let rt = Rc::new(ThreadRank::new(
                            rank,
                            Arc::clone(&shared),
                            options.config,
                            rank_filter,
                            options.measure,
                        ));
                        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            block_on(&rt, program(Rc::clone(&rt)))
                        }));
                        let result = match outcome {
                            Ok(Ok(())) => {
                                let pending = rt.pending();
                                if pending.is_empty() {
                                    Ok(())
                                } else {
                                    Err(Error::PendingAtExit {
                                        rank,
                                        time_ns: None,
                                        requests: pending,
                                    })
                                }
                            }
                            Ok(Err(mut e)) => {
                                // A program's own failure learns its rank here.
                                e.stamp_rank(rank);
                                Err(e)
                            }
                            Err(panic) => Err(Error::from_panic(rank, &*panic)),
                        };
                        if let Err(e) = result {
                            shared.fail(e);
                        }
                        let finished = shared.start.elapsed().as_nanos() as u64;
                        mailbox.set_activity(Activity::Finished);
                        watchdog.unpark();
                        let trace = rt.take_trace();
                        serve_until_all_done(&rt, &shared);
                        RankEnd {
                            trace,
                            finished,
                            unreceived: rt.unreceived(),
                            discarded: rt.take_discarded(),
                            figures: rt.figures(),
                            longest: rt.take_longest_waits(),
                        }
                    })
            };
            match spawned {
                Ok(thread) => threads.push(thread),
                Err(e) => {
                    // The host will not give another thread (too many ranks for its limits or
                    // memory): the ranks started are told to stop, the others count as
                    // finished, and the run ends with the reason.
                    shared.fail(Error::NoMemory {
                        what: format!(
                            "cannot start the thread of rank {rank} of {n} (the threads \
                             backend runs a thread per rank): {e}"
                        ),
                    });
                    for m in &shared.mailboxes[rank as usize..] {
                        m.set_activity(Activity::Finished);
                    }
                    break;
                }
            }
        }
        watch(&shared, check);
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect::<Vec<_>>()
    });
    let mut finish_ns: Vec<u64> = ranks.iter().map(|r| r.finished).collect();
    finish_ns.resize(n as usize, 0);
    let mut error = lock(&shared.first_error).take();
    let mut warnings = Vec::new();
    let mut figures = Vec::with_capacity(n as usize);
    for (to, (rank, mailbox)) in ranks.iter().zip(&shared.mailboxes).enumerate() {
        // As the simulator lists them: each rank's dropped receives, then its messages
        // never received (those it took in, then those still in its lanes).
        warnings.extend(rank.discarded.iter().cloned());
        for (from, envelope, bytes) in &rank.unreceived {
            warnings.push(never_received(*from, to as u32, envelope, *bytes));
        }
        let mut f = rank.figures;
        for (from, envelope, bytes, protocol) in mailbox.leftover_messages() {
            warnings.push(never_received(from, to as u32, &envelope, bytes));
            f.unreceived.add(protocol, bytes);
        }
        figures.push(f);
    }
    figures.resize(n as usize, RankFigures::default());
    let longest_waits =
        measure::longest_of(ranks.iter_mut().map(|r| std::mem::take(&mut r.longest)));
    let traces: Option<Vec<_>> = ranks.into_iter().map(|r| r.trace).collect();
    let trace = traces.map(|t| {
        let (trace, lost) = trace::merge(t, &filter);
        error = error.take().or(lost);
        trace
    });
    Outcome {
        error,
        trace,
        finish_ns,
        ranks: figures,
        longest_waits,
        warnings,
    }
}

/// What a rank's thread hands back when it ends.
struct RankEnd {
    trace: Option<trace::RankTrace>,
    /// When its program ended.
    finished: u64,
    /// The messages it took in and no receive took (`ThreadRank::unreceived`).
    unreceived: Vec<(u32, mpsim_proto::matching::Envelope, usize)>,
    /// The warnings of receives it dropped after they matched.
    discarded: Vec<String>,
    figures: RankFigures,
    longest: Vec<MeasuredWait>,
}

/// A rank whose program has ended still takes in its packets and answers them until every
/// rank has ended (or the run aborts), as MPI's `MPI_Finalize` waits for its peers: a peer
/// that cancels a send to it gets its answer (`docs/p2p.md` §5, "either way `wait`
/// returns"; the simulator's finished ranks answer too), and a message that reaches it late
/// is taken in, to be listed among those never received. Senders wake it as they wake a
/// parked rank, and the end of the run wakes every rank; a timed park backs that up, longer
/// each time nothing came ([`crate::rank::next_nap`]): with a fixed 10 ms, 10,000 finished
/// ranks woke a million times a second and starved the ranks still running (a run of 10,000
/// ranks that sent nothing did not end in a minute).
fn serve_until_all_done(rank: &ThreadRank, shared: &Shared) {
    let mut nap = crate::rank::FIRST_NAP;
    while !shared.all_done.load(Ordering::Acquire) && !shared.abort.load(Ordering::Acquire) {
        if rank.serve() {
            nap = crate::rank::FIRST_NAP;
        } else {
            std::thread::park_timeout(nap);
            nap = crate::rank::next_nap(nap);
        }
    }
}

/// The launching thread: returns when every rank finished; declares a deadlock when every
/// unfinished rank is parked, no mailbox holds a packet, and no packet moved between two looks;
/// ends the run with the error `check` returns, if it does.
fn watch(shared: &Shared, check: &mut dyn FnMut() -> Option<Error>) {
    let mut interval = Duration::from_millis(1);
    let mut last: Option<u64> = None;
    loop {
        std::thread::park_timeout(interval);
        interval = (interval * 2).min(Duration::from_millis(50));
        let mut all_finished = true;
        let mut stuck = true;
        let mut pushed = 0;
        for m in &shared.mailboxes {
            pushed += m.taken();
            match m.activity() {
                // A finished rank still answers its peers (`serve_until_all_done`).
                Activity::Finished => stuck &= !m.has_mail(),
                Activity::Running => {
                    all_finished = false;
                    stuck = false;
                }
                Activity::Parked => {
                    all_finished = false;
                    stuck &= !m.has_mail();
                }
            }
        }
        if all_finished {
            shared.all_done.store(true, Ordering::Release);
            for m in &shared.mailboxes {
                m.wake();
            }
            return;
        }
        if !shared.abort.load(Ordering::Acquire)
            && let Some(e) = check()
        {
            shared.fail(e);
        }
        if !stuck || shared.abort.load(Ordering::Acquire) {
            last = None;
            continue;
        }
        if last == Some(pushed) {
            shared.fail(Error::Deadlock {
                report: deadlock_report(shared),
            });
            last = None;
        } else {
            last = Some(pushed);
        }
    }
}

/// Each blocked rank with its call and what it waits on, and the wait-for cycle through the
/// lowest rank that has one.
fn deadlock_report(shared: &Shared) -> Box<DeadlockReport> {
    let n = shared.mailboxes.len();
    let mut blocked = Vec::new();
    for (r, m) in shared.mailboxes.iter().enumerate() {
        if m.activity() == Activity::Parked {
            let r = r as u32;
            blocked.push(lock(&m.blocked).as_ref().map_or_else(
                || BlockedRank::new(r, "?", None, Vec::new()),
                |b| b.report(r),
            ));
        }
    }
    let finished = |rank: u32| shared.mailboxes[rank as usize].activity() == Activity::Finished;
    Box::new(DeadlockReport::new(blocked, n as u32, &finished))
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::rc::Rc;

    use mpsim_proto::error::Error;
    use mpsim_proto::p2p::Config;
    use mpsim_proto::runtime::RankRuntime;

    use mpsim_proto::deadlock::Awaited;
    use mpsim_proto::matching::Pattern;
    use mpsim_proto::matching::{ContextId, Envelope, Source, Tag};
    use mpsim_proto::p2p::SendMode;
    use mpsim_proto::runtime::{Call, Payload, Wait};

    use crate::ThreadRank;

    /// Waits until a message of context 0 has arrived (a blocking probe), as `awaited`.
    async fn probe_any(rt: &ThreadRank, awaited: Awaited) -> Result<(), Error> {
        let pattern = Pattern {
            context: ContextId(0),
            source: Source::Any,
            tag: Tag::Any,
        };
        let wait = Wait::Probe {
            pattern: &pattern,
            take: false,
            call: "probe",
            awaited,
        };
        poll_fn(|_| rt.poll_wait(wait).map_ok(drop)).await
    }

    use super::{Options, run, run_watched};

    /// The options of a 2-rank run, everything else by default.
    fn two_ranks() -> Options {
        Options {
            ranks: 2,
            config: Config::default(),
            trace: false,
            trace_filter: Default::default(),
            measure: false,
            wait: None,
            bind: None,
        }
    }

    /// An error from the launcher's check (the host's memory running out) ends a run whose
    /// ranks wait for something that never comes, before the deadlock watch would.
    #[test]
    fn a_failed_check_ends_the_run_with_its_error() {
        let options = two_ranks();
        let wait_forever = |rt: Rc<ThreadRank>| async move {
            let awaited = mpsim_proto::deadlock::Awaited {
                peer: mpsim_proto::matching::Source::Any,
                tag: mpsim_proto::matching::Tag::Any,
                context: mpsim_proto::matching::ContextId(0),
            };
            probe_any(&rt, awaited).await
        };
        let mut looks = 0;
        let mut check = || {
            looks += 1;
            Some(Error::NoMemory {
                what: "the host's memory is nearly exhausted".into(),
            })
        };
        let outcome = run_watched(&options, wait_forever, &mut check);
        match outcome.error {
            Some(Error::NoMemory { what }) => assert!(what.contains("nearly exhausted"), "{what}"),
            other => panic!("expected NoMemory, got {other:?}"),
        }
        assert_eq!(looks, 1, "a failed run is not checked again");
    }

    /// §8 (S14 on the simulator): a run lists the messages no receive took, in the
    /// simulator's words: one the receiver took in before its end (it waited for an arrival,
    /// then ended) and one that reached it after its end, still in its lane. A failed run
    /// lists them too (what had reached the receiver when the run stopped), and counts them as
    /// unreceived by protocol, and as sent.
    #[test]
    fn messages_never_received_are_warnings() {
        let options = two_ranks();
        let program = |fail: bool| {
            move |rt: Rc<ThreadRank>| async move {
                let envelope = |tag| Envelope::new(ContextId(0), rt.rank(), tag);
                if rt.rank() == 0 {
                    for (tag, n) in [(5, 8), (6, 3)] {
                        let payload = Payload::from_vec(vec![1; n]);
                        let started = rt.start(Call::Send {
                            call: "send",
                            mode: SendMode::Standard,
                            to: 1,
                            envelope: envelope(tag),
                            payload,
                            blocking: true,
                        });
                        assert!(started.is_ok(), "an eager send starts");
                    }
                    return if fail {
                        Err(Error::Internal {
                            what: "stop".into(),
                        })
                    } else {
                        Ok(())
                    };
                }
                let awaited = Awaited {
                    peer: Source::Any,
                    tag: Tag::Any,
                    context: ContextId(0),
                };
                probe_any(&rt, awaited).await
            }
        };
        let outcome = run(&options, program(false));
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        assert_eq!(
            outcome.warnings,
            [
                "a message of 8 bytes from rank 0 to rank 1 (tag 5, context 0) was never received",
                "a message of 3 bytes from rank 0 to rank 1 (tag 6, context 0) was never received",
            ]
        );
        let warnings = outcome.warnings;
        let outcome = run(&options, program(true));
        assert!(outcome.error.is_some());
        assert_eq!(outcome.warnings, warnings);
        let (sender, receiver) = (&outcome.ranks[0], &outcome.ranks[1]);
        assert_eq!(
            (sender.sent.messages, sender.sent.bytes),
            ([2, 0, 0, 0], [11, 0, 0, 0])
        );
        assert_eq!(receiver.received.total_messages(), 0);
        assert_eq!(
            (receiver.unreceived.messages, receiver.unreceived.bytes),
            ([2, 0, 0, 0], [11, 0, 0, 0])
        );
    }
}
