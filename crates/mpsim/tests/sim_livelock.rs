//! Livelock (`mpsim-sim`'s `livelock.rs`): a rank that polls for a message nothing will send is
//! not blocked, so no deadlock is found; the simulator stops a run in which nothing but polls
//! ran for its limit of virtual time, naming the polling and the blocked ranks. Each case runs
//! sequentially, on 2 threads and on a thread per rank, which must give the same outcome
//! (`common::simulate_all_ways`). Programs that poll while something can still happen (a
//! computing rank, a message in flight) or that give up in time are not stopped.

mod common;

use std::future::Future;
use std::time::Duration;

use common::simulate_all_ways;
use mpsim::sim::{Model, Outcome};
use mpsim::{Comm, Error, Launcher, LivelockReport, Source, Tag};

/// A limit short enough for tests: 100 us of virtual time, 1000 polls of the model's 100 ns.
const LIMIT_NS: u64 = 100_000;

fn sim<F, Fut>(ranks: u32, limit_ns: u64, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    let launcher = Launcher::new(ranks)
        .model(Model::worked_examples())
        .livelock_after_ns(limit_ns);
    simulate_all_ways(launcher, ranks, program)
}

fn livelock_report(o: &Outcome) -> String {
    livelock(o).to_string()
}

/// The livelock report of a run that must have livelocked, as data.
fn livelock(o: &Outcome) -> &LivelockReport {
    match &o.error {
        Some(Error::Livelock { report }) => report,
        other => panic!("expected a livelock, got {other:?}"),
    }
}

/// Rank 0 tests for a message rank 1 never sends; rank 1 waits in a receive from rank 2,
/// which has finished; rank 3 polls with `iprobe` for anything at all.
#[test]
fn livelock_polls_for_what_nothing_will_send_are_reported() {
    let o = sim(4, LIMIT_NS, |world: Comm| async move {
        let mut buf = [0u8; 8];
        match world.rank() {
            0 => {
                let mut r = world.irecv(&mut buf, 1, 5)?;
                while r.test().await?.is_none() {}
            }
            1 => {
                world.recv(&mut buf, 2, 9).await?;
            }
            2 => {}
            _ => while world.iprobe(Source::Any, Tag::Any).await?.is_none() {},
        }
        Ok(())
    });
    let report = livelock_report(&o);
    assert!(report.starts_with("from t="), "{report}");
    assert!(report.contains("rank 0 polling in test;"), "{report}");
    assert!(report.contains("rank 1 blocked in recv"), "{report}");
    assert!(report.contains("rank 3 polling in iprobe;"), "{report}");
    assert!(
        !report.contains("rank 2"),
        "a finished rank is not listed: {report}"
    );
    assert!(report.contains("after 100000 ns"), "{report}");
    // Found between one limit and one limit and two checkpoints (1/16 of it each) after the
    // polls began at time 0.
    let at: u64 = report
        .split(" ns to t=")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("the report says when");
    assert!(
        (LIMIT_NS..=LIMIT_NS + LIMIT_NS / 8).contains(&at),
        "{report}"
    );
    // The report's clocks stop where the run was found livelocked.
    assert!(o.report.ranks.iter().all(|r| r.clock_ns <= at));
    // The same as data.
    let data = livelock(&o);
    assert_eq!((data.from_ns, data.to_ns, data.limit_ns), (0, at, LIMIT_NS));
    let polling: Vec<_> = data
        .polling()
        .map(|p| (p.rank, p.call, p.since_ns))
        .collect();
    assert_eq!(polling, [(0, "test", 0), (3, "iprobe", 0)]);
    let blocked: Vec<_> = data
        .blocked()
        .map(|b| (b.rank, b.call, b.waits_for, b.peer_finished))
        .collect();
    assert_eq!(blocked, [(1, "recv", Some(2), true)]);
}

