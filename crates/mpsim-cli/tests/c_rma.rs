//! One-sided communication (MPI RMA) in the C door: `tests/c/rma.c` built by `mpsim cc` and
//! run by `mpsim run`, simulated and on threads. The program checks its own results (windows,
//! fence, post/start/complete/wait and lock epochs, put, get, the accumulates, derived datatypes,
//! the error classes under `MPI_ERRORS_RETURN`); misuse under the default
//! `MPI_ERRORS_ARE_FATAL` ends the run naming the rank and the call.

#[path = "common/c_door.rs"]
mod c_lib;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

const MPSIM: &str = env!("CARGO_BIN_EXE_mpsim");

/// `tests/c/rma.c` built once.
fn program() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let exe = dir.path().join("rma");
    if !exe.exists() {
        c_lib::build("rma", &exe);
    }
    exe
}

/// `mpsim run ARGS ./rma PROG_ARGS` (without cargo's `LD_LIBRARY_PATH`, as `c_door.rs` says).
fn run(args: &[&str], prog_args: &[&str]) -> Output {
    Command::new(MPSIM)
        .env_remove("LD_LIBRARY_PATH")
        .arg("run")
        .args(args)
        .arg(program())
        .args(prog_args)
        .output()
        .expect("mpsim run runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn rma_windows_fence_pscw_locks_put_get_accumulates_give_what_mpi_requires() {
    for np in ["1", "2", "3", "5"] {
        let out = run(&["-np", np, "--report-out", "/dev/null"], &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "rma: ok\n", "np {np}");
    }
    let out = run(&["-np", "4", "--backend", "threads"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "rma: ok\n");
}

/// Simulated twice and in parallel with modeled compute: the same report byte for byte.
#[test]
fn rma_simulated_run_is_deterministic() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = |extra: &[&str], n: u32| {
        let path = dir.path().join(format!("report{n}.txt"));
        let arg = path.to_str().expect("a UTF-8 path").to_string();
        let mut args = vec!["-np", "4", "--compute", "modeled", "--report-out", &arg];
        args.extend_from_slice(extra);
        let out = run(&args, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "rma: ok\n");
        std::fs::read(&path).expect("the report is written")
    };
    let a = report(&[], 0);
    assert_eq!(a, report(&[], 1));
    assert_eq!(a, report(&["--sim-threads", "2"], 2));
}

/// `rma WHAT` on 3 ranks, simulated then on threads: fails, naming rank 1 and `says`.
fn fails_naming(what: &str, says: &[&str]) {
    for backend in ["sim", "threads"] {
        let out = run(&["-np", "3", "--backend", backend], &[what]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what} on {backend}: {err}");
        assert!(err.contains("rank 1 failed"), "{what} on {backend}: {err}");
        for s in says {
            assert!(err.contains(s), "{what} on {backend}: {s:?} not in {err}");
        }
    }
}

#[test]
fn rma_put_out_of_window_is_an_error() {
    fails_naming(
        "range",
        &[
            "MPI_Put from",
            "bytes 56..72 of rank 2's window",
            "it has 64 bytes",
            "(MPI error class 48)",
        ],
    );
}

#[test]
fn rma_target_rank_out_of_range_is_an_error() {
    fails_naming(
        "rank",
        &[
            "MPI_Put from",
            "target rank 6 is not in the window's group of 3 ranks",
        ],
    );
}

#[test]
fn rma_call_outside_an_epoch_is_an_error() {
    fails_naming(
        "epoch",
        &[
            "MPI_Put from",
            "no access epoch is open at rank 1 for rank 2",
            "(MPI error class 50)",
        ],
    );
}

#[test]
fn rma_window_freed_with_an_epoch_open_is_an_error() {
    fails_naming(
        "free",
        &[
            "MPI_Win_free from",
            "an access epoch is open",
            "(MPI error class 50)",
        ],
    );
}

#[test]
fn rma_conflicting_puts_in_one_epoch_are_an_error_at_the_target() {
    let out = run(&["-np", "3", "--report-out", "/dev/null"], &["conflict"]);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("rank 0 failed")
            && err.contains("MPI_Win_fence from")
            && err.contains("MPI_Put from rank 1 and MPI_Put from rank 2 both reach bytes 8..12 of rank 0's window in one epoch")
            && err.contains("(MPI error class 47)"),
        "{err}"
    );
}

#[test]
fn rma_origin_buffer_written_before_completion_is_an_error() {
    let out = run(&["-np", "3", "--report-out", "/dev/null"], &["written"]);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("rank 1 failed")
            && err.contains("the origin buffer of an MPI_Put to rank 0 was written before the operation completed")
            && err.contains("(MPI error class 47)"),
        "{err}"
    );
}
