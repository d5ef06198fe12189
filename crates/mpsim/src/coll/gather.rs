//! `gather`, `gatherv`, `scatter`, `scatterv` (and their nonblocking forms): binomial trees for the equal-block calls (each
//! rank passes its whole subtree's blocks at once, `ceil(log2 size)` steps), and the linear
//! algorithm (the root sends to or receives from each rank, all posted at once) for the `v`
//! calls, whose counts only the root knows, and as a choice for the others.

use std::ops::Range;

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::bcast::real;
use super::native::{native_blocking, native_nonblocking};
use super::{Ctx, Layout, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

/// The lowest set bit of relative rank `v`, or for the root the first power of two at or
/// above `n`: `v`'s subtree is `v..v + low` (cut at `n`).
fn low(v: usize, n: usize) -> usize {
    let mut l = 1;
    while l < n && v & l == 0 {
        l <<= 1;
    }
    l
}

/// `buf` cut into `layout`'s `n` blocks.
fn blocks_mut<'a, T>(mut buf: &'a mut [T], layout: &Layout, n: usize) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(layout.block(i).len());
        out.push(head);
        buf = tail;
    }
    out
}

impl Comm {
    /// Gathers every rank's `send` into the root's `recv`, in rank order (MPI's `MPI_Gather`):
    /// every rank's `send` has the same length, and the root's `recv` is `size` times as long
    /// (other ranks' `recv` is not used and may be empty).
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut all = [0u32; 3];
    ///         world.gather(&[world.rank() * 2], &mut all, 1).await?;
    ///         if world.rank() == 1 {
    ///             assert_eq!(all, [0, 2, 4]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("gather");
    /// ```
    pub async fn gather<T: Pod>(&self, send: &[T], recv: &mut [T], root: u32) -> Result<()> {
        const CALL: &str = "gather";
        let chosen = self.gather_algorithm(CALL, send, recv.len(), root)?;
        native_blocking!(
            self,
            (CALL, Collective::Gather, chosen),
            NativeCall::Gather {
                send: bytemuck::cast_slice(send),
                root
            },
            (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Gather, chosen, root);
        run_gather(&cx, chosen.algo, send, recv, root).await
    }

    /// Starts a [`Comm::gather`] (MPI's `MPI_Igather`): `send` is read now; the root's `recv`
    /// gets every rank's block when the request completes (other ranks' is not touched).
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut all = [0u32; 3];
    ///         world.igather(&[world.rank()], &mut all, 0)?.wait().await?;
    ///         if world.rank() == 0 {
    ///             assert_eq!(all, [0, 1, 2]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("igather");
    /// ```
    pub fn igather<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        root: u32,
    ) -> Result<Request<'b>> {
        const CALL: &str = "igather";
        let chosen = self.gather_algorithm(CALL, send, recv.len(), root)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Gather, chosen),
            NativeCall::Gather {
                send: bytemuck::cast_slice(send),
                root
            },
            (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
        );
        let is_root = self.rank() == root;
        let send = send.to_vec();
        let mut out = zeroed(if is_root { recv.len() } else { 0 });
        let what = (Collective::Gather, chosen, root);
        Ok(
            self.start_coll(CALL, what, is_root.then_some(recv), move |cx| async move {
                run_gather(&cx, chosen.algo, &send, &mut out, root).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of a gather named `call`, and its algorithm.
    fn gather_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        root: u32,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        let n = self.size() as usize;
        if self.rank() == root {
            self.check_len(call, "receive buffer", recv, send.len().checked_mul(n))?;
        }
        let shape = self.shape::<T>(send.len().saturating_mul(n), true);
        self.algorithm(Collective::Gather, call, shape)
    }

    /// Gathers rank `i`'s `counts[i]` elements into the root's `recv`, one after another in
    /// rank order (MPI's `MPI_Gatherv` with packed displacements). `counts` is read at the root
    /// only (others may pass an empty slice), as is `recv`; each rank's `send` is its count.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let mut all = [0u32; 3];
    ///         world.gatherv(&vec![me; me as usize], &mut all, &[0, 1, 2], 0).await?;
    ///         if me == 0 {
    ///             assert_eq!(all, [1, 2, 2]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("gatherv");
    /// ```
    pub async fn gatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        root: u32,
    ) -> Result<()> {
        const CALL: &str = "gatherv";
        let (chosen, layout) = self.gatherv_plan(CALL, send, recv.len(), counts, root)?;
        native_blocking!(
            self,
            (CALL, Collective::Gatherv, chosen),
            NativeCall::Gatherv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>(),
                root
            },
            (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Gatherv, chosen, root);
        linear_gather(&cx, send, recv, &layout, root).await
    }

    /// Starts a [`Comm::gatherv`] (MPI's `MPI_Igatherv`): `send` and the root's `counts` are
    /// read now; the root's `recv` gets the blocks when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let mut all = [0u32; 3];
    ///         world.igatherv(&vec![me; me as usize], &mut all, &[0, 1, 2], 0)?.wait().await?;
    ///         if me == 0 {
    ///             assert_eq!(all, [1, 2, 2]);
    ///         }
    ///         Ok(())
    ///     })
    ///     .expect("igatherv");
    /// ```
    pub fn igatherv<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        counts: &[usize],
        root: u32,
    ) -> Result<Request<'b>> {
        const CALL: &str = "igatherv";
        let (chosen, layout) = self.gatherv_plan(CALL, send, recv.len(), counts, root)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Gatherv, chosen),
            NativeCall::Gatherv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>(),
                root
            },
            (self.rank() == root).then(|| bytemuck::cast_slice_mut(recv))
        );
        let is_root = self.rank() == root;
        let send = send.to_vec();
        let mut out = zeroed(if is_root { recv.len() } else { 0 });
        let what = (Collective::Gatherv, chosen, root);
        Ok(
            self.start_coll(CALL, what, is_root.then_some(recv), move |cx| async move {
                linear_gather(&cx, &send, &mut out, &layout, root).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of a gatherv named `call`, its algorithm and the root's layout of `recv`.
    fn gatherv_plan<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        counts: &[usize],
        root: u32,
    ) -> Result<(Chosen, Layout)> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        let (n, r) = (self.size() as usize, self.rank());
        let layout = if r == root {
            let total = self.check_counts(call, "counts", counts)?;
            self.check_len(call, "receive buffer", recv, Some(total))?;
            self.check_len(call, "send buffer", send.len(), Some(counts[r as usize]))?;
            Layout::of_counts(counts)
        } else {
            Layout::Equal { count: 0, parts: n }
        };
        let shape = self.shape::<T>(recv, true);
        let chosen = self.algorithm(Collective::Gatherv, call, shape)?;
        Ok((chosen, layout))
    }

    /// Sends block `i` of the root's `send` to rank `i`'s `recv` (MPI's `MPI_Scatter`): every
    /// rank's `recv` has the same length, and the root's `send` is `size` times as long
    /// (other ranks' `send` is not used and may be empty).
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut mine = [0u8; 2];
    ///         world.scatter(&[0, 1, 2, 3, 4, 5], &mut mine, 0).await?;
    ///         let first = 2 * world.rank() as u8;
    ///         assert_eq!(mine, [first, first + 1]);
    ///         Ok(())
    ///     })
    ///     .expect("scatter");
    /// ```
    pub async fn scatter<T: Pod>(&self, send: &[T], recv: &mut [T], root: u32) -> Result<()> {
        const CALL: &str = "scatter";
        let chosen = self.scatter_algorithm(CALL, send, recv.len(), root)?;
        native_blocking!(
            self,
            (CALL, Collective::Scatter, chosen),
            NativeCall::Scatter {
                send: bytemuck::cast_slice(send),
                block: size_of_val(recv),
                root
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Scatter, chosen, root);
        run_scatter(&cx, chosen.algo, send, recv, root).await
    }

    /// Starts a [`Comm::scatter`] (MPI's `MPI_Iscatter`): the root's `send` is read now; every
    /// rank's `recv` gets its block when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let mut mine = [0u8];
    ///         world.iscatter(&[4, 5], &mut mine, 1)?.wait().await?;
    ///         assert_eq!(mine[0], 4 + world.rank() as u8);
    ///         Ok(())
    ///     })
    ///     .expect("iscatter");
    /// ```
    pub fn iscatter<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        root: u32,
    ) -> Result<Request<'b>> {
        const CALL: &str = "iscatter";
        let chosen = self.scatter_algorithm(CALL, send, recv.len(), root)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Scatter, chosen),
            NativeCall::Scatter {
                send: bytemuck::cast_slice(send),
                block: size_of_val(recv),
                root
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let send = if self.rank() == root {
            send.to_vec()
        } else {
            Vec::new()
        };
        let mut out = zeroed(recv.len());
        let what = (Collective::Scatter, chosen, root);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_scatter(&cx, chosen.algo, &send, &mut out, root).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of a scatter named `call`, and its algorithm.
    fn scatter_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        root: u32,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        let n = self.size() as usize;
        if self.rank() == root {
            self.check_len(call, "send buffer", send.len(), recv.checked_mul(n))?;
        }
        let shape = self.shape::<T>(recv.saturating_mul(n), true);
        self.algorithm(Collective::Scatter, call, shape)
    }

    /// Sends `counts[i]` elements of the root's `send` (the blocks one after another in rank
    /// order) to rank `i`'s `recv` (MPI's `MPI_Scatterv` with packed displacements). `counts`
    /// and `send` are read at the root only; each rank's `recv` is its count.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut mine = vec![0u16; world.rank() as usize];
    ///         world.scatterv(&[7, 8, 9], &[0, 1, 2], &mut mine, 2).await?;
    ///         assert_eq!(mine, [&[][..], &[7], &[8, 9]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("scatterv");
    /// ```
    pub async fn scatterv<T: Pod>(
        &self,
        send: &[T],
        counts: &[usize],
        recv: &mut [T],
        root: u32,
    ) -> Result<()> {
        const CALL: &str = "scatterv";
        let (chosen, layout) = self.scatterv_plan(CALL, send, counts, recv.len(), root)?;
        native_blocking!(
            self,
            (CALL, Collective::Scatterv, chosen),
            NativeCall::Scatterv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>(),
                recv: size_of_val(recv),
                root
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Scatterv, chosen, root);
        linear_scatter(&cx, send, recv, &layout, root).await
    }

    /// Starts a [`Comm::scatterv`] (MPI's `MPI_Iscatterv`): the root's `send` and `counts` are
    /// read now; every rank's `recv` gets its block when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut mine = vec![0u16; world.rank() as usize];
    ///         world.iscatterv(&[7, 8, 9], &[0, 1, 2], &mut mine, 2)?.wait().await?;
    ///         assert_eq!(mine, [&[][..], &[7], &[8, 9]][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("iscatterv");
    /// ```
    pub fn iscatterv<'b, T: Pod>(
        &self,
        send: &[T],
        counts: &[usize],
        recv: &'b mut [T],
        root: u32,
    ) -> Result<Request<'b>> {
        const CALL: &str = "iscatterv";
        let (chosen, layout) = self.scatterv_plan(CALL, send, counts, recv.len(), root)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Scatterv, chosen),
            NativeCall::Scatterv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>(),
                recv: size_of_val(recv),
                root
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let send = if self.rank() == root {
            send.to_vec()
        } else {
            Vec::new()
        };
        let mut out = zeroed(recv.len());
        let what = (Collective::Scatterv, chosen, root);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                linear_scatter(&cx, &send, &mut out, &layout, root).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of a scatterv named `call`, its algorithm and the root's layout of `send`.
    fn scatterv_plan<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        counts: &[usize],
        recv: usize,
        root: u32,
    ) -> Result<(Chosen, Layout)> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        let (n, r) = (self.size() as usize, self.rank());
        let layout = if r == root {
            let total = self.check_counts(call, "counts", counts)?;
            self.check_len(call, "send buffer", send.len(), Some(total))?;
            self.check_len(call, "receive buffer", recv, Some(counts[r as usize]))?;
            Layout::of_counts(counts)
        } else {
            Layout::Equal { count: 0, parts: n }
        };
        let shape = self.shape::<T>(send.len(), true);
        let chosen = self.algorithm(Collective::Scatterv, call, shape)?;
        Ok((chosen, layout))
    }
}

