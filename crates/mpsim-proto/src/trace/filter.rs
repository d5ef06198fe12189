//! What part of a run a trace keeps: a window of time and a set of ranks (`--trace-from`,
//! `--trace-to`, `--trace-ranks`).
//!
//! Why: a trace of every rank for the whole run grows with messages (a 1,024-rank ring of
//! 20,000 trips wrote 6.1 GB of JSON). Backends ask the filter at the moment they record, so
//! that what falls outside takes no memory; [`Trace::filtered`](super::Trace::filtered)
//! applies the same rules to a trace recorded whole.
//!
//! The rules (the same on every backend; times in the backend's clock):
//! - the window is `from_ns ..= to_ns`, both ends included;
//! - a span of a traced rank is kept if it overlaps the window, clipped to it (a wait that began
//!   before `from_ns` starts at `from_ns` in the trace, one still going at `to_ns` ends there);
//!   spans of ranks outside the set are not recorded;
//! - a message is kept if its sender or its receiver is traced and its send or its arrival falls
//!   in the window; its times are kept as they are (an arrow may start before the window or end
//!   after it). A rank outside the set that exchanged such a message has a track in the trace
//!   holding only those messages' ends.

use std::fmt;
use std::str::FromStr;

/// A set of ranks, written as ranks and inclusive ranges separated by commas:
/// `0-3,64,1000-1023`. Kept as sorted, merged ranges (a range of millions of ranks costs one
/// entry), so membership is a binary search.
///
/// ```
/// use mpsim_proto::trace::RankSet;
///
/// let set: RankSet = "1000-1023, 0-3,64,2".parse().unwrap();
/// assert!(set.contains(2) && set.contains(1010) && !set.contains(4));
/// assert_eq!(set.to_string(), "0-3,64,1000-1023");
/// assert_eq!(set.max(), Some(1023));
/// assert!("3-1".parse::<RankSet>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankSet {
    /// Disjoint, non-adjacent inclusive ranges, in increasing order; never empty.
    ranges: Vec<(u32, u32)>,
}

impl RankSet {
    /// The set of the ranks `first..=last` (empty ranges are refused by the parser; here,
    /// `last < first` gives the single rank `first`).
    pub fn range(first: u32, last: u32) -> Self {
        RankSet {
            ranges: vec![(first, last.max(first))],
        }
    }

    /// Whether `rank` is in the set.
    #[inline]
    pub fn contains(&self, rank: u32) -> bool {
        let i = self.ranges.partition_point(|&(_, last)| last < rank);
        self.ranges.get(i).is_some_and(|&(first, _)| first <= rank)
    }

    /// The highest rank in the set.
    pub fn max(&self) -> Option<u32> {
        self.ranges.last().map(|&(_, last)| last)
    }

    /// The ranks in the set, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|&(first, last)| first..=last)
    }

    /// From ranges in any order, overlapping or not.
    fn from_ranges(mut ranges: Vec<(u32, u32)>) -> Self {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (first, last) in ranges {
            match merged.last_mut() {
                Some(prev) if u64::from(first) <= u64::from(prev.1) + 1 => {
                    prev.1 = prev.1.max(last);
                }
                _ => merged.push((first, last)),
            }
        }
        RankSet { ranges: merged }
    }
}

impl FromStr for RankSet {
    type Err = String;

    /// Parses `0-3,64,1000-1023` (spaces around items allowed). Errors name the item at fault.
    fn from_str(text: &str) -> Result<Self, String> {
        let rank = |s: &str, item: &str| {
            s.trim().parse::<u32>().map_err(|_| {
                format!(
                    "`{item}` is not a rank or a range of ranks (a number from 0 to {}, or \
                     FIRST-LAST)",
                    u32::MAX
                )
            })
        };
        let mut ranges = Vec::new();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!(
                    "`{text}` has an empty item: write ranks and ranges separated by commas, \
                     e.g. 0-3,64,1000-1023"
                ));
            }
            let (first, last) = match item.split_once('-') {
                Some((a, b)) => (rank(a, item)?, rank(b, item)?),
                None => {
                    let r = rank(item, item)?;
                    (r, r)
                }
            };
            if last < first {
                return Err(format!(
                    "`{item}` is an empty range: its last rank comes before its first"
                ));
            }
            ranges.push((first, last));
        }
        Ok(RankSet::from_ranges(ranges))
    }
}

impl fmt::Display for RankSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(first, last)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if first == last {
                write!(f, "{first}")?;
            } else {
                write!(f, "{first}-{last}")?;
            }
        }
        Ok(())
    }
}

/// What a trace keeps: a window of time and, optionally, a set of ranks (the module doc has
/// the rules). The default keeps everything.
///
/// ```
/// use mpsim_proto::trace::TraceFilter;
///
/// let f = TraceFilter {
///     from_ns: 1_000,
///     to_ns: 2_000,
///     ranks: Some("0-3".parse().unwrap()),
/// };
/// assert!(f.check(8).is_ok());
/// // A span is clipped to the window; ranks outside the set record none.
/// assert_eq!(f.clip(1, 500, 1_500), Some((1_000, 1_500)));
/// assert_eq!(f.clip(5, 500, 1_500), None);
/// // A message is kept if an end is traced and its send or arrival is in the window.
/// assert!(f.keeps_message(6, 2, 900, Some(1_100)));
/// assert!(!f.keeps_message(6, 7, 1_500, Some(1_600)));
/// assert!(!f.keeps_message(0, 1, 2_100, Some(2_200)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFilter {
    /// Start of the window (ns, the backend's clock; 0: the run's start).
    pub from_ns: u64,
    /// End of the window, included (`u64::MAX`: the run's end).
    pub to_ns: u64,
    /// The ranks traced; `None`: all of them.
    pub ranks: Option<RankSet>,
}

