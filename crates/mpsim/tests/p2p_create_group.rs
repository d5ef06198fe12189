//! `Comm::create_group` (MPI's `MPI_Comm_create_group`) and `Comm::intercomm` (the C door's
//! intercommunicators): made by their members alone, without messages, on both backends.

#[macro_use]
#[path = "common/backends.rs"]
mod backends;

use backends::{Ended, launcher, run_bounded};
use mpsim::{ANY_SOURCE, Backend, Comm, CommCompare, Error, Op};

fn ok(ended: Ended) {
    match ended {
        Ended::Returned(Ok(())) => {}
        Ended::Returned(Err(e)) => panic!("run failed: {e}"),
        Ended::Panicked(p) => panic!("run panicked: {p}"),
    }
}

fn err(ended: Ended) -> Error {
    match ended {
        Ended::Returned(Err(e)) => e,
        Ended::Returned(Ok(())) => panic!("run succeeded"),
        Ended::Panicked(p) => panic!("run panicked: {p}"),
    }
}

/// Only the members call it, in the order they give; two calls with the same members and tag
/// give two communicators whose traffic never meets; other members and tags give others.
fn create_group_members_only(backend: Backend) {
    ok(run_bounded(
        launcher(5, backend),
        |world: Comm| async move {
            let me = world.rank();
            if me == 0 || me == 3 {
                return Ok(()); // not members: they make no call at all
            }
            let members = [4, 1, 2];
            let a = world.create_group(&members, 9)?;
            let b = world.create_group(&members, 9)?;
            let c = world.create_group(&members, 10)?;
            let pos = members.iter().position(|&m| m == me).unwrap() as u32;
            for comm in [&a, &b, &c] {
                assert_eq!((comm.rank(), comm.size()), (pos, 3));
                assert_eq!(comm.world_rank_of(0), 4);
            }
            assert_eq!(a.compare(&b), CommCompare::Congruent);
            assert_ne!(a.id(), b.id());
            assert_ne!(a.id(), c.id());
            // b's message is sent first but a's receive must not take it.
            let right = (pos + 1) % 3;
            let left = (pos + 2) % 3;
            b.send(&[20 + me], right, 0).await?;
            a.send(&[10 + me], right, 0).await?;
            c.send(&[30 + me], right, 0).await?;
            let mut got = [0u32; 3];
            a.recv(&mut got[..1], left, 0).await?;
            c.recv(&mut got[2..], left, 0).await?;
            b.recv(&mut got[1..2], left, 0).await?;
            let from = members[left as usize];
            assert_eq!(got, [10 + from, 20 + from, 30 + from]);
            // A collective on it runs among the members only.
            let mut sum = [0u32];
            a.allreduce(&[me], &mut sum, &Op::sum()).await?;
            assert_eq!(sum, [7]);
            Ok(())
        },
    ));
}
on_both!(create_group_members_only => mpi_comm_create_group_sim, mpi_comm_create_group_threads);

/// A list that leaves out the caller is an error naming the call.
fn create_group_without_the_caller(backend: Backend) {
    let e = err(run_bounded(
        launcher(2, backend),
        |world: Comm| async move {
            world.create_group(&[1 - world.rank()], 0)?;
            Ok(())
        },
    ));
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("comm_create_group"), "{e}");
}
on_both!(create_group_without_the_caller => mpi_comm_create_group_needs_the_caller_sim, mpi_comm_create_group_needs_the_caller_threads);

/// An intercommunicator's point-to-point side: ranks name the remote group, statuses give the
/// sender's rank in its own group, ANY_SOURCE takes only the remote group's messages;
/// collectives on it are `InvalidComm`.
fn intercomm_p2p(backend: Backend) {
    ok(run_bounded(
        launcher(5, backend),
        |world: Comm| async move {
            let (low, high) = (vec![0, 2, 4], vec![3, 1]);
            let me = world.rank();
            let in_low = low.contains(&me);
            let (local, remote) = if in_low { (&low, &high) } else { (&high, &low) };
            let inter = world.intercomm(local, remote)?;
            let rank = local.iter().position(|&m| m == me).unwrap() as u32;
            assert_eq!((inter.rank(), inter.size()), (rank, remote.len() as u32));
            // Every rank sends its local rank to remote rank `rank % remote size`.
            let to = rank % inter.size();
            inter.send(&[rank], to, 5).await?;
            // And receives from every remote rank that sends to it.
            let expected: Vec<u32> = (0..remote.len() as u32)
                .filter(|r| r % local.len() as u32 == rank)
                .collect();
            let mut seen = Vec::new();
            for _ in &expected {
                let mut got = [u32::MAX];
                let status = inter.recv(&mut got, ANY_SOURCE, 5).await?;
                assert_eq!(status.source, got[0]);
                seen.push(got[0]);
            }
            seen.sort_unstable();
            assert_eq!(seen, expected);
            let e = inter.barrier().await.expect_err("no collective on it");
            assert!(matches!(e, Error::InvalidComm { .. }), "{e}");
            let mut inter = inter;
            inter.free()?;
            Ok(())
        },
    ));
}
on_both!(intercomm_p2p => mpi_intercomm_p2p_names_remote_ranks_sim, mpi_intercomm_p2p_names_remote_ranks_threads);
