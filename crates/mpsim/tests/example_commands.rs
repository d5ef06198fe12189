//! The examples as commands, each run in a child process: standard output that cannot be
//! written (a full disk, a reader that closed the pipe) ends them with an error or quietly,
//! never a panic; `pingpong` runs on its own 2 ranks by default and refuses a `--reps` it has
//! no memory for; each `--help` says what the program does by default; `--eager-threshold`
//! reaches the simulator; flags a backend ignores are named only when given; a rank's
//! `abort(code)` ends the process with that code; a run stopped by `SIGINT` or `SIGTERM`
//! writes a trace that parses, exits with 130 or 143 and says it was interrupted, and a second
//! signal ends it at once.
//!
//! A harness of its own (`harness = false` in Cargo.toml): this binary is both the driver and,
//! with `MPSIM_TEST_EXAMPLE=NAME` in its environment, the example `NAME` itself (its `main` on
//! the arguments given; `launcher` is `mpsim::run` of a program that prints nothing), so the
//! examples' current code is what runs, whether or not cargo has built their binaries.
//! libtest's harness could not be the child: it writes to standard output itself. Arguments
//! are ignored (a filter runs all of these, which take seconds).

use std::fs::File;
use std::process::{Command, ExitCode, Output, Stdio};

// The examples themselves: their `main`s are what the children run.
#[allow(dead_code)]
#[path = "../examples/allreduce.rs"]
mod allreduce;
#[allow(dead_code)]
#[path = "../examples/cg.rs"]
mod cg;
#[allow(dead_code, unused_imports)]
#[path = "../examples/grid_split.rs"]
mod grid_split;
#[allow(dead_code)] // items the examples' tests use, not these
#[path = "../examples/pingpong.rs"]
mod pingpong;
#[allow(dead_code)]
#[path = "../examples/ring.rs"]
mod ring;
#[allow(dead_code)]
#[path = "../examples/sample_sort.rs"]
mod sample_sort;
// Its unit tests are compiled here without libtest, which drops their `#[test]` functions and
// so leaves their `use` unused.
#[allow(dead_code, unused_imports)]
#[path = "../examples/stencil2d.rs"]
mod stencil2d;

/// The environment variable that makes this binary a child running an example.
const EXAMPLE: &str = "MPSIM_TEST_EXAMPLE";

/// The code the child `abort` aborts with.
const ABORT_CODE: &str = "MPSIM_TEST_ABORT_CODE";

/// Each example (and the launcher alone) on each backend, on small arguments; they all print
/// to standard output on success.
const RUNS: [(&str, &[&str]); 17] = [
    ("ring", &["--ranks", "2", "--iterations", "3"]),
    (
        "ring",
        &["--ranks", "2", "--iterations", "3", "--backend", "threads"],
    ),
    ("pingpong", &["--sizes", "8"]),
    ("pingpong", &["--sizes", "8", "--backend", "threads"]),
    (
        "stencil2d",
        &["--ranks", "2", "--n", "8", "--iterations", "2"],
    ),
    ("grid_split", &["--ranks", "6"]),
    ("grid_split", &["--ranks", "6", "--backend", "threads"]),
    ("allreduce", &["--ranks", "3", "--count", "5"]),
    (
        "allreduce",
        &["--ranks", "3", "--count", "5", "--backend", "threads"],
    ),
    ("cg", &["--ranks", "3", "--n", "20"]),
    ("cg", &["--ranks", "3", "--n", "20", "--backend", "threads"]),
    ("sample_sort", &["--ranks", "4", "--keys", "100"]),
    (
        "sample_sort",
        &["--ranks", "4", "--keys", "100", "--backend", "threads"],
    ),
    ("launcher", &["--ranks", "2"]),
    ("launcher", &["--ranks", "2", "--report", "json"]),
    (
        "launcher",
        &["--ranks", "2", "--backend", "threads", "--report", "text"],
    ),
    (
        "launcher",
        &["--ranks", "2", "--backend", "threads", "--report", "json"],
    ),
];

