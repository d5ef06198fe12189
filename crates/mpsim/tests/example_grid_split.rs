//! `examples/grid_split.rs` on both backends: every row and column sum checks out (the
//! example asserts them) for grids of several shapes, one column and one row included.

use mpsim::{Backend, Launcher};

// The example itself, so that its unit tests run with the suite and its program is callable.
#[allow(dead_code)] // its `main` and command line are not used here
#[path = "../examples/grid_split.rs"]
mod grid_split;

#[test]
fn example_grid_split_sums_rows_and_columns_on_both_backends() {
    for backend in [Backend::Sim, Backend::Threads] {
        for (ranks, cols) in [(6, 2), (6, 3), (4, 1), (4, 4), (1, 1)] {
            Launcher::new(ranks)
                .backend(backend)
                .run(|world| grid_split::grid(world, cols, "test"))
                .unwrap_or_else(|e| panic!("{backend:?}, {ranks} ranks, {cols} cols: {e}"));
        }
    }
}