/// Gather by `algo` (blocks of `send.len()`).
async fn run_gather<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    root: u32,
) -> Result<()> {
    let n = cx.size as usize;
    match algo {
        Algorithm::Linear => {
            let layout = Layout::Equal {
                count: send.len() * n,
                parts: n,
            };
            linear_gather(cx, send, recv, &layout, root).await
        }
        _ => binomial_gather(cx, send, recv, root).await,
    }
}

/// Scatter by `algo` (blocks of `recv.len()`).
async fn run_scatter<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    root: u32,
) -> Result<()> {
    let n = cx.size as usize;
    match algo {
        Algorithm::Linear => {
            let layout = Layout::Equal {
                count: recv.len() * n,
                parts: n,
            };
            linear_scatter(cx, send, recv, &layout, root).await
        }
        _ => binomial_scatter(cx, send, recv, root).await,
    }
}

/// Linear gather: the root posts a receive from every other rank into its block of `recv`
/// (`layout`, known at the root only), the others send.
pub(super) async fn linear_gather<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
    root: u32,
) -> Result<()> {
    if cx.rank != root {
        return cx.send(send, root).await;
    }
    let n = cx.size as usize;
    let mut blocks = blocks_mut(recv, layout, n);
    blocks[root as usize].copy_from_slice(send);
    let recvs = blocks
        .into_iter()
        .enumerate()
        .filter(|&(i, _)| i != root as usize)
        .map(|(i, b)| (b, i as u32))
        .collect();
    cx.exchange::<T>(&[], recvs).await
}

