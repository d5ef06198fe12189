//! [`Endpoint`]: the point-to-point protocol of one rank as a sans-IO state machine
//! (`docs/p2p.md`, seed `000_444ea301cad89974.txt`).
//!
//! Methods, by kind (the quinn-proto split):
//! - getters: [`Endpoint::rank`], [`Endpoint::is_done`], [`Endpoint::buffer_in_use`],
//!   [`Endpoint::buffered_messages`], [`Endpoint::pending_requests`], [`Endpoint::iprobe`];
//!   traffic, counted by the driver ([`Endpoint::count_sent`], [`Endpoint::count_arrived`]):
//!   [`Endpoint::sent_counts`], [`Endpoint::received_counts`], [`Endpoint::unreceived_counts`];
//! - `handle_*` inputs: calls of the program ([`Endpoint::start_send`], [`Endpoint::irecv`],
//!   [`Endpoint::improbe`], [`Endpoint::mrecv`], [`Endpoint::cancel`], [`Endpoint::free`],
//!   [`Endpoint::buffer_attach`], [`Endpoint::buffer_detach`]) and packets from peers
//!   ([`Endpoint::handle_packet`]);
//! - user commands that consume results: [`Endpoint::test`];
//! - outputs: [`Endpoint::take_outputs`], the [`Outbox`] of packets to send and events, and
//!   [`Endpoint::take_completed`], the one report of completions: whether some request
//!   completed, as a flag (the driver then looks at its requests: [`Endpoint::is_done`],
//!   [`Endpoint::test`]).
//!
//! After every input, a driver takes the completion flag and the outbox and drains its packets
//! ([`Outbox::poll_transmit`], in order: the channel to each peer is FIFO and the protocol
//! relies on it), then its events ([`Outbox::poll_event`]); it may lend the outbox back for
//! the next input ([`Endpoint::lend_outbox`]). A send's message may also go to the driver's
//! transport as it is made ([`Endpoint::start_send`]). Nothing here blocks, reads a clock or
//! touches memory the program lent: payloads are opaque `P` values the backend makes.
//!
//! Protocol, in short (details in [`super::packet`]): every send posts a `Message`; the receiver
//! matches it with the tag-matching engine, takes the payload and answers `Fin`. A send's
//! request completes locally (eager standard, buffered) or at `Fin` (synchronous, ready,
//! rendezvous standard). Buffer bytes are held until `Fin` or a successful cancel.
//!
//! Files: this one holds the types, construction, getters, outputs and the request slots;
//! `calls.rs` the program's calls; `packets.rs` the packets from peers and what a match or a
//! reply does.

use std::sync::Arc;

mod calls;
mod outbox;
mod packets;

pub use calls::{Queued, SendCall, Transport};
pub use outbox::Outbox;

use crate::deadlock::{Awaited, BUFFER_DETACH};
use crate::error::{Error, PendingRequest, Site};
use crate::matching::{ContextId, Engine, Envelope, Pattern, Rank, Source, Tag};

use super::buffer::{Attached, BSEND_OVERHEAD, Budget};
use super::counts::{MessageCounts, Tally};
use super::packet::{Protocol, SendRef};
use super::request::{Completion, Held, Kind, ReqId, Slot, Status};

/// Protocol settings of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Standard sends of at most this many bytes go eagerly.
    pub eager_threshold: usize,
    /// Capacity of the system buffer that eager sends use; `None` is unbounded. A standard send
    /// that does not fit goes the rendezvous way.
    pub system_buffer: Option<usize>,
    /// Report an `rsend` that arrives before a matching receive as `ReadyNotPosted`.
    pub strict_ready: bool,
    /// Bytes charged per buffered message on top of its length (default [`BSEND_OVERHEAD`];
    /// machine models may set their own, e.g. 0 in `timing.md`'s worked examples).
    pub bsend_overhead: usize,
    /// The driver's time ([`Endpoint::set_now`]) is virtual (a simulator's): the error a
    /// request completes with (a receive's `Truncate`) carries the time it completed
    /// (`docs/timing.md` S11: `max(m.arrival, req.ts)`), not the time the program finds it.
    /// Off by default.
    pub virtual_time: bool,
    /// A buffered send that does not fit in the attached buffer is only returned to its
    /// caller as `BufferOverflow` (MPI's `MPI_ERRORS_RETURN`: the program may attach a larger
    /// buffer and go on), not also emitted as [`Event::Fatal`], which ends the run. Off by
    /// default (`docs/p2p.md` P-bsend: the run stops).
    pub bsend_overflow_returns: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            eager_threshold: 65_536,
            system_buffer: None,
            strict_ready: false,
            bsend_overhead: BSEND_OVERHEAD,
            virtual_time: false,
            bsend_overflow_returns: false,
        }
    }
}

