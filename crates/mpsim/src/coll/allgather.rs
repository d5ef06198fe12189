//! `allgather` and `allgatherv` (and `iallgather`, `iallgatherv`): recursive doubling, Bruck's algorithm (equal blocks only) and a
//! ring. Recursive doubling and the ring also finish `bcast`'s scatter + allgather, so they
//! work on ranks relative to a root (`v`, the rank in that order; `root` 0 for an allgather).
//!
//! Recursive doubling on a size that is not a power of two folds it first, as MPICH's
//! allreduce does (MPICH's allgather uses another fix-up): of the first `2 * rem` ranks
//! (`rem = size - pof2`) each even one hands its block to the odd one after it and sits out;
//! the `pof2` others exchange at distances 1, 2, 4, ... in a numbering (`newrank`) where each
//! holds a contiguous run of blocks; last, each odd one hands the whole vector back.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::bcast::real;
use super::native::{native_blocking, native_nonblocking};
use super::{Ctx, Layout, disjoint, pof2_below, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

impl Comm {
    /// Gathers every rank's `send` into every rank's `recv`, in rank order (MPI's
    /// `MPI_Allgather`): `recv.len()` is `size` times `send.len()`, the same on every rank.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut all = [0u32; 6];
    ///         world.allgather(&[world.rank(), 10], &mut all).await?;
    ///         assert_eq!(all, [0, 10, 1, 10, 2, 10]);
    ///         Ok(())
    ///     })
    ///     .expect("allgather");
    /// ```
    pub async fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        const CALL: &str = "allgather";
        let chosen = self.allgather_algorithm(CALL, send, recv.len())?;
        native_blocking!(
            self,
            (CALL, Collective::Allgather, chosen),
            NativeCall::Allgather {
                send: bytemuck::cast_slice(send)
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Allgather, chosen, 0);
        run_allgather(&cx, chosen.algo, send, recv).await
    }

    /// Starts a [`Comm::allgather`] (MPI's `MPI_Iallgather`): `send` is read now; `recv` gets
    /// every rank's block when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut all = [0u32; 3];
    ///         world.iallgather(&[world.rank() * 10], &mut all)?.wait().await?;
    ///         assert_eq!(all, [0, 10, 20]);
    ///         Ok(())
    ///     })
    ///     .expect("iallgather");
    /// ```
    pub fn iallgather<'b, T: Pod>(&self, send: &[T], recv: &'b mut [T]) -> Result<Request<'b>> {
        const CALL: &str = "iallgather";
        let chosen = self.allgather_algorithm(CALL, send, recv.len())?;
        native_nonblocking!(
            self,
            (CALL, Collective::Allgather, chosen),
            NativeCall::Allgather {
                send: bytemuck::cast_slice(send)
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let send = send.to_vec();
        let mut out = zeroed(recv.len());
        let what = (Collective::Allgather, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_allgather(&cx, chosen.algo, &send, &mut out).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of an allgather named `call`, and its algorithm.
    fn allgather_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        let n = self.size() as usize;
        self.check_len(call, "receive buffer", recv, send.len().checked_mul(n))?;
        let shape = self.shape::<T>(recv, true);
        self.algorithm(Collective::Allgather, call, shape)
    }

    /// Gathers every rank's `send` into every rank's `recv`, rank `i`'s `counts[i]` elements
    /// after rank `i - 1`'s (MPI's `MPI_Allgatherv` with displacements that pack the blocks):
    /// every rank passes the same `counts`, `send.len()` is its own count and `recv.len()`
    /// their sum.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let mine = vec![me; me as usize]; // rank i gives i copies of i
    ///         let mut all = [9u32; 3];
    ///         world.allgatherv(&mine, &mut all, &[0, 1, 2]).await?;
    ///         assert_eq!(all, [1, 2, 2]);
    ///         Ok(())
    ///     })
    ///     .expect("allgatherv");
    /// ```
    pub async fn allgatherv<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<()> {
        const CALL: &str = "allgatherv";
        let chosen = self.allgatherv_algorithm(CALL, send, recv.len(), counts)?;
        native_blocking!(
            self,
            (CALL, Collective::Allgatherv, chosen),
            NativeCall::Allgatherv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>()
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Allgatherv, chosen, 0);
        run_allgatherv(&cx, chosen.algo, send, recv, &Layout::of_counts(counts)).await
    }

    /// Starts a [`Comm::allgatherv`] (MPI's `MPI_Iallgatherv`): `send` and `counts` are read
    /// now; `recv` gets every rank's block when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let mut all = [9u32; 3];
    ///         world.iallgatherv(&vec![me; me as usize], &mut all, &[0, 1, 2])?.wait().await?;
    ///         assert_eq!(all, [1, 2, 2]);
    ///         Ok(())
    ///     })
    ///     .expect("iallgatherv");
    /// ```
    pub fn iallgatherv<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        counts: &[usize],
    ) -> Result<Request<'b>> {
        const CALL: &str = "iallgatherv";
        let chosen = self.allgatherv_algorithm(CALL, send, recv.len(), counts)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Allgatherv, chosen),
            NativeCall::Allgatherv {
                send: bytemuck::cast_slice(send),
                counts,
                unit: size_of::<T>()
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let (send, layout) = (send.to_vec(), Layout::of_counts(counts));
        let mut out = zeroed(recv.len());
        let what = (Collective::Allgatherv, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_allgatherv(&cx, chosen.algo, &send, &mut out, &layout).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of an allgatherv named `call`, and its algorithm.
    fn allgatherv_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
        counts: &[usize],
    ) -> Result<Chosen> {
        self.check_live(call)?;
        let total = self.check_counts(call, "counts", counts)?;
        let r = self.rank() as usize;
        self.check_len(call, "send buffer", send.len(), Some(counts[r]))?;
        self.check_len(call, "receive buffer", recv, Some(total))?;
        let shape = self.shape::<T>(total, true);
        self.algorithm(Collective::Allgatherv, call, shape)
    }
}

/// Allgather by `algo`.
async fn run_allgather<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
) -> Result<()> {
    let r = cx.rank as usize;
    let layout = Layout::Equal {
        count: recv.len(),
        parts: cx.size as usize,
    };
    recv[layout.block(r)].copy_from_slice(send);
    match algo {
        Algorithm::Bruck => bruck(cx, send, recv).await,
        Algorithm::Ring => ring(cx, recv, &layout, r, 0).await,
        _ => recursive_doubling(cx, recv, &layout, r, 0).await,
    }
}

