//! Collective operations on [`Comm`] (`docs/collectives.md`): `barrier`, `bcast`, `reduce`,
//! `allreduce`, `gather(v)`, `scatter(v)`, `allgather(v)`, `alltoall(v)`,
//! `reduce_scatter(_block)`, `scan`, `exscan`, each a real algorithm (binomial trees,
//! recursive doubling and halving, Rabenseifner's, Bruck's, rings) made of point-to-point
//! messages, so that the simulator times the algorithm itself and every backend runs the
//! same code; except that on `--backend mpi` a call the run names no algorithm for runs as
//! MPI's own collective where MPI has one (`native.rs`).
//!
//! # Traffic
//!
//! Every message goes over the communicator's hidden collective context (`comm/hidden.rs`),
//! which no user receive can name: collectives and the program's own point-to-point never
//! match each other, whatever their tags. Sends are standard sends, so the machine model's
//! eager and rendezvous protocols time them as they would the program's.
//!
//! # Tags
//!
//! A fixed tag per collective, algorithm and root (`algo::tag`: the collective in bits 24-29,
//! the algorithm in 16-23, the root's low 16 bits in 0-15), not a per-communicator sequence
//! number. Successive collectives cannot cross-match without one: every member calls the
//! collectives of a communicator in the same order (MPI's rule), each of these calls is
//! blocking, every receive names its source, and messages between two ranks with one tag are
//! received in the order they were sent (non-overtaking); so a rank's messages of one call
//! always meet the receives of the same call. What the tag adds is detection: ranks that call
//! different collectives, or run different algorithms (because their counts differ), or name
//! different roots (up to the low 16 bits), post receives that the others' messages cannot
//! match, and the run ends in a deadlock report naming each rank's collective (the requests
//! are named after the call) instead of a silent wrong result. A sequence number would add
//! nothing a correct program needs and would have to be agreed on when a communicator is
//! made. `comm_split` uses the same context with a tag these never take.
//!
//! # Errors
//!
//! Found by the calling rank before it sends anything, each naming the rank, the call, the
//! communicator's context and (simulator) the virtual time: a freed communicator
//! (`InvalidComm`), a root outside it (`InvalidRoot`), a buffer whose length does not fit the
//! call's counts (`InvalidBuffer`), a forced or named algorithm that needs a commutative
//! operation given one that is not (`InvalidOp`). Found between ranks: a message of another
//! length than the receiving rank's own arguments make it expect, longer or shorter
//! (`CollectiveMismatch`, naming the peer: the ranks disagree on counts); different
//! collectives, algorithms or roots (a deadlock, see "Tags"). Not found: roots that agree in
//! their low 16 bits but differ, and a root mismatch where every message is eager and nobody
//! waits on a wrong one (the run's warnings then list the messages no receive took).
//!
//! Files: `algo.rs` names the algorithms and chooses one; `cost.rs` what each costs on a
//! machine model; `policy.rs` what a run names, its choices and what the report lists per
//! collective; `ops.rs` the reduction operations; `native.rs` when a backend's library runs
//! a call instead (MPI's own collectives on `--backend mpi`); one file per family of
//! collectives.

pub(crate) mod algo;
mod allgather;
mod alltoall;
mod barrier;
mod bcast;
pub(crate) mod cost;
mod gather;
mod native;
mod nonblocking;
pub(crate) mod ops;
pub(crate) mod policy;
mod reduce;
mod reduce_scatter;
mod scan;

use std::future::poll_fn;
use std::ops::Range;
use std::task::Poll;

use bytemuck::Pod;
use mpsim_proto::error::{Error, Result};
use mpsim_proto::matching::ContextId;
use mpsim_proto::p2p::Status;

use crate::Comm;
use crate::progress::Awaiting;
use crate::request::Request;
use algo::{Algorithm, Chosen, Collective, Shape};