/// The end-of-run warning for a message of `bytes` bytes from world rank `from` to world rank
/// `to` that no receive took, worded alike by every backend.
///
/// ```
/// use mpsim_proto::matching::{ContextId, Envelope};
/// use mpsim_proto::p2p::never_received;
/// let e = Envelope::new(ContextId(0), 0, 7);
/// assert_eq!(
///     never_received(0, 1, &e, 8),
///     "a message of 8 bytes from rank 0 to rank 1 (tag 7, context 0) was never received"
/// );
/// ```
pub fn never_received(from: u32, to: u32, envelope: &Envelope, bytes: usize) -> String {
    format!(
        "a message of {bytes} bytes from rank {from} to rank {to} (tag {}, context {}) was \
         never received",
        envelope.tag, envelope.context.0
    )
}

/// The warning, shared by the backends, for a receive the program let go of (dropped its
/// request or future) after it had matched a message: the data, held for the wait that never
/// came, is discarded. `source` is the message's rank in its communicator (`context`).
pub fn discarded_receive(
    rank: u32,
    source: Rank,
    tag: i32,
    context: ContextId,
    bytes: usize,
) -> String {
    format!(
        "rank {rank} dropped a receive that had matched a message of {bytes} bytes (source \
         {source}, tag {tag}, context {}): its data was discarded (wait for or test a receive \
         to completion to get its data)",
        context.0
    )
}

/// Something the driver must know after an input, besides completions (which are one flag,
/// [`Endpoint::take_completed`]).
#[derive(Debug)]
#[must_use]
pub enum Event {
    /// Attached-buffer bytes were freed (wake a pending `buffer_detach`).
    BufferFreed,
    /// An error that ends the run (bsend overflow, strict `rsend`).
    Fatal(Error),
}

/// A message as the receiving endpoint keeps it until a receive takes it.
#[derive(Debug)]
pub(crate) struct Incoming<P> {
    from: u32,
    sender: SendRef,
    bytes: usize,
    ack: bool,
    /// How it was sent (for the counts of what no receive took).
    protocol: Protocol,
    payload: P,
}

