//! Virtual time past its range: a `u64` of nanoseconds ends after about 584 years. A model with
//! absurd delays, or a program that computes for centuries, must stop the run with
//! `Error::TimeOverflow` naming the rank, the time and what would happen too late, rather
//! than report a clock stuck at `u64::MAX` (times add with saturation) as a prediction.
//! Every case runs sequentially and in parallel, with the same outcome (`common`).

mod common;

use std::future::Future;
use std::time::Duration;

use common::simulate_all_ways;
use mpsim::sim::{CpuModel, DelayTable, Model, Outcome};
use mpsim::{Comm, Error, Launcher};

/// Half of virtual time's range: two such computes overflow it.
const HALF: Duration = Duration::from_nanos(1 << 63);

/// `program` on `ranks` ranks of `model`, sequentially and in parallel.
fn sim<F, Fut>(model: Model, ranks: u32, program: F) -> Outcome
where
    F: Fn(Comm) -> Fut + Sync,
    Fut: Future<Output = mpsim::Result<()>>,
{
    simulate_all_ways(Launcher::new(ranks).model(model), ranks, program)
}

/// The run's error, which must be a time overflow: (rank, time, what).
fn overflow(o: &Outcome) -> (u32, u64, String) {
    match &o.error {
        Some(Error::TimeOverflow {
            rank,
            time_ns,
            what,
        }) => (*rank, *time_ns, what.clone()),
        other => panic!("expected a time overflow, got {other:?}"),
    }
}

#[test]
fn sim_time_overflow_of_compute_stops_the_run() {
    let o = sim(Model::worked_examples(), 2, |world: Comm| async move {
        if world.rank() == 1 {
            world.compute(HALF).await;
            world.compute(HALF).await;
        }
        Ok(())
    });
    let (rank, time_ns, what) = overflow(&o);
    assert_eq!((rank, time_ns), (1, 1 << 63));
    assert_eq!(
        what,
        "the end of its compute of 9223372036854775808 ns would come"
    );
    let shown = o.error.as_ref().unwrap().to_string();
    assert!(
        shown.starts_with("rank 1: virtual time overflow at t=9223372036854775808 ns"),
        "{shown}"
    );
    assert!(shown.contains("about 584 years"), "{shown}");
    // Rank 1's clock is not reported as reaching the end of time.
    assert!(o.report.ranks.iter().all(|r| r.clock_ns < u64::MAX));
}

/// A compute longer than virtual time's whole range is named as the program wrote it: it was
/// reported as "a compute of 18446744073709551615 ns" (its nanoseconds, saturated).
#[test]
fn sim_time_overflow_of_a_compute_past_the_range_names_its_length() {
    let o = sim(Model::worked_examples(), 2, |world: Comm| async move {
        if world.rank() == 1 {
            world.compute(Duration::from_nanos(40)).await;
            world.compute(Duration::from_secs(1 << 40)).await;
        }
        Ok(())
    });
    let (rank, time_ns, what) = overflow(&o);
    assert_eq!((rank, time_ns), (1, 40));
    assert_eq!(what, "the end of its compute of 1099511627776s would come");
}

#[test]
fn sim_time_overflow_of_a_message_names_it() {
    // The message would arrive 2^63 ns after it is sent, 2^63 ns into the run.
    let model = Model {
        bsend: DelayTable::constant(1 << 63).expect("positive"),
        ..Model::worked_examples()
    };
    let o = sim(model, 2, |world: Comm| async move {
        if world.rank() == 0 {
            world.compute(HALF).await;
            world.send(&[7u64], 1, 3).await?;
        } else {
            world.recv(&mut [0u64], 0, 3).await?;
        }
        Ok(())
    });
    assert_eq!(
        overflow(&o),
        (
            0,
            1 << 63,
            "a message of 8 bytes to rank 1 would arrive".into()
        )
    );
}

#[test]
fn sim_time_overflow_of_an_acknowledgement_names_it() {
    let model = Model {
        ack_latency_ns: u64::MAX,
        ..Model::worked_examples()
    };
    let o = sim(model, 2, |world: Comm| async move {
        if world.rank() == 0 {
            world.ssend(&[7u64], 1, 3).await?;
        } else {
            world.recv(&mut [0u64], 0, 3).await?;
        }
        Ok(())
    });
    // The receive matches at 1,000 ns (the table's delay) and acknowledges then.
    assert_eq!(
        overflow(&o),
        (1, 1_000, "an acknowledgement to rank 0 would arrive".into())
    );
}

#[test]
fn sim_time_overflow_of_a_wake_up_names_it() {
    // 3 ranks on 2 cores: a blocked rank takes `wake_latency` to run again (X2).
    let model = Model {
        cpu: CpuModel {
            cores: Some(2),
            wake_latency_ns: u64::MAX,
            ..CpuModel::default()
        },
        ..Model::worked_examples()
    };
    let o = sim(model, 3, |world: Comm| async move {
        if world.rank() == 0 {
            world.send(&[7u64], 1, 3).await?;
        } else if world.rank() == 1 {
            world.recv(&mut [0u64], 0, 3).await?;
        }
        Ok(())
    });
    assert_eq!(
        overflow(&o),
        (1, 1_000, "its wake-up in recv would come".into())
    );
}