impl Default for TraceFilter {
    fn default() -> Self {
        TraceFilter {
            from_ns: 0,
            to_ns: u64::MAX,
            ranks: None,
        }
    }
}

impl TraceFilter {
    /// Whether this filter keeps everything (the default).
    pub fn keeps_all(&self) -> bool {
        self.from_ns == 0 && self.to_ns == u64::MAX && self.ranks.is_none()
    }

    /// Whether the filter fits a run of `ranks` ranks: the window does not end before it
    /// starts, and every rank named exists. The error says what is wrong, naming the flags.
    pub fn check(&self, ranks: u32) -> Result<(), String> {
        if self.from_ns > self.to_ns {
            return Err(format!(
                "the trace window ends before it starts: --trace-from is {} ns, --trace-to \
                 {} ns",
                self.from_ns, self.to_ns
            ));
        }
        match self.ranks.as_ref().and_then(RankSet::max) {
            Some(max) if max >= ranks => Err(format!(
                "--trace-ranks names rank {max}, but the run has {ranks} ranks (0 to {})",
                ranks.saturating_sub(1)
            )),
            _ => Ok(()),
        }
    }

    /// Whether `rank`'s spans are recorded.
    #[inline]
    pub fn traces(&self, rank: u32) -> bool {
        self.ranks.as_ref().is_none_or(|set| set.contains(rank))
    }

    /// Whether `t` is in the window.
    #[inline]
    pub fn in_window(&self, t: u64) -> bool {
        self.from_ns <= t && t <= self.to_ns
    }

    /// A span of `rank` from `start` to `end` as the trace keeps it: clipped to the window, or
    /// `None` if the rank is not traced or nothing of the span (of positive length) is in the
    /// window.
    #[inline]
    pub fn clip(&self, rank: u32, start: u64, end: u64) -> Option<(u64, u64)> {
        let (start, end) = (start.max(self.from_ns), end.min(self.to_ns));
        (end > start && self.traces(rank)).then_some((start, end))
    }

    /// Whether a message from `from` to `to`, sent at `sent` and arriving at `arrival` (`None`:
    /// not arrived), is kept.
    #[inline]
    pub fn keeps_message(&self, from: u32, to: u32, sent: u64, arrival: Option<u64>) -> bool {
        (self.in_window(sent) || arrival.is_some_and(|a| self.in_window(a)))
            && (self.traces(from) || self.traces(to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists_parse_merge_and_print() {
        let set: RankSet = "5,0-3,4,10-12,11-20, 7 ".parse().unwrap();
        assert_eq!(set.to_string(), "0-5,7,10-20");
        assert_eq!(set.iter().count(), 6 + 1 + 11);
        assert!(set.contains(0) && set.contains(5) && set.contains(20));
        assert!(!set.contains(6) && !set.contains(21) && !set.contains(9));
        let all: RankSet = "0-4294967295".parse().unwrap();
        assert!(all.contains(u32::MAX));
        assert_eq!(all.max(), Some(u32::MAX));
    }

    #[test]
    fn bad_rank_lists_are_named() {
        let err = |s: &str| s.parse::<RankSet>().unwrap_err();
        assert!(err("").contains("empty item"), "{}", err(""));
        assert!(err("1,,2").contains("empty item"));
        assert!(err("a").starts_with("`a` is not a rank"), "{}", err("a"));
        assert!(err("1-").starts_with("`1-` is not a rank"));
        assert!(err("-1").starts_with("`-1` is not a rank"));
        assert!(err("4294967296").contains("is not a rank"));
        assert!(err("1-2-3").contains("is not a rank"));
        assert!(err("7-3").contains("empty range"), "{}", err("7-3"));
    }

    #[test]
    fn filters_are_checked_against_the_run() {
        let window = |from_ns, to_ns| TraceFilter {
            from_ns,
            to_ns,
            ranks: None,
        };
        assert!(window(5, 5).check(1).is_ok());
        let e = window(6, 5).check(1).unwrap_err();
        assert!(e.contains("ends before it starts"), "{e}");
        let ranks = |s: &str| TraceFilter {
            ranks: Some(s.parse().unwrap()),
            ..TraceFilter::default()
        };
        assert!(ranks("0-3").check(4).is_ok());
        let e = ranks("0-4").check(4).unwrap_err();
        assert_eq!(
            e,
            "--trace-ranks names rank 4, but the run has 4 ranks (0 to 3)"
        );
    }

    #[test]
    fn spans_are_clipped_and_messages_kept_by_either_end() {
        let f = TraceFilter {
            from_ns: 100,
            to_ns: 200,
            ranks: None,
        };
        assert_eq!(f.clip(0, 50, 150), Some((100, 150)));
        assert_eq!(f.clip(0, 150, 250), Some((150, 200)));
        assert_eq!(f.clip(0, 50, 250), Some((100, 200)));
        assert_eq!(
            f.clip(0, 50, 100),
            None,
            "touches the window only at its start"
        );
        assert_eq!(
            f.clip(0, 200, 300),
            None,
            "touches the window only at its end"
        );
        assert!(f.keeps_message(0, 1, 50, Some(100)));
        assert!(f.keeps_message(0, 1, 200, Some(300)));
        assert!(f.keeps_message(0, 1, 150, None));
        assert!(!f.keeps_message(0, 1, 50, Some(99)));
        assert!(!f.keeps_message(0, 1, 50, None));
        assert!(
            !f.keeps_message(0, 1, 50, Some(201)),
            "in flight across the window"
        );
        assert!(TraceFilter::default().keeps_all());
        assert!(!f.keeps_all());
    }
}
