//! Runs that cannot start or cannot write their outputs end with a typed error saying why,
//! never a panic or an abort: no ranks, more ranks than memory, an unwritable trace path.

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

/// A trace that cannot be written is an I/O error naming the path; the run itself went
/// through.
#[test]
fn unwritable_trace_is_an_io_error() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("no-such-directory-for-a-trace")
        .join("t.json");
    let err = Launcher::new(2).trace(&path).run(hello).unwrap_err();
    match err {
        Error::Io { what } => assert!(what.contains("no-such-directory-for-a-trace"), "{what}"),
        other => panic!("expected an I/O error, got {other}"),
    }
}
