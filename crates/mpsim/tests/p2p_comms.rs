//! `docs/p2p.md` §9 behaviours of persistent requests (§4) and communicators (§6) through the
//! public API, each program on both backends: P18, P20, P21, P22 (freed communicator),
//! `compare`, and deadlock diagnostics in a split communicator.

use mpsim::{
    Backend, Comm, CommCompare, Error, Launcher, PROC_NULL, Source, Status, Tag, start_all,
};

/// Runs a program on `sim` and on `threads`; both must agree on success or failure.
struct Both(u32);

fn both(ranks: u32) -> Both {
    Both(ranks)
}

impl Both {
    fn run<F, Fut>(&self, program: F) -> mpsim::Result<()>
    where
        F: Fn(Comm) -> Fut + Sync,
        Fut: std::future::Future<Output = mpsim::Result<()>>,
    {
        let sim = Launcher::new(self.0).backend(Backend::Sim).run(&program);
        let threads = Launcher::new(self.0)
            .backend(Backend::Threads)
            .run(&program);
        match (sim, threads) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Err(_)) => Err(e),
            (sim, threads) => panic!("backends disagree: sim {sim:?}, threads {threads:?}"),
        }
    }
}

#[test]
fn p2p_p18_persistent_restarted_1000_times() {
    both(2)
        .run(|world: Comm| async move {
            let peer = 1 - world.rank();
            let mut buf = [0u64; 4];
            let mut req = if world.rank() == 0 {
                world.send_init(&mut buf, peer, 3)?
            } else {
                world.recv_init(&mut buf, peer, 3)?
            };
            let empty = req.wait().await?;
            assert_eq!(
                (empty.source, empty.tag, empty.bytes),
                (Status::NO_SOURCE, Status::NO_TAG, 0)
            );
            for run in 0..1000u64 {
                let data = [run, run * 2, run * 3, !run];
                if world.rank() == 0 {
                    req.buffer_mut::<u64>()
                        .expect("a send's buffer")
                        .copy_from_slice(&data);
                } else {
                    req.buffer_mut::<u64>().expect("inactive").fill(0);
                }
                req.start()?;
                assert!(req.is_active());
                let e = req.start().expect_err("started twice");
                assert!(matches!(e, Error::RequestActive { .. }), "{e}");
                assert!(e.to_string().contains("in start"), "{e}");
                let status = req.wait().await?;
                assert!(!req.is_active());
                if world.rank() == 1 {
                    assert_eq!((status.source, status.tag, status.bytes), (0, 3, 32));
                    assert_eq!(req.buffer::<u64>(), Some(&data[..]), "run {run}");
                }
            }
            let again = req.test().await?.expect("inactive: at once");
            assert_eq!(
                (again.source, again.tag, again.bytes),
                (Status::NO_SOURCE, Status::NO_TAG, 0)
            );
            Ok(())
        })
        .expect("persistent send/recv");
}

