//! `alltoall` and `alltoallv` (and `ialltoall`, `ialltoallv`): Bruck's algorithm (small blocks, many ranks: `ceil(log2 size)`
//! steps each moving about half the data), the scattered one (every send and receive posted at
//! once) and the pairwise one (`size - 1` steps, in step `k` rank `r` sends to `r + k` and
//! receives from `r - k`).

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Chosen, Collective};
use super::native::{native_blocking, native_nonblocking};
use super::{Ctx, Layout, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

impl Comm {
    /// Sends block `j` of `send` to rank `j`, which receives it as block `i` of its `recv`
    /// from rank `i` (MPI's `MPI_Alltoall`): `send` and `recv` have the same length, a
    /// multiple of `size`, the same on every rank.
    ///
    /// ```
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let send: Vec<u32> = (0..3).map(|j| 10 * me + j).collect();
    ///         let mut recv = [0u32; 3];
    ///         world.alltoall(&send, &mut recv).await?;
    ///         assert_eq!(recv, [me, 10 + me, 20 + me]);
    ///         Ok(())
    ///     })
    ///     .expect("alltoall");
    /// ```
    pub async fn alltoall<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        const CALL: &str = "alltoall";
        let chosen = self.alltoall_algorithm(CALL, send, recv.len())?;
        native_blocking!(
            self,
            (CALL, Collective::Alltoall, chosen),
            NativeCall::Alltoall {
                send: bytemuck::cast_slice(send)
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Alltoall, chosen, 0);
        run_alltoall(&cx, chosen.algo, send, recv).await
    }

    /// Starts a [`Comm::alltoall`] (MPI's `MPI_Ialltoall`): `send` is read now; `recv` gets
    /// every rank's block for this one when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let me = world.rank();
    ///         let mut recv = [0u32; 2];
    ///         world.ialltoall(&[10 * me, 10 * me + 1], &mut recv)?.wait().await?;
    ///         assert_eq!(recv, [me, 10 + me]);
    ///         Ok(())
    ///     })
    ///     .expect("ialltoall");
    /// ```
    pub fn ialltoall<'b, T: Pod>(&self, send: &[T], recv: &'b mut [T]) -> Result<Request<'b>> {
        const CALL: &str = "ialltoall";
        let chosen = self.alltoall_algorithm(CALL, send, recv.len())?;
        native_nonblocking!(
            self,
            (CALL, Collective::Alltoall, chosen),
            NativeCall::Alltoall {
                send: bytemuck::cast_slice(send)
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let send = send.to_vec();
        let mut out = zeroed(recv.len());
        let what = (Collective::Alltoall, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_alltoall(&cx, chosen.algo, &send, &mut out).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of an alltoall named `call`, and its algorithm.
    fn alltoall_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        recv: usize,
    ) -> Result<Chosen> {
        self.check_live(call)?;
        let n = self.size() as usize;
        self.check_len(call, "receive buffer", recv, Some(send.len()))?;
        if !send.len().is_multiple_of(n) {
            return Err(mpsim_proto::error::Error::InvalidBuffer {
                site: self.site(call),
                what: format!(
                    "the send buffer has {} elements, not a multiple of the communicator's {n} \
                     ranks",
                    send.len()
                ),
            });
        }
        let shape = self.shape::<T>(send.len() / n, true);
        self.algorithm(Collective::Alltoall, call, shape)
    }

    /// Sends `send_counts[j]` elements of `send` (the blocks one after another in rank order)
    /// to rank `j`, and receives `recv_counts[i]` from rank `i` into `recv` (likewise) (MPI's
    /// `MPI_Alltoallv` with packed displacements). Rank `i`'s `send_counts[j]` must be rank
    /// `j`'s `recv_counts[i]`.
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         // Rank 0 sends one element to each; rank 1 sends two to each.
    ///         let me = world.rank() as usize;
    ///         let send = vec![me as u8; 2 * (me + 1)];
    ///         let mut recv = [9u8; 3];
    ///         let counts = [1, 2];
    ///         world.alltoallv(&send, &[me + 1; 2], &mut recv, &counts).await?;
    ///         assert_eq!(recv, [0, 1, 1]);
    ///         Ok(())
    ///     })
    ///     .expect("alltoallv");
    /// ```
    pub async fn alltoallv<T: Pod>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
    ) -> Result<()> {
        const CALL: &str = "alltoallv";
        let chosen = self.alltoallv_algorithm(CALL, send, send_counts, recv.len(), recv_counts)?;
        native_blocking!(
            self,
            (CALL, Collective::Alltoallv, chosen),
            NativeCall::Alltoallv {
                send: bytemuck::cast_slice(send),
                send_counts,
                recv_counts,
                unit: size_of::<T>()
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let cx = Ctx::new(self, CALL, Collective::Alltoallv, chosen, 0);
        let (sl, rl) = (
            Layout::of_counts(send_counts),
            Layout::of_counts(recv_counts),
        );
        run_alltoallv(&cx, chosen.algo, send, &sl, recv, &rl).await
    }

    /// Starts a [`Comm::alltoallv`] (MPI's `MPI_Ialltoallv`): `send` and the counts are read
    /// now; `recv` gets every rank's block for this one when the request completes.
    ///
    /// ```
    /// mpsim::Launcher::new(2)
    ///     .run(|world| async move {
    ///         let me = world.rank() as usize;
    ///         let send = vec![me as u8; 2 * (me + 1)];
    ///         let mut recv = [9u8; 3];
    ///         world.ialltoallv(&send, &[me + 1; 2], &mut recv, &[1, 2])?.wait().await?;
    ///         assert_eq!(recv, [0, 1, 1]);
    ///         Ok(())
    ///     })
    ///     .expect("ialltoallv");
    /// ```
    pub fn ialltoallv<'b, T: Pod>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &'b mut [T],
        recv_counts: &[usize],
    ) -> Result<Request<'b>> {
        const CALL: &str = "ialltoallv";
        let chosen = self.alltoallv_algorithm(CALL, send, send_counts, recv.len(), recv_counts)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Alltoallv, chosen),
            NativeCall::Alltoallv {
                send: bytemuck::cast_slice(send),
                send_counts,
                recv_counts,
                unit: size_of::<T>()
            },
            Some(bytemuck::cast_slice_mut(recv))
        );
        let send = send.to_vec();
        let (sl, rl) = (
            Layout::of_counts(send_counts),
            Layout::of_counts(recv_counts),
        );
        let mut out = zeroed(recv.len());
        let what = (Collective::Alltoallv, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                run_alltoallv(&cx, chosen.algo, &send, &sl, &mut out, &rl).await?;
                Ok(out)
            }),
        )
    }

    /// The checks of an alltoallv named `call`, and its algorithm.
    fn alltoallv_algorithm<T: Pod>(
        &self,
        call: &'static str,
        send: &[T],
        send_counts: &[usize],
        recv: usize,
        recv_counts: &[usize],
    ) -> Result<Chosen> {
        self.check_live(call)?;
        let sent = self.check_counts(call, "send counts", send_counts)?;
        let received = self.check_counts(call, "receive counts", recv_counts)?;
        self.check_len(call, "send buffer", send.len(), Some(sent))?;
        self.check_len(call, "receive buffer", recv, Some(received))?;
        // The table's choice must not depend on what differs between ranks.
        let shape = self.shape::<T>(0, true);
        self.algorithm(Collective::Alltoallv, call, shape)
    }
}

