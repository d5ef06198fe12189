//! Runs that cannot start or cannot write their outputs end with a typed error saying why,
//! never a panic or an abort: no ranks, more ranks than memory, an unwritable trace path; a
//! trace file is written whole or left as it was.

use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use mpsim::{Backend, Comm, Error, LaunchArgs, Launcher};

async fn hello(world: Comm) -> mpsim::Result<()> {
    let _ = world.rank();
    Ok(())
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    launch: LaunchArgs,
}

/// `--ranks 0` is refused by the command line, and a launcher made in code with no ranks
/// returns an invalid-argument error on either backend.
#[test]
fn launch_with_no_ranks_is_an_invalid_argument() {
    let parsed = Cli::try_parse_from(["prog", "--ranks", "0"]);
    assert!(parsed.is_err(), "--ranks 0 parses");
    for backend in [Backend::Sim, Backend::Threads] {
        let err = Launcher::new(0).backend(backend).run(hello).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { .. }),
            "{backend:?}: {err}"
        );
    }
    let outcome = Launcher::new(0).simulate(hello);
    assert!(matches!(outcome.error, Some(Error::InvalidArgument { .. })));
    assert_eq!(outcome.report.predicted_ns(), 0);
}

/// A model built in code is checked as a loaded one is: a zero `poll_cost_ns` (a polling loop
/// that never moves virtual time) or `flops_per_s`, or no cores, is refused before the run
/// starts; so is a spawn order that is not a permutation of the ranks.
#[test]
fn sim_refuses_an_invalid_model_or_spawn_order_up_front() {
    use mpsim::sim::Model;
    /// Breaks one parameter of a model.
    type Breaks = fn(&mut Model);
    let broken: [(Breaks, &str); 3] = [
        (|m| m.poll_cost_ns = 0, "`poll_cost_ns` must be > 0"),
        (|m| m.flops_per_s = 0, "`flops_per_s` must be > 0"),
        (|m| m.cpu.cores = Some(0), "`cores` must be > 0"),
    ];
    for (breaks, says) in broken {
        let mut model = Model::default();
        breaks(&mut model);
        let outcome = Launcher::new(2).model(model).simulate(hello);
        match &outcome.error {
            Some(e @ Error::InvalidArgument { .. }) => {
                assert!(e.to_string().contains(says), "{e}");
            }
            other => panic!("{says}: {other:?}"),
        }
    }
    // Tens of thousands of simulation threads aborted the process (its memory mappings ran
    // out as a thread started); more than the cores only slow the run.
    let too_many = mpsim::sim::MAX_WORKERS + 1;
    let outcome = Launcher::new(2 * too_many)
        .sim_threads(too_many)
        .simulate(hello);
    assert!(
        matches!(&outcome.error, Some(Error::InvalidArgument { what }) if what.contains("at most 1024")),
        "{:?}",
        outcome.error
    );
    for order in [vec![0, 0, 1], vec![0, 1], vec![2, 1, 9]] {
        let outcome = Launcher::new(3).spawn_order(order.clone()).simulate(hello);
        assert!(
            matches!(&outcome.error, Some(Error::InvalidArgument { what }) if what.contains("spawn order")),
            "{order:?}: {:?}",
            outcome.error
        );
    }
}

/// `--eager-threshold` takes sizes as model files write them (`64KiB`), where it refused
/// anything but a bare number of bytes.
#[test]
fn eager_threshold_takes_sizes_with_units() {
    for (given, bytes) in [
        ("64KiB", 65_536),
        ("4096", 4096),
        ("1.5MiB", 1_572_864),
        ("0", 0),
    ] {
        let cli = Cli::try_parse_from(["prog", "--eager-threshold", given]).expect("parses");
        assert_eq!(cli.launch.eager_threshold, Some(bytes), "{given}");
    }
    let err = Cli::try_parse_from(["prog", "--eager-threshold", "64KB"])
        .err()
        .expect("KB is not a unit")
        .to_string();
    assert!(err.contains("KiB"), "{err}");
}

