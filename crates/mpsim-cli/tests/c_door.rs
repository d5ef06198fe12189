//! The C door end to end: C programs of ours (`tests/c/`), built by `mpsim cc` and run by
//! `mpsim run`, simulated and on threads; each checks its own results. Misuse and crashes end
//! the run with a report naming the rank and call, never a hang, and leave no process behind.
//!
//! The MPI library is a `cdylib`, which `cargo test` does not build: the first test builds it
//! once (`cargo build -p mpsim-c`, into a target directory of its own) and points `mpsim cc` at
//! it with `MPSIM_LIB_DIR`.

#[path = "common/c_door.rs"]
mod c_lib;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

const MPSIM: &str = env!("CARGO_BIN_EXE_mpsim");

/// `tests/c/<name>.c` built by `mpsim cc`, once per name.
fn program(name: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let exe = dir.path().join(name);
    if !exe.exists() {
        c_lib::build(name, &exe);
    }
    exe
}

/// `mpsim run ARGS` with `PROGRAM` and its arguments. Without cargo's `LD_LIBRARY_PATH`,
/// which names `target/debug` and would win over the program's run path to the library this
/// test built (a `libmpsim_mpi.so` left in `target/debug` by an older build is not this one).
fn run(args: &[&str], name: &str, prog_args: &[&str]) -> Output {
    let exe = program(name);
    Command::new(MPSIM)
        .env_remove("LD_LIBRARY_PATH")
        .arg("run")
        .args(args)
        .arg(&exe)
        .args(prog_args)
        .output()
        .expect("mpsim run runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs of the `misuse` program one at a time, so that each check for processes left behind
/// sees only its own run's.
static MISUSE_ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `misuse WHAT` on `np` ranks; checks that no process of it is left once `mpsim run`
/// returned. One at a time, so that the check sees only its own run's processes.
fn misuse(np: &str, what: &str) -> Output {
    let _guard = MISUSE_ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let out = run(&["-np", np], "misuse", &[what]);
    let left = Command::new("pgrep")
        .arg("-x")
        .arg("misuse")
        .output()
        .expect("pgrep");
    assert!(
        left.stdout.is_empty(),
        "processes left after {what}: {}",
        text(&left.stdout)
    );
    out
}

#[test]
fn c_ring_runs_simulated_and_on_threads() {
    for np in ["1", "2", "5"] {
        let out = run(&["-np", np, "--report-out", "/dev/null"], "ring", &["3"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("ok"), "{}", text(&out.stdout));
    }
    let out = run(&["-np", "4", "--backend", "threads"], "ring", &["10"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "ring: token 40 after 10 laps, sum 10, ok\n"
    );
}

/// Runs `tests/c/NAME.c` simulated on each of `nps` ranks and on threads on `threads_np`;
/// each run must succeed and print `NAME: ok` alone.
fn prints_ok_simulated_and_on_threads(name: &str, nps: &[&str], threads_np: &str) {
    let want = format!("{name}: ok\n");
    for np in nps {
        let out = run(&["-np", np, "--report-out", "/dev/null"], name, &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want, "np {np}");
    }
    let out = run(&["-np", threads_np, "--backend", "threads"], name, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn c_first_milestone_functions_give_what_mpi_requires() {
    prints_ok_simulated_and_on_threads("features", &["1", "2", "3", "4", "7"], "4");
}

#[test]
fn c_library_support_attributes_handlers_info_groups_arrays_give_what_mpi_requires() {
    prints_ok_simulated_and_on_threads("library", &["1", "2", "4"], "3");
}

#[test]
fn c_neighborhood_collectives_on_grids_and_graphs_give_what_mpi_requires() {
    prints_ok_simulated_and_on_threads("neighbor", &["1", "2", "4", "6"], "6");
}

#[test]
fn c_intercommunicators_and_comm_create_group_give_what_mpi_requires() {
    prints_ok_simulated_and_on_threads("intercomm", &["1", "2", "3", "5", "6"], "5");
}

/// An intercommunicator program, simulated twice and in parallel: the same report and trace
/// byte for byte (`--compute modeled`). The report goes to a file: on standard output it
/// would interleave with the program's own output, which a rank flushes when its process
/// exits, after `MPI_Finalize`, as the host schedules it (`docs/c.md`).
#[test]
fn c_intercommunicator_run_is_deterministic_with_modeled_compute() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let outputs = |extra: &[&str], n: u32| {
        let trace = dir.path().join(format!("trace{n}.json"));
        let report = dir.path().join(format!("report{n}.txt"));
        let (trace_arg, report_arg) = (
            trace.to_str().expect("a UTF-8 path").to_string(),
            report.to_str().expect("a UTF-8 path").to_string(),
        );
        let mut args = vec![
            "-np",
            "5",
            "--compute",
            "modeled",
            "--trace",
            &trace_arg,
            "--report-out",
            &report_arg,
        ];
        args.extend_from_slice(extra);
        let out = run(&args, "intercomm", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "intercomm: ok\n");
        (
            std::fs::read(&report).expect("the report is written"),
            std::fs::read(&trace).expect("the trace is written"),
        )
    };
    let a = outputs(&[], 0);
    assert_eq!(a, outputs(&[], 1));
    assert_eq!(a, outputs(&["--sim-threads", "2"], 2));
}

/// `checks WHAT` on 3 ranks, simulated.
fn checks(what: &str) -> Output {
    run(
        &["-np", "3", "--report-out", "/dev/null"],
        "checks",
        &[what],
    )
}

#[test]
fn c_check_collective_mismatch_is_found_by_class() {
    for (what, says) in [
        ("coll_root", "roots differ (0 and 1)"),
        ("coll_op", "operations differ (MPI_SUM and MPI_MAX)"),
        (
            "coll_type",
            "4 x MPI_INT to rank 1, which expects 4 x MPI_FLOAT",
        ),
        (
            "coll_count",
            "sends 2 x MPI_INT (8 bytes) to rank 0, which expects 1 x MPI_INT",
        ),
        ("coll_kind", "different collectives"),
    ] {
        let out = checks(what);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what}: {err}");
        assert!(
            err.contains("mpsim: finding [collective-mismatch] MPI_COMM_WORLD")
                && err.contains(says),
            "{what}: {err}"
        );
    }
}

/// A message's type signature against its receive's (MPI 3.3.1), whether the send and the
/// receive were queued by the rank (a blocking or nonblocking send, a nonblocking receive) or
/// not; the same findings sequential or parallel.
#[test]
fn c_check_point_to_point_type_mismatch_is_found_by_class() {
    for (what, recv) in [
        ("p2p_type", "2 x MPI_FLOAT (MPI_Recv"),
        ("p2p_isend", "2 x MPI_FLOAT (MPI_Recv"),
        ("p2p_size", "1 x MPI_DOUBLE (MPI_Irecv"),
    ] {
        let out = checks(what);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what}: {err}");
        assert_eq!(
            err.matches("mpsim: finding [type-mismatch] MPI_COMM_WORLD")
                .count(),
            1,
            "{what}: {err}"
        );
        assert!(
            err.contains("rank 0 sent 2 x MPI_INT with tag 7")
                && err.contains(&format!("rank 1 received it as {recv}")),
            "{what}: {err}"
        );
        // Virtual times are the same byte for byte under a modeled compute.
        let modeled = |threads: &str| {
            let args = [
                "-np",
                "3",
                "--report-out",
                "/dev/null",
                "--compute",
                "modeled",
            ];
            let mut args = args.to_vec();
            args.extend(["--sim-threads", threads]);
            text(&run(&args, "checks", &[what]).stderr)
        };
        assert_eq!(modeled("1"), modeled("2"), "{what}");
    }
}

#[test]
fn c_check_correct_programs_make_no_finding() {
    for what in ["coll_ok", "p2p_ok"] {
        let out = checks(what);
        assert!(out.status.success(), "{what}: {}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("finding"),
            "{what}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn c_check_communicators_never_freed_are_a_warning() {
    let out = checks("comm_leak");
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The call's source line comes after its name (`tests/c_sites.rs`).
    assert!(
        err.contains(
            "mpsim: finding [comm-leak, warning] rank 1: MPI_Finalize from tests/c/checks.c:"
        ) && err.contains(" in main with 2 communicators never freed"),
        "{err}"
    );
}

#[test]
fn c_check_objects_never_freed_are_warnings_by_class() {
    let out = checks("object_leak");
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    for (class, what) in [
        ("group-leak", "1 group never freed (MPI_Group_free)"),
        ("type-leak", "1 datatype never freed (MPI_Type_free)"),
        ("op-leak", "1 operation never freed (MPI_Op_free)"),
        (
            "request-leak",
            "1 inactive or completed request never freed",
        ),
    ] {
        // `MPI_Finalize from FILE:LINE in main with ...`: the call's source line after its name.
        let line = err
            .lines()
            .find(|l| l.contains(&format!("[{class}, warning] rank 1: MPI_Finalize from ")))
            .unwrap_or_else(|| panic!("{class}: {err}"));
        assert!(line.contains(&format!(" in main with {what}")), "{line}");
    }
    assert!(
        err.contains("mpsim: findings: 0 errors, 4 warnings"),
        "{err}"
    );
}

/// A receive's buffer, and a nonblocking collective's buffers, written before the call
/// completes: MPI forbids it, and the completion finds it (a checksum taken at the post).
#[test]
fn c_buffers_written_while_their_call_is_in_flight_are_reported() {
    for (what, kind) in [
        ("recv_inflight", "receive"),
        ("icoll_send_inflight", "collective"),
        ("icoll_recv_inflight", "collective"),
    ] {
        let out = misuse("3", what);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what}: {err}");
        assert!(
            err.contains("rank 1")
                && err.contains(&format!(
                    "written while its nonblocking {kind} was in flight"
                ))
                && err.contains("mpsim: finding [buffer-in-flight] the run's error"),
            "{what}: {err}"
        );
    }
}

#[test]
fn c_simulated_run_is_deterministic_with_modeled_compute() {
    let report = |extra: &[&str]| {
        let mut args = vec!["-np", "6", "--compute", "modeled"];
        args.extend_from_slice(extra);
        let out = run(&args, "features", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        out.stdout
    };
    let a = report(&[]);
    assert_eq!(a, report(&[]));
    assert_eq!(a, report(&["--sim-threads", "2"]));
}

#[test]
fn c_crashed_rank_is_reported_with_signal_and_last_call() {
    let out = misuse("3", "segv");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 1")
            && err.contains("SIGSEGV")
            && err.contains("last MPI call was MPI_Send"),
        "{err}"
    );
}

/// A call that needs no answer (here a buffered send) waits in the rank's slot for the next
/// call; its error still ends the run naming it, its rank and virtual time.
#[test]
fn c_error_in_a_queued_call_is_reported_as_that_call() {
    let out = misuse("2", "queued_bsend");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 0 in bsend") && err.contains("bsend buffer overflow"),
        "{err}"
    );
}

/// A buffered send that does not fit in the attached buffer, under `MPI_ERRORS_RETURN`: the
/// call returns `MPI_ERR_BUFFER`, nothing is sent (no type check sees it), and the program
/// goes on to attach a larger buffer; simulated and on threads, with no finding.
#[test]
fn c_bsend_overflow_under_errors_return_is_mpi_err_buffer_and_the_run_goes_on() {
    for args in [
        &["-np", "2", "--report-out", "/dev/null"][..],
        &["-np", "3", "--report-out", "/dev/null"],
        &["-np", "2", "--backend", "threads"],
    ] {
        let out = run(args, "bsend", &["return"]);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "bsend: ok\n", "{args:?}");
        assert!(
            !text(&out.stderr).contains("finding"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// The same overflow under `MPI_ERRORS_ARE_FATAL` ends the run naming rank, call, virtual time
/// and the sizes, counted as a `bsend-overflow` finding, on both backends.
#[test]
fn c_bsend_overflow_under_errors_are_fatal_ends_the_run_as_bsend_overflow() {
    for backend in ["sim", "threads"] {
        let out = run(&["-np", "2", "--backend", backend], "bsend", &["fatal"]);
        assert!(!out.status.success(), "{backend}");
        let err = text(&out.stderr);
        assert!(
            err.contains("rank 0 in bsend")
                && err.contains("bsend buffer overflow: 864 bytes requested")
                && err.contains("16 attached")
                && err.contains("mpsim: finding [bsend-overflow]"),
            "{backend}: {err}"
        );
        assert_eq!(err.contains(" at t="), backend == "sim", "{backend}: {err}");
    }
}

#[test]
fn c_exit_before_finalize_is_reported() {
    let out = misuse("2", "exit3");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 1") && err.contains("exited with status 3"),
        "{err}"
    );
}

#[test]
fn c_deadlock_is_reported_not_hung() {
    let out = misuse("3", "deadlock");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("deadlock") && err.contains("cycle"), "{err}");
}

#[test]
fn c_invalid_rank_is_fatal_by_default_naming_the_call() {
    let out = misuse("2", "badrank");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("MPI_Send") && err.contains("rank 5 is not in the communicator"),
        "{err}"
    );
}

#[test]
fn c_truncation_is_reported() {
    let out = misuse("2", "truncate");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("truncated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn c_request_pending_at_finalize_is_reported() {
    let out = misuse("2", "pending");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("MPI_Finalize with 1 request"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn c_send_buffer_written_in_flight_is_reported() {
    let out = misuse("2", "inflight");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("rank 0") && err.contains("written while its nonblocking send was in flight"),
        "{err}"
    );
}

#[test]
fn c_wait_for_wtime_under_modeled_compute_is_reported_not_hung() {
    let exe = program("misuse");
    let _guard = MISUSE_ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let out = Command::new(MPSIM)
        .env_remove("LD_LIBRARY_PATH")
        .env("MPSIM_WTIME_SAME_LIMIT", "2000")
        .args([
            "run",
            "-np",
            "2",
            "--compute",
            "modeled",
            "--report-out",
            "/dev/null",
        ])
        .arg(&exe)
        .arg("wtime-wait")
        .output()
        .expect("mpsim run runs");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("MPI_Wtime from ")
            && err.contains(": called 2000 times in a row at virtual time")
            && err.contains("--compute measured"),
        "{err}"
    );
}

#[test]
fn c_sigterm_stops_a_run_whose_rank_never_calls_mpi_again() {
    let exe = program("misuse");
    let _guard = MISUSE_ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let child = Command::new(MPSIM)
        .env_remove("LD_LIBRARY_PATH")
        .args(["run", "-np", "2", "--report-out", "/dev/null"])
        .arg(&exe)
        .arg("spin")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpsim run starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let out = child.wait_with_output().expect("mpsim run ends");
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("interrupted by SIGTERM"),
        "{}",
        text(&out.stderr)
    );
    let left = Command::new("pgrep")
        .arg("-x")
        .arg("misuse")
        .output()
        .expect("pgrep");
    assert!(
        left.stdout.is_empty(),
        "processes left: {}",
        text(&left.stdout)
    );
}

#[test]
fn c_abort_ends_the_run_with_its_code() {
    let out = misuse("3", "abort");
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
}

#[test]
fn c_program_not_built_by_mpsim_cc_is_refused() {
    let out = Command::new(MPSIM)
        .args(["run", "-np", "2", "/bin/true"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("mpsim cc"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn c_jacobi_on_a_cartesian_grid_gives_the_same_residual_on_any_grid() {
    let residual = |np: &str, backend: &str| {
        let out = run(
            &["-np", np, "--backend", backend, "--report-out", "/dev/null"],
            "jacobi",
            &["36", "12"],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let line = text(&out.stdout);
        line.rsplit(' ')
            .next()
            .expect("a residual")
            .trim()
            .to_string()
    };
    let one = residual("1", "sim");
    for np in ["2", "4", "6", "9"] {
        assert_eq!(residual(np, "sim"), one, "np {np}");
    }
    assert_eq!(residual("4", "threads"), one);
}

#[test]
fn c_nonblocking_collectives_complete_through_wait_and_test() {
    for np in ["1", "2", "3", "5", "8"] {
        let out = run(&["-np", np, "--report-out", "/dev/null"], "icoll", &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "icoll: ok\n", "np {np}");
    }
    for np in ["3", "4"] {
        let out = run(&["-np", np, "--backend", "threads"], "icoll", &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "icoll: ok\n", "np {np}");
    }
}

#[test]
fn c_nonblocking_collective_request_cannot_be_freed() {
    let out = misuse("3", "icoll_free");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("MPI_Request_free") && err.contains("nonblocking collective"),
        "{err}"
    );
}

#[test]
fn c_nonblocking_collective_request_completed_twice_is_reported() {
    let out = misuse("2", "icoll_twice");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("MPI_Wait") && err.contains("is not a request"),
        "{err}"
    );
}

#[test]
fn c_nonblocking_collective_a_rank_never_joins_is_a_deadlock_naming_ranks() {
    let out = misuse("3", "icoll_never");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("deadlock")
            && err.contains("rank 0 blocked in ibarrier")
            && err.contains("rank 2 blocked in recv"),
        "{err}"
    );
}

#[test]
fn c_nonblocking_collective_pending_at_finalize_or_cancelled_is_reported() {
    let out = misuse("2", "icoll_pending");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("MPI_Finalize with 1 request"),
        "{}",
        text(&out.stderr)
    );
    let out = misuse("2", "icoll_cancel");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot be cancelled"),
        "{}",
        text(&out.stderr)
    );
}

/// What a run of MPICH's test suite found (bench/mpich-suite.sh): struct extents padded as C
/// pads the struct, `MPI_Get_elements` on partial elements, `MPI_DATATYPE_NULL` with
/// `MPI_PROC_NULL`, `MPI_Request_get_status` polling to completion, a receive freed while
/// active delivered by `MPI_Finalize`, `MPI_Alltoallw`, the `_x` queries, the status setters.
#[test]
fn c_datatype_and_request_corners_give_what_mpi_requires() {
    for np in ["1", "2", "3", "5"] {
        let out = run(&["-np", np, "--report-out", "/dev/null"], "dtfix", &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "dtfix: ok\n", "np {np}");
        assert!(
            !text(&out.stderr).contains("dropped"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = run(&["-np", "4", "--backend", "threads"], "dtfix", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "dtfix: ok\n");
}

/// MPI-4's `MPI_Isendrecv` and `MPI_Isendrecv_replace`: one request that every wait and test
/// reports complete only once both its send and its receive are, with the receive's status.
#[test]
fn c_isendrecv_completes_when_its_send_and_receive_have() {
    prints_ok_simulated_and_on_threads("isendrecv", &["1", "2", "3", "5"], "4");
}

/// Datatypes of more separate runs of bytes than a list could hold (a vector of 2e7 strided
/// chars sent whole, a vector of a billion blocks queried), and vectors with negative strides
/// and of vectors packed in MPI's order: simulated and on threads.
#[test]
fn c_datatypes_of_many_runs_are_sent_and_queried_as_mpi_requires() {
    prints_ok_simulated_and_on_threads("dtlarge", &["1", "2"], "2");
}

/// `mpi.h`'s values are the MPI-5 standard ABI's (as MPICH's `mpi_abi.h` has them), so a
/// program built against either header means the same thing.
#[test]
fn c_mpi_h_constants_are_the_standard_abi_values() {
    let exe = program("abi");
    let out = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH") // as `run` says
        .output()
        .expect("runs");
    assert!(out.status.success());
    let expected = "MPI_ANY_SOURCE -1\nMPI_ANY_TAG -2\nMPI_PROC_NULL -3\nMPI_ROOT -4\n\
        MPI_UNDEFINED -32766\nMPI_THREAD_SINGLE 0\nMPI_THREAD_FUNNELED 1024\n\
        MPI_THREAD_SERIALIZED 2048\nMPI_THREAD_MULTIPLE 4096\nMPI_IDENT 201\n\
        MPI_CONGRUENT 202\nMPI_SIMILAR 203\nMPI_UNEQUAL 204\nMPI_CART 211\nMPI_GRAPH 212\n\
        MPI_DIST_GRAPH 213\nMPI_KEYVAL_INVALID 0\nMPI_TAG_UB 501\nMPI_UNIVERSE_SIZE 507\n\
        MPI_COMBINER_NAMED 101\nMPI_COMBINER_STRUCT 110\nMPI_DISTRIBUTE_BLOCK 17\n\
        MPI_ERR_QUOTA 44\nMPI_ERR_UNSUPPORTED_OPERATION 55\nMPI_ERR_PROC_ABORTED 58\n\
        MPI_ERR_SESSION 60\nMPI_ERR_ABI 62\nMPI_ERR_LASTCODE 16383\n\
        (long)MPI_ERRORS_ARE_FATAL 321\n(long)MPI_ERRORS_ABORT 322\n\
        (long)MPI_ERRORS_RETURN 323\n(long)MPI_INTEGER 537\n(long)MPI_LOGICAL 536\n\
        (long)MPI_CHARACTER 542\n(long)MPI_INTEGER8 729\n(long)MPI_COMM_WORLD 257\n\
        (long)MPI_DOUBLE 532\n(long)MPI_REQUEST_NULL 384\n";
    assert_eq!(text(&out.stdout), expected);
}
