//! `bcast` and `ibcast`: a binomial tree, or (long messages) a binomial scatter of the vector followed by an
//! allgather by recursive doubling or around a ring (van de Geijn's, as MPICH has it). Ranks
//! are taken relative to the root (`v = (r - root) mod size`), so the tree hangs from it.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::native::{native_blocking, native_nonblocking};
use super::{Ctx, Layout, allgather};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

/// The communicator rank of relative rank `v` for `root` on `n` ranks.
pub(super) fn real(v: u64, root: u32, n: u32) -> u32 {
    ((v + u64::from(root)) % u64::from(n)) as u32
}

impl Comm {
    /// Sends the root's `buf` to every rank's `buf` (MPI's `MPI_Bcast`). Every rank passes a
    /// buffer of the same length.
    ///
    /// ```
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let mut data = if world.rank() == 2 { [1.5f64, 2.5] } else { [0.0; 2] };
    ///         world.bcast(&mut data, 2).await?;
    ///         assert_eq!(data, [1.5, 2.5]);
    ///         Ok(())
    ///     })
    ///     .expect("bcast");
    /// ```
    pub async fn bcast<T: Pod>(&self, buf: &mut [T], root: u32) -> Result<()> {
        const CALL: &str = "bcast";
        let chosen = self.bcast_algorithm::<T>(CALL, buf.len(), root)?;
        native_blocking!(
            self,
            (CALL, Collective::Bcast, chosen),
            NativeCall::Bcast {
                data: bytemuck::cast_slice(buf),
                root
            },
            Some(bytemuck::cast_slice_mut(buf))
        );
        let cx = Ctx::new(self, CALL, Collective::Bcast, chosen, root);
        run(&cx, buf, root, chosen.algo).await
    }

    /// Starts a [`Comm::bcast`] (MPI's `MPI_Ibcast`): the root's `buf` is read now, and the
    /// others' `buf` gets the data when the request completes (it is borrowed until then).
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut data = if world.rank() == 0 { [7u32, 8] } else { [0; 2] };
    ///         let request = world.ibcast(&mut data, 0)?;
    ///         request.wait().await?;
    ///         assert_eq!(data, [7, 8]);
    ///         Ok(())
    ///     })
    ///     .expect("ibcast");
    /// ```
    pub fn ibcast<'b, T: Pod>(&self, buf: &'b mut [T], root: u32) -> Result<Request<'b>> {
        const CALL: &str = "ibcast";
        let chosen = self.bcast_algorithm::<T>(CALL, buf.len(), root)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Bcast, chosen),
            NativeCall::Bcast {
                data: bytemuck::cast_slice(buf),
                root
            },
            Some(bytemuck::cast_slice_mut(buf))
        );
        let mut data = buf.to_vec();
        let what = (Collective::Bcast, chosen, root);
        Ok(
            self.start_coll(CALL, what, Some(buf), move |cx| async move {
                run(&cx, &mut data, root, chosen.algo).await?;
                Ok(data)
            }),
        )
    }

    /// The checks of a bcast named `call` of `count` elements, and its algorithm and why.
    fn bcast_algorithm<T>(&self, call: &'static str, count: usize, root: u32) -> Result<Chosen> {
        self.check_live(call)?;
        self.check_root(call, root)?;
        self.algorithm(Collective::Bcast, call, self.shape::<T>(count, true))
    }
}

/// `buf` from `root` to every rank of `cx` by `algo` (a bcast's algorithm).
pub(super) async fn run<T: Pod>(cx: &Ctx, buf: &mut [T], root: u32, algo: Algorithm) -> Result<()> {
    if cx.size == 1 {
        return Ok(());
    }
    match algo {
        Algorithm::Binomial => binomial(cx, buf, root).await,
        // Boxed, as `reduce::run_allreduce`'s long-vector algorithms are: a rank's future
        // then holds the binomial tree's state, not the larger one of these.
        _ => {
            Box::pin(async {
                let layout = Layout::Equal {
                    count: buf.len(),
                    parts: cx.size as usize,
                };
                scatter_blocks(cx, buf, &layout, root).await?;
                let v = (u64::from(cx.rank) + u64::from(cx.size) - u64::from(root))
                    % u64::from(cx.size);
                if algo == Algorithm::ScatterRing {
                    allgather::ring(cx, buf, &layout, v as usize, root).await
                } else {
                    allgather::recursive_doubling(cx, buf, &layout, v as usize, root).await
                }
            })
            .await
        }
    }
}

/// Binomial bcast: relative rank `v` receives from `v - lowbit(v)`, then sends to `v + m` for
/// each `m = lowbit(v)/2, ..., 1` (the root: from the largest power of two below `size`).
async fn binomial<T: Pod>(cx: &Ctx, buf: &mut [T], root: u32) -> Result<()> {
    let n = u64::from(cx.size);
    let v = (u64::from(cx.rank) + n - u64::from(root)) % n;
    let mut mask = 1u64;
    while mask < n {
        if v & mask != 0 {
            cx.recv(buf, real(v - mask, root, cx.size)).await?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            cx.send(buf, real(v + mask, root, cx.size)).await?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// Binomial scatter of `buf`'s blocks (`layout`, one per relative rank) from the root, in
/// place: relative rank `v` receives the blocks of its subtree, `v..v + lowbit(v)`, and passes
/// each child's subtree on.
async fn scatter_blocks<T: Pod>(cx: &Ctx, buf: &mut [T], layout: &Layout, root: u32) -> Result<()> {
    let n = u64::from(cx.size);
    let v = (u64::from(cx.rank) + n - u64::from(root)) % n;
    let mut mask = 1u64;
    while mask < n {
        if v & mask != 0 {
            let span = layout.span(v as usize, (v + mask).min(n) as usize);
            cx.recv(&mut buf[span], real(v - mask, root, cx.size))
                .await?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            let span = layout.span((v + mask) as usize, (v + 2 * mask).min(n) as usize);
            cx.send(&buf[span], real(v + mask, root, cx.size)).await?;
        }
        mask >>= 1;
    }
    Ok(())
}
