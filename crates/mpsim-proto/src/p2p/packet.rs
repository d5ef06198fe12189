//! What endpoints say to each other (`docs/p2p.md` §1): the protocol messages on the FIFO
//! channel of each ordered pair of ranks.
//!
//! Rendezvous here is the receiver-read form of seed 002: a [`Packet::Message`] that is not
//! eager carries a handle to the sender's copy of the data, the receiver takes it when a receive
//! matches and answers [`Packet::Fin`]. So a matched transfer completes even if the sender never
//! calls the library again (§1 "Progress"), and no core ever holds borrowed user memory.

use crate::matching::Envelope;

/// The data a message carries, as the protocol core sees it: only its length matters
/// (receives report it and must hold it, buffered and eager sends account for it). Carrying the
/// length in the data keeps it out of every [`Packet`].
pub trait MessageData {
    /// The message's length in bytes.
    fn byte_len(&self) -> usize;
}

impl MessageData for Vec<u8> {
    #[inline]
    fn byte_len(&self) -> usize {
        self.len()
    }
}

impl<A: smallvec::Array<Item = u8>> MessageData for smallvec::SmallVec<A> {
    #[inline]
    fn byte_len(&self) -> usize {
        self.len()
    }
}

/// A request of the sending endpoint, named in packets so that replies find it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SendRef(pub(crate) u32, pub(crate) u32);

impl SendRef {
    /// Names no request: a message nothing will answer (an eager send that asks no `Fin`).
    pub(crate) const NONE: SendRef = SendRef(u32::MAX, u32::MAX);
}

/// How a message travels, which decides when its send completes and which delay table times it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Standard send at or below the eager threshold: the send completed when it was copied
    /// into the system buffer (`P-send`); timed by `D_bsend`.
    Eager,
    /// From the user's attached buffer (`bsend`): completed locally; timed by `D_bsend`.
    Buffered,
    /// Synchronous, ready, or standard above the threshold: the send completes at `Fin`;
    /// timed by `D_ssend`.
    Rendezvous,
    /// `rsend`: as `Rendezvous`; in strict mode the receiver checks a receive was posted.
    Ready,
}

impl Protocol {
    /// Every protocol, in the order of report columns ([`Protocol::index`]).
    pub const ALL: [Protocol; 4] = [
        Protocol::Eager,
        Protocol::Buffered,
        Protocol::Rendezvous,
        Protocol::Ready,
    ];

    /// The protocol's column in counts by protocol ([`MessageCounts`](super::MessageCounts)):
    /// its place in [`Protocol::ALL`].
    #[inline(always)]
    pub const fn index(self) -> usize {
        match self {
            Protocol::Eager => 0,
            Protocol::Buffered => 1,
            Protocol::Rendezvous => 2,
            Protocol::Ready => 3,
        }
    }

    /// The protocol's name in reports (`eager`, `buffered`, `rendezvous`, `ready`).
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Eager => "eager",
            Protocol::Buffered => "buffered",
            Protocol::Rendezvous => "rendezvous",
            Protocol::Ready => "ready",
        }
    }

    /// Whether the message is timed with the buffered-send table (`timing.md` §2).
    pub fn buffered_timing(self) -> bool {
        matches!(self, Protocol::Eager | Protocol::Buffered)
    }
}

/// A protocol message from one endpoint to another.
///
/// Small by design: with the sequence number of a threads lane slot it fits one 64-byte cache
/// line, the only line a small message makes cross cores. Its length is the payload's own
/// ([`MessageData`]), and the time it was sent, which only a simulator's strict ready sends
/// need, travels beside it (`Endpoint::handle_packet_sent_at`).
#[derive(Debug)]
pub enum Packet<P> {
    /// A message: envelope and payload (the data for eager, a handle to the sender's copy for
    /// the others — to the core both are an opaque `P` that knows its length,
    /// [`MessageData`]).
    Message {
        /// The sender's request (for `Fin` and send cancel).
        sender: SendRef,
        /// Matching envelope.
        envelope: Envelope,
        /// How it travels.
        protocol: Protocol,
        /// Whether the sender needs a `Fin` (not for an eager send with an unbounded system
        /// buffer: nothing waits for it).
        ack: bool,
        /// The data.
        payload: P,
    },
    /// The message of `sender` was matched and its data taken: the sender may complete.
    Fin {
        /// The sender's request.
        sender: SendRef,
        /// When the ack may leave, in the driver's time ([`crate::p2p::Endpoint::set_now`]):
        /// at the match, or when the receive that took the message was posted if that is
        /// later. A receive takes effect when it is posted (`timing.md` §3: `ack.send_ts =
        /// max(m.arrival, req.ts)`), and a simulator's rank that owes per-request overhead
        /// posts a receive later than the messages that still arrive meanwhile (X1 of
        /// `docs/extensions.md`). A driver without a clock ignores it.
        not_before: u64,
    },
    /// The sender asks to withdraw its unmatched message.
    CancelSend {
        /// The sender's request.
        sender: SendRef,
    },
    /// The receiver's answer to [`Packet::CancelSend`]. When `cancelled` is false the message
    /// had matched and a `Fin` was (or will be) sent before this reply.
    CancelReply {
        /// The sender's request.
        sender: SendRef,
        /// Whether the message was withdrawn.
        cancelled: bool,
    },
}

/// A packet to deliver to world rank `to`.
#[derive(Debug)]
#[must_use]
pub struct Transmit<P> {
    /// Destination world rank.
    pub to: u32,
    /// The packet.
    pub packet: Packet<P>,
}