/// Allgatherv by `algo`, the blocks laid out by `layout`.
async fn run_allgatherv<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    recv: &mut [T],
    layout: &Layout,
) -> Result<()> {
    let r = cx.rank as usize;
    recv[layout.block(r)].copy_from_slice(send);
    match algo {
        Algorithm::Ring => ring(cx, recv, layout, r, 0).await,
        _ => recursive_doubling(cx, recv, layout, r, 0).await,
    }
}

/// Ring allgather in place: `buf` holds block `v` (ranks relative to `root`); in step `s`
/// each rank passes block `v - s` to its right and takes block `v - s - 1` from its left.
pub(super) async fn ring<T: Pod>(
    cx: &Ctx,
    buf: &mut [T],
    layout: &Layout,
    v: usize,
    root: u32,
) -> Result<()> {
    let n = cx.size as usize;
    let right = real((v + 1) as u64, root, cx.size);
    let left = real((v + n - 1) as u64, root, cx.size);
    for s in 0..n - 1 {
        let (sb, rb) = ((v + n - s) % n, (v + 2 * n - s - 1) % n);
        let (out, into) = disjoint(buf, layout.block(sb), layout.block(rb));
        cx.sendrecv(out, right, into, left).await?;
    }
    Ok(())
}

/// Recursive-doubling allgather in place (module docs): `buf` holds block `v` (ranks
/// relative to `root`).
pub(super) async fn recursive_doubling<T: Pod>(
    cx: &Ctx,
    buf: &mut [T],
    layout: &Layout,
    v: usize,
    root: u32,
) -> Result<()> {
    let n = cx.size as usize;
    let pof2 = pof2_below(cx.size) as usize;
    let rem = n - pof2;
    // The first relative rank of newrank `i`'s run (`i == pof2`: the end), and the rank that
    // takes part for it.
    let first = |i: usize| if i < rem { 2 * i } else { i + rem };
    let member = |i: usize| {
        real(
            (if i < rem { 2 * i + 1 } else { i + rem }) as u64,
            root,
            cx.size,
        )
    };
    if v < 2 * rem && v.is_multiple_of(2) {
        let next = real((v + 1) as u64, root, cx.size);
        cx.send(&buf[layout.block(v)], next).await?;
        return cx.recv(buf, next).await;
    }
    if v < 2 * rem {
        let prev = real((v - 1) as u64, root, cx.size);
        cx.recv(&mut buf[layout.block(v - 1)], prev).await?;
    }
    let i = if v < 2 * rem { v / 2 } else { v - rem };
    let mut mask = 1;
    while mask < pof2 {
        let p = i ^ mask;
        let (mine, theirs) = (i & !(mask - 1), p & !(mask - 1));
        let out = layout.span(first(mine), first(mine + mask));
        let into = layout.span(first(theirs), first(theirs + mask));
        let (out, into) = disjoint(buf, out, into);
        cx.sendrecv(out, member(p), into, member(p)).await?;
        mask <<= 1;
    }
    if v < 2 * rem {
        let prev = real((v - 1) as u64, root, cx.size);
        cx.send(buf, prev).await?;
    }
    Ok(())
}

/// Bruck's allgather: rank `r` keeps its blocks rotated (`tmp[i]` is rank `r + i`'s); in the
/// step at distance `k` it sends its first `min(k, size - k)` blocks to `r - k` and appends
/// as many from `r + k`; then it rotates them into place.
async fn bruck<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T]) -> Result<()> {
    let (n, r, b) = (cx.size as usize, cx.rank as usize, send.len());
    let mut tmp = zeroed::<T>(n * b);
    tmp[..b].copy_from_slice(send);
    let mut k = 1;
    while k < n {
        let count = k.min(n - k);
        let (to, from) = (((r + n - k) % n) as u32, ((r + k) % n) as u32);
        let (out, into) = disjoint(&mut tmp, 0..count * b, k * b..(k + count) * b);
        cx.sendrecv(out, to, into, from).await?;
        k <<= 1;
    }
    for i in 0..n {
        let owner = (r + i) % n;
        recv[owner * b..(owner + 1) * b].copy_from_slice(&tmp[i * b..(i + 1) * b]);
    }
    Ok(())
}
