//! `barrier` and `ibarrier`: the dissemination algorithm (Hensgen, Finkel and Manber 1988),
//! correct for any size: in round `k` (`k = 1, 2, 4, ... < size`) rank `r` sends an empty
//! message to `r + k` and waits for one from `r - k` (mod size); after `ceil(log2 size)` rounds
//! every rank has heard, through some chain, from every other.

use mpsim_proto::error::Result;

use mpsim_proto::runtime::NativeCall;

use super::Ctx;
use super::algo::{Algorithm, Chosen, Collective, Shape};
use super::native::{native_blocking, native_nonblocking};
use crate::Comm;
use crate::request::Request;

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
        let chosen = self.barrier_algorithm(CALL)?;
        native_blocking!(
            self,
            (CALL, Collective::Barrier, chosen),
            NativeCall::Barrier,
            None
        );
        dissemination(&Ctx::new(self, CALL, Collective::Barrier, chosen, 0)).await
    }

    /// Starts a barrier (MPI's `MPI_Ibarrier`): its request completes once every member has
    /// started it. Like every nonblocking collective, it moves on while the rank waits for
    /// anything, and several may be in flight at once (`docs/collectives.md` §7).
    ///
    /// ```
    /// mpsim::Launcher::new(4)
    ///     .run(|world| async move {
    ///         let barrier = world.ibarrier()?;
    ///         // ... work that does not need the others ...
    ///         barrier.wait().await?;
    ///         Ok(())
    ///     })
    ///     .expect("ibarrier");
    /// ```
    pub fn ibarrier(&self) -> Result<Request<'static>> {
        const CALL: &str = "ibarrier";
        let chosen = self.barrier_algorithm(CALL)?;
        native_nonblocking!(
            self,
            (CALL, Collective::Barrier, chosen),
            NativeCall::Barrier,
            None
        );
        let what = (Collective::Barrier, chosen, 0);
        Ok(self.start_coll::<u8, _>(CALL, what, None, |cx| async move {
            dissemination(&cx).await?;
            Ok(Vec::new())
        }))
    }

    /// The checks of a barrier named `call`, and its algorithm and why.
    fn barrier_algorithm(&self, call: &'static str) -> Result<Chosen> {
        self.check_live(call)?;
        let shape = Shape {
            size: self.size(),
            bytes: 0,
            count: 0,
            elem: 1,
            commutative: true,
        };
        let chosen = self.algorithm(Collective::Barrier, call, shape)?;
        debug_assert_eq!(chosen.algo, Algorithm::Dissemination);
        Ok(chosen)
    }
}

/// The dissemination barrier.
pub(super) async fn dissemination(cx: &Ctx) -> Result<()> {
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