/// Linear scatter: the root sends every other rank its block of `send` (`layout`, known at
/// the root only), all at once; the others receive.
pub(super) async fn linear_scatter<T: Pod>(
    cx: &Ctx,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
    root: u32,
) -> Result<()> {
    if cx.rank != root {
        return cx.recv(recv, root).await;
    }
    let n = cx.size as usize;
    recv.copy_from_slice(&send[layout.block(root as usize)]);
    let sends: Vec<(&[T], u32)> = (0..n)
        .filter(|&i| i != root as usize)
        .map(|i| (&send[layout.block(i)], i as u32))
        .collect();
    cx.exchange(&sends, Vec::new()).await
}

/// This rank's place in the binomial tree of `size` ranks hung from `root`, for blocks of `b`
/// elements: its relative rank `v`, whose subtree is `v..v + low` (cut at the size), its
/// parent, and its children `v + 1, v + 2, v + 4, ...` with where their subtrees' blocks lie in
/// a buffer of `v`'s subtree in relative order.
struct Tree {
    n: usize,
    b: usize,
    v: usize,
    low: usize,
    root: u32,
}

impl Tree {
    fn of(cx: &Ctx, b: usize, root: u32) -> Tree {
        let n = cx.size as usize;
        let v = (cx.rank as usize + n - root as usize) % n;
        Tree {
            n,
            b,
            v,
            low: low(v, n),
            root,
        }
    }

