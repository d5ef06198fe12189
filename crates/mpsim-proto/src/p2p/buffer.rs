//! Byte accounting of the attached buffer (`bsend`) and of the system buffer (eager sends).
//!
//! Only counts: the copies themselves live in payloads. `spec/p2p.md` §2 and `timing.md` S6–S8.

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
