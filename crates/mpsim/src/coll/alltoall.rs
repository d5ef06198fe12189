//! `alltoall` and `alltoallv`: Bruck's algorithm (small blocks, many ranks: `ceil(log2 size)`
//! steps each moving about half the data), the scattered one (every send and receive posted at
//! once) and the pairwise one (`size - 1` steps, in step `k` rank `r` sends to `r + k` and
//! receives from `r - k`).

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::{Algorithm, Collective};
use super::{Ctx, Layout, zeroed};
use crate::Comm;

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
        self.check_live(CALL)?;
        let n = self.size() as usize;
        self.check_len(CALL, "receive buffer", recv.len(), Some(send.len()))?;
        if !send.len().is_multiple_of(n) {
            return Err(mpsim_proto::error::Error::InvalidBuffer {
                site: self.site(CALL),
                what: format!(
                    "the send buffer has {} elements, not a multiple of the communicator's {n} \
                     ranks",
                    send.len()
                ),
            });
        }
        let b = send.len() / n;
        let shape = self.shape::<T>(b, true);
        let algo = self.algorithm(Collective::Alltoall, CALL, shape)?;
        let cx = Ctx::new(self, CALL, Collective::Alltoall, algo, 0);
        let layout = Layout::Equal {
            count: send.len(),
            parts: n,
        };
        match algo {
            Algorithm::Bruck => bruck(&cx, send, recv, b).await,
            Algorithm::Pairwise => pairwise(&cx, send, &layout, recv, &layout).await,
            _ => scattered(&cx, send, &layout, recv, &layout).await,
        }
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
        self.check_live(CALL)?;
        let sent = self.check_counts(CALL, "send counts", send_counts)?;
        let received = self.check_counts(CALL, "receive counts", recv_counts)?;
        self.check_len(CALL, "send buffer", send.len(), Some(sent))?;
        self.check_len(CALL, "receive buffer", recv.len(), Some(received))?;
        // The table's choice must not depend on what differs between ranks.
        let shape = self.shape::<T>(0, true);
        let algo = self.algorithm(Collective::Alltoallv, CALL, shape)?;
        let cx = Ctx::new(self, CALL, Collective::Alltoallv, algo, 0);
        let (sl, rl) = (
            Layout::of_counts(send_counts),
            Layout::of_counts(recv_counts),
        );
        match algo {
            Algorithm::Pairwise => pairwise(&cx, send, &sl, recv, &rl).await,
            _ => scattered(&cx, send, &sl, recv, &rl).await,
        }
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