fn main() -> ExitCode {
    if let Ok(name) = std::env::var(EXAMPLE) {
        return run_example(&name);
    }
    let tests: [(&str, fn()); 14] = [
        (
            "example_full_stdout_is_an_error_not_a_panic",
            example_full_stdout_is_an_error_not_a_panic,
        ),
        (
            "example_closed_stdout_ends_quietly",
            example_closed_stdout_ends_quietly,
        ),
        (
            "example_pingpong_runs_on_two_ranks_by_default",
            example_pingpong_runs_on_two_ranks_by_default,
        ),
        (
            "example_pingpong_reps_beyond_memory_are_an_error",
            example_pingpong_reps_beyond_memory_are_an_error,
        ),
        (
            "example_stencil2d_computes_measured_by_default_as_its_help_says",
            example_stencil2d_computes_measured_by_default_as_its_help_says,
        ),
        (
            "example_ring_help_keeps_the_shared_defaults",
            example_ring_help_keeps_the_shared_defaults,
        ),
        (
            "example_eager_threshold_flag_reaches_the_simulator",
            example_eager_threshold_flag_reaches_the_simulator,
        ),
        (
            "example_ignored_flags_are_named_only_when_given",
            example_ignored_flags_are_named_only_when_given,
        ),
        (
            "launcher_abort_exits_with_its_code",
            launcher_abort_exits_with_its_code,
        ),
        (
            "example_interrupted_run_writes_its_trace_and_fails",
            example_interrupted_run_writes_its_trace_and_fails,
        ),
        (
            "example_second_signal_ends_the_process_at_once",
            example_second_signal_ends_the_process_at_once,
        ),
        (
            "example_ring_report_out_is_json_a_script_reads",
            example_ring_report_out_is_json_a_script_reads,
        ),
        (
            "example_report_out_on_threads_takes_its_format_from_the_file_name",
            example_report_out_on_threads_takes_its_format_from_the_file_name,
        ),
        (
            "example_report_out_that_cannot_be_written_fails_before_the_run",
            example_report_out_that_cannot_be_written_fails_before_the_run,
        ),
    ];
    for (name, test) in tests {
        test();
        println!("test {name} ... ok");
    }
    ExitCode::SUCCESS
}

/// In the child: runs example `name` on this process's arguments.
fn run_example(name: &str) -> ExitCode {
    match name {
        "pingpong" => pingpong::main(),
        "ring" => ring::main(),
        "stencil2d" => stencil2d::main(),
        "grid_split" => grid_split::main(),
        "allreduce" => allreduce::main(),
        "cg" => cg::main(),
        "sample_sort" => sample_sort::main(),
        "launcher" => mpsim::run(|world| async move {
            let _ = world.rank();
            Ok(())
        }),
        // Rank 1 aborts with the code in `ABORT_CODE` while rank 0 waits for it.
        "abort" => {
            let code: i32 = std::env::var(ABORT_CODE)
                .ok()
                .and_then(|c| c.parse().ok())
                .expect("an abort code");
            mpsim::run(|world| async move {
                if world.rank() == 1 {
                    match world.abort(code).await {}
                }
                world.recv(&mut [0u8], 1, 0).await?;
                Ok(())
            })
        }
        // Ranks trade a word with their neighbours for ever, a millisecond of host time apart
        // (so that a trace of a second is small): only a signal ends it.
        "endless" => mpsim::run(|world| async move {
            let (me, n) = (world.rank(), world.size());
            let mut got = [0u64];
            loop {
                world
                    .sendrecv(&[1u64], (me + 1) % n, 0, &mut got, (me + n - 1) % n, 0)
                    .await?;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }),
        // Rank 1 never calls mpsim after its first call: on threads, a signal cannot stop it.
        "deaf" => mpsim::run(|world| async move {
            if world.rank() == 1 {
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
            Ok(())
        }),
        other => panic!("no example {other}"),
    }
}

/// Example `name` on `args`, to be run as a child with `stdout`.
fn example(name: &str, args: &[&str], stdout: impl Into<Stdio>) -> Output {
    // Invariant: the binary running this test can be run again.
    let me = std::env::current_exe().expect("the test binary's path");
    Command::new(me)
        .env(EXAMPLE, name)
        .args(args)
        .stdout(stdout)
        .output()
        .expect("the test binary runs as an example")
}

/// Output bytes as text.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Example `name` on `args` with standard output read by this test: its exit status, standard
/// output and standard error.
fn run_ok(name: &str, args: &[&str]) -> (String, String) {
    let out = example(name, args, Stdio::piped());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{name} {args:?}: {stderr}");
    (stdout, stderr)
}

/// Standard output on `/dev/full`: every run ends with status 1 and one line saying that
/// standard output cannot be written, and why, not a panic (`println!` would panic, under
/// `threads` in a rank's thread).
fn example_full_stdout_is_an_error_not_a_panic() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    for (name, args) in RUNS {
        let full = File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = example(name, args, full);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name} {args:?}: {stderr}");
        assert_eq!(
            stderr,
            "mpsim: I/O error: cannot write standard output: No space left on device (os error \
             28)\n",
            "{name} {args:?}"
        );
    }
}

