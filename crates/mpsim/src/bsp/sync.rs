//! The end of a superstep (`sync`) and of the SPMD section (`end`), as messages over the
//! process's own communicator (`docs/bsplib.md` §3): the same code on every backend, so the
//! simulator times what really runs and the backends give identical results.
//!
//! Four phases:
//!
//! 1. **Exchange.** Each process sends each process it has traffic for one *bundle*
//!    (`wire.rs`: its puts, get requests and messages for it, in issue order), announced by a
//!    header carried by a synchronous send. Nobody knows how many bundles will come, so the
//!    exchange ends with a nonblocking barrier (a binomial tree: up to pid 0, then down) that
//!    a process enters once its headers were all received, receiving headers meanwhile
//!    (Hoefler's NBX): when the barrier completes, every header has been matched, and the
//!    bundles they announce are received. Messages per superstep: two per pair that
//!    communicated, plus `2(p - 1)` for the barrier, with no `p`-long vector anywhere.
//! 2. **Agreement.** One reduction (max, a binomial `reduce` to pid 0 and a `bcast`) of a few
//!    numbers: whether each process syncs or ends, its push, pop and `set_tagsize` calls, its
//!    `w` and `h`. Any disagreement is the same error on every process (naming the first
//!    process with the least and the greatest value, found by one more `allreduce`), before
//!    anything is applied.
//! 3. **Gets.** Each process reads what the gets it received ask for, from its areas as the
//!    superstep left them (no put of the superstep has landed), and replies; sizes of newly
//!    pushed registrations are exchanged (one number when they agree).
//! 4. **Apply**, in the order of `spec/bsplib.md` §1: get results in issue order, then puts by
//!    source pid and issue order (so the last wins), registration changes, tag size, queue.
//!
//! Tags alternate with the superstep's parity: a process that has left superstep k's barrier
//! can be at most one superstep ahead of any other, so its messages of k+1 never meet a
//! receive of k.
//!
//! Why trees and not recursive doubling: at 16,384 processes an empty sync took 1.3 s of host
//! time with a dissemination barrier and an `allreduce` (p log2 p messages each), 0.3 s with
//! the trees (2(p - 1) each); the simulated time of a superstep grows from log2 p to
//! 2 log2 p message latencies for it.

use std::collections::BTreeMap;

use mpsim_proto::error::{BspErrorKind, Disagreement, Error, Result};
use mpsim_proto::matching::{Pattern, Source, Tag};
use mpsim_proto::p2p::SendMode;
use mpsim_proto::runtime::Work;

use super::ctx::{Core, Ctx, GetDest, Outgoing};
use super::queue::Queue;
use super::regs::Sizes;
use super::timing::Superstep;
use super::wire::{self, Bundle, Op};
use crate::Op as ReduceOp;
use crate::request::{Names, Request, wait_all_in, wait_any_in, yield_once};

/// Whether a process syncs or ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sync,
    End,
}

impl Kind {
    fn op(self) -> &'static str {
        match self {
            Kind::Sync => "bsp_sync",
            Kind::End => "bsp_end",
        }
    }
}

// Tags: a kind in the high bits, the superstep's parity in bit 0.
const HEADER: i32 = 0;
const DATA: i32 = 1;
const REPLY: i32 = 2;
const UP: i32 = 3;
const DOWN: i32 = 4;

fn tag(kind: i32, parity: i32) -> i32 {
    kind * 2 + parity
}

/// What every process learns at the agreement.
struct Agreed {
    w_ns: u64,
    h_bytes: u64,
    h_msgs: u64,
    h_pid: u32,
    all_end: bool,
}

impl Ctx {
    /// Ends the superstep (`bsp_sync`): a barrier after which all the superstep's
    /// communication has happened (`spec/bsplib.md` §1: gets read, get results written, puts
    /// written, registrations and tag size changed, the queue replaced by the messages sent
    /// in it). Collective errors (processes that disagree on registrations or tag size, or
    /// that end while others sync) are returned by every process; after one, every call of
    /// the context returns an error, and a program that returns `Ok` ends without another
    /// exchange.
    pub async fn sync(&mut self) -> Result<()> {
        self.check_poisoned("bsp_sync")?;
        self.core_mut().superstep_end(Kind::Sync).await
    }
}

impl Core {
    /// Ends the SPMD section (`bsp_end`): collective with the other processes' ends; a
    /// process that syncs instead is [`BspErrorKind::SyncEndMismatch`] on every process.
    /// Communication requested since the last sync is discarded.
    pub(crate) async fn end(&mut self) -> Result<()> {
        if self.poisoned.is_some() {
            return Ok(());
        }
        let r = self.superstep_end(Kind::End).await;
        self.timing.publish();
        r
    }

