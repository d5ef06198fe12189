//! A slab of queue entries threaded on intrusive doubly linked lists.
//!
//! Why: the engine must unlink an entry from several lists at once in O(1) and must not allocate
//! per operation. Entries live in one `Vec` indexed by `u32`; free slots form a free list; each
//! entry carries `L` link pairs, one per list it can be on (list 0 is the queue's own order, the
//! others are bins of the index).
//!
//! Invariants:
//! - a slot is occupied iff `value.is_some()`;
//! - a free slot's `links[0].next` is the next free slot (or [`NIL`]);
//! - an occupied slot is on list 0 of its queue, and on bin list `k` (`k >= 1`) iff
//!   `bins[k] != NIL`.

use super::envelope::Key;

/// The "no entry" index.
pub(super) const NIL: u32 = u32::MAX;

/// Head and tail of one intrusive list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct List {
    pub head: u32,
    pub tail: u32,
}

impl List {
    pub const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
};

pub(super) struct Slot<T, const L: usize> {
    pub value: Option<T>,
    /// Engine-wide sequence number: defines "earliest" and makes handles unforgeable.
    pub seq: u64,
    pub key: Key,
    links: [Link; L],
    /// Bin id per link (index 0 unused).
    pub bins: [u32; L],
}

pub(super) struct Arena<T, const L: usize> {
    slots: Vec<Slot<T, L>>,
    free_head: u32,
    /// Occupied slots (below `NIL`, as indices are).
    len: u32,
}

impl<T, const L: usize> Arena<T, L> {
    pub const fn new() -> Self {
        Arena {
            slots: Vec::new(),
            free_head: NIL,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn slot(&self, idx: u32) -> &Slot<T, L> {
        &self.slots[idx as usize]
    }

    #[inline]
    pub fn slot_mut(&mut self, idx: u32) -> &mut Slot<T, L> {
        &mut self.slots[idx as usize]
    }

    /// The occupied slot at `idx` if its sequence number is `seq` (a live handle).
    #[inline]
    pub fn live(&self, idx: u32, seq: u64) -> Option<&Slot<T, L>> {
        self.slots
            .get(idx as usize)
            .filter(|s| s.value.is_some() && s.seq == seq)
    }

    /// Stores a new entry, on no list yet, and returns its index. Always inlined: see
    /// `Engine::post`.
    #[inline(always)]
    pub fn insert(&mut self, seq: u64, key: Key, value: T) -> u32 {
        let slot = Slot {
            value: Some(value),
            seq,
            key,
            links: [UNLINKED; L],
            bins: [NIL; L],
        };
        self.len += 1;
        if self.free_head != NIL {
            let idx = self.free_head;
            let s = &mut self.slots[idx as usize];
            self.free_head = s.links[0].next;
            *s = slot;
            idx
        } else {
            let idx = u32::try_from(self.slots.len()).expect("more than 2^32 queue entries");
            assert!(idx != NIL, "more than 2^32 - 1 queue entries");
            // Grow one slot at a time while small: a simulation holds millions of engines, most
            // with a queue entry or two.
            if self.slots.len() == self.slots.capacity() && self.slots.len() < 8 {
                self.slots.reserve_exact(1);
            }
            self.slots.push(slot);
            idx
        }
    }

    /// Frees a slot that is on no list any more and returns its value.
    #[inline]
    pub fn remove(&mut self, idx: u32) -> T {
        let s = &mut self.slots[idx as usize];
        // Invariant: callers only remove occupied slots they found through a list or a live handle.
        let value = s.value.take().expect("removing a free slot");
        s.links[0].next = self.free_head;
        self.free_head = idx;
        self.len -= 1;
        value
    }

    /// Forgets every slot; only valid when empty. Frees the memory if more than `keep` slots
    /// were allocated, so a queue that once was deep gives its memory back (M12).
    pub fn reset(&mut self, keep: usize) {
        debug_assert_eq!(self.len, 0);
        self.slots.clear();
        self.free_head = NIL;
        if self.slots.capacity() > keep {
            self.slots = Vec::new();
        }
    }

    /// Slots allocated.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot<T, L>>()
    }

    #[inline]
    pub fn next(&self, idx: u32, list: usize) -> u32 {
        self.slots[idx as usize].links[list].next
    }

    /// Appends `idx` to `list`, using the entry's link number `k`.
    #[inline]
    pub fn push_back(&mut self, list: &mut List, idx: u32, k: usize) {
        let tail = list.tail;
        self.slots[idx as usize].links[k] = Link {
            prev: tail,
            next: NIL,
        };
        if tail == NIL {
            list.head = idx;
        } else {
            self.slots[tail as usize].links[k].next = idx;
        }
        list.tail = idx;
    }

    /// Removes `idx` from `list` (which it must be on through link `k`).
    #[inline]
    pub fn unlink(&mut self, list: &mut List, idx: u32, k: usize) {
        let Link { prev, next } = self.slots[idx as usize].links[k];
        if prev == NIL {
            list.head = next;
        } else {
            self.slots[prev as usize].links[k].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.slots[next as usize].links[k].prev = prev;
        }
        self.slots[idx as usize].links[k] = UNLINKED;
    }
}
