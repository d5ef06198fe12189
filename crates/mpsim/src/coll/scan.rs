//! `scan` and `exscan`: the linear algorithm. Rank `r` waits for the prefix of ranks
//! `0..r` from rank `r - 1`, combines it with its own vector (the prefix on the left: rank
//! order) and passes the result to `r + 1`: `size - 1` steps in a chain.

use bytemuck::Pod;
use mpsim_proto::error::Result;

use super::algo::Collective;
use super::ops::Op;
use super::{Ctx, zeroed};
use crate::Comm;

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
        self.check_live(CALL)?;
        self.check_len(CALL, "receive buffer", recv.len(), Some(send.len()))?;
        let shape = self.shape::<T>(send.len(), op.is_commutative());
        let chosen = self.algorithm(Collective::Scan, CALL, shape)?;
        let cx = Ctx::new(self, CALL, Collective::Scan, chosen, 0);
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
        self.check_live(CALL)?;
        self.check_len(CALL, "receive buffer", recv.len(), Some(send.len()))?;
        let shape = self.shape::<T>(send.len(), op.is_commutative());
        let chosen = self.algorithm(Collective::Exscan, CALL, shape)?;
        let cx = Ctx::new(self, CALL, Collective::Exscan, chosen, 0);
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
}