#[test]
fn p2p_p18_persistent_modes_start_all_and_proc_null() {
    both(2)
        .run(|world: Comm| async move {
            let peer = 1 - world.rank();
            world.buffer_attach(1024)?;
            let (mut a, mut b, mut c, mut d) = ([1u8; 8], [2u8; 8], [3u8; 8], [4u8; 8]);
            let mut got = [[0u8; 8]; 4];
            let [g0, g1, g2, g3] = &mut got;
            let mut recvs = [
                world.recv_init(g0, peer, 0)?,
                world.recv_init(g1, peer, 1)?,
                world.recv_init(g2, peer, 2)?,
                world.recv_init(g3, peer, 3)?,
            ];
            let mut sends = [
                world.send_init(&mut a, peer, 0)?,
                world.bsend_init(&mut b, peer, 1)?,
                world.ssend_init(&mut c, peer, 2)?,
                world.rsend_init(&mut d, peer, 3)?,
            ];
            for _ in 0..10 {
                start_all(&mut recvs)?;
                // Both sides posted their receives before either rsend starts.
                world.sendrecv(&[0u8], peer, 9, &mut [0u8], peer, 9).await?;
                start_all(&mut sends)?;
                let e = start_all(&mut sends).expect_err("all active");
                assert!(matches!(e, Error::RequestActive { .. }), "{e}");
                for r in sends.iter_mut().chain(recvs.iter_mut()) {
                    r.wait().await?;
                }
                let seen: Vec<u8> = recvs
                    .iter()
                    .map(|r| r.buffer::<u8>().expect("done")[0])
                    .collect();
                assert_eq!(seen, [1, 2, 3, 4]);
            }
            drop((sends, recvs));
            world.buffer_detach().await?;

            let mut none = [7u8; 2];
            let mut null = world.recv_init(&mut none, PROC_NULL, 0)?;
            null.start()?;
            let s = null.wait().await?;
            assert_eq!((s.source, s.tag, s.bytes), (PROC_NULL, Status::NO_TAG, 0));
            assert_eq!(
                null.buffer::<u8>(),
                Some(&[7u8, 7][..]),
                "buffer given back"
            );
            Ok(())
        })
        .expect("persistent modes");
}

#[test]
fn p2p_p18_persistent_truncated_run_ends_and_restarts() {
    both(2)
        .run(|world: Comm| async move {
            let peer = 1 - world.rank();
            if world.rank() == 0 {
                world.send(&[1u8, 2, 3], peer, 0).await?;
                world.send(&[4u8], peer, 0).await?;
                return Ok(());
            }
            let mut small = [0u8; 2];
            let mut req = world.recv_init(&mut small, peer, 0)?;
            req.start()?;
            let e = req.wait().await.expect_err("3 bytes into 2");
            assert!(
                matches!(
                    e,
                    Error::Truncate {
                        message_bytes: 3,
                        buffer_bytes: 2,
                        ..
                    }
                ),
                "{e}"
            );
            assert!(!req.is_active(), "a failed run ends");
            assert_eq!(req.buffer::<u8>(), Some(&[1u8, 2][..]));
            req.start()?;
            assert_eq!(req.wait().await?.bytes, 1);
            assert_eq!(req.buffer::<u8>(), Some(&[4u8, 2][..]));
            Ok(())
        })
        .expect("truncated persistent receive");
}

#[test]
fn p2p_p20_dup_never_crosses_parent() {
    both(2)
        .run(|world: Comm| async move {
            let twin = world.dup()?;
            let peer = 1 - world.rank();
            if world.rank() == 0 {
                world.send(&[1u32], peer, 5).await?;
                twin.send(&[2u32], peer, 5).await?;
                twin.send(&[3u32], peer, 5).await?;
                world.send(&[4u32], peer, 5).await?;
            } else {
                let (mut a, mut b) = ([0u32], [0u32]);
                // Opposite order to the sends: the dup's message first.
                twin.recv(&mut a, Source::Any, Tag::Any).await?;
                world.recv(&mut b, Source::Any, Tag::Any).await?;
                assert_eq!((a, b), ([2], [1]));
                // Both posted before either matches: each still gets its own.
                let (mut c, mut d) = ([0u32], [0u32]);
                let rc = world.irecv(&mut c, peer, 5)?;
                let rd = twin.irecv(&mut d, peer, 5)?;
                let (sc, sd) = (rc.wait().await?, rd.wait().await?);
                assert_eq!((c, d, sc.source, sd.source), ([4], [3], 0, 0));
            }
            assert_eq!(world.iprobe(Source::Any, Tag::Any).await?, None);
            assert_eq!(twin.iprobe(Source::Any, Tag::Any).await?, None);
            Ok(())
        })
        .expect("dup isolation");
}

