//! [`MpiRank`]: the seam ([`RankRuntime`]) on MPI, for the one rank this process is.
//!
//! Each call is answered with MPI calls at once; nonblocking ones leave a raw MPI request in
//! the request table (`table.rs`) with the buffer it uses, which `progress` completes with
//! `MPI_Testsome`. How contexts map to MPI communicators is in the crate docs.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::task::Poll;
use std::time::{Duration, Instant};

use mpsim_proto::deadlock::{Awaited, Waiting};
use mpsim_proto::error::{Error, Site};
use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, Tag};
use mpsim_proto::p2p::{BSEND_OVERHEAD, Completion, MessageId, ReqId, SendMode, Status};
use mpsim_proto::runtime::{
    Call, NativeCall, NativeComm, Needs, Payload, Probed, RankRuntime, Started, Wait, Waited, Work,
};

use crate::measure::{Measure, RankEnd, by_size};
use crate::raw::{self, Code, MPI_Comm, MPI_Message, MPI_Request};
pub(crate) use crate::table::{Arrived, Buf, Kind, Op, Pool, SMALL, Table, Taken, sent};
use crate::watch::{self, Snapshot, Verdict, Watch};

/// The world's point-to-point context, whose traffic MPI matches (crate docs).
pub(crate) const WORLD: ContextId = ContextId(0);

/// The header of a message on the matched-here communicator: its context (8 bytes) and its
/// sender's rank in the communicator (4), little-endian.
const HEADER: usize = 12;

/// One rank's runtime on MPI (see the crate docs).
pub struct MpiRank {
    rank: u32,
    size: u32,
    /// The world's point-to-point traffic, matched by MPI.
    direct: MPI_Comm,
    /// Every other context's, matched here.
    here: MPI_Comm,
    start: Instant,
    /// Whether ranks spin before they nap when nothing came (a core per rank on this node).
    spin: bool,
    pub(crate) state: RefCell<State>,
    /// The next nap of `block` when nothing comes; reset when something does.
    nap: Cell<Duration>,
    /// What the program waits for in a blocking probe (`block` looks for it).
    probing: Cell<Option<Pattern>>,
    /// The communicator of the deadlock watchdog's rounds (`watch.rs`).
    control: MPI_Comm,
    /// The program's calls started and waits ended (the watchdog's `acts`).
    acts: Cell<u64>,
    /// What the program's pending wait waits for (a deadlock report names it).
    waiting: RefCell<WaitingNow>,
    watch: RefCell<Watch>,
    /// The run's end for a reason of its own (a deadlock): every later wait returns it.
    failed: RefCell<Option<Error>>,
    /// What `--report` and `--trace` need, when asked (`measure.rs`).
    measure: Option<RefCell<Measure>>,
    /// The library's communicator of each mpsim communicator that has one, by its
    /// point-to-point context (`native.rs`): the world's from the start, the others' made at
    /// their first native collective, on the world's as base.
    pub(crate) natives: RefCell<std::collections::HashMap<u64, MPI_Comm>>,
    /// The world's native communicator.
    pub(crate) coll: MPI_Comm,
}

/// The program's pending wait, recorded when a poll finds it pending.
#[derive(Default)]
struct WaitingNow {
    call: &'static str,
    reqs: Vec<ReqId>,
    /// A blocking probe's.
    awaited: Option<Awaited>,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) table: Table,
    /// Receives posted on other contexts, in the order posted (slot indices).
    posted: Vec<u32>,
    /// Messages on other contexts no receive has matched yet, in the order they arrived.
    stash: std::collections::VecDeque<Arrived>,
    /// The attached buffer: what the program asked for, and the memory MPI got.
    attached: Option<(usize, Vec<u8>)>,
    /// Bytes (plus overhead) of buffered sends since the buffer was attached.
    buffered: usize,
    /// Warnings of the run (data discarded).
    warnings: Vec<String>,
    /// Messages sent, and messages arrived here (the watchdog's counts, `watch.rs`).
    pub(crate) sent: u64,
    pub(crate) arrived: u64,
    /// Messages on the world's context the watchdog took out of MPI's unexpected queue
    /// (`hold`), in the order they arrived: receives and probes look here first.
    held: std::collections::VecDeque<(MPI_Message, Status)>,
    /// The same on the matched-here communicator: taken out of MPI's queue, not received
    /// (a synchronous send is not complete until `drain` receives it).
    held_here: std::collections::VecDeque<(raw::MPI_Status, MPI_Message)>,
    /// Small buffers for the next requests (`table.rs`).
    pub(crate) pool: Pool,
    /// Scratch of `progress`.
    idx: Vec<u32>,
    raws: Vec<MPI_Request>,
    done: Vec<(usize, raw::MPI_Status, Code)>,
}

impl MpiRank {
    /// The runtime of this process's rank, on the communicators `direct`, `here` and
    /// `control` (duplicates of `MPI_COMM_WORLD`, errors returned), with the run's clock from
    /// `start`.
    pub(crate) fn new(
        direct: MPI_Comm,
        here: MPI_Comm,
        control: MPI_Comm,
        coll: MPI_Comm,
        start: Instant,
        spin: bool,
    ) -> Self {
        let (rank, size) = raw::rank_size(direct);
        MpiRank {
            rank,
            size,
            direct,
            here,
            start,
            spin,
            state: RefCell::new(State::default()),
            nap: Cell::new(FIRST_NAP),
            probing: Cell::new(None),
            control,
            acts: Cell::new(0),
            waiting: RefCell::new(WaitingNow::default()),
            watch: RefCell::new(Watch::new(control, size)),
            failed: RefCell::new(None),
            measure: None,
            natives: RefCell::new(std::collections::HashMap::from([(WORLD.0, coll)])),
            coll,
        }
    }

    /// Measures the run for a report, and records its trace when `trace` (before the run).
    pub fn measure(&mut self, trace: bool) {
        self.measure = Some(RefCell::new(Measure {
            trace,
            ..Measure::default()
        }));
    }

    /// What the rank measured (after [`MpiRank::finish`]), with its warnings, which are then
    /// no longer [`MpiRank::take_warnings`]'s; `None` unless [`MpiRank::measure`] asked.
    pub fn take_end(&self) -> Option<RankEnd> {
        let m = self.measure.as_ref()?;
        let mut end = std::mem::take(&mut m.borrow_mut().end);
        end.warnings = self.take_warnings();
        Some(end)
    }