    async fn superstep_end(&mut self, kind: Kind) -> Result<()> {
        let r = self.superstep_end_inner(kind).await;
        if let Err(e) = &r {
            self.poisoned = Some(e.clone());
        }
        r
    }

    async fn superstep_end_inner(&mut self, kind: Kind) -> Result<()> {
        let op = kind.op();
        let w_ns = self.comm.now_ns().saturating_sub(self.step_start_ns);
        let mut out = std::mem::take(self.out.get_mut());
        if kind == Kind::End {
            out = Outgoing::default();
        }
        let parity = (self.superstep & 1) as i32;
        let own = out.bundles.remove(&self.pid);
        let received = self.exchange(op, parity, &out.bundles).await?;

        // What this process sent and received, self-traffic excluded (spec §3).
        let (mut sent, mut sent_msgs, mut recv, mut recv_msgs) = (0u64, 0u64, 0u64, 0u64);
        for b in out.bundles.values() {
            sent += b.carried;
            sent_msgs += b.carried_ops;
            recv += b.asked;
            recv_msgs += b.asked_ops;
        }
        for (_, bytes) in &received {
            for op in wire::ops(bytes) {
                match op? {
                    Op::Put { data, .. } => {
                        recv += data.len() as u64;
                        recv_msgs += 1;
                    }
                    Op::Send { tag, payload } => {
                        recv += (tag.len() + payload.len()) as u64;
                        recv_msgs += 1;
                    }
                    Op::Get { n, .. } => {
                        sent += n;
                        sent_msgs += 1;
                    }
                }
            }
        }
        let agreed = self
            .agree(kind, w_ns, sent.max(recv), sent_msgs.max(recv_msgs))
            .await?;
        if agreed.all_end {
            self.finish_superstep(kind, &agreed).await;
            return Ok(());
        }

        let sizes = self.pushed_sizes().await?;

        // Bundles by source pid, this process's own among them.
        let mut all: Vec<(u32, &[u8])> = received.iter().map(|(s, b)| (*s, &b[..])).collect();
        if let Some(own) = &own {
            all.push((self.pid, &own.bytes));
        }
        all.sort_by_key(|&(s, _)| s);

        // Gets: read, reply, receive the replies.
        let mut replies: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for &(source, bytes) in &all {
            for op in wire::ops(bytes) {
                if let Op::Get { reg, offset, n } = op? {
                    let area = self.regs.bytes(reg).map_err(|_| bad_get())?;
                    let (a, b) = (offset as usize, (offset + n) as usize);
                    let data = area.get(a..b).ok_or_else(bad_get)?;
                    replies.entry(source).or_default().extend_from_slice(data);
                }
            }
        }
        let own_reply = replies.remove(&self.pid).unwrap_or_default();
        let mut got = self.exchange_replies(op, parity, &out, replies).await?;
        got.insert(self.pid, own_reply);
        for g in &out.gets {
            let reply = got.get(&g.target).ok_or_else(bad_get)?;
            let (a, b) = (g.reply_offset as usize, (g.reply_offset + g.n) as usize);
            let data = reply.get(a..b).ok_or_else(bad_get)?;
            match g.dest {
                GetDest::Pending(id) => {
                    self.results.insert(id, data.to_vec());
                }
                GetDest::Reg { reg, offset } => {
                    let area = self.regs.bytes_mut(reg).map_err(|_| bad_get())?;
                    let dst = area
                        .get_mut(offset as usize..offset as usize + data.len())
                        .ok_or_else(bad_get)?;
                    dst.copy_from_slice(data);
                }
            }
        }

        // Puts and messages, by source pid then issue order.
        let mut queue = Queue::default();
        for &(_, bytes) in &all {
            for op in wire::ops(bytes) {
                match op? {
                    Op::Put { reg, offset, data } => {
                        let area = self.regs.bytes_mut(reg).map_err(|_| bad_get())?;
                        let dst = area
                            .get_mut(offset as usize..offset as usize + data.len())
                            .ok_or_else(bad_get)?;
                        dst.copy_from_slice(data);
                    }
                    Op::Send { tag, payload } => queue.push(tag, payload),
                    Op::Get { .. } => {}
                }
            }
        }
        self.regs.apply(sizes);
        self.tags.queue = self.tags.send;
        self.tags.send = self.tags.requested.get();
        self.tags.calls.set(0);
        self.queue = queue;
        self.finish_superstep(kind, &agreed).await;
        Ok(())
    }

