//! The report's message counts, the same on both backends: a rank's `received` counts the
//! messages its receives took (`recv`, `irecv`, `mrecv`), not those that arrived; what arrived
//! and no receive took is `unreceived` (and a warning each), on a failed run too; a probe
//! receives nothing; a send cancelled in time is neither. (Issue 39: a rank with 30 messages
//! never received reported `recv_msgs=30` under sim and 0 under threads; a deadlocked receiver
//! reported 1.)

mod common;
#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use mpsim::sim::{Report, TimeBase};
use mpsim::{Backend, Comm, Error, Launcher};

/// The report of `program` on `ranks` ranks of `backend`, with the run's error: under sim
/// sequential and parallel alike (`common::simulate_all_ways`).
fn report<F, Fut>(backend: Backend, ranks: u32, program: F) -> (Report, Option<Error>)
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: std::future::Future<Output = mpsim::Result<()>>,
{
    match backend {
        Backend::Sim => {
            let o = common::simulate_all_ways(Launcher::new(ranks), ranks, program);
            (o.report, o.error)
        }
        _ => Launcher::new(ranks).measure(program),
    }
}

/// Messages and bytes by protocol (eager, buffered, rendezvous, ready).
fn counts(t: &mpsim::sim::Traffic) -> ([u64; 4], [u64; 4]) {
    (t.messages, t.bytes)
}

/// Rank 0 sends 30 messages that rank 1 never receives: rank 1 received none, and 30 arrived
/// unreceived, on both backends; the text report says so on a line of its own.
fn thirty_messages_never_received(backend: Backend) {
    let (report, error) = report(backend, 2, |world: Comm| async move {
        if world.rank() == 0 {
            for tag in 0..30 {
                world.send(&[7u8; 8], 1, tag).await?;
            }
        }
        Ok(())
    });
    assert!(error.is_none(), "{error:?}");
    let (sender, receiver) = (&report.ranks[0], &report.ranks[1]);
    assert_eq!(counts(&sender.sent), ([30, 0, 0, 0], [240, 0, 0, 0]));
    assert_eq!(receiver.received.total_messages(), 0, "{receiver:?}");
    assert_eq!(
        counts(&receiver.unreceived),
        ([30, 0, 0, 0], [240, 0, 0, 0])
    );
    assert_eq!(report.total_unreceived().total_messages(), 30);
    assert_eq!(report.warnings.len(), 30);
    let text = report.to_string();
    assert!(
        text.contains("\nnever received   30 messages, 240 bytes (arrived, taken by no receive)\n"),
        "{text}"
    );
    // recv_msgs, the last column of rank 1's line, is 0.
    let line = text
        .lines()
        .find(|l| l.starts_with("1 "))
        .expect("rank 1's line");
    assert!(line.ends_with(" 0"), "{line}");
}

on_both!(thirty_messages_never_received => report_s14_thirty_messages_never_received_sim, report_s14_thirty_messages_never_received_threads);

/// A deadlock: rank 1 waits for tag 1 and rank 0 sent tag 2, then waits for rank 1. Rank 1
/// received nothing; the message it did not take is counted unreceived and warned of, though
/// the run failed; the report's `stopped` is the deadlock.
fn deadlocked_receiver_received_nothing(backend: Backend) {
    let (report, error) = report(backend, 2, |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[1u8; 4], 1, 2).await?;
            world.recv(&mut [0u8; 4], 1, 3).await?;
        } else {
            world.recv(&mut [0u8; 4], 0, 1).await?;
        }
        Ok(())
    });
    assert!(matches!(error, Some(Error::Deadlock { .. })), "{error:?}");
    assert_eq!(report.stopped, error.as_ref().map(ToString::to_string));
    let receiver = &report.ranks[1];
    assert_eq!(receiver.received.total_messages(), 0, "{receiver:?}");
    assert_eq!(counts(&receiver.unreceived), ([1, 0, 0, 0], [4, 0, 0, 0]));
    assert_eq!(
        report.warnings,
        ["a message of 4 bytes from rank 0 to rank 1 (tag 2, context 0) was never received"]
    );
}

