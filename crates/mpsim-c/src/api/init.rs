//! Starting and ending, who am I, time, errors and their handlers.

use std::ffi::{c_char, c_double, c_int};

use mpsim_door::wire::{Op, class};

use super::{Res, comm, live, ret};
use crate::abi::*;
use crate::door;
use crate::state::{self, CommInfo, Req, raise};

fn init(call: &str) -> Res<()> {
    if state::with(|s| s.initialized) {
        return Err(raise(
            None,
            call,
            class::OTHER,
            "MPI is already initialized",
        ));
    }
    let reply = match door::simple(Op::Init, &[0, crate::site::load_bias() as i64], &[]) {
        Ok(r) => r,
        Err(f) => state::fatal(call, f.class, &f.text),
    };
    let (rank, size) = (reply.v[0] as u32, reply.v[1] as u32);
    door::measure_compute(reply.v[2] != 0);
    door::queue_calls(reply.v[3] != 0);
    state::with(|s| {
        s.initialized = true;
        s.rank = rank;
        s.size = size;
        let world = CommInfo {
            name: "MPI_COMM_WORLD".into(),
            ..CommInfo::intra(MPI_COMM_WORLD as i64, rank, size, false)
        };
        let me = CommInfo {
            members: Some(vec![rank]),
            name: "MPI_COMM_SELF".into(),
            ..CommInfo::intra(MPI_COMM_SELF as i64, 0, 1, false)
        };
        s.comms.insert(MPI_COMM_WORLD, world.into());
        s.comms.insert(MPI_COMM_SELF, me.into());
    });
    Ok(())
}

/// The text of an error class.
fn class_text(code: c_int) -> &'static str {
    match code {
        0 => "MPI_SUCCESS: no error",
        1 => "MPI_ERR_BUFFER: invalid buffer pointer",
        2 => "MPI_ERR_COUNT: invalid count argument",
        3 => "MPI_ERR_TYPE: invalid datatype",
        4 => "MPI_ERR_TAG: invalid tag",
        5 => "MPI_ERR_COMM: invalid communicator",
        6 => "MPI_ERR_RANK: invalid rank",
        7 => "MPI_ERR_REQUEST: invalid request",
        8 => "MPI_ERR_ROOT: invalid root",
        9 => "MPI_ERR_GROUP: invalid group",
        10 => "MPI_ERR_OP: invalid operation",
        11 => "MPI_ERR_TOPOLOGY: invalid topology",
        12 => "MPI_ERR_DIMS: invalid dimension argument",
        13 => "MPI_ERR_ARG: invalid argument",
        14 => "MPI_ERR_UNKNOWN: unknown error",
        15 => "MPI_ERR_TRUNCATE: message truncated",
        16 => "MPI_ERR_OTHER: other error",
        17 => "MPI_ERR_INTERN: internal error",
        18 => "MPI_ERR_PENDING: pending request",
        19 => "MPI_ERR_IN_STATUS: error code is in status",
        39 => "MPI_ERR_NO_MEM: out of memory",
        34 => "MPI_ERR_INFO: invalid info object",
        35 => "MPI_ERR_IO: input/output error",
        55 => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        58 => "MPI_ERR_PROC_ABORTED: a process aborted",
        62 => "MPI_ERR_ABI: ABI mismatch",
        _ => "unknown error code",
    }
}

/// Copies `text` into the C buffer `out` of `max` bytes (NUL included) and its length into
/// `len`.
unsafe fn put_string(text: &str, out: *mut c_char, max: usize, len: *mut c_int) {
    let n = text.len().min(max.saturating_sub(1));
    if !out.is_null() {
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr().cast(), out, n);
            *out.add(n) = 0;
        }
    }
    if !len.is_null() {
        unsafe { *len = n as c_int };
    }
}

