//! The mpsim side of the C door (`mpsim run`): starts a C MPI program built with `mpsim cc`,
//! whose library forks one process per rank, and runs one proxy per rank in an ordinary mpsim
//! run (simulated or on threads), each executing its rank's MPI calls with `Comm`.
//!
//! Layering: the proxies are programs of the API layer like any Rust program, so the protocol
//! core and the simulator do not know a C rank from a Rust one; reports, traces, deadlock and
//! misuse reports are the same. What this crate adds is the process side: the shared segment
//! (`mpsim_door`), the start, and the end: the program runs in a process group of its own,
//! killed whole when the run ends with an error, so no rank process outlives the run; the
//! segment is a `memfd`, so nothing is left in `/dev/shm`.
//!
//! ```no_run
//! use mpsim::RunConfig;
//! use mpsim_proxy::{CProgram, run};
//! let status = run(RunConfig::new(4), true, &CProgram { path: "./ring".into(), args: vec![] });
//! ```

mod checks;
mod coll;
mod comms;
mod cpu;
mod exec;
mod longdouble;
mod proxy;
mod reduce;
mod site;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mpsim::{Comm, Error, Launcher, RunConfig};
use mpsim_door::segment::Segment;
use mpsim_door::{ENV_FD, ENV_RANKS};

pub use checks::{Finding, classify, write_findings};

/// Bytes of each rank's slot in the shared segment: messages larger than its data area cross
/// in chunks. Address space only: pages are touched as used.
pub const SLOT_BYTES: usize = 256 * 1024;

/// A C program to run, and its arguments.
#[derive(Clone, Debug)]
pub struct CProgram {
    /// The executable.
    pub path: PathBuf,
    /// Its arguments (each rank gets them all).
    pub args: Vec<OsString>,
}

/// How a C run ended.
#[derive(Debug)]
pub struct Ended {
    /// The run's first error, if any (already reported, with the report and trace the
    /// configuration asked for).
    pub error: Option<Error>,
    /// The program's exit status when the run succeeded: 0 when every rank exited 0, else the
    /// first nonzero status (128 + signal for a rank killed by one).
    pub status: i32,
    /// What the checks of the program against MPI's rules found (`checks`), in order of
    /// virtual time.
    pub findings: Vec<Finding>,
}

/// Runs `program` on `config.ranks` ranks as `config` says (backend, model, report, trace).
/// `charge_compute`: each rank's CPU time between two MPI calls is charged as its compute
/// (the simulator's `--compute measured`).
pub fn run(config: RunConfig, charge_compute: bool, program: &CProgram) -> Ended {
    let failed = |e: Error| Ended {
        error: Some(e),
        status: 1,
        findings: Vec::new(),
    };
    let ranks = config.ranks;
    let segment = match Segment::create(ranks, SLOT_BYTES) {
        Ok(s) => s,
        Err(e) => {
            return failed(Error::NoMemory {
                what: format!("the shared segment for {ranks} ranks: {e}"),
            });
        }
    };
    // Simulated on one thread: the program's processes and this thread share one CPU.
    let pinned = (config.backend == mpsim::Backend::Sim && config.sim_threads <= 1)
        .then(cpu::pin)
        .flatten();
    segment
        .header()
        .one_cpu
        .store(u32::from(pinned.is_some()), Ordering::Relaxed);
    let mut child = match Command::new(&program.path)
        .args(&program.args)
        .env(ENV_FD, segment.fd().to_string())
        .env(ENV_RANKS, ranks.to_string())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return failed(Error::InvalidArgument {
                what: format!("cannot start {}: {e}", program.path.display()),
            });
        }
    };
    if let Err(e) = wait_forked(&segment, &mut child, program) {
        kill_group(&mut child);
        return failed(e);
    }
    // Calls that need no answer wait in the rank's slot for the next one in a simulated run
    // (virtual time is the same); on threads each leaves when made, as a real send would.
    let queue_calls = config.backend == mpsim::Backend::Sim;
    // A buffered send that does not fit is the program's to handle under
    // `MPI_ERRORS_RETURN`; where errors are fatal the proxy ends the run with it.
    let launcher = Launcher::with_config(config).bsend_overflow_returns(true);
    let segment_ref = &segment;
    let ledger = checks::Checks::new(program.path.clone(), ranks);
    let checks = &ledger;
    let result = launcher.run(move |world: Comm| async move {
        proxy::Proxy::new(segment_ref, world, charge_compute, queue_calls, checks)
            .serve()
            .await
    });
    drop(pinned);
    let findings = ledger.findings();
    match result {
        Ok(()) => {
            let status = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
            Ended {
                error: None,
                status,
                findings,
            }
        }
        Err(mut e) => {
            kill_group(&mut child);
            ledger.sites.name_calls(&mut e);
            Ended {
                error: Some(e),
                status: 1,
                findings,
            }
        }
    }
}

/// Waits until the program's library has forked the ranks; an error if the program ends
/// first (not built with `mpsim cc`, or it failed to load).
fn wait_forked(segment: &Segment, child: &mut Child, program: &CProgram) -> Result<(), Error> {
    let start = Instant::now();
    loop {
        if segment.header().forked.load(Ordering::Acquire) == 1 {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::InvalidArgument {
                what: format!(
                    "{} ended ({status}) without starting its ranks: was it built with `mpsim \
                     cc` (linked to mpsim's MPI library)?",
                    program.path.display()
                ),
            });
        }
        if start.elapsed() > Duration::from_secs(60) {
            return Err(Error::InvalidArgument {
                what: format!(
                    "{} did not start its ranks within 60 s: was it built with `mpsim cc`?",
                    program.path.display()
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Kills the program's whole process group (the zygote and every rank) and waits, up to 5 s,
/// until none of them is left.
fn kill_group(child: &mut Child) {
    let pgid = child.id() as i32;
    // SAFETY: signals to the group we created (`process_group(0)`).
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.wait();
    let start = Instant::now();
    while unsafe { libc::kill(-pgid, 0) } == 0 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
}
