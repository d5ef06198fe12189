//! Source lines in the C door's reports (issue 38, "Checking programs": the source line where
//! the build allows it): an error, a finding and a deadlock name the call's `file.c:LINE` and
//! function when the program is built with `-g` (`mpsim cc` adds it), the function and offset
//! when built with `-g0`, and a program that is its own profiling layer (it defines `MPI_Send`
//! and calls `PMPI_Send`) still runs and is named at its own call. `tests/c/sites.c` marks
//! each call the reports name with `SITE <what>`; the lines are found there, not written here.

// Its `build` is not used: these programs are built with flags of their own (`build_with`).
#[allow(dead_code)]
#[path = "common/c_door.rs"]
mod c_lib;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const MPSIM: &str = env!("CARGO_BIN_EXE_mpsim");

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/sites.c")
}

/// `tests/c/sites.c:LINE` of the call marked `SITE what` (the file as the compiler was given
/// it, named relative to `mpsim run`'s working directory: the test's, the crate's).
fn line_of(what: &str) -> String {
    let text = std::fs::read_to_string(source()).expect("sites.c");
    let n = text
        .lines()
        .position(|l| l.contains(&format!("/* SITE {what} */")))
        .expect("a marked line")
        + 1;
    format!("tests/c/sites.c:{n}")
}

/// `sites.c` built by `mpsim cc -O1 FLAGS` (with `-lm`; once per set of flags).
fn program(flags: &[&str]) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let exe = dir.path().join(format!("sites{}", flags.join("")));
    if !exe.exists() {
        c_lib::build_with("sites", &exe, flags);
    }
    exe
}

/// `mpsim run -np 2 sites WHAT` (modeled compute: the same run, the same virtual times), the
/// program built with `flags`: its standard error.
fn run(flags: &[&str], what: &str) -> (Output, String) {
    let out = Command::new(MPSIM)
        .env_remove("LD_LIBRARY_PATH")
        .args([
            "run",
            "-np",
            "2",
            "--compute",
            "modeled",
            "--report-out",
            "/dev/null",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg(program(flags))
        .arg(what)
        .output()
        .expect("mpsim run runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

/// The report's line that starts with `prefix`.
fn line<'a>(err: &'a str, prefix: &str) -> &'a str {
    err.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in:\n{err}"))
}

#[test]
fn c_site_an_error_names_the_calls_source_line() {
    let (out, err) = run(&[], "badrank");
    assert!(!out.status.success());
    let l = line(&err, "mpsim: rank 1 failed");
    let at = format!("MPI_Send from {} in bad_rank: ", line_of("badrank"));
    assert!(l.contains(&at) && l.contains("rank 99"), "{l}\n{at}");
    // The file is named as the compiler was given it: a path ending in the test's file.
    assert!(!l.contains("0x"), "no address: {l}");
}

#[test]
fn c_site_a_type_mismatch_names_both_calls_source_lines() {
    let (out, err) = run(&[], "type");
    assert!(!out.status.success());
    let l = line(&err, "mpsim: finding [type-mismatch]");
    for what in ["type-send", "type-recv"] {
        let at = format!(" from {} in main at t=", line_of(what));
        assert!(l.contains(&at), "{l}\n{at}");
    }
}

#[test]
fn c_site_a_deadlock_names_each_blocked_ranks_source_line() {
    let (out, err) = run(&[], "deadlock");
    assert!(!out.status.success());
    let l = line(&err, "mpsim: deadlock:");
    let at = format!("blocked in recv from {} in main since", line_of("deadlock"));
    assert_eq!(l.matches(&at).count(), 2, "{l}\n{at}");
}

#[test]
fn c_site_without_debug_information_names_the_function_and_offset() {
    let (out, err) = run(&["-g0"], "badrank");
    assert!(!out.status.success());
    let l = line(&err, "mpsim: rank 1 failed");
    assert!(l.contains("MPI_Send from bad_rank+0x"), "{l}");
    assert!(!l.contains("sites.c"), "{l}");
}

#[test]
fn c_site_the_same_run_prints_the_same_bytes() {
    let a = run(&[], "deadlock").1;
    let b = run(&[], "deadlock").1;
    assert_eq!(a, b);
}

#[test]
fn c_site_a_programs_own_profiling_layer_runs_and_is_named() {
    let (out, err) = run(&["-DWRAP"], "wrapped");
    assert!(
        out.status.success(),
        "{err}{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (out, err) = run(&["-DWRAP"], "badrank");
    assert!(!out.status.success());
    let l = line(&err, "mpsim: rank 1 failed");
    let at = format!("MPI_Send from {} in MPI_Send: ", line_of("wrap"));
    assert!(l.contains(&at), "{l}\n{at}");
}
