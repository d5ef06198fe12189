//! [`World`]: MPI for this process, from `MPI_Init` to `MPI_Finalize`, and the rank's runtime
//! on it; and what a launcher needs across processes besides point-to-point (a gather of bytes
//! at rank 0 for the merged report, the end of the job on an error).

use std::time::Instant;

use mpsim_proto::error::Error;

use crate::rank::MpiRank;
use crate::raw::{self, MPI_Comm};

/// MPI in this process (initialised by [`World::init`], finalised when dropped), with the
/// communicators of this process's rank.
pub struct World {
    direct: MPI_Comm,
    here: MPI_Comm,
    control: MPI_Comm,
    /// The world's native collectives (`native.rs`), and the base of the communicators made
    /// for the others.
    coll: MPI_Comm,
    spin: bool,
    // Last: finalises MPI when dropped, after the communicators above are freed.
    _universe: mpi::environment::Universe,
}

impl World {
    /// Initialises MPI (`MPI_Init`, one thread), or says why it cannot be: already
    /// initialised in this process.
    pub fn init() -> Result<World, Error> {
        let universe = mpi::initialize().ok_or_else(|| Error::Unsupported {
            what: "MPI is already initialised in this process: the mpi backend runs one run \
                   per process"
                .into(),
        })?;
        let world = raw::comm_world();
        let fail = |what: &str, code| Error::Internal {
            what: format!("MPI failed in {what}: {}", raw::describe(code)),
        };
        let direct = raw::dup(world).map_err(|c| fail("MPI_Comm_dup", c))?;
        let here = raw::dup(world).map_err(|c| fail("MPI_Comm_dup", c))?;
        let control = raw::dup(world).map_err(|c| fail("MPI_Comm_dup", c))?;
        let coll = raw::dup(world).map_err(|c| fail("MPI_Comm_dup", c))?;
        let on_node = raw::node_size(world).map_err(|c| fail("MPI_Comm_split_type", c))?;
        // The node's cores, not this process's: mpirun binds each process to a core (or a
        // socket), which `available_parallelism` would count alone.
        // SAFETY: sysconf reads a system value.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        let cores = u32::try_from(online).unwrap_or(1).max(1);
        Ok(World {
            direct,
            here,
            control,
            coll,
            spin: on_node <= cores,
            _universe: universe,
        })
    }

    /// This process's rank and the number of processes (`MPI_COMM_WORLD`).
    pub fn rank_size(&self) -> (u32, u32) {
        raw::rank_size(self.direct)
    }

    /// The runtime of this process's rank, its clock started now, once every process is
    /// here (a barrier: the ranks' clocks start together, within the barrier's skew).
    pub fn rank(&self) -> Result<MpiRank, Error> {
        raw::barrier(self.control).map_err(|c| Error::Internal {
            what: format!("MPI failed in MPI_Barrier: {}", raw::describe(c)),
        })?;
        Ok(MpiRank::new(
            self.direct,
            self.here,
            self.control,
            self.coll,
            Instant::now(),
            self.spin,
        ))
    }

    /// Ends every process of the job: this rank's run failed with `error`, which is printed
    /// first (on standard error, `mpsim: ...`), with exit status `code`. The other ranks may
    /// be waiting for this one, which would otherwise leave them hanging.
    pub fn fail(&self, error: &Error, code: i32) -> ! {
        eprintln!("mpsim: {error}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        raw::abort(code)
    }

    /// Waits until every process is here.
    pub fn barrier(&self) -> Result<(), Error> {
        raw::barrier(self.control).map_err(|c| Error::Internal {
            what: format!("MPI failed in MPI_Barrier: {}", raw::describe(c)),
        })
    }

    /// Gathers `mine` from every rank at rank 0: each rank's bytes in rank order there,
    /// `None` on the other ranks.
    pub fn gather(&self, mine: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Error> {
        gather_at_root(self.control, mine)
    }
}

impl World {
    /// Gathers every rank's measurements at rank 0 (every rank calls it, after its
    /// [`MpiRank::finish`]): by rank there, `None` elsewhere.
    pub fn gather_ends(&self, mine: &crate::RankEnd) -> Result<Option<Vec<crate::RankEnd>>, Error> {
        let Some(all) = self.gather(&mine.encode())? else {
            return Ok(None);
        };
        all.iter()
            .map(|b| crate::RankEnd::decode(b))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| Error::Internal {
                what: "a rank's measurements did not read back whole".into(),
            })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        raw::free(&mut self.direct);
        raw::free(&mut self.here);
        raw::free(&mut self.control);
        raw::free(&mut self.coll);
    }
}

/// Gathers `mine` from every process of `comm` at its rank 0.
pub(crate) fn gather_at_root(comm: MPI_Comm, mine: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Error> {
    raw::gather_bytes(mine, comm).map_err(|c| Error::Internal {
        what: format!("MPI failed in MPI_Gatherv: {}", raw::describe(c)),
    })
}
