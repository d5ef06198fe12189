//! A program's own way out, on both backends: its own errors through `?` (`Error::Program`,
//! naming the rank, under `sim` the time, and keeping the error it came from), and
//! `Comm::abort` (MPI's `MPI_Abort`): the whole run stops, every rank, with `Error::Abort`
//! naming the caller, its code and under `sim` the time; nothing after the call runs.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mpsim::{Backend, Comm, Error, Launcher, Result};

/// The error of `program` on `ranks` ranks of `backend` (simulated without printing a report).
fn failure<F, Fut>(backend: Backend, ranks: u32, program: F) -> Error
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = Result<()>>,
{
    let launcher = Launcher::new(ranks).backend(backend);
    let error = match backend {
        Backend::Sim => launcher.simulate(program).error,
        _ => launcher.run(program).err(),
    };
    error.unwrap_or_else(|| panic!("{backend:?}: the run succeeded"))
}

/// Rank 2 of 4 computes 3 us, then aborts with code 5. Meanwhile rank 0 waits for a message
/// from rank 2 that never comes, rank 1 polls for one in a loop, and rank 3 ends at once.
async fn abort_program(world: Comm, past_abort: &AtomicBool) -> Result<()> {
    match world.rank() {
        0 => {
            world.recv(&mut [0u8], 2, 0).await?;
        }
        1 => while world.iprobe(2, 0).await?.is_none() {},
        2 => {
            world.compute(Duration::from_micros(3)).await;
            world.abort(5).await;
            past_abort.store(true, Ordering::SeqCst);
        }
        _ => {}
    }
    Ok(())
}

/// `abort` stops the run on both backends, with the caller's rank and code (and under `sim`
/// its time: 3 us, after its compute), whatever the other ranks are doing: blocked in a
/// receive, polling, or done. The caller never goes past the call; under `sim` the outcome is
/// the same sequentially and in parallel.
#[test]
fn api_abort_stops_every_rank_on_both_backends() {
    let past_abort = AtomicBool::new(false);
    let program = |world| abort_program(world, &past_abort);
    let outcome = common::simulate_all_ways(Launcher::new(4), 4, program);
    let abort = Error::Abort {
        rank: 2,
        code: 5,
        time_ns: Some(3_000),
    };
    assert_eq!(outcome.error, Some(abort.clone()));
    assert_eq!(
        outcome.report.stopped.as_deref(),
        Some("rank 2 called abort with code 5 at t=3000 ns")
    );
    let real = Launcher::new(4).backend(Backend::Threads).run(program);
    assert_eq!(
        real,
        Err(Error::Abort {
            rank: 2,
            code: 5,
            time_ns: None
        })
    );
    assert!(
        !past_abort.load(Ordering::SeqCst),
        "nothing after abort runs"
    );
}

/// Under `threads` the other ranks' own errors name the abort: a rank blocked in a receive
/// ends with `Aborted`, whose cause is the abort.
#[test]
fn api_abort_is_the_cause_other_ranks_see_on_threads() {
    let seen = std::sync::Mutex::new(None);
    let result = Launcher::new(2).backend(Backend::Threads).run(|world| {
        let seen = &seen;
        async move {
            if world.rank() == 1 {
                match world.abort(9).await {}
            }
            let got = world.recv(&mut [0u8], 1, 0).await;
            *seen.lock().unwrap() = got.err();
            Ok(())
        }
    });
    assert!(matches!(
        result,
        Err(Error::Abort {
            rank: 1,
            code: 9,
            ..
        })
    ));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        Some(Error::Aborted {
            rank: 0,
            cause: "rank 1 called abort with code 9".into()
        })
    );
}

/// An abort after the run has failed does not replace its first error (`docs/timing.md` S16):
/// rank 0's own error at t=0 stands; rank 1's abort at 1 ns, within the lookahead the run goes
/// on for, is not the run's error.
#[test]
fn api_abort_after_an_error_keeps_the_first() {
    let outcome = common::simulate_all_ways(Launcher::new(2), 2, |world: Comm| async move {
        if world.rank() == 0 {
            return Err(Error::program("rank 0 gives up"));
        }
        world.compute(Duration::from_nanos(1)).await;
        match world.abort(4).await {}
    });
    match &outcome.error {
        Some(Error::Program(failure)) => {
            assert_eq!((failure.rank, failure.time_ns), (Some(0), Some(0)));
            assert_eq!(failure.what, "rank 0 gives up");
        }
        other => panic!("expected rank 0's error, got {other:?}"),
    }
}

/// A rank's own error through `?` (a number that does not parse) is `Error::Program` naming
/// the rank, under `sim` the time its program returned it (after 2 us of compute), keeping
/// the `ParseIntError` as its source; an `io::Error` of the program's is one too, not mpsim's
/// `Error::Io`.
#[test]
fn api_program_errors_name_their_rank_on_both_backends() {
    let parse = |world: Comm| async move {
        if world.rank() == 1 {
            world.compute(Duration::from_micros(2)).await;
            let _: u32 = "ten".parse()?;
        }
        Ok(())
    };
    for (backend, time_ns) in [(Backend::Sim, Some(2_000)), (Backend::Threads, None)] {
        let err = failure(backend, 3, parse);
        let Error::Program(failure) = &err else {
            panic!("{backend:?}: {err:?}")
        };
        assert_eq!(
            (failure.rank, failure.time_ns),
            (Some(1), time_ns),
            "{backend:?}"
        );
        let source = std::error::Error::source(&err).expect("the parse error");
        assert!(source.is::<std::num::ParseIntError>(), "{backend:?}");
        let at = time_ns.map_or(String::new(), |t| format!(" at t={t} ns"));
        assert_eq!(
            err.to_string(),
            format!("rank 1 failed{at}: invalid digit found in string")
        );
    }
    let read = |world: Comm| async move {
        if world.rank() == 0 {
            std::fs::read("/nonexistent/mpsim-input")?;
        }
        Ok(())
    };
    for backend in [Backend::Sim, Backend::Threads] {
        let err = failure(backend, 2, read);
        assert!(
            matches!(&err, Error::Program(p) if p.rank == Some(0)),
            "{backend:?}: {err:?}"
        );
        let source = std::error::Error::source(&err).expect("the I/O error");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound, "{backend:?}");
    }
}
