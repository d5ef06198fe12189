//! Executing one call of a C rank with `Comm` (the argument words are `wire::Op`'s docs).

use mpsim::{Comm, Error, Request, Result, Status, wait_all, wait_any, wait_some};
use mpsim_door::wire::{Op, WireStatus};

use crate::proxy::Rec;
use mpsim_door::wire::{ANY_SOURCE, ANY_TAG};

use crate::checks::{Expect, RecvCheck, Sent};

use crate::proxy::{Answer, Buf, Held, HeldComm, Pair, Proxy, mode, source, tag, wire_status};

pub(crate) fn u64s(bytes: &[u8]) -> Vec<usize> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])) as usize)
        .collect()
}

fn ids(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

pub(crate) fn bad(call: &str, what: &str) -> Error {
    Error::program(format!("{call}: {what}"))
}

/// Starts a receive into a buffer of `cap` bytes that the request owns.
fn post_recv(comm: &Comm, cap: usize, src: i64, t: i64, check: RecvCheck) -> Result<Held> {
    let mut buf = Buf::zeroed(cap);
    // SAFETY: the request is stored beside the buffer it borrows and dropped before it
    // (`Held`'s field order).
    let slice: &'static mut [u8] = unsafe { buf.view() };
    let req = comm.irecv(slice, source(src), tag(t))?;
    Ok(Held {
        req: Some(req),
        buf: Some(buf),
        coll: false,
        check: Some(check),
        pair: None,
    })
}

/// Requests of ids `list` taken out for a wait: their positions, ids and holders, and the
/// requests themselves, in order (ids 0, settled by the rank, are skipped).
struct Taken {
    held: Vec<(usize, i64, Held)>,
    reqs: Vec<Request<'static>>,
}

impl Taken {
    fn new(p: &mut Proxy<'_>, list: &[i64], call: &str) -> Result<Taken> {
        let mut held = Vec::new();
        let mut reqs = Vec::new();
        for (i, &id) in list.iter().enumerate() {
            if id == 0 {
                continue;
            }
            let mut h = p.held(id, call)?;
            match h.req.take() {
                Some(r) => {
                    reqs.push(r);
                    held.push((i, id, h));
                }
                None => return Err(bad(call, "a request with nothing to wait for")),
            }
        }
        Ok(Taken { held, reqs })
    }

    /// Puts back the requests not in `done` (indices into `reqs`); gives the completed ones
    /// as (position, holder).
    fn settle(self, p: &mut Proxy<'_>, done: &[usize]) -> Vec<(usize, Held)> {
        let mut out = Vec::new();
        for (k, ((i, id, mut h), r)) in self.held.into_iter().zip(self.reqs).enumerate() {
            if done.contains(&k) {
                drop(r);
                out.push((i, h));
            } else {
                h.req = Some(r);
                p.requests.insert(id, h);
            }
        }
        out
    }
}

/// Before a wait on several (`MPI_Waitall`, `block`) or a test of all of them
/// (`MPI_Testall`): the sends of the `MPI_Isendrecv` requests among ids `list` whose receive
/// is still in `req` are waited for (or tested), so that what is left of each is one request.
/// `false` when a test found one not complete (then nothing else is tested: not all are).
async fn sends_of_pairs(p: &mut Proxy<'_>, list: &[i64], block: bool) -> Result<bool> {
    for id in list {
        let Some(h) = p.requests.get_mut(id) else {
            continue;
        };
        match h.pair.take() {
            Some(Pair::Send(send)) if block => {
                send.wait().await?;
            }
            Some(Pair::Send(mut send)) => {
                if send.test().await?.is_none() {
                    h.pair = Some(Pair::Send(send));
                    return Ok(false);
                }
            }
            other => h.pair = other,
        }
    }
    Ok(true)
}

/// The request of `h` completed with `s`: the status the call reports, or `None` when `h` is
/// an `MPI_Isendrecv` whose receive completed before its send (`h.req` is then the send, to
/// wait for; the receive's data and status are kept, and the type checks see it now).
async fn pair_done(p: &Proxy<'_>, h: &mut Held, s: Status) -> Result<Option<Status>> {
    match h.pair.take() {
        None => Ok(Some(s)),
        Some(Pair::Received(received)) => Ok(Some(received)),
        Some(Pair::Send(mut send)) => {
            if send.test().await?.is_some() {
                return Ok(Some(s));
            }
            p.received_all(std::iter::once((&*h, &s)));
            h.check = None;
            h.req = Some(send);
            h.pair = Some(Pair::Received(s));
            Ok(None)
        }
    }
}

impl Proxy<'_> {
    fn held(&mut self, id: i64, call: &str) -> Result<Held> {
        self.requests
            .remove(&id)
            .ok_or_else(|| bad(call, &format!("unknown request {id:#x}")))
    }

    /// A send from this rank to `dest` with `tag` on `c`, for the type checks.
    fn record_send(&self, c: &Comm, dest: u32, tag: i32, record: Option<Rec>, call: &'static str) {
        let sig = match record {
            Some(Rec::P2p(s)) => Some(s),
            _ => None,
        };
        let sent = Sent {
            sig,
            call,
            world: self.world.rank(),
            time_ns: c.now_ns(),
            site: self.site,
        };
        // Streams are keyed by world ranks: on an intercommunicator a rank number names
        // a member of either group, and two directions would share one key.
        let to = c.world_rank_of(dest);
        self.checks.sent(c, self.world.rank(), to, tag, sent);
    }

    /// A send recorded by [`Proxy::record_send`] failed with `e`: one that sent nothing (a
    /// buffered send that did not fit, which the program may get back and go on) is taken
    /// back from the type checks. Gives `e`.
    fn unrecord_send(&self, c: &Comm, dest: u32, tag: i32, e: Error) -> Error {
        if matches!(e, Error::BufferOverflow { .. }) {
            let to = c.world_rank_of(dest);
            self.checks.unsent(c, self.world.rank(), to, tag);
        }
        e
    }

    /// A receive posted now on `c` from `src` with `tag`, for the type checks.
    fn recv_check(
        &mut self,
        c: &Comm,
        src: i64,
        tag: i64,
        record: Option<Rec>,
        call: &'static str,
    ) -> RecvCheck {
        self.recv_seq += 1;
        RecvCheck {
            comm: c.clone(),
            source: src,
            tag,
            seq: self.recv_seq,
            expect: match record {
                Some(Rec::P2p(sig)) => Some(Expect {
                    sig,
                    call,
                    time_ns: c.now_ns(),
                    site: self.site,
                }),
                _ => None,
            },
        }
    }

    /// Receive `rc` completed with status `s`: the checks compare it with the send it matched,
    /// one of the first `k` of its stream, `k - 1` being the receives posted before it and
    /// still pending that could match the same stream.
    fn received(&self, rc: &RecvCheck, s: &Status) {
        if s.cancelled || s.source == Status::NO_SOURCE || s.tag == Status::NO_TAG {
            return;
        }
        let id = rc.comm.id();
        let could = |o: &RecvCheck| {
            o.comm.id() == id
                && o.seq < rc.seq
                && (o.source == ANY_SOURCE as i64 || o.source == s.source as i64)
                && (o.tag == ANY_TAG as i64 || o.tag == s.tag as i64)
        };
        let k = 1 + self
            .requests
            .values()
            .filter(|h| h.check.as_ref().is_some_and(could))
            .count();
        self.checks.received(
            &rc.comm,
            &self.world,
            s.source,
            s.tag,
            rc.expect.as_ref(),
            k,
        );
    }

    /// Completed requests `done` (with their statuses) seen by the type checks, receives in
    /// the order they were posted.
    fn received_all<'h>(&self, done: impl Iterator<Item = (&'h Held, &'h Status)>) {
        let mut list: Vec<(&RecvCheck, &Status)> = done
            .filter_map(|(h, s)| h.check.as_ref().map(|c| (c, s)))
            .collect();
        list.sort_by_key(|(c, _)| c.seq);
        for (c, s) in list {
            self.received(c, s);
        }
    }

    /// Counts a collective on `c` and gives the checks its record.
    fn record_collective(&mut self, c: &Comm, record: Option<Rec>) {
        let seq = self.coll_seq.entry(c.id()).or_default();
        let k = *seq;
        *seq += 1;
        if let Some(Rec::Coll(rec)) = record {
            self.checks.collective(c, &self.world, k, rec, self.site);
        }
    }

    pub(crate) fn hold(&mut self, h: Held) -> i64 {
        let id = self.id();
        self.requests.insert(id, h);
        id
    }

    /// Holds `h` under the id the rank chose (`wire::RANK_IDS`), or one of the proxy's if 0.
    fn hold_as(&mut self, id: i64, h: Held, call: &str) -> Result<i64> {
        if id == 0 {
            return Ok(self.hold(h));
        }
        if id < mpsim_door::wire::RANK_IDS || self.requests.contains_key(&id) {
            return Err(bad(
                call,
                &format!("the C library chose a bad request id {id:#x}"),
            ));
        }
        self.requests.insert(id, h);
        Ok(id)
    }

    pub(crate) fn add_comm(&mut self, comm: Option<Comm>, errors_return: bool) -> [i64; 4] {
        match comm {
            None => [0; 4],
            Some(c) => {
                let (rank, size) = (c.rank(), c.size());
                let id = self.id();
                self.comms.insert(
                    id,
                    HeldComm {
                        comm: c,
                        errors_return,
                    },
                );
                [id, rank as i64, size as i64, 0]
            }
        }
    }
}

