//! `scan` and `exscan` (and `iscan`, `iexscan`): the linear algorithm. Rank `r` waits for the prefix of ranks
//! `0..r` from rank `r - 1`, combines it with its own vector (the prefix on the left: rank
//! order) and passes the result to `r + 1`: `size - 1` steps in a chain.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::Collective;
use super::native::{self, native_blocking, native_nonblocking};
use super::ops::Op;
use super::{Ctx, zeroed};
use crate::Comm;
use crate::request::Request;
use mpsim_proto::runtime::NativeCall;

impl Comm {
    /// Inclusive prefix reduction (MPI's `MPI_Scan`): rank `r`'s `recv` gets
    /// `send(0) ⊕ ... ⊕ send(r)`, element by element.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let mut prefix = [0u32];
    ///         world.scan(&[world.rank() + 1], &mut prefix, &Op::sum()).await?;
    ///         assert_eq!(prefix[0], [1, 3, 6, 10][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("scan");
    /// ```
    pub async fn scan<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
        const CALL: &str = "scan";
        let chosen = self.same_length_reduction(CALL, Collective::Scan, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::Scan, chosen),
                NativeCall::Scan {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        scan(
            &Ctx::new(self, CALL, Collective::Scan, chosen, 0),
            send,
            recv,
            op,
        )
        .await
    }

    /// Starts a [`Comm::scan`] (MPI's `MPI_Iscan`): `send` is read now; `recv` gets the prefix
    /// when the request completes.
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut prefix = [0u32];
    ///         world.iscan(&[world.rank() + 1], &mut prefix, &Op::sum())?.wait().await?;
    ///         assert_eq!(prefix[0], [1, 3, 6][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("iscan");
    /// ```
    pub fn iscan<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<Request<'b>> {
        const CALL: &str = "iscan";
        let chosen = self.same_length_reduction(CALL, Collective::Scan, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::Scan, chosen),
                NativeCall::Scan {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                Some(bytemuck::cast_slice_mut(recv))
            );
        }
        let (send, op) = (send.to_vec(), op.clone());
        let mut out = zeroed(recv.len());
        let what = (Collective::Scan, chosen, 0);
        Ok(
            self.start_coll(CALL, what, Some(recv), move |cx| async move {
                scan(&cx, &send, &mut out, &op).await?;
                Ok(out)
            }),
        )
    }

    /// Exclusive prefix reduction (MPI's `MPI_Exscan`): rank `r > 0`'s `recv` gets
    /// `send(0) ⊕ ... ⊕ send(r - 1)`; rank 0's `recv` is left as it was (MPI leaves it
    /// undefined).
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let mut before = [0u32];
    ///         world.exscan(&[world.rank() + 1], &mut before, &Op::sum()).await?;
    ///         assert_eq!(before[0], [0, 1, 3, 6][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("exscan");
    /// ```
    pub async fn exscan<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
        const CALL: &str = "exscan";
        let chosen = self.same_length_reduction(CALL, Collective::Exscan, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_blocking!(
                self,
                (CALL, Collective::Exscan, chosen),
                NativeCall::Exscan {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                (self.rank() > 0).then(|| bytemuck::cast_slice_mut(recv))
            );
        }
        exscan(
            &Ctx::new(self, CALL, Collective::Exscan, chosen, 0),
            send,
            recv,
            op,
        )
        .await
    }

    /// Starts a [`Comm::exscan`] (MPI's `MPI_Iexscan`): `send` is read now; `recv` gets the
    /// prefix of the ranks before this one when the request completes (rank 0's is not
    /// touched).
    ///
    /// ```
    /// use mpsim::Op;
    /// mpsim::Launcher::new(3)
    ///     .run(|world| async move {
    ///         let mut before = [0u32];
    ///         world.iexscan(&[world.rank() + 1], &mut before, &Op::sum())?.wait().await?;
    ///         assert_eq!(before[0], [0, 1, 3][world.rank() as usize]);
    ///         Ok(())
    ///     })
    ///     .expect("iexscan");
    /// ```
    pub fn iexscan<'b, T: Pod>(
        &self,
        send: &[T],
        recv: &'b mut [T],
        op: &Op<T>,
    ) -> Result<Request<'b>> {
        const CALL: &str = "iexscan";
        let chosen = self.same_length_reduction(CALL, Collective::Exscan, send, recv.len(), op)?;
        if let Some((elem, rop)) = native::reduction(op) {
            native_nonblocking!(
                self,
                (CALL, Collective::Exscan, chosen),
                NativeCall::Exscan {
                    send: bytemuck::cast_slice(send),
                    elem,
                    op: rop,
                },
                (self.rank() > 0).then(|| bytemuck::cast_slice_mut(recv))
            );
        }
        let (send, op) = (send.to_vec(), op.clone());
        let first = self.rank() == 0;
        let mut out = zeroed(if first { 0 } else { recv.len() });
        let what = (Collective::Exscan, chosen, 0);
        let recv = (!first).then_some(recv);
        Ok(self.start_coll(CALL, what, recv, move |cx| async move {
            exscan(&cx, &send, &mut out, &op).await?;
            Ok(out)
        }))
    }
}

/// The linear scan: the prefix from `r - 1`, combined, passed on to `r + 1`.
async fn scan<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
    recv.copy_from_slice(send);
    if cx.rank > 0 {
        let mut prefix = zeroed::<T>(send.len());
        cx.recv(&mut prefix, cx.rank - 1).await?;
        op.reduce_right(&prefix, recv);
    }
    if cx.rank + 1 < cx.size {
        cx.send(recv, cx.rank + 1).await?;
    }
    Ok(())
}

/// The linear exscan: rank `r > 0` receives the prefix of `0..r` into `recv` (rank 0's `recv`
/// is not touched, and may be empty), and passes on that prefix combined with its `send`.
async fn exscan<T: Pod>(cx: &Ctx, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<()> {
    if cx.rank > 0 {
        cx.recv(recv, cx.rank - 1).await?;
    }
    if cx.rank + 1 < cx.size {
        if cx.rank == 0 {
            cx.send(send, 1).await?;
        } else {
            let mut next = send.to_vec();
            op.reduce_right(recv, &mut next);
            cx.send(&next, cx.rank + 1).await?;
        }
    }
    Ok(())
}
