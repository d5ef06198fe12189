//! MPI's own collectives for mpsim's (`RankRuntime::start_native`; when the API layer asks,
//! `mpsim`'s `coll/native.rs` says): each call starts the library's nonblocking collective
//! (`MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`, `MPI_Iallreduce`, `MPI_Iscan`, `MPI_Iexscan`,
//! `MPI_Igather`, `MPI_Iscatter`, `MPI_Iallgather`, `MPI_Ialltoall`) on the mpsim
//! communicator's MPI communicator, into buffers the request table owns; `progress` completes
//! it with the rest (`MPI_Testsome`), so that a blocking collective waits as any other call:
//! polled, napping when idle, seen by the deadlock watchdog.
//!
//! # Communicators
//!
//! The world's is a duplicate of `MPI_COMM_WORLD` made at `MPI_Init` (`World`). Any other
//! mpsim communicator gets one at its first native blocking collective, once its members have
//! met (the API layer's barrier): `MPI_Comm_create_group` over a duplicate of the world, with
//! the members' world ranks in communicator-rank order, collective over them alone (so a
//! `split`'s colors make theirs independently). They are freed at the rank's end.
//!
//! # The watchdog
//!
//! A native collective counts as a message sent when it starts and as one arrived when it
//! completes (`watch.rs`), so that no round finds `sent == arrived` while one is in flight: a
//! collective the library is still moving is never declared a deadlock. The price: ranks
//! stuck in a native collective that can never complete (ranks that called different
//! collectives on a communicator) are not declared either; `--reproducible` runs mpsim's
//! algorithms, whose mismatches are reported.

use std::ffi::c_int;

use mpsim_proto::deadlock::Waiting;
use mpsim_proto::error::{Error, Site};
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::{Completion, ReqId, Status};
use mpsim_proto::runtime::{NativeCall, NativeComm, Payload, RankRuntime};

use crate::rank::{Kind, MpiRank, Op, WORLD};
use crate::raw::{self, Code, Coll};

impl MpiRank {
    /// Makes `comm`'s MPI communicator (every member calls it at the same point).
    pub(crate) fn make_native_comm(&self, comm: NativeComm<'_>) -> Result<(), Error> {
        let ranks: Vec<c_int> = (0..comm.size)
            .map(|r| (comm.world_rank_of)(r) as c_int)
            .collect();
        // The tag tells apart the makings of one process in flight at once (MPI's rule):
        // there is one at a time here, any tag does.
        let tag = (comm.context.0 & 0x7fff) as c_int;
        let made = raw::create_group(self.coll, &ranks, tag)
            .map_err(|c| self.mpi_error("MPI_Comm_create_group", c))?;
        self.natives.borrow_mut().insert(comm.context.0, made);
        Ok(())
    }

    /// Frees the communicators [`MpiRank::make_native_comm`] made (not the world's).
    pub(crate) fn free_natives(&self) {
        for (context, mut comm) in self.natives.borrow_mut().drain() {
            if context != WORLD.0 {
                raw::free(&mut comm);
            }
        }
    }

