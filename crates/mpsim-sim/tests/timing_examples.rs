//! `docs/timing.md` §8 worked examples E1–E6, exact to the nanosecond. Programs are written
//! against the rank runtime directly (`common`); the `mpsim` crate runs the same examples through
//! its public API.

mod common;

use common::{clocks, run};
use mpsim_proto::error::Error;
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_sim::{DelayTable, Model};

#[test]
fn timing_e1_rendezvous_with_an_early_receiver() {
    let o = run(2, Model::worked_examples(), |r| async move {
        if r.me() == 0 {
            let s = r.isend(SendMode::Synchronous, 1, 0, 8)?;
            r.wait(s).await?;
        } else {
            let q = r.irecv(Source::Rank(0), Tag::Any);
            r.wait(q).await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![1200, 1000]);
}

#[test]
fn timing_e2_late_receiver() {
    let o = run(2, Model::worked_examples(), |r| async move {
        if r.me() == 0 {
            let s = r.isend(SendMode::Synchronous, 1, 0, 8)?;
            r.wait(s).await?;
        } else {
            r.compute(5000).await;
            let q = r.irecv(Source::Rank(0), Tag::Any);
            r.wait(q).await?;
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![5200, 5000]);
}

/// E3 in three runs: the first bsend returns at once; a second one at t=100 overflows and stops
/// the run at rank 0, t=100; at t=6000 (after the release at 5200) it succeeds.
#[test]
fn timing_e3_buffered_send_returns_at_once_and_overflow_stops_the_run() {
    let e3 = |second_at: Option<u64>| {
        run(2, Model::worked_examples(), move |r| async move {
            if r.me() == 0 {
                r.attach(64);
                let s = r.isend(SendMode::Buffered, 1, 0, 32)?;
                r.wait(s).await?;
                assert_eq!(r.now(), 0, "bsend ends at 0");
                if let Some(t) = second_at {
                    r.compute(t).await;
                    let s = r.isend(SendMode::Buffered, 1, 1, 40)?;
                    r.wait(s).await?;
                }
            } else {
                r.compute(5000).await;
                let q = r.irecv(Source::Rank(0), Tag::Value(0));
                r.wait(q).await?;
                if second_at.is_some() {
                    let q = r.irecv(Source::Rank(0), Tag::Value(1));
                    r.wait(q).await?;
                }
            }
            Ok(())
        })
    };
    let first_only = e3(None);
    assert!(first_only.error.is_none(), "{:?}", first_only.error);
    assert_eq!(clocks(&first_only), vec![0, 5000]);

    let early = e3(Some(100));
    match &early.error {
        Some(Error::BufferOverflow {
            site,
            requested: 40,
            attached: 64,
            used: 32,
        }) => {
            assert_eq!((site.rank, site.time_ns), (0, Some(100)));
        }
        other => panic!("expected the overflow at rank 0, t=100, got {other:?}"),
    }
    assert_eq!(early.report.ranks[0].clock_ns, 100);

    let late = e3(Some(6000));
    assert!(late.error.is_none(), "{:?}", late.error);
    // The second bsend at 6000 arrives at 7000; rank 1 posted at 5000 and ends at 7000.
    assert_eq!(clocks(&late), vec![6000, 7000]);
}

#[test]
fn timing_e4_non_overtaking() {
    let table = DelayTable::new("e4", vec![(8, 1000), (1024, 9000)]).expect("valid");
    let model = Model {
        ssend: table.clone(),
        bsend: table,
        ..Model::worked_examples()
    };
    let o = run(2, model, |r| async move {
        if r.me() == 0 {
            let a = r.isend(SendMode::Synchronous, 1, 5, 1024)?;
            let b = r.isend(SendMode::Synchronous, 1, 5, 8)?;
            r.wait(a).await?;
            r.wait(b).await?;
        } else {
            let q = r.irecv(Source::Rank(0), Tag::Value(5));
            let first = r.wait(q).await?;
            assert_eq!(first.status.bytes, 1024, "the 1024-byte message first");
            assert_eq!(r.now(), 9000);
            let q = r.irecv(Source::Rank(0), Tag::Value(5));
            let second = r.wait(q).await?;
            assert_eq!((second.status.bytes, r.now()), (8, 9000));
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(clocks(&o), vec![9200, 9000]);
}

#[test]
fn timing_e5_wildcard_picks_the_earliest_arrival() {
    for _ in 0..3 {
        let o = run(4, Model::worked_examples(), |r| async move {
            match r.me() {
                1 => {
                    let q = r.irecv(Source::Any, Tag::Any);
                    let first = r.wait(q).await?;
                    assert_eq!((first.status.source, r.now()), (2, 1000));
                    let q = r.irecv(Source::Any, Tag::Any);
                    let second = r.wait(q).await?;
                    assert_eq!((second.status.source, r.now()), (3, 1010));
                }
                2 => {
                    let s = r.isend(SendMode::Synchronous, 1, 0, 8)?;
                    r.wait(s).await?;
                }
                3 => {
                    r.compute(10).await;
                    let s = r.isend(SendMode::Synchronous, 1, 0, 8)?;
                    r.wait(s).await?;
                }
                _ => {}
            }
            Ok(())
        });
        assert!(o.error.is_none(), "{:?}", o.error);
        assert_eq!(clocks(&o), vec![0, 1010, 1200, 1210]);
    }
}

#[test]
fn timing_e6_deadlock_report() {
    let o = run(2, Model::worked_examples(), |r| async move {
        let peer = 1 - r.me();
        let s = r.isend(SendMode::Synchronous, peer, 0, 8)?;
        r.wait(s).await?;
        let q = r.irecv(Source::Rank(peer), Tag::Any);
        r.wait(q).await?;
        Ok(())
    });
    let Some(Error::Deadlock { report }) = &o.error else {
        panic!("expected a deadlock, got {:?}", o.error);
    };
    let report = report.to_string();
    assert!(
        report.contains(
            "rank 0 blocked in wait since t=0 ns, waiting for ssend (peer 1, tag 0, context 0)"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "rank 1 blocked in wait since t=0 ns, waiting for ssend (peer 0, tag 0, context 0)"
        ),
        "{report}"
    );
    assert!(report.ends_with("cycle 0 → 1 → 0"), "{report}");
    // The messages arrived (t=1000) but were never received.
    assert_eq!(o.report.warnings.len(), 2, "{:?}", o.report.warnings);
}