/// One collective call in progress: its communicator, call name, context and tag, and the
/// sends and receives it makes, each checked against the length the rank's arguments expect.
///
/// The same algorithms run a blocking call and a nonblocking one (`nonblocking.rs`); only how
/// a step waits differs ([`Ctx::wait`]): a blocking call waits in the backend, a nonblocking
/// one's step only tests, records what it awaits and is pending (`crate::progress` polls it
/// again when one of those requests completes).
///
/// When it is dropped (a blocking call returns, a nonblocking one's task ends, or either's
/// future is dropped), the run's policy records the call, its algorithm and the time since it
/// began, for the report (`policy.rs`).
pub(crate) struct Ctx {
    comm: Comm,
    call: &'static str,
    /// The collective context: the communicator's (blocking calls) or one per nonblocking
    /// call (`Comm::nonblocking_context`).
    context: ContextId,
    tag: i32,
    /// This rank and the communicator's size.
    rank: u32,
    size: u32,
    /// A nonblocking call's: where its steps record the requests they wait for.
    awaiting: Option<Awaiting>,
    coll: Collective,
    /// The call's algorithm and why; `None` for a phase of another call (the bcast of a
    /// reproducible allreduce), which the call's own context records.
    chosen: Option<Chosen>,
    /// The rank's clock when the call began.
    start_ns: u64,
}

impl Ctx {
    /// A blocking call's.
    fn new(comm: &Comm, call: &'static str, coll: Collective, chosen: Chosen, root: u32) -> Self {
        Ctx {
            comm: comm.clone(),
            call,
            context: comm.coll_context(),
            tag: algo::tag(coll, chosen.algo, root),
            rank: comm.rank(),
            size: comm.size(),
            awaiting: None,
            coll,
            chosen: Some(chosen),
            start_ns: comm.now_ns(),
        }
    }

    /// The context of a phase of this call run as collective `coll` by `algo` (its tag), which
    /// records nothing of its own.
    fn phase(&self, coll: Collective, algo: Algorithm, root: u32) -> Ctx {
        Ctx {
            comm: self.comm.clone(),
            call: self.call,
            context: self.context,
            tag: algo::tag(coll, algo, root),
            rank: self.rank,
            size: self.size,
            awaiting: self.awaiting.clone(),
            coll,
            chosen: None,
            start_ns: self.start_ns,
        }
    }

    /// A nonblocking call's, on its own `context`, its steps recording what they await in
    /// `awaiting`; recorded in the policy as its blocking collective `coll` is.
    fn nonblocking(
        comm: &Comm,
        call: &'static str,
        (coll, chosen, root): (Collective, Chosen, u32),
        context: ContextId,
        awaiting: Awaiting,
    ) -> Self {
        let mut cx = Ctx::new(comm, call, coll, chosen, root);
        cx.context = context;
        cx.awaiting = Some(awaiting);
        cx
    }

