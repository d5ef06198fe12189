//! Livelock: a run in which only polls can happen any more. A rank that tests, in a loop, for
//! something nothing will ever send is not blocked (a deadlock stops the run when every
//! unfinished rank is blocked and nothing is in flight, S15): it polls, its clock moves by the
//! model's `poll_cost` each time, and without this the run would go on for ever.
//!
//! The run is *quiet* when no message or packet is in flight, every unfinished rank is either
//! blocked or polling, and at least one polls: then the only way on is a polling rank's own
//! loop giving up (a counted or timed loop), as no poll can find anything new. A run that stays
//! quiet, with no other event in between, for [`Options::livelock_after_ns`] of virtual time
//! (1 s unless set; 0: never) stops with [`Error::Livelock`], naming the polling and the
//! blocked ranks.
//!
//! Quiet is looked at on a grid of virtual times (checkpoints, every 1/16 of the limit), when
//! every event at or before the checkpoint has run and none after it: in a sequential run the
//! checkpoint is an event, a resume of no rank after every other event of its time
//! (`Queue::push_checkpoint`); a parallel run ends its rounds there. Both then see the same
//! state and decide the same, so the report is the same bytes whatever the number of threads.
//! Nothing is looked at per event: a poll notes itself (rare), and the ranks are looked at
//! only at checkpoints when the queue holds resumes alone. (Comparing each event's time with
//! the next checkpoint in the run loop cost 13-18 instructions per simulated message.)
//!
//! The report says from when nothing but polls ran: not the checkpoint at which the run was
//! first seen quiet (which lags by up to 1/16 of the limit), but the last time anything else
//! happened to a rank (`Kernel::quiet_since`): when a polling rank's polls began (a poll
//! notes whether its rank did or was given anything since its last one,
//! `Kernel::note_poll`), when a blocked rank blocked or was last given a message or an ack,
//! when a finished rank ended. It is found from the ranks' state when the livelock is, so
//! nothing is added to any event.
//!
//! [`Options::livelock_after_ns`]: crate::Options::livelock_after_ns
//! [`Error::Livelock`]: mpsim_proto::error::Error::Livelock

/// The default limit: 1 s of virtual time with nothing but polls.
pub const DEFAULT_AFTER_NS: u64 = 1_000_000_000;

/// Checkpoints per limit: a livelock is reported between 1 and 1 + 2/16 limits after it began.
const CHECKS_PER_LIMIT: u64 = 16;

/// The watch for a livelock, in a partition's kernel (every partition of a parallel run keeps
/// one and feeds it the same global figures).
#[derive(Clone, Debug)]
pub(crate) struct Watch {
    /// The limit (ns of virtual time; 0: no watch).
    after_ns: u64,
    /// Virtual time between checkpoints.
    grid_ns: u64,
    /// The next checkpoint: no event at or after it runs before the watch has looked.
    pub next_check: u64,
    /// Quiet since the checkpoint at this time, with this many non-poll events run by then.
    quiet_since: Option<(u64, u64)>,
}

impl Watch {
    /// A watch that reports a livelock after `after_ns` of quiet (0: never).
    pub fn new(after_ns: u64) -> Self {
        let grid_ns = (after_ns / CHECKS_PER_LIMIT).max(1);
        Watch {
            after_ns,
            grid_ns,
            next_check: if after_ns == 0 { u64::MAX } else { grid_ns },
            quiet_since: None,
        }
    }

    /// The limit (ns of virtual time; 0: none).
    pub fn after_ns(&self) -> u64 {
        self.after_ns
    }

    /// Looks at the run, whose earliest next event is at `next` (after [`Watch::next_check`];
    /// every earlier event has run): `quiet` as the module doc says,
    /// `progress` the events run so far that were not polls. Returns, for a livelock, the
    /// checkpoint since which the run has been quiet and this checkpoint, at least the limit
    /// after it. Sets the next checkpoint.
    pub fn check(&mut self, next: u64, quiet: bool, progress: u64) -> Option<(u64, u64)> {
        debug_assert!(next > self.next_check);
        // The last checkpoint before the next event: the run looks the same at every one
        // since the last event.
        let last = next - 1;
        let at = last - last % self.grid_ns;
        self.next_check = at.saturating_add(self.grid_ns);
        match self.quiet_since {
            Some((since, before)) if quiet && before == progress => {
                if at - since >= self.after_ns {
                    return Some((since, at));
                }
            }
            _ => self.quiet_since = quiet.then_some((at, progress)),
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_for_the_limit_with_no_progress_is_a_livelock() {
        let mut w = Watch::new(1600);
        assert_eq!(w.next_check, 100);
        assert_eq!(w.check(150, true, 7), None);
        assert_eq!(w.next_check, 200);
        // Quiet since 100: 1500 ns at 1600 is not yet the limit, 1600 ns at 1700 is.
        assert_eq!(w.check(1650, true, 7), None);
        assert_eq!(w.check(1750, true, 7), Some((100, 1700)));
    }

    #[test]
    fn progress_or_noise_starts_the_count_again() {
        let mut w = Watch::new(1600);
        assert_eq!(w.check(101, true, 7), None);
        // An event that was not a poll ran between the checkpoints.
        assert_eq!(w.check(1701, true, 8), None);
        assert_eq!(w.check(3201, true, 8), None);
        assert_eq!(w.check(3301, true, 8), Some((1700, 3300)));
        let mut w = Watch::new(1600);
        assert_eq!(w.check(101, true, 7), None);
        assert_eq!(w.check(901, false, 7), None);
        assert_eq!(w.check(1701, true, 7), None, "quiet again only since 1700");
    }

    #[test]
    fn a_limit_of_zero_never_checks() {
        let w = Watch::new(0);
        assert_eq!(w.next_check, u64::MAX);
    }
}
