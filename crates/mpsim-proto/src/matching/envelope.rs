//! What a message says about itself (an [`Envelope`]) and what a receive asks for (a [`Pattern`]).
//!
//! Both reduce to one compact [`Key`] — `(context, source or ANY, tag or ANY)` — which is what the
//! engine stores and hashes. Validation (rank and tag ranges, `ANY_TAG` on a send, `PROC_NULL`)
//! is the caller's job (`docs/matching.md` §2, last paragraph).

use std::fmt;

/// A rank inside a communicator.
pub type Rank = u32;

/// The largest user tag (MPI's `MPI_TAG_UB`); user tags are `0..=TAG_UB`.
pub const TAG_UB: i32 = i32::MAX;

/// The null process (MPI's `MPI_PROC_NULL`, re-exported by `mpsim`): a rank number that no
/// communicator has, which sources and peers show by name.
pub const PROC_NULL: Rank = u32::MAX - 1;

/// The matching context of a communicator: a message and a receive match only inside one.
///
/// Point-to-point traffic and collective traffic of one communicator use two different contexts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContextId(pub u64);

/// The source a receive or probe accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// Only messages from this rank.
    Rank(Rank),
    /// Messages from any rank (MPI's `MPI_ANY_SOURCE`).
    Any,
}

/// A rank as a source: always that rank. The wildcard is only ever [`Source::Any`] (a number,
/// `u32::MAX` included, is a rank, which a receive then checks), so that a destination, a plain
/// rank, can never be a wildcard by mistake.
///
/// ```
/// use mpsim_proto::matching::Source;
/// assert_eq!((Source::from(3), Source::from(u32::MAX)), (Source::Rank(3), Source::Rank(u32::MAX)));
/// ```
impl From<Rank> for Source {
    #[inline]
    fn from(rank: Rank) -> Self {
        Source::Rank(rank)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Rank(PROC_NULL) => f.write_str("PROC_NULL"),
            Source::Rank(r) => write!(f, "{r}"),
            Source::Any => f.write_str("ANY_SOURCE"),
        }
    }
}

/// The tag a receive or probe accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tag {
    /// Only messages with this tag (`0..=TAG_UB`).
    Value(i32),
    /// Messages with any tag (MPI's `MPI_ANY_TAG`).
    Any,
}

/// A number as a tag: always that tag (whether it is a valid one, `0..=TAG_UB`, is the
/// caller's check). The wildcard is only ever [`Tag::Any`]: `-1` is an invalid tag, not MPI's
/// `MPI_ANY_TAG`.
///
/// ```
/// use mpsim_proto::matching::Tag;
/// assert_eq!((Tag::from(7), Tag::from(-1)), (Tag::Value(7), Tag::Value(-1)));
/// ```
impl From<i32> for Tag {
    #[inline]
    fn from(tag: i32) -> Self {
        Tag::Value(tag)
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tag::Value(t) => write!(f, "{t}"),
            Tag::Any => f.write_str("ANY_TAG"),
        }
    }
}

/// The matching part of a message: where it belongs, who sent it, its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// The communicator context it was sent on.
    pub context: ContextId,
    /// The sender's rank in that communicator.
    pub source: Rank,
    /// The message tag, `0..=TAG_UB`.
    pub tag: i32,
}

impl Envelope {
    /// An envelope for a message from `source` with `tag` on `context`.
    pub fn new(context: ContextId, source: Rank, tag: i32) -> Self {
        Envelope {
            context,
            source,
            tag,
        }
    }

    #[inline]
    pub(crate) fn key(&self) -> Key {
        debug_assert!(
            self.source != ANY_SOURCE_RAW,
            "source rank u32::MAX is reserved"
        );
        debug_assert!(self.tag >= 0, "message tags are 0..=TAG_UB");
        Key {
            context: self.context.0,
            source: self.source,
            tag: self.tag,
        }
    }
}

/// What a receive or probe accepts: a context, a source (or any), a tag (or any).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// The communicator context to match in.
    pub context: ContextId,
    /// Accepted source.
    pub source: Source,
    /// Accepted tag.
    pub tag: Tag,
}

impl Pattern {
    /// A pattern accepting `source` and `tag` on `context`.
    ///
    /// ```
    /// use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, Tag};
    /// let any_from_3 = Pattern::new(ContextId(0), 3, Tag::Any);
    /// assert!(any_from_3.matches(&Envelope::new(ContextId(0), 3, 42)));
    /// assert!(!any_from_3.matches(&Envelope::new(ContextId(1), 3, 42)));
    /// ```
    pub fn new(context: ContextId, source: impl Into<Source>, tag: impl Into<Tag>) -> Self {
        Pattern {
            context,
            source: source.into(),
            tag: tag.into(),
        }
    }

    /// Whether a message with this envelope satisfies the pattern (`docs/matching.md` §1).
    #[inline]
    pub fn matches(&self, envelope: &Envelope) -> bool {
        self.key().accepts(&envelope.key())
    }

    #[inline]
    pub(crate) fn key(&self) -> Key {
        Key {
            context: self.context.0,
            source: match self.source {
                Source::Rank(r) => {
                    debug_assert!(r != ANY_SOURCE_RAW, "source rank u32::MAX is reserved");
                    r
                }
                Source::Any => ANY_SOURCE_RAW,
            },
            tag: match self.tag {
                Tag::Value(t) => {
                    debug_assert!(t >= 0, "message tags are 0..=TAG_UB");
                    t
                }
                Tag::Any => ANY_TAG_RAW,
            },
        }
    }
}

pub(crate) const ANY_SOURCE_RAW: u32 = u32::MAX;
pub(crate) const ANY_TAG_RAW: i32 = -1;

/// The compact form of an envelope (no wildcards) or a pattern (wildcards as sentinels).
///
/// One key type serves both sides: a posted receive is filed under its pattern's key, an
/// unexpected message under the four keys that could ask for it ([`Key::generalizations`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub context: u64,
    pub source: u32,
    pub tag: i32,
}

impl Key {
    /// Whether `self`, read as a pattern, accepts `envelope` (which has no wildcards).
    #[inline]
    pub fn accepts(&self, envelope: &Key) -> bool {
        self.context == envelope.context
            && (self.source == ANY_SOURCE_RAW || self.source == envelope.source)
            && (self.tag == ANY_TAG_RAW || self.tag == envelope.tag)
    }

    /// The four pattern keys that accept this envelope: exact, any tag, any source, both any.
    /// Index `i` of the result has shape `i` (see [`Key::shape`]).
    #[inline]
    pub fn generalizations(&self) -> [Key; 4] {
        let any_tag = Key {
            tag: ANY_TAG_RAW,
            ..*self
        };
        let any_source = Key {
            source: ANY_SOURCE_RAW,
            ..*self
        };
        let any_both = Key {
            source: ANY_SOURCE_RAW,
            tag: ANY_TAG_RAW,
            ..*self
        };
        [*self, any_tag, any_source, any_both]
    }

    /// 0 exact, 1 any tag, 2 any source, 3 both any.
    #[inline]
    pub fn shape(&self) -> usize {
        usize::from(self.tag == ANY_TAG_RAW) | (usize::from(self.source == ANY_SOURCE_RAW) << 1)
    }
}
