//! A request from outside a run to stop it: a signal (Ctrl-C's `SIGINT`, `SIGTERM` from `kill`
//! or a batch system) that a handler raises and the backends look for at their cold points.
//!
//! Why here: both backends stop on it and report the same [`crate::Error::Interrupted`]. Like
//! the rest of this crate it handles no signal itself: the launcher (`mpsim`'s `Launcher::run`)
//! installs the handlers that raise it; the simulator looks at it where it already looks at the
//! host's memory (every 64 events), the threads backend where it watches its ranks (every 1 to
//! 50 ms). A run given none never looks.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A signal that stops a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Signal {
    /// `SIGINT`: Ctrl-C at the terminal.
    Interrupt,
    /// `SIGTERM`: `kill`, a batch system's time limit, a container's stop.
    Terminate,
}

impl Signal {
    /// Every signal that stops a run.
    pub const ALL: [Signal; 2] = [Signal::Interrupt, Signal::Terminate];

    /// The signal's name, `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }

    /// The signal's number on Unix (and its conventional exit status less 128): 2, 15.
    pub fn number(self) -> i32 {
        match self {
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
        }
    }

    /// The value [`Interrupt::word`] holds once this signal is raised (never 0).
    pub fn code(self) -> usize {
        self.number() as usize
    }

    fn from_code(code: usize) -> Option<Self> {
        Signal::ALL.into_iter().find(|s| s.code() == code)
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The flag a signal raises to stop a run, shared by the handler and the run (clones share
/// it). The last signal raised is the one it holds.
///
/// ```
/// use mpsim_proto::interrupt::{Interrupt, Signal};
///
/// let stop = Interrupt::new();
/// assert_eq!(stop.raised(), None);
/// stop.clone().raise(Signal::Terminate);
/// assert_eq!(stop.raised(), Some(Signal::Terminate));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<AtomicUsize>);

impl Interrupt {
    /// A flag not raised.
    pub fn new() -> Self {
        Interrupt::default()
    }

    /// Raises the flag for `signal`.
    pub fn raise(&self, signal: Signal) {
        self.0.store(signal.code(), Ordering::SeqCst);
    }

    /// The signal raised, if any (a load, cheap enough for any cold path).
    pub fn raised(&self) -> Option<Signal> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            code => Signal::from_code(code),
        }
    }

    /// Lowers the flag.
    pub fn clear(&self) {
        self.0.store(0, Ordering::SeqCst);
    }

    /// The word itself, for a signal handler that can only store a number in an atomic
    /// (`signal_hook::flag::register_usize(SIGINT, word, Signal::Interrupt.code())`): it holds
    /// 0, or the [`Signal::code`] of the signal raised.
    pub fn word(&self) -> &Arc<AtomicUsize> {
        &self.0
    }
}