/// The point-to-point protocol state of one rank.
///
/// ```
/// use mpsim_proto::matching::{ContextId, Envelope, Pattern};
/// use mpsim_proto::p2p::{Config, Endpoint, Queued, SendCall, SendMode};
///
/// let (mut a, mut b) = (Endpoint::<Vec<u8>>::new(0, Config::default()), Endpoint::new(1, Config::default()));
/// let ctx = ContextId(0);
/// let issend = SendCall {
///     call: "issend",
///     mode: SendMode::Synchronous,
///     to: 1,
///     envelope: Envelope::new(ctx, 0, 7),
///     payload: b"abc".to_vec(),
///     blocking: false,
/// };
/// let send = a.start_send(issend, Queued).unwrap().expect("a nonblocking send's request");
/// let recv = b.irecv(Pattern::new(ctx, 0, 7), 16);
/// // Deliver a's packets to b and b's back to a.
/// let mut out = a.take_outputs().expect("a message to send");
/// while let Some(t) = out.poll_transmit() { b.handle_packet(0, t.packet); }
/// let mut out = b.take_outputs().expect("a Fin to send");
/// while let Some(t) = out.poll_transmit() { a.handle_packet(1, t.packet); }
/// assert!(b.take_completed() && b.is_done(recv), "the receive completed, and b was told");
/// let got = b.test(recv).unwrap().expect("received");
/// assert_eq!((got.status.bytes, got.payload.as_deref()), (3, Some(&b"abc"[..])));
/// assert!(a.test(send).unwrap().is_some(), "the ssend completed at Fin");
/// ```
pub struct Endpoint<P> {
    rank: u32,
    /// The driver's time (`set_now`); only strict ready sends use it.
    now: u64,
    /// Shared: a simulator's millions of endpoints have one.
    config: Arc<Config>,
    engine: Engine<ReqId, Incoming<P>>,
    slots: Vec<Slot<P>>,
    /// First free slot, or `NO_SLOT`; each free slot names the next (`Kind::Free`).
    free_head: u32,
    /// The attached buffer (`bsend`): `Some` exactly while one is attached, a zero-byte one
    /// too. Boxed: rare, and a simulation holds millions of endpoints.
    attached: Option<Box<Attached>>,
    /// Bytes of the system buffer (`Config::system_buffer`) that eager sends hold.
    system_used: usize,
    /// Outputs not yet drained; `None` until the first (or a driver's loan).
    out: Option<Box<Outbox<P>>>,
    /// Some request became complete for the program since the driver last took the flag
    /// ([`Endpoint::take_completed`]): the one way completions are told. Kept here, not in the
    /// outbox, so that an input whose only output is a completion (a message for a posted
    /// receive) needs no outbox.
    completed: bool,
    /// Messages sent and arrived so far ([`Endpoint::sent_counts`],
    /// [`Endpoint::received_counts`]).
    tally: Tally,
}

impl<P> Endpoint<P> {
    // ---- construction ----

    /// The endpoint of world rank `rank`. Pass an `Arc<Config>` to share one config among many
    /// endpoints.
    pub fn new(rank: u32, config: impl Into<Arc<Config>>) -> Self {
        let config: Arc<Config> = config.into();
        Endpoint {
            rank,
            now: 0,
            config,
            engine: Engine::new(),
            slots: Vec::new(),
            free_head: NO_SLOT,
            attached: None,
            system_used: 0,
            out: None,
            completed: false,
            tally: Tally::default(),
        }
    }

    /// Sets the time of the inputs that follow (a simulator's virtual time). Only strict ready
    /// sends need it: a receive posted after the send was sent does not make it "ready"
    /// (`timing.md` S13). A driver without a clock never calls it.
    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// The time of the inputs ([`Endpoint::set_now`]): the time of the last input, 0 if none
    /// was given one.
    pub fn now(&self) -> u64 {
        self.now
    }

    // ---- getters ----

    /// World rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether `req` is complete for the program (`test` would return it). False for a stale
    /// handle.
    pub fn is_done(&self, req: ReqId) -> bool {
        self.slot(req).is_some_and(|s| s.user_done())
    }

    /// The message receive `req` matched and holds for the program, if any: `(source, tag,
    /// context, bytes)`, as its status will say. A program that lets go of the request now
    /// loses it ([`discarded_receive`]).
    pub fn matched_unread(&self, req: ReqId) -> Option<(Rank, i32, ContextId, usize)> {
        let s = self.slot(req)?;
        let Kind::Recv { pattern, .. } = &s.kind else {
            return None;
        };
        let done = s.done.as_ref()?;
        let status = done.status;
        (done.error.is_none() && !status.cancelled).then_some((
            status.source,
            status.tag,
            pattern.context,
            status.bytes,
        ))
    }

    /// Bytes of the attached buffer held by buffered messages not yet delivered.
    pub fn buffer_in_use(&self) -> usize {
        self.attached.as_deref().map_or(0, |b| b.bytes.used)
    }

    /// Buffered messages in the attached buffer not yet delivered: what a blocking
    /// `buffer_detach` waits for (`timing.md` S8), zero-byte ones too, which may hold no bytes.
    pub fn buffered_messages(&self) -> usize {
        self.attached.as_deref().map_or(0, |b| b.messages)
    }

