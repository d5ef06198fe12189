//! Shared by the collectives' tests (`coll_*.rs`): inputs every rank can compute for any
//! rank, sequential references, and a recorder the ranks' programs write their results to, so
//! that the test compares every rank's result after the run (on both backends).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use bytemuck::Pod;
use mpsim::{Algorithm, Backend, Collective, Comm, Result};

use crate::backends::{launcher, run_ok};

/// Communicator sizes of the sweeps: every one from 1 to 33.
pub const SIZES: [u32; 33] = {
    let mut s = [0; 33];
    let mut i = 0;
    while i < 33 {
        s[i] = i as u32 + 1;
        i += 1;
    }
    s
};

/// What each rank recorded: `(case, rank)` → the bytes of its result.
pub type Results = BTreeMap<(String, u32), Vec<u8>>;

/// Where the ranks' programs put their results.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Results>>);

impl Recorder {
    /// Records `data` as `rank`'s result of `case`.
    pub fn put<T: Pod>(&self, comm: &Comm, case: impl Into<String>, data: &[T]) {
        let mut map = self.0.lock().expect("recorder");
        let old = map.insert(
            (case.into(), comm.rank()),
            bytemuck::cast_slice(data).to_vec(),
        );
        assert!(old.is_none(), "a case recorded twice");
    }

    pub fn take(&self) -> Results {
        std::mem::take(&mut *self.0.lock().expect("recorder"))
    }
}

/// Runs `body` on `n` ranks of `backend` with `algo` forced for `coll` on the world, and
/// returns what the ranks recorded.
pub fn sweep<F, Fut>(
    backend: Backend,
    n: u32,
    coll: Collective,
    algo: Algorithm,
    body: F,
) -> Results
where
    F: Fn(Comm, Recorder) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>>,
{
    let rec = Recorder::default();
    let out = rec.clone();
    let program = move |world: Comm| {
        world
            .force_algorithm(coll, Some(algo))
            .expect("the collective has the algorithm");
        body(world, rec.clone())
    };
    if backend == Backend::Sim {
        // Quietly: `Launcher::run` prints the report.
        let outcome = launcher(n, backend).simulate(program);
        if let Some(e) = outcome.error {
            panic!("{coll} by {algo} on {n} ranks failed: {e}");
        }
    } else {
        run_ok(launcher(n, backend), program);
    }
    out.take()
}

/// The counts a sweep on `n` ranks tries: 0, 1, fewer than `n`, more than `n`, and (up to 8
/// ranks) one long enough for the rendezvous protocol.
pub fn counts(n: u32) -> Vec<usize> {
    let n = n as usize;
    let mut c = vec![0, 1, (n / 2).max(1), n + 3];
    if n <= 8 && n > 1 {
        c.push(9_000);
    }
    c.sort_unstable();
    c.dedup();
    c
}

/// The roots a sweep on `n` ranks tries: all of them up to 5 ranks, else the first, second,
/// middle and last.
pub fn roots(n: u32) -> Vec<u32> {
    if n <= 5 {
        (0..n).collect()
    } else {
        let mut r = vec![0, 1, n / 2, n - 1];
        r.dedup();
        r
    }
}

/// Rank `rank`'s integers for a call of `count` elements (`salt` tells calls apart): between
/// -1000 and 1000.
pub fn ints(rank: u32, count: usize, salt: u64) -> Vec<i64> {
    (0..count)
        .map(|i| {
            let x = (u64::from(rank) + 1) * 1_000_003 + i as u64 * 7_919 + salt * 104_729;
            (x % 2_001) as i64 - 1_000
        })
        .collect()
}

/// Rank `rank`'s floating-point numbers: sums of them depend on the order.
pub fn floats(rank: u32, count: usize, salt: u64) -> Vec<f64> {
    ints(rank, count, salt)
        .iter()
        .enumerate()
        .map(|(i, &x)| x as f64 * 0.37 + 1.0 / f64::from(rank + 1) + 1e-9 * i as f64)
        .collect()
}

/// A 2x2 matrix of wrapping `u64`s, row-major: multiplication is associative, not commutative.
pub type Mat = [u64; 4];

pub fn mat_mul(a: Mat, b: Mat) -> Mat {
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}

/// Rank `rank`'s matrices.
pub fn mats(rank: u32, count: usize, salt: u64) -> Vec<Mat> {
    ints(rank, count, salt)
        .iter()
        .map(|&x| {
            let x = x as u64;
            [x, 1, u64::from(rank) + 2, x ^ 5]
        })
        .collect()
}

/// The matrix product, element by element, as an `Op`: `b = a * b`.
pub fn mat_op() -> mpsim::Op<Mat> {
    mpsim::Op::user(
        |a: &[Mat], b: &mut [Mat]| {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = mat_mul(*x, *y);
            }
        },
        false,
    )
}

/// The element-wise reduction, in rank order, of `input(r)` over `ranks`.
pub fn fold<T: Copy>(
    ranks: impl Iterator<Item = u32>,
    input: impl Fn(u32) -> Vec<T>,
    f: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut acc: Option<Vec<T>> = None;
    for r in ranks {
        let x = input(r);
        acc = Some(match acc {
            None => x,
            Some(a) => a.iter().zip(&x).map(|(&a, &b)| f(a, b)).collect(),
        });
    }
    acc.unwrap_or_default()
}

/// `T`s as bytes.
pub fn bytes<T: Pod>(x: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(x).to_vec()
}

/// Checks that `rank`'s result of `case` is `expected`.
#[track_caller]
pub fn expect<T: Pod + std::fmt::Debug>(got: &Results, case: &str, rank: u32, expected: &[T]) {
    let Some(g) = got.get(&(case.to_string(), rank)) else {
        panic!("{case}: rank {rank} recorded nothing");
    };
    if g != &bytes(expected) {
        let g: Vec<T> = g
            .chunks_exact(size_of::<T>())
            .map(bytemuck::pod_read_unaligned)
            .collect();
        panic!("{case}: rank {rank} got {g:?}, expected {expected:?}");
    }
}

/// Checks that every one of `n` ranks recorded the same bits for `case`, and returns them.
#[track_caller]
pub fn same_on_all(got: &Results, case: &str, n: u32) -> Vec<u8> {
    let first = got
        .get(&(case.to_string(), 0))
        .unwrap_or_else(|| panic!("{case}: rank 0 recorded nothing"))
        .clone();
    for r in 1..n {
        assert_eq!(
            got.get(&(case.to_string(), r)),
            Some(&first),
            "{case}: rank {r}'s bits differ from rank 0's"
        );
    }
    first
}

/// Checks that the `f64`s `got` are within a relative 1e-9 of `expected`.
#[track_caller]
pub fn close(case: &str, got: &[u8], expected: &[f64]) {
    let got: Vec<f64> = got
        .chunks_exact(8)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    assert_eq!(got.len(), expected.len(), "{case}: length");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-9 * e.abs().max(1.0),
            "{case}: element {i} is {g}, expected about {e}"
        );
    }
}
