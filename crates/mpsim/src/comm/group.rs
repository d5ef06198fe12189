//! [`Group`]: how a communicator maps its ranks to world ranks, and [`Members`]: a `split`
//! color's members as the split's root sends them.
//!
//! Why not always a table: a `split` of `n` ranks into one color gives each of `n` members a
//! table of `n` world ranks, `n²` in all. At 64,000 simulated ranks that was 16 GB and 40 s
//! for one `split`. The common splits (all ranks, even and odd ranks, blocks of a grid row)
//! give evenly spaced world ranks, and so does a key that reverses them: a first rank and a
//! stride say as much in two words, sent as one 16-byte message. Other orders (a key that
//! shuffles) still get a table.

use std::rc::Rc;

/// Communicator rank → world rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Group {
    /// The identity: the world and its dups.
    Identity,
    /// World rank `first + rank · stride` (a negative stride counts down).
    Strided { first: u32, stride: i64 },
    /// Any other order: one table the communicator's clones share.
    Table(Rc<[u32]>),
}

impl Group {
    /// The world rank of communicator rank `rank` (`rank < size`).
    #[inline]
    pub fn world_rank(&self, rank: u32) -> u32 {
        match self {
            Group::Identity => rank,
            Group::Strided { first, stride } => step(*first, *stride, rank),
            Group::Table(t) => t[rank as usize],
        }
    }

    /// The group of a communicator whose members are `members` (ranks of a communicator of
    /// group `self`, in new-rank order).
    pub fn child(&self, members: &Members) -> Group {
        let strided = match (self, members) {
            (Group::Identity, &Members::Strided { first, stride, .. }) => {
                Some((first, i64::from(stride)))
            }
            (
                &Group::Strided {
                    first: f0,
                    stride: s0,
                },
                &Members::Strided { first, stride, .. },
            ) => {
                // Member `r` is parent rank `first + r·stride`, world rank
                // `f0 + (first + r·stride)·s0`: first `f0 + first·s0`, stride `stride·s0`.
                Some((step(f0, s0, first), i64::from(stride) * s0))
            }
            _ => None,
        };
        match strided {
            Some((0, 1)) => Group::Identity,
            Some((first, stride)) => Group::Strided { first, stride },
            None => Group::Table(
                (0..members.len())
                    .map(|r| self.world_rank(members.parent_rank(r)))
                    .collect(),
            ),
        }
    }
}

/// `first + r · stride`: a rank of an evenly spaced group (in range for every member `r`).
#[inline]
fn step(first: u32, stride: i64, r: u32) -> u32 {
    (i64::from(first) + i64::from(r) * stride) as u32
}

/// A `split` color's members, ranks of the parent communicator in new-rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Members {
    /// Parent rank `first + r · stride` for new rank `r < len` (a negative stride counts
    /// down).
    Strided { first: u32, stride: i32, len: u32 },
    /// Any other order.
    List(Vec<u32>),
}

/// The words of the header the split's root sends each member: `[0, first, stride, len]` for
/// [`Members::Strided`], `[1, len, 0, 0]` for a list, which follows in a second message.
pub(super) type Header = [u32; 4];

impl Members {
    /// `list` (parent ranks in new-rank order, not empty) as evenly spaced ranks when they
    /// are, up or down.
    pub fn of(list: Vec<u32>) -> Members {
        let len = u32::try_from(list.len()).expect("no more members than ranks");
        let first = list[0];
        let stride = match list.get(1) {
            None => 1,
            Some(&second) => match i32::try_from(i64::from(second) - i64::from(first)) {
                Ok(stride) if stride != 0 => stride,
                _ => return Members::List(list),
            },
        };
        let evenly = list
            .iter()
            .zip(0u32..)
            .all(|(&m, r)| i64::from(m) == i64::from(first) + i64::from(r) * i64::from(stride));
        if evenly {
            Members::Strided { first, stride, len }
        } else {
            Members::List(list)
        }
    }

    /// How many members.
    pub fn len(&self) -> u32 {
        match self {
            Members::Strided { len, .. } => *len,
            Members::List(list) => list.len() as u32,
        }
    }

