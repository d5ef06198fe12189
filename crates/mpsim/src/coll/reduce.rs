//! `reduce` and `allreduce` (and `ireduce`, `iallreduce`): a binomial tree; recursive doubling; Rabenseifner's
//! reduce-scatter by recursive vector halving followed by a gather (reduce) or an allgather
//! (allreduce) by recursive doubling (Thakur, Rabenseifner and Gropp 2005); and a ring
//! (reduce-scatter then allgather, each `size - 1` steps).
//!
//! # The same bits on every rank, and rank order
//!
//! Every combination puts the lower ranks' part on the left (`Op::reduce_left`,
//! `Op::reduce_right`), and every algorithm here but the ring combines contiguous runs of ranks,
//! so the result is `x0 ⊕ x1 ⊕ ... ⊕ x(n-1)` bracketed in a fixed way: right for
//! non-commutative operations. Recursive doubling: after the step at distance `k` every rank of
//! an aligned group of `2k` holds the same bits, since both partners computed `lower ⊕ upper`
//! from the same two values. Rabenseifner's and the ring: each block is reduced by one rank
//! and then copied. The ring's chains wrap around, so it needs a commutative operation.
//!
//! Sizes that are not a power of two are folded first (MPICH's way): of the first
//! `2 * rem` ranks (`rem = size - pof2`) each even one sends its vector to the odd one after
//! it, which combines `even ⊕ odd` and takes part as `newrank = r / 2`; rank `r >= 2 * rem`
//! is `newrank = r - rem`. Newranks keep rank order, so order-preserving steps stay so.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::bcast::{self, real};
use super::native::{self, native_blocking, native_nonblocking};
use super::ops::Op;
use super::{Ctx, Layout, disjoint, pof2_below, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

impl Comm {
    /// Combines every rank's `send` element by element with `op`, in rank order, into the
    /// root's `recv` (MPI's `MPI_Reduce`): every rank's `send` has the same length, the root's
    /// `recv` too (other ranks' `recv` is not used and may be empty).
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let mut max = [0i32];
    ///         world.reduce(&[world.rank() as i32 * 3], &mut max, &Op::max(), 0).await?;
    ///         if world.rank() == 0 {
    ///             assert_eq!(max, [9]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("reduce");
    /// ```
    pub async fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: u32,
    ) -> Result<()> {
        const CALL: &str = "reduce";
        let chosen = self.reduce_algorithm(CALL, send, recv.len(), op, root)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::Reduce, chosen),
                NativeCall::Reduce {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                    root,
                },
                (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
            );
        }
        let cx = Ctx::new(self, CALL, Collective::Reduce, chosen, root);
        run_reduce(&cx, chosen.algo, send, recv, op, root).await
    }

    /// Starts a [`Comm::reduce`] (MPI's `MPI_Ireduce`): `send` is read now; the root's `recv`
    /// gets the result when the request completes (other ranks' `recv` is not touched).
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let mut sum = [0u32];
    ///         world.ireduce(&[world.rank()], &mut sum, &Op::sum(), 3)?.wait().await?;
    ///         if world.rank() == 3 {
    ///             assert_eq!(sum, [6]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("ireduce");
    /// ```
    pub fn ireduce<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        op: &Op<T>,
        root: u32,
    ) -> Result<Request<'b>> {
        const CALL: &str = "ireduce";
        let chosen = self.reduce_algorithm(CALL, send, recv.len(), op, root)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::Reduce, chosen),
                NativeCall::Reduce {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                    root,
                },
                (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
            );
        }
        let (send, op) = (send.to_vec(), op.clone());
        let is_root = self.rank() == root;
        let mut out = if is_root {
            zeroed(send.len())
        } else {
            Vec::new()
        };
        let what = (Collective::Reduce, chosen, root);
        let recv = is_root.then_some(recv);
        Ok(self.start_coll(CALL, what, recv, move |cx| async move {
            run_reduce(&cx, chosen.algo, &send, &mut out, &op, root).await?;
            Ok(out)
        }))
    }

    /// The checks of a reduce named `call`, and its algorithm.
    fn reduce_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        op: &Op<T>,
        root: u32,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        if self.rank() == root {
            self.check_len(call, "receive buffer", recv, Some(send.len()))?;
        }
        let shape = self.shape::<T>(send.len(), op.is_commutative());
        self.algorithm(Collective::Reduce, call, shape)
    }

    /// Combines every rank's `send` element by element with `op`, in rank order, into every
    /// rank's `recv`, the same bits on every rank (MPI's `MPI_Allreduce`): `send` and `recv`
    /// have the same length on every rank.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(5)
    ///     .run(|world| async move {
    ///         let x = 0.1 * f64::from(world.rank());
    ///         let mut sum = [0.0f64];
    ///         world.allreduce(&[x], &mut sum, &Op::sum()).await?;
    ///         assert!((sum[0] - 1.0).abs() < 1e-12);
    ///         Ok(())
    ///     })
    ///     .expect("allreduce");
    /// ```
    pub async fn allreduce<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
        const CALL: &str = "allreduce";
        let chosen = self.allreduce_algorithm(CALL, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::Allreduce, chosen),
                NativeCall::Allreduce {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        let cx = Ctx::new(self, CALL, Collective::Allreduce, chosen, 0);
        run_allreduce(&cx, chosen.algo, send, recv, op).await
    }

    /// Starts a [`Comm::allreduce`] (MPI's `MPI_Iallreduce`): `send` is read now; `recv` gets
    /// the result, the same bits on every rank, when the request completes.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut max = [0i64];
    ///         let request = world.iallreduce(&[i64::from(world.rank())], &mut max, &Op::max())?;
    ///         request.wait().await?;
    ///         assert_eq!(max, [2]);
    ///         Ok(())
    ///     })
    ///     .expect("iallreduce");
    /// ```
    pub fn iallreduce<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<Request<'b>> {
        const CALL: &str = "iallreduce";
        let chosen = self.allreduce_algorithm(CALL, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::Allreduce, chosen),
                NativeCall::Allreduce {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        let (send, op) = (send.to_vec(), op.clone());
        let mut out = zeroed(send.len());
        let what = (Collective::Allreduce, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_allreduce(&cx, chosen.algo, &send, &mut out, &op).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of an allreduce named `call`, and its algorithm.
    fn allreduce_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        op: &Op<T>,
    ) -> Result<Chosen> {
        self.same_length_reduction(call, Collective::Allreduce, send, recv, op)
    }
}

