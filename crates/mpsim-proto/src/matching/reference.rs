//! [`NaiveEngine`]: the matching rules written as plainly as possible — two lists and a linear
//! scan. Slow on purpose.
//!
//! Why it exists: it is the executable form of `docs/matching.md` §2. Property tests run random
//! operation sequences through it and through [`Engine`](super::Engine) and require identical
//! pairings; the matching benchmark uses it as the "linked list" baseline real MPI libraries
//! resemble. Its handles are plain sequence numbers.

use super::{Envelope, Match, Pattern};

/// A naive tag-matching engine: posted and unexpected queues as `Vec`s, linear scans.
///
/// ```
/// use mpsim_proto::matching::{ContextId, Envelope, Pattern, Source, Tag};
/// use mpsim_proto::matching::reference::NaiveEngine;
///
/// let mut naive: NaiveEngine<u32, u32> = NaiveEngine::default();
/// naive.arrive(Envelope::new(ContextId(0), 1, 5), 100).unwrap_err();
/// let m = naive.post(Pattern::new(ContextId(0), Source::Any, Tag::Any), 7).unwrap();
/// assert_eq!((m.recv, m.msg), (7, 100));
/// ```
pub struct NaiveEngine<R, M> {
    posted: Vec<(u64, Pattern, R)>,
    unexpected: Vec<(u64, Envelope, M)>,
    next_seq: u64,
}

impl<R, M> Default for NaiveEngine<R, M> {
    fn default() -> Self {
        NaiveEngine {
            posted: Vec::new(),
            unexpected: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<R, M> NaiveEngine<R, M> {
    /// M2: match the earliest unexpected message, or queue; `Err(handle)` when queued.
    pub fn post(&mut self, pattern: Pattern, recv: R) -> Result<Match<R, M>, u64> {
        if let Some(i) = self
            .unexpected
            .iter()
            .position(|(_, e, _)| pattern.matches(e))
        {
            let (_, envelope, msg) = self.unexpected.remove(i);
            return Ok(Match {
                recv,
                envelope,
                msg,
            });
        }
        let seq = self.bump();
        self.posted.push((seq, pattern, recv));
        Err(seq)
    }

    /// M1: match the earliest posted receive, or queue; `Err(handle)` when queued.
    pub fn arrive(&mut self, envelope: Envelope, msg: M) -> Result<Match<R, M>, u64> {
        if let Some(i) = self
            .posted
            .iter()
            .position(|(_, p, _)| p.matches(&envelope))
        {
            let (_, _, recv) = self.posted.remove(i);
            return Ok(Match {
                recv,
                envelope,
                msg,
            });
        }
        let seq = self.bump();
        self.unexpected.push((seq, envelope, msg));
        Err(seq)
    }

    /// M6.
    pub fn cancel(&mut self, handle: u64) -> Option<R> {
        let i = self.posted.iter().position(|(s, _, _)| *s == handle)?;
        Some(self.posted.remove(i).2)
    }

    /// M7.
    pub fn withdraw(&mut self, handle: u64) -> Option<(Envelope, M)> {
        let i = self.unexpected.iter().position(|(s, _, _)| *s == handle)?;
        let (_, e, m) = self.unexpected.remove(i);
        Some((e, m))
    }

    /// M8: the message `post(pattern)` would take, with its handle.
    pub fn probe(&self, pattern: &Pattern) -> Option<(u64, Envelope, &M)> {
        self.unexpected
            .iter()
            .find(|(_, e, _)| pattern.matches(e))
            .map(|(s, e, m)| (*s, *e, m))
    }

    /// M9.
    pub fn mprobe(&mut self, pattern: &Pattern) -> Option<(Envelope, M)> {
        let i = self
            .unexpected
            .iter()
            .position(|(_, e, _)| pattern.matches(e))?;
        let (_, e, m) = self.unexpected.remove(i);
        Some((e, m))
    }

    /// Receives waiting.
    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }

    /// Messages waiting.
    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }

    fn bump(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }
}
