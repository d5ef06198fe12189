//! The backend's requests: a slot per request the program holds, with what MPI holds for it (a
//! raw request and the buffer the backend owns until it completes), a receive the backend
//! matches itself (a context other than the world's, `crate` docs), a matched probe's message,
//! or a completion waiting for the program's wait or test.
//!
//! Handles are [`ReqId`]s made of a slot index and a generation: a slot reused gets a new
//! generation, so a stale handle names no live request (`InvalidRequest`).

use std::mem::MaybeUninit;

use mpsim_proto::deadlock::Waiting;
use mpsim_proto::matching::{Envelope, Pattern};
use mpsim_proto::p2p::{Completion, ReqId, Status};
use mpsim_proto::runtime::Payload;

use crate::raw::{MPI_Message, MPI_Request};

/// The largest message, with the header of a message on the matched-here communicator, that
/// travels in a [`Buf::Small`].
pub(crate) const SMALL: usize = 32;

/// The memory a raw MPI request reads or writes. It stays at one address until the request
/// completes however its slot moves (on the heap), and a small message takes it from the
/// rank's [`Pool`] instead of the allocator.
#[derive(Debug)]
pub(crate) enum Buf {
    /// Up to [`SMALL`] bytes, from the pool.
    Small(Box<[u8; SMALL]>),
    /// A send's bytes, a receive's capacity (its length is 0 until MPI has written it), a
    /// collective's result.
    Heap(Vec<u8>),
}

impl From<Vec<u8>> for Buf {
    fn from(v: Vec<u8>) -> Self {
        Buf::Heap(v)
    }
}

impl Buf {
    /// A receive's memory for up to `capacity` bytes: from the pool when small.
    pub fn for_receive(pool: &mut Pool, capacity: usize) -> Buf {
        if capacity <= SMALL {
            Buf::Small(pool.take())
        } else {
            Buf::Heap(Vec::with_capacity(capacity))
        }
    }

    /// Where MPI writes up to `capacity` bytes (the capacity this buffer was made for).
    pub fn writable(&mut self, capacity: usize) -> &mut [MaybeUninit<u8>] {
        match self {
            Buf::Small(b) => {
                let b: &mut [u8] = &mut b[..capacity];
                // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and MPI writes only bytes.
                unsafe { &mut *(b as *mut [u8] as *mut [MaybeUninit<u8>]) }
            }
            Buf::Heap(v) => &mut v.spare_capacity_mut()[..capacity],
        }
    }

    /// The payload of a receive MPI completed with its first `bytes` bytes written; a small
    /// buffer goes back to the pool.
    ///
    /// # Safety
    /// MPI wrote the first `bytes` bytes (at most the capacity the buffer was made for).
    pub unsafe fn received(self, pool: &mut Pool, bytes: usize) -> Payload {
        match self {
            Buf::Small(b) => {
                let payload = Payload::from_slice(&b[..bytes]);
                pool.give(b);
                payload
            }
            Buf::Heap(mut v) => {
                // SAFETY: the caller's.
                unsafe { v.set_len(bytes) };
                Payload::from_vec(v)
            }
        }
    }

    /// Hands a small buffer back to the pool (the request that used it is over).
    pub fn release(self, pool: &mut Pool) {
        if let Buf::Small(b) = self {
            pool.give(b);
        }
    }

    /// A collective's result (made as a vector).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Buf::Small(b) => b.to_vec(),
            Buf::Heap(v) => v,
        }
    }
}

/// Small buffers of requests that completed, for the next: a rank with a blocking send or
/// receive of a few bytes at a time allocates nothing per message.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    /// Boxed, since a buffer must keep its address while MPI uses it.
    #[allow(clippy::vec_box)]
    free: Vec<Box<[u8; SMALL]>>,
}

/// How many small buffers the pool keeps at most (more are freed).
const POOL_KEEPS: usize = 64;

impl Pool {
    /// A small buffer (its contents are any bytes).
    pub fn take(&mut self) -> Box<[u8; SMALL]> {
        self.free.pop().unwrap_or_else(|| Box::new([0; SMALL]))
    }

    /// Keeps `b` for a later request.
    pub fn give(&mut self, b: Box<[u8; SMALL]>) {
        if self.free.len() < POOL_KEEPS {
            self.free.push(b);
        }
    }
}

/// What a raw MPI request is for.
#[derive(Debug)]
pub(crate) enum Op {
    /// A send; `buffered` for a send into the attached buffer.
    Send,
    /// A receive of up to `capacity` bytes on the world's context, for the program's call
    /// `call`; `counted` when its message was counted as arrived already (a matched probe's,
    /// a held one's: `watch.rs`).
    Recv {
        capacity: usize,
        call: &'static str,
        counted: bool,
    },
    /// A collective of the library's own (`native.rs`) for the program's call `call`: `send`
    /// is the memory it reads (`_send`) (the slot's `buf` the one it writes), `keep` whether its
    /// completion hands `buf` back as the rank's result.
    Coll {
        /// Read by MPI alone, kept here until the request completes.
        _send: crate::native::Held,
        keep: bool,
        call: &'static str,
    },
}

/// A message that arrived on the matched-here communicator, with its envelope (from its
/// header) and data.
#[derive(Debug)]
pub(crate) struct Arrived {
    pub envelope: Envelope,
    /// The sender's world rank.
    pub from_world: u32,
    pub data: Vec<u8>,
}

/// A matched probe's message, until received or dropped.
#[derive(Debug)]
pub(crate) enum Taken {
    /// Held by MPI (the world's context): the message handle and its status.
    Mpi(MPI_Message, Status),
    /// Received from MPI already (another context).
    Here(Arrived),
}

