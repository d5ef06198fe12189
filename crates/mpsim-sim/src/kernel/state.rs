//! The kernel's state beside its ranks and its queue, grouped by concern: each group is what
//! one part of the simulator reads and writes, so a reader finds, say, everything a stopped
//! run keeps in one place (`Kernel`'s fields name the groups).

use std::collections::BTreeMap;

use mpsim_proto::error::Error;
use mpsim_proto::trace::{TraceEvent, TraceFilter};

use mpsim_proto::p2p::{Endpoint, Outbox};
use mpsim_proto::runtime::Payload;

use super::{Awaiting, NOT_POLLING};
use crate::event::{Body, Key, RESUME};
use crate::fifo::Channels;
use crate::livelock::Watch;
use crate::model::{LastDelay, Model};
use crate::waits::TopWaits;

/// How packets are timed (`Kernel::transmit` and deliveries): the machine model, what the
/// delay lookups remember, the lookahead, and each channel's latest arrival (FIFO, `fifo`).
pub(crate) struct Network {
    /// The machine model; read-only (the delay memos below depend on it).
    pub model: Model,
    /// The last lookup in `model.bsend` and `model.ssend`, in that order.
    pub last_delay: [LastDelay; 2],
    /// The model's lookahead `L`: nothing sent at `t` arrives before `t + L`.
    pub lookahead: u64,
    /// Latest arrival per channel `(from, to)` with a message still in flight, but for the
    /// channels in their sender's `last_send`.
    pub channels: Channels,
}

impl Network {
    /// The network of `model`, with nothing in flight.
    pub fn new(model: Model) -> Self {
        Network {
            last_delay: [LastDelay::new(&model.bsend), LastDelay::new(&model.ssend)],
            lookahead: model.lookahead(),
            model,
            channels: Channels::default(),
        }
    }
}

/// What the kernel lends the endpoints it feeds, so that no endpoint keeps memory of its own
/// for it.
#[derive(Default)]
pub(crate) struct Loans {
    /// Output storage lent to the endpoint taking an input (`Kernel::flush` drains it and
    /// takes it back), so that no endpoint keeps output queues of its own.
    pub outbox: Option<Box<Outbox<Payload>>>,
    /// The endpoint the last call of a rank whose run has ended acted on
    /// (`Kernel::lend_outbox`).
    pub void: Option<Box<Endpoint<Payload>>>,
}

/// What the run has done so far, which progress reports and the outcome read: counted as it
/// goes, never looked up (a scan of millions of ranks every 65,536 events made a
/// 10,000,000-rank ring take minutes).
#[derive(Default)]
pub(crate) struct Counts {
    /// Events run (deliveries and resumes; a sequential run's checkpoints are not events).
    pub events: u64,
    /// Ranks whose program has finished.
    pub finished: u32,
}

/// A run stopped by an error (S16 as amended by D2, `docs/extensions.md`): the first error,
/// and where the run ends. Kept apart from the rest: the run loop looks at whether there is
/// one on every event, and a parallel run's driver lowers `end` to the first error of any
/// partition.
pub(crate) struct Stop {
    /// The first error, with its virtual time.
    pub first: Option<(Error, u64)>,
    /// Where a run stopped by an error ends: the time of the error's event plus the lookahead;
    /// no event at or after it runs. `u64::MAX` while no error is known.
    pub end: u64,
    /// The key of the event of the first error.
    pub key: Key,
}

impl Default for Stop {
    fn default() -> Self {
        Stop {
            first: None,
            end: u64::MAX,
            key: Key::new(0, RESUME, 0, 0),
        }
    }
}

/// A partition's round in a parallel run (`parallel.rs`): how far it may run, and what it made
/// for other partitions. In a sequential run the horizon is `u64::MAX` and the rest unused.
pub(crate) struct Round {
    /// Where this partition's round must end: set by the driver from the other partitions'
    /// next events and the next checkpoint for a livelock (`livelock`), lowered to `a` by the
    /// first packet this partition sends another to arrive at `a`.
    pub horizon: u64,
    /// The earliest a packet sent in this round can arrive (the time of the round's first
    /// event plus `L`): a check of the lookahead the rounds rely on.
    pub remote_floor: u64,
    /// Events for ranks of other partitions made in this round, in the order made.
    pub remote: Vec<(Key, Body)>,
    /// The key of the event being run, kept in a parallel run only (its partitions' errors,
    /// top waits and trace records are merged by it; a sequential run's come in key order).
    pub current: Key,
}

impl Default for Round {
    fn default() -> Self {
        Round {
            horizon: u64::MAX,
            remote_floor: 0,
            remote: Vec::new(),
            current: Key::new(0, RESUME, 0, 0),
        }
    }
}