    /// The parent rank of new rank `r` (`r < len`).
    pub fn parent_rank(&self, r: u32) -> u32 {
        match self {
            Members::Strided { first, stride, .. } => step(*first, i64::from(*stride), r),
            Members::List(list) => list[r as usize],
        }
    }

    /// The new rank of parent rank `parent`, if it is a member.
    pub fn new_rank(&self, parent: u32) -> Option<u32> {
        match *self {
            Members::Strided { first, stride, len } => {
                let offset = i64::from(parent) - i64::from(first);
                let stride = i64::from(stride);
                let r = offset / stride;
                (offset % stride == 0 && (0..i64::from(len)).contains(&r)).then_some(r as u32)
            }
            Members::List(ref list) => list.iter().position(|&m| m == parent).map(|r| r as u32),
        }
    }

    /// The header that announces these members ([`Header`]).
    pub fn header(&self) -> Header {
        match *self {
            Members::Strided { first, stride, len } => [0, first, stride as u32, len],
            Members::List(ref list) => [1, list.len() as u32, 0, 0],
        }
    }

    /// The members a header announces: `Ok` for evenly spaced ones, `Err(len)` when a list of
    /// `len` ranks follows.
    pub fn from_header(header: Header) -> Result<Members, u32> {
        match header {
            [0, first, stride, len] => Ok(Members::Strided {
                first,
                stride: stride as i32,
                len,
            }),
            [_, len, ..] => Err(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evenly_spaced_members_need_no_list() {
        assert_eq!(
            Members::of(vec![1, 3, 5]),
            Members::Strided {
                first: 1,
                stride: 2,
                len: 3
            }
        );
        assert_eq!(
            Members::of(vec![4]),
            Members::Strided {
                first: 4,
                stride: 1,
                len: 1
            }
        );
        assert_eq!(
            Members::of(vec![5, 3, 1]),
            Members::Strided {
                first: 5,
                stride: -2,
                len: 3
            },
            "counting down"
        );
        assert_eq!(Members::of(vec![5, 3, 2]), Members::List(vec![5, 3, 2]));
        assert_eq!(Members::of(vec![0, 1, 3]), Members::List(vec![0, 1, 3]));
        for members in [
            Members::of(vec![2, 5, 8]),
            Members::of(vec![7, 0, 2]),
            Members::of(vec![9, 6, 3, 0]),
        ] {
            let back = Members::from_header(members.header());
            match &members {
                Members::Strided { .. } => assert_eq!(back, Ok(members.clone())),
                Members::List(list) => assert_eq!(back, Err(list.len() as u32)),
            }
            for r in 0..members.len() {
                assert_eq!(members.new_rank(members.parent_rank(r)), Some(r));
            }
        }
        assert_eq!(Members::of(vec![2, 5, 8]).new_rank(4), None);
        assert_eq!(Members::of(vec![2, 5, 8]).new_rank(11), None);
        assert_eq!(Members::of(vec![2, 5, 8]).new_rank(1), None);
    }

    /// A child's world ranks are its members' world ranks in the parent, whatever the
    /// parent's and child's forms (checked against tables).
    #[test]
    fn child_groups_compose_like_tables() {
        let parents = [
            (Group::Identity, 12),
            (
                Group::Strided {
                    first: 3,
                    stride: 4,
                },
                5,
            ),
            (Group::Table(Rc::from(vec![9, 2, 7, 4, 0, 11])), 6),
        ];
        for (parent, size) in parents {
            let lists = [
                vec![0, 2, 4],
                vec![1],
                vec![4, 2, 0],
                vec![0, 1, 3],
                vec![1, 2, 3],
            ];
            for list in lists.into_iter().filter(|l| l.iter().all(|&m| m < size)) {
                let members = Members::of(list.clone());
                let child = parent.child(&members);
                let expected: Vec<u32> = list.iter().map(|&m| parent.world_rank(m)).collect();
                let got: Vec<u32> = (0..members.len()).map(|r| child.world_rank(r)).collect();
                assert_eq!(got, expected, "{parent:?} / {list:?} -> {child:?}");
            }
        }
        assert_eq!(
            Group::Identity.child(&Members::of(vec![0, 1, 2])),
            Group::Identity,
            "all ranks in order"
        );
    }
}
