//! Requests as the endpoint keeps them: handles, kinds, states, and what a completion carries.
//!
//! A request slot lives while the program holds its handle **or** the protocol still needs it
//! (a locally complete send waiting for `Fin` to free its buffer bytes). Handles carry a
//! generation, so a handle used after completion is an `InvalidRequest` error, never another
//! request's slot.

use crate::error::Error;
use crate::matching::{Envelope, Pattern, Rank, RecvHandle};

/// A request of one endpoint: returned by `isend`, `irecv`, `mrecv`; completed by `test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[must_use = "a request must be waited for, tested to completion, cancelled or freed"]
pub struct ReqId {
    pub(crate) idx: u32,
    pub(crate) generation: u32,
}

/// A message taken by `improbe`, to be received with `mrecv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a matched message must be received with mrecv"]
pub struct MessageId(pub(crate) ReqId);

/// Handles made by a backend that keeps its own requests (one not built on an
/// [`Endpoint`](crate::p2p::Endpoint): the MPI backend), which answers the seam's calls
/// (`crate::runtime`) with handles to its own table.
impl ReqId {
    /// The handle of slot `index` in its `generation` (a slot reused gets a new generation, so
    /// that a stale handle names no live request).
    ///
    /// ```
    /// use mpsim_proto::p2p::ReqId;
    /// let req = ReqId::from_parts(3, 1);
    /// assert_eq!(req.parts(), (3, 1));
    /// assert_ne!(req, ReqId::from_parts(3, 2));
    /// ```
    pub fn from_parts(index: u32, generation: u32) -> Self {
        ReqId {
            idx: index,
            generation,
        }
    }

    /// The slot index and generation [`ReqId::from_parts`] made the handle of.
    pub fn parts(self) -> (u32, u32) {
        (self.idx, self.generation)
    }
}

impl MessageId {
    /// A matched probe's message as a backend keeps it: under the handle `req` of its own table
    /// (see [`ReqId::from_parts`]).
    pub fn from_request(req: ReqId) -> Self {
        MessageId(req)
    }

    /// The handle [`MessageId::from_request`] made the message of.
    pub fn request(self) -> ReqId {
        self.0
    }
}

/// The four send modes (`docs/p2p.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SendMode {
    /// `send`: eager up to the threshold, rendezvous above.
    Standard,
    /// `bsend`: copied into the attached buffer, completes locally.
    Buffered,
    /// `ssend`: completes when the receive has taken the data.
    Synchronous,
    /// `rsend`: as synchronous; strict mode checks the receive was posted first.
    Ready,
}

impl SendMode {
    /// The MPI call name of a blocking send in this mode.
    pub fn call(self) -> &'static str {
        match self {
            SendMode::Standard => "send",
            SendMode::Buffered => "bsend",
            SendMode::Synchronous => "ssend",
            SendMode::Ready => "rsend",
        }
    }

    /// The MPI call name of the nonblocking send in this mode.
    pub fn icall(self) -> &'static str {
        match self {
            SendMode::Standard => "isend",
            SendMode::Buffered => "ibsend",
            SendMode::Synchronous => "issend",
            SendMode::Ready => "irsend",
        }
    }

    /// All modes, in a fixed order (for reports).
    pub const ALL: [SendMode; 4] = [
        SendMode::Standard,
        SendMode::Buffered,
        SendMode::Synchronous,
        SendMode::Ready,
    ];
}

/// What a completed request reports (MPI's `MPI_Status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Status {
    /// Source rank of the message, in its communicator (receives); `PROC_NULL` for a receive
    /// from it, [`Status::NO_SOURCE`] in an empty status.
    pub source: Rank,
    /// Tag of the message (receives); [`Status::NO_TAG`] for a receive from `PROC_NULL` and in
    /// an empty status.
    pub tag: i32,
    /// Length of the message in bytes (receives; for a truncated receive, the full length).
    pub bytes: usize,
    /// Whether the request was cancelled.
    pub cancelled: bool,
}

impl Status {
    /// The source of an empty status (a wait on an inactive request), which names no message:
    /// the value MPI's `MPI_ANY_SOURCE` has in a status. Not a wildcard: receives take
    /// `Source::Any` for any source.
    pub const NO_SOURCE: Rank = u32::MAX;

    /// The tag of a status that names no message's tag (a receive from `PROC_NULL`, an empty
    /// status): the value MPI's `MPI_ANY_TAG` has in a status. Not a wildcard: receives take
    /// `Tag::Any` for any tag.
    pub const NO_TAG: i32 = -1;

    /// Number of whole `T` elements received; `None` when the byte count is not a multiple of
    /// `size_of::<T>()` (`docs/p2p.md` §3).
    ///
    /// ```
    /// use mpsim_proto::p2p::Status;
    /// let s = Status { bytes: 32, ..Status::default() };
    /// assert_eq!((s.count::<u64>(), s.count::<[u8; 3]>()), (Some(4), None));
    /// ```
    pub fn count<T>(&self) -> Option<usize> {
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return (self.bytes == 0).then_some(0);
        }
        self.bytes.is_multiple_of(size).then_some(self.bytes / size)
    }
}

