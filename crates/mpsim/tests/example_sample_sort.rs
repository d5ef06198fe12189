//! `examples/sample_sort.rs` on both backends: every rank's keys come out sorted, in order
//! across ranks, none lost (the example checks; here also against a sequential sort), for
//! several rank counts, a rank count above the keys per rank, and no keys at all.

use std::sync::{Arc, Mutex};

use mpsim::{Backend, Launcher};

// The example itself, so that its program is callable.
#[allow(dead_code)] // its `main` and command line are not used here
#[path = "../examples/sample_sort.rs"]
mod sample_sort;

#[test]
fn example_sample_sort_sorts_across_ranks_on_both_backends() {
    for backend in [Backend::Sim, Backend::Threads] {
        for (ranks, keys) in [(1, 50), (4, 1000), (7, 333), (9, 3), (3, 0)] {
            let out = Arc::new(Mutex::new(vec![Vec::new(); ranks as usize]));
            let got = Arc::clone(&out);
            Launcher::new(ranks)
                .backend(backend)
                .run(move |world| {
                    let got = Arc::clone(&got);
                    async move {
                        let mine = sample_sort::keys(world.rank(), keys);
                        let sorted = sample_sort::sort(&world, mine).await?;
                        got.lock().unwrap()[world.rank() as usize] = sorted;
                        Ok(())
                    }
                })
                .unwrap_or_else(|e| panic!("{backend:?}, {ranks} ranks, {keys} keys: {e}"));
            let mut expected: Vec<u64> = (0..ranks)
                .flat_map(|r| sample_sort::keys(r, keys))
                .collect();
            expected.sort_unstable();
            let all: Vec<u64> = out.lock().unwrap().concat();
            assert_eq!(all, expected, "{backend:?}, {ranks} ranks, {keys} keys");
        }
    }
}
