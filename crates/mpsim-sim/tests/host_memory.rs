//! A run that is about to exhaust the host's memory stops with `Error::NoMemory` and a report
//! as of the stop (S16), instead of being killed by the system without a word. The host cannot
//! be filled in a test: a floor above all it has makes the watch trip at its first look, and a
//! child process under an address-space limit (`ulimit -v`) is filled instead.

mod common;

use common::child::under_address_space_limit;
use common::{Rank, run_with};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_sim::{Model, Options};

/// Rank 0 sends 1,000 messages to rank 1, which receives them: about 2,000 events, 10 us apart.
async fn stream(r: Rank) -> Result<(), Error> {
    for _ in 0..1000 {
        if r.me() == 0 {
            let s = r.isend(SendMode::Standard, 1, 0, 8)?;
            r.wait(s).await?;
            r.compute(10_000).await;
        } else {
            let q = r.irecv(Source::Rank(0), Tag::Value(0));
            r.wait(q).await?;
        }
    }
    Ok(())
}

#[test]
fn a_run_short_of_host_memory_stops_with_a_clear_error() {
    let options = Options {
        memory_floor: Some(u64::MAX),
        ..Options::new(2, Model::default())
    };
    let o = run_with(&options, stream);
    if std::fs::read_to_string("/proc/meminfo").is_err() {
        // No memory to watch on this host: the run goes to its end.
        assert!(o.error.is_none());
        return;
    }
    let Some(Error::NoMemory { what }) = &o.error else {
        panic!("expected NoMemory, got {:?}", o.error);
    };
    assert!(
        what.contains("nearly exhausted") && what.contains("after 64 events"),
        "{what}"
    );
    assert_eq!(
        o.report.stopped.as_deref(),
        Some(o.error.as_ref().unwrap().to_string().as_str())
    );
    assert_eq!(
        o.report.events,
        Some(64),
        "stopped at the first look, not at the end"
    );
    // The clocks are those of the stop, well before the 10 ms the stream takes in all.
    let latest = o.report.ranks.iter().map(|r| r.clock_ns).max().unwrap();
    assert!(latest < 1_000_000, "{latest}");
}

#[test]
fn a_run_with_room_to_spare_is_not_stopped() {
    let options = Options {
        memory_floor: Some(0),
        ..Options::new(2, Model::default())
    };
    let o = run_with(&options, stream);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert!(o.report.ranks.iter().all(|r| r.clock_ns >= 999 * 10_000));
}

/// On two threads, each partition watches the host too: the run stops with the same kind of
/// error, early, and does not hang (the other partition ends its round and stops).
#[test]
fn a_parallel_run_short_of_host_memory_stops_too() {
    let options = Options {
        memory_floor: Some(u64::MAX),
        workers: 2,
        ..Options::new(2, Model::default())
    };
    let o = run_with(&options, stream);
    if std::fs::read_to_string("/proc/meminfo").is_err() {
        assert!(o.error.is_none());
        return;
    }
    assert!(
        matches!(o.error, Some(Error::NoMemory { .. })),
        "{:?}",
        o.error
    );
    assert!(o.report.events <= Some(2 * 64), "{:?}", o.report.events);
    let latest = o.report.ranks.iter().map(|r| r.clock_ns).max().unwrap();
    assert!(latest < 1_000_000, "{latest}");
}

/// Every rank computes for 1 us: all of them start at time 0, then wait.
async fn busy(r: Rank) -> Result<(), Error> {
    r.compute(1_000).await;
    Ok(())
}

/// A shortage stops the run at once, not one lookahead later as other errors do (D2): with
/// 4,000 ranks starting at time 0, the run stops at the watch's first look, 64 events in,
/// rather than after starting every rank (which a run short of memory could not afford).
#[test]
fn a_run_short_of_host_memory_stops_at_once_even_within_a_lookahead() {
    if std::fs::read_to_string("/proc/meminfo").is_err() {
        return;
    }
    let options = Options {
        memory_floor: Some(u64::MAX),
        ..Options::new(4_000, Model::default())
    };
    let o = run_with(&options, busy);
    assert!(
        matches!(o.error, Some(Error::NoMemory { .. })),
        "{:?}",
        o.error
    );
    assert_eq!(o.report.events, Some(64));
}

/// Making the ranks' programs is watched too (every 4,096): a run of many ranks short of
/// memory is refused while it is being set up, before any event.
#[test]
fn a_run_short_of_host_memory_is_refused_while_its_ranks_are_made() {
    if std::fs::read_to_string("/proc/meminfo").is_err() {
        return;
    }
    let options = Options {
        memory_floor: Some(u64::MAX),
        ..Options::new(10_000, Model::default())
    };
    let o = run_with(&options, busy);
    let Some(Error::NoMemory { what }) = &o.error else {
        panic!("expected NoMemory, got {:?}", o.error);
    };
    assert!(
        what.contains("after making 4095 of the ranks' programs"),
        "{what}"
    );
    assert_eq!(o.report.events, Some(0));
}

/// Under an address-space limit (`ulimit -v`), which the allocator meets by aborting the
/// process, a run too big for it ends with `NoMemory` as a run short of host memory does:
/// refused up front or stopped part way, depending on how the limit compares with the least
/// its ranks need (`common::child`: in a child process under a 512 MiB limit).
#[cfg(target_os = "linux")]
#[test]
fn a_run_under_an_address_space_limit_stops_with_a_clear_error() {
    under_address_space_limit(
        "a_run_under_an_address_space_limit_stops_with_a_clear_error",
        512 << 10,
        || {
            // About 1 GB of ranks.
            let o = run_with(&Options::new(1_000_000, Model::default()), busy);
            assert!(
                matches!(o.error, Some(Error::NoMemory { .. })),
                "expected NoMemory, got {:?}",
                o.error
            );
        },
    );
}
