//! The event queue's ordered store ([`crate::event::Queue`]): entries grouped by time.
//!
//! Why not a heap alone: ranks of a simulation act in step. In a halo exchange every rank
//! sends at the same virtual time with the same delay, so thousands of events share one
//! arrival time, and a heap pays `log n` comparisons of whole keys per pop for an order that
//! the time alone mostly decides. Here an entry later than the current time is appended to
//! its time's bucket (the buckets in a `BTreeMap` by time, few of them when ranks act in
//! step). When the current time's entries run out, the next bucket is sorted once, in place,
//! and popped from its end. An entry at or before the current time (an event made for
//! "now", such as the wake-up of a receiver) goes to a small heap beside it. Pops take the
//! smaller of the sorted batch's next and the heap's top, so the order is the entries' total
//! order whatever the grouping.
//!
//! Measured 2026-11-24 against the 4-ary heap alone (host CPU time, outputs and traces
//! identical): `stencil2d --ranks 1024 --iterations 1000 --n 8 --compute modeled` 1.14-1.16 s
//! -> 0.80 s; at 262,144 ranks x 4 iterations 5.10 -> 4.46 s, peak RSS +2.5% (the buckets'
//! slack); with measured compute, every event at its own time, 7.21 -> 6.28 s at the same
//! peak RSS; the 1,024-rank ring, whose events mostly skip the store, unchanged.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::quad_heap::QuadHeap;

/// Entries made for the current time, once its batch has run out, from which they are sorted
/// into a batch rather than popped from the heap one by one (`TimeBuckets::pop`).
const SORT_NOW_FROM: usize = 32;

/// An entry with a time, ordered first by it.
pub(crate) trait Timed: Ord + Copy {
    /// The entry's time: `a.time() < b.time()` implies `a < b`.
    fn time(&self) -> u64;
}

/// A min-queue of [`Timed`] entries.
///
/// Invariant: when it holds anything, `batch` or `now` does; `batch` holds entries of time
/// at most `current`, sorted largest first; `now` holds entries of time at most `current`
/// pushed after `batch` was sorted; `later` holds every entry after `current`, by time.
#[derive(Debug)]
pub(crate) struct TimeBuckets<T> {
    current: u64,
    batch: Vec<T>,
    now: QuadHeap<T>,
    /// A bucket of one entry (every entry at its own time, as with measured compute) holds it
    /// inline: no allocation, about 60 bytes an entry with the map's nodes.
    later: BTreeMap<u64, SmallVec<[T; 1]>>,
}

impl<T> Default for TimeBuckets<T> {
    fn default() -> Self {
        TimeBuckets {
            current: 0,
            batch: Vec::new(),
            now: QuadHeap::default(),
            later: BTreeMap::new(),
        }
    }
}

