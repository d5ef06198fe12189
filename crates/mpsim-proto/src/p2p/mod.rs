//! Point-to-point: the protocol state machine every backend drives (`docs/p2p.md`).
//!
//! - [`Endpoint`]: one rank's protocol state (requests, send modes, buffers, matching).
//! - [`Packet`]: what endpoints say to each other.
//! - [`ReqId`], [`Status`], [`Completion`]: requests and their results.
//! - [`MessageCounts`]: what an endpoint sent and received, by [`Protocol`].

mod buffer;
mod counts;
mod endpoint;
mod packet;
mod request;

pub use buffer::BSEND_OVERHEAD;
pub use counts::MessageCounts;
pub use endpoint::{
    Config, Endpoint, Event, Outbox, Queued, SendCall, Transport, discarded_receive, never_received,
};
pub use packet::{MessageData, Packet, Protocol, SendRef, Transmit};
pub use request::{Completion, MessageId, RecvStart, ReqId, SendMode, Status};
