//! A 4-ary min-heap: the events made for the current time in the event queue's store
//! ([`crate::time_buckets::TimeBuckets`]). It was the whole queue's heap before events were
//! grouped by time; the figures below are from then.
//!
//! Why not `std`'s `BinaryHeap`: a simulation of many ranks holds hundreds of thousands of
//! events in flight (a 65,536-rank halo exchange, about 260,000), a heap of several megabytes,
//! and each pop walks from the root to a leaf. A binary heap takes `log2 n` steps (18 there),
//! the deepest of them cache misses; four children per node halve the depth (9), and the four
//! children of a node lie side by side (96 bytes of 24-byte entries), so a step costs one or
//! two cache lines rather than one line per level. Measured 2026-11-24 (host CPU time, 3
//! runs each, outputs identical): `stencil2d --ranks 262144 --iterations 4 --n 8 --compute
//! modeled` 5.56-5.85 s with the binary heap, 4.92-4.97 s with this one; at 65,536 ranks,
//! where pops took a fifth of the run, 2-5% less; a 1,024-rank ring, whose events mostly skip
//! the heap (the queue's front), the same within 1%. Tried and not kept: choosing the
//! smallest child by a branch-free tournament and sinking the hole to a leaf first (Floyd):
//! 8% faster at 1,024 ranks, where the heap is in cache and mispredicted branches cost most,
//! but 8% slower at 262,144, where a branch lets the processor fetch the next level before the
//! comparison is done; so was one 128-bit comparison for `(time, class, creator)`.

/// A min-heap of `T` with four children per node: node `i`'s children are `4i + 1 ..= 4i + 4`.
#[derive(Debug)]
pub(crate) struct QuadHeap<T> {
    v: Vec<T>,
}

impl<T> Default for QuadHeap<T> {
    fn default() -> Self {
        QuadHeap { v: Vec::new() }
    }
}

impl<T: Ord + Copy> QuadHeap<T> {
    /// The smallest element, if any.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        self.v.first()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Hands every element over, in no particular order, into `spare`, which must be empty
    /// (the heap keeps `spare`'s storage for later pushes).
    pub fn swap_out(&mut self, spare: &mut Vec<T>) {
        debug_assert!(
            spare.is_empty(),
            "swapped out into a vector that holds elements"
        );
        std::mem::swap(&mut self.v, spare);
    }

    /// Adds `x`, moving it up past every larger parent.
    pub fn push(&mut self, x: T) {
        let mut i = self.v.len();
        self.v.push(x);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.v[parent] <= x {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = x;
    }

    /// Removes and returns the smallest element: the last element takes the root's place and
    /// moves down past every smaller child.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else {
            return Some(last);
        };
        let n = self.v.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut min = first;
            for c in first + 1..(first + 4).min(n) {
                if self.v[c] < self.v[min] {
                    min = c;
                }
            }
            if self.v[min] >= last {
                break;
            }
            self.v[i] = self.v[min];
            i = min;
        }
        self.v[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    use super::QuadHeap;

    proptest! {
        /// Any interleaving of pushes and pops gives what `std`'s binary heap gives, keys
        /// repeated or not.
        #[test]
        fn pops_in_the_order_of_a_binary_heap(
            ops in proptest::collection::vec(proptest::option::weighted(0.6, 0u32..200), 0..600)
        ) {
            let (mut quad, mut reference) = (QuadHeap::default(), BinaryHeap::new());
            for op in ops {
                match op {
                    Some(x) => {
                        quad.push(x);
                        reference.push(Reverse(x));
                    }
                    None => prop_assert_eq!(quad.pop(), reference.pop().map(|Reverse(x)| x)),
                }
                prop_assert_eq!(quad.peek().copied(), reference.peek().map(|Reverse(x)| *x));
                prop_assert_eq!(quad.len(), reference.len());
            }
            while let Some(Reverse(x)) = reference.pop() {
                prop_assert_eq!(quad.pop(), Some(x));
            }
            prop_assert!(quad.is_empty() && quad.pop().is_none());
        }
    }
}