/// A rank that polls while another computes for ten limits gets its message and the run ends
/// well: the computing rank's next step is an event that is not a poll.
#[test]
fn livelock_not_while_another_rank_computes() {
    let o = sim(2, LIMIT_NS, |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            let mut r = world.irecv(&mut buf, 1, 5)?;
            while r.test().await?.is_none() {}
            drop(r);
            assert_eq!(buf, 7u64.to_le_bytes());
        } else {
            world.compute(Duration::from_nanos(10 * LIMIT_NS)).await;
            world.send(&7u64.to_le_bytes(), 0, 5).await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
}

/// A counted polling loop of two limits' worth of polls, then a send that ends the other
/// rank's wait: with the limit it is a livelock, with 0 (no limit) it ends well.
#[test]
fn livelock_limit_zero_lets_a_long_counted_polling_loop_end() {
    let program = |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            let mut r = world.irecv(&mut buf, 1, 5)?;
            for _ in 0..2 * LIMIT_NS / 100 {
                if r.test().await?.is_some() {
                    break;
                }
            }
            drop(r);
            world.send(&[1u8], 1, 6).await?;
        } else {
            world.recv(&mut buf, 0, 6).await?;
        }
        Ok(())
    };
    let o = sim(2, LIMIT_NS, program);
    let report = livelock_report(&o);
    assert!(report.contains("rank 0 polling in test"), "{report}");
    assert!(report.contains("rank 1 blocked in recv"), "{report}");
    let o = sim(2, 0, program);
    assert!(o.error.is_none(), "{:?}", o.error);
}

/// `--livelock-after` takes a time as model files write one, 1 s by default; a value that is
/// not a time is refused by the command line, naming the units.
#[test]
fn livelock_after_flag_takes_a_time() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        launch: mpsim::LaunchArgs,
    }
    let parse = |args: &[&str]| Cli::try_parse_from(["prog"].iter().chain(args));
    let default = parse(&[]).expect("no flag parses");
    assert_eq!(default.launch.livelock_after, 1_000_000_000);
    let set = parse(&["--livelock-after", "250ms"]).expect("a time parses");
    assert_eq!(set.launch.livelock_after, 250_000_000);
    assert_eq!(
        parse(&["--livelock-after", "0"])
            .expect("0")
            .launch
            .livelock_after,
        0
    );
    let err = parse(&["--livelock-after", "soon"]).err().expect("refused");
    assert!(err.to_string().contains("ns, us"), "{err}");
}

/// The time a report starts from: `from t=... ns`.
fn reported_from(report: &str) -> u64 {
    report
        .strip_prefix("from t=")
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("the report says from when: {report}"))
}

/// The report starts when the polls began, not at the first checkpoint (1/16 of the limit):
/// here at 0, where rank 0 starts polling and rank 1 blocks.
#[test]
fn livelock_reported_from_when_the_polls_began() {
    let o = sim(2, LIMIT_NS, |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            let mut r = world.irecv(&mut buf, 1, 5)?;
            while r.test().await?.is_none() {}
        } else {
            world.recv(&mut buf, 0, 9).await?;
        }
        Ok(())
    });
    let report = livelock_report(&o);
    assert_eq!(reported_from(&report), 0, "{report}");
}

/// Polls that run while another rank still works do not count: rank 1 computes until 5000,
/// then blocks; from then on nothing but polls runs.
#[test]
fn livelock_reported_from_the_last_thing_that_was_not_a_poll() {
    let o = sim(2, LIMIT_NS, |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            let mut r = world.irecv(&mut buf, 1, 5)?;
            while r.test().await?.is_none() {}
        } else {
            world.compute(Duration::from_nanos(5000)).await;
            world.recv(&mut buf, 0, 9).await?;
        }
        Ok(())
    });
    let report = livelock_report(&o);
    assert_eq!(reported_from(&report), 5000, "{report}");
}

/// What reaches a polling rank counts: rank 0's buffered message is received at 3000 (rank 1
/// computes until then), its ack reaches rank 0 at 3200 while it polls (and frees its buffer
/// bytes); its polls from then on are the ones that find nothing for ever.
#[test]
fn livelock_reported_from_the_last_ack_a_polling_rank_was_given() {
    let o = sim(2, LIMIT_NS, |world: Comm| async move {
        let mut buf = [0u8; 8];
        if world.rank() == 0 {
            world.buffer_attach(64)?;
            world.bsend(&[1u8; 8], 1, 1).await?;
            let mut r = world.irecv(&mut buf, 1, 5)?;
            while r.test().await?.is_none() {}
        } else {
            world.compute(Duration::from_nanos(3000)).await;
            world.recv(&mut buf, 0, 1).await?;
            world.recv(&mut buf, 0, 9).await?;
        }
        Ok(())
    });
    let report = livelock_report(&o);
    assert_eq!(reported_from(&report), 3200, "{report}");
}