/// One request.
#[derive(Debug)]
pub(crate) enum Kind {
    Free,
    /// An MPI request in flight; `buf` is the memory it reads (`_send`) or writes.
    Active {
        raw: MPI_Request,
        buf: Buf,
        op: Op,
        /// What it is, as a deadlock report names it.
        what: Waiting,
    },
    /// A receive the backend matches itself, not yet matched.
    Posted {
        pattern: Pattern,
        capacity: usize,
        call: &'static str,
        /// What it is, as a deadlock report names it.
        what: Waiting,
    },
    /// A matched probe's message.
    Probed(Taken),
    /// Complete: what the program's wait or test gets.
    Done(Completion<Payload>),
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub generation: u32,
    /// The program let go of it: freed as soon as MPI has finished with it.
    pub let_go: bool,
    /// The program asked to cancel it (only then is a completion asked whether it was
    /// cancelled: `MPI_Test_cancelled` costs a call per message otherwise).
    pub cancel_asked: bool,
    pub kind: Kind,
}

/// The slots, which are free, and which are in flight at MPI.
#[derive(Debug, Default)]
pub(crate) struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The slots whose kind is [`Kind::Active`], in the order they became so: every poll
    /// tests these, however many slots a busier moment left behind.
    active: Vec<u32>,
}

impl Table {
    /// A new request of `kind`.
    pub fn alloc(&mut self, kind: Kind) -> ReqId {
        let active = matches!(kind, Kind::Active { .. });
        let req = self.place(kind);
        if active {
            self.active.push(req.parts().0);
        }
        req
    }

    /// Puts `kind` in a free slot, or a new one.
    fn place(&mut self, kind: Kind) -> ReqId {
        if let Some(idx) = self.free.pop() {
            let slot = &mut self.slots[idx as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.let_go = false;
            slot.cancel_asked = false;
            slot.kind = kind;
            ReqId::from_parts(idx, slot.generation)
        } else {
            let idx = self.slots.len() as u32;
            self.slots.push(Slot {
                generation: 0,
                let_go: false,
                cancel_asked: false,
                kind,
            });
            ReqId::from_parts(idx, 0)
        }
    }

    /// The live slot `req` names.
    pub fn get(&mut self, req: ReqId) -> Option<&mut Slot> {
        let (idx, generation) = req.parts();
        self.slots
            .get_mut(idx as usize)
            .filter(|s| s.generation == generation && !matches!(s.kind, Kind::Free))
    }

    /// Frees `req`'s slot, handing back what it held.
    pub fn free(&mut self, req: ReqId) -> Option<Kind> {
        let (idx, _) = req.parts();
        let slot = self.get(req)?;
        let kind = std::mem::replace(&mut slot.kind, Kind::Free);
        if matches!(kind, Kind::Active { .. }) {
            self.leaves_mpi(idx);
        }
        self.free.push(idx);
        Some(kind)
    }

    /// Frees slot `idx` (a live one that is not active).
    pub fn free_index(&mut self, idx: u32) {
        self.slots[idx as usize].kind = Kind::Free;
        self.free.push(idx);
    }

    /// The kind of active slot `idx`, which MPI finished with: the slot is left `Free` but not
    /// freed (the caller frees it or makes it `Done`).
    pub fn take_active(&mut self, idx: u32) -> Kind {
        self.leaves_mpi(idx);
        std::mem::replace(&mut self.slots[idx as usize].kind, Kind::Free)
    }

    /// Slot `idx` is no longer in flight at MPI.
    fn leaves_mpi(&mut self, idx: u32) {
        if let Some(p) = self.active.iter().position(|&i| i == idx) {
            self.active.remove(p);
        }
    }

    /// The slot at `idx`.
    pub fn at(&mut self, idx: u32) -> &mut Slot {
        &mut self.slots[idx as usize]
    }

    /// The indices and raw requests of every request in flight at MPI.
    pub fn active(&self, idx: &mut Vec<u32>, raws: &mut Vec<MPI_Request>) {
        idx.clear();
        raws.clear();
        for &i in &self.active {
            if let Kind::Active { raw, .. } = self.slots[i as usize].kind {
                idx.push(i);
                raws.push(raw);
            }
        }
    }

    /// The raw request of the one request in flight at MPI, when there is exactly one.
    pub fn only_active(&self) -> Option<MPI_Request> {
        match self.active[..] {
            [i] => match self.slots[i as usize].kind {
                Kind::Active { raw, .. } => Some(raw),
                _ => None,
            },
            _ => None,
        }
    }

    /// What the live, incomplete request `req` is, as a deadlock report names it.
    pub fn describe(&mut self, req: ReqId) -> Option<Waiting> {
        match &self.get(req)?.kind {
            Kind::Active { what, .. } | Kind::Posted { what, .. } => Some(*what),
            _ => None,
        }
    }

    /// What every request in flight at MPI is (the sends a finished program let go of).
    pub fn describe_active(&self) -> Vec<Waiting> {
        self.active
            .iter()
            .filter_map(|&i| match &self.slots[i as usize].kind {
                Kind::Active { what, .. } => Some(*what),
                _ => None,
            })
            .collect()
    }

    /// Whether a request is in flight at MPI that the program let go of (sends that must
    /// finish before the rank's end).
    pub fn any_active(&self) -> bool {
        !self.active.is_empty()
    }
}

/// The completion of a send.
pub(crate) fn sent(cancelled: bool) -> Completion<Payload> {
    Completion {
        status: Status {
            cancelled,
            ..Status::default()
        },
        payload: None,
        error: None,
    }
}