/// The trace, when one was asked for (a trace costs memory per event): recorded in event
/// order, so the same run gives the same bytes: `compute` and `poll` spans, a span per blocking
/// wait named after the call, and each message with its modelled arrival.
#[derive(Default)]
pub(crate) struct TraceLog {
    /// The records, or `None` without a trace.
    pub(super) records: Option<Vec<TraceEvent>>,
    /// What the trace keeps (`Options::trace_filter`): asked as each record is made, so that
    /// what falls outside takes no memory.
    pub(super) filter: TraceFilter,
    /// Messages recorded so far (their ids).
    pub(super) messages_sent: u64,
}

impl TraceLog {
    /// Starts recording, keeping what `filter` keeps.
    pub fn start(&mut self, filter: TraceFilter) {
        self.records = Some(Vec::new());
        self.filter = filter;
    }

    /// How many records there are, with a trace.
    #[inline(always)]
    pub fn len(&self) -> Option<usize> {
        self.records.as_ref().map(Vec::len)
    }

    /// The records, taken at the end of the run.
    pub fn take(&mut self) -> Option<Vec<TraceEvent>> {
        self.records.take()
    }
}

/// The watch for a livelock (`livelock`) and what it reads: each rank's polls. The poll
/// tables are by index as the kernel's `ranks`, and empty until a rank polls.
pub(crate) struct Livelock {
    /// When the next checkpoint comes, and what the checkpoints saw.
    pub watch: Watch,
    /// Once a livelock is found: since when (virtual time) and at which checkpoint.
    pub found: Option<(u64, u64)>,
    /// Polls that found nothing so far, each ended by a resume.
    pub(super) polls: u64,
    /// The call each rank last polled in, and the number its poll's resume has among the
    /// events it made (`RankState::made`): while that resume is queued, it is the last the
    /// rank made.
    pub(super) poll_calls: Vec<&'static str>,
    pub(super) poll_events: Vec<u64>,
    /// When each rank's polls began (the start of its first poll since it last did anything
    /// else, or was given anything: the livelock report's start), and when its last poll
    /// began.
    pub(super) poll_since: Vec<u64>,
    pub(super) poll_last: Vec<u64>,
    /// The rank (index as `ranks`) whose program called its endpoint first since that rank's
    /// last poll, with the time of the endpoint's last input before that call
    /// (`Endpoint::now`): a later input than its last poll (a message, an ack) means the rank
    /// was given something, and its next poll begins anew (`Kernel::note_poll`).
    pub input_before: (usize, u64),
}

impl Default for Livelock {
    fn default() -> Self {
        Livelock {
            watch: Watch::new(0),
            found: None,
            polls: 0,
            poll_calls: Vec::new(),
            poll_events: Vec::new(),
            poll_since: Vec::new(),
            poll_last: Vec::new(),
            input_before: (NOT_POLLING, 0),
        }
    }
}

/// What the report says beyond the ranks' own counters: the longest waits, what stuck ranks
/// wait for, and warnings of messages let go of.
#[derive(Default)]
pub(crate) struct ReportData {
    /// The longest blocking waits so far.
    pub top_waits: TopWaits,
    /// By index as `ranks` (empty until a rank probes or waits on several requests): what
    /// each rank last blocked in a probe, or a wait on several requests, waited for
    /// ([`Awaiting`]), for deadlock reports: a probe holds no request to describe, and a wait
    /// holds one request. Kept apart from the ranks' state, which every rank pays for, as
    /// only some programs probe or wait on several requests; indexed, not hashed: a halo
    /// exchange's `wait_all` blocks once per round and rank.
    pub(super) awaiting: Vec<Awaiting>,
    /// The run is stuck and its report is being made: a rank's program is polled once more
    /// so that a wait on several requests records them all (`Partition::close`); no wait
    /// changes anything then.
    pub asking: bool,
    /// Warnings of receives the program let go of after they matched, by rank, each rank's
    /// in the order they happened (`Call::LetGo`, `Call::DropMessage`): few, and listed by
    /// rank at the end whatever the partitions.
    pub discarded: BTreeMap<u32, Vec<String>>,
}

/// The external waits of this partition's ranks ([`crate::ExternalWake`]), by index as the
/// kernel's `ranks`: only ranks that have one waiting or fired are here. Few ranks wait so (a
/// C program's proxy ranks), so a map, not a table every rank pays for.
#[derive(Default)]
pub(crate) struct Externals {
    pub(crate) by_rank: BTreeMap<usize, External>,
}

/// One rank's external wait.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct External {
    /// The rank is suspended in it (`SimRank::poll_external`).
    pub waiting: bool,
    /// The virtual time it was fired for (`ExternalWake::fire`), until the rank takes it.
    pub fired: Option<u64>,
}

/// What ranks that share cores pay (X2, `docs/extensions.md`; both 0 unless oversubscribed),
/// fixed for the run by the model and the rank count.
pub(crate) struct SharedCores {
    /// What a blocked rank takes to resume after its completion.
    pub(super) wake_ns: u64,
    /// What a rank that resumes from a wait owes before its next action: hand-overs of its
    /// core (`CpuModel::handover_charge_ns`; 0 unless oversubscribed with measured compute).
    pub handover_ns: u64,
}