    /// Waits for every request of a step, as `wait_all` does: in the backend (a blocking
    /// call), or by testing (a nonblocking one: pending until all are complete, recording those
    /// that are not). Their statuses, or the first error once all are complete.
    async fn wait(&self, reqs: &mut [Request<'_>]) -> Result<Vec<Status>> {
        let Some(awaiting) = &self.awaiting else {
            return self.comm.coll_wait_all(reqs, self.call).await;
        };
        let rt = self.comm.rt();
        let mut outcomes: Vec<Option<Result<Status>>> = reqs.iter().map(|_| None).collect();
        poll_fn(|_| {
            let mut waits = awaiting.borrow_mut();
            waits.clear();
            for (r, outcome) in reqs.iter_mut().zip(&mut outcomes) {
                if outcome.is_some() {
                    continue;
                }
                match r.id() {
                    Some(id) if !rt.done_now(id) => waits.push(id),
                    _ => {
                        let done = r.try_complete();
                        *outcome = Some(done.map(|s| s.expect("a complete request")));
                    }
                }
            }
            if waits.is_empty() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        let mut statuses = Vec::with_capacity(outcomes.len());
        let mut first_error = None;
        for outcome in outcomes {
            match outcome.expect("every request complete") {
                Ok(s) => statuses.push(s),
                Err(e) => {
                    statuses.push(Status::default());
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(statuses), Err)
    }

    /// Sends `data` to `dest` and waits until its buffer is free (at once when eager).
    async fn send<T: Pod>(&self, data: &[T], dest: u32) -> Result<()> {
        let mut reqs = [self.isend(data, dest)?];
        self.wait(&mut reqs).await.map(drop)
    }

    /// Receives exactly `buf.len()` elements from `source` into `buf`.
    async fn recv<T: Pod>(&self, buf: &mut [T], source: u32) -> Result<()> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(buf);
        let expected = bytes.len();
        let mut reqs = [self.irecv(bytes, source)];
        let statuses = self
            .wait(&mut reqs)
            .await
            .map_err(|e| self.mismatch_of(e))?;
        self.check_length(&statuses[0], expected, source)
    }

    /// Sends `send` to `dest` and receives exactly `recv.len()` elements from `source`,
    /// without deadlocking on a ring shift. What [`Ctx::exchange`] does for one of each, with
    /// its two requests in the future rather than in vectors of their own: every step of the
    /// short-vector algorithms is one, and a million ranks wait in one at once.
    async fn sendrecv<T: Pod>(
        &self,
        send: &[T],
        dest: u32,
        recv: &mut [T],
        source: u32,
    ) -> Result<()> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(recv);
        let expected = bytes.len();
        let mut reqs = [self.irecv(bytes, source), self.isend(send, dest)?];
        let statuses = self
            .wait(&mut reqs)
            .await
            .map_err(|e| self.mismatch_of(e))?;
        self.check_length(&statuses[0], expected, source)
    }

    /// Posts every receive of `recvs` (a buffer and its source), then every send of `sends`,
    /// and waits for them all; each receive must get exactly its buffer's length.
    async fn exchange<T: Pod>(
        &self,
        sends: &[(&[T], u32)],
        recvs: Vec<(&mut [T], u32)>,
    ) -> Result<()> {
        let mut expected = Vec::with_capacity(recvs.len());
        let mut reqs: Vec<Request<'_>> = Vec::with_capacity(recvs.len() + sends.len());
        for (buf, source) in recvs {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(buf);
            expected.push((bytes.len(), source));
            reqs.push(self.irecv(bytes, source));
        }
        for &(data, dest) in sends {
            reqs.push(self.isend(data, dest)?);
        }
        let statuses = self
            .wait(&mut reqs)
            .await
            .map_err(|e| self.mismatch_of(e))?;
        for (&(bytes, source), status) in expected.iter().zip(&statuses) {
            self.check_length(status, bytes, source)?;
        }
        Ok(())
    }

    fn irecv<'b>(&self, bytes: &'b mut [u8], source: u32) -> Request<'b> {
        self.comm
            .coll_irecv(self.call, self.context, bytes, source, self.tag)
    }

    fn isend<T: Pod>(&self, data: &[T], dest: u32) -> Result<Request<'static>> {
        self.comm.coll_isend(
            self.call,
            self.context,
            bytemuck::cast_slice(data),
            dest,
            self.tag,
        )
    }

    /// A receive's `Truncate` is the ranks' disagreement: `CollectiveMismatch`.
    fn mismatch_of(&self, e: Error) -> Error {
        match e {
            Error::Truncate {
                mut site,
                message_bytes,
                buffer_bytes,
            } => {
                site.context = Some(self.comm.p2p_context());
                site.tag = None;
                Error::CollectiveMismatch {
                    what: self.disagree(message_bytes, buffer_bytes, site.peer),
                    site,
                }
            }
            e => e,
        }
    }

    /// `CollectiveMismatch` unless the message had exactly `bytes` bytes.
    fn check_length(&self, status: &Status, bytes: usize, source: u32) -> Result<()> {
        if status.bytes == bytes {
            return Ok(());
        }
        let site = self.comm.site(self.call).peer(source);
        Err(Error::CollectiveMismatch {
            what: self.disagree(status.bytes, bytes, site.peer),
            site,
        })
    }

    fn disagree(
        &self,
        got: usize,
        expected: usize,
        peer: Option<mpsim_proto::matching::Source>,
    ) -> String {
        let from = peer.map(|p| format!(" from rank {p}")).unwrap_or_default();
        format!(
            "received a message of {got} bytes{from} where this rank's arguments expect \
             {expected}: the ranks called {} with counts that do not agree",
            self.call
        )
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        if let Some(chosen) = self.chosen {
            let ns = self.comm.now_ns().saturating_sub(self.start_ns);
            self.comm
                .coll_policy()
                .record(self.coll, chosen, self.rank == 0, ns);
        }
    }
}

/// Where each of `parts` blocks of a vector lies: near-equal blocks of `count` elements (the
/// first `count % parts` one longer), or blocks of given lengths, one after another.
pub(crate) enum Layout {
    /// `parts` near-equal blocks of `count` elements.
    Equal { count: usize, parts: usize },
    /// Block `i` is `offsets[i]..offsets[i + 1]`.
    Offsets(Vec<usize>),
}

impl Layout {
    /// Blocks of `counts[i]` elements.
    fn of_counts(counts: &[usize]) -> Layout {
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        let mut at = 0;
        offsets.push(0);
        for &c in counts {
            at += c;
            offsets.push(at);
        }
        Layout::Offsets(offsets)
    }