/// Alltoall by `algo`.
async fn run_alltoall<T: Pod>(cx: &Ctx, algo: Algorithm, send: &[T], recv: &mut [T]) -> Result<()> {
    let n = cx.size as usize;
    let layout = Layout::Equal {
        count: send.len(),
        parts: n,
    };
    match algo {
        Algorithm::Bruck => bruck(cx, send, recv, send.len() / n).await,
        Algorithm::Pairwise => pairwise(cx, send, &layout, recv, &layout).await,
        _ => scattered(cx, send, &layout, recv, &layout).await,
    }
}

/// Alltoallv by `algo`, the blocks laid out by `sl` and `rl`.
async fn run_alltoallv<T: Pod>(
    cx: &Ctx,
    algo: Algorithm,
    send: &[T],
    sl: &Layout,
    recv: &mut [T],
    rl: &Layout,
) -> Result<()> {
    match algo {
        Algorithm::Pairwise => pairwise(cx, send, sl, recv, rl).await,
        _ => scattered(cx, send, sl, recv, rl).await,
    }
}

/// Every receive posted, then every send, in the order `r + 1, r + 2, ...`; the own block
/// copied.
async fn scattered<T: Pod>(
    cx: &Ctx,
    send: &[T],
    sl: &Layout,
    recv: &mut [T],
    rl: &Layout,
) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    recv[rl.block(r)].copy_from_slice(&send[sl.block(r)]);
    let mut blocks: Vec<Option<&mut [T]>> = Vec::with_capacity(n);
    let mut rest = &mut *recv;
    for i in 0..n {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(rl.block(i).len());
        blocks.push(Some(head));
        rest = tail;
    }
    let order = (1..n).map(|k| (r + k) % n);
    let recvs = order
        .clone()
        .map(|i| (blocks[i].take().expect("each block once"), i as u32))
        .collect();
    let sends: Vec<(&[T], u32)> = order.map(|j| (&send[sl.block(j)], j as u32)).collect();
    cx.exchange(&sends, recvs).await
}

