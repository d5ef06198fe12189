//! A C rank's collectives, blocking and nonblocking (`MPI_Ibarrier` ... `MPI_Iexscan`).
//!
//! Both forms read the same arguments ([`Plan`]) and run the same `Comm` collective: the
//! blocking form awaits it; the nonblocking form starts it (`Comm::iallreduce`, ...) into a
//! buffer the proxy owns, held with its request like a receive's ([`Held`]) until the rank's
//! wait or test completes it and sends the result back (MPI's rule: a nonblocking collective
//! completes through the ordinary wait and test calls).

use mpsim::{Comm, Result};
use mpsim_door::wire::Op;

use crate::exec::u64s;
use crate::proxy::{Buf, Held};
use crate::reduce;

/// What a collective other than a reduction needs: its input and the bytes of its result
/// on this rank.
enum Plan {
    Barrier,
    Bcast {
        root: u32,
        buf: Vec<u8>,
    },
    Gather {
        root: u32,
        send: Vec<u8>,
        out: usize,
    },
    Gatherv {
        root: u32,
        send: Vec<u8>,
        counts: Vec<usize>,
        out: usize,
    },
    Scatter {
        root: u32,
        send: Vec<u8>,
        out: usize,
    },
    Scatterv {
        root: u32,
        send: Vec<u8>,
        counts: Vec<usize>,
        out: usize,
    },
    Allgather {
        send: Vec<u8>,
        out: usize,
    },
    Allgatherv {
        send: Vec<u8>,
        counts: Vec<usize>,
        out: usize,
    },
    Alltoall {
        send: Vec<u8>,
    },
    Alltoallv {
        send: Vec<u8>,
        sc: Vec<usize>,
        rc: Vec<usize>,
        out: usize,
    },
    /// A reduction: `reduce` runs it.
    Reduction,
}

/// Reads the arguments of `op` (blocking form; `wire::Op`'s docs).
fn plan(c: &Comm, op: Op, a: &[i64], mut payload: Vec<u8>) -> (Plan, Vec<u8>) {
    let me = c.rank();
    let n = c.size() as usize;
    let plan = match op {
        Op::Barrier => Plan::Barrier,
        Op::Bcast => {
            let root = a[1] as u32;
            let buf = if me == root {
                std::mem::take(&mut payload)
            } else {
                vec![0u8; a[2] as usize]
            };
            Plan::Bcast { root, buf }
        }
        Op::Gather => {
            let root = a[1] as u32;
            let out = if me == root { payload.len() * n } else { 0 };
            Plan::Gather {
                root,
                send: std::mem::take(&mut payload),
                out,
            }
        }
        Op::Gatherv => {
            let root = a[1] as u32;
            let mine = (a[2] as usize).min(payload.len());
            let counts = u64s(&payload[mine..]);
            let out = if me == root { counts.iter().sum() } else { 0 };
            payload.truncate(mine);
            Plan::Gatherv {
                root,
                send: std::mem::take(&mut payload),
                counts,
                out,
            }
        }
        Op::Scatter => Plan::Scatter {
            root: a[1] as u32,
            send: std::mem::take(&mut payload),
            out: a[2] as usize,
        },
        Op::Scatterv => {
            let root = a[1] as u32;
            let (counts, send) = if me == root {
                let k = (n * 8).min(payload.len());
                (u64s(&payload[..k]), payload[k..].to_vec())
            } else {
                (vec![0; n], Vec::new())
            };
            Plan::Scatterv {
                root,
                send,
                counts,
                out: a[2] as usize,
            }
        }
        Op::Allgather => Plan::Allgather {
            out: payload.len() * n,
            send: std::mem::take(&mut payload),
        },
        Op::Allgatherv => {
            let mine = (a[1] as usize).min(payload.len());
            let counts = u64s(&payload[mine..]);
            payload.truncate(mine);
            Plan::Allgatherv {
                out: counts.iter().sum(),
                send: std::mem::take(&mut payload),
                counts,
            }
        }
        Op::Alltoall => Plan::Alltoall {
            send: std::mem::take(&mut payload),
        },
        Op::Alltoallv => {
            let k = (n * 16).min(payload.len());
            let counts = u64s(&payload[..k]);
            let (sc, rc) = counts.split_at(counts.len().min(n));
            Plan::Alltoallv {
                out: rc.iter().sum(),
                sc: sc.to_vec(),
                rc: rc.to_vec(),
                send: payload[k..].to_vec(),
            }
        }
        _ => Plan::Reduction,
    };
    (plan, payload)
}