    /// Starts `call` (the program's `name`) on `comm`: its request, or `None` when its counts
    /// do not fit MPI's (`int`), which mpsim's algorithms then run.
    pub(crate) fn start_native_coll(
        &self,
        comm: NativeComm<'_>,
        call: NativeCall<'_>,
        name: &'static str,
    ) -> Result<Option<ReqId>, Error> {
        let Some(&mpi_comm) = self.natives.borrow().get(&comm.context.0) else {
            return Ok(None);
        };
        let size = comm.size as usize;
        let me = comm.rank;
        let int = |n: usize| c_int::try_from(n).ok();
        let root_of = |root: u32| root as c_int;
        // The collective, the memory it reads and writes, and whether its result is the rank's.
        let (coll, send, recv, keep) = match call {
            NativeCall::Barrier => (Coll::Barrier, Vec::new(), Vec::new(), false),
            NativeCall::Bcast { data, root } => {
                let Some(count) = int(data.len()) else {
                    return Ok(None);
                };
                let coll = Coll::Bcast {
                    count,
                    root: root_of(root),
                };
                (coll, Vec::new(), data.to_vec(), true)
            }
            NativeCall::Reduce {
                send,
                elem,
                op,
                root,
            } => {
                let Some(count) = int(send.len() / raw::elem_bytes(elem)) else {
                    return Ok(None);
                };
                let (ty, op) = (raw::datatype(elem), raw::operation(op));
                let at_root = me == root;
                let coll = Coll::Reduce {
                    count,
                    ty,
                    op,
                    root: root_of(root),
                };
                let recv = vec![0u8; if at_root { send.len() } else { 0 }];
                (coll, send.to_vec(), recv, at_root)
            }
            NativeCall::Allreduce { send, elem, op }
            | NativeCall::Scan { send, elem, op }
            | NativeCall::Exscan { send, elem, op } => {
                let Some(count) = int(send.len() / raw::elem_bytes(elem)) else {
                    return Ok(None);
                };
                let (ty, op) = (raw::datatype(elem), raw::operation(op));
                let (coll, keep) = match call {
                    NativeCall::Allreduce { .. } => (Coll::Allreduce { count, ty, op }, true),
                    NativeCall::Scan { .. } => (Coll::Scan { count, ty, op }, true),
                    _ => (Coll::Exscan { count, ty, op }, me > 0),
                };
                (coll, send.to_vec(), vec![0u8; send.len()], keep)
            }
            NativeCall::Gather { send, root } => {
                let (Some(block), Some(_)) = (int(send.len()), int(send.len() * size)) else {
                    return Ok(None);
                };
                let at_root = me == root;
                let recv = vec![0u8; if at_root { send.len() * size } else { 0 }];
                let coll = Coll::Gather {
                    block,
                    root: root_of(root),
                };
                (coll, send.to_vec(), recv, at_root)
            }
            NativeCall::Scatter { send, block, root } => {
                let (Some(b), Some(_)) = (int(block), int(block * size)) else {
                    return Ok(None);
                };
                let send = if me == root {
                    send.to_vec()
                } else {
                    Vec::new()
                };
                let coll = Coll::Scatter {
                    block: b,
                    root: root_of(root),
                };
                (coll, send, vec![0u8; block], true)
            }
            NativeCall::Allgather { send } => {
                let (Some(block), Some(_)) = (int(send.len()), int(send.len() * size)) else {
                    return Ok(None);
                };
                let recv = vec![0u8; send.len() * size];
                (Coll::Allgather { block }, send.to_vec(), recv, true)
            }
            NativeCall::Alltoall { send } => {
                let Some(block) = int(send.len() / size.max(1)) else {
                    return Ok(None);
                };
                let recv = vec![0u8; send.len()];
                (Coll::Alltoall { block }, send.to_vec(), recv, true)
            }
        };
        let mut recv = recv;
        let raw_req =
            raw::icoll(&coll, &send, &mut recv, mpi_comm).map_err(|c| self.mpi_error(name, c))?;
        let what = Waiting {
            call: name,
            peer: Source::Any,
            tag: Tag::Any,
            context: comm.context,
        };
        let mut st = self.state.borrow_mut();
        st.sent += 1;
        let req = st.table.alloc(Kind::Active {
            raw: raw_req,
            buf: recv.into(),
            op: Op::Coll {
                _send: send,
                keep,
                call: name,
            },
            what,
        });
        Ok(Some(req))
    }

    /// The completion of a native collective the library finished: its result in `buf`
    /// (handed back when `keep`), or the library's error.
    pub(crate) fn collected(
        &self,
        buf: Vec<u8>,
        keep: bool,
        call: &'static str,
        code: Code,
    ) -> Completion<Payload> {
        let error = (code != 0).then(|| Box::new(self.mpi_error(call, code)));
        Completion {
            status: Status {
                bytes: if keep { buf.len() } else { 0 },
                ..Status::default()
            },
            payload: keep.then(|| Payload::from_vec(buf)),
            error,
        }
    }

    /// A native collective's request cannot be cancelled (MPI makes it erroneous), as
    /// mpsim's own nonblocking collectives' cannot.
    pub(crate) fn uncancellable(&self, call: &'static str) -> Error {
        Error::InvalidArgument {
            what: format!(
                "{}: the request of a nonblocking collective ({call}) cannot be cancelled (MPI \
                 makes it erroneous); wait for it or test it",
                Site::new(self.rank(), "cancel")
            ),
        }
    }
}
