//! `barrier`: the dissemination algorithm (Hensgen, Finkel and Manber 1988), correct for any
//! size: in round `k` (`k = 1, 2, 4, ... < size`) rank `r` sends an empty message to
//! `r + k` and waits for one from `r - k` (mod size); after `ceil(log2 size)` rounds every rank
//! has heard, through some chain, from every other.

use mpsim_proto::error::Result;

use super::Ctx;
use super::algo::{Algorithm, Collective, Shape};
use crate::Comm;

impl Comm {
    /// Blocks until every member of the communicator has called `barrier` (MPI's
    /// `MPI_Barrier`).
    ///
    /// ```
    /// mpsim::Launcher::new(5)
    ///     .run(|world| async move {
    ///         world.barrier().await?;
    ///         Ok(())
    ///     })
    ///     .expect("barrier");
    /// ```
    pub async fn barrier(&self) -> Result<()> {
        const CALL: &str = "barrier";
        self.check_live(CALL)?;
        let shape = Shape {
            size: self.size(),
            bytes: 0,
            count: 0,
            elem: 1,
            commutative: true,
        };
        let chosen = self.algorithm(Collective::Barrier, CALL, shape)?;
        let algo = chosen.algo;
        debug_assert_eq!(algo, Algorithm::Dissemination);
        let cx = Ctx::new(self, CALL, Collective::Barrier, chosen, 0);
        let (r, n) = (u64::from(cx.rank), u64::from(cx.size));
        let mut k = 1u64;
        while k < n {
            let (to, from) = ((r + k) % n, (r + n - k) % n);
            cx.sendrecv::<u8>(&[], to as u32, &mut [], from as u32)
                .await?;
            k <<= 1;
        }
        Ok(())
    }
}
