//! The harness of the BSPlib tests (`bsp_*.rs`): `bsp_both!` makes a `_sim` and a `_threads`
//! test of one function, each run happens on a helper thread with a generous cap (a hang fails
//! its test instead of the suite; this bounds the run, it asserts nothing about speed), and a
//! [`Record`] collects what each process saw, errors included, for the test to check after
//! the run.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mpsim::bsp::{self, Ctx};
use mpsim::sim::Outcome;
use mpsim::{Backend, BspErrorKind, Error, Launcher, Result};

/// A run still going after this long fails its test (hang guard only).
pub const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Two tests per behaviour: `$sim` and `$threads` run `$body(Backend::Sim)` and
/// `$body(Backend::Threads)`.
#[allow(unused_macros)]
macro_rules! bsp_both {
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

/// Runs `f` on a helper thread, failing the test if it takes longer than [`TIME_LIMIT`].
pub fn bounded<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("bsp-launcher".into())
        .spawn(move || {
            let out = std::panic::catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(out);
        })
        .expect("spawning the launcher thread");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(RecvTimeoutError::Timeout) => panic!("no result after {TIME_LIMIT:?}: the run hangs"),
        Err(RecvTimeoutError::Disconnected) => panic!("the launcher thread died"),
    }
}

/// Runs `program` on `p` processes of `backend`; the run's result.
pub fn run<F, Fut>(p: u32, backend: Backend, program: F) -> Result<()>
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    bounded(move || bsp::run_with(&Launcher::new(p).backend(backend), program))
}

/// Runs `program`; the run must succeed.
#[track_caller]
pub fn run_ok<F, Fut>(p: u32, backend: Backend, program: F)
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    if let Err(e) = run(p, backend, program) {
        panic!("the run failed: {e}");
    }
}

/// Simulates `program` with `launcher`.
pub fn simulate<F, Fut>(launcher: Launcher, program: F) -> Outcome
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    bounded(move || bsp::simulate(&launcher, program))
}

/// What the processes of a run saw, by pid and name.
#[derive(Clone, Default)]
pub struct Record(Arc<Mutex<BTreeMap<(u32, String), String>>>);

impl Record {
    /// Notes `what` under `pid` and `name`.
    pub fn put(&self, pid: u32, name: &str, what: impl std::fmt::Debug) {
        self.0
            .lock()
            .unwrap()
            .insert((pid, name.to_string()), format!("{what:?}"));
    }

    /// What `pid` noted under `name`.
    #[track_caller]
    pub fn get(&self, pid: u32, name: &str) -> String {
        self.0
            .lock()
            .unwrap()
            .get(&(pid, name.to_string()))
            .cloned()
            .unwrap_or_else(|| panic!("pid {pid} noted no {name}"))
    }
}

/// The BSP error kind of `e`; panics if it is not a BSP error.
#[track_caller]
pub fn kind(e: &Error) -> &BspErrorKind {
    match e {
        Error::Bsp(b) => &b.kind,
        other => panic!("not a BSP error: {other}"),
    }
}
