//! The program's calls into an [`Endpoint`]: sends in every mode, receives, matched probes,
//! cancel, test, free, and the attached buffer (`docs/p2p.md` §2–§5).

use crate::error::{Error, Site};
use crate::matching::{Envelope, Pattern, Posted, Source};

use super::*;
use crate::p2p::buffer::Attached;
use crate::p2p::packet::{MessageData, Packet, Protocol, SendRef, Transmit};
use crate::p2p::request::{Completion, Held, Kind, MessageId, RecvStart, ReqId, SendMode, Status};

impl<P: MessageData> Endpoint<P> {
    // ---- inputs: calls of the program ----

    /// Starts the send `send`: the request to wait for, or `None` for a blocking send that
    /// completed at once (eager, buffered), which leaves the program no request to test (the
    /// protocol keeps what it needs until `Fin`; an eager send that waits for no `Fin` takes no
    /// request slot at all). A nonblocking send always has a request. Its message goes to
    /// `transport`: [`Queued`] puts it in the outbox with the other outputs; a closure gets it
    /// at once when no earlier packet waits in the outbox (behind queued packets it queues
    /// too, so the channel stays FIFO), by reference to where it was built, not as a returned
    /// value the caller would copy again: a driver that delivers each packet as it is made
    /// skips the queue.
    ///
    /// Fails only for a buffered send that does not fit in the attached buffer
    /// (`BufferOverflow`, naming `send.call`; nothing is sent). That error also ends the run:
    /// it is emitted as [`Event::Fatal`] as well, unless [`Config::bsend_overflow_returns`].
    #[inline(always)]
    pub fn start_send<T: Transport<P>>(
        &mut self,
        send: SendCall<P>,
        transport: T,
    ) -> Result<Option<ReqId>, Error> {
        let queued = self.out.as_deref().is_some_and(|o| !o.transmits.is_empty());
        let SendCall {
            call,
            mode,
            to,
            envelope,
            payload,
            blocking,
        } = send;
        let (req, transmit) = self.make_send(call, mode, to, envelope, payload, !blocking)?;
        if T::NOW && !queued {
            transport.hand_over(transmit);
        } else {
            self.push_transmit(transmit);
        }
        debug_assert!(
            blocking || req.is_some(),
            "a nonblocking send has a request"
        );
        Ok(req)
    }

    /// A send's request (as `start_send` returns it) and its message, not yet handed over; an error
    /// names `call`. Always inlined: every send starts here, from several callers, and the
    /// compiler would keep it out of line for all of them (sim ring: +83 instructions per
    /// message when the nonblocking sends got a caller of their own).
    #[inline(always)]
    fn make_send(
        &mut self,
        call: &'static str,
        mode: SendMode,
        to: u32,
        envelope: Envelope,
        payload: P,
        held_by_user: bool,
    ) -> Result<(Option<ReqId>, Transmit<P>), Error> {
        let bytes = payload.byte_len();
        let (protocol, bytes_held) = match mode {
            SendMode::Buffered => {
                let requested = bytes.saturating_add(self.config.bsend_overhead);
                // With no buffer attached, only a message that needs no bytes fits (a zero-byte
                // one when the overhead is 0); it is in no buffer, so no detach waits for it.
                let held = match self.attached.as_deref_mut() {
                    Some(buffer) => buffer.hold(requested).then_some(Held::Attached(requested)),
                    None => (requested == 0).then_some(Held::None),
                };
                let Some(held) = held else {
                    return Err(self.buffer_overflow(call, to, &envelope, requested));
                };
                (Protocol::Buffered, held)
            }
            SendMode::Standard
                if bytes <= self.config.eager_threshold && self.config.system_buffer.is_none() =>
            {
                (Protocol::Eager, Held::None)
            }
            SendMode::Standard
                if bytes <= self.config.eager_threshold && self.reserve_system(bytes) =>
            {
                (Protocol::Eager, Held::System(bytes))
            }
            SendMode::Standard | SendMode::Synchronous => (Protocol::Rendezvous, Held::None),
            SendMode::Ready => (Protocol::Ready, Held::None),
        };
        let locally_complete = matches!(protocol, Protocol::Eager | Protocol::Buffered);
        // An eager send from an unbounded system buffer holds nothing: no Fin needed.
        let ack = !(protocol == Protocol::Eager && bytes_held == Held::None);
        let req = if !held_by_user && locally_complete && !ack {
            // Nothing will ever look this send up: no slot (its packets name no request).
            None
        } else {
            let req = self.alloc(Kind::Send {
                to,
                envelope,
                mode,
                held: bytes_held,
                ack,
                in_flight: ack,
                cancelling: false,
            });
            if locally_complete {
                if held_by_user {
                    self.slots[req.idx as usize].done = Some(send_completion(false));
                    self.completed();
                } else {
                    self.slots[req.idx as usize].held_by_user = false;
                }
            }
            Some(req)
        };
        let sender = req.map_or(SendRef::NONE, |r| SendRef(r.idx, r.generation));
        let transmit = Transmit {
            to,
            packet: Packet::Message {
                sender,
                envelope,
                protocol,
                ack,
                payload,
            },
        };
        Ok((req.filter(|_| held_by_user || !locally_complete), transmit))
    }

