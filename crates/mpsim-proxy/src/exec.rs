//! Executing one call of a C rank with `Comm` (the argument words are `wire::Op`'s docs).

use mpsim::{Comm, Error, Request, Result, wait_all, wait_any, wait_some};
use mpsim_door::wire::{Op, WireStatus};

use crate::proxy::{Answer, Held, HeldComm, Proxy, mode, source, tag, wire_status};
use crate::reduce;

fn u64s(bytes: &[u8]) -> Vec<usize> {
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

fn bad(call: &str, what: &str) -> Error {
    Error::program(format!("{call}: {what}"))
}

/// Starts a receive into a buffer of `cap` bytes that the request owns.
fn post_recv(comm: &Comm, cap: usize, src: i64, t: i64) -> Result<Held> {
    let mut buf = vec![0u8; cap].into_boxed_slice();
    // SAFETY: the request is stored beside the box it borrows and dropped before it
    // (`Held`'s field order); the box's heap memory never moves.
    let slice: &'static mut [u8] = unsafe { &mut *(buf.as_mut() as *mut [u8]) };
    let req = comm.irecv(slice, source(src), tag(t))?;
    Ok(Held {
        req: Some(req),
        buf: Some(buf),
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

impl Proxy<'_> {
    fn held(&mut self, id: i64, call: &str) -> Result<Held> {
        self.requests
            .remove(&id)
            .ok_or_else(|| bad(call, &format!("unknown request {id:#x}")))
    }

    fn hold(&mut self, h: Held) -> i64 {
        let id = self.id();
        self.requests.insert(id, h);
        id
    }

    fn add_comm(&mut self, comm: Option<Comm>, errors_return: bool) -> [i64; 4] {
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

/// A completed request's data (for a receive: its buffer up to the bytes received).
fn data_of(mut h: Held, bytes: usize) -> Vec<u8> {
    h.req = None;
    match h.buf.take() {
        None => Vec::new(),
        Some(b) => {
            let mut v = b.into_vec();
            v.truncate(bytes);
            v
        }
    }
}

/// Executes `op`.
pub(crate) async fn execute(
    p: &mut Proxy<'_>,
    op: Op,
    a: &[i64],
    payload: Vec<u8>,
) -> Result<Answer> {
    let call = crate::proxy::op_name(op);
    match op {
        Op::Init => Ok(Answer::v(&[p.world.rank() as i64, p.world.size() as i64])),
        Op::Finalize => Ok(Answer::default()),
        Op::Wtime => Ok(Answer::v(&[p.world.now_ns() as i64])),
        Op::Abort | Op::Fatal => unreachable!("handled by serve"),
        Op::Send => {
            let c = p.comm(a[0], call)?;
            let (dest, t) = (a[1] as u32, a[2] as i32);
            match mode(a[3]) {
                mpsim::SendMode::Standard => c.send(&payload, dest, t).await?,
                mpsim::SendMode::Synchronous => c.ssend(&payload, dest, t).await?,
                mpsim::SendMode::Buffered => c.bsend(&payload, dest, t).await?,
                mpsim::SendMode::Ready => c.rsend(&payload, dest, t).await?,
            }
            Ok(Answer::default())
        }
        Op::Isend => {
            let c = p.comm(a[0], call)?;
            let r = c.start_send(mode(a[3]), &payload, a[1] as u32, a[2] as i32)?;
            let id = p.hold(Held {
                req: Some(r),
                buf: None,
            });
            Ok(Answer::v(&[id]))
        }
        Op::Recv => {
            let c = p.comm(a[0], call)?;
            let mut buf = vec![0u8; a[3] as usize];
            let s = c.recv(&mut buf, source(a[1]), tag(a[2])).await?;
            buf.truncate(s.bytes);
            Ok(Answer {
                status: wire_status(&s),
                ..Answer::data(buf)
            })
        }
        Op::Irecv => {
            let c = p.comm(a[0], call)?;
            let r = post_recv(&c, a[3] as usize, a[1], a[2])?;
            let id = p.hold(r);
            Ok(Answer::v(&[id]))
        }
        Op::Wait | Op::Test => {
            let id = a[1];
            let mut h = p.held(id, call)?;
            let Some(mut r) = h.req.take() else {
                return Err(bad(call, "a request with nothing to wait for"));
            };
            let s = if op == Op::Wait {
                let s = r.wait().await?;
                return Ok(Answer {
                    status: wire_status(&s),
                    v: [1, 0, 0, 0],
                    payload: data_of(h, s.bytes),
                });
            } else {
                r.test().await?
            };
            match s {
                Some(s) => Ok(Answer {
                    status: wire_status(&s),
                    v: [1, 0, 0, 0],
                    payload: data_of(h, s.bytes),
                }),
                None => {
                    h.req = Some(r);
                    p.requests.insert(id, h);
                    Ok(Answer::v(&[0]))
                }
            }
        }
        Op::Waitall | Op::Testall => {
            let list = ids(&payload);
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
            let done = taken.settle(p, &all);
            let mut per = vec![WireStatus::default(); list.len()];
            let mut datas = Vec::new();
            for ((i, h), s) in done.into_iter().zip(&statuses) {
                per[i] = wire_status(s);
                datas.push(data_of(h, s.bytes));
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
            let list = ids(&payload);
            let mut taken = Taken::new(p, &list, call)?;
            let got = if op == Op::Waitany {
                wait_any(&mut taken.reqs).await?
            } else {
                mpsim::test_any(&mut taken.reqs).await?.completed()
            };
            match got {
                None => {
                    taken.settle(p, &[]);
                    Ok(Answer::v(&[0, -1]))
                }
                Some((k, s)) => {
                    let mut done = taken.settle(p, &[k]);
                    let (i, h) = done.pop().expect("the completed request");
                    Ok(Answer {
                        status: wire_status(&s),
                        v: [1, i as i64, 0, 0],
                        payload: data_of(h, s.bytes),
                    })
                }
            }
        }
        Op::Waitsome | Op::Testsome => {
            let list = ids(&payload);
            let mut taken = Taken::new(p, &list, call)?;
            let got = if op == Op::Waitsome {
                wait_some(&mut taken.reqs).await?
            } else {
                mpsim::test_some(&mut taken.reqs).await?.unwrap_or_default()
            };
            let ks: Vec<usize> = got.iter().map(|g| g.0).collect();
            let done = taken.settle(p, &ks);
            let mut entries = Vec::new();
            let mut datas = Vec::new();
            for ((i, h), (_, s)) in done.into_iter().zip(&got) {
                entries.extend_from_slice(&(i as i64).to_ne_bytes());
                entries.extend_from_slice(bytemuck::bytes_of(&wire_status(s)));
                datas.push(data_of(h, s.bytes));
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
            if h.buf.is_some() {
                // A receive's buffer must live until it completes: keep it, finished or not.
                let id = p.id();
                p.requests.insert(id, h);
            }
            Ok(Answer::default())
        }
        Op::Cancel => {
            if let Some(h) = p.requests.get_mut(&a[1])
                && let Some(r) = h.req.as_mut()
            {
                r.cancel()?;
            }
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
            let mut buf = vec![0u8; a[1] as usize];
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
            let mut buf = vec![0u8; a[1] as usize].into_boxed_slice();
            // SAFETY: as in `post_recv`.
            let slice: &'static mut [u8] = unsafe { &mut *(buf.as_mut() as *mut [u8]) };
            let req = m.imrecv(slice)?;
            // `imrecv` borrows the message's lifetime only through the buffer.
            let req: Request<'static> = unsafe { std::mem::transmute(req) };
            let id = p.hold(Held {
                req: Some(req),
                buf: Some(buf),
            });
            Ok(Answer::v(&[id]))
        }
        Op::Sendrecv => {
            let c = p.comm(a[0], call)?;
            let (dest, stag, src, rtag, cap) = (a[1], a[2], a[3], a[4], a[5] as usize);
            let null = mpsim_door::wire::PROC_NULL as i64;
            let mut buf = vec![0u8; cap];
            let s = match (dest == null, src == null) {
                (true, true) => None,
                (false, true) => {
                    c.send(&payload, dest as u32, stag as i32).await?;
                    None
                }
                (true, false) => Some(c.recv(&mut buf, source(src), tag(rtag)).await?),
                (false, false) => Some(
                    c.sendrecv(
                        &payload,
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
        Op::CommCreate => Err(bad(call, "made by a split on the C side")),
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
        Op::Barrier => {
            p.comm(a[0], call)?.barrier().await?;
            Ok(Answer::default())
        }
        Op::Bcast => {
            let c = p.comm(a[0], call)?;
            let mut buf = if c.rank() == a[1] as u32 {
                payload
            } else {
                vec![0u8; a[2] as usize]
            };
            c.bcast(&mut buf, a[1] as u32).await?;
            Ok(Answer::data(buf))
        }
        Op::Gather => {
            let c = p.comm(a[0], call)?;
            let root = a[1] as u32;
            let mut out = if c.rank() == root {
                vec![0u8; payload.len() * c.size() as usize]
            } else {
                Vec::new()
            };
            c.gather(&payload, &mut out, root).await?;
            Ok(Answer::data(out))
        }
        Op::Gatherv => {
            let c = p.comm(a[0], call)?;
            let root = a[1] as u32;
            let mine = (a[2] as usize).min(payload.len());
            let counts = u64s(&payload[mine..]);
            let total: usize = counts.iter().sum();
            let mut out = vec![0u8; if c.rank() == root { total } else { 0 }];
            c.gatherv(&payload[..mine], &mut out, &counts, root).await?;
            Ok(Answer::data(out))
        }
        Op::Scatter => {
            let c = p.comm(a[0], call)?;
            let mut out = vec![0u8; a[2] as usize];
            c.scatter(&payload, &mut out, a[1] as u32).await?;
            Ok(Answer::data(out))
        }
        Op::Scatterv => {
            let c = p.comm(a[0], call)?;
            let root = a[1] as u32;
            let n = c.size() as usize;
            let (counts, data) = if c.rank() == root {
                let k = (n * 8).min(payload.len());
                (u64s(&payload[..k]), &payload[k..])
            } else {
                (vec![0; n], &payload[..0])
            };
            let mut out = vec![0u8; a[2] as usize];
            c.scatterv(data, &counts, &mut out, root).await?;
            Ok(Answer::data(out))
        }
        Op::Allgather => {
            let c = p.comm(a[0], call)?;
            let mut out = vec![0u8; payload.len() * c.size() as usize];
            c.allgather(&payload, &mut out).await?;
            Ok(Answer::data(out))
        }
        Op::Allgatherv => {
            let c = p.comm(a[0], call)?;
            let mine = (a[1] as usize).min(payload.len());
            let counts = u64s(&payload[mine..]);
            let mut out = vec![0u8; counts.iter().sum()];
            c.allgatherv(&payload[..mine], &mut out, &counts).await?;
            Ok(Answer::data(out))
        }
        Op::Alltoall => {
            let c = p.comm(a[0], call)?;
            let mut out = vec![0u8; payload.len()];
            c.alltoall(&payload, &mut out).await?;
            Ok(Answer::data(out))
        }
        Op::Alltoallv => {
            let c = p.comm(a[0], call)?;
            let n = c.size() as usize;
            let k = (n * 16).min(payload.len());
            let counts = u64s(&payload[..k]);
            let (sc, rc) = counts.split_at(counts.len().min(n));
            let mut out = vec![0u8; rc.iter().sum()];
            c.alltoallv(&payload[k..], sc, &mut out, rc).await?;
            Ok(Answer::data(out))
        }
        Op::Reduce
        | Op::Allreduce
        | Op::Scan
        | Op::Exscan
        | Op::ReduceScatter
        | Op::ReduceScatterBlock => {
            let c = p.comm(a[0], call)?;
            reduce::run(&c, op, a, payload).await.map(Answer::data)
        }
    }
}
