//! Ctrl-C (`SIGINT`) and `SIGTERM` during [`crate::Launcher::run`]: the first stops the run
//! where it is, so that it still writes its report and trace of what ran; a second ends the
//! process at once, as the signal would have without mpsim (for a run that does not stop soon
//! enough: a rank of a threads run that only computes, a huge trace being written).
//!
//! Why a module: signal handlers belong to the process, not to a run. They are installed once
//! (`signal-hook`, which runs them as async-signal-safe stores into atomics) and stay; outside
//! runs they do what the signal's default does (end the process), so a program that runs
//! mpsim and then does something else keeps Ctrl-C as it was. While a run listens
//! ([`listen`]), a signal raises the run's [`Interrupt`], which the backends look for at their
//! cold points (the simulator every 64 events, the threads backend's watchdog every 1 to
//! 50 ms).
//!
//! States: `kill_now` true (outside runs, or after a first signal in one): a signal ends the
//! process; false (a run listens, no signal yet): a signal raises the flag and sets `kill_now`.
//! `runs` counts the runs listening (runs of one process at once share the flag: a signal
//! stops them all).
//!
//! Not handled: a process started with `SIGINT` ignored (a background job of a
//! non-interactive shell) is still stopped by one during a run.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use mpsim_proto::interrupt::{Interrupt, Signal};

/// The handlers, installed once per process.
struct Handlers {
    interrupt: Interrupt,
    kill_now: Arc<AtomicBool>,
    runs: AtomicUsize,
}

static HANDLERS: OnceLock<Option<Handlers>> = OnceLock::new();

/// Installs the handlers (first call only); `None` if the system refused one (the run then
/// cannot be interrupted but by the signal's default).
fn handlers() -> Option<&'static Handlers> {
    HANDLERS
        .get_or_init(|| {
            let h = Handlers {
                interrupt: Interrupt::new(),
                kill_now: Arc::new(AtomicBool::new(true)),
                runs: AtomicUsize::new(0),
            };
            let installed = Signal::ALL.into_iter().try_for_each(|signal| {
                let n = signal.number();
                // In this order: the default first, while `kill_now` still holds what it held
                // before this signal; then the flags.
                signal_hook::flag::register_conditional_default(n, Arc::clone(&h.kill_now))?;
                signal_hook::flag::register(n, Arc::clone(&h.kill_now))?;
                signal_hook::flag::register_usize(
                    n,
                    Arc::clone(h.interrupt.word()),
                    signal.code(),
                )?;
                Ok::<(), std::io::Error>(())
            });
            installed.ok().map(|()| h)
        })
        .as_ref()
}

/// A run listening for signals: from [`listen`] to its drop.
pub(crate) struct Listening {
    handlers: &'static Handlers,
}

/// Starts listening for `SIGINT` and `SIGTERM` for a run (the first run of the process
/// installs the handlers): a first signal raises [`Listening::interrupt`], a second ends the
/// process. `None` where the handlers could not be installed.
pub(crate) fn listen() -> Option<Listening> {
    let handlers = handlers()?;
    if handlers.runs.fetch_add(1, Ordering::SeqCst) == 0 {
        handlers.interrupt.clear();
        handlers.kill_now.store(false, Ordering::SeqCst);
    }
    Some(Listening { handlers })
}

impl Listening {
    /// The flag a signal raises.
    pub(crate) fn interrupt(&self) -> &Interrupt {
        &self.handlers.interrupt
    }
}

impl Drop for Listening {
    /// The last run listening gives signals back their default.
    fn drop(&mut self) {
        if self.handlers.runs.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.handlers.kill_now.store(true, Ordering::SeqCst);
        }
    }
}

/// The signal that asked the runs of this process to stop, while one listens (see
/// [`crate::stop_requested`]).
pub(crate) fn raised() -> Option<Signal> {
    let h = HANDLERS.get()?.as_ref()?;
    if h.runs.load(Ordering::SeqCst) == 0 {
        return None;
    }
    h.interrupt.raised()
}
