//! One side of the engine (posted receives or unexpected messages): entries in arrival order,
//! plus an index of bins once the queue is deep.
//!
//! Why two modes: a shallow queue is fastest as a plain scan (no hashing at all), a deep one
//! needs the index to stay O(1). The queue starts *shallow*; when it grows past
//! [`INDEX_ABOVE`] entries it builds the index (one pass in order) and keeps it until it drains
//! to empty, when it drops back to shallow and gives deep-queue memory back (M12).
//!
//! Index: a bin is the list, in sequence order, of the entries filed under one [`Key`]. An entry
//! is filed under `L - 1` keys: a posted receive under its pattern (`L = 2`), an unexpected
//! message under the four patterns that accept it (`L = 5`), so the earliest entry a pattern can
//! take is the head of one bin. Bins are created on first use and dropped when they empty.
//!
//! Invariants: `order` holds every entry in sequence order; when `index` is `Some`, each entry
//! is on exactly its `L - 1` bins and every bin in the map is non-empty.

use rustc_hash::FxHashMap;

use super::arena::{Arena, List, NIL, Slot};
use super::envelope::Key;

/// Queues deeper than this are indexed.
pub(super) const INDEX_ABOVE: usize = 8;
/// Capacity (entries or bins) kept when a queue drains; more is freed.
const KEEP_WHEN_EMPTY: usize = 64;

struct Bin {
    list: List,
    key: Key,
}

#[derive(Default)]
struct Index {
    map: FxHashMap<Key, u32>,
    bins: Vec<Bin>,
    free: Vec<u32>,
}

impl Index {
    #[inline]
    fn bin_for(&mut self, key: Key) -> u32 {
        let Index { map, bins, free } = self;
        *map.entry(key).or_insert_with(|| {
            let bin = Bin {
                list: List::EMPTY,
                key,
            };
            match free.pop() {
                Some(b) => {
                    bins[b as usize] = bin;
                    b
                }
                None => {
                    bins.push(bin);
                    // Bins never outnumber entries, and entries fit in u32.
                    (bins.len() - 1) as u32
                }
            }
        })
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
}

impl<T, const L: usize> Queue<T, L> {
    pub const fn new() -> Self {
        Queue {
            arena: Arena::new(),
            order: List::EMPTY,
            index: None,
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

    /// Appends an entry; returns its index.
    #[inline]
    pub fn push(&mut self, seq: u64, key: Key, value: T) -> u32 {
        let idx = self.arena.insert(seq, key, value);
        self.arena.push_back(&mut self.order, idx, 0);
        if let Some(index) = self.index.as_deref_mut() {
            file(&mut self.arena, index, idx);
        } else if self.arena.len() > INDEX_ABOVE {
            self.build_index();
        }
        idx
    }

    #[cold]
    fn build_index(&mut self) {
        let mut index = Box::<Index>::default();
        let mut idx = self.order.head;
        while idx != NIL {
            file(&mut self.arena, &mut index, idx);
            idx = self.arena.next(idx, 0);
        }
        self.index = Some(index);
    }

    /// Takes the entry at `idx` off every list and returns its key and value.
    #[inline]
    pub fn remove(&mut self, idx: u32) -> (Key, T) {
        self.arena.unlink(&mut self.order, idx, 0);
        if let Some(index) = self.index.as_deref_mut() {
            for k in 1..L {
                let b = self.arena.slot(idx).bins[k];
                let bin = &mut index.bins[b as usize];
                self.arena.unlink(&mut bin.list, idx, k);
                if bin.list.is_empty() {
                    index.map.remove(&bin.key);
                    index.free.push(b);
                }
            }
        }
        let key = self.arena.slot(idx).key;
        let value = self.arena.remove(idx);
        if self.arena.len() == 0 {
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

    /// The earliest entry filed under `key` (indexed mode only).
    #[inline]
    pub fn bin_head(&self, key: &Key) -> Option<u32> {
        let index = self.index.as_deref()?;
        index.map.get(key).map(|&b| index.bins[b as usize].list.head)
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

    /// Entries in sequence order.
    pub fn iter(&self) -> impl Iterator<Item = &Slot<T, L>> + '_ {
        let mut idx = self.order.head;
        std::iter::from_fn(move || {
            if idx == NIL {
                return None;
            }
            let slot = self.arena.slot(idx);
            idx = self.arena.next(idx, 0);
            Some(slot)
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

/// Files entry `idx` in its bins: a posted receive (`L == 2`) under its own pattern, an
/// unexpected message (`L == 5`) under the four patterns that accept it.
#[inline]
fn file<T, const L: usize>(arena: &mut Arena<T, L>, index: &mut Index, idx: u32) {
    let key = arena.slot(idx).key;
    let keys = if L == 2 {
        [key; 4]
    } else {
        key.generalizations()
    };
    for k in 1..L {
        let b = index.bin_for(keys[k - 1]);
        arena.push_back(&mut index.bins[b as usize].list, idx, k);
        arena.slot_mut(idx).bins[k] = b;
    }
}