    /// A buffered send of `requested` bytes (with the overhead) that does not fit: a program
    /// error that ends the run (`timing.md` §3: "a real run would abort there"; MPI's default
    /// error handler), queued as a fatal event and returned to the caller; only returned under
    /// [`Config::bsend_overflow_returns`] (MPI's `MPI_ERRORS_RETURN`). Out of line: every
    /// send inlines `make_send`.
    #[cold]
    #[inline(never)]
    fn buffer_overflow(
        &mut self,
        call: &'static str,
        to: u32,
        envelope: &Envelope,
        requested: usize,
    ) -> Error {
        let (attached, used) = self
            .attached
            .as_deref()
            .map_or((0, 0), |b| (b.bytes.capacity.unwrap_or(0), b.bytes.used));
        let err = Error::BufferOverflow {
            site: Site::new(self.rank, call)
                .context(envelope.context)
                .peer(to)
                .tag(envelope.tag),
            requested,
            attached,
            used,
        };
        if !self.config.bsend_overflow_returns {
            self.push_event(Event::Fatal(err.clone()));
        }
        err
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
        self.post_recv(pattern, capacity, source_world).0
    }

    /// Starts a blocking receive: as [`Endpoint::irecv_from`], but a receive that a waiting
    /// message matched at once is finished here, as [`Endpoint::test`] would finish it, and
    /// leaves the program no request; otherwise the posted request to wait for. One pass for a
    /// driver, where posting and then testing would take two.
    #[inline]
    pub fn recv(
        &mut self,
        pattern: Pattern,
        capacity: usize,
        source_world: Option<u32>,
    ) -> RecvStart<P> {
        let (req, matched) = self.post_recv(pattern, capacity, source_world);
        if matched && let Some(completion) = self.take_if_done(req) {
            return RecvStart::Done(completion);
        }
        RecvStart::Posted(req)
    }