    /// Ends the superstep's clock and records it: under the cost model, computes up to
    /// `start + w + h·g + l`; starts the next superstep.
    async fn finish_superstep(&mut self, kind: Kind, agreed: &Agreed) {
        let cost_ns = match self.timing.cost {
            Some(model) => {
                let cost = agreed.w_ns.saturating_add(model.comm_ns(agreed.h_bytes));
                let end = self.step_start_ns.saturating_add(cost);
                let now = self.comm.now_ns();
                if end > now {
                    let d = std::time::Duration::from_nanos(end - now);
                    self.comm.rt().compute(Work::Sync(d));
                    yield_once().await;
                }
                cost
            }
            None => self.comm.now_ns().saturating_sub(self.step_start_ns),
        };
        let end_ns = self.comm.now_ns();
        self.timing.record(Superstep {
            index: self.superstep,
            kind: match kind {
                Kind::Sync => "sync",
                Kind::End => "end",
            },
            w_ns: agreed.w_ns,
            h_bytes: agreed.h_bytes,
            h_msgs: agreed.h_msgs,
            h_pid: agreed.h_pid,
            cost_ns,
            end_ns: end_ns.saturating_sub(self.begin_ns),
        });
        self.superstep += 1;
        self.step_start_ns = end_ns;
    }

    /// Phase 1: sends every bundle of `bundles` (other processes only) and receives those sent
    /// to this process, by source pid.
    async fn exchange(
        &self,
        op: &'static str,
        parity: i32,
        bundles: &BTreeMap<u32, Bundle>,
    ) -> Result<Vec<(u32, Vec<u8>)>> {
        let (me, p) = (self.pid, self.nprocs);
        if p == 1 {
            return Ok(Vec::new());
        }
        let comm = &self.comm;
        let context = comm.p2p_context();
        let names = Names { call: op, wait: op };
        let recv = |buf, source: Source, kind: i32| {
            let pattern = Pattern::new(context, source, Tag::Value(tag(kind, parity)));
            comm.post_recv(names, Some(pattern), buf)
        };
        let send = |mode, bytes: &[u8], dest: u32, kind: i32| {
            comm.post_send(context, names, mode, bytes, dest, tag(kind, parity))
        };
        // The barrier: a binomial tree rooted at pid 0 (parent: `me` without its lowest set
        // bit; children: `me + 2^k` below that bit). A process sends `UP` to its parent once its
        // headers were all received and every child's `UP` came; pid 0 then sends `DOWN`,
        // passed on to the children: 2(p - 1) messages, 2 log2 p rounds.
        let low = if me == 0 {
            p.next_power_of_two()
        } else {
            me & me.wrapping_neg()
        };
        let children: Vec<u32> = (0..32)
            .map(|k| 1u32 << k)
            .take_while(|&d| d < low)
            .filter_map(|d| me.checked_add(d).filter(|&c| c < p))
            .collect();
        let mut header = [0u8; 8];
        // reqs[0]: the header receive; then the children's `UP`s and the parent's `DOWN`;
        // then the headers sent.
        let mut reqs: Vec<Request<'_>> = Vec::with_capacity(2 + children.len() + bundles.len());
        reqs.push(recv(&mut header[..], Source::Any, HEADER));
        for &c in &children {
            reqs.push(recv(&mut [][..], Source::Rank(c), UP));
        }
        let down = reqs.len();
        if me != 0 {
            reqs.push(recv(&mut [][..], Source::Rank(me & (me - 1)), DOWN));
        }
        let first_header = reqs.len();
        let mut sends = Vec::with_capacity(bundles.len() + children.len() + 1);
        for (&dest, b) in bundles {
            let len = (b.bytes.len() as u64).to_le_bytes();
            reqs.push(send(SendMode::Synchronous, &len, dest, HEADER)?);
            sends.push(send(SendMode::Standard, &b.bytes, dest, DATA)?);
        }
        let mut headers: Vec<(u32, usize)> = Vec::new();
        let mut up_sent = false;
        loop {
            if !up_sent
                && reqs[1..down].iter().all(Request::is_null)
                && reqs[first_header..].iter().all(Request::is_null)
            {
                up_sent = true;
                if me != 0 {
                    sends.push(send(SendMode::Standard, &[], me & (me - 1), UP)?);
                }
            }
            if up_sent && (me == 0 || reqs[down].is_null()) {
                for &c in &children {
                    sends.push(send(SendMode::Standard, &[], c, DOWN)?);
                }
                break;
            }
            let Some((i, status)) = wait_any_in(&mut reqs, op).await? else {
                return Err(internal("the exchange waits on nothing"));
            };
            if i == 0 {
                let buf = reqs[0].take_buf().ok_or_else(|| internal("no header"))?;
                headers.push((status.source, read_len(buf)?));
                reqs[0] = recv(buf, Source::Any, HEADER);
            }
        }
        // Every header sent to this process has been matched: the last receive for one either
        // got it or is cancelled.
        reqs[0].cancel()?;
        let status = reqs[0].wait_in_place(Some(op)).await?;
        if !status.cancelled {
            let buf = reqs[0].take_buf().ok_or_else(|| internal("no header"))?;
            headers.push((status.source, read_len(buf)?));
        }
        drop(reqs);
        headers.sort_unstable();
        let mut bufs: Vec<Vec<u8>> = headers.iter().map(|&(_, n)| vec![0; n]).collect();
        let mut data: Vec<Request<'_>> = bufs
            .iter_mut()
            .zip(&headers)
            .map(|(buf, &(source, _))| recv(&mut buf[..], Source::Rank(source), DATA))
            .collect();
        wait_all_in(&mut data, op).await?;
        drop(data);
        wait_all_in(&mut sends, op).await?;
        Ok(headers.into_iter().map(|(s, _)| s).zip(bufs).collect())
    }