impl<T: Timed> TimeBuckets<T> {
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty() && self.now.is_empty()
    }

    /// Whether the smallest entry is in `now` rather than at the end of `batch`.
    #[inline(always)]
    fn smallest_in_now(&self) -> bool {
        match (self.batch.last(), self.now.peek()) {
            (Some(b), Some(n)) => n < b,
            (None, Some(_)) => true,
            (_, None) => false,
        }
    }

    /// The smallest entry, if any.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        if self.smallest_in_now() {
            self.now.peek()
        } else {
            self.batch.last()
        }
    }

    pub fn push(&mut self, x: T) {
        let t = x.time();
        if self.is_empty() {
            self.current = t;
            self.batch.push(x);
        } else if t <= self.current {
            self.now.push(x);
        } else {
            self.later.entry(t).or_default().push(x);
        }
    }

    /// Removes and returns the smallest entry.
    pub fn pop(&mut self) -> Option<T> {
        // Many entries made for the current time once its batch has run out (in a halo
        // exchange, the resume of every rank whose receives all arrived at that time: resumes
        // come after deliveries) are sorted once, into the batch, rather than each popped
        // from the heap: a sort compares about `log2 n` times an entry, a 4-ary heap's pops
        // about twice that (stencil2d, 1,024 ranks: -1.6% instructions, -4% host time).
        if self.batch.is_empty() && self.now.len() >= SORT_NOW_FROM {
            self.now.swap_out(&mut self.batch);
            self.batch.sort_unstable_by(|a, b| b.cmp(a));
        }
        let x = if self.smallest_in_now() {
            self.now.pop()
        } else {
            self.batch.pop()
        }?;
        if self.is_empty() {
            self.next_batch();
        }
        Some(x)
    }

    /// Makes the earliest later bucket the batch (both `batch` and `now` are empty).
    fn next_batch(&mut self) {
        let Some((t, bucket)) = self.later.pop_first() else {
            return;
        };
        self.current = t;
        if bucket.spilled() {
            let mut bucket = bucket.into_vec();
            bucket.sort_unstable_by(|a, b| b.cmp(a));
            // The batch's own allocation goes; the bucket's comes in without a copy.
            self.batch = bucket;
        } else {
            self.batch.extend(bucket);
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.batch.len() + self.now.len() + self.later.values().map(|b| b.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    use super::{TimeBuckets, Timed};

    /// A time and a tie-breaker, ordered as the tuple.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct E(u64, u32);

    impl Timed for E {
        fn time(&self) -> u64 {
            self.0
        }
    }

    proptest! {
        /// Any interleaving of pushes and pops gives what a binary heap gives: pushes before,
        /// at and after the current time, with many entries sharing a time.
        #[test]
        fn pops_in_the_order_of_a_binary_heap(
            ops in proptest::collection::vec(
                proptest::option::weighted(0.6, (0u64..40, 0u32..1000)), 0..800)
        ) {
            let (mut q, mut reference) = (TimeBuckets::default(), BinaryHeap::new());
            for op in ops {
                match op {
                    Some((t, k)) => {
                        q.push(E(t, k));
                        reference.push(Reverse(E(t, k)));
                    }
                    None => prop_assert_eq!(q.pop(), reference.pop().map(|Reverse(e)| e)),
                }
                prop_assert_eq!(q.peek().copied(), reference.peek().map(|Reverse(e)| *e));
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.is_empty(), reference.is_empty());
            }
            while let Some(Reverse(e)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(e));
            }
            prop_assert!(q.is_empty() && q.pop().is_none());
        }

        /// Many entries made for the current time after its batch ran out (more than
        /// `SORT_NOW_FROM`, so that they are sorted into a batch), with pushes for the current
        /// time and later ones between the pops, as a halo exchange's resumes come.
        #[test]
        fn pops_in_order_when_many_entries_come_for_the_current_time(
            first in proptest::collection::vec(0u32..10_000, 0..200),
            then in proptest::collection::vec(proptest::option::of((0u64..3, 0u32..10_000)), 0..300)
        ) {
            let (mut q, mut reference) = (TimeBuckets::default(), BinaryHeap::new());
            q.push(E(5, 0));
            reference.push(Reverse(E(5, 0)));
            prop_assert_eq!(q.pop(), Some(E(5, 0)));
            reference.pop();
            q.push(E(5, 1));
            reference.push(Reverse(E(5, 1)));
            for k in first {
                q.push(E(5, k));
                reference.push(Reverse(E(5, k)));
            }
            for op in then {
                match op {
                    Some((dt, k)) => {
                        q.push(E(5 + dt, k));
                        reference.push(Reverse(E(5 + dt, k)));
                    }
                    None => prop_assert_eq!(q.pop(), reference.pop().map(|Reverse(e)| e)),
                }
                prop_assert_eq!(q.peek().copied(), reference.peek().map(|Reverse(e)| *e));
            }
            while let Some(Reverse(e)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(e));
            }
            prop_assert!(q.is_empty());
        }

        /// As a simulation uses it: every push at or after the time of the last pop.
        #[test]
        fn pops_in_order_when_pushes_follow_time(
            steps in proptest::collection::vec((0u64..5, 0usize..4), 1..400)
        ) {
            let mut q = TimeBuckets::default();
            let mut reference = BinaryHeap::new();
            let (mut now, mut k) = (0u64, 0u32);
            q.push(E(0, 0));
            reference.push(Reverse(E(0, 0)));
            for (dt, pushes) in steps {
                let Some(Reverse(e)) = reference.pop() else { break };
                prop_assert_eq!(q.pop(), Some(e));
                prop_assert!(e.0 >= now);
                now = e.0;
                for _ in 0..pushes {
                    k += 1;
                    q.push(E(now + dt, k));
                    reference.push(Reverse(E(now + dt, k)));
                }
            }
        }
    }
}
