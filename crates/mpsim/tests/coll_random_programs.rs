//! Random programs of collectives, blocking and nonblocking, and point-to-point messages on
//! random communicators (`dup`, `split`), against a sequential reference, on `sim` and
//! `threads` (issue 35's property test); and the determinism of a collective-heavy program:
//! the same report and trace, byte for byte, simulated on one thread or several.
//!
//! A program is a list of operations every rank runs in order. Communicators live in slots:
//! slot 0 is the world, and each `dup` or `split` adds one, made from an earlier slot (a split
//! gives every rank the communicator of its own color). A collective names a slot, a kind, a
//! count and a root, and is blocking or nonblocking; a nonblocking one stays in flight until
//! the next `WaitAll` or the program's end, while later operations (collectives, messages,
//! communicator calls) run. Every input is a function of the operation, the world rank and the
//! position, so the reference computes every rank's result on its own.

#[allow(unused_macros)] // `on_both!`: these tests pick their backends
#[path = "common/backends.rs"]
mod backends;
mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mpsim::{Backend, Comm, Launcher, Op, Request, wait_all};
use proptest::prelude::*;

use backends::{launcher, run_ok};

/// A collective of the programs.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Allgather,
    Alltoall,
    Scan,
    Exscan,
    ReduceScatterBlock,
}

const KINDS: [Kind; 10] = [
    Kind::Barrier,
    Kind::Bcast,
    Kind::Reduce,
    Kind::Allreduce,
    Kind::Gather,
    Kind::Allgather,
    Kind::Alltoall,
    Kind::Scan,
    Kind::Exscan,
    Kind::ReduceScatterBlock,
];

/// One operation of a program.
#[derive(Clone, Debug)]
enum Step {
    /// A new slot: `dup` of slot `from`.
    Dup { from: usize },
    /// A new slot: `split` of slot `from`, color `(rank * 7 + salt) % colors`, ranked in
    /// reverse.
    Split { from: usize, colors: u32, salt: u32 },
    /// A collective on slot `on`.
    Coll {
        on: usize,
        kind: Kind,
        count: usize,
        root: u32,
        nonblocking: bool,
    },
    /// Every rank sends to the next in slot `on` and receives from the one before.
    Shift { on: usize },
    /// Completes every nonblocking collective in flight.
    WaitAll,
}

/// Rank `world`'s input to operation `op`, element `k`.
fn input(op: usize, world: u32, k: usize) -> i64 {
    ((op * 1_009 + world as usize * 37 + k * 13) % 997) as i64 - 498
}

/// The members of each slot's communicator as each world rank sees it: `slots[s][w]` is the
/// world ranks of rank `w`'s communicator in slot `s`, in its rank order.
fn memberships(n: u32, steps: &[Step]) -> Vec<Vec<Vec<u32>>> {
    let mut slots = vec![vec![(0..n).collect::<Vec<u32>>(); n as usize]];
    for step in steps {
        match *step {
            Step::Dup { from } => slots.push(slots[from].clone()),
            Step::Split { from, colors, salt } => {
                let made = (0..n as usize)
                    .map(|w| {
                        let group = &slots[from][w];
                        let color = |r: usize| (r as u32 * 7 + salt) % colors;
                        let mine = color(group.iter().position(|&x| x == w as u32).unwrap());
                        // Key: the reverse of the rank (ties cannot happen).
                        (0..group.len())
                            .rev()
                            .filter(|&r| color(r) == mine)
                            .map(|r| group[r])
                            .collect()
                    })
                    .collect();
                slots.push(made);
            }
            _ => {}
        }
    }
    slots
}

/// What each rank gets from each collective: `(step, world rank)` → its result; and the
/// length of each rank's receive buffer.
fn reference(n: u32, steps: &[Step]) -> BTreeMap<(usize, u32), Vec<i64>> {
    let slots = memberships(n, steps);
    let mut out = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        let Step::Coll {
            on,
            kind,
            count,
            root,
            ..
        } = *step
        else {
            continue;
        };
        for w in 0..n {
            let g = &slots[on][w as usize];
            let size = g.len();
            let r = g.iter().position(|&x| x == w).unwrap();
            let root = root as usize % size;
            let sum = |ranks: &[u32], at: usize| -> Vec<i64> {
                (0..count)
                    .map(|k| {
                        ranks
                            .iter()
                            .map(|&q| input(i, q, at + k))
                            .fold(0i64, i64::wrapping_add)
                    })
                    .collect()
            };
            let gathered = |ranks: &[u32]| -> Vec<i64> {
                ranks
                    .iter()
                    .flat_map(|&q| (0..count).map(move |k| input(i, q, k)))
                    .collect()
            };
            let got: Vec<i64> = match kind {
                Kind::Barrier => Vec::new(),
                Kind::Bcast => (0..count).map(|k| input(i, g[root], k)).collect(),
                Kind::Reduce if r == root => sum(g, 0),
                Kind::Gather if r == root => gathered(g),
                Kind::Reduce | Kind::Gather => Vec::new(),
                Kind::Allreduce => sum(g, 0),
                Kind::Allgather => gathered(g),
                Kind::Alltoall => g
                    .iter()
                    .flat_map(|&q| (0..count).map(move |k| input(i, q, r * count + k)))
                    .collect(),
                Kind::Scan => sum(&g[..=r], 0),
                Kind::Exscan if r == 0 => vec![7; count],
                Kind::Exscan => sum(&g[..r], 0),
                Kind::ReduceScatterBlock => sum(g, r * count),
            };
            out.insert((i, w), got);
        }
    }
    out
}

