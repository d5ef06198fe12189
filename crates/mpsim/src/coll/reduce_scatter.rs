//! `reduce_scatter` and `reduce_scatter_block` (and their nonblocking forms): recursive halving (commutative operations; a
//! size that is not a power of two folded first, as in `reduce.rs`), pairwise (commutative:
//! in step `k` rank `r` sends its part of block `r + k` to rank `r + k` and adds in the part
//! of its own block from `r - k`), and, for operations that are not commutative, a binomial
//! reduce at rank 0 in rank order followed by a linear scatterv: the table's fallback, since
//! both others combine out of rank order.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::gather::linear_scatter;
use super::native::{self, native_blocking, native_nonblocking};
use super::ops::Op;
use super::reduce::binomial_reduce;
use super::{Ctx, Layout, pof2_below, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

impl Comm {
    /// Combines every rank's `send` element by element with `op`, as [`Comm::allreduce`]
    /// does, and leaves rank `i` the `counts[i]` elements of block `i` (the blocks one after
    /// another in rank order) in its `recv` (MPI's `MPI_Reduce_scatter`): every rank passes the
    /// same `counts`, `send.len()` is their sum and `recv.len()` its own count.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut mine = vec![0u32; world.rank() as usize];
    ///         world.reduce_scatter(&[1, 2, 3], &mut mine, &[0, 1, 2], &Op::sum()).await?;
    ///         assert_eq!(mine, [&[][..], &[3], &[6, 9]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("reduce_scatter");
    /// ```
    pub async fn reduce_scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: &Op<T>,
    ) -> Result<()> {
        const CALL: &str = "reduce_scatter";
        let (chosen, layout) = self.reduce_scatter_plan(CALL, send, recv.len(), counts, op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::ReduceScatter, chosen),
                NativeCall::ReduceScatter {
                    send: bytemuck::cast_slice(send),
                    counts,
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        let cx = Ctx::new(self, CALL, Collective::ReduceScatter, chosen, 0);
        run(&cx, chosen.algo, send, recv, &layout, op).await
    }

    /// Starts a [`Comm::reduce_scatter`] (MPI's `MPI_Ireduce_scatter`): `send` and `counts`
    /// are read now; `recv` gets this rank's block when the request completes.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let mut mine = vec![0u32; world.rank() as usize + 1];
    ///         world.ireduce_scatter(&[1, 2, 3], &mut mine, &[1, 2], &Op::sum())?.wait().await?;
    ///         assert_eq!(mine, [&[2][..], &[4, 6]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("ireduce_scatter");
    /// ```
    pub fn ireduce_scatter<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        counts: &[usize],
        op: &Op<T>,
    ) -> Result<Request<'b>> {
        const CALL: &str = "ireduce_scatter";
        let (chosen, layout) = self.reduce_scatter_plan(CALL, send, recv.len(), counts, op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::ReduceScatter, chosen),
                NativeCall::ReduceScatter {
                    send: bytemuck::cast_slice(send),
                    counts,
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        Ok(self.start_reduce_scatter(CALL, chosen, send, recv, layout, op))
    }

    /// The checks of a reduce_scatter named `call`, its algorithm and its blocks' layout.
    fn reduce_scatter_plan<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        counts: &[usize],
        op: &Op<T>,
    ) -> Result<(Chosen, Layout)> {
        self.check_live(call)?;
        let total = self.check_counts(call, "counts", counts)?;
        self.check_len(call, "send buffer", send.len(), Some(total))?;
        self.check_len(
            call,
            "receive buffer",
            recv,
            Some(counts[self.rank() as usize]),
        )?;
        let chosen = self.reduce_scatter_algorithm(call, send, op)?;
        Ok((chosen, Layout::of_counts(counts)))
    }

    /// [`Comm::reduce_scatter`] with blocks of `recv.len()` elements each (MPI's
    /// `MPI_Reduce_scatter_block`): `send` is `size` times as long as `recv`.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let mut mine = [0i64; 2];
    ///         world.reduce_scatter_block(&[1, 2, 3, 4], &mut mine, &Op::prod()).await?;
    ///         assert_eq!(mine, [[1, 4], [9, 16]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("reduce_scatter_block");
    /// ```
    pub async fn reduce_scatter_block<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
    ) -> Result<()> {
        const CALL: &str = "reduce_scatter_block";
        let (chosen, layout) = self.reduce_scatter_block_plan(CALL, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::ReduceScatter, chosen),
                NativeCall::ReduceScatterBlock {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        let cx = Ctx::new(self, CALL, Collective::ReduceScatter, chosen, 0);
        run(&cx, chosen.algo, send, recv, &layout, op).await
    }

    /// Starts a [`Comm::reduce_scatter_block`] (MPI's `MPI_Ireduce_scatter_block`): `send` is
    /// read now; `recv` gets this rank's block when the request completes.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let mut mine = [0i64];
    ///         world.ireduce_scatter_block(&[1, 2], &mut mine, &Op::sum())?.wait().await?;
    ///         assert_eq!(mine, [[2], [4]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("ireduce_scatter_block");
    /// ```
    pub fn ireduce_scatter_block<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<Request<'b>> {
        const CALL: &str = "ireduce_scatter_block";
        let (chosen, layout) = self.reduce_scatter_block_plan(CALL, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::ReduceScatter, chosen),
                NativeCall::ReduceScatterBlock {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        Ok(self.start_reduce_scatter(CALL, chosen, send, recv, layout, op))
    }

    /// The checks of a reduce_scatter_block named `call`, its algorithm and its blocks'
    /// layout.
    fn reduce_scatter_block_plan<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        op: &Op<T>,
    ) -> Result<(Chosen, Layout)> {
        self.check_live(call)?;
        let n = self.size() as usize;
        self.check_len(call, "send buffer", send.len(), recv.checked_mul(n))?;
        let chosen = self.reduce_scatter_algorithm(call, send, op)?;
        let layout = Layout::Equal {
            count: send.len(),
            parts: n,
        };
        Ok((chosen, layout))
    }

    /// The algorithm of a reduce-scatter of `send` by `op`.
    fn reduce_scatter_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        op: &Op<T>,
    ) -> Result<Chosen> {
        let shape = self.shape::<T>(send.len(), op.is_commutative());
        self.algorithm(Collective::ReduceScatter, call, shape)
    }

    /// Starts a nonblocking reduce-scatter named `call`.
    fn start_reduce_scatter<'b, T: Pod>(
        &self,
        call: &'static str,
        chosen: Chosen,
        send: &[T],
        recv: &'b mut [T],
        layout: Layout,
        op: &Op<T>,
    ) -> Request<'b> {
        let (send, op) = (send.to_vec(), op.clone());
        let mut out = zeroed(recv.len());
        let what = (Collective::ReduceScatter, chosen, 0);
        self.start_coll(call, what, Some(recv), move |cx| async move {
            run(&cx, chosen.algo, &send, &mut out, &layout, &op).await?;
            Ok(out)
        })
    }
}