/// Standard output a pipe whose reader is gone (`example | head -1` once `head` has its line):
/// every run ends with status 1 and nothing on standard error.
fn example_closed_stdout_ends_quietly() {
    for (name, args) in RUNS {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = example(name, args, writer);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name} {args:?}: {stderr}");
        assert_eq!(stderr, "", "{name} {args:?}");
    }
}

/// `pingpong` without `--ranks` runs on 2 ranks (the shared flag's default is 4), its help
/// says so, and another count is still an error.
fn example_pingpong_runs_on_two_ranks_by_default() {
    let (stdout, _) = run_ok("pingpong", &["--sizes", "8"]);
    assert!(
        stdout.contains("result example=pingpong backend=sim ranks=2 size=8 reps=1 "),
        "{stdout}"
    );
    let (help, _) = run_ok("pingpong", &["--help"]);
    assert!(help.contains("exactly 2"), "{help}");
    assert!(help.contains("[default: 2]"), "{help}");
    assert!(!help.contains("[default: 4]"), "{help}");
    let out = example(
        "pingpong",
        &["--ranks", "3", "--sizes", "8"],
        Stdio::piped(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("pingpong needs exactly 2 ranks, got 3"));
}

/// `--reps` whose latencies cannot be stored (8 bytes each, 32 GiB for the largest `u32`) is
/// an out-of-memory error before the first message, not an abort. The child's address space
/// is capped at 8 GiB (`ulimit -v`; a lower limit already there stays), so the storage cannot
/// be had on any host.
fn example_pingpong_reps_beyond_memory_are_an_error() {
    // Invariant: the binary running this test can be run again.
    let me = std::env::current_exe().expect("the test binary's path");
    let out = Command::new("bash")
        .args(["-c", "ulimit -v 8388608 2>/dev/null; exec \"$0\" \"$@\""])
        .arg(me)
        .args(["--sizes", "8", "--reps", "4294967295"])
        .env(EXAMPLE, "pingpong")
        .output()
        .expect("bash runs the test binary");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("mpsim: out of memory: --reps 4294967295: no room for 4294967295"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `stencil2d`'s help gives `measured` as the `--compute` default, and a run without the flag
/// is charged that way.
fn example_stencil2d_computes_measured_by_default_as_its_help_says() {
    let (help, _) = run_ok("stencil2d", &["--help"]);
    assert!(help.contains("[default: measured]"), "{help}");
    assert!(!help.contains("for the embedded model"), "{help}");
    let (stdout, _) = run_ok(
        "stencil2d",
        &[
            "--ranks",
            "2",
            "--n",
            "8",
            "--iterations",
            "2",
            "--report",
            "json",
        ],
    );
    assert!(stdout.contains("\"compute\": \"measured\""), "{stdout}");
}

/// The per-program defaults of pingpong and stencil2d leave the shared flags' alone.
fn example_ring_help_keeps_the_shared_defaults() {
    let (help, _) = run_ok("ring", &["--help"]);
    assert!(help.contains("[default: 4]"), "{help}");
    assert!(help.contains("for the embedded model"), "{help}");
    assert!(
        help.contains("under threads\n          64KiB") || help.contains("under threads 64KiB"),
        "{help}"
    );
}

/// `ring --eager-threshold 0` under sim sends its 8-byte tokens by rendezvous (the model's
/// threshold, 64 KiB, would send them eagerly): the report's traffic says so.
fn example_eager_threshold_flag_reaches_the_simulator() {
    let ring = ["--ranks", "2", "--iterations", "3", "--report", "json"];
    let total_sent = |extra: &[&str]| {
        let args: Vec<&str> = ring.iter().chain(extra).copied().collect();
        let (stdout, _) = run_ok("ring", &args);
        let json = &stdout[stdout.find('{').expect("the JSON report")..];
        let report: serde_json::Value = serde_json::from_str(json).expect("JSON");
        report["total_sent"]["messages"].clone()
    };
    assert_eq!(total_sent(&[]), serde_json::json!([6, 0, 0, 0]));
    assert_eq!(
        total_sent(&["--eager-threshold", "0"]),
        serde_json::json!([0, 0, 6, 0])
    );
}

/// A run names the flags its backend ignores only when the user gave them: `stencil2d` on
/// threads, whose `--compute` defaults to `measured` in the program, says nothing of it until
/// `--compute` is typed; `ring` under sim names `--wait` and `--bind`, which only threads
/// reads.
fn example_ignored_flags_are_named_only_when_given() {
    let stencil = [
        "--backend",
        "threads",
        "--ranks",
        "2",
        "--n",
        "8",
        "--iterations",
        "2",
    ];
    let (_, stderr) = run_ok("stencil2d", &stencil);
    assert_eq!(stderr, "", "stencil2d on threads, no sim flag given");
    let typed: Vec<&str> = stencil
        .iter()
        .chain(&["--compute", "modeled"])
        .copied()
        .collect();
    let (_, stderr) = run_ok("stencil2d", &typed);
    assert_eq!(
        stderr,
        "mpsim: --compute only applies under --backend sim: ignored under threads\n"
    );
    let (_, stderr) = run_ok(
        "ring",
        &[
            "--ranks",
            "2",
            "--iterations",
            "2",
            "--wait",
            "park",
            "--bind",
            "none",
        ],
    );
    // (ring also says how long the run took, on the next line.)
    assert_eq!(
        stderr.lines().next(),
        Some("mpsim: --wait, --bind only apply under --backend threads: ignored under sim"),
        "{stderr}"
    );
    let (_, stderr) = run_ok("ring", &["--ranks", "2", "--iterations", "2"]);
    assert!(!stderr.contains("ignored"), "{stderr}");
}

/// A program launched by `mpsim::run` whose rank calls `abort(code)` exits with that code, as
/// `mpirun` does (255 for a code an exit status cannot hold; 0 for 0), on both backends,
/// after one line naming the rank, the code and under sim the time.
fn launcher_abort_exits_with_its_code() {
    // Invariant: the binary running this test can be run again.
    let me = std::env::current_exe().expect("the test binary's path");
    for (backend, at) in [("sim", " at t=0 ns"), ("threads", "")] {
        for (code, status) in [(7, 7), (0, 0), (300, 255), (-2, 255)] {
            let out = Command::new(&me)
                .env(EXAMPLE, "abort")
                .env(ABORT_CODE, code.to_string())
                .args(["--ranks", "2", "--backend", backend])
                .output()
                .expect("the test binary runs as an example");
            let stderr = text(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(status),
                "{backend} abort({code}): {stderr}"
            );
            assert_eq!(
                stderr,
                format!("mpsim: rank 1 called abort with code {code}{at}\n"),
                "{backend}"
            );
        }
    }
}

/// A scratch directory of this test process, fresh.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("example-commands-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// The names in `dir`.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Starts example `name` on `args` writing its trace to `dir/trace.json`, and returns once it
/// runs and listens for signals: once the trace's temporary file is there (made after the
/// handlers are installed, `Launcher::run`), and a few ms more.
fn start_traced(name: &str, dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    let me = std::env::current_exe().expect("the test binary's path");
    let trace = dir.join("trace.json");
    let mut child = Command::new(me)
        .env(EXAMPLE, name)
        .args(args)
        .arg("--trace")
        .arg(&trace)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary runs as an example");
    while !names_in(dir).iter().any(|n| n.starts_with(".trace.json.")) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{name} {args:?} ended before it was signalled: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    child
}

/// SIGINT or SIGTERM to a running simulation or threads run: it stops, prints its report (sim)
/// of what ran, writes a trace that parses as JSON and holds what ran, leaves no temporary
/// file, and exits with 128 plus the signal's number saying it was interrupted.
fn example_interrupted_run_writes_its_trace_and_fails() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    for (backend, signal, status, name) in [
        ("sim", Signal::SIGINT, 130, "SIGINT"),
        ("sim", Signal::SIGTERM, 143, "SIGTERM"),
        ("threads", Signal::SIGINT, 130, "SIGINT"),
    ] {
        let dir = scratch(&format!("interrupted-{backend}-{name}"));
        let args = ["--ranks", "3", "--backend", backend];
        let child = start_traced("endless", &dir, &args);
        let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
        kill(pid, signal).expect("the child is signalled");
        let out = child.wait_with_output().expect("the child ends");
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let case = format!("{backend} {name}: {stderr}");
        assert_eq!(out.status.code(), Some(status), "{case}");
        assert!(
            stderr.contains(&format!("mpsim: interrupted by {name}")),
            "{case}"
        );
        let trace = std::fs::read_to_string(dir.join("trace.json")).expect("a trace");
        let doc: serde_json::Value = serde_json::from_str(&trace).expect("the trace is JSON");
        let events = doc["traceEvents"].as_array().expect("events");
        assert!(
            events.iter().any(|e| e["ph"] == "s"),
            "{case}: the messages sent before the signal are in the trace"
        );
        assert_eq!(names_in(&dir), ["trace.json"], "{case}");
        if backend == "sim" {
            assert!(
                stdout.contains("stopped") && stdout.contains(&format!("interrupted by {name}")),
                "{case}: the report says where the run stopped: {stdout}"
            );
        }
    }
}

/// A second SIGINT ends the process at once, by the signal, when the first could not stop the
/// run (a rank on threads that never calls mpsim again): it is not left to hang. Its trace's
/// temporary file is what it leaves; the trace itself is not there.
fn example_second_signal_ends_the_process_at_once() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;

    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = scratch("second-signal");
    let mut child = start_traced("deaf", &dir, &["--ranks", "2", "--backend", "threads"]);
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    kill(pid, Signal::SIGINT).expect("the child is signalled");
    // The watchdog says it is stopping the run: the first signal was taken.
    let stderr = child.stderr.take().expect("piped");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let said = lines
        .by_ref()
        .map(|l| l.expect("a line"))
        .find(|l| l.starts_with("mpsim: SIGINT: stopping the run"));
    assert!(said.is_some(), "the first signal was reported");
    kill(pid, Signal::SIGINT).expect("the child is signalled again");
    let status = child.wait().expect("the child ends");
    assert_eq!(status.signal(), Some(2), "{status}");
    assert!(!dir.join("trace.json").exists());
}

/// The README's command for scripts, `ring --ranks 4 --iterations 3 --report json
/// --report-out ring.json`: standard output holds the program's own lines only, and the file
/// one JSON object that `serde_json` reads, with the run's figures; nothing else is left in
/// the directory (the report was written beside its name and renamed).
fn example_ring_report_out_is_json_a_script_reads() {
    let dir = scratch("ring-json");
    let path = dir.join("ring.json");
    let path_arg = path.to_str().expect("a UTF-8 path");
    let args = [
        "--ranks",
        "4",
        "--iterations",
        "3",
        "--report",
        "json",
        "--report-out",
        path_arg,
    ];
    let (stdout, _) = run_ok("ring", &args);
    assert!(
        stdout.starts_with("ring: 4 ranks x 3 iterations, token intact\nresult example=ring"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('{'),
        "the report is not on standard output: {stdout}"
    );
    let json = std::fs::read_to_string(&path).expect("the report file");
    let report: serde_json::Value = serde_json::from_str(&json).expect("the file is JSON");
    assert_eq!(report["backend"], "sim");
    assert_eq!(report["time_base"], "virtual");
    assert_eq!(report["compute"], "modeled");
    assert!(report["stopped"].is_null());
    let run_ns = report["run_ns"].as_u64().expect("run_ns");
    assert!(run_ns > 0);
    assert_eq!(report["predicted_ns"].as_u64(), Some(run_ns));
    assert_eq!(report["protocols"][0], "eager");
    // Twelve 8-byte tokens, each taken by a receive.
    assert_eq!(
        report["total_sent"]["messages"],
        serde_json::json!([12, 0, 0, 0])
    );
    assert_eq!(
        report["total_sent"]["bytes"],
        serde_json::json!([96, 0, 0, 0])
    );
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4);
    for (i, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["rank"], i);
        assert_eq!(
            rank["received"]["messages"],
            serde_json::json!([3, 0, 0, 0])
        );
        assert_eq!(
            rank["unreceived"]["messages"],
            serde_json::json!([0, 0, 0, 0])
        );
        assert!(rank["clock_ns"].as_u64() <= Some(run_ns));
        assert!(rank["comm_ns"].is_u64() && rank["poll_ns"].is_u64());
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("the directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(left, ["ring.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under threads, `--report-out` alone asks for the report, in JSON for a `.json` file and
/// as text otherwise; its JSON has the simulator's fields, `null` where a real run measures
/// nothing.
fn example_report_out_on_threads_takes_its_format_from_the_file_name() {
    let dir = scratch("threads");
    let (json_path, text_path) = (dir.join("ring.json"), dir.join("ring.txt"));
    for path in [&json_path, &text_path] {
        let args = [
            "--ranks",
            "2",
            "--iterations",
            "3",
            "--backend",
            "threads",
            "--report-out",
            path.to_str().expect("a UTF-8 path"),
        ];
        let (stdout, _) = run_ok("ring", &args);
        assert!(
            stdout.starts_with("ring: 2 ranks x 3 iterations"),
            "{stdout}"
        );
        assert!(!stdout.contains("mpsim threads report"), "{stdout}");
    }
    let json = std::fs::read_to_string(&json_path).expect("the JSON report");
    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(report["backend"], "threads");
    assert_eq!(report["time_base"], "host");
    assert!(report["predicted_ns"].is_null() && report["events"].is_null());
    assert!(report["ranks"][0]["comm_ns"].is_null());
    assert_eq!(
        report["ranks"][1]["received"]["messages"],
        serde_json::json!([3, 0, 0, 0])
    );
    let text = std::fs::read_to_string(&text_path).expect("the text report");
    assert!(
        text.starts_with("mpsim threads report (measured, host time)\n"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--report-out` in a directory that does not exist is an error naming the file before
/// the program runs (nothing on standard output), and leaves nothing behind.
fn example_report_out_that_cannot_be_written_fails_before_the_run() {
    let dir = scratch("unwritable");
    let path = dir.join("no-such-dir").join("ring.json");
    let args = [
        "--ranks",
        "2",
        "--iterations",
        "3",
        "--report-out",
        path.to_str().expect("a UTF-8 path"),
    ];
    let out = example("ring", &args, Stdio::piped());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "", "the program did not run");
    assert!(
        stderr.starts_with("mpsim: I/O error: cannot write the report to ")
            && stderr.contains("no-such-dir/ring.json"),
        "{stderr}"
    );
    assert!(!dir.join("no-such-dir").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
