//! One side of the engine (posted receives or unexpected messages): entries in arrival order,
//! plus an index of bins once the queue is deep.
//!
//! Why two modes: a shallow queue is fastest as a plain scan (no hashing at all), a deep one
//! needs the index to stay O(1). The queue starts *shallow*; when it grows past
//! [`INDEX_ABOVE`] entries it builds the index (one pass in order) and keeps it until it drains
//! to empty, when it drops back to shallow and gives deep-queue memory back (M12).
//!
//! Index: a bin is the list, in sequence order, of the entries filed under one [`Key`]. A posted
//! receive is filed under its pattern (`L = 2`). An unexpected message (`L = 5`) can be filed
//! under the four patterns that accept it — one per *shape* (exact, any tag, any source, both) —
//! so the earliest entry a pattern can take is the head of one bin. Messages are filed only
//! under the shapes receives have actually used ([`Queue::ensure_shape`] turns one on, filing
//! every entry once): a program that never posts wildcards pays one hash per message, not four.
//!
//! Bins are created on first use. A bin that empties stays in the map (a message stream on one
//! `(source, tag)` would otherwise remove and re-insert its bin on every message) until empty
//! bins outnumber entries, when one sweep drops them all: amortised O(1), memory linear.
//!
//! Invariants: `order` holds every entry in sequence order; when `index` is `Some`, each entry
//! is on the bin of every filed shape (`bins[1 + shape]`) and on no other; `index.empty` counts
//! the bins with empty lists.

use rustc_hash::FxHashMap;

use super::arena::{Arena, List, NIL, Slot};
use super::envelope::Key;

/// Queues deeper than this are indexed.
pub(super) const INDEX_ABOVE: usize = 8;
/// Capacity (entries or bins) kept when a queue drains; more is freed.
const KEEP_WHEN_EMPTY: usize = 64;

struct Bin {
    list: List,
}

#[derive(Default)]
struct Index {
    map: FxHashMap<Key, u32>,
    bins: Vec<Bin>,
    free: Vec<u32>,
    /// Bins in the map whose list is empty.
    empty: usize,
}

impl Index {
    /// The bin for `key`, created if missing, ready to take an entry (so no longer counted as
    /// empty).
    #[inline]
    fn bin_for(&mut self, key: Key) -> u32 {
        use std::collections::hash_map::Entry;
        match self.map.entry(key) {
            Entry::Occupied(e) => {
                let b = *e.get();
                if self.bins[b as usize].list.is_empty() {
                    self.empty -= 1;
                }
                b
            }
            Entry::Vacant(e) => {
                let bin = Bin { list: List::EMPTY };
                let b = match self.free.pop() {
                    Some(b) => {
                        self.bins[b as usize] = bin;
                        b
                    }
                    None => {
                        self.bins.push(bin);
                        // Bins are bounded by entries (times 4, plus as many empty): within u32.
                        (self.bins.len() - 1) as u32
                    }
                };
                *e.insert(b)
            }
        }
    }

    /// Drops every empty bin from the map.
    #[cold]
    fn sweep(&mut self) {
        let Index {
            map, bins, free, ..
        } = self;
        map.retain(|_, b| {
            let keep = !bins[*b as usize].list.is_empty();
            if !keep {
                free.push(*b);
            }
            keep
        });
        self.empty = 0;
    }

    fn heap_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(Key, u32)>() + 1)
            + self.bins.capacity() * std::mem::size_of::<Bin>()
            + self.free.capacity() * std::mem::size_of::<u32>()
    }
}

pub(super) struct Queue<T, const L: usize> {
    arena: Arena<T, L>,
    order: List,
    index: Option<Box<Index>>,
    /// Bit `s` set: entries are filed under their shape-`s` key. Posted queues use shape 0 only
    /// (a receive's own pattern); unexpected queues add wildcard shapes on first use.
    filed: u8,
}