    /// Phase 3's messages: sends each process the bytes its gets asked for (`replies`) and
    /// receives the replies to this process's gets, by target.
    async fn exchange_replies(
        &self,
        op: &'static str,
        parity: i32,
        out: &Outgoing,
        replies: BTreeMap<u32, Vec<u8>>,
    ) -> Result<BTreeMap<u32, Vec<u8>>> {
        let comm = &self.comm;
        let context = comm.p2p_context();
        let names = Names { call: op, wait: op };
        let asked: Vec<(u32, u64)> = out
            .bundles
            .iter()
            .filter(|(_, b)| b.asked > 0)
            .map(|(&t, b)| (t, b.asked))
            .collect();
        let mut bufs: Vec<Vec<u8>> = asked.iter().map(|&(_, n)| vec![0; n as usize]).collect();
        let mut reqs = Vec::new();
        for (&dest, bytes) in &replies {
            reqs.push(comm.post_send(
                context,
                names,
                SendMode::Standard,
                bytes,
                dest,
                tag(REPLY, parity),
            )?);
        }
        for (buf, &(source, _)) in bufs.iter_mut().zip(&asked) {
            let pattern = Pattern::new(
                context,
                Source::Rank(source),
                Tag::Value(tag(REPLY, parity)),
            );
            reqs.push(comm.post_recv(names, Some(pattern), &mut buf[..]));
        }
        wait_all_in(&mut reqs, op).await?;
        drop(reqs);
        Ok(asked.into_iter().map(|(t, _)| t).zip(bufs).collect())
    }