/// Pairwise exchange: step `k` sends block `r + k` to rank `r + k` and receives block `r - k`
/// from rank `r - k`.
async fn pairwise<T: Pod>(
    cx: &Ctx,
    send: &[T],
    sl: &Layout,
    recv: &mut [T],
    rl: &Layout,
) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    recv[rl.block(r)].copy_from_slice(&send[sl.block(r)]);
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        cx.sendrecv(
            &send[sl.block(to)],
            to as u32,
            &mut recv[rl.block(from)],
            from as u32,
        )
        .await?;
    }
    Ok(())
}

/// Bruck's alltoall with blocks of `b` elements: rotate the blocks so that `tmp[i]` is for
/// rank `r + i`; in the step at distance `k` send every block whose index has bit `k` to
/// `r + k` and take as many from `r - k` in their place; then block `j` of the result is
/// `tmp[r - j]`.
async fn bruck<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], b: usize) -> Result<()> {
    let (n, r) = (cx.size as usize, cx.rank as usize);
    let mut tmp = zeroed::<T>(n * b);
    for i in 0..n {
        let j = (r + i) % n;
        tmp[i * b..(i + 1) * b].copy_from_slice(&send[j * b..(j + 1) * b]);
    }
    let mut packed = Vec::with_capacity(n.div_ceil(2) * b);
    let mut got = zeroed::<T>(n.div_ceil(2) * b);
    let mut k = 1;
    while k < n {
        let moved: Vec<usize> = (0..n).filter(|i| i & k != 0).collect();
        packed.clear();
        for &i in &moved {
            packed.extend_from_slice(&tmp[i * b..(i + 1) * b]);
        }
        let len = moved.len() * b;
        let (to, from) = (((r + k) % n) as u32, ((r + n - k) % n) as u32);
        cx.sendrecv(&packed, to, &mut got[..len], from).await?;
        for (slot, &i) in moved.iter().enumerate() {
            tmp[i * b..(i + 1) * b].copy_from_slice(&got[slot * b..(slot + 1) * b]);
        }
        k <<= 1;
    }
    for j in 0..n {
        let i = (r + n - j) % n;
        recv[j * b..(j + 1) * b].copy_from_slice(&tmp[i * b..(i + 1) * b]);
    }
    Ok(())
}