mpi! {
    fn MPI_Init / PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
        ret(init("MPI_Init"))
    }

    fn MPI_Init_thread / PMPI_Init_thread(
        _argc: *mut c_int,
        _argv: *mut *mut *mut c_char,
        required: c_int,
        provided: *mut c_int,
    ) -> c_int {
        let r = init("MPI_Init_thread");
        if !provided.is_null() {
            // Calls are serialized (one lock); concurrent calls from threads are not offered.
            unsafe { *provided = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_SERIALIZED) };
        }
        ret(r)
    }

    fn MPI_Query_thread / PMPI_Query_thread(provided: *mut c_int) -> c_int {
        if !provided.is_null() {
            unsafe { *provided = MPI_THREAD_SERIALIZED };
        }
        0
    }

    fn MPI_Is_thread_main / PMPI_Is_thread_main(flag: *mut c_int) -> c_int {
        if !flag.is_null() {
            let main = unsafe { libc::getpid() == libc::gettid() };
            unsafe { *flag = main as c_int };
        }
        0
    }

    fn MPI_Initialized / PMPI_Initialized(flag: *mut c_int) -> c_int {
        if !flag.is_null() {
            unsafe { *flag = state::with(|s| s.initialized) as c_int };
        }
        0
    }

    fn MPI_Finalized / PMPI_Finalized(flag: *mut c_int) -> c_int {
        if !flag.is_null() {
            unsafe { *flag = state::with(|s| s.finalized) as c_int };
        }
        0
    }

    fn MPI_Finalize / PMPI_Finalize() -> c_int {
        ret((|| {
            live("MPI_Finalize")?;
            super::wait::complete_freed("MPI_Finalize")?;
            // MPI: the attributes of MPI_COMM_SELF are deleted first, newest first, while MPI
            // still works (libraries flush their state in these callbacks).
            super::attr::delete_all("MPI_Finalize", MPI_COMM_SELF)?;
            super::attr::delete_all("MPI_Finalize", MPI_COMM_WORLD)?;
            super::inter::release_hidden("MPI_Finalize")?;
            // What the program printed so far goes out before the run's report, which
            // `mpsim run` writes once every rank has finalized (a pipe's buffer would
            // otherwise be flushed at the process's exit, whenever the host runs it).
            unsafe { libc::fflush(std::ptr::null_mut()) };
            // What the program made and never freed, for the checks' leak warnings (a[0] is
            // the communicator whose error handler applies, as in every call).
            let leaks = state::with(|s| {
                let requests = s.requests.values().filter(|r| !matches!(r, Req::Send { .. } | Req::Recv { .. } | Req::Coll { .. })).count();
                [MPI_COMM_WORLD, s.groups.len(), s.types.len(), s.ops.len(), requests].map(|n| n as i64)
            });
            door::simple(Op::Finalize, &leaks, &[]).map_err(|f| state::failed(None, "MPI_Finalize", f))?;
            state::with(|s| s.finalized = true);
            Ok(())
        })())
    }

    fn MPI_Abort / PMPI_Abort(c: Handle, code: c_int) -> c_int {
        let id = state::with(|s| s.comms.get(&c).map(|c| c.id)).unwrap_or(MPI_COMM_WORLD as i64);
        let _ = door::simple(Op::Abort, &[id, code as i64], &[]);
        // The run ends; should the door be gone, end this process all the same.
        unsafe { libc::_exit(code) }
    }

    fn MPI_Comm_rank / PMPI_Comm_rank(c: Handle, rank: *mut c_int) -> c_int {
        ret(comm("MPI_Comm_rank", c).map(|info| unsafe { *rank = info.rank as c_int }))
    }

    fn MPI_Comm_size / PMPI_Comm_size(c: Handle, size: *mut c_int) -> c_int {
        ret(comm("MPI_Comm_size", c).map(|info| unsafe { *size = info.size as c_int }))
    }

    fn MPI_Get_processor_name / PMPI_Get_processor_name(name: *mut c_char, len: *mut c_int) -> c_int {
        let rank = state::with(|s| s.rank);
        let text = format!("mpsim-rank-{rank}");
        unsafe { put_string(&text, name, MPI_MAX_PROCESSOR_NAME, len) };
        0
    }

    fn MPI_Get_version / PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
        unsafe {
            *version = 5;
            *subversion = 0;
        }
        0
    }

    fn MPI_Get_library_version / PMPI_Get_library_version(out: *mut c_char, len: *mut c_int) -> c_int {
        let text = concat!("mpsim ", env!("CARGO_PKG_VERSION"), " (MPI 5.0 standard ABI)");
        unsafe { put_string(text, out, 8192, len) };
        0
    }

    fn MPI_Error_string / PMPI_Error_string(code: c_int, out: *mut c_char, len: *mut c_int) -> c_int {
        let text = match super::errh::added_class(code) {
            Some(_) => super::errh::added_string(code).unwrap_or_default(),
            None => class_text(code).to_string(),
        };
        unsafe { put_string(&text, out, MPI_MAX_ERROR_STRING, len) };
        0
    }

    fn MPI_Error_class / PMPI_Error_class(code: c_int, out: *mut c_int) -> c_int {
        unsafe { *out = super::errh::added_class(code).unwrap_or(code) };
        0
    }

    fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler(c: Handle, handler: Handle) -> c_int {
        ret((|| {
            let info = comm("MPI_Comm_set_errhandler", c)?;
            let errors_return = match handler {
                MPI_ERRORS_RETURN => true,
                MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => false,
                h if super::errh::is_program_handler(h) => true,
                _ => {
                    return Err(raise(
                        Some(c),
                        "MPI_Comm_set_errhandler",
                        MPI_ERR_ERRHANDLER,
                        &format!("{handler:#x} is not an error handler"),
                    ));
                }
            };
            super::errh::set_for(c, super::errh::is_program_handler(handler).then_some(handler));
            door::simple(Op::SetErrhandler, &[info.id, errors_return as i64], &[])
                .map_err(|f| state::failed(Some(c), "MPI_Comm_set_errhandler", f))?;
            state::with(|s| {
                if let Some(i) = s.comms.get_mut(&c) {
                    std::sync::Arc::make_mut(i).errors_return = errors_return;
                }
            });
            if let Some(x) = &info.inter {
                super::inter::set_errors("MPI_Comm_set_errhandler", x, errors_return)?;
            }
            Ok(())
        })())
    }

    fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler(c: Handle, out: *mut Handle) -> c_int {
        ret(comm("MPI_Comm_get_errhandler", c).map(|info| unsafe {
            *out = match super::errh::handler_of(c) {
                Some(h) => h,
                None if info.errors_return => MPI_ERRORS_RETURN,
                None => MPI_ERRORS_ARE_FATAL,
            };
        }))
    }

    fn MPI_Errhandler_free / PMPI_Errhandler_free(h: *mut Handle) -> c_int {
        unsafe { *h = MPI_ERRHANDLER_NULL };
        0
    }
}