/// A completed request's data (for a receive: its buffer up to the bytes received; for a
/// collective: its result) and the status the rank gets: a collective's says in `bytes` how
/// long its result is, which is how the rank splits the data of several requests.
fn data_of(mut h: Held, s: &Status) -> (WireStatus, Vec<u8>) {
    h.req = None;
    let mut status = wire_status(s);
    let data = match h.buf.take() {
        None => Vec::new(),
        Some(b) if h.coll => b.into_vec(usize::MAX),
        Some(b) => b.into_vec(s.bytes),
    };
    if h.coll {
        status.bytes = data.len() as u64;
    }
    (status, data)
}

/// Executes `op`.
pub(crate) async fn execute(
    p: &mut Proxy<'_>,
    op: Op,
    a: &[i64],
    payload: &mut Vec<u8>,
    record: Option<Rec>,
) -> Result<Answer> {
    let call = crate::proxy::op_name(op);
    match op {
        Op::Init => Ok(Answer::v(&[
            p.world.rank() as i64,
            p.world.size() as i64,
            p.charge_compute as i64,
            p.queue_calls as i64,
        ])),
        Op::Finalize => Ok(Answer::default()),
        Op::Wtime => Ok(Answer::v(&[p.world.now_ns() as i64])),
        Op::Abort | Op::Fatal => unreachable!("handled by serve"),
        Op::Send => {
            let c = p.comm(a[0], call)?;
            let (dest, t) = (a[1] as u32, a[2] as i32);
            p.record_send(&c, dest, t, record, call);
            let sent = match mode(a[3]) {
                mpsim::SendMode::Standard => c.send(payload, dest, t).await,
                mpsim::SendMode::Synchronous => c.ssend(payload, dest, t).await,
                mpsim::SendMode::Buffered => c.bsend(payload, dest, t).await,
                mpsim::SendMode::Ready => c.rsend(payload, dest, t).await,
            };
            sent.map_err(|e| p.unrecord_send(&c, dest, t, e))?;
            Ok(Answer::default())
        }
        Op::Isend => {
            let c = p.comm(a[0], call)?;
            p.record_send(&c, a[1] as u32, a[2] as i32, record, call);
            let r = c
                .start_send(mode(a[3]), payload, a[1] as u32, a[2] as i32)
                .map_err(|e| p.unrecord_send(&c, a[1] as u32, a[2] as i32, e))?;
            let held = Held {
                req: Some(r),
                buf: None,
                coll: false,
                check: None,
                pair: None,
            };
            let id = p.hold_as(a[7], held, call)?;
            Ok(Answer::v(&[id]))
        }
        Op::Recv => {
            let c = p.comm(a[0], call)?;
            let rc = p.recv_check(&c, a[1], a[2], record, "MPI_Recv");
            let mut buf = p.buffer(a[3] as usize);
            let s = c.recv(&mut buf, source(a[1]), tag(a[2])).await?;
            p.received(&rc, &s);
            buf.truncate(s.bytes);
            Ok(Answer {
                status: wire_status(&s),
                ..Answer::data(buf)
            })
        }
        Op::Irecv => {
            let c = p.comm(a[0], call)?;
            let rc = p.recv_check(&c, a[1], a[2], record, "MPI_Irecv");
            let r = post_recv(&c, a[3] as usize, a[1], a[2], rc)?;
            let id = p.hold_as(a[7], r, call)?;
            Ok(Answer::v(&[id]))
        }
        Op::Wait | Op::Test => {
            let id = a[1];
            let mut h = p.held(id, call)?;
            let Some(mut r) = h.req.take() else {
                return Err(bad(call, "a request with nothing to wait for"));
            };
            let s = if op == Op::Wait {
                let mut s = r.wait().await?;
                match h.pair.take() {
                    Some(Pair::Send(send)) => {
                        send.wait().await?;
                    }
                    Some(Pair::Received(received)) => s = received,
                    None => {}
                }
                p.received_all(std::iter::once((&h, &s)));
                let (status, payload) = data_of(h, &s);
                return Ok(Answer {
                    status,
                    v: [1, 0, 0, 0],
                    payload,
                });
            } else {
                match r.test().await? {
                    Some(s) => pair_done(p, &mut h, s).await?,
                    None => {
                        h.req = Some(r);
                        None
                    }
                }
            };
            match s {
                Some(s) => {
                    p.received_all(std::iter::once((&h, &s)));
                    let (status, payload) = data_of(h, &s);
                    Ok(Answer {
                        status,
                        v: [1, 0, 0, 0],
                        payload,
                    })
                }
                None => {
                    p.requests.insert(id, h);
                    Ok(Answer::v(&[0]))
                }
            }
        }
        Op::Waitall | Op::Testall => {
            let list = ids(payload);
            if !sends_of_pairs(p, &list, op == Op::Waitall).await? {
                return Ok(Answer::v(&[0]));
            }
            let mut taken = Taken::new(p, &list, call)?;
            let statuses = if op == Op::Testall {
                mpsim::test_all(&mut taken.reqs).await?
            } else {
                Some(wait_all(&mut taken.reqs).await?)
            };
            let Some(statuses) = statuses else {
                taken.settle(p, &[]);
                return Ok(Answer::v(&[0]));
            };
            let all: Vec<usize> = (0..taken.reqs.len()).collect();
            let mut done = taken.settle(p, &all);
            // What is left of a pair whose receive completed first is its send.
            let statuses: Vec<Status> = done
                .iter_mut()
                .zip(statuses)
                .map(|((_, h), s)| match h.pair.take() {
                    Some(Pair::Received(received)) => received,
                    _ => s,
                })
                .collect();
            p.received_all(done.iter().map(|(_, h)| h).zip(&statuses));
            let mut per = vec![WireStatus::default(); list.len()];
            let mut datas = Vec::new();
            for ((i, h), s) in done.into_iter().zip(&statuses) {
                let (status, data) = data_of(h, s);
                per[i] = status;
                datas.push(data);
            }
            let mut out: Vec<u8> = bytemuck::cast_slice(&per).to_vec();
            for d in datas {
                out.extend_from_slice(&d);
            }
            Ok(Answer {
                v: [1, 0, 0, 0],
                ..Answer::data(out)
            })
        }
        Op::Waitany | Op::Testany => {
            let list = ids(payload);
            let mut taken = Taken::new(p, &list, call)?;
            let got = loop {
                let got = if op == Op::Waitany {
                    wait_any(&mut taken.reqs).await?
                } else {
                    mpsim::test_any(&mut taken.reqs).await?.completed()
                };
                let Some((k, s)) = got else { break None };
                // An MPI_Isendrecv whose receive completed first goes on as its send.
                match pair_done(p, &mut taken.held[k].2, s).await? {
                    Some(s) => break Some((k, s)),
                    None => {
                        if let Some(send) = taken.held[k].2.req.take() {
                            taken.reqs[k] = send;
                        }
                    }
                }
            };
            match got {
                None => {
                    taken.settle(p, &[]);
                    Ok(Answer::v(&[0, -1]))
                }
                Some((k, s)) => {
                    let mut done = taken.settle(p, &[k]);
                    let (i, h) = done.pop().expect("the completed request");
                    p.received_all(std::iter::once((&h, &s)));
                    let (status, payload) = data_of(h, &s);
                    Ok(Answer {
                        status,
                        v: [1, i as i64, 0, 0],
                        payload,
                    })
                }
            }
        }
        Op::Waitsome | Op::Testsome => {
            let list = ids(payload);
            let mut taken = Taken::new(p, &list, call)?;
            let got = loop {
                let got = if op == Op::Waitsome {
                    wait_some(&mut taken.reqs).await?
                } else {
                    mpsim::test_some(&mut taken.reqs).await?.unwrap_or_default()
                };
                let mut complete = Vec::with_capacity(got.len());
                for (k, s) in got {
                    // An MPI_Isendrecv whose receive completed first goes on as its send.
                    match pair_done(p, &mut taken.held[k].2, s).await? {
                        Some(s) => complete.push((k, s)),
                        None => {
                            if let Some(send) = taken.held[k].2.req.take() {
                                taken.reqs[k] = send;
                            }
                        }
                    }
                }
                if !complete.is_empty() || op == Op::Testsome {
                    break complete;
                }
            };
            let ks: Vec<usize> = got.iter().map(|g| g.0).collect();
            let done = taken.settle(p, &ks);
            p.received_all(done.iter().map(|(_, h)| h).zip(got.iter().map(|g| &g.1)));
            let mut entries = Vec::new();
            let mut datas = Vec::new();
            for ((i, h), (_, s)) in done.into_iter().zip(&got) {
                let (status, data) = data_of(h, s);
                entries.extend_from_slice(&(i as i64).to_ne_bytes());
                entries.extend_from_slice(bytemuck::bytes_of(&status));
                datas.push(data);
            }
            for d in datas {
                entries.extend_from_slice(&d);
            }
            Ok(Answer {
                v: [got.len() as i64, 0, 0, 0],
                ..Answer::data(entries)
            })
        }
        Op::RequestFree => {
            // Dropping an active request lets it complete on its own (MPI_Request_free).
            let h = p.held(a[1], call)?;
            if h.coll {
                p.requests.insert(a[1], h);
                return Err(bad(
                    call,
                    "the request of a nonblocking collective cannot be freed (MPI makes it \
                     erroneous); wait for it or test it",
                ));
            }
            if h.buf.is_some() {
                // A receive's buffer must live until it completes: keep it, finished or not
                // (apart from the requests the rank must still complete by MPI_Finalize).
                p.freed.push(h);
            }
            Ok(Answer::default())
        }
        Op::Cancel => {
            if let Some(h) = p.requests.get_mut(&a[1])
                && let Some(r) = h.req.as_mut()
            {
                if h.pair.is_some() {
                    return Err(Error::Unsupported {
                        what: "MPI_Cancel of an MPI_Isendrecv request (its send and receive \
                               would each have to be cancelled)"
                            .into(),
                    });
                }
                r.cancel()?;
            }
            Ok(Answer::default())
        }
        Op::PairRequests => {
            let send = p.held(a[1], call)?;
            let mut recv = p.held(a[2], call)?;
            recv.pair = send.req.map(Pair::Send);
            p.requests.insert(a[2], recv);
            Ok(Answer::default())
        }
        Op::Probe => {
            let c = p.comm(a[0], call)?;
            let s = c.probe(source(a[1]), tag(a[2])).await?;
            Ok(Answer {
                status: wire_status(&s),
                ..Answer::default()
            })
        }
        Op::Iprobe => {
            let c = p.comm(a[0], call)?;
            match c.iprobe(source(a[1]), tag(a[2])).await? {
                Some(s) => Ok(Answer {
                    status: wire_status(&s),
                    v: [1, 0, 0, 0],
                    ..Answer::default()
                }),
                None => Ok(Answer::v(&[0])),
            }
        }
        Op::Mprobe | Op::Improbe => {
            let c = p.comm(a[0], call)?;
            let m = if op == Op::Mprobe {
                Some(c.mprobe(source(a[1]), tag(a[2])).await?)
            } else {
                c.improbe(source(a[1]), tag(a[2])).await?
            };
            match m {
                Some(m) => {
                    // The message is matched now: its send leaves the type checks' queue.
                    let rc = p.recv_check(&c, a[1], a[2], None, call);
                    p.received(&rc, &m.status());
                    let status = wire_status(&m.status());
                    let id = p.id();
                    p.messages.insert(id, m);
                    let v = if op == Op::Mprobe {
                        [id, 0, 0, 0]
                    } else {
                        [1, id, 0, 0]
                    };
                    Ok(Answer {
                        status,
                        v,
                        ..Answer::default()
                    })
                }
                None => Ok(Answer::v(&[0, 0])),
            }
        }
        Op::Mrecv => {
            let m = p
                .messages
                .remove(&a[0])
                .ok_or_else(|| bad(call, "unknown matched message"))?;
            let mut buf = p.buffer(a[1] as usize);
            let s = m.mrecv(&mut buf).await?;
            buf.truncate(s.bytes);
            Ok(Answer {
                status: wire_status(&s),
                ..Answer::data(buf)
            })
        }
        Op::Imrecv => {
            let m = p
                .messages
                .remove(&a[0])
                .ok_or_else(|| bad(call, "unknown matched message"))?;
            let mut buf = Buf::zeroed(a[1] as usize);
            // SAFETY: as in `post_recv`.
            let slice: &'static mut [u8] = unsafe { buf.view() };
            let req = m.imrecv(slice)?;
            // `imrecv` borrows the message's lifetime only through the buffer.
            let req: Request<'static> = unsafe { std::mem::transmute(req) };
            let id = p.hold(Held {
                req: Some(req),
                buf: Some(buf),
                coll: false,
                check: None,
                pair: None,
            });
            Ok(Answer::v(&[id]))
        }
        Op::ReduceLocal => Ok(Answer::data(crate::reduce::local(
            &p.world,
            a,
            std::mem::take(payload),
        )?)),
        Op::Sendrecv => {
            let c = p.comm(a[0], call)?;
            let (dest, stag, src, rtag, cap) = (a[1], a[2], a[3], a[4], a[5] as usize);
            let null = mpsim_door::wire::PROC_NULL as i64;
            let mut buf = p.buffer(cap);
            // Its signatures are not checked; its messages keep the checks' queues in step.
            if dest != null {
                p.record_send(&c, dest as u32, stag as i32, None, call);
            }
            let rc = p.recv_check(&c, src, rtag, None, call);
            let s = match (dest == null, src == null) {
                (true, true) => None,
                (false, true) => {
                    c.send(payload, dest as u32, stag as i32).await?;
                    None
                }
                (true, false) => Some(c.recv(&mut buf, source(src), tag(rtag)).await?),
                (false, false) => Some(
                    c.sendrecv(
                        payload,
                        dest as u32,
                        stag as i32,
                        &mut buf,
                        source(src),
                        tag(rtag),
                    )
                    .await?,
                ),
            };
            match s {
                Some(s) => {
                    p.received(&rc, &s);
                    buf.truncate(s.bytes);
                    Ok(Answer {
                        status: wire_status(&s),
                        ..Answer::data(buf)
                    })
                }
                None => Ok(Answer::default()),
            }
        }
        Op::BufferAttach => {
            p.world.buffer_attach(a[0] as usize)?;
            Ok(Answer::default())
        }
        Op::BufferDetach => {
            let n = p.world.buffer_detach().await?;
            Ok(Answer::v(&[n as i64]))
        }
        Op::CommDup => {
            let c = p.comm(a[0], call)?;
            let er = p.comms.get(&a[0]).is_some_and(|h| h.errors_return);
            let d = c.dup()?;
            Ok(Answer::v(&p.add_comm(Some(d), er)))
        }
        Op::CommSplit => {
            let c = p.comm(a[0], call)?;
            let er = p.comms.get(&a[0]).is_some_and(|h| h.errors_return);
            let color = (a[1] >= 0).then_some(a[1] as u32);
            let s = c.split(color, a[2]).await?;
            Ok(Answer::v(&p.add_comm(s, er)))
        }
        Op::CommCreateGroup | Op::CommInter => crate::comms::make(p, op, call, a, payload),
        Op::CommFree => {
            let mut h = p
                .comms
                .remove(&a[0])
                .ok_or_else(|| bad(call, "unknown communicator"))?;
            h.comm.free()?;
            Ok(Answer::default())
        }
        Op::CommMembers => {
            let c = p.comm(a[0], call)?;
            let list: Vec<u8> = (0..c.size())
                .flat_map(|r| c.world_rank_of(r).to_ne_bytes())
                .collect();
            Ok(Answer::data(list))
        }
        Op::SetErrhandler => {
            let h = p
                .comms
                .get_mut(&a[0])
                .ok_or_else(|| bad(call, "unknown communicator"))?;
            h.errors_return = a[1] != 0;
            Ok(Answer::default())
        }
        Op::Barrier
        | Op::Bcast
        | Op::Reduce
        | Op::Allreduce
        | Op::Gather
        | Op::Gatherv
        | Op::Scatter
        | Op::Scatterv
        | Op::Allgather
        | Op::Allgatherv
        | Op::Alltoall
        | Op::Alltoallv
        | Op::ReduceScatter
        | Op::ReduceScatterBlock
        | Op::Scan
        | Op::Exscan => {
            let c = p.comm(a[0], call)?;
            p.record_collective(&c, record);
            crate::coll::blocking(&c, op, a, std::mem::take(payload))
                .await
                .map(Answer::data)
        }
        Op::Ibarrier
        | Op::Ibcast
        | Op::Ireduce
        | Op::Iallreduce
        | Op::Igather
        | Op::Igatherv
        | Op::Iscatter
        | Op::Iscatterv
        | Op::Iallgather
        | Op::Iallgatherv
        | Op::Ialltoall
        | Op::Ialltoallv
        | Op::IreduceScatter
        | Op::IreduceScatterBlock
        | Op::Iscan
        | Op::Iexscan => {
            // A nonblocking collective: started, held like a receive, completed by a wait.
            let c = p.comm(a[0], call)?;
            p.record_collective(&c, record);
            let held = crate::coll::start(&c, op, a, std::mem::take(payload))?;
            Ok(Answer::v(&[p.hold(held)]))
        }
    }
}
