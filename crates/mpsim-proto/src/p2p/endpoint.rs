//! [`Endpoint`]: the point-to-point protocol of one rank as a sans-IO state machine
//! (`spec/p2p.md`, seed `000_444ea301cad89974.txt`).
//!
//! Methods, by kind (the quinn-proto split):
//! - getters: [`Endpoint::rank`], [`Endpoint::is_done`], [`Endpoint::buffer_in_use`],
//!   [`Endpoint::pending_requests`], [`Endpoint::iprobe`];
//! - `handle_*` inputs: calls of the program ([`Endpoint::isend`], [`Endpoint::irecv`],
//!   [`Endpoint::improbe`], [`Endpoint::mrecv`], [`Endpoint::cancel`], [`Endpoint::free`],
//!   [`Endpoint::buffer_attach`], [`Endpoint::buffer_detach`]) and packets from peers
//!   ([`Endpoint::handle_packet`]);
//! - user commands that consume results: [`Endpoint::test`];
//! - `poll_*` outputs: [`Endpoint::poll_transmit`], then [`Endpoint::poll_event`].
//!
//! After every input, a driver drains `poll_transmit` (in order: the channel to each peer is
//! FIFO and the protocol relies on it) and then `poll_event`. Nothing here blocks, reads a clock
//! or touches memory the program lent: payloads are opaque `P` values the backend makes.
//!
//! Protocol, in short (details in [`super::packet`]): every send posts a `Message`; the receiver
//! matches it with the tag-matching engine, takes the payload and answers `Fin`. A send's
//! request completes locally (eager standard, buffered) or at `Fin` (synchronous, ready,
//! rendezvous standard). Buffer bytes are held until `Fin` or a successful cancel.

use std::collections::VecDeque;

use crate::error::{Error, PendingRequest, Site};
use crate::matching::{Arrived, ContextId, Engine, Envelope, Pattern, Posted, Source, Tag};

use super::buffer::{BSEND_OVERHEAD, Budget};
use super::packet::{Packet, Protocol, SendRef, Transmit};
use super::request::{Completion, Held, Kind, MessageId, ReqId, SendMode, Slot, Status};

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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            eager_threshold: 65_536,
            system_buffer: None,
            strict_ready: false,
            bsend_overhead: BSEND_OVERHEAD,
        }
    }
}

/// Something the driver must know after an input.
#[derive(Debug)]
#[must_use]
pub enum Event {
    /// The request became complete for the program (wake whoever waits on it).
    Completed(ReqId),
    /// Attached-buffer bytes were freed (wake a pending `buffer_detach`).
    BufferFreed,
    /// An error that ends the run (bsend overflow, strict `rsend`).
    Fatal(Error),
}

/// A message as the receiving endpoint keeps it until a receive takes it.
#[derive(Debug)]
pub struct Incoming<P> {
    from: u32,
    sender: SendRef,
    bytes: usize,
    protocol: Protocol,
    ack: bool,
    payload: P,
}

impl<P> Incoming<P> {
    /// World rank of the sender.
    pub fn from(&self) -> u32 {
        self.from
    }

    /// Length in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How it travels.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }
}

/// The point-to-point protocol state of one rank.
///
/// ```
/// use mpsim_proto::matching::{ContextId, Envelope, Pattern};
/// use mpsim_proto::p2p::{Config, Endpoint, SendMode};
///
/// let (mut a, mut b) = (Endpoint::<Vec<u8>>::new(0, Config::default()), Endpoint::new(1, Config::default()));
/// let ctx = ContextId(0);
/// let send = a.isend(SendMode::Synchronous, 1, Envelope::new(ctx, 0, 7), 3, b"abc".to_vec()).unwrap();
/// let recv = b.irecv(Pattern::new(ctx, 0, 7), 16);
/// // Deliver a's packets to b and b's back to a.
/// while let Some(t) = a.poll_transmit() { b.handle_packet(0, t.packet); }
/// while let Some(t) = b.poll_transmit() { a.handle_packet(1, t.packet); }
/// let got = b.test(recv).unwrap().expect("received");
/// assert_eq!((got.status.bytes, got.payload.as_deref()), (3, Some(&b"abc"[..])));
/// assert!(a.test(send).unwrap().is_some(), "the ssend completed at Fin");
/// ```
pub struct Endpoint<P> {
    rank: u32,
    /// The driver's time (`set_now`); only strict ready sends use it.
    now: u64,
    config: Config,
    engine: Engine<ReqId, Incoming<P>>,
    slots: Vec<Slot<P>>,
    free_slots: Vec<u32>,
    attached: Option<Budget>,
    system: Budget,
    transmits: VecDeque<Transmit<P>>,
    events: VecDeque<Event>,
}