impl<T, const L: usize> Default for Queue<T, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const L: usize> Queue<T, L> {
    pub const fn new() -> Self {
        Queue {
            arena: Arena::new(),
            order: List::EMPTY,
            index: None,
            filed: 1,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    #[inline]
    pub fn is_indexed(&self) -> bool {
        self.index.is_some()
    }

    #[inline]
    pub fn slot(&self, idx: u32) -> &Slot<T, L> {
        self.arena.slot(idx)
    }

    #[inline]
    pub fn slot_mut(&mut self, idx: u32) -> &mut Slot<T, L> {
        self.arena.slot_mut(idx)
    }

    #[inline]
    pub fn live(&self, idx: u32, seq: u64) -> Option<&Slot<T, L>> {
        self.arena.live(idx, seq)
    }

    /// Appends an entry; returns its index. Always inlined: see `Engine::post`.
    #[inline(always)]
    pub fn push(&mut self, seq: u64, key: Key, value: T) -> u32 {
        let idx = self.arena.insert(seq, key, value);
        self.arena.push_back(&mut self.order, idx, 0);
        if let Some(index) = self.index.as_deref_mut() {
            for shape in 0..L - 1 {
                if self.filed & (1 << shape) != 0 {
                    file_one(&mut self.arena, index, idx, shape);
                }
            }
        } else if self.arena.len() > INDEX_ABOVE {
            self.build_index();
        }
        idx
    }

    #[cold]
    fn build_index(&mut self) {
        self.index = Some(Box::default());
        for shape in 0..4 {
            if self.filed & (1 << shape) != 0 {
                self.file_all(shape);
            }
        }
    }

    /// Makes sure entries are filed under their shape-`shape` key (unexpected queues), so a
    /// pattern of that shape finds its match at a bin head.
    #[inline]
    pub fn ensure_shape(&mut self, shape: usize) {
        debug_assert!(L == 5 || shape == 0);
        if self.filed & (1 << shape) == 0 {
            self.filed |= 1 << shape;
            if self.index.is_some() {
                self.file_all(shape);
            }
        }
    }

    #[cold]
    fn file_all(&mut self, shape: usize) {
        // Invariant: only called with an index.
        let index = self.index.as_deref_mut().expect("indexed");
        let mut idx = self.order.head;
        while idx != NIL {
            file_one(&mut self.arena, index, idx, shape);
            idx = self.arena.next(idx, 0);
        }
    }

    /// Takes the entry at `idx` off every list and returns its key and value.
    #[inline]
    pub fn remove(&mut self, idx: u32) -> (Key, T) {
        self.arena.unlink(&mut self.order, idx, 0);
        if let Some(index) = self.index.as_deref_mut() {
            for k in 1..L {
                let b = self.arena.slot(idx).bins[k];
                if b == NIL {
                    continue;
                }
                let bin = &mut index.bins[b as usize];
                self.arena.unlink(&mut bin.list, idx, k);
                if bin.list.is_empty() {
                    index.empty += 1;
                }
            }
            if index.empty > 64 && index.empty > self.arena.len() {
                index.sweep();
            }
        }
        let key = self.arena.slot(idx).key;
        let value = self.arena.remove(idx);
        // A shallow queue that drains (every message of a ping-pong) keeps its few free slots
        // as they are: only an index or a large arena is dropped.
        if self.arena.len() == 0
            && (self.index.is_some() || self.arena.capacity() > KEEP_WHEN_EMPTY)
        {
            self.reset();
        }
        (key, value)
    }

    /// Back to shallow mode once drained; the index is rebuilt if the queue deepens again.
    #[cold]
    fn reset(&mut self) {
        self.arena.reset(KEEP_WHEN_EMPTY);
        self.order = List::EMPTY;
        self.index = None;
    }

    /// Gives back all memory when empty (the memory an emptied queue keeps to be refilled
    /// cheaply): for an owner that will queue little or nothing more.
    pub fn shrink_to_fit(&mut self) {
        if self.arena.len() == 0 {
            self.arena.reset(0);
            self.order = List::EMPTY;
            self.index = None;
        }
    }

    /// The earliest entry filed under `key` (indexed mode only).
    #[inline]
    pub fn bin_head(&self, key: &Key) -> Option<u32> {
        let index = self.index.as_deref()?;
        let head = index.bins[*index.map.get(key)? as usize].list.head;
        // Emptied bins stay in the map until a sweep.
        (head != NIL).then_some(head)
    }

    /// The earliest entry whose key satisfies `pred`, by scanning in order.
    #[inline]
    pub fn scan(&self, mut pred: impl FnMut(&Key) -> bool) -> Option<u32> {
        let mut idx = self.order.head;
        while idx != NIL {
            if pred(&self.arena.slot(idx).key) {
                return Some(idx);
            }
            idx = self.arena.next(idx, 0);
        }
        None
    }

    /// Entries in sequence order, with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Slot<T, L>)> + '_ {
        let mut idx = self.order.head;
        std::iter::from_fn(move || {
            if idx == NIL {
                return None;
            }
            let at = idx;
            idx = self.arena.next(idx, 0);
            Some((at, self.arena.slot(at)))
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes()
            + self
                .index
                .as_deref()
                .map_or(0, |i| std::mem::size_of::<Index>() + i.heap_bytes())
    }
}

/// Files entry `idx` under its shape-`shape` key: a posted receive (`L == 2`) under its own
/// pattern, an unexpected message (`L == 5`) under the pattern of that shape that accepts it.
#[inline]
fn file_one<T, const L: usize>(arena: &mut Arena<T, L>, index: &mut Index, idx: u32, shape: usize) {
    let key = arena.slot(idx).key;
    let key = if L == 2 {
        key
    } else {
        key.generalizations()[shape]
    };
    let b = index.bin_for(key);
    arena.push_back(&mut index.bins[b as usize].list, idx, 1 + shape);
    arena.slot_mut(idx).bins[1 + shape] = b;
}
