//! The backend's requests: a slot per request the program holds, with what MPI holds for it (a
//! raw request and the buffer the backend owns until it completes), a receive the backend
//! matches itself (a context other than the world's, `crate` docs), a matched probe's message,
//! or a completion waiting for the program's wait or test.
//!
//! Handles are [`ReqId`]s made of a slot index and a generation: a slot reused gets a new
//! generation, so a stale handle names no live request (`InvalidRequest`).

use mpsim_proto::deadlock::Waiting;
use mpsim_proto::matching::{Envelope, Pattern};
use mpsim_proto::p2p::{Completion, ReqId, Status};
use mpsim_proto::runtime::Payload;

use crate::raw::{MPI_Message, MPI_Request};

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
        buf: Vec<u8>,
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
    pub kind: Kind,
}

/// The slots, and which are free.
#[derive(Debug, Default)]
pub(crate) struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Table {
    /// A new request of `kind`.
    pub fn alloc(&mut self, kind: Kind) -> ReqId {
        if let Some(idx) = self.free.pop() {
            let slot = &mut self.slots[idx as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.let_go = false;
            slot.kind = kind;
            ReqId::from_parts(idx, slot.generation)
        } else {
            let idx = self.slots.len() as u32;
            self.slots.push(Slot {
                generation: 0,
                let_go: false,
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
        self.free.push(idx);
        Some(kind)
    }

    /// Frees slot `idx` (a live one).
    pub fn free_index(&mut self, idx: u32) {
        self.slots[idx as usize].kind = Kind::Free;
        self.free.push(idx);
    }

    /// The slot at `idx`.
    pub fn at(&mut self, idx: u32) -> &mut Slot {
        &mut self.slots[idx as usize]
    }

    /// The indices and raw requests of every request in flight at MPI.
    pub fn active(&self, idx: &mut Vec<u32>, raws: &mut Vec<MPI_Request>) {
        idx.clear();
        raws.clear();
        for (i, slot) in self.slots.iter().enumerate() {
            if let Kind::Active { raw, .. } = slot.kind {
                idx.push(i as u32);
                raws.push(raw);
            }
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
        self.slots
            .iter()
            .filter_map(|s| match &s.kind {
                Kind::Active { what, .. } => Some(*what),
                _ => None,
            })
            .collect()
    }

    /// Whether a request is in flight at MPI that the program let go of (sends that must
    /// finish before the rank's end).
    pub fn any_active(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s.kind, Kind::Active { .. }))
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