/// How many `MPI_Wtime` calls in a row may return the same time before the run is stopped
/// (`MPSIM_WTIME_SAME_LIMIT` in the environment overrides it; the tests lower it).
const SAME_TIME_LIMIT: u32 = 1_000_000;

fn same_time_limit() -> u32 {
    static LIMIT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("MPSIM_WTIME_SAME_LIMIT")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(SAME_TIME_LIMIT)
    })
}

/// Stops a program that waits for `MPI_Wtime` to move when nothing can move it: under
/// `--compute modeled` the program's own code takes no virtual time, so a loop such as
/// `while (MPI_Wtime() - t0 < delay) work();` (benchmarks' "dummy compute") would never end.
/// After [`SAME_TIME_LIMIT`] calls in a row at one virtual time (about 40 s of host time) the run ends with an error that
/// says so, instead of hanging. Any call that takes virtual time (a poll, a message, measured
/// compute) breaks the streak.
fn same_time_guard(now_ns: i64) {
    use std::sync::atomic::{AtomicI64, AtomicU32, Ordering::Relaxed};
    static LAST: AtomicI64 = AtomicI64::new(-1);
    static STREAK: AtomicU32 = AtomicU32::new(0);
    if LAST.swap(now_ns, Relaxed) != now_ns {
        STREAK.store(0, Relaxed);
        return;
    }
    let limit = same_time_limit();
    if STREAK.fetch_add(1, Relaxed) + 1 >= limit {
        state::fatal(
            "MPI_Wtime",
            class::OTHER,
            &format!(
                "called {limit} times in a row at virtual time {now_ns} ns: the program waits for \
                 time to pass, but under --compute modeled its own code takes no virtual time \
                 (only MPI calls and explicit compute do), so the wait would never end; \
                 run with --compute measured"
            ),
        );
    }
}

mpi! {
    /// `MPI_Wtime`: virtual time in a simulated run, in seconds.
    fn MPI_Wtime / PMPI_Wtime() -> c_double {
        if live("MPI_Wtime").is_err() {
            return 0.0;
        }
        match door::simple(Op::Wtime, &[], &[]) {
            Ok(r) => {
                same_time_guard(r.v[0]);
                r.v[0] as f64 * 1e-9
            }
            Err(f) => {
                state::failed(None, "MPI_Wtime", f);
                0.0
            }
        }
    }
}

/// `MPI_Wtick`: one nanosecond, the clock's unit.
#[unsafe(no_mangle)]
pub extern "C" fn PMPI_Wtick() -> c_double {
    1e-9
}

/// `MPI_Wtick`.
#[unsafe(no_mangle)]
pub extern "C" fn MPI_Wtick() -> c_double {
    1e-9
}