#[test]
fn p2p_p21_split_colors_keys_undefined() {
    both(6)
        .run(|world: Comm| async move {
            let me = world.rank();
            // Colors 0, 1, 2, 0, 1, undefined; keys reverse the world order.
            let color = (me != 5).then_some(me % 3);
            let sub = world.split(color, -i64::from(me)).await?;
            let Some(sub) = sub else {
                assert_eq!(me, 5, "only the undefined rank gets none");
                return Ok(());
            };
            let (size, rank) = match me {
                0 => (2, 1),
                3 => (2, 0),
                1 => (2, 1),
                4 => (2, 0),
                2 => (1, 0),
                _ => unreachable!("rank 5 returned above"),
            };
            assert_eq!((sub.size(), sub.rank()), (size, rank), "world rank {me}");
            // A ring inside each new communicator: status names new ranks.
            let (n, r) = (sub.size(), sub.rank());
            let mut got = [u32::MAX];
            let s = sub
                .sendrecv(&[me], (r + 1) % n, 4, &mut got, (r + n - 1) % n, 4)
                .await?;
            assert_eq!(s.source, (r + n - 1) % n);
            let expected_from = match me {
                0 => 3,
                3 => 0,
                1 => 4,
                4 => 1,
                _ => me,
            };
            assert_eq!(got, [expected_from]);
            Ok(())
        })
        .expect("split");
}

#[test]
fn p2p_p21_split_of_split_and_key_ties() {
    both(5)
        .run(|world: Comm| async move {
            let me = world.rank();
            // Equal keys: parent order decides.
            let all = world.split(Some(7), 0).await?.expect("color 7");
            assert_eq!((all.rank(), all.size()), (me, 5));
            assert_eq!(world.compare(&all), CommCompare::Congruent);
            let evens = all.split(me.is_multiple_of(2).then_some(0), 0).await?;
            if let Some(evens) = evens {
                assert_eq!((evens.rank(), evens.size()), (me / 2, 3));
                let dup = evens.dup()?;
                let mut sum = [me];
                if evens.rank() != 0 {
                    dup.send(&[me], 0, 1).await?;
                } else {
                    for source in 1..dup.size() {
                        let mut x = [0u32];
                        dup.recv(&mut x, source, 1).await?;
                        sum[0] += x[0];
                    }
                    assert_eq!(sum, [2 + 4]);
                }
            }
            Ok(())
        })
        .expect("nested split");
}

/// A `split` scales with the ranks: 16,000 simulated ranks split into one color, into even
/// and odd ranks, and into one color in reverse order, each child checked by a ring of its
/// own. (Every member used to get a
/// table of its color's ranks, 16,000² in all: a gigabyte and a second here; evenly spaced
/// members are now a first rank and a stride.) Under `sim` only: 16,000 rank threads are more
/// than the threads backend gets here.
#[test]
fn p2p_p21_split_of_many_ranks_keeps_no_table_per_member() {
    const N: u32 = 16_000;
    let o = Launcher::new(N).simulate(|world: Comm| async move {
        let me = world.rank();
        let all = world.split(Some(0), 0).await?.expect("one color");
        let parity = world.split(Some(me % 2), 0).await?.expect("two colors");
        let reversed = world
            .split(Some(0), -i64::from(me))
            .await?
            .expect("one color");
        assert_eq!((all.rank(), all.size()), (me, N));
        assert_eq!((parity.rank(), parity.size()), (me / 2, N / 2));
        assert_eq!((reversed.rank(), reversed.size()), (N - 1 - me, N));
        // The left neighbour's world rank is `me + shift` (mod N).
        for (c, shift) in [(&all, N - 1), (&parity, N - 2), (&reversed, 1)] {
            let (r, n) = (c.rank(), c.size());
            let mut left = [0u32];
            c.sendrecv(&[me], (r + 1) % n, 3, &mut left, (r + n - 1) % n, 3)
                .await?;
            assert_eq!(left[0], (me + shift) % N, "rank {me}, shift {shift}");
        }
        Ok(())
    });
    assert!(o.error.is_none(), "{:?}", o.error);
}