/// Runs the blocking collective `op`: the reply's payload.
pub(crate) async fn blocking(c: &Comm, op: Op, a: &[i64], payload: Vec<u8>) -> Result<Vec<u8>> {
    let (plan, payload) = plan(c, op, a, payload);
    Ok(match plan {
        Plan::Barrier => {
            c.barrier().await?;
            Vec::new()
        }
        Plan::Bcast { root, mut buf } => {
            c.bcast(&mut buf, root).await?;
            buf
        }
        Plan::Gather { root, send, out } => {
            let mut recv = vec![0u8; out];
            c.gather(&send, &mut recv, root).await?;
            recv
        }
        Plan::Gatherv {
            root,
            send,
            counts,
            out,
        } => {
            let mut recv = vec![0u8; out];
            c.gatherv(&send, &mut recv, &counts, root).await?;
            recv
        }
        Plan::Scatter { root, send, out } => {
            let mut recv = vec![0u8; out];
            c.scatter(&send, &mut recv, root).await?;
            recv
        }
        Plan::Scatterv {
            root,
            send,
            counts,
            out,
        } => {
            let mut recv = vec![0u8; out];
            c.scatterv(&send, &counts, &mut recv, root).await?;
            recv
        }
        Plan::Allgather { send, out } => {
            let mut recv = vec![0u8; out];
            c.allgather(&send, &mut recv).await?;
            recv
        }
        Plan::Allgatherv { send, counts, out } => {
            let mut recv = vec![0u8; out];
            c.allgatherv(&send, &mut recv, &counts).await?;
            recv
        }
        Plan::Alltoall { send } => {
            let mut recv = vec![0u8; send.len()];
            c.alltoall(&send, &mut recv).await?;
            recv
        }
        Plan::Alltoallv { send, sc, rc, out } => {
            let mut recv = vec![0u8; out];
            c.alltoallv(&send, &sc, &mut recv, &rc).await?;
            recv
        }
        Plan::Reduction => reduce::run(c, op, a, payload).await?,
    })
}

/// Starts the nonblocking collective `op` (`Op::Ibarrier` ...): its request and the buffer
/// that gets its result.
pub(crate) fn start(c: &Comm, op: Op, a: &[i64], payload: Vec<u8>) -> Result<Held> {
    let blocking = op.blocking().unwrap_or(op);
    let (plan, payload) = plan(c, blocking, a, payload);
    if let Plan::Reduction = plan {
        return reduce::start(c, blocking, a, payload);
    }
    let mut buf = match &plan {
        Plan::Barrier | Plan::Reduction => Buf::zeroed(0),
        Plan::Bcast { buf, .. } => Buf::of(buf),
        Plan::Alltoall { send } => Buf::zeroed(send.len()),
        Plan::Gather { out, .. }
        | Plan::Gatherv { out, .. }
        | Plan::Scatter { out, .. }
        | Plan::Scatterv { out, .. }
        | Plan::Allgather { out, .. }
        | Plan::Allgatherv { out, .. }
        | Plan::Alltoallv { out, .. } => Buf::zeroed(*out),
    };
    // SAFETY: the request is held beside the buffer it borrows and dropped first (`Held`).
    let recv: &'static mut [u8] = unsafe { buf.view() };
    let req = match plan {
        Plan::Barrier | Plan::Reduction => c.ibarrier()?,
        Plan::Bcast { root, .. } => c.ibcast(recv, root)?,
        Plan::Gather { root, send, .. } => c.igather(&send, recv, root)?,
        Plan::Gatherv {
            root, send, counts, ..
        } => c.igatherv(&send, recv, &counts, root)?,
        Plan::Scatter { root, send, .. } => c.iscatter(&send, recv, root)?,
        Plan::Scatterv {
            root, send, counts, ..
        } => c.iscatterv(&send, &counts, recv, root)?,
        Plan::Allgather { send, .. } => c.iallgather(&send, recv)?,
        Plan::Allgatherv { send, counts, .. } => c.iallgatherv(&send, recv, &counts)?,
        Plan::Alltoall { send } => c.ialltoall(&send, recv)?,
        Plan::Alltoallv { send, sc, rc, .. } => c.ialltoallv(&send, &sc, recv, &rc)?,
    };
    Ok(Held {
        req: Some(req),
        buf: Some(buf),
        coll: true,
        check: None,
        pair: None,
    })
}