    /// The communicator rank of relative rank `v`.
    fn rank(&self, v: usize) -> u32 {
        real(v as u64, self.root, self.n as u32)
    }

    /// A zeroed buffer for this rank's subtree's blocks.
    fn buffer<T: Pod>(&self) -> Vec<T> {
        zeroed(self.low.min(self.n - self.v) * self.b)
    }

    fn parent(&self) -> u32 {
        self.rank(self.v - self.low)
    }

    /// Each child's rank and the elements of its subtree's blocks in the buffer, nearest
    /// first.
    fn children(&self) -> Vec<(u32, Range<usize>)> {
        let (v, b) = (self.v, self.b);
        std::iter::successors(Some(1), |m| Some(m << 1))
            .take_while(|&m| m < self.low && v + m < self.n)
            .map(|m| {
                let blocks = m.min(self.n - v - m);
                (self.rank(v + m), m * b..(m + blocks) * b)
            })
            .collect()
    }

    /// At the root: where each block lies in relative order and in rank order.
    fn rotation(&self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> {
        let b = self.b;
        (0..self.n).map(move |i| {
            let owner = self.rank(i) as usize;
            (i * b..(i + 1) * b, owner * b..(owner + 1) * b)
        })
    }
}

/// Binomial gather: relative rank `v` collects its subtree's blocks, in relative order, from
/// its children, and passes them to its parent; the root rotates them into rank order.
async fn binomial_gather<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], root: u32) -> Result<()> {
    let tree = Tree::of(cx, send.len(), root);
    let mut tmp = tree.buffer::<T>();
    tmp[..send.len()].copy_from_slice(send);
    for (child, blocks) in tree.children() {
        cx.recv(&mut tmp[blocks], child).await?;
    }
    if tree.v != 0 {
        return cx.send(&tmp, tree.parent()).await;
    }
    for (relative, ranked) in tree.rotation() {
        recv[ranked].copy_from_slice(&tmp[relative]);
    }
    Ok(())
}

/// Binomial scatter: the root orders the blocks by relative rank; relative rank `v` receives
/// its subtree's from its parent and passes each child's subtree on, the farthest first.
async fn binomial_scatter<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], root: u32) -> Result<()> {
    let tree = Tree::of(cx, recv.len(), root);
    let mut tmp = tree.buffer::<T>();
    if tree.v == 0 {
        for (relative, ranked) in tree.rotation() {
            tmp[relative].copy_from_slice(&send[ranked]);
        }
    } else {
        cx.recv(&mut tmp, tree.parent()).await?;
    }
    for (child, blocks) in tree.children().into_iter().rev() {
        cx.send(&tmp[blocks], child).await?;
    }
    recv.copy_from_slice(&tmp[..recv.len()]);
    Ok(())
}