/// A completed request: status, the payload for a receive, and the error if it failed.
#[derive(Debug)]
pub struct Completion<P> {
    /// The status.
    pub status: Status,
    /// The received data (receives that got a message).
    pub payload: Option<P>,
    /// `Truncate` for a message longer than the buffer (boxed: rare, and it would otherwise
    /// double the size of every request slot).
    pub error: Option<Box<Error>>,
}

impl<P: AsRef<[u8]>> Completion<P> {
    /// The completion as the program gets it: a receive's data copied into `buf` (as much as
    /// fits; a longer message carries `Truncate`), then the request's error, taken, or its
    /// status. By reference, so that a driver can finish a completion where the endpoint keeps
    /// it rather than move it out first
    /// ([`Endpoint::finish_if_done`](crate::p2p::Endpoint::finish_if_done)); the error stays
    /// boxed, so that the result is as small as a status.
    #[inline]
    pub fn finish_into(&mut self, buf: Option<&mut [u8]>) -> Result<Status, Box<Error>> {
        if let (Some(payload), Some(buf)) = (self.payload.as_ref(), buf) {
            copy_prefix(buf, payload.as_ref());
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.status),
        }
    }
}

/// Copies as much of `src` as fits into the start of `dst`. A message of 8 to 16 bytes (one
/// that a payload holds inline) is copied as two overlapping 8-byte words, without the call
/// into the C library's `memcpy` that a copy of unknown length compiles to.
#[inline]
fn copy_prefix(dst: &mut [u8], src: &[u8]) {
    let n = src.len().min(dst.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    if (8..=16).contains(&n) {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// How a blocking receive started ([`Endpoint::recv`](crate::p2p::Endpoint::recv)).
#[derive(Debug)]
#[must_use = "a posted receive must be waited for"]
pub enum RecvStart<P> {
    /// A waiting message matched at once: the receive's completion. No request is left.
    Done(Completion<P>),
    /// Nothing matched yet: the posted receive, to wait for.
    Posted(ReqId),
}

/// Buffer bytes a send holds until its `Fin` (or successful cancel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    None,
    Attached(usize),
    System(usize),
}

pub(crate) enum Kind<P> {
    Send {
        to: u32,
        envelope: Envelope,
        mode: SendMode,
        held: Held,
        /// Whether a `Fin` was asked for.
        ack: bool,
        /// Waiting for `Fin` (or a cancel reply).
        in_flight: bool,
        /// A `CancelSend` is out; the user sees the request pending until the reply.
        cancelling: bool,
    },
    Recv {
        pattern: Pattern,
        /// World rank of the pattern's source, when it names one (diagnostics speak world
        /// ranks; the pattern speaks communicator ranks).
        source_world: Option<u32>,
        /// The endpoint's time when it was posted (`Endpoint::set_now`).
        posted_at: u64,
        capacity: usize,
        /// While posted and unmatched.
        posted: Option<RecvHandle>,
    },
    /// Taken by `improbe`, not yet `mrecv`ed: the message (boxed: rare and large).
    Probed(Option<Box<(Envelope, super::endpoint::Incoming<P>)>>),
    /// A free slot (not live): the next free slot, or none (`u32::MAX`).
    Free { next: u32 },
}

pub(crate) struct Slot<P> {
    pub generation: u32,
    /// Slot in use.
    pub live: bool,
    /// The program still holds the handle.
    pub held_by_user: bool,
    pub kind: Kind<P>,
    pub done: Option<Completion<P>>,
}

impl<P> Slot<P> {
    /// Whether the protocol still needs the slot (a send waiting for its `Fin` or cancel reply,
    /// a receive still posted), whatever the program does.
    #[inline]
    pub fn protocol_needs(&self) -> bool {
        match &self.kind {
            Kind::Send {
                in_flight,
                cancelling,
                ..
            } => *in_flight || *cancelling,
            Kind::Recv { posted, .. } => posted.is_some(),
            Kind::Probed(_) | Kind::Free { .. } => false,
        }
    }

    /// Makes the slot free, linked to the free slot `next`.
    #[inline]
    pub fn free(&mut self, next: u32) {
        self.live = false;
        self.done = None;
        self.kind = Kind::Free { next };
    }

    /// Whether the program would see this request complete.
    pub fn user_done(&self) -> bool {
        match &self.kind {
            Kind::Send { cancelling, .. } => self.done.is_some() && !cancelling,
            _ => self.done.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_prefix;

    /// Every length, around the 8-to-16-byte word copies, into shorter and longer buffers.
    #[test]
    fn copy_prefix_copies_what_fits_and_nothing_more() {
        for len in 0..=20usize {
            let src: Vec<u8> = (1..=len as u8).collect();
            for cap in 0..=20usize {
                let mut dst = vec![0xEE; cap];
                copy_prefix(&mut dst, &src);
                let n = len.min(cap);
                assert_eq!(&dst[..n], &src[..n], "len {len} cap {cap}");
                assert!(dst[n..].iter().all(|&b| b == 0xEE), "len {len} cap {cap}");
            }
        }
    }
}
