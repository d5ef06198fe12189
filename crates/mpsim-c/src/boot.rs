//! Starting the ranks: the library's constructor forks one process per rank before `main`.
//!
//! `mpsim run` starts the program once, with the shared segment's descriptor in
//! `MPSIM_DOOR_FD`. This constructor runs before the program's own constructors and `main`
//! (the library is a dependency of the executable): it maps the segment and forks one child
//! per rank. Each child is a rank from the first line of `main` on, so globals, thread-locals,
//! `static`s of other libraries and `atexit` handlers behave as under `mpirun`, and nothing of
//! the program is copied per rank beyond what fork shares copy-on-write. The original process
//! becomes the ranks' *zygote*: it only waits for them, records in each slot how its rank
//! ended, and exits with the run's status.
//!
//! No orphans: each rank dies with the zygote (`PR_SET_PDEATHSIG`), the zygote with `mpsim
//! run`, and `mpsim run` kills the whole process group when the run ends. A rank waits for
//! its proxy's first turn before `main`, so in a simulated run exactly one rank runs at a time
//! from the start.
//!
//! Without `MPSIM_DOOR_FD` the constructor does nothing, and `MPI_Init` says the program must
//! be started by `mpsim run`.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use mpsim_door::channel::{Channel, Side};
use mpsim_door::segment::{Segment, end};
use mpsim_door::{ENV_FD, ENV_RANKS};

/// This process's rank and channel, once forked.
pub struct Booted {
    /// World rank.
    pub rank: u32,
    /// World size.
    pub size: u32,
    /// The channel to the proxy.
    pub channel: Channel<'static>,
}

static BOOTED: OnceLock<Booted> = OnceLock::new();

/// This rank's door, if the program was started by `mpsim run`.
pub fn booted() -> Option<&'static Booted> {
    BOOTED.get()
}

#[used]
#[unsafe(link_section = ".init_array")]
static BOOT: extern "C" fn() = boot;

extern "C" fn boot() {
    let Some(fd) = std::env::var(ENV_FD)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return;
    };
    // Programs the ranks start (`system`, `popen`) are not ranks.
    // SAFETY: single-threaded: no `main` yet, no other thread.
    unsafe {
        std::env::remove_var(ENV_FD);
        std::env::remove_var(ENV_RANKS);
    }
    let segment = match Segment::open(fd) {
        Ok(s) => s.leak(),
        Err(e) => die(&format!("cannot open mpsim's shared segment: {e}")),
    };
    let parent = unsafe { libc::getppid() };
    // The zygote dies with `mpsim run`.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if unsafe { libc::getppid() } != parent {
        unsafe { libc::_exit(1) };
    }
    let size = segment.ranks();
    let zygote = unsafe { libc::getpid() };
    segment.header().zygote_pid.store(zygote, Ordering::Relaxed);
    // pid -> rank (a map: the zygote reaps each as it ends, tens of thousands at scale).
    let mut children = HashMap::with_capacity(size as usize);
    for rank in 0..size {
        // SAFETY: no other thread exists in this process yet.
        match unsafe { libc::fork() } {
            -1 => {
                let e = std::io::Error::last_os_error();
                for &pid in children.keys() {
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                die(&format!("cannot fork rank {rank}: {e}"));
            }
            0 => {
                // The child is rank `rank` from here on: on to `main`.
                become_rank(segment, rank, size, zygote);
                return;
            }
            pid => {
                children.insert(pid, rank);
            }
        }
    }
    segment.header().forked.store(1, Ordering::Release);
    let status = zygote_wait(segment, &mut children);
    unsafe { libc::_exit(status) };
}

/// The child's side: wait for the proxy's first turn, then go on to `main` as `rank`.
fn become_rank(segment: &'static Segment, rank: u32, size: u32, zygote: i32) {
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if unsafe { libc::getppid() } != zygote {
        unsafe { libc::_exit(1) };
    }
    let slot = segment.slot(rank);
    slot.control()
        .pid
        .store(unsafe { libc::getpid() }, Ordering::Relaxed);
    let one_cpu = segment.header().one_cpu.load(Ordering::Relaxed) == 1;
    let channel = Channel::new(slot, Side::Rank).on_one_cpu(one_cpu);
    // The proxy gives the first turn when the run starts this rank.
    if channel.wait_turn(None).is_err() {
        unsafe { libc::_exit(1) };
    }
    crate::door::started();
    let _ = BOOTED.set(Booted {
        rank,
        size,
        channel,
    });
}

/// The zygote's side: reap every rank, record how it ended, and give the run's status: 0 when
/// every rank exited 0, else the first nonzero exit code, or 128 + the signal.
fn zygote_wait(segment: &Segment, children: &mut HashMap<i32, u32>) -> i32 {
    let mut status_of_run = 0;
    while !children.is_empty() {
        let mut status = 0;
        // SAFETY: waiting for our children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        let Some(rank) = children.remove(&pid) else {
            continue;
        };
        let control = segment.slot(rank).control();
        let (how, value) = if libc::WIFSIGNALED(status) {
            (end::SIGNALED, libc::WTERMSIG(status))
        } else {
            (end::EXITED, libc::WEXITSTATUS(status))
        };
        control.end_value.store(value, Ordering::Relaxed);
        control.end.store(how, Ordering::Release);
        mpsim_door::channel::mark_dead(control);
        if status_of_run == 0 && (how == end::SIGNALED || value != 0) {
            status_of_run = if how == end::SIGNALED {
                128 + value
            } else {
                value
            };
        }
    }
    status_of_run
}

fn die(what: &str) -> ! {
    eprintln!("mpsim: {what}");
    unsafe { libc::_exit(127) }
}
