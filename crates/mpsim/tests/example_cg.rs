//! `examples/cg.rs` on both backends: the conjugate-gradient solve reaches its tolerance and
//! its residual, computed afresh, checks out (the example fails otherwise), on one rank,
//! several, and a size whose blocks are one row.

use mpsim::{Backend, Launcher};

// The example itself, so that its program is callable.
#[allow(dead_code)] // its `main` and command line are not used here
#[path = "../examples/cg.rs"]
mod cg;

#[test]
fn example_cg_converges_and_checks_its_residual_on_both_backends() {
    for backend in [Backend::Sim, Backend::Threads] {
        for (ranks, n) in [(1, 40), (3, 17), (8, 1), (6, 64)] {
            Launcher::new(ranks)
                .backend(backend)
                .run(move |world| async move {
                    let solved = cg::solve(&world, n, 1e-10).await?;
                    assert!(solved.residual <= 1e-9, "residual {}", solved.residual);
                    assert!(solved.iterations > 0);
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{backend:?}, {ranks} ranks, {n} rows each: {e}"));
        }
    }
}
