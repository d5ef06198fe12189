//! Byte accounting of the attached buffer (`bsend`) and of the system buffer (eager sends).
//!
//! Only counts: the copies themselves live in payloads. `docs/p2p.md` §2 and `timing.md` S6–S8.

/// Bytes charged per buffered message on top of its length (MPI's `MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = 64;

/// A byte budget: `capacity` (None = unbounded) and `used`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Budget {
    pub capacity: Option<usize>,
    pub used: usize,
}

impl Budget {
    /// Reserves `bytes` if they fit.
    pub fn reserve(&mut self, bytes: usize) -> bool {
        let fits = self
            .capacity
            .is_none_or(|cap| self.used.checked_add(bytes).is_some_and(|u| u <= cap));
        if fits {
            self.used += bytes;
        }
        fits
    }

    pub fn release(&mut self, bytes: usize) {
        debug_assert!(self.used >= bytes, "releasing more than reserved");
        self.used -= bytes;
    }
}

/// The attached buffer: its bytes, and the buffered messages that hold some of them until
/// they are received. Counted apart from the bytes because a message holds its place even
/// when it takes none (a zero-byte `bsend` under a model whose `BSEND_OVERHEAD` is 0), and
/// `buffer_detach` waits for every buffered message (`timing.md` S8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attached {
    pub bytes: Budget,
    pub messages: usize,
}

impl Attached {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Attached {
            bytes: Budget {
                capacity: Some(capacity),
                used: 0,
            },
            messages: 0,
        }
    }

    /// Takes `bytes` for one more message, if they fit.
    pub fn hold(&mut self, bytes: usize) -> bool {
        let fits = self.bytes.reserve(bytes);
        if fits {
            self.messages += 1;
        }
        fits
    }

    /// A message that held `bytes` was received.
    pub fn let_go(&mut self, bytes: usize) {
        debug_assert!(self.messages > 0, "letting go of a message never held");
        self.bytes.release(bytes);
        self.messages -= 1;
    }
}