/// Runs the program on `n` ranks of `backend`; returns what each rank's collectives gave.
fn run(
    backend: Backend,
    n: u32,
    steps: Vec<Step>,
    lens: BTreeMap<(usize, u32), usize>,
) -> BTreeMap<(usize, u32), Vec<i64>> {
    let got = Arc::new(Mutex::new(BTreeMap::new()));
    let out = Arc::clone(&got);
    let (steps, lens) = (Arc::new(steps), Arc::new(lens));
    let program = move |world: Comm| {
        let (steps, lens, got) = (Arc::clone(&steps), Arc::clone(&lens), Arc::clone(&got));
        async move {
            let w = world.rank();
            // Every receive buffer up front, so that nonblocking collectives borrow them
            // across later steps.
            let mut bufs: Vec<Vec<i64>> = (0..steps.len())
                .map(|i| vec![7; lens.get(&(i, w)).copied().unwrap_or(0)])
                .collect();
            let mut slots = vec![world.clone()];
            let mut in_flight: Vec<Request<'_>> = Vec::new();
            for ((i, step), buf) in steps.iter().enumerate().zip(bufs.iter_mut()) {
                match *step {
                    Step::Dup { from } => slots.push(slots[from].dup()?),
                    Step::Split { from, colors, salt } => {
                        let c = &slots[from];
                        let color = (c.rank() * 7 + salt) % colors;
                        let key = -i64::from(c.rank());
                        slots.push(c.split(Some(color), key).await?.expect("a color"));
                    }
                    Step::Shift { on } => {
                        let c = &slots[on];
                        let (me, size) = (c.rank(), c.size());
                        let mut got = [0u32];
                        let (to, from) = ((me + 1) % size, (me + size - 1) % size);
                        c.sendrecv(&[me], to, i as i32, &mut got, from, i as i32)
                            .await?;
                        assert_eq!(got[0], from, "step {i}: the shift's message");
                    }
                    Step::WaitAll => {
                        wait_all(&mut in_flight).await?;
                        in_flight.clear();
                    }
                    Step::Coll {
                        on,
                        kind,
                        count,
                        root,
                        nonblocking,
                    } => {
                        let c = &slots[on];
                        let (me, size) = (c.rank() as usize, c.size() as usize);
                        let root = root % c.size();
                        let send =
                            |len: usize| (0..len).map(|k| input(i, w, k)).collect::<Vec<_>>();
                        let sum = Op::sum();
                        if nonblocking {
                            let req = match kind {
                                Kind::Barrier => c.ibarrier()?,
                                Kind::Bcast => {
                                    if me == root as usize {
                                        buf.copy_from_slice(&send(count));
                                    }
                                    c.ibcast(buf, root)?
                                }
                                Kind::Reduce => c.ireduce(&send(count), buf, &sum, root)?,
                                Kind::Allreduce => c.iallreduce(&send(count), buf, &sum)?,
                                Kind::Gather => c.igather(&send(count), buf, root)?,
                                Kind::Allgather => c.iallgather(&send(count), buf)?,
                                Kind::Alltoall => c.ialltoall(&send(count * size), buf)?,
                                Kind::Scan => c.iscan(&send(count), buf, &sum)?,
                                Kind::Exscan => c.iexscan(&send(count), buf, &sum)?,
                                Kind::ReduceScatterBlock => {
                                    c.ireduce_scatter_block(&send(count * size), buf, &sum)?
                                }
                            };
                            in_flight.push(req);
                        } else {
                            match kind {
                                Kind::Barrier => c.barrier().await?,
                                Kind::Bcast => {
                                    if me == root as usize {
                                        buf.copy_from_slice(&send(count));
                                    }
                                    c.bcast(buf, root).await?
                                }
                                Kind::Reduce => c.reduce(&send(count), buf, &sum, root).await?,
                                Kind::Allreduce => c.allreduce(&send(count), buf, &sum).await?,
                                Kind::Gather => c.gather(&send(count), buf, root).await?,
                                Kind::Allgather => c.allgather(&send(count), buf).await?,
                                Kind::Alltoall => c.alltoall(&send(count * size), buf).await?,
                                Kind::Scan => c.scan(&send(count), buf, &sum).await?,
                                Kind::Exscan => c.exscan(&send(count), buf, &sum).await?,
                                Kind::ReduceScatterBlock => {
                                    c.reduce_scatter_block(&send(count * size), buf, &sum)
                                        .await?
                                }
                            }
                        }
                    }
                }
            }
            wait_all(&mut in_flight).await?;
            drop(in_flight);
            let mut got = got.lock().expect("results");
            for (i, step) in steps.iter().enumerate() {
                if matches!(step, Step::Coll { .. }) {
                    got.insert((i, w), std::mem::take(&mut bufs[i]));
                }
            }
            Ok(())
        }
    };
    if backend == Backend::Sim {
        let outcome = launcher(n, backend).simulate(program);
        if let Some(e) = outcome.error {
            panic!("the run failed: {e}");
        }
    } else {
        run_ok(launcher(n, backend), program);
    }
    std::mem::take(&mut *out.lock().expect("results"))
}