#[test]
fn p2p_p22_freed_communicator_is_invalid_comm() {
    both(2)
        .run(|world: Comm| async move {
            let mut twin = world.dup()?;
            let clone = twin.clone();
            let mut buf = [0u8; 4];
            let mut pending = twin.recv_init(&mut buf, 1 - world.rank(), 0)?;
            twin.free()?;
            let invalid = |e: Error, call: &str| {
                assert!(matches!(e, Error::InvalidComm { .. }), "{call}: {e}");
                assert!(e.to_string().contains(&format!("in {call}")), "{e}");
            };
            invalid(clone.send(&[1u8], 0, 0).await.expect_err("send"), "send");
            invalid(clone.isend(&[1u8], 0, 0).expect_err("isend"), "isend");
            invalid(
                clone.recv(&mut [0u8], 0, 0).await.expect_err("recv"),
                "recv",
            );
            invalid(clone.iprobe(0, 0).await.expect_err("iprobe"), "iprobe");
            invalid(clone.dup().expect_err("dup"), "comm_dup");
            invalid(
                clone.split(Some(0), 0).await.expect_err("split"),
                "comm_split",
            );
            invalid(twin.free().expect_err("freed twice"), "comm_free");
            invalid(pending.start().expect_err("start"), "start");
            invalid(
                clone.send_init(&mut [0u8], 0, 0).expect_err("init"),
                "send_init",
            );
            // The parent is untouched; the world cannot be freed.
            world
                .sendrecv(&[1u8], 1 - world.rank(), 0, &mut [0u8], Source::Any, 0)
                .await?;
            invalid(world.clone().free().expect_err("world"), "comm_free");
            Ok(())
        })
        .expect("freed communicator errors were caught by the program");
}

#[test]
fn p2p_comm_compare_ident_congruent_similar_unequal() {
    both(4)
        .run(|world: Comm| async move {
            let me = world.rank();
            let dup = world.dup()?;
            let reversed = world.split(Some(0), -i64::from(me)).await?.expect("color");
            let half = world.split(Some(me / 2), 0).await?.expect("color");
            let half_rev = world
                .split(Some(me / 2), -i64::from(me))
                .await?
                .expect("color");
            let other_half = world.split(Some(1 - me / 2), 0).await?.expect("color");
            assert_eq!(world.compare(&world), CommCompare::Ident);
            assert_eq!(dup.compare(&dup.clone()), CommCompare::Ident);
            assert_eq!(world.compare(&dup), CommCompare::Congruent);
            assert_eq!(dup.dup()?.compare(&world), CommCompare::Congruent);
            assert_eq!(world.compare(&reversed), CommCompare::Similar);
            assert_eq!(half.compare(&half_rev), CommCompare::Similar);
            assert_eq!(world.compare(&half), CommCompare::Unequal);
            // The same members split under another color and call: congruent, not ident.
            assert_eq!(half.compare(&other_half), CommCompare::Congruent);
            Ok(())
        })
        .expect("compare");
}

/// Deadlock diagnostics speak world ranks, also inside a communicator whose ranks differ: odd
/// world ranks split in reverse order (world 3 is rank 0 there), then receive from each other.
#[test]
fn p2p_p25_deadlock_in_a_split_communicator_names_world_ranks() {
    for backend in [Backend::Sim, Backend::Threads] {
        let err = Launcher::new(4)
            .backend(backend)
            .run(|world: Comm| async move {
                let me = world.rank();
                let sub = world
                    .split((me % 2 == 1).then_some(1), -i64::from(me))
                    .await?;
                if let Some(sub) = sub {
                    let peer = 1 - sub.rank();
                    sub.recv(&mut [0u8], peer, 0).await?;
                }
                Ok(())
            })
            .expect_err("ranks 1 and 3 wait for each other");
        let Error::Deadlock { report } = &err else {
            panic!("{backend:?}: expected a deadlock, got {err}");
        };
        let report = report.to_string();
        assert!(report.contains("cycle 1 → 3 → 1"), "{backend:?}: {report}");
        assert!(report.contains("(peer 3"), "{backend:?}: {report}");
    }
}