impl<P> Endpoint<P> {
    /// The endpoint of world rank `rank`.
    pub fn new(rank: u32, config: Config) -> Self {
        Endpoint {
            rank,
            now: 0,
            config,
            engine: Engine::new(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            attached: None,
            system: Budget {
                capacity: config.system_buffer,
                used: 0,
            },
            transmits: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Sets the time of the inputs that follow (a simulator's virtual time). Only strict ready
    /// sends need it: a receive posted after the send was sent does not make it "ready"
    /// (`timing.md` S13). A driver without a clock never calls it.
    pub fn set_now(&mut self, now: u64) {
        self.now = now;
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

    /// Bytes of the attached buffer held by buffered messages not yet delivered.
    pub fn buffer_in_use(&self) -> usize {
        self.attached.map_or(0, |b| b.used)
    }

    /// Requests the program still holds that are not complete, for `PendingAtExit`.
    pub fn pending_requests(&self) -> Vec<PendingRequest> {
        self.slots
            .iter()
            .filter(|s| s.live && s.held_by_user && !s.user_done())
            .map(|s| match &s.kind {
                Kind::Send {
                    envelope, mode, to, ..
                } => PendingRequest {
                    call: mode.icall(),
                    peer: Source::Rank(*to),
                    tag: Tag::Value(envelope.tag),
                },
                Kind::Recv {
                    pattern,
                    source_world,
                    ..
                } => PendingRequest {
                    call: "irecv",
                    peer: source_world.map_or(Source::Any, Source::Rank),
                    tag: pattern.tag,
                },
                Kind::Probed(_) => PendingRequest {
                    call: "improbe",
                    peer: Source::Any,
                    tag: Tag::Any,
                },
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

    /// The status of the message a receive with `pattern` would get now, without taking it.
    pub fn iprobe(&mut self, pattern: &Pattern) -> Option<Status> {
        self.engine.probe(pattern).map(|p| Status {
            source: p.envelope.source,
            tag: p.envelope.tag,
            bytes: p.msg.bytes,
            cancelled: false,
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
            Kind::Probed(_) => ("mprobe", Source::Any, Tag::Any, ContextId(0)),
        })
    }

    // ---- inputs: calls of the program ----

    /// Starts a send of `bytes` bytes (`payload`) to world rank `to` with `envelope`.
    ///
    /// Fails only for a buffered send that does not fit in the attached buffer
    /// (`BufferOverflow`; nothing is sent). That error also ends the run: it is emitted as
    /// [`Event::Fatal`] as well.
    pub fn isend(
        &mut self,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        bytes: usize,
        payload: P,
    ) -> Result<ReqId, Error> {
        let (protocol, held) = match mode {
            SendMode::Buffered => {
                let requested = bytes.saturating_add(self.config.bsend_overhead);
                let budget = self.attached.get_or_insert(Budget {
                    capacity: Some(0),
                    used: 0,
                });
                if !budget.reserve(requested) {
                    let (attached, used) = (budget.capacity.unwrap_or(0), budget.used);
                    if attached == 0 && used == 0 {
                        self.attached = None;
                    }
                    let err = Error::BufferOverflow {
                        site: Site::new(self.rank, "bsend")
                            .context(envelope.context)
                            .peer(to)
                            .tag(envelope.tag),
                        requested,
                        attached,
                        used,
                    };
                    // A program error that ends the run (`timing.md` §3: "a real run would abort
                    // there"; MPI's default error handler): the caller gets it too.
                    self.events.push_back(Event::Fatal(err.clone()));
                    return Err(err);
                }
                (Protocol::Buffered, Held::Attached(requested))
            }
            SendMode::Standard
                if bytes <= self.config.eager_threshold && self.system.capacity.is_none() =>
            {
                (Protocol::Eager, Held::None)
            }
            SendMode::Standard
                if bytes <= self.config.eager_threshold && self.system.reserve(bytes) =>
            {
                (Protocol::Eager, Held::System(bytes))
            }
            SendMode::Standard | SendMode::Synchronous => (Protocol::Rendezvous, Held::None),
            SendMode::Ready => (Protocol::Ready, Held::None),
        };
        let locally_complete = matches!(protocol, Protocol::Eager | Protocol::Buffered);
        // An eager send from an unbounded system buffer holds nothing: no Fin needed.
        let ack = !(protocol == Protocol::Eager && held == Held::None);
        let req = self.alloc(Kind::Send {
            to,
            envelope,
            mode,
            held,
            ack,
            in_flight: ack,
            cancelling: false,
        });
        if locally_complete {
            self.slots[req.idx as usize].done = Some(send_completion(false));
            self.events.push_back(Event::Completed(req));
        }
        self.transmits.push_back(Transmit {
            to,
            packet: Packet::Message {
                sender: SendRef(req.idx, req.generation),
                envelope,
                bytes,
                protocol,
                ack,
                sent_at: self.now,
                payload,
            },
        });
        Ok(req)
    }

    /// Posts a receive for `pattern` into a buffer of `capacity` bytes, on a communicator whose
    /// ranks are world ranks (the world and its dups).
    pub fn irecv(&mut self, pattern: Pattern, capacity: usize) -> ReqId {
        let source_world = match pattern.source {
            Source::Rank(r) => Some(r),
            Source::Any => None,
        };
        self.irecv_from(pattern, capacity, source_world)
    }

    /// Posts a receive whose pattern names a source by communicator rank; `source_world` is that
    /// source's world rank, so that diagnostics (deadlock cycles, pending requests) name world
    /// ranks as they do for sends.
    pub fn irecv_from(
        &mut self,
        pattern: Pattern,
        capacity: usize,
        source_world: Option<u32>,
    ) -> ReqId {
        let req = self.alloc(Kind::Recv {
            pattern,
            source_world,
            posted_at: self.now,
            capacity,
            posted: None,
        });
        match self.engine.post(pattern, req) {
            Posted::Matched(m) => self.deliver(req, m.envelope, m.msg),
            Posted::Queued(h) => {
                if let Kind::Recv { posted, .. } = &mut self.slots[req.idx as usize].kind {
                    *posted = Some(h);
                }
            }
        }
        req
    }

    /// Takes the message a receive with `pattern` would get now (matched probe); it is then
    /// received only through [`Endpoint::mrecv`]. Its sender is told now (`timing.md` S12).
    pub fn improbe(&mut self, pattern: &Pattern) -> Option<(MessageId, Status)> {
        let (envelope, msg) = self.engine.mprobe(pattern)?;
        let status = Status {
            source: envelope.source,
            tag: envelope.tag,
            bytes: msg.bytes,
            cancelled: false,
        };
        self.fin(&msg);
        let req = self.alloc(Kind::Probed(Some(Box::new((envelope, msg)))));
        Some((MessageId(req), status))
    }

    /// Receives a message taken by `improbe` into a buffer of `capacity` bytes; the request is
    /// complete at once.
    pub fn mrecv(&mut self, message: MessageId, capacity: usize) -> Result<ReqId, Error> {
        let req = message.0;
        let (rank, now) = (self.rank, self.now);
        let invalid = || invalid_request(rank, "mrecv");
        let slot = self.slot_mut(req).ok_or_else(invalid)?;
        let Kind::Probed(message) = &mut slot.kind else {
            return Err(invalid());
        };
        let (envelope, msg) = *message.take().ok_or_else(invalid)?;
        slot.kind = Kind::Recv {
            pattern: Pattern::new(envelope.context, envelope.source, envelope.tag),
            source_world: Some(msg.from),
            posted_at: now,
            capacity,
            posted: None,
        };
        self.complete_recv(req, envelope, msg);
        Ok(req)
    }

    /// Cancels `req` (`spec/p2p.md` §5). A posted receive is cancelled at once; a send asks its
    /// receiver and completes, cancelled or not, when the answer comes. Either way the request
    /// must still be waited for; its status tells whether it was cancelled.
    pub fn cancel(&mut self, req: ReqId) -> Result<(), Error> {
        let rank = self.rank;
        let slot = self
            .slot_mut(req)
            .ok_or_else(|| invalid_request(rank, "cancel"))?;
        match &mut slot.kind {
            Kind::Recv { posted, .. } => {
                if let Some(h) = posted.take()
                    && self.engine.cancel(h).is_some()
                {
                    let slot = &mut self.slots[req.idx as usize];
                    slot.done = Some(Completion {
                        status: Status {
                            cancelled: true,
                            ..Status::default()
                        },
                        payload: None,
                        error: None,
                    });
                    self.events.push_back(Event::Completed(req));
                }
            }
            Kind::Send {
                to,
                ack,
                in_flight,
                cancelling,
                ..
            } => {
                // Ask the receiver unless the send is known delivered (its Fin came).
                if (*in_flight || !*ack) && !*cancelling {
                    *cancelling = true;
                    let to = *to;
                    self.transmits.push_back(Transmit {
                        to,
                        packet: Packet::CancelSend {
                            sender: SendRef(req.idx, req.generation),
                        },
                    });
                }
            }
            Kind::Probed(_) => {}
        }
        Ok(())
    }

    /// Takes the completion of `req` if it is complete; the handle is then spent. `Ok(None)`
    /// while pending.
    pub fn test(&mut self, req: ReqId) -> Result<Option<Completion<P>>, Error> {
        let rank = self.rank;
        let slot = self
            .slot_mut(req)
            .ok_or_else(|| invalid_request(rank, "test"))?;
        if !slot.user_done() {
            return Ok(None);
        }
        let completion = slot.done.take();
        slot.held_by_user = false;
        self.release_if_unused(req);
        Ok(completion)
    }

    /// The program lets go of `req` (`request_free`): a send still completes in the background;
    /// a receive stays posted and its data is dropped.
    pub fn free(&mut self, req: ReqId) -> Result<(), Error> {
        let rank = self.rank;
        let slot = self
            .slot_mut(req)
            .ok_or_else(|| invalid_request(rank, "request_free"))?;
        slot.held_by_user = false;
        self.release_if_unused(req);
        Ok(())
    }

    /// Attaches a buffer of `bytes` bytes for buffered sends.
    pub fn buffer_attach(&mut self, bytes: usize) -> Result<(), Error> {
        match self.attached {
            Some(b) if b.capacity.unwrap_or(0) > 0 || b.used > 0 => {
                Err(Error::BufferAlreadyAttached {
                    site: Site::new(self.rank, "buffer_attach"),
                    attached: b.capacity.unwrap_or(0),
                })
            }
            _ => {
                self.attached = Some(Budget {
                    capacity: Some(bytes),
                    used: 0,
                });
                Ok(())
            }
        }
    }

    /// Detaches the buffer and returns its size. Call when [`Endpoint::buffer_in_use`] is 0
    /// (a blocking `buffer_detach` waits for that, woken by [`Event::BufferFreed`]).
    pub fn buffer_detach(&mut self) -> Result<usize, Error> {
        match self.attached.take() {
            Some(b) if b.capacity.unwrap_or(0) > 0 => {
                debug_assert_eq!(b.used, 0, "detach while buffered messages are in flight");
                Ok(b.capacity.unwrap_or(0))
            }
            other => {
                self.attached = other;
                Err(Error::NoBufferAttached {
                    site: Site::new(self.rank, "buffer_detach"),
                })
            }
        }
    }

    // ---- inputs: packets from peers ----

    /// A packet from world rank `from` arrived (channels are FIFO per ordered pair).
    pub fn handle_packet(&mut self, from: u32, packet: Packet<P>) {
        match packet {
            Packet::Message {
                sender,
                envelope,
                bytes,
                protocol,
                ack,
                sent_at,
                payload,
            } => {
                let msg = Incoming {
                    from,
                    sender,
                    bytes,
                    protocol,
                    ack,
                    payload,
                };
                let strict = protocol == Protocol::Ready && self.config.strict_ready;
                match self.engine.arrive(envelope, msg) {
                    Arrived::Matched(m) => {
                        // Ready only if the receive was posted by the time the send was made.
                        let late = matches!(
                            self.slots[m.recv.idx as usize].kind,
                            Kind::Recv { posted_at, .. } if posted_at > sent_at
                        );
                        if strict && late {
                            self.ready_not_posted(from, &envelope);
                        }
                        self.deliver(m.recv, m.envelope, m.msg);
                    }
                    Arrived::Queued(_) if strict => self.ready_not_posted(from, &envelope),
                    Arrived::Queued(_) => {}
                }
            }
            Packet::Fin { sender } => self.send_finished(sender, false),
            Packet::CancelSend { sender } => {
                let found = self
                    .engine
                    .unexpected_handles()
                    .find(|(_, _, m)| m.from == from && m.sender == sender)
                    .map(|(h, _, _)| h);
                let cancelled = found.and_then(|h| self.engine.withdraw(h)).is_some();
                self.transmits.push_back(Transmit {
                    to: from,
                    packet: Packet::CancelReply { sender, cancelled },
                });
            }
            Packet::CancelReply { sender, cancelled } => {
                if cancelled {
                    self.send_finished(sender, true);
                } else {
                    // The message had matched: its Fin came first (FIFO) and completed it.
                    self.clear_cancelling(sender);
                }
            }
        }
    }

    // ---- outputs ----

    /// The next packet to deliver. Drain in order after every input.
    pub fn poll_transmit(&mut self) -> Option<Transmit<P>> {
        self.transmits.pop_front()
    }

    /// The next event. Drain after `poll_transmit`.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ---- internals ----

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

    fn alloc(&mut self, kind: Kind<P>) -> ReqId {
        let slot = |generation| Slot {
            generation,
            live: true,
            held_by_user: true,
            kind,
            done: None,
        };
        if let Some(idx) = self.free_slots.pop() {
            let s = &mut self.slots[idx as usize];
            let generation = s.generation.wrapping_add(1);
            *s = slot(generation);
            ReqId { idx, generation }
        } else {
            let idx = u32::try_from(self.slots.len()).expect("more than 2^32 requests");
            // Grow one slot at a time while small: most ranks never hold more than a couple of
            // requests, and a simulation holds millions of ranks.
            if self.slots.len() == self.slots.capacity() && self.slots.len() < 8 {
                self.slots.reserve_exact(1);
            }
            self.slots.push(slot(0));
            ReqId { idx, generation: 0 }
        }
    }

    /// Frees the slot once neither the program nor the protocol needs it.
    fn release_if_unused(&mut self, req: ReqId) {
        let s = &mut self.slots[req.idx as usize];
        let protocol_needs = match &s.kind {
            Kind::Send {
                in_flight,
                cancelling,
                ..
            } => *in_flight || *cancelling,
            Kind::Recv { posted, .. } => posted.is_some(),
            Kind::Probed(_) => false,
        };
        if s.live && !s.held_by_user && !protocol_needs {
            s.live = false;
            s.done = None;
            s.kind = Kind::Probed(None);
            self.free_slots.push(req.idx);
        }
    }

    fn ready_not_posted(&mut self, from: u32, envelope: &Envelope) {
        self.events.push_back(Event::Fatal(Error::ReadyNotPosted {
            site: Site::new(from, "rsend")
                .context(envelope.context)
                .peer(self.rank)
                .tag(envelope.tag),
            receiver: self.rank,
        }));
    }

    /// A receive matched a message: tell the sender, complete the receive.
    fn deliver(&mut self, req: ReqId, envelope: Envelope, msg: Incoming<P>) {
        self.fin(&msg);
        if let Kind::Recv { posted, .. } = &mut self.slots[req.idx as usize].kind {
            *posted = None;
        }
        self.complete_recv(req, envelope, msg);
    }

    fn fin(&mut self, msg: &Incoming<P>) {
        if !msg.ack {
            return;
        }
        self.transmits.push_back(Transmit {
            to: msg.from,
            packet: Packet::Fin { sender: msg.sender },
        });
    }

    fn complete_recv(&mut self, req: ReqId, envelope: Envelope, msg: Incoming<P>) {
        let rank = self.rank;
        let slot = &mut self.slots[req.idx as usize];
        let Kind::Recv { capacity, .. } = slot.kind else {
            unreachable!("complete_recv on a non-receive");
        };
        let error = (msg.bytes > capacity).then(|| {
            Box::new(Error::Truncate {
                site: Site::new(rank, "recv")
                    .context(envelope.context)
                    .peer(envelope.source)
                    .tag(envelope.tag),
                message_bytes: msg.bytes,
                buffer_bytes: capacity,
            })
        });
        if !slot.held_by_user {
            // Freed by the program: the data is dropped.
            self.release_if_unused(req);
            return;
        }
        slot.done = Some(Completion {
            status: Status {
                source: envelope.source,
                tag: envelope.tag,
                bytes: msg.bytes,
                cancelled: false,
            },
            payload: Some(msg.payload),
            error,
        });
        self.events.push_back(Event::Completed(req));
    }

    /// `Fin` or a successful cancel: release buffer bytes, complete the send.
    fn send_finished(&mut self, sender: SendRef, cancelled: bool) {
        let req = ReqId {
            idx: sender.0,
            generation: sender.1,
        };
        let Some(slot) = self
            .slots
            .get_mut(req.idx as usize)
            .filter(|s| s.live && s.generation == req.generation)
        else {
            debug_assert!(false, "Fin for an unknown send");
            return;
        };
        let Kind::Send {
            held,
            in_flight,
            cancelling,
            ..
        } = &mut slot.kind
        else {
            debug_assert!(false, "Fin for a non-send");
            return;
        };
        *in_flight = false;
        // A send the program saw complete, then asked to cancel, looked pending until now.
        let was_cancelling = std::mem::replace(cancelling, false);
        let held = std::mem::replace(held, Held::None);
        let was_done = slot.done.is_some();
        if cancelled || !was_done {
            slot.done = Some(send_completion(cancelled));
        }
        let notify = slot.held_by_user && (cancelled || !was_done || was_cancelling);
        match held {
            Held::Attached(n) => {
                if let Some(b) = self.attached.as_mut() {
                    b.release(n);
                }
                self.events.push_back(Event::BufferFreed);
            }
            Held::System(n) => self.system.release(n),
            Held::None => {}
        }
        if notify {
            self.events.push_back(Event::Completed(req));
        }
        self.release_if_unused(req);
    }

    fn clear_cancelling(&mut self, sender: SendRef) {
        let req = ReqId {
            idx: sender.0,
            generation: sender.1,
        };
        if let Some(slot) = self
            .slots
            .get_mut(req.idx as usize)
            .filter(|s| s.live && s.generation == req.generation)
            && let Kind::Send { cancelling, .. } = &mut slot.kind
            && std::mem::replace(cancelling, false)
            && slot.held_by_user
            && slot.done.is_some()
        {
            self.events.push_back(Event::Completed(req));
        }
    }
}

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