    /// The run's warnings so far (data discarded, messages never received), taken.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.state.borrow_mut().warnings)
    }

    /// After the program: finishes the sends it let go of (MPI needs their buffers until
    /// then), then waits for every rank to finish (the watchdog's rounds, `watch.rs`: a
    /// deadlock of the others is declared here too), detaches a buffer it left attached, and
    /// notes the messages that no receive took.
    pub fn finish(&self) -> Result<(), Error> {
        if let Some(m) = &self.measure {
            m.borrow_mut().end.finish_ns = self.now_ns();
        }
        let mut nap = FIRST_NAP;
        loop {
            if let Some(e) = self.failed.borrow().clone() {
                return Err(e);
            }
            let finished = {
                let mut st = self.state.borrow_mut();
                if self.progress(&mut st)? {
                    self.acts.set(self.acts.get() + 1);
                    nap = FIRST_NAP;
                }
                !st.table.any_active()
            };
            match self.watch_step(finished)? {
                Verdict::AllFinished => break,
                Verdict::Deadlock => return Err(self.declare_deadlock(finished)),
                Verdict::Undecided => {}
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(LAST_NAP);
        }
        self.free_natives();
        let mut st = self.state.borrow_mut();
        if st.attached.take().is_some() {
            raw::buffer_detach().map_err(|c| self.mpi_error("buffer_detach", c))?;
        }
        let rank = self.rank;
        let never = |bytes: usize, source: u32, tag: i32, context: u64| {
            format!(
                "rank {rank}: a message of {bytes} bytes (source {source}, tag {tag}, context \
                 {context}) was never received"
            )
        };
        let mut unreceived: Vec<String> = Vec::new();
        let mut measure = self.measure.as_ref().map(|m| m.borrow_mut());
        while let Some((mut m, status)) = st.held.pop_front() {
            let mut sink = Vec::<u8>::with_capacity(status.bytes);
            let _ = raw::mrecv(&mut sink.spare_capacity_mut()[..status.bytes], &mut m);
            if let Some(m) = &mut measure {
                m.end.unreceived.add(by_size(status.bytes), status.bytes);
            }
            unreceived.push(never(status.bytes, status.source, status.tag, WORLD.0));
        }
        if let Some(m) = &mut measure {
            for a in &st.stash {
                m.end.unreceived.add(by_size(a.data.len()), a.data.len());
            }
        }
        unreceived.extend(st.stash.drain(..).map(|a| {
            never(
                a.data.len(),
                a.envelope.source,
                a.envelope.tag,
                a.envelope.context.0,
            )
        }));
        st.warnings.extend(unreceived);
        Ok(())
    }

    /// One step of the deadlock watchdog (`watch.rs`): tests this rank's round, or joins the
    /// next with a snapshot taken after [`MpiRank::hold`]. An error ends the run.
    fn watch_step(&self, finished: bool) -> Result<Verdict, Error> {
        let verdict = self.watch.borrow_mut().step(|| {
            let mut st = self.state.borrow_mut();
            self.hold(&mut st)?;
            Ok(Snapshot {
                sent: st.sent,
                arrived: st.arrived,
                acts: self.acts.get(),
                finished,
            })
        });
        if let Err(e) = &verdict {
            *self.failed.borrow_mut() = Some(e.clone());
        }
        verdict
    }

    /// Takes every message that arrived and no receive matched out of MPI's unexpected
    /// queue (`MPI_Improbe`, not received), so that the watchdog counts it: those of the
    /// matched-here communicator into `held_here`, which `drain` receives first; those of the
    /// world's into `held`, where receives and probes on the world's context look first. A message so taken is still the
    /// program's to receive, in its order: a receive posted at MPI before it arrived would
    /// have matched it, and those posted after look in `held` first.
    fn hold(&self, st: &mut State) -> Result<(), Error> {
        while let Some((status, Some(message))) =
            raw::probe(raw::any_source(), raw::any_tag(), self.here, true)
                .map_err(|c| self.mpi_error("MPI_Improbe", c))?
        {
            st.arrived += 1;
            st.held_here.push_back((status, message));
        }
        while let Some((status, Some(message))) =
            raw::probe(raw::any_source(), raw::any_tag(), self.direct, true)
                .map_err(|c| self.mpi_error("MPI_Improbe", c))?
        {
            st.arrived += 1;
            let status = Status {
                source: status.MPI_SOURCE as u32,
                tag: status.MPI_TAG,
                bytes: raw::count(&status),
                cancelled: false,
            };
            st.held.push_back((message, status));
        }
        Ok(())
    }

    /// The watchdog declared a deadlock (every rank at the same round): rank 0 gathers what
    /// each rank waits for and has the run's report; every rank's waits fail with it from now
    /// on (elsewhere than rank 0 the report names this rank alone).
    #[cold]
    fn declare_deadlock(&self, finished: bool) -> Error {
        let state = if finished {
            watch::State::Finished
        } else {
            self.blocked_state()
        };
        let error = match watch::deadlock_report(self.control, self.rank, self.size, &state) {
            Ok(report) => Error::Deadlock {
                report: Box::new(report),
            },
            Err(e) => e,
        };
        *self.failed.borrow_mut() = Some(error.clone());
        error
    }

    /// What this rank waits for: its pending wait's call and each request or probe it waits
    /// on, still incomplete; after its program, the sends it let go of (as `finalize`).
    fn blocked_state(&self) -> watch::State {
        let mut st = self.state.borrow_mut();
        let now = self.waiting.borrow();
        if now.call.is_empty() {
            return watch::State::Blocked {
                call: "finalize",
                waiting_on: st.table.describe_active(),
            };
        }
        let call = now.call;
        let waiting_on = match now.awaited {
            Some(awaited) => vec![Waiting::new(call, awaited)],
            None => now
                .reqs
                .iter()
                .filter_map(|&q| st.table.describe(q))
                .map(|w| Waiting::of_request(call, (w.call, w.peer, w.tag, w.context)))
                .collect(),
        };
        watch::State::Blocked { call, waiting_on }
    }

    /// Whether the run ended in a deadlock (every rank's waits fail with it).
    pub fn deadlocked(&self) -> bool {
        matches!(*self.failed.borrow(), Some(Error::Deadlock { .. }))
    }

    /// An MPI call that failed where mpsim has no error of its own for it.
    #[cold]
    pub(crate) fn mpi_error(&self, call: &'static str, code: Code) -> Error {
        Error::Internal {
            what: format!(
                "rank {}: MPI failed in {call}: {}",
                self.rank,
                raw::describe(code)
            ),
        }
    }

    /// Takes in what MPI has finished or delivered: completes the raw requests done, and
    /// matches the messages arrived on other contexts. Whether anything happened.
    fn progress(&self, st: &mut State) -> Result<bool, Error> {
        let mut happened = false;
        {
            let State {
                table,
                idx,
                raws,
                done,
                ..
            } = &mut *st;
            table.active(idx, raws);
            raw::testsome(raws, done).map_err(|c| self.mpi_error("MPI_Testsome", c))?;
        }
        let done = std::mem::take(&mut st.done);
        for &(k, status, code) in &done {
            happened = true;
            let slot_idx = st.idx[k];
            let slot = st.table.at(slot_idx);
            let (let_go, cancel_asked) = (slot.let_go, slot.cancel_asked);
            let Kind::Active { buf, op, .. } = st.table.take_active(slot_idx) else {
                unreachable!("only active slots are tested")
            };
            let cancelled = cancel_asked && raw::cancelled(&status);
            let completion = match op {
                Op::Send => {
                    buf.release(&mut st.pool);
                    sent(cancelled)
                }
                Op::Coll { keep, call, .. } => {
                    st.arrived += 1;
                    self.collected(buf.into_vec(), keep, call, code)
                }
                Op::Recv {
                    capacity,
                    call,
                    counted,
                } => {
                    let recv = (buf, capacity, call, counted);
                    self.recv_done(st, status, cancelled, code, recv)
                }
            };
            if let_go {
                if let Some(bytes) = completion.payload.as_ref().map(|p| p.len())
                    && !cancelled
                {
                    st.warnings
                        .push(discarded(self.rank, &completion.status, bytes));
                }
                st.table.free_index(slot_idx);
            } else {
                st.table.at(slot_idx).kind = Kind::Done(completion);
            }
        }
        st.done = done;
        // Messages on other contexts wait at MPI until a receive there is posted (or a probe
        // or receive looks for one: those drain themselves), so that a rank with none costs no
        // MPI call per poll for them.
        if !st.posted.is_empty() {
            happened |= self.drain(st)?;
        }
        Ok(happened)
    }

    /// A receive on the world's context that MPI finished (`recv`: its buffer, capacity,
    /// call, and whether its message was counted as arrived already): counted and measured,
    /// and its completion.
    fn recv_done(
        &self,
        st: &mut State,
        status: raw::MPI_Status,
        cancelled: bool,
        code: Code,
        recv: (Buf, usize, &'static str, bool),
    ) -> Completion<Payload> {
        let (buf, capacity, call, counted) = recv;
        if !counted && !cancelled {
            st.arrived += 1;
        }
        if self.measure.is_some() && !cancelled {
            let from = (status.MPI_SOURCE as u32, WORLD, status.MPI_TAG);
            self.measure_received(raw::count(&status), from);
        }
        if cancelled {
            buf.release(&mut st.pool);
            return Completion {
                status: Status {
                    cancelled: true,
                    ..Status::default()
                },
                payload: None,
                error: None,
            };
        }
        self.received(&mut st.pool, status, code, buf, capacity, call)
    }

    /// Counts a message of `bytes` received (for `--report`), and traces it when asked: `from`
    /// is its sender's world rank, its context and tag.
    fn measure_received(&self, bytes: usize, from: (u32, ContextId, i32)) {
        if let Some(m) = &self.measure {
            let mut m = m.borrow_mut();
            m.end.received.add(by_size(bytes), bytes);
            if m.trace {
                let now = self.now_ns();
                m.end.receives.push((from.0, from.1.0, from.2, now));
            }
        }
    }

    /// The completion of a receive on the world's context that MPI finished.
    fn received(
        &self,
        pool: &mut Pool,
        status: raw::MPI_Status,
        code: Code,
        buf: Buf,
        capacity: usize,
        call: &'static str,
    ) -> Completion<Payload> {
        let bytes = raw::count(&status);
        let status_of = Status {
            source: status.MPI_SOURCE as u32,
            tag: status.MPI_TAG,
            bytes,
            cancelled: false,
        };
        let error = (code != 0).then(|| {
            Box::new(if raw::class(code) == raw::ERR_TRUNCATE {
                Error::Truncate {
                    site: Site::new(self.rank, call)
                        .context(WORLD)
                        .peer(status_of.source)
                        .tag(status_of.tag),
                    // MPI tells the bytes it wrote, not the message's length: at least one more.
                    message_bytes: bytes.max(capacity + 1),
                    buffer_bytes: capacity,
                }
            } else {
                self.mpi_error(call, code)
            })
        });
        // What MPI wrote: the bytes the status counts, but nothing when it failed otherwise
        // than by truncation.
        let truncated = error
            .as_deref()
            .is_some_and(|e| matches!(e, Error::Truncate { .. }));
        let written = if code == 0 || truncated {
            bytes.min(capacity)
        } else {
            0
        };
        // SAFETY: MPI wrote `written` bytes (above), within the capacity the buffer was made for.
        let payload = unsafe { buf.received(pool, written) };
        Completion {
            status: status_of,
            payload: Some(payload),
            error,
        }
    }

    /// Receives every message arrived on the matched-here communicator: each goes to the first
    /// posted receive it matches, or to the stash. Whether any came.
    fn drain(&self, st: &mut State) -> Result<bool, Error> {
        let mut came = false;
        loop {
            // The messages the watchdog held first (they arrived first), then MPI's.
            let (status, mut message) = match st.held_here.pop_front() {
                Some(held) => held,
                None => match raw::probe(raw::any_source(), raw::any_tag(), self.here, true)
                    .map_err(|c| self.mpi_error("MPI_Improbe", c))?
                {
                    Some((status, Some(message))) => {
                        st.arrived += 1;
                        (status, message)
                    }
                    _ => break,
                },
            };
            came = true;
            let count = raw::count(&status);
            let mut data = Vec::with_capacity(count);
            raw::mrecv(&mut data.spare_capacity_mut()[..count], &mut message)
                .map_err(|c| self.mpi_error("MPI_Mrecv", c))?;
            // SAFETY: `MPI_Mrecv` wrote the message's `count` bytes.
            unsafe { data.set_len(count) };
            if data.len() < HEADER {
                return Err(Error::Internal {
                    what: format!("rank {}: a message without mpsim's header", self.rank),
                });
            }
            let context = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
            let source = u32::from_le_bytes(data[8..12].try_into().expect("4 bytes"));
            data.drain(..HEADER);
            let arrived = Arrived {
                envelope: Envelope::new(ContextId(context), source, status.MPI_TAG),
                from_world: status.MPI_SOURCE as u32,
                data,
            };
            let matched = st.posted.iter().position(|&i| match &st.table.at(i).kind {
                Kind::Posted { pattern, .. } => pattern.matches(&arrived.envelope),
                _ => false,
            });
            match matched {
                Some(p) => {
                    let i = st.posted.remove(p);
                    let slot = st.table.at(i);
                    let Kind::Posted { capacity, call, .. } = slot.kind else {
                        unreachable!("posted receives are Posted")
                    };
                    slot.kind = Kind::Done(self.deliver(arrived, capacity, call));
                }
                None => st.stash.push_back(arrived),
            }
        }
        Ok(came)
    }

    /// A message matched here, received into a buffer of `capacity` bytes.
    fn deliver(
        &self,
        arrived: Arrived,
        capacity: usize,
        call: &'static str,
    ) -> Completion<Payload> {
        let Arrived {
            envelope,
            mut data,
            from_world,
        } = arrived;
        let bytes = data.len();
        if self.measure.is_some() {
            self.measure_received(bytes, (from_world, envelope.context, envelope.tag));
        }
        let error = (bytes > capacity).then(|| {
            Box::new(Error::Truncate {
                site: Site::new(self.rank, call)
                    .context(envelope.context)
                    .peer(envelope.source)
                    .tag(envelope.tag),
                message_bytes: bytes,
                buffer_bytes: capacity,
            })
        });
        data.truncate(capacity);
        Completion {
            status: Status {
                source: envelope.source,
                tag: envelope.tag,
                bytes,
                cancelled: false,
            },
            payload: Some(Payload::from_vec(data)),
            error,
        }
    }

    /// Starts a send (`Call::Send`): the request, or none for a blocking one done at once.
    fn send(
        &self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: Payload,
        blocking: bool,
    ) -> Result<Option<ReqId>, Error> {
        let site = || {
            Site::new(self.rank, call)
                .context(envelope.context)
                .peer(to)
                .tag(envelope.tag)
        };
        if to >= self.size {
            return Err(Error::InvalidRank {
                site: site(),
                rank: i64::from(to),
                size: self.size,
            });
        }
        let len = payload.len();
        let direct = envelope.context == WORLD;
        let mut st = self.state.borrow_mut();
        // The bytes MPI sends (`len` of them, plus the header off the world's context), in a
        // small buffer of the pool or a vector (the payload's own when it has one).
        let (buf, bytes, comm) = if direct {
            if payload.spilled() {
                (Buf::Heap(payload.into_vec()), len, self.direct)
            } else {
                let mut small = st.pool.take();
                small[..len].copy_from_slice(&payload);
                (Buf::Small(small), len, self.direct)
            }
        } else if HEADER + len <= SMALL {
            let mut small = st.pool.take();
            small[..8].copy_from_slice(&envelope.context.0.to_le_bytes());
            small[8..HEADER].copy_from_slice(&envelope.source.to_le_bytes());
            small[HEADER..HEADER + len].copy_from_slice(&payload);
            (Buf::Small(small), HEADER + len, self.here)
        } else {
            let mut buf = Vec::with_capacity(HEADER + len);
            buf.extend_from_slice(&envelope.context.0.to_le_bytes());
            buf.extend_from_slice(&envelope.source.to_le_bytes());
            buf.extend_from_slice(&payload);
            (Buf::Heap(buf), HEADER + len, self.here)
        };
        let sending = match &buf {
            Buf::Small(b) => &b[..bytes],
            Buf::Heap(v) => &v[..],
        };
        let mpi_mode = match mode {
            SendMode::Standard => raw::Mode::Standard,
            SendMode::Synchronous => raw::Mode::Synchronous,
            SendMode::Buffered => raw::Mode::Buffered,
            // MPI's ready send needs the receive posted at MPI: on other contexts receives are
            // matched here, so it is a synchronous send there (as mpsim's rsend is outside
            // strict mode).
            SendMode::Ready if direct => raw::Mode::Ready,
            SendMode::Ready => raw::Mode::Synchronous,
        };
        let what = Waiting {
            call: match mode {
                SendMode::Standard => "send",
                SendMode::Synchronous => "ssend",
                SendMode::Buffered => "bsend",
                SendMode::Ready => "rsend",
            },
            peer: Source::Rank(to),
            tag: Tag::Value(envelope.tag),
            context: envelope.context,
        };
        if let Some(m) = &self.measure {
            let mut m = m.borrow_mut();
            let protocol = match mode {
                SendMode::Standard => by_size(len),
                SendMode::Synchronous => mpsim_proto::p2p::Protocol::Rendezvous,
                SendMode::Buffered => mpsim_proto::p2p::Protocol::Buffered,
                SendMode::Ready => mpsim_proto::p2p::Protocol::Ready,
            };
            m.end.sent.add(protocol, len);
            if m.trace {
                let now = self.now_ns();
                m.end
                    .sends
                    .push((to, envelope.context.0, envelope.tag, now, len as u64));
            }
        }
        if mode == SendMode::Buffered {
            let attached = st.attached.as_ref().map_or(0, |a| a.0);
            let requested = len + BSEND_OVERHEAD;
            let overflow = |used| Error::BufferOverflow {
                site: site(),
                requested,
                attached,
                used,
            };
            if requested > attached {
                buf.release(&mut st.pool);
                return Err(overflow(st.buffered.min(attached)));
            }
            let sent = raw::isend(mpi_mode, sending, to, envelope.tag, comm);
            let raw_req = match sent {
                Err(code) => {
                    buf.release(&mut st.pool);
                    return Err(if raw::class(code) == raw::ERR_BUFFER {
                        overflow(st.buffered.min(attached))
                    } else {
                        self.mpi_error(call, code)
                    });
                }
                Ok(r) => r,
            };
            st.buffered += requested;
            return self.posted_send(&mut st, call, raw_req, buf, blocking, what);
        }
        match raw::isend(mpi_mode, sending, to, envelope.tag, comm) {
            Ok(raw_req) => self.posted_send(&mut st, call, raw_req, buf, blocking, what),
            Err(code) => {
                buf.release(&mut st.pool);
                Err(self.mpi_error(call, code))
            }
        }
    }

    /// A send MPI started: in the table, or (blocking, finished at once) gone.
    ///
    /// A blocking send is tested at once, alone (`MPI_Test`, no pass over the table): most
    /// are complete as soon as started (the library copied a small message out), and then
    /// cost no request, no allocation and no progress call of their own.
    fn posted_send(
        &self,
        st: &mut State,
        call: &'static str,
        mut raw_req: MPI_Request,
        buf: Buf,
        blocking: bool,
        what: Waiting,
    ) -> Result<Option<ReqId>, Error> {
        st.sent += 1;
        if blocking {
            match raw::test(&mut raw_req) {
                Ok(true) => {
                    buf.release(&mut st.pool);
                    return Ok(None);
                }
                Ok(false) => {}
                Err(code) => {
                    // Whether MPI still reads the buffer is not known: it is left to MPI.
                    std::mem::forget(buf);
                    return Err(self.mpi_error(call, code));
                }
            }
        }
        Ok(Some(st.table.alloc(Kind::Active {
            raw: raw_req,
            buf,
            op: Op::Send,
            what,
        })))
    }

    /// Posts a receive (`Call::Recv`): the request, or a blocking receive's completion when
    /// it completed at once.
    fn recv(
        &self,
        pattern: Pattern,
        capacity: usize,
        source_world: Option<u32>,
        blocking: bool,
    ) -> Started {
        let posted = |req| Started::Request(Some(req));
        let call = if blocking { "recv" } else { "irecv" };
        let what = Waiting {
            call: "recv",
            peer: match pattern.source {
                Source::Any => Source::Any,
                named => source_world.map_or(named, Source::Rank),
            },
            tag: pattern.tag,
            context: pattern.context,
        };
        let mut st = self.state.borrow_mut();
        if pattern.context == WORLD {
            if !st.held.is_empty()
                && let Some(p) = st
                    .held
                    .iter()
                    .position(|(_, s)| pattern.matches(&Envelope::new(WORLD, s.source, s.tag)))
            {
                let (mut message, _) = st.held.remove(p).expect("found");
                return posted(self.receive_taken(&mut st, &mut message, capacity, call, what));
            }
            let mut buf = Buf::for_receive(&mut st.pool, capacity);
            let started = raw::irecv(
                buf.writable(capacity),
                source(pattern.source),
                tag(pattern.tag),
                self.direct,
            );
            let mut raw_req = match started {
                Ok(raw_req) => raw_req,
                Err(code) => {
                    buf.release(&mut st.pool);
                    let error = Some(Box::new(self.mpi_error(call, code)));
                    return posted(st.table.alloc(Kind::Done(Completion {
                        status: Status::default(),
                        payload: None,
                        error,
                    })));
                }
            };
            // A blocking receive whose message is there already (it came while the program
            // was busy) completes here: no request, no wait.
            if blocking {
                let mut done = std::mem::take(&mut st.done);
                let tested = raw::testsome(std::slice::from_mut(&mut raw_req), &mut done);
                let first = done.first().copied();
                st.done = done;
                match (tested, first) {
                    (Ok(()), Some((_, status, code))) => {
                        let recv = (buf, capacity, call, false);
                        let completion = self.recv_done(&mut st, status, false, code, recv);
                        return Started::Completion(Some(completion));
                    }
                    (Ok(()), None) => {}
                    (Err(code), _) => {
                        // As a failed poll of `progress` would: the wait gets the error (the
                        // request is left to MPI, its buffer with it).
                        std::mem::forget(buf);
                        let error = Some(Box::new(self.mpi_error("MPI_Testsome", code)));
                        return posted(st.table.alloc(Kind::Done(Completion {
                            status: Status::default(),
                            payload: None,
                            error,
                        })));
                    }
                }
            }
            return posted(st.table.alloc(Kind::Active {
                raw: raw_req,
                buf,
                op: Op::Recv {
                    capacity,
                    call,
                    counted: false,
                },
                what,
            }));
        }
        if let Err(e) = self.drain(&mut st) {
            return posted(st.table.alloc(Kind::Done(Completion {
                status: Status::default(),
                payload: None,
                error: Some(Box::new(e)),
            })));
        }
        if let Some(p) = st.stash.iter().position(|a| pattern.matches(&a.envelope)) {
            let arrived = st.stash.remove(p).expect("found");
            let done = self.deliver(arrived, capacity, call);
            return posted(st.table.alloc(Kind::Done(done)));
        }
        let req = st.table.alloc(Kind::Posted {
            pattern,
            capacity,
            call,
            what,
        });
        st.posted.push(req.parts().0);
        posted(req)
    }

    /// Receives a message MPI matched already (a matched probe's, a held one's: counted as
    /// arrived then) with `MPI_Imrecv`: the request, done with the error if MPI refused.
    fn receive_taken(
        &self,
        st: &mut State,
        message: &mut MPI_Message,
        capacity: usize,
        call: &'static str,
        what: Waiting,
    ) -> ReqId {
        let mut buf = Buf::for_receive(&mut st.pool, capacity);
        match raw::imrecv(buf.writable(capacity), message) {
            Ok(raw_req) => st.table.alloc(Kind::Active {
                raw: raw_req,
                buf,
                op: Op::Recv {
                    capacity,
                    call,
                    counted: true,
                },
                what,
            }),
            Err(code) => {
                buf.release(&mut st.pool);
                st.table.alloc(Kind::Done(Completion {
                    status: Status::default(),
                    payload: None,
                    error: Some(Box::new(self.mpi_error(call, code))),
                }))
            }
        }
    }

    /// What a probe for `pattern` finds now (taken when `take`).
    fn probe_now(
        &self,
        st: &mut State,
        pattern: &Pattern,
        take: bool,
    ) -> Result<Option<Probed>, Error> {
        if pattern.context == WORLD {
            if !st.held.is_empty()
                && let Some(p) = st
                    .held
                    .iter()
                    .position(|(_, s)| pattern.matches(&Envelope::new(WORLD, s.source, s.tag)))
            {
                let status = st.held[p].1;
                if !take {
                    return Ok(Some((status, None)));
                }
                let (m, _) = st.held.remove(p).expect("found");
                let id =
                    MessageId::from_request(st.table.alloc(Kind::Probed(Taken::Mpi(m, status))));
                return Ok(Some((status, Some(id))));
            }
            let found = raw::probe(source(pattern.source), tag(pattern.tag), self.direct, take)
                .map_err(|c| self.mpi_error("iprobe", c))?;
            if found.as_ref().is_some_and(|(_, m)| m.is_some()) {
                st.arrived += 1;
            }
            return Ok(found.map(|(status, message)| {
                let status = Status {
                    source: status.MPI_SOURCE as u32,
                    tag: status.MPI_TAG,
                    bytes: raw::count(&status),
                    cancelled: false,
                };
                let id = message.map(|m| {
                    MessageId::from_request(st.table.alloc(Kind::Probed(Taken::Mpi(m, status))))
                });
                (status, id)
            }));
        }
        self.drain(st)?;
        let Some(p) = st.stash.iter().position(|a| pattern.matches(&a.envelope)) else {
            return Ok(None);
        };
        let a = &st.stash[p];
        let status = Status {
            source: a.envelope.source,
            tag: a.envelope.tag,
            bytes: a.data.len(),
            cancelled: false,
        };
        if !take {
            return Ok(Some((status, None)));
        }
        let arrived = st.stash.remove(p).expect("found");
        let id = MessageId::from_request(st.table.alloc(Kind::Probed(Taken::Here(arrived))));
        Ok(Some((status, Some(id))))
    }

    fn invalid(&self, call: &'static str) -> Error {
        Error::InvalidRequest {
            site: Site::new(self.rank, call),
        }
    }

    /// Answers the calls on requests and probes (everything but sends and receives).
    fn answer(&self, call: Call) -> Result<Started, Error> {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        match call {
            Call::Probe { pattern, take } => {
                self.probe_now(st, &pattern, take).map(Started::Probed)
            }
            Call::MatchedRecv { message, capacity } => {
                let req = message.request();
                let Some(Kind::Probed(taken)) = st.table.free(req) else {
                    return Err(self.invalid("mrecv"));
                };
                match taken {
                    Taken::Mpi(mut m, status) => {
                        let what = Waiting {
                            call: "recv",
                            peer: Source::Rank(status.source),
                            tag: Tag::Value(status.tag),
                            context: WORLD,
                        };
                        Ok(Started::Request(Some(
                            self.receive_taken(st, &mut m, capacity, "mrecv", what),
                        )))
                    }
                    Taken::Here(arrived) => {
                        let done = self.deliver(arrived, capacity, "mrecv");
                        Ok(Started::Request(Some(st.table.alloc(Kind::Done(done)))))
                    }
                }
            }
            Call::Test(req) => {
                self.progress(st)?;
                match st.table.get(req).map(|s| matches!(s.kind, Kind::Done(_))) {
                    None => Err(self.invalid("test")),
                    Some(false) => Ok(Started::Completion(None)),
                    Some(true) => match st.table.free(req) {
                        Some(Kind::Done(c)) => Ok(Started::Completion(Some(c))),
                        _ => unreachable!("checked done"),
                    },
                }
            }
            Call::IsDone(req) => {
                self.progress(st)?;
                Ok(Started::Flag(
                    st.table
                        .get(req)
                        .is_none_or(|s| matches!(s.kind, Kind::Done(_))),
                ))
            }
            Call::Cancel(req) => {
                let Some(slot) = st.table.get(req) else {
                    return Err(self.invalid("cancel"));
                };
                match &mut slot.kind {
                    Kind::Active {
                        op: Op::Coll { call, .. },
                        ..
                    } => return Err(self.uncancellable(call)),
                    Kind::Active { raw: r, .. } => {
                        raw::cancel(r).map_err(|c| self.mpi_error("cancel", c))?;
                        slot.cancel_asked = true;
                    }
                    Kind::Posted { .. } => {
                        slot.kind = Kind::Done(Completion {
                            status: Status {
                                cancelled: true,
                                ..Status::default()
                            },
                            payload: None,
                            error: None,
                        });
                        let idx = req.parts().0;
                        st.posted.retain(|&i| i != idx);
                    }
                    Kind::Probed(_) | Kind::Done(_) | Kind::Free => {}
                }
                Ok(Started::Done)
            }
            Call::LetGo(req) => {
                let Some(slot) = st.table.get(req) else {
                    return Ok(Started::Done);
                };
                match &mut slot.kind {
                    Kind::Active { raw: r, op, .. } => {
                        if matches!(op, Op::Recv { .. }) {
                            let _ = raw::cancel(r);
                            slot.cancel_asked = true;
                        }
                        slot.let_go = true;
                    }
                    Kind::Posted { .. } => {
                        let idx = req.parts().0;
                        st.posted.retain(|&i| i != idx);
                        st.table.free(req);
                    }
                    Kind::Done(c) => {
                        if let Some(bytes) = c.payload.as_ref().map(|p| p.len()) {
                            let warning = discarded(self.rank, &c.status, bytes);
                            st.warnings.push(warning);
                        }
                        st.table.free(req);
                    }
                    Kind::Probed(_) | Kind::Free => {
                        self.drop_taken(st, req);
                    }
                }
                Ok(Started::Done)
            }
            Call::DropMessage { message, .. } => {
                self.drop_taken(st, message.request());
                Ok(Started::Done)
            }
            Call::BufferAttach(bytes) => {
                if let Some((attached, _)) = st.attached {
                    return Err(Error::BufferAlreadyAttached {
                        site: Site::new(self.rank, "buffer_attach"),
                        attached,
                    });
                }
                let mut memory = vec![0u8; mpi_buffer_bytes(bytes)];
                raw::buffer_attach(&mut memory).map_err(|c| self.mpi_error("buffer_attach", c))?;
                st.attached = Some((bytes, memory));
                st.buffered = 0;
                Ok(Started::Done)
            }
            Call::BufferDetach => {
                let Some((bytes, memory)) = st.attached.take() else {
                    return Err(Error::NoBufferAttached {
                        site: Site::new(self.rank, "buffer_detach"),
                    });
                };
                raw::buffer_detach().map_err(|c| self.mpi_error("buffer_detach", c))?;
                drop(memory);
                Ok(Started::Detached(bytes))
            }
            Call::Send { .. } | Call::Recv { .. } | Call::NullRequest(_) => {
                mpsim_proto::runtime::wrong_answer("MpiRank::answer", &call)
            }
        }
    }

    /// A matched probe's message dropped unreceived: received and discarded, with a warning.
    fn drop_taken(&self, st: &mut State, req: ReqId) {
        let Some(Kind::Probed(taken)) = st.table.free(req) else {
            return;
        };
        let (status, bytes) = match taken {
            Taken::Mpi(mut m, status) => {
                let mut sink = Vec::<u8>::with_capacity(status.bytes);
                let _ = raw::mrecv(&mut sink.spare_capacity_mut()[..status.bytes], &mut m);
                (status, status.bytes)
            }
            Taken::Here(a) => (
                Status {
                    source: a.envelope.source,
                    tag: a.envelope.tag,
                    bytes: a.data.len(),
                    cancelled: false,
                },
                a.data.len(),
            ),
        };
        st.warnings.push(format!(
            "rank {} dropped a message of {bytes} bytes (source {}, tag {}) that a matched probe \
             had taken, without receiving it: its data was discarded (receive it with mrecv or \
             imrecv)",
            self.rank, status.source, status.tag
        ));
    }

    /// Spins for a declared compute of `d`, as the threads backend does.
    fn spin(&self, d: Duration) {
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

/// The warning of a receive whose data the program never read.
fn discarded(rank: u32, status: &Status, bytes: usize) -> String {
    format!(
        "rank {rank} let go of a receive that had matched a message of {bytes} bytes (source {}, \
         tag {}): its data was discarded",
        status.source, status.tag
    )
}

/// The program's call a wait is in.
fn wait_call(wait: Wait<'_>) -> &'static str {
    match wait {
        Wait::Request { call, .. } | Wait::Requests { call, .. } | Wait::Probe { call, .. } => call,
        Wait::BufferFree => mpsim_proto::deadlock::BUFFER_DETACH,
    }
}

/// The MPI source of a pattern's source on the world's context.
fn source(s: Source) -> c_int {
    match s {
        Source::Rank(r) => r as c_int,
        Source::Any => raw::any_source(),
    }
}

/// The MPI tag of a pattern's tag.
fn tag(t: Tag) -> c_int {
    match t {
        Tag::Value(t) => t,
        Tag::Any => raw::any_tag(),
    }
}

/// The memory given to MPI for a buffer the program attached with `bytes`: mpsim counts
/// [`BSEND_OVERHEAD`] bytes per buffered message, the library its own `MPI_BSEND_OVERHEAD`
/// (128 for Open MPI), so every set of messages that fits mpsim's count fits the library's in
/// `bytes` times the ratio (rounded up), plus a page for its alignment.
fn mpi_buffer_bytes(bytes: usize) -> usize {
    let ratio = raw::BSEND_OVERHEAD.div_ceil(BSEND_OVERHEAD).max(1);
    bytes.saturating_mul(ratio).saturating_add(4096)
}

/// The first nap of a rank whose waits found nothing, and the longest ([`MpiRank::block`]).
const FIRST_NAP: Duration = Duration::from_micros(20);
const LAST_NAP: Duration = Duration::from_millis(1);

/// How long a rank with a core of its own spins before it naps.
const SPIN_FOR: Duration = Duration::from_micros(200);

/// How many polls of a spinning rank go between two reads of the clock.
const SPIN_CHECK: u32 = 32;

/// How long a rank polls between yields of its core, after spinning, before it naps.
const YIELD_FOR: Duration = Duration::from_millis(1);

impl MpiRank {
    /// [`RankRuntime::poll_wait`] itself.
    fn poll_wait_now(&self, wait: Wait<'_>) -> Poll<Result<Waited, Error>> {
        self.probing.set(None);
        if let Some(e) = self.failed.borrow().clone() {
            return Poll::Ready(Err(e));
        }

        let mut st = self.state.borrow_mut();
        // A request `block` saw complete is returned without another pass over MPI: the
        // others' completions are the next poll's to take in.
        let done_already = match wait {
            Wait::Request { req, .. } => st
                .table
                .get(req)
                .is_some_and(|s| matches!(s.kind, Kind::Done(_))),
            _ => false,
        };
        if !done_already && let Err(e) = self.progress(&mut st) {
            return Poll::Ready(Err(e));
        }
        match wait {
            Wait::Request { req, call } => {
                match st.table.get(req).map(|s| matches!(s.kind, Kind::Done(_))) {
                    None => Poll::Ready(Err(self.invalid(call))),
                    Some(false) => Poll::Pending,
                    Some(true) => match st.table.free(req) {
                        Some(Kind::Done(c)) => Poll::Ready(Ok(Waited::Completion(c))),
                        _ => unreachable!("checked done"),
                    },
                }
            }
            Wait::Requests { reqs, needs, .. } => {
                let mut first = None;
                let mut all = true;
                for (i, &req) in reqs.iter().enumerate() {
                    // A handle that names nothing is the caller's to report, as done.
                    let done = st
                        .table
                        .get(req)
                        .is_none_or(|s| matches!(s.kind, Kind::Done(_)));
                    if done {
                        first.get_or_insert(i);
                    } else {
                        all = false;
                    }
                }
                match (needs, first) {
                    (Needs::Any, Some(i)) => Poll::Ready(Ok(Waited::Index(i))),
                    // None to wait for (a collective's end of wait) is over too.
                    (Needs::All, first) if all => {
                        Poll::Ready(Ok(Waited::Index(first.unwrap_or(0))))
                    }
                    _ => Poll::Pending,
                }
            }
            Wait::Probe { pattern, take, .. } => match self.probe_now(&mut st, pattern, take) {
                Err(e) => Poll::Ready(Err(e)),
                Ok(Some(p)) => Poll::Ready(Ok(Waited::Probed(p))),
                Ok(None) => {
                    self.probing.set(Some(*pattern));
                    Poll::Pending
                }
            },
            // MPI_Buffer_detach itself waits until the library delivered what it holds.
            Wait::BufferFree => Poll::Ready(Ok(Waited::Done)),
        }
    }

    /// What a wait on one request or a probe waits for, as the report's longest waits name
    /// it.
    fn awaited(&self, wait: Wait<'_>) -> Option<(&'static str, Source, Tag, ContextId)> {
        let w = match wait {
            Wait::Request { req, call } => {
                let w = self.state.borrow_mut().table.describe(req)?;
                Waiting::of_request(call, (w.call, w.peer, w.tag, w.context))
            }
            Wait::Probe { call, awaited, .. } => Waiting::new(call, awaited),
            Wait::Requests { .. } | Wait::BufferFree => return None,
        };
        Some((w.call, w.peer, w.tag, w.context))
    }

    /// Records what a pending wait waits for, for a deadlock report (the vector is reused: a
    /// pending wait allocates nothing once it has room).
    fn record_wait(&self, wait: Wait<'_>) {
        let mut now = self.waiting.borrow_mut();
        now.reqs.clear();
        now.awaited = None;
        match wait {
            Wait::Request { req, call } => {
                now.call = call;
                now.reqs.push(req);
            }
            Wait::Requests { reqs, call, .. } => {
                now.call = call;
                now.reqs.extend_from_slice(reqs);
            }
            Wait::Probe { call, awaited, .. } => {
                now.call = call;
                now.awaited = Some(awaited);
            }
            Wait::BufferFree => now.call = mpsim_proto::deadlock::BUFFER_DETACH,
        }
    }
}

impl RankRuntime for MpiRank {
    fn native_collectives(&self) -> bool {
        true
    }

    fn native_ready(&self, comm: NativeComm<'_>) -> bool {
        self.natives.borrow().contains_key(&comm.context.0)
    }

    fn make_native(&self, comm: NativeComm<'_>) -> Result<(), Error> {
        self.acts.set(self.acts.get() + 1);
        self.make_native_comm(comm)
    }

    fn start_native(
        &self,
        comm: NativeComm<'_>,
        call: NativeCall<'_>,
        name: &'static str,
    ) -> Result<Option<ReqId>, Error> {
        self.acts.set(self.acts.get() + 1);
        self.start_native_coll(comm, call, name)
    }

    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn start(&self, call: Call) -> Result<Started, Error> {
        self.acts.set(self.acts.get() + 1);
        match call {
            Call::Send {
                call,
                mode,
                to,
                envelope,
                payload,
                blocking,
            } => self
                .send(call, mode, to, envelope, payload, blocking)
                .map(Started::Request),
            Call::Recv {
                pattern,
                capacity,
                source_world,
                blocking,
            } => Ok(self.recv(pattern, capacity, source_world, blocking)),
            Call::NullRequest(_) => Ok(Started::Done),
            call => self.answer(call),
        }
    }

    fn poll_wait(&self, wait: Wait<'_>) -> Poll<Result<Waited, Error>> {
        let polled = self.poll_wait_now(wait);
        match &polled {
            Poll::Ready(_) => {
                self.acts.set(self.acts.get() + 1);
                // The next wait that blocks spins first again (`block`).
                self.nap.set(FIRST_NAP);
                if let Some(m) = &self.measure {
                    let mut m = m.borrow_mut();
                    if let Some((call, start, awaited)) = m.open.take() {
                        let now = self.now_ns();
                        m.wait(call, start, now, awaited);
                    }
                }
            }
            Poll::Pending => {
                self.record_wait(wait);
                if let Some(m) = &self.measure
                    && m.borrow().open.is_none()
                {
                    let awaited = self.awaited(wait);
                    let now = self.now_ns();
                    m.borrow_mut().open = Some((wait_call(wait), now, awaited));
                }
            }
        }
        polled
    }

    /// Polls MPI until something completes or arrives (or a probed message is there). At the
    /// first `block` since something came: spins for up to [`SPIN_FOR`] when the rank has a
    /// core of its own, then polls between yields of its core for up to [`YIELD_FOR`] (as the
    /// threads backend's yield policy: a peer descheduled by other jobs gets a core back
    /// sooner than after a nap). Then, and at every later `block` while nothing comes, naps
    /// once, each nap twice the last (from 20 us up to 1 ms), and returns after the nap for
    /// the program to look again. Once naps are at their longest, each nap is preceded by a
    /// step of the deadlock watchdog (`watch.rs`).
    fn block(&self) {
        // Polls MPI (and a blocking probe's pattern): whether something happened.
        let poll = || {
            let mut st = self.state.borrow_mut();
            // The usual wait, on one request at MPI and nothing else: a look at that request
            // alone (half the instructions of a pass, so a message is seen sooner); the pass
            // that takes it in follows once it is complete.
            if st.posted.is_empty()
                && self.probing.get().is_none()
                && let Some(raw) = st.table.only_active()
                && !raw::is_complete(raw).unwrap_or(true)
            {
                return false;
            }
            // An error is the next poll's to return.
            self.progress(&mut st).unwrap_or(true)
                || self.probing.get().is_some_and(|p| {
                    if p.context == WORLD {
                        raw::probe(source(p.source), tag(p.tag), self.direct, false)
                            .map_or(true, |found| found.is_some())
                    } else {
                        self.drain(&mut st).unwrap_or(true)
                    }
                })
        };
        if self.nap.get() == FIRST_NAP {
            // The clock is read once per `SPIN_CHECK` polls: a read cost about as much as a
            // poll that finds nothing (a tenth of the ring's time per message under perf).
            let start = Instant::now();
            let mut polls = 0u32;
            loop {
                if poll() {
                    return;
                }
                polls = polls.wrapping_add(1);
                // No pause between polls while the rank has its core (a pause costs a
                // hundred cycles or more on recent cores: a message would be seen later).
                let spinning = self.spin && !polls.is_multiple_of(SPIN_CHECK);
                if spinning {
                    continue;
                }
                let waited = start.elapsed();
                if self.spin && waited < SPIN_FOR {
                    continue;
                }
                if waited >= SPIN_FOR + YIELD_FOR {
                    break;
                }
                std::thread::yield_now();
            }
        } else if poll() {
            self.nap.set(FIRST_NAP);
            return;
        }
        std::thread::yield_now();
        let nap = self.nap.get();
        if nap >= LAST_NAP {
            // Idle for a while: a step of the deadlock watchdog (`watch.rs`). Whatever it took
            // in (held or stashed messages), or a verdict, is the program's next poll's.
            let arrived = self.state.borrow().arrived;
            match self.watch_step(false) {
                Ok(Verdict::Deadlock) => {
                    self.declare_deadlock(false);
                    return;
                }
                Err(_) => return,
                Ok(_) if self.state.borrow().arrived != arrived => {
                    self.nap.set(FIRST_NAP);
                    return;
                }
                Ok(_) => {}
            }
        }
        std::thread::sleep(nap);
        self.nap.set((nap * 2).min(LAST_NAP));
    }

    fn idle(&self, _call: &'static str) {
        std::thread::yield_now();
    }

    fn compute(&self, work: Work) {
        let start = self.measure.as_ref().map(|_| self.now_ns());
        match work {
            Work::Time(d) => self.spin(d),
            Work::Flops(flops) => self.spin(Duration::from_nanos(flops / 10)),
            Work::Sync(_) => {}
        }
        if let (Some(m), Some(start)) = (&self.measure, start) {
            let now = self.now_ns();
            m.borrow_mut().compute(start, now);
        }
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Ends every process of the job (`MPI_Abort` with `code`), after saying which rank asked.
    fn abort(&self, code: i32) {
        let e = Error::Abort {
            rank: self.rank,
            code,
            time_ns: None,
        };
        eprintln!("mpsim: {e}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        raw::abort(code)
    }
}