    /// Requests the program still holds that are not complete, for `PendingAtExit`.
    pub fn pending_requests(&self) -> Vec<PendingRequest> {
        self.slots
            .iter()
            .filter(|s| s.live && s.held_by_user && !s.user_done())
            .filter_map(|s| match &s.kind {
                Kind::Send {
                    envelope, mode, to, ..
                } => Some(PendingRequest {
                    call: mode.icall(),
                    peer: Source::Rank(*to),
                    tag: Tag::Value(envelope.tag),
                }),
                Kind::Recv {
                    pattern,
                    source_world,
                    ..
                } => Some(PendingRequest {
                    call: "irecv",
                    peer: source_world.map_or(Source::Any, Source::Rank),
                    tag: pattern.tag,
                }),
                // A message a matched probe took and no `mrecv` received: its sender and tag.
                Kind::Probed(Some(probed)) => Some(PendingRequest {
                    call: "mprobe",
                    peer: Source::Rank(probed.1.from),
                    tag: Tag::Value(probed.0.tag),
                }),
                Kind::Probed(None) => Some(PendingRequest {
                    call: "mprobe",
                    peer: Source::Any,
                    tag: Tag::Any,
                }),
                Kind::Free { .. } => None,
            })
            .collect()
    }

    /// Messages that arrived and no receive has taken: `(sender's world rank, envelope, bytes)`,
    /// in arrival order (for end-of-run warnings).
    pub fn unexpected_messages(&self) -> impl Iterator<Item = (u32, Envelope, usize)> + '_ {
        self.engine
            .unexpected_iter()
            .map(|(e, m)| (m.from, e, m.bytes))
    }

    /// Counts a message the driver transmitted for this endpoint (a [`Packet::Message`]
    /// from the outbox or a send's transport), for [`Endpoint::sent_counts`].
    /// The driver counts, at the place it moves the message anyway: counted inside the
    /// endpoint's inlined send code, the same increment cost a simulated message 6 more
    /// instructions, in the registers it took from the code around it.
    ///
    /// [`Packet::Message`]: crate::p2p::Packet::Message
    #[inline(always)]
    pub fn count_sent(&mut self, protocol: Protocol, bytes: usize) {
        self.tally.sent(protocol, bytes);
    }

    /// Counts a message that arrived, before the driver hands it to
    /// [`Endpoint::handle_packet`] (see [`Endpoint::count_sent`]).
    #[inline(always)]
    pub fn count_arrived(&mut self, protocol: Protocol, bytes: usize) {
        self.tally.arrived(protocol, bytes);
    }

    /// The messages this endpoint sent, by protocol, as its driver counted them
    /// ([`Endpoint::count_sent`]): one per message transmitted (a send of any mode, blocking
    /// or not; a buffered send that did not fit sent nothing).
    pub fn sent_counts(&self) -> MessageCounts {
        self.tally.counts().0
    }

    /// The messages receives took, by the protocol they were sent with: one per message that
    /// arrived ([`Endpoint::count_arrived`]) and was matched to a receive (`recv`, `irecv`,
    /// `mrecv`; also one the program let go of after it matched, whose data was discarded
    /// with a warning). Probes take nothing. What arrived and no receive took is
    /// [`Endpoint::unreceived_counts`]; a message its sender cancelled in time is neither.
    pub fn received_counts(&self) -> MessageCounts {
        self.tally.counts().1.minus(&self.unreceived_counts())
    }

    /// The messages that arrived and no receive has taken, by protocol: those waiting for a
    /// receive ([`Endpoint::unexpected_messages`]) and those a matched probe took and no
    /// `mrecv` received yet.
    pub fn unreceived_counts(&self) -> MessageCounts {
        let mut counts = MessageCounts::default();
        for (_, m) in self.engine.unexpected_iter() {
            counts.add(m.protocol, m.bytes);
        }
        for s in &self.slots {
            if let (true, Kind::Probed(Some(probed))) = (s.live, &s.kind) {
                counts.add(probed.1.protocol, probed.1.bytes);
            }
        }
        counts
    }

    /// Whether any message waits that no receive has taken. Posting a receive can make outputs
    /// (a `Fin`, a completion) only by matching one of them, so a driver with none waiting may
    /// post without lending an outbox.
    #[inline]
    pub fn has_unexpected(&self) -> bool {
        self.engine.unexpected_len() != 0
    }

    /// The status of the message a receive with `pattern` would get now, without taking it.
    pub fn iprobe(&mut self, pattern: &Pattern) -> Option<Status> {
        self.engine.probe(pattern).map(|p| Status {
            source: p.envelope.source,
            tag: p.envelope.tag,
            bytes: p.msg.bytes,
            cancelled: false,
        })
    }

    /// What a wait in `call` that holds no request waits for, when this endpoint knows it: for
    /// [`BUFFER_DETACH`], the first buffered message not yet received, as `("bsend", ...)`. A
    /// deadlock report names it (`waiting for bsend (peer p, tag t, context c)`) and takes its
    /// peer as the wait-for edge.
    pub fn awaited_without_request(&self, call: &str) -> Option<(&'static str, Awaited)> {
        if call != BUFFER_DETACH {
            return None;
        }
        self.undelivered_bsend().map(|awaited| ("bsend", awaited))
    }

    /// The first buffered message (by request slot) still holding attached-buffer bytes, that
    /// is, not yet received.
    fn undelivered_bsend(&self) -> Option<Awaited> {
        self.slots.iter().find_map(|s| match &s.kind {
            Kind::Send {
                held: Held::Attached(_),
                to,
                envelope,
                ..
            } if s.live => Some(Awaited {
                peer: Source::Rank(*to),
                tag: Tag::Value(envelope.tag),
                context: envelope.context,
            }),
            _ => None,
        })
    }

    /// What the posted receive or in-flight send of `req` is about, for diagnostics:
    /// `(call, peer as a world rank, tag, context)`.
    pub fn describe(&self, req: ReqId) -> Option<(&'static str, Source, Tag, ContextId)> {
        let s = self.slot(req)?;
        Some(match &s.kind {
            Kind::Send {
                envelope, mode, to, ..
            } => (
                mode.call(),
                Source::Rank(*to),
                Tag::Value(envelope.tag),
                envelope.context,
            ),
            Kind::Recv {
                pattern,
                source_world,
                ..
            } => (
                "recv",
                source_world.map_or(Source::Any, Source::Rank),
                pattern.tag,
                pattern.context,
            ),
            Kind::Probed(Some(probed)) => (
                "mprobe",
                Source::Rank(probed.1.from),
                Tag::Value(probed.0.tag),
                probed.0.context,
            ),
            Kind::Probed(None) => ("mprobe", Source::Any, Tag::Any, ContextId(0)),
            Kind::Free { .. } => return None,
        })
    }

    // ---- outputs ----

    /// Whether the outbox has something, or a completion is flagged (a driver's cheap test
    /// before taking them: [`Endpoint::take_outputs`], [`Endpoint::take_completed`]).
    #[inline]
    pub fn has_output(&self) -> bool {
        self.completed || self.out.as_deref().is_some_and(|o| !o.is_empty())
    }

    /// Whether some request became complete for the program since the flag was last taken;
    /// the flag is then cleared. The one report of completions: once however many completed,
    /// and it does not say which (a driver wakes whoever waits, who looks at its requests:
    /// [`Endpoint::is_done`]). Only requests the program holds raise it: one it let go of
    /// ([`Endpoint::free`]) completes unseen. Take it with the outputs
    /// ([`Endpoint::take_outputs`]), and act on it after the transmits; a driver whose waits
    /// look at their requests after every input anyway may just clear it.
    #[inline]
    pub fn take_completed(&mut self) -> bool {
        std::mem::take(&mut self.completed)
    }

    /// Gives back memory held for reuse while empty: output queues, request slots when none is
    /// live, the matching engine's empty queues. For a driver holding millions of endpoints (a
    /// simulator) once a rank has finished; the endpoint stays usable (late packets, warnings).
    pub fn shrink_to_fit(&mut self) {
        if self.out.as_deref().is_some_and(Outbox::is_empty) {
            self.out = None;
        }
        if self.slots.iter().all(|s| !s.live) {
            // Stale handles still fail: a fresh slot starts at generation 0, but every handle
            // into these slots is gone with the program that finished.
            self.slots = Vec::new();
            self.free_head = NO_SLOT;
        }
        self.engine.shrink_to_fit();
    }

    // ---- request slots ----

    fn slot(&self, req: ReqId) -> Option<&Slot<P>> {
        self.slots
            .get(req.idx as usize)
            .filter(|s| s.live && s.generation == req.generation && s.held_by_user)
    }

    fn slot_mut(&mut self, req: ReqId) -> Option<&mut Slot<P>> {
        self.slots
            .get_mut(req.idx as usize)
            .filter(|s| s.live && s.generation == req.generation && s.held_by_user)
    }

    /// A request the program holds became complete: raise the flag
    /// ([`Endpoint::take_completed`]).
    #[inline]
    fn completed(&mut self) {
        self.completed = true;
    }

    /// A free request slot for `kind`, held by the program. Always inlined: every nonblocking
    /// call and posted receive takes one, and out of line it costs a call and moves `kind`
    /// through memory.
    #[inline(always)]
    fn alloc(&mut self, kind: Kind<P>) -> ReqId {
        if let Some(s) = self.slots.get_mut(self.free_head as usize) {
            let idx = self.free_head;
            // Invariant: the free list links free slots only, and a free slot holds no
            // completion (`Slot::free`): only what differs is written.
            debug_assert!(matches!(s.kind, Kind::Free { .. }) && s.done.is_none());
            self.free_head = match s.kind {
                Kind::Free { next } => next,
                _ => NO_SLOT,
            };
            s.generation = s.generation.wrapping_add(1);
            s.live = true;
            s.held_by_user = true;
            s.kind = kind;
            ReqId {
                idx,
                generation: s.generation,
            }
        } else {
            let idx = u32::try_from(self.slots.len())
                .ok()
                .filter(|&i| i != NO_SLOT)
                .expect("fewer than 2^32 - 1 requests");
            // Grow one slot at a time while small: most ranks never hold more than a couple of
            // requests, and a simulation holds millions of ranks.
            if self.slots.len() == self.slots.capacity() && self.slots.len() < 8 {
                self.slots.reserve_exact(1);
            }
            self.slots.push(Slot {
                generation: 0,
                live: true,
                held_by_user: true,
                kind,
                done: None,
            });
            ReqId { idx, generation: 0 }
        }
    }

    /// Reserves `bytes` of the system buffer for an eager send, if they fit.
    fn reserve_system(&mut self, bytes: usize) -> bool {
        let mut budget = Budget {
            capacity: self.config.system_buffer,
            used: self.system_used,
        };
        let fits = budget.reserve(bytes);
        self.system_used = budget.used;
        fits
    }

    /// Frees the slot once neither the program nor the protocol needs it.
    fn release_if_unused(&mut self, req: ReqId) {
        let s = &mut self.slots[req.idx as usize];
        if s.live && !s.held_by_user && !s.protocol_needs() {
            s.free(self.free_head);
            self.free_head = req.idx;
        }
    }
}

/// The end of the free-slot list.
const NO_SLOT: u32 = u32::MAX;

/// Built only on the error path: a site is a heap allocation.
#[cold]
fn invalid_request(rank: u32, call: &'static str) -> Error {
    Error::InvalidRequest {
        site: Site::new(rank, call),
    }
}

fn send_completion<P>(cancelled: bool) -> Completion<P> {
    Completion {
        status: Status {
            cancelled,
            ..Status::default()
        },
        payload: None,
        error: None,
    }
}
