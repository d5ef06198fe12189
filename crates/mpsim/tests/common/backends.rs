//! The harness of the tests that run one program on both backends (`p2p_backends.rs`,
//! `p2p_errors.rs`, which include it as a `#[macro_use]` module): `on_both!` makes a `_sim` and a
//! `_threads` test of one function, and each run happens on a helper thread with a generous
//! cap ([`TIME_LIMIT`]), so that a library bug that hangs fails its test instead of the whole
//! suite. This bounds the run, it asserts nothing about speed.
#![allow(dead_code)]

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use mpsim::{Backend, Comm, Error, Launcher, Result};

/// A run still going after this long fails its test (hang guard only, see the module docs).
pub const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Two tests per behaviour: `$sim` and `$threads` run `$body(Backend::Sim)` and
/// `$body(Backend::Threads)`.
macro_rules! on_both {
    ($body:ident => $sim:ident, $threads:ident) => {
        #[test]
        fn $sim() {
            $body(Backend::Sim);
        }

        #[test]
        fn $threads() {
            $body(Backend::Threads);
        }
    };
}

pub fn launcher(ranks: u32, backend: Backend) -> Launcher {
    Launcher::new(ranks).backend(backend)
}

/// How a run ended.
pub enum Ended {
    /// `Launcher::run` returned.
    Returned(Result<()>),
    /// A panic escaped `Launcher::run` (the simulator does not catch a rank's panic).
    Panicked(String),
}

/// Runs `program` on a helper thread; fails the test if there is no result after
/// [`TIME_LIMIT`].
pub fn run_bounded<F, Fut>(launcher: Launcher, program: F) -> Ended
where
    F: Fn(Comm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("p2p-backends-launcher".into())
        .spawn(move || {
            let out = std::panic::catch_unwind(AssertUnwindSafe(|| launcher.run(program)));
            let _ = tx.send(match out {
                Ok(result) => Ended::Returned(result),
                Err(panic) => Ended::Panicked(panic_text(panic.as_ref())),
            });
        })
        .expect("spawning the launcher thread");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(ended) => ended,
        Err(RecvTimeoutError::Timeout) => panic!("no result after {TIME_LIMIT:?}: the run hangs"),
        Err(RecvTimeoutError::Disconnected) => panic!("the launcher thread died"),
    }
}

/// Runs `program`; the run must succeed.
#[track_caller]
pub fn run_ok<F, Fut>(launcher: Launcher, program: F)
where
    F: Fn(Comm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    match run_bounded(launcher, program) {
        Ended::Returned(Ok(())) => {}
        Ended::Returned(Err(e)) => panic!("the run failed: {e}"),
        Ended::Panicked(p) => panic!("a rank panicked: {p}"),
    }
}

/// Runs `program`; the run must fail (not panic) and the error is returned.
#[track_caller]
pub fn run_err<F, Fut>(launcher: Launcher, program: F) -> Error
where
    F: Fn(Comm) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    match run_bounded(launcher, program) {
        Ended::Returned(Ok(())) => panic!("the run succeeded; an error was expected"),
        Ended::Returned(Err(e)) => e,
        Ended::Panicked(p) => panic!("a panic escaped Launcher::run: {p}"),
    }
}

pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