/// Reduce by `algo`.
async fn run_reduce<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
    root: u32,
) -> Result<()> {
    match algo {
        Algorithm::Rabenseifner => Box::pin(rabenseifner_reduce(cx, send, recv, op, root)).await,
        Algorithm::Reproducible => binomial_reduce(cx, send, recv, op, root, true).await,
        _ => binomial_reduce(cx, send, recv, op, root, false).await,
    }
}

/// Allreduce by `algo`. The algorithms for long vectors are boxed: a rank's future is as large
/// as the largest state it may hold, and those states would more than double it for every
/// rank of a million-rank run of short allreduces (recursive doubling), where one allocation
/// per call of a long one costs nothing beside moving its data.
async fn run_allreduce<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
) -> Result<()> {
    match algo {
        Algorithm::Ring => Box::pin(ring_allreduce(cx, send, recv, op)).await,
        Algorithm::Rabenseifner => Box::pin(rabenseifner_allreduce(cx, send, recv, op)).await,
        Algorithm::Reproducible => {
            Box::pin(async {
                // The fixed tree at rank 0, then a bcast by the algorithm a bcast of the vector
                // would run (recorded as this allreduce's time).
                binomial_reduce(cx, send, recv, op, 0, true).await?;
                let shape = cx.comm.shape::<T>(send.len(), true);
                let bcast = cx.comm.algorithm(Collective::Bcast, cx.call, shape)?.algo;
                let phase = cx.phase(Collective::Bcast, bcast, 0);
                bcast::run(&phase, recv, 0, bcast).await
            })
            .await
        }
        _ => recursive_doubling(cx, send, recv, op).await,
    }
}

/// Binomial reduce. A commutative operation is reduced on ranks relative to the root; one
/// that is not, or any in `rank_order` (the reproducible algorithm), on ranks as they are
/// (subtrees are then runs of ranks in order, bracketed by rank numbers alone) at rank 0,
/// which sends the result to the root.
pub(super) async fn binomial_reduce<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
    root: u32,
    rank_order: bool,
) -> Result<()> {
    let n = u64::from(cx.size);
    let top = if op.is_commutative() && !rank_order {
        root
    } else {
        0
    };
    let v = (u64::from(cx.rank) + n - u64::from(top)) % n;
    let mut acc = send.to_vec();
    let mut tmp = zeroed::<T>(send.len());
    let mut mask = 1u64;
    while mask < n {
        if v & mask == 0 {
            if v | mask < n {
                cx.recv(&mut tmp, real(v | mask, top, cx.size)).await?;
                op.reduce_left(&mut acc, &tmp);
            }
        } else {
            cx.send(&acc, real(v & !mask, top, cx.size)).await?;
            break;
        }
        mask <<= 1;
    }
    to_root(cx, &acc, recv, top, root).await
}

/// The end of a reduce whose result `acc` is at rank `top`: it goes to the root's `recv`.
async fn to_root<T: Pod>(cx: &Ctx, acc: &[T], recv: &mut [T], top: u32, root: u32) -> Result<()> {
    if cx.rank == top && top == root {
        recv.copy_from_slice(acc);
    } else if cx.rank == top {
        cx.send(acc, root).await?;
    } else if cx.rank == root {
        cx.recv(recv, top).await?;
    }
    Ok(())
}