    /// Posts a receive (`irecv_from`); also says whether a waiting message matched it at once
    /// (it is then complete), so that `recv` looks the request up only then. Always inlined, as
    /// `make_send` is, with the matching engine's posting.
    #[inline(always)]
    fn post_recv(
        &mut self,
        pattern: Pattern,
        capacity: usize,
        source_world: Option<u32>,
    ) -> (ReqId, bool) {
        let req = self.alloc(Kind::Recv {
            pattern,
            source_world,
            posted_at: self.now,
            capacity,
            posted: None,
        });
        match self.engine.post(pattern, req) {
            Posted::Matched(m) => {
                self.deliver(req, m.envelope, m.msg);
                (req, true)
            }
            Posted::Queued(h) => {
                if let Kind::Recv { posted, .. } = &mut self.slots[req.idx as usize].kind {
                    *posted = Some(h);
                }
                (req, false)
            }
        }
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
        self.fin(&msg, self.now);
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

    /// Cancels `req` (`docs/p2p.md` §5). A posted receive is cancelled at once; a send asks its
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
                    self.completed();
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
                    self.push_transmit(Transmit {
                        to,
                        packet: Packet::CancelSend {
                            sender: SendRef(req.idx, req.generation),
                        },
                    });
                }
            }
            Kind::Probed(_) | Kind::Free { .. } => {}
        }
        Ok(())
    }

    /// Takes the completion of `req` if it is complete; the handle is then spent. `Ok(None)`
    /// while pending.
    pub fn test(&mut self, req: ReqId) -> Result<Option<Completion<P>>, Error> {
        if self.slot(req).is_none() {
            return Err(invalid_request(self.rank, "test"));
        }
        Ok(self.take_if_done(req))
    }

    /// The completion of `req` if the program would see it complete, taken as by
    /// [`Endpoint::test`] (the request is then finished); `None` when it is not complete or
    /// not a request the program holds. One lookup: the wait of a blocking call.
    #[inline]
    pub fn take_if_done(&mut self, req: ReqId) -> Option<Completion<P>> {
        self.finish_with(req, Option::take).flatten()
    }

    /// As [`Endpoint::take_if_done`], but the completion is finished where the slot keeps it
    /// ([`Completion::finish_into`]: a receive's data into `buf`, the status or error out)
    /// rather than moved out through the driver's layers: the wait of a blocking call.
    #[inline]
    pub fn finish_if_done(
        &mut self,
        req: ReqId,
        buf: Option<&mut [u8]>,
    ) -> Option<Result<Status, Box<Error>>>
    where
        P: AsRef<[u8]>,
    {
        self.finish_with(req, |done| done.as_mut().map(|c| c.finish_into(buf)))
            .flatten()
    }

    /// The one lookup of [`Endpoint::take_if_done`] and [`Endpoint::finish_if_done`]: when the
    /// program would see `req` complete, `f` gets its completion, the request is finished and
    /// its slot released as by `release_if_unused` (on the slot in hand); either way the
    /// completion is gone afterwards. `None` when it is not complete or not held.
    #[inline(always)]
    fn finish_with<T>(
        &mut self,
        req: ReqId,
        f: impl FnOnce(&mut Option<Completion<P>>) -> T,
    ) -> Option<T> {
        let free_head = self.free_head;
        let slot = self.slot_mut(req)?;
        if !slot.user_done() {
            return None;
        }
        let out = f(&mut slot.done);
        slot.held_by_user = false;
        if !slot.protocol_needs() {
            slot.free(free_head);
            self.free_head = req.idx;
        } else {
            slot.done = None;
        }
        Some(out)
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

    /// Attaches a buffer of `bytes` bytes for buffered sends; `BufferAlreadyAttached` while one
    /// is attached, of whatever size (0 too).
    pub fn buffer_attach(&mut self, bytes: usize) -> Result<(), Error> {
        if let Some(b) = self.attached.as_deref() {
            return Err(Error::BufferAlreadyAttached {
                site: Site::new(self.rank, "buffer_attach"),
                attached: b.bytes.capacity.unwrap_or(0),
            });
        }
        self.attached = Some(Box::new(Attached::new(bytes)));
        Ok(())
    }

    /// Detaches the buffer and returns its size (0 for a zero-byte one); `NoBufferAttached` if
    /// none is. Call when [`Endpoint::buffered_messages`] is 0 (a blocking `buffer_detach`
    /// waits for that, woken by [`Event::BufferFreed`]).
    pub fn buffer_detach(&mut self) -> Result<usize, Error> {
        match self.attached.take() {
            Some(b) => {
                debug_assert_eq!(
                    b.messages, 0,
                    "detach while buffered messages are in flight"
                );
                Ok(b.bytes.capacity.unwrap_or(0))
            }
            None => Err(Error::NoBufferAttached {
                site: Site::new(self.rank, BUFFER_DETACH),
            }),
        }
    }
}

/// A send the program starts ([`Endpoint::start_send`]).
#[derive(Debug)]
pub struct SendCall<P> {
    /// The program's call (`"send"`, `"isend"`, a persistent request's `"start"`, `"sendrecv"`,
    /// …), which its error names.
    pub call: &'static str,
    /// The send mode.
    pub mode: SendMode,
    /// The destination's world rank.
    pub to: u32,
    /// What a receive matches.
    pub envelope: Envelope,
    /// The message.
    pub payload: P,
    /// A blocking call's send: one that completes at once leaves no request.
    pub blocking: bool,
}

/// Where a send's message goes ([`Endpoint::start_send`]): [`Queued`], or a closure that takes
/// it at once.
pub trait Transport<P> {
    /// Whether it takes messages at once; if not, the endpoint queues them in its outbox.
    const NOW: bool;
    /// Takes `transmit` (called only when `NOW`).
    fn hand_over(self, transmit: Transmit<P>);
}

/// Into the endpoint's outbox, drained by the driver with the other outputs.
#[derive(Clone, Copy, Debug)]
pub struct Queued;

impl<P> Transport<P> for Queued {
    const NOW: bool = false;
    fn hand_over(self, _transmit: Transmit<P>) {
        unreachable!("a queued send's message is never handed over")
    }
}

impl<P, F: FnOnce(Transmit<P>)> Transport<P> for F {
    const NOW: bool = true;
    #[inline(always)]
    fn hand_over(self, transmit: Transmit<P>) {
        self(transmit);
    }
}
