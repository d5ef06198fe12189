//! A simulated run whose interrupt flag is raised (by a signal's handler, in `mpsim`'s
//! `Launcher::run`) stops with `Error::Interrupted` at the next look (every 64 events, where
//! the host's memory is watched), with a report as of the stop and a trace that ends there,
//! on one thread or several; a flag raised while the ranks are being made refuses the run.
//! The signals themselves are tested on child processes (`mpsim`'s `tests/example_commands.rs`).

mod common;

use common::{Rank, run_with};
use mpsim_proto::error::Error;
use mpsim_proto::interrupt::{Interrupt, Signal};
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_proto::trace::TraceEvent;
use mpsim_sim::{Model, Options};

/// Rank 0 sends 1,000 messages to rank 1, 10 us apart: about 2,000 events.
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

fn raised(signal: Signal) -> Option<Interrupt> {
    let flag = Interrupt::new();
    flag.raise(signal);
    Some(flag)
}

#[test]
fn an_interrupted_run_stops_at_the_next_look_with_a_report_and_trace_of_the_stop() {
    for workers in [1, 2] {
        let options = Options {
            interrupt: raised(Signal::Interrupt),
            trace: true,
            workers,
            ..Options::new(2, Model::default())
        };
        let o = run_with(&options, stream);
        let Some(Error::Interrupted {
            signal: Signal::Interrupt,
            time_ns: Some(t),
        }) = o.error
        else {
            panic!("expected Interrupted, got {:?}", o.error);
        };
        assert!(
            o.report.events.is_some_and(|e| e <= 2 * 64),
            "{:?}",
            o.report.events
        );
        assert_eq!(
            o.report.stopped.as_deref(),
            Some(
                format!("interrupted by SIGINT at t={t} ns: the run was stopped before its end")
                    .as_str()
            )
        );
        assert!(o.report.ranks.iter().all(|r| r.clock_ns <= t));
        let trace = o.trace.expect("a trace");
        assert!(!trace.is_empty());
        for e in trace.events() {
            match *e {
                TraceEvent::Span { end_ns, .. } => assert!(end_ns <= t, "{e:?} past {t}"),
                TraceEvent::Message { sent_ns, .. } => assert!(sent_ns < t, "{e:?} past {t}"),
            }
        }
    }
}

/// Raised while 10,000 ranks' programs are made (it is looked at every 4,096): the run does
/// not start.
#[test]
fn an_interrupt_while_the_ranks_are_made_refuses_the_run() {
    let options = Options {
        interrupt: raised(Signal::Terminate),
        ..Options::new(10_000, Model::default())
    };
    let o = run_with(&options, stream);
    assert_eq!(
        o.error,
        Some(Error::Interrupted {
            signal: Signal::Terminate,
            time_ns: None
        })
    );
    assert!(o.report.ranks.is_empty());
}

/// A flag never raised changes nothing.
#[test]
fn a_flag_not_raised_lets_the_run_end() {
    let options = Options {
        interrupt: Some(Interrupt::new()),
        ..Options::new(2, Model::default())
    };
    let o = run_with(&options, stream);
    assert!(o.error.is_none(), "{:?}", o.error);
}
