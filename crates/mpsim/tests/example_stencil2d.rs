//! `examples/stencil2d.rs` computes the same bits on both backends: the checksum under
//! `threads` equals the one under `sim` in each compute mode (which changes the predicted time,
//! never the arithmetic). Small sizes only; nothing here looks at host times.

use std::sync::Mutex;

use mpsim::sim::{ComputeMode, Model};
use mpsim::{Backend, Launcher};

// The example itself, so that its unit tests run with the suite and its program is callable.
#[allow(dead_code)] // its `main` and command line are not used here
#[path = "../examples/stencil2d.rs"]
mod stencil2d;

use stencil2d::{Summary, stencil};

/// Runs the stencil with `launcher`; returns rank 0's summary.
fn summary(launcher: &Launcher, n: usize, iterations: u32) -> Summary {
    let out = Mutex::new(None);
    launcher
        .run(|world| {
            let out = &out;
            async move {
                if let Some(s) = stencil(world, n, iterations).await? {
                    *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
                }
                Ok(())
            }
        })
        .expect("the stencil runs");
    // Rank 0 always returns a summary when the run succeeds.
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .expect("rank 0's summary")
}

fn sim(ranks: u32, compute: ComputeMode) -> Launcher {
    Launcher::new(ranks).model(Model {
        compute,
        ..Model::default()
    })
}

#[test]
fn example_stencil2d_checksum_is_identical_on_both_backends() {
    for ranks in [1, 2, 3, 4, 6] {
        let threads = summary(&Launcher::new(ranks).backend(Backend::Threads), 12, 7);
        assert!(threads.checksum > 0.0, "{threads:?}");
        for compute in [
            ComputeMode::Measured,
            ComputeMode::Modeled,
            ComputeMode::Ignored,
        ] {
            let s = summary(&sim(ranks, compute), 12, 7);
            assert_eq!(
                s.checksum.to_bits(),
                threads.checksum.to_bits(),
                "{ranks} ranks, {compute:?}: sim {s:?}, threads {threads:?}"
            );
        }
    }
}

#[test]
fn example_stencil2d_checksum_depends_on_the_iterations() {
    // A checksum that ignored the sweeps would pass the test above trivially.
    let launcher = sim(4, ComputeMode::Ignored);
    assert_ne!(
        summary(&launcher, 8, 1).checksum,
        summary(&launcher, 8, 2).checksum
    );
}

#[test]
fn example_stencil2d_modeled_prediction_is_communication_only_and_deterministic() {
    // `modeled`: the sweep (plain code) is not charged, the same virtual time on every run.
    let launcher = sim(4, ComputeMode::Modeled);
    let first = summary(&launcher, 8, 5);
    assert_eq!(first.sweep_ns, 0, "{first:?}");
    assert!(first.time_ns > 0, "{first:?}");
    assert_eq!(summary(&launcher, 8, 5), first);
}