/// The power-of-two part of `n` ranks after the fold (module docs).
struct Fold {
    pof2: usize,
    rem: usize,
}

impl Fold {
    fn of(n: u32) -> Fold {
        let pof2 = pof2_below(n) as usize;
        Fold {
            pof2,
            rem: n as usize - pof2,
        }
    }

    /// The newrank of rank `r`, `None` for an even rank that sits out.
    fn newrank(&self, r: usize) -> Option<usize> {
        if r < 2 * self.rem {
            (r % 2 == 1).then_some(r / 2)
        } else {
            Some(r - self.rem)
        }
    }

    /// The rank taking part as newrank `i`.
    fn rank(&self, i: usize) -> u32 {
        (if i < self.rem {
            2 * i + 1
        } else {
            i + self.rem
        }) as u32
    }
}

/// A rank's vector after the fold (module docs): `acc` (combined `even ⊕ odd` on an odd rank
/// of the first `2 * rem`), a buffer `tmp` as long, and its newrank (`None`: an even one, which
/// sent its vector on and sits out).
struct Folded<T> {
    f: Fold,
    acc: Vec<T>,
    tmp: Vec<T>,
    newrank: Option<usize>,
}

/// The fold of `send`, the start of recursive doubling and of Rabenseifner's algorithm.
async fn fold_in<T: Pod>(cx: &Ctx, send: &[T], op: &Op<T>) -> Result<Folded<T>> {
    let f = Fold::of(cx.size);
    let (mut acc, mut tmp) = (send.to_vec(), zeroed::<T>(send.len()));
    let r = cx.rank as usize;
    let newrank = f.newrank(r);
    if r < 2 * f.rem {
        if newrank.is_none() {
            cx.send(&acc, cx.rank + 1).await?;
        } else {
            cx.recv(&mut tmp, cx.rank - 1).await?;
            op.reduce_right(&tmp, &mut acc);
        }
    }
    Ok(Folded {
        f,
        acc,
        tmp,
        newrank,
    })
}

/// Undoes the fold: each odd rank of the first `2 * rem` sends the result (`acc`) to the even
/// one before it, which receives it into `recv`; the others copy `acc` into `recv`.
async fn fold_out<T: Pod>(cx: &Ctx, f: &Fold, acc: &[T], recv: &mut [T]) -> Result<()> {
    let r = cx.rank as usize;
    if r < 2 * f.rem && r.is_multiple_of(2) {
        return cx.recv(recv, cx.rank + 1).await;
    }
    if r < 2 * f.rem {
        cx.send(acc, cx.rank - 1).await?;
    }
    recv.copy_from_slice(acc);
    Ok(())
}

/// Combines `mine` (this newrank `i`'s part) with `theirs` (newrank `p`'s) into `mine`, the
/// lower newrank's on the left.
fn combine<T: Pod>(op: &Op<T>, i: usize, p: usize, mine: &mut [T], theirs: &mut [T]) {
    if i < p {
        op.reduce_left(mine, theirs);
    } else {
        op.reduce_right(theirs, mine);
    }
}

/// Recursive-doubling allreduce: fold, exchange whole vectors at distances 1, 2, 4, ...,
/// unfold.
async fn recursive_doubling<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
) -> Result<()> {
    let Folded {
        f,
        mut acc,
        mut tmp,
        newrank,
    } = fold_in(cx, send, op).await?;
    if let Some(i) = newrank {
        let mut mask = 1;
        while mask < f.pof2 {
            let p = i ^ mask;
            let peer = f.rank(p);
            cx.sendrecv(&acc, peer, &mut tmp, peer).await?;
            combine(op, i, p, &mut acc, &mut tmp);
            mask <<= 1;
        }
    }
    fold_out(cx, &f, &acc, recv).await
}

/// Where Rabenseifner's reduce-scatter leaves a rank that takes part: its newrank, the layout
/// of the vector in `pof2` blocks, and its windows of blocks before each step (the last: the
/// block it ends with, reduced over every rank).
struct Halved {
    i: usize,
    layout: Layout,
    windows: Vec<(usize, usize)>,
}

/// The fold of `send` and the reduce-scatter by recursive vector halving among the newranks
/// (the start of both of Rabenseifner's algorithms): this rank's fold, and where the halving
/// left it (`None`: it sat out).
async fn halved<T: Pod>(cx: &Ctx, send: &[T], op: &Op<T>) -> Result<(Folded<T>, Option<Halved>)> {
    let mut folded = fold_in(cx, send, op).await?;
    let Some(i) = folded.newrank else {
        return Ok((folded, None));
    };
    let layout = Layout::Equal {
        count: send.len(),
        parts: folded.f.pof2,
    };
    let Folded { f, acc, tmp, .. } = &mut folded;
    let windows = halving(cx, f, i, &layout, acc, tmp, op).await?;
    Ok((folded, Some(Halved { i, layout, windows })))
}