/// A negative number given as a flag's own argument (`--ranks -1`) is refused as a value out
/// of range, naming the flag, not as an unknown argument `-1`.
#[test]
fn negative_flag_values_are_refused_naming_the_flag() {
    for (args, flag, why) in [
        (["--ranks", "-1"], "--ranks", "not in 1.."),
        (["-n", "-3"], "--ranks", "not in 1.."),
        (["--sim-threads", "-2"], "--sim-threads", "not in 1.."),
        (
            ["--sim-threads", "1025"],
            "--sim-threads",
            "not in 1..=1024",
        ),
        (
            ["--eager-threshold", "-1"],
            "--eager-threshold",
            "`-1` is negative",
        ),
        (
            ["--livelock-after", "-1s"],
            "--livelock-after",
            "`-1s` is negative",
        ),
    ] {
        let err = match Cli::try_parse_from(["prog"].into_iter().chain(args)) {
            Ok(_) => panic!("{args:?} parses"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains(&format!("invalid value '{}' for '{flag}", args[1])) && err.contains(why),
            "{args:?}: {err}"
        );
    }
}

/// A simulation of more ranks than the host's memory could hold is refused before it starts,
/// with the memory it needs and the memory there is (`MemAvailable`), not aborted part way.
#[cfg(target_os = "linux")]
#[test]
fn sim_of_more_ranks_than_memory_is_refused_up_front() {
    let outcome = Launcher::new(u32::MAX).simulate(hello);
    match &outcome.error {
        Some(Error::NoMemory { what }) => {
            assert!(what.contains("4294967295 ranks need at least"), "{what}");
            assert!(what.contains("GiB available"), "{what}");
        }
        other => panic!("expected an out-of-memory error, got {other:?}"),
    }
    assert_eq!(
        outcome.report.stopped.as_deref(),
        outcome.error.as_ref().map(ToString::to_string).as_deref()
    );
}

/// A trace that cannot be written is an I/O error naming the path, found before the run: no
/// rank's program starts (a long simulation does not end in an error it could have had at
/// once).
#[test]
fn unwritable_trace_is_an_io_error_before_the_run() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("no-such-directory-for-a-trace")
        .join("t.json");
    for backend in [Backend::Sim, Backend::Threads] {
        let launcher = Launcher::new(2).backend(backend).trace(&path);
        match refused_before_any_rank_starts(launcher) {
            Error::Io { what } => {
                assert!(what.contains("no-such-directory-for-a-trace"), "{what}")
            }
            other => panic!("{backend:?}: expected an I/O error, got {other}"),
        }
    }
}

/// A trace file is whole or absent (written beside its path, renamed once complete): a run
/// refused before it starts leaves the file that was there as it was (it used to be emptied)
/// and nothing beside it; a run that fails replaces it with a complete trace of what ran; a
/// path that is a directory is refused before the run.
#[test]
fn trace_file_is_whole_or_left_as_it_was() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("launch-errors-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("t.json");
    let listed = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("listed")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    std::fs::write(&path, "an earlier trace").expect("written");
    let refused = Launcher::new(2)
        .spawn_order(vec![0, 0])
        .trace(&path)
        .run(hello);
    assert!(
        matches!(refused, Err(Error::InvalidArgument { .. })),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("kept"),
        "an earlier trace"
    );
    assert_eq!(listed(), ["t.json"]);

    let deadlocked = Launcher::new(2).trace(&path).run(|world: Comm| async move {
        world.ssend(&[0u8], 1 - world.rank(), 0).await?;
        Ok(())
    });
    assert!(
        matches!(deadlocked, Err(Error::Deadlock { .. })),
        "{deadlocked:?}"
    );
    let text = std::fs::read_to_string(&path).expect("replaced");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    let open = doc["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["name"] == "ssend" && e["args"]["unfinished"] == true)
        .count();
    assert_eq!(open, 2, "{text}");
    assert_eq!(listed(), ["t.json"]);

    match Launcher::new(2).trace(&dir).run(hello) {
        Err(Error::Io { what }) => assert!(
            what.starts_with(&format!("cannot write the trace to {}: ", dir.display())),
            "{what}"
        ),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// More rank threads than the host's memory-mapping limit allows (`vm.max_map_count`; each
/// thread maps a stack and a signal stack) is refused before any thread starts, with the
/// number that fits; such a run used to abort the process from inside the Rust runtime.
#[test]
fn threads_beyond_the_mapping_limit_are_refused_up_front() {
    let Some(limit) = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&l| l <= 4_000_000)
    else {
        eprintln!("skipped: no vm.max_map_count, or one too large to exceed in a test");
        return;
    };
    let launcher = Launcher::new(limit / 4 + 1).backend(Backend::Threads);
    match refused_before_any_rank_starts(launcher) {
        Error::NoMemory { what } => {
            assert!(what.contains("memory mappings"), "{what}");
            assert!(what.contains("at most"), "{what}");
        }
        other => panic!("expected an out-of-memory error, got {other}"),
    }
}

/// Runs `launcher` on a program that notes whether it started on any rank: the run's error,
/// checked to have come before any rank started.
fn refused_before_any_rank_starts(launcher: Launcher) -> Error {
    let started = AtomicBool::new(false);
    let err = launcher
        .run(|_world| {
            started.store(true, Ordering::Relaxed);
            async { Ok(()) }
        })
        .expect_err("the run is refused");
    assert!(!started.load(Ordering::Relaxed), "a rank started");
    err
}
