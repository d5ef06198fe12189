//! Packets from peers into an [`Endpoint`] (`Message`, `Fin`, `CancelSend`, `CancelReply`), and
//! what a match or a reply does: deliver the data, answer the sender, complete a send, release
//! buffer bytes (`docs/p2p.md` §1).

use crate::error::{Error, Site};
use crate::matching::{Arrived, Envelope};

use super::*;
use crate::p2p::packet::{MessageData, Packet, Protocol, SendRef, Transmit};
use crate::p2p::request::{Completion, Held, Kind, ReqId, Status};

impl<P: MessageData> Endpoint<P> {
    // ---- inputs: packets from peers ----

    /// A packet from world rank `from` arrived (channels are FIFO per ordered pair), sent at a
    /// time the driver does not know: taken as now (see [`Endpoint::handle_packet_sent_at`]).
    pub fn handle_packet(&mut self, from: u32, packet: Packet<P>) {
        self.handle_packet_sent_at(from, packet, self.now);
    }

    /// A packet from world rank `from`, sent at the sender's time `sent_at` (see
    /// [`Endpoint::set_now`]), arrived. Only strict ready sends look at `sent_at`: a receive
    /// posted after it does not make the send "ready" (`timing.md` S13). Inlined: the
    /// simulator's delivery of every packet is little more than this call.
    #[inline(always)]
    pub fn handle_packet_sent_at(&mut self, from: u32, packet: Packet<P>, sent_at: u64) {
        match packet {
            Packet::Message {
                sender,
                envelope,
                protocol,
                ack,
                payload,
            } => {
                let msg = Incoming {
                    from,
                    sender,
                    bytes: payload.byte_len(),
                    ack,
                    protocol,
                    payload,
                };
                let strict = protocol == Protocol::Ready && self.config.strict_ready;
                match self.engine.arrive(envelope, msg) {
                    Arrived::Matched(m) => {
                        // Ready only if the receive was posted by the time the send was made
                        // (looked up only in strict mode: every message comes here).
                        if strict
                            && matches!(
                                self.slots[m.recv.idx as usize].kind,
                                Kind::Recv { posted_at, .. } if posted_at > sent_at
                            )
                        {
                            self.ready_not_posted(from, &envelope);
                        }
                        self.deliver(m.recv, m.envelope, m.msg);
                    }
                    Arrived::Queued(_) if strict => self.ready_not_posted(from, &envelope),
                    Arrived::Queued(_) => {}
                }
            }
            Packet::Fin { sender, .. } => self.send_finished(sender, false),
            Packet::CancelSend { sender } => {
                let found = self
                    .engine
                    .unexpected_handles()
                    .find(|(_, _, m)| m.from == from && m.sender == sender)
                    .map(|(h, _, _)| h);
                let withdrawn = found.and_then(|h| self.engine.withdraw(h));
                if let Some((_, m)) = &withdrawn {
                    self.tally.withdrawn(m.protocol, m.bytes);
                }
                let cancelled = withdrawn.is_some();
                self.push_transmit(Transmit {
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

    // ---- what a match or a reply does ----

    fn ready_not_posted(&mut self, from: u32, envelope: &Envelope) {
        self.push_event(Event::Fatal(Error::ReadyNotPosted {
            site: Site::new(from, "rsend")
                .context(envelope.context)
                .peer(self.rank)
                .tag(envelope.tag),
            receiver: self.rank,
        }));
    }

    /// A receive matched a message: tell the sender, complete the receive. Always inlined
    /// (with `complete_recv`): an arriving message and a posted receive (`irecv_from`, the
    /// blocking `recv`) all come here, and with three callers the compiler would keep one copy
    /// out of line on the path of every message.
    #[inline(always)]
    pub(super) fn deliver(&mut self, req: ReqId, envelope: Envelope, msg: Incoming<P>) {
        if msg.ack {
            let posted_at = match self.slots[req.idx as usize].kind {
                Kind::Recv { posted_at, .. } => posted_at,
                _ => self.now,
            };
            self.fin(&msg, posted_at);
        }
        self.complete_recv(req, envelope, msg);
    }

    /// Tells the sender of `msg`, if it asked, that its message was taken by a receive posted
    /// at `posted_at` (the match happens now, or at the posting if later: [`Packet::Fin`]).
    pub(super) fn fin(&mut self, msg: &Incoming<P>, posted_at: u64) {
        if !msg.ack {
            return;
        }
        self.push_transmit(Transmit {
            to: msg.from,
            packet: Packet::Fin {
                sender: msg.sender,
                not_before: posted_at.max(self.now),
            },
        });
    }

    /// Fills the receive's completion and announces it; the receive is no longer posted (one
    /// look at its slot for both). Always inlined: see `deliver`.
    #[inline(always)]
    pub(super) fn complete_recv(&mut self, req: ReqId, envelope: Envelope, msg: Incoming<P>) {
        let slot = &mut self.slots[req.idx as usize];
        let Kind::Recv {
            capacity, posted, ..
        } = &mut slot.kind
        else {
            unreachable!("complete_recv on a non-receive");
        };
        *posted = None;
        let capacity = *capacity;
        if !slot.held_by_user {
            // Freed by the program: the data is dropped.
            self.release_if_unused(req);
            return;
        }
        let bytes = msg.bytes;
        slot.done = Some(Completion {
            status: Status {
                source: envelope.source,
                tag: envelope.tag,
                bytes,
                cancelled: false,
            },
            payload: Some(msg.payload),
            error: None,
        });
        self.completed();
        if bytes > capacity {
            self.truncated(req, envelope, bytes, capacity);
        }
    }

    /// The receive `req` has just completed with a message of `bytes` bytes into a buffer of
    /// `capacity`: it carries `Truncate`, with the time it completed under a simulator (S11:
    /// `max(m.arrival, req.ts)`, [`Config::virtual_time`]), not the time the program finds
    /// it. Out of line: truncations are rare.
    #[cold]
    #[inline(never)]
    fn truncated(&mut self, req: ReqId, envelope: Envelope, bytes: usize, capacity: usize) {
        let mut site = Site::new(self.rank, "recv")
            .context(envelope.context)
            .peer(envelope.source)
            .tag(envelope.tag);
        site.time_ns = self.config.virtual_time.then_some(self.now);
        let error = Box::new(Error::Truncate {
            site,
            message_bytes: bytes,
            buffer_bytes: capacity,
        });
        if let Some(done) = self.slots[req.idx as usize].done.as_mut() {
            done.error = Some(error);
        }
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
                    b.let_go(n);
                }
                self.push_event(Event::BufferFreed);
            }
            Held::System(n) => {
                debug_assert!(self.system_used >= n, "releasing more than reserved");
                self.system_used -= n;
            }
            Held::None => {}
        }
        if notify {
            self.completed();
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
            self.completed();
        }
    }
}