/// A program of up to 14 steps on ranks of `n`.
fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = (0usize..100, 0usize..10, 0u32..40, 1u32..4, any::<bool>()).prop_map(
        |(pick, k, x, colors, nonblocking)| match pick {
            0..8 => Step::Dup { from: k },
            8..16 => Step::Split {
                from: k,
                colors,
                salt: x,
            },
            16..28 => Step::Shift { on: k },
            28..36 => Step::WaitAll,
            _ => Step::Coll {
                on: k,
                kind: KINDS[(x as usize) % KINDS.len()],
                count: [0, 1, 3, 6][pick % 4],
                root: x,
                nonblocking,
            },
        },
    );
    prop::collection::vec(step, 1..14).prop_map(|mut steps| {
        // Slot indices name slots made before.
        let mut slots = 1;
        for step in &mut steps {
            match step {
                Step::Dup { from } | Step::Split { from, .. } => {
                    *from %= slots;
                    slots += 1;
                }
                Step::Shift { on } | Step::Coll { on, .. } => *on %= slots,
                Step::WaitAll => {}
            }
        }
        steps
    })
}

fn check(backend: Backend, n: u32, steps: Vec<Step>) {
    let expected = reference(n, &steps);
    let lens = expected.iter().map(|(&k, v)| (k, v.len())).collect();
    let got = run(backend, n, steps.clone(), lens);
    for (key, want) in &expected {
        assert_eq!(
            got.get(key),
            Some(want),
            "step {} at world rank {} of {steps:?} on {n} ranks",
            key.0,
            key.1
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn coll_random_programs_of_collectives_and_messages_on_random_communicators_sim(
        n in 1u32..9,
        steps in steps(),
    ) {
        check(Backend::Sim, n, steps);
    }

    #[test]
    fn coll_random_programs_of_collectives_and_messages_on_random_communicators_threads(
        n in 1u32..7,
        steps in steps(),
    ) {
        check(Backend::Threads, n, steps);
    }
}

/// A collective-heavy program (every collective, blocking and nonblocking, on the world and a
/// split, with compute between) gives the same report, error and trace simulated on one
/// thread, on 2, and on one per rank.
#[test]
fn coll_determinism_same_report_sequential_and_parallel() {
    let ranks = 24;
    let outcome = common::simulate_all_ways(
        Launcher::new(ranks).trace("unused-by-simulate.json"),
        ranks,
        |world: Comm| async move {
            let me = world.rank();
            let half = world.split(Some(me % 2), 0).await?.expect("a color");
            for round in 0..3u64 {
                world
                    .compute(std::time::Duration::from_nanos(
                        50 * u64::from(me % 5) + round,
                    ))
                    .await;
                let x = vec![f64::from(me) + round as f64; 300];
                let mut sum = vec![0.0; 300];
                let mut all = vec![0u32; 2 * world.size() as usize];
                let mut halfsum = [0u64];
                let mut reqs = vec![
                    world.iallgather(&[me, me + 1], &mut all)?,
                    half.iallreduce(&[u64::from(me)], &mut halfsum, &Op::sum())?,
                    world.ibarrier()?,
                ];
                world.allreduce(&x, &mut sum, &Op::sum()).await?;
                let mut block = vec![0.0; 4];
                world
                    .reduce_scatter_block(
                        &vec![1.0; 4 * world.size() as usize],
                        &mut block,
                        &Op::sum(),
                    )
                    .await?;
                let mut b = [round; 8];
                half.bcast(&mut b, 1).await?;
                wait_all(&mut reqs).await?;
                drop(reqs);
                let mut prefix = [0u32];
                world.scan(&[1], &mut prefix, &Op::sum()).await?;
                assert_eq!(prefix[0], me + 1);
            }
            Ok(())
        },
    );
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
}