on_both!(deadlocked_receiver_received_nothing => report_s15_a_deadlocked_receiver_received_nothing_sim, report_s15_a_deadlocked_receiver_received_nothing_threads);

/// What takes a message: a receive (after a probe too) and `mrecv`; a probe alone does not.
/// Rank 0 sends tags 1 to 4 eagerly and tag 5 by `ssend` (rendezvous); rank 1 probes and
/// receives tag 1, only probes tag 2, takes tag 3 by `mprobe` + `mrecv`, ignores tag 4 and
/// receives tag 5.
fn probes_receive_nothing(backend: Backend) {
    let (report, error) = report(backend, 2, |world: Comm| async move {
        if world.rank() == 0 {
            for tag in 1..=4 {
                world.send(&[tag as u8; 8], 1, tag).await?;
            }
            world.ssend(&[5u8; 16], 1, 5).await?;
        } else {
            let mut buf = [0u8; 16];
            world.probe(0, 1).await?;
            world.recv(&mut buf[..8], 0, 1).await?;
            world.probe(0, 2).await?;
            world.mprobe(0, 3).await?.mrecv(&mut buf[..8]).await?;
            world.recv(&mut buf, 0, 5).await?;
        }
        Ok(())
    });
    assert!(error.is_none(), "{error:?}");
    let receiver = &report.ranks[1];
    assert_eq!(counts(&receiver.received), ([2, 0, 1, 0], [16, 0, 16, 0]));
    assert_eq!(counts(&receiver.unreceived), ([2, 0, 0, 0], [16, 0, 0, 0]));
    assert_eq!(
        counts(&report.ranks[0].sent),
        ([4, 0, 1, 0], [32, 0, 16, 0])
    );
}

on_both!(probes_receive_nothing => report_probes_receive_nothing_receives_and_mrecv_do_sim, report_probes_receive_nothing_receives_and_mrecv_do_threads);

/// A send cancelled before any receive took it (`docs/p2p.md` §5) was sent, but is neither
/// received nor unreceived: its receiver never had it.
fn cancelled_send_is_neither(backend: Backend) {
    let (report, error) = report(backend, 2, |world: Comm| async move {
        if world.rank() == 0 {
            let mut r = world.issend(&[1u8; 8], 1, 9)?;
            r.cancel()?;
            assert!(r.wait().await?.cancelled, "nothing could take it");
        }
        Ok(())
    });
    assert!(error.is_none(), "{error:?}");
    assert_eq!(report.ranks[0].sent.total_messages(), 1);
    let receiver = &report.ranks[1];
    assert_eq!(receiver.received.total_messages(), 0, "{receiver:?}");
    assert_eq!(receiver.unreceived.total_messages(), 0, "{receiver:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

on_both!(cancelled_send_is_neither => report_a_cancelled_send_is_neither_received_nor_unreceived_sim, report_a_cancelled_send_is_neither_received_nor_unreceived_threads);

/// The two backends' reports of one program have the same fields, and each says its backend
/// and time base.
#[test]
fn report_one_type_names_its_backend_and_time_base() {
    let program = |world: Comm| async move {
        let peer = 1 - world.rank();
        let mut got = [0u8; 2];
        world
            .sendrecv(&[1u8; 2], peer, 0, &mut got, peer, 0)
            .await?;
        Ok(())
    };
    let (sim, _) = report(Backend::Sim, 2, program);
    let (threads, _) = report(Backend::Threads, 2, program);
    assert_eq!((sim.backend, sim.time_base), ("sim", TimeBase::Virtual));
    assert_eq!(
        (threads.backend, threads.time_base),
        ("threads", TimeBase::Host)
    );
    for (s, t) in sim.ranks.iter().zip(&threads.ranks) {
        assert_eq!(
            (s.sent, s.received, s.unreceived),
            (t.sent, t.received, t.unreceived)
        );
    }
}
