//! MPI's own collectives for mpsim's (`RankRuntime::start_native`; when the API layer asks,
//! `mpsim`'s `coll/native.rs` says): each call starts the library's nonblocking collective
//! (`MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`, `MPI_Iallreduce`, `MPI_Iscan`, `MPI_Iexscan`,
//! `MPI_Igather(v)`, `MPI_Iscatter(v)`, `MPI_Iallgather(v)`, `MPI_Ialltoall(v)`,
//! `MPI_Ireduce_scatter(_block)`) on the mpsim communicator's MPI communicator, into buffers
//! the request table owns (with the `v` calls' counts and displacements, which MPI reads while
//! the call runs: [`Held`]); `progress` completes
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
//!
//! # Counts beyond `int`
//!
//! MPI's collectives count in `int` (bytes here, elements for the reductions). A call whose
//! counts every rank knows to be beyond it (bcast, the reductions, gather, scatter, allgather,
//! alltoall, allgatherv, reduce_scatter) runs mpsim's algorithm on every rank alike
//! (`start_native_coll` answers `None`), over point-to-point, which carries any length
//! (`raw.rs`). `gatherv` and `scatterv` (counts the root's alone) and `alltoallv` (counts that
//! differ between ranks) cannot: a rank cannot tell whether another falls back, and a rank in
//! MPI's collective would wait for one in mpsim's forever. There a count or total beyond it is
//! `Error::Unsupported`, which ends the job, naming `--coll` and `--reproducible`.

use std::ffi::c_int;

use mpsim_proto::deadlock::Waiting;
use mpsim_proto::error::{Error, Site};
use mpsim_proto::matching::{Source, Tag};
use mpsim_proto::p2p::{Completion, ReqId, Status};
use mpsim_proto::runtime::{NativeCall, NativeComm, Payload, RankRuntime};

use crate::rank::{Kind, MpiRank, Op, WORLD};
use crate::raw::{self, Code, Coll};

/// What MPI reads while a native collective runs, kept with its request until it completes:
/// the bytes sent, and the collective's arrays of counts and displacements.
#[derive(Debug)]
pub(crate) struct Held {
    _send: Vec<u8>,
    _coll: Coll,
}

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
            // The `v` calls' counts are known to the root alone (gatherv, scatterv) or differ
            // between ranks (alltoallv): a rank cannot tell that another's do not fit MPI's
            // `int`, so that none may run mpsim's algorithm instead; such counts are an error.
            NativeCall::Gatherv {
                send,
                counts,
                unit,
                root,
            } => {
                let at_root = me == root;
                let ((counts, displs, total), mine) = if at_root {
                    (
                        self.packed(counts, unit, name)?,
                        self.int(send.len(), name)?,
                    )
                } else {
                    (
                        (vec![0; size], vec![0; size], 0),
                        self.int(send.len(), name)?,
                    )
                };
                let coll = Coll::Gatherv {
                    counts,
                    displs,
                    mine,
                    root: root_of(root),
                };
                (coll, send.to_vec(), vec![0u8; total], at_root)
            }
            NativeCall::Scatterv {
                send,
                counts,
                unit,
                recv,
                root,
            } => {
                let at_root = me == root;
                let (counts, displs, _) = if at_root {
                    self.packed(counts, unit, name)?
                } else {
                    (vec![0; size], vec![0; size], 0)
                };
                let coll = Coll::Scatterv {
                    counts,
                    displs,
                    mine: self.int(recv, name)?,
                    root: root_of(root),
                };
                let send = if at_root { send.to_vec() } else { Vec::new() };
                (coll, send, vec![0u8; recv], true)
            }
            NativeCall::Allgatherv { send, counts, unit } => {
                // Every rank has the same counts: all of them run mpsim's algorithm alike.
                let Ok((counts, displs, total)) = self.packed(counts, unit, name) else {
                    return Ok(None);
                };
                let Some(mine) = int(send.len()) else {
                    return Ok(None);
                };
                let coll = Coll::Allgatherv {
                    counts,
                    displs,
                    mine,
                };
                (coll, send.to_vec(), vec![0u8; total], true)
            }
            NativeCall::Alltoallv {
                send,
                send_counts,
                recv_counts,
                unit,
            } => {
                let (send_counts, send_displs, _) = self.packed(send_counts, unit, name)?;
                let (recv_counts, recv_displs, total) = self.packed(recv_counts, unit, name)?;
                let coll = Coll::Alltoallv {
                    send_counts,
                    send_displs,
                    recv_counts,
                    recv_displs,
                };
                (coll, send.to_vec(), vec![0u8; total], true)
            }
            NativeCall::ReduceScatter {
                send,
                counts,
                elem,
                op,
            } => {
                // The same counts on every rank; in elements, their sum within `int` too.
                let Ok((ints, _, _)) = self.packed(counts, 1, name) else {
                    return Ok(None);
                };
                let mine = counts.get(me as usize).copied().unwrap_or(0) * raw::elem_bytes(elem);
                let (ty, op) = (raw::datatype(elem), raw::operation(op));
                let coll = Coll::ReduceScatter {
                    counts: ints,
                    ty,
                    op,
                };
                (coll, send.to_vec(), vec![0u8; mine], true)
            }
            NativeCall::ReduceScatterBlock { send, elem, op } => {
                let elems = send.len() / raw::elem_bytes(elem);
                let (Some(count), Some(_)) = (int(elems / size.max(1)), int(elems)) else {
                    return Ok(None);
                };
                let (ty, op) = (raw::datatype(elem), raw::operation(op));
                let coll = Coll::ReduceScatterBlock { count, ty, op };
                let recv = vec![0u8; send.len() / size.max(1)];
                (coll, send.to_vec(), recv, true)
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
                _send: Held {
                    _send: send,
                    _coll: coll,
                },
                keep,
                call: name,
            },
            what,
        });
        Ok(Some(req))
    }

    /// `counts` elements of `unit` bytes, in bytes, and their displacements packed in rank
    /// order, with their total: an error when one does not fit MPI's `int`.
    fn packed(
        &self,
        counts: &[usize],
        unit: usize,
        call: &'static str,
    ) -> Result<(Vec<c_int>, Vec<c_int>, usize), Error> {
        let mut bytes = Vec::with_capacity(counts.len());
        let mut displs = Vec::with_capacity(counts.len());
        let mut total = 0usize;
        for &count in counts {
            let b = count.saturating_mul(unit);
            displs.push(self.int(total, call)?);
            bytes.push(self.int(b, call)?);
            total = total.saturating_add(b);
        }
        self.int(total, call)?;
        Ok((bytes, displs, total))
    }

    /// `bytes` as MPI's `int`, or the error that says it is not one.
    fn int(&self, bytes: usize, call: &'static str) -> Result<c_int, Error> {
        c_int::try_from(bytes).map_err(|_| Error::Unsupported {
            what: format!(
                "{}: {bytes} bytes in a block or in all of them: MPI's own collective counts \
                 in `int` (at most {} bytes); --coll {}=<algorithm> or --reproducible runs \
                 mpsim's algorithm over point-to-point instead",
                Site::new(self.rank(), call),
                c_int::MAX,
                // The nonblocking call's collective: `igatherv` is `gatherv`'s.
                call.strip_prefix('i').unwrap_or(call)
            ),
        })
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