    /// Where block `i` starts (`i` may be the number of blocks: the end).
    fn start(&self, i: usize) -> usize {
        match self {
            Layout::Equal { count, parts } => {
                let (base, extra) = (count / parts, count % parts);
                i * base + i.min(extra)
            }
            Layout::Offsets(offsets) => offsets[i],
        }
    }

    /// The elements of blocks `lo..hi`.
    fn span(&self, lo: usize, hi: usize) -> Range<usize> {
        self.start(lo)..self.start(hi)
    }

    /// The elements of block `i`.
    fn block(&self, i: usize) -> Range<usize> {
        self.span(i, i + 1)
    }
}

/// `send` and `recv`, two disjoint ranges of `buf`, as a slice to read and one to write.
fn disjoint<T>(buf: &mut [T], send: Range<usize>, recv: Range<usize>) -> (&[T], &mut [T]) {
    debug_assert!(
        send.end <= recv.start || recv.end <= send.start || send.is_empty() || recv.is_empty()
    );
    if send.is_empty() {
        return (&[], &mut buf[recv]);
    }
    if recv.is_empty() {
        return (&buf[send], &mut []);
    }
    if send.start < recv.start {
        let (a, b) = buf.split_at_mut(recv.start);
        (&a[send], &mut b[..recv.len()])
    } else {
        let (a, b) = buf.split_at_mut(send.start);
        (&b[..send.len()], &mut a[recv])
    }
}

/// The largest power of two not above `n` (`n >= 1`).
fn pof2_below(n: u32) -> u32 {
    1 << (31 - n.leading_zeros())
}

/// A vector of `len` zeroed elements.
fn zeroed<T: Pod>(len: usize) -> Vec<T> {
    vec![T::zeroed(); len]
}

impl Comm {
    /// The collective's site for errors found before any traffic.
    fn check_root(&self, call: &'static str, root: u32) -> Result<()> {
        if root < self.size() {
            return Ok(());
        }
        Err(Error::InvalidRoot {
            site: self.site(call),
            root,
            size: self.size(),
        })
    }

    /// `InvalidBuffer` unless `buf` (named `what`) has `len` elements.
    fn check_len(
        &self,
        call: &'static str,
        what: &str,
        buf: usize,
        len: Option<usize>,
    ) -> Result<()> {
        if Some(buf) == len {
            return Ok(());
        }
        let needs = match len {
            Some(len) => format!("{len}"),
            None => "more than a usize counts".to_string(),
        };
        Err(Error::InvalidBuffer {
            site: self.site(call),
            what: format!("the {what} has {buf} elements where the call needs {needs}"),
        })
    }

    /// `InvalidBuffer` unless `counts` has one count per rank.
    fn check_counts(&self, call: &'static str, what: &str, counts: &[usize]) -> Result<usize> {
        if counts.len() != self.size() as usize {
            return Err(Error::InvalidBuffer {
                site: self.site(call),
                what: format!(
                    "{what} has {} entries where the communicator has {} ranks",
                    counts.len(),
                    self.size()
                ),
            });
        }
        counts
            .iter()
            .try_fold(0usize, |a, &c| a.checked_add(c))
            .ok_or_else(|| Error::InvalidBuffer {
                site: self.site(call),
                what: format!("the sum of {what} overflows a usize"),
            })
    }

    /// The checks of a reduction `coll` named `call` whose receive buffer (`recv` elements) is
    /// as long as its `send` (allreduce, scan, exscan), and its algorithm and why.
    fn same_length_reduction<T: Pod>(
        &self,
        call: &'static str,
        coll: Collective,
        send: &[T],
        recv: usize,
        op: &ops::Op<T>,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        self.check_len(call, "receive buffer", recv, Some(send.len()))?;
        let shape = self.shape::<T>(send.len(), op.is_commutative());
        self.algorithm(coll, call, shape)
    }

    /// The call's algorithm and why (`algo::choose`).
    fn algorithm(&self, coll: Collective, call: &'static str, shape: Shape) -> Result<Chosen> {
        algo::choose(self, coll, call, shape)
    }

    /// The shape of a call moving `count` elements of `T`.
    fn shape<T>(&self, count: usize, commutative: bool) -> Shape {
        Shape {
            size: self.size(),
            bytes: count.saturating_mul(size_of::<T>()),
            count,
            elem: size_of::<T>(),
            commutative,
        }
    }
}
