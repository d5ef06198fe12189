//! `spec/p2p.md` §9 behaviours through the public API on the threads backend. (The core-level
//! versions of the protocol behaviours are in `mpsim-proto/tests/p2p_core.rs`; the simulator
//! will run this same file's programs when it lands.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mpsim::{Backend, Comm, Error, Launcher, PROC_NULL, Source, Tag};

fn threads(ranks: u32) -> Launcher {
    Launcher::new(ranks).backend(Backend::Threads)
}

#[test]
fn p2p_p1_ring_data_and_status_intact() {
    threads(5)
        .run(|world: Comm| async move {
            let (me, n) = (world.rank(), world.size());
            let data: Vec<u32> = (0..100).map(|i| i * (me + 1)).collect();
            let mut got = vec![0u32; 100];
            let status = world
                .sendrecv(&data, (me + 1) % n, 3, &mut got, (me + n - 1) % n, 3)
                .await?;
            let left = (me + n - 1) % n;
            assert_eq!((status.source, status.tag, status.bytes), (left, 3, 400));
            assert!(
                got.iter()
                    .enumerate()
                    .all(|(i, &x)| x == i as u32 * (left + 1))
            );
            Ok(())
        })
        .expect("ring");
}

#[test]
fn p2p_p2_large_then_small_same_tag_not_overtaken() {
    threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let big = vec![7u8; 1 << 20];
                world.send(&big, 1, 5).await?;
                world.send(&[9u8; 8], 1, 5).await?;
            } else {
                let mut big = vec![0u8; 1 << 20];
                let mut small = [0u8; 8];
                let a = world.recv(&mut big, 0, 5).await?;
                let b = world.recv(&mut small, 0, 5).await?;
                assert_eq!((a.bytes, b.bytes), (1 << 20, 8));
                assert!(big.iter().all(|&x| x == 7) && small == [9; 8]);
            }
            Ok(())
        })
        .expect("non-overtaking");
}

#[test]
fn p2p_p12_proc_null_send_and_receive() {
    threads(1)
        .run(|world: Comm| async move {
            world.ssend(&[1u8], PROC_NULL, 0).await?;
            let mut buf = [5u8; 4];
            let s = world.recv(&mut buf, PROC_NULL, 0).await?;
            assert_eq!((s.source, s.tag, s.bytes, buf), (PROC_NULL, -1, 0, [5; 4]));
            assert_eq!(
                world.iprobe(PROC_NULL, Tag::Any).await?.map(|s| s.source),
                Some(PROC_NULL)
            );
            Ok(())
        })
        .expect("PROC_NULL");
}

#[test]
fn p2p_p22_invalid_rank_and_tag_are_typed_errors() {
    threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let e = world.send(&[1u8], 2, 0).await.expect_err("rank 2 of 2");
                assert!(
                    matches!(
                        e,
                        Error::InvalidRank {
                            rank: 2,
                            size: 2,
                            ..
                        }
                    ),
                    "{e}"
                );
                let e = world
                    .send(&[1u8], 1, -1)
                    .await
                    .expect_err("ANY_TAG on a send");
                assert!(matches!(e, Error::InvalidTag { tag: Tag::Any, .. }), "{e}");
                let mut b = [0u8];
                let e = world.recv(&mut b, 0, -5).await.expect_err("negative tag");
                assert!(
                    matches!(
                        e,
                        Error::InvalidTag {
                            tag: Tag::Value(-5),
                            ..
                        }
                    ),
                    "{e}"
                );
                assert!(e.to_string().contains("rank 0 in recv"), "{e}");
            }
            Ok(())
        })
        .expect("errors were caught by the program");
}

#[test]
fn p2p_p23_request_active_at_end_is_pending_at_exit() {
    let err = threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let mut buf = [0u8; 4];
                let r = world.irecv(&mut buf, 1, 9)?;
                std::mem::forget(r); // never waited for, never dropped
            }
            Ok(())
        })
        .expect_err("a request was left active");
    match err {
        Error::PendingAtExit {
            rank: 0, requests, ..
        } => {
            assert_eq!(requests.len(), 1);
            let r = &requests[0];
            assert_eq!(
                (r.call, r.peer, r.tag),
                ("irecv", Source::Rank(1), Tag::Value(9))
            );
        }
        other => panic!("expected PendingAtExit, got {other}"),
    }
}

#[test]
fn p2p_p24_a_failing_rank_ends_the_run_everywhere() {
    let err = threads(3)
        .run(|world: Comm| async move {
            if world.rank() == 2 {
                panic!("rank 2 gives up");
            }
            // The others wait for a message that never comes; the panic must end them.
            let mut b = [0u8];
            world.recv(&mut b, 2, 0).await?;
            Ok(())
        })
        .expect_err("rank 2 panicked");
    assert!(err.to_string().contains("rank 2 gives up"), "{err}");
}

#[test]
fn p2p_p25_head_to_head_ssend_is_a_deadlock() {
    let err = threads(2)
        .run(|world: Comm| async move {
            let peer = 1 - world.rank();
            world.ssend(&[1u8], peer, 0).await?;
            let mut b = [0u8];
            world.recv(&mut b, peer, 0).await?;
            Ok(())
        })
        .expect_err("both ranks block in ssend");
    let Error::Deadlock { report } = err else {
        panic!("expected Deadlock, got {err}");
    };
    assert!(
        report.contains("rank 0 blocked in ssend (peer 1"),
        "{report}"
    );
    assert!(
        report.contains("rank 1 blocked in ssend (peer 0"),
        "{report}"
    );
    assert!(report.contains("cycle 0 → 1 → 0"), "{report}");
}

#[test]
fn p2p_p26_typed_buffers_and_count() {
    threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                world.send(&[1u64, 2, 3, 4], 1, 0).await?;
            } else {
                let mut got = [0u32; 8];
                let s = world.recv(&mut got, 0, 0).await?;
                assert_eq!((s.count::<u64>(), s.count::<u32>()), (Some(4), Some(8)));
                assert_eq!(s.count::<[u8; 3]>(), None);
                let words: &[u64] = bytemuck::cast_slice(&got);
                assert_eq!(words, &[1, 2, 3, 4]);
            }
            Ok(())
        })
        .expect("typed buffers");
}

#[test]
fn p2p_p28_progress_while_the_sender_computes() {
    // Rank 0 isends 1 MiB, then computes without calling the library until rank 1 says its
    // blocking receive completed. Without progress outside library calls this never ends; the
    // 10 s cap turns that into a failure instead of a hang.
    static RECEIVED: AtomicBool = AtomicBool::new(false);
    threads(2)
        .run(|world: Comm| async move {
            if world.rank() == 0 {
                let r = world.isend(&vec![3u8; 1 << 20], 1, 0)?;
                let start = Instant::now();
                while !RECEIVED.load(Ordering::Acquire) {
                    assert!(start.elapsed() < Duration::from_secs(10), "no progress");
                    std::hint::spin_loop();
                }
                r.wait().await?;
            } else {
                let mut buf = vec![0u8; 1 << 20];
                world.recv(&mut buf, 0, 0).await?;
                assert!(buf.iter().all(|&b| b == 3));
                RECEIVED.store(true, Ordering::Release);
            }
            Ok(())
        })
        .expect("progress");
}