    /// Phase 2: the agreement (one `allreduce`), and its errors.
    async fn agree(&self, kind: Kind, w_ns: u64, h_bytes: u64, h_msgs: u64) -> Result<Agreed> {
        let op = kind.op();
        let p = self.nprocs;
        let digest = self
            .regs
            .popped
            .iter()
            .fold(0x9E37_79B9_7F4A_7C15u64, |h, &r| mix(h ^ r));
        // What an end discards (calls since the last sync) is not compared.
        let counted = |v: usize| if kind == Kind::End { 0 } else { v as i64 };
        // Values every process must agree on, each reduced as its max and its min (-max of -v).
        let checked: [(Option<Disagreement>, i64); 6] = [
            (None, i64::from(kind == Kind::End)),
            (
                Some(Disagreement::PushCount),
                counted(self.regs.pushed.len()),
            ),
            (
                Some(Disagreement::PopCount),
                counted(self.regs.popped.len()),
            ),
            (
                Some(Disagreement::PopRegistrations),
                if kind == Kind::End {
                    0
                } else {
                    (digest >> 1) as i64
                },
            ),
            (
                Some(Disagreement::TagsizeCalls),
                counted(self.tags.calls.get() as usize),
            ),
            (
                Some(Disagreement::TagsizeValue),
                counted(self.tags.requested.get()),
            ),
        ];
        let shift = 64 - u64::from(p.saturating_sub(1)).leading_zeros();
        let rank_key = i64::from(p - 1 - self.pid);
        let cap = (1u64 << (63 - shift)) - 1;
        let with_pid = |v: u64| ((v.min(cap) << shift) as i64) | rank_key;
        let mut mine: Vec<i64> = Vec::with_capacity(2 * checked.len() + 3);
        for &(_, v) in &checked {
            mine.push(v);
            mine.push(-v);
        }
        mine.push(w_ns.min(i64::MAX as u64) as i64);
        mine.push(with_pid(h_bytes));
        mine.push(with_pid(h_msgs));
        // A binomial reduce to pid 0 and a binomial broadcast (2(p - 1) messages), not an
        // allreduce by recursive doubling (p log2 p): at a million processes, ten times fewer.
        let mut all = vec![0i64; mine.len()];
        self.comm
            .reduce(&mine, &mut all, &ReduceOp::max(), 0)
            .await?;
        self.comm.bcast(&mut all, 0).await?;
        // The first disagreement, in the order of `checked`.
        if let Some(i) = (0..checked.len()).find(|&i| all[2 * i] != -all[2 * i + 1]) {
            let (high, low) = (all[2 * i], -all[2 * i + 1]);
            let v = checked[i].1;
            // The first process with the least value and the first with the greatest.
            let who = [
                if v == low { self.pid } else { p },
                if v == high { self.pid } else { p },
            ];
            let mut first = [0u32; 2];
            self.comm
                .allreduce(&who, &mut first, &ReduceOp::min())
                .await?;
            let kind = match checked[i].0 {
                None => BspErrorKind::SyncEndMismatch {
                    syncing: first[0],
                    ending: first[1],
                },
                Some(what) => BspErrorKind::Mismatch {
                    what,
                    low: (first[0], low),
                    high: (first[1], high),
                },
            };
            // Nobody returns the error before everybody has it: a process that returns an
            // error stops the run, and would cut another's sync short with a different one.
            // The barrier's own outcome does not matter (it fails only if the run is stopping).
            let _ = self.comm.barrier().await;
            return Err(self.error(op, kind));
        }
        let n = 2 * checked.len();
        let mask = (1i64 << shift) - 1;
        let pid_of = |v: i64| p - 1 - (v & mask) as u32;
        Ok(Agreed {
            w_ns: all[n] as u64,
            h_bytes: (all[n + 1] >> shift) as u64,
            h_msgs: (all[n + 2] >> shift) as u64,
            h_pid: pid_of(all[n + 1]),
            all_end: all[0] == 1,
        })
    }

    /// Every process's size of each registration pushed in this superstep (their number is
    /// agreed): one `allreduce` of the sizes' range, an `allgather` for those that differ.
    async fn pushed_sizes(&self) -> Result<Vec<Sizes>> {
        let mine = self.regs.pushed_sizes();
        if mine.is_empty() {
            return Ok(Vec::new());
        }
        if self.nprocs == 1 {
            return Ok(mine.into_iter().map(Sizes::Uniform).collect());
        }
        let range: Vec<i64> = mine.iter().flat_map(|&s| [s as i64, -(s as i64)]).collect();
        let mut all = vec![0i64; range.len()];
        self.comm
            .allreduce(&range, &mut all, &ReduceOp::max())
            .await?;
        let uniform = |i: usize| all[2 * i] == -all[2 * i + 1];
        let varying: Vec<usize> = (0..mine.len()).filter(|&i| !uniform(i)).collect();
        let mut per_pid: Vec<u64> = Vec::new();
        if !varying.is_empty() {
            let send: Vec<u64> = varying.iter().map(|&i| mine[i]).collect();
            per_pid = vec![0; send.len() * self.nprocs as usize];
            self.comm.allgather(&send, &mut per_pid).await?;
        }
        let k = varying.len();
        Ok((0..mine.len())
            .map(|i| match varying.iter().position(|&j| j == i) {
                None => Sizes::Uniform(all[2 * i] as u64),
                Some(v) => Sizes::PerPid(per_pid.iter().skip(v).step_by(k).copied().collect()),
            })
            .collect())
    }
}

fn read_len(buf: &[u8]) -> Result<usize> {
    let bytes: [u8; 8] = buf.try_into().map_err(|_| internal("a short header"))?;
    usize::try_from(u64::from_le_bytes(bytes)).map_err(|_| internal("a bundle too long"))
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn internal(what: &str) -> Error {
    Error::Internal {
        what: format!("bsp sync: {what} (a bug in mpsim::bsp)"),
    }
}

fn bad_get() -> Error {
    internal("a put or get outside a registration the sender checked")
}
