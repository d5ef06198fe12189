//! The BSP examples (`examples/bsp_*.rs`) on both backends, on several sizes (one process,
//! more processes than elements included): each checks its own result and fails the run if it
//! is wrong; here the results are also compared across backends.

use mpsim::bsp;
use mpsim::{Backend, Launcher};

// The examples themselves, so that their programs are callable.
#[allow(dead_code)]
#[path = "../examples/bsp_exchange.rs"]
mod bsp_exchange;
#[allow(dead_code)] // their `main`s and command lines are not used here
#[path = "../examples/bsp_inprod.rs"]
mod bsp_inprod;
#[allow(dead_code)]
#[path = "../examples/bsp_prefix.rs"]
mod bsp_prefix;
#[allow(dead_code)]
#[path = "../examples/bsp_shift.rs"]
mod bsp_shift;
#[allow(dead_code)]
#[path = "../examples/bsp_sort.rs"]
mod bsp_sort;
#[allow(dead_code)]
#[path = "../examples/bsp_spmv.rs"]
mod bsp_spmv;

const CASES: [(u32, u64); 5] = [(1, 10), (2, 1), (3, 100), (4, 1000), (5, 3)];

fn each(mut run: impl FnMut(&Launcher, u32, u64) -> mpsim::Result<()>) {
    for backend in [Backend::Sim, Backend::Threads] {
        for (p, n) in CASES {
            let launcher = Launcher::new(p).backend(backend);
            run(&launcher, p, n)
                .unwrap_or_else(|e| panic!("{backend:?}, {p} processes, n {n}: {e}"));
        }
    }
}

#[test]
fn example_bsp_inprod_checks_its_sum_on_both_backends() {
    each(|l, _, n| {
        bsp::run_with(l, |ctx| async move {
            bsp_inprod::inprod(ctx, n, "test").await.map(drop)
        })
    });
}

#[test]
fn example_bsp_prefix_checks_every_sum_on_both_backends() {
    each(|l, _, n| {
        bsp::run_with(l, |ctx| async move {
            bsp_prefix::prefix(ctx, n, "test").await.map(drop)
        })
    });
}

#[test]
fn example_bsp_sort_sorts_on_both_backends() {
    each(|l, _, n| {
        bsp::run_with(l, |ctx| async move {
            bsp_sort::sort(ctx, n, "test").await.map(drop)
        })
    });
}

#[test]
fn example_bsp_spmv_checks_every_entry_on_both_backends() {
    each(|l, _, n| {
        bsp::run_with(l, |ctx| async move {
            bsp_spmv::spmv(ctx, n, "test").await.map(drop)
        })
    });
}

/// The cost-model timing runs them too, each superstep in the table.
#[test]
fn example_bsp_sort_under_the_cost_model() {
    let model = mpsim::sim::Model {
        bsp_g_ps_per_byte: Some(500),
        bsp_l_ns: Some(20_000),
        bsp_timing: bsp::BspTiming::Cost,
        ..mpsim::sim::Model::default_machine()
    };
    let outcome = bsp::simulate(&Launcher::new(4).model(model), |ctx| async move {
        bsp_sort::sort(ctx, 1000, "test").await.map(drop)
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let table = outcome.report.bsp.expect("a table");
    assert_eq!(table.supersteps.len(), 5);
    assert_eq!(outcome.report.ranks[0].clock_ns, table.total_ns());
}

#[test]
fn example_bsp_exchange_and_shift_check_what_they_receive_on_both_backends() {
    for backend in [Backend::Sim, Backend::Threads] {
        for p in [1, 2, 4] {
            let l = Launcher::new(p).backend(backend);
            for mode in [bsp_exchange::Mode::Bsmp, bsp_exchange::Mode::Drma] {
                bsp::run_with(&l, |ctx| async move {
                    bsp_exchange::exchange(ctx, mode, 40, 3, "test").await
                })
                .unwrap_or_else(|e| panic!("{backend:?} {p} {mode:?}: {e}"));
            }
            bsp::run_with(&l, |ctx| async move {
                bsp_shift::shift(ctx, 5, 3, "test").await
            })
            .unwrap_or_else(|e| panic!("{backend:?} {p} shift: {e}"));
        }
    }
}