/// Reduce-scatter by `algo`, the blocks laid out by `layout`.
async fn run<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
    op: &Op<T>,
) -> Result<()> {
    match algo {
        Algorithm::Pairwise => pairwise(cx, send, recv, layout, op).await,
        Algorithm::RecursiveHalving => recursive_halving(cx, send, recv, layout, op).await,
        _ => {
            let mut all = if cx.rank == 0 {
                send.to_vec()
            } else {
                Vec::new()
            };
            binomial_reduce(cx, send, &mut all, op, 0, true).await?;
            linear_scatter(cx, &all, recv, layout, 0).await
        }
    }
}

/// Pairwise reduce-scatter (module docs).
async fn pairwise<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
    op: &Op<T>,
) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    recv.copy_from_slice(&send[layout.block(r)]);
    let mut tmp = zeroed::<T>(recv.len());
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        cx.sendrecv(&send[layout.block(to)], to as u32, &mut tmp, from as u32)
            .await?;
        op.reduce_left(recv, &tmp);
    }
    Ok(())
}

/// Recursive-halving reduce-scatter: after the fold, newrank `i` stands for the ranks
/// `first(i)..first(i + 1)` and their blocks; at distances `pof2/2, ..., 1` it keeps the half
/// of its window of newranks that holds its own and sends the other half to `i ^ mask`; it
/// ends with its ranks' blocks reduced, and hands an even rank that sat out its block.
async fn recursive_halving<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
    op: &Op<T>,
) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    let pof2 = pof2_below(cx.size) as usize;
    let rem = n - pof2;
    let first = |i: usize| if i < rem { 2 * i } else { i + rem };
    let member = |i: usize| (if i < rem { 2 * i + 1 } else { i + rem }) as u32;
    let mut acc = send.to_vec();
    let mut tmp = zeroed::<T>(send.len());
    if r < 2 * rem && r.is_multiple_of(2) {
        cx.send(&acc, cx.rank + 1).await?;
        return cx.recv(recv, cx.rank + 1).await;
    }
    if r < 2 * rem {
        cx.recv(&mut tmp, cx.rank - 1).await?;
        op.reduce_right(&tmp, &mut acc);
    }
    let i = if r < 2 * rem { r / 2 } else { r - rem };
    let (mut lo, mut hi) = (0, pof2);
    let mut mask = pof2 >> 1;
    while mask > 0 {
        let mid = lo + mask;
        let p = i ^ mask;
        let (keep, give) = if i & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let keep_span = layout.span(first(keep.0), first(keep.1));
        let give_span = layout.span(first(give.0), first(give.1));
        let got = &mut tmp[..keep_span.len()];
        cx.sendrecv(&acc[give_span], member(p), got, member(p))
            .await?;
        if i < p {
            op.reduce_left(&mut acc[keep_span], got);
        } else {
            op.reduce_right(got, &mut acc[keep_span]);
        }
        (lo, hi) = keep;
        mask >>= 1;
    }
    if r < 2 * rem {
        cx.send(&acc[layout.block(r - 1)], cx.rank - 1).await?;
    }
    recv.copy_from_slice(&acc[layout.block(r)]);
    Ok(())
}