/// Reduce-scatter by recursive vector halving among the newranks, at distances 1, 2, 4, ...:
/// newrank `i` keeps the half of its window of `layout`'s `pof2` blocks that bit `mask` of `i`
/// names and sends the other half to `i ^ mask`. Returns the windows before each step.
async fn halving<T: Pod>(
    cx: &Ctx,
    f: &Fold,
    i: usize,
    layout: &Layout,
    acc: &mut [T],
    tmp: &mut [T],
    op: &Op<T>,
) -> Result<Vec<(usize, usize)>> {
    let mut windows = vec![(0, f.pof2)];
    let mut mask = 1;
    while mask < f.pof2 {
        let (lo, hi) = *windows.last().expect("a window");
        let mid = (lo + hi) / 2;
        let p = i ^ mask;
        let (keep, give) = if i & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let keep_span = layout.span(keep.0, keep.1);
        let peer = f.rank(p);
        let got = &mut tmp[..keep_span.len()];
        cx.sendrecv(&acc[layout.span(give.0, give.1)], peer, got, peer)
            .await?;
        combine(op, i, p, &mut acc[keep_span], got);
        windows.push(keep);
        mask <<= 1;
    }
    Ok(windows)
}

/// Rabenseifner's allreduce: fold, reduce-scatter by halving, allgather by the same steps in
/// reverse (each rank sends its window and receives its partner's), unfold.
async fn rabenseifner_allreduce<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
) -> Result<()> {
    let (Folded { f, mut acc, .. }, halved) = halved(cx, send, op).await?;
    if let Some(Halved { i, layout, windows }) = halved {
        let mut mask = f.pof2 >> 1;
        let mut step = windows.len() - 1;
        while mask > 0 {
            let mine = windows[step];
            let (lo, hi) = windows[step - 1];
            let theirs = if mine.0 == lo {
                (mine.1, hi)
            } else {
                (lo, mine.0)
            };
            let peer = f.rank(i ^ mask);
            let (out, into) = disjoint(
                &mut acc,
                layout.span(mine.0, mine.1),
                layout.span(theirs.0, theirs.1),
            );
            cx.sendrecv(out, peer, into, peer).await?;
            step -= 1;
            mask >>= 1;
        }
    }
    fold_out(cx, &f, &acc, recv).await
}

/// Rabenseifner's reduce: fold, reduce-scatter by halving, then the windows gathered back in
/// reverse at newrank 0 (at each step the partner whose bit is set sends its window and is
/// done), which sends the result to the root unless it is the root.
async fn rabenseifner_reduce<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    op: &Op<T>,
    root: u32,
) -> Result<()> {
    let (Folded { f, mut acc, .. }, halved) = halved(cx, send, op).await?;
    if let Some(Halved { i, layout, windows }) = halved {
        let mut mask = f.pof2 >> 1;
        let mut step = windows.len() - 1;
        while mask > 0 {
            let mine = windows[step];
            let peer = f.rank(i ^ mask);
            if i & mask != 0 {
                cx.send(&acc[layout.span(mine.0, mine.1)], peer).await?;
                break;
            }
            let (_, hi) = windows[step - 1];
            cx.recv(&mut acc[layout.span(mine.1, hi)], peer).await?;
            step -= 1;
            mask >>= 1;
        }
    }
    to_root(cx, &acc, recv, f.rank(0), root).await
}

/// Ring allreduce (commutative operations): the vector in `size` blocks; a reduce-scatter in
/// which block `b`'s partial sum travels from rank `b + 1` around to rank `b`, each rank adding
/// its part, then a ring allgather of the finished blocks.
async fn ring_allreduce<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    let layout = Layout::Equal {
        count: send.len(),
        parts: n,
    };
    recv.copy_from_slice(send);
    let mut tmp = zeroed::<T>(layout.block(0).len());
    let (right, left) = (((r + 1) % n) as u32, ((r + n - 1) % n) as u32);
    for s in 0..n - 1 {
        let (sb, rb) = ((r + n - s) % n, (r + 2 * n - s - 1) % n);
        let into = layout.block(rb);
        let got = &mut tmp[..into.len()];
        cx.sendrecv(&recv[layout.block(sb)], right, got, left)
            .await?;
        op.reduce_right(got, &mut recv[into]);
    }
    for s in 0..n - 1 {
        let (sb, rb) = ((r + 1 + n - s) % n, (r + n - s) % n);
        let (out, into) = disjoint(recv, layout.block(sb), layout.block(rb));
        cx.sendrecv(out, right, into, left).await?;
    }
    Ok(())
}
