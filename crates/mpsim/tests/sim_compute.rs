//! `spec/timing.md` §7: the three ways the simulator charges computation between calls.

use std::hint::black_box;
use std::time::Duration;

use mpsim::sim::{ComputeMode, Model};
use mpsim::{Comm, Launcher};

/// Rank 0 computes explicitly (5 us) and for real (a loop), then sends; rank 1 receives.
async fn program(world: Comm) -> mpsim::Result<()> {
    if world.rank() == 0 {
        world.compute(Duration::from_nanos(5_000)).await;
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        world.send(&[x], 1, 0).await?;
    } else {
        world.recv(&mut [0u64], 0, 0).await?;
    }
    Ok(())
}

fn run(mode: ComputeMode) -> mpsim::sim::Outcome {
    let model = Model {
        compute: mode,
        ..Model::worked_examples()
    };
    Launcher::new(2).model(model).simulate(program)
}

#[test]
fn sim_compute_modeled_counts_only_explicit_compute() {
    let o = run(ComputeMode::Modeled);
    assert!(o.error.is_none(), "{:?}", o.error);
    // 5,000 ns of compute, then an eager send arriving 1,000 ns later.
    assert_eq!(o.report.ranks[0].compute_ns, 5_000);
    assert_eq!(o.report.ranks[1].clock_ns, 6_000);
    assert!(o.report.to_string().contains("compute          modeled"));
}

#[test]
fn sim_compute_ignored_is_free() {
    let o = run(ComputeMode::Ignored);
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(o.report.ranks[0].compute_ns, 0);
    assert_eq!(o.report.ranks[1].clock_ns, 1_000);
}

#[test]
fn sim_compute_measured_charges_host_cpu_time_and_says_so() {
    let o = run(ComputeMode::Measured);
    assert!(o.error.is_none(), "{:?}", o.error);
    // The loop's host CPU time is charged on top of the explicit 5 us: the message leaves
    // later than under `modeled`. (How much later depends on the host: not asserted.)
    assert!(
        o.report.ranks[0].compute_ns > 5_000,
        "{:?}",
        o.report.ranks[0]
    );
    assert!(
        o.report.ranks[1].clock_ns > 6_000,
        "{:?}",
        o.report.ranks[1]
    );
    assert!(o.report.to_string().contains("NOT deterministic"));
}

/// Under measured compute, `now_ns` counts the rank's own code since it last resumed: a
/// program that times a phase of its code between two `now_ns` calls sees it (it saw 0 until
/// the rank suspended), and no more than the run charges that rank in all.
#[test]
fn sim_compute_measured_now_ns_sees_the_code_since_the_last_call() {
    let o = Launcher::new(1)
        .model(Model {
            compute: ComputeMode::Measured,
            ..Model::worked_examples()
        })
        .simulate(|world: Comm| async move {
            let t0 = world.now_ns();
            let mut x = 0u64;
            for i in 0..2_000_000u64 {
                x = black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            let t1 = world.now_ns();
            assert!(t1 > t0, "the phase took no time: {t0} -> {t1}");
            world.compute(Duration::ZERO).await;
            assert!(world.now_ns() >= t1, "the clock never goes back");
            Ok(())
        });
    assert!(o.error.is_none(), "{:?}", o.error);
}
