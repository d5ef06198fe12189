//! Persistent collectives (MPI-4's `MPI_Bcast_init` ... `MPI_Exscan_init`): the call keeps its
//! arguments in a persistent request; each `MPI_Start` runs the nonblocking form with them (the
//! buffers read at that start, as MPI says), and the ordinary wait and test calls complete it,
//! leaving the request inactive for the next start. The `info` argument is accepted and not read.

use std::ffi::{c_int, c_void};

use mpsim_door::wire::Op;

use super::*;
use crate::api::p2p::store;
use crate::state::{Persistent, Req};

/// What a persistent collective runs at each start. Pointers are the program's buffers
/// (valid while the request lives, MPI says); arrays are copied at the init call.
#[derive(Clone, Debug)]
pub enum Start {
    Barrier {
        c: Handle,
    },
    Bcast {
        buf: usize,
        n: c_int,
        dt: Handle,
        root: c_int,
        c: Handle,
    },
    Reduce {
        s: usize,
        r: usize,
        n: c_int,
        dt: Handle,
        op: Handle,
        root: Option<c_int>,
        c: Handle,
        wire: Op,
    },
    ReduceScatter {
        s: usize,
        r: usize,
        counts: Vec<c_int>,
        dt: Handle,
        op: Handle,
        c: Handle,
    },
    ReduceScatterBlock {
        s: usize,
        r: usize,
        n: c_int,
        dt: Handle,
        op: Handle,
        c: Handle,
    },
    /// Gather (`scatter` false) or scatter.
    Rooted {
        scatter: bool,
        s: usize,
        sn: c_int,
        sdt: Handle,
        r: usize,
        rn: c_int,
        rdt: Handle,
        root: c_int,
        c: Handle,
    },
    Gatherv {
        s: usize,
        sn: c_int,
        sdt: Handle,
        r: usize,
        rcounts: Vec<c_int>,
        displs: Vec<c_int>,
        rdt: Handle,
        root: c_int,
        c: Handle,
    },
    Scatterv {
        s: usize,
        scounts: Vec<c_int>,
        displs: Vec<c_int>,
        sdt: Handle,
        r: usize,
        rn: c_int,
        rdt: Handle,
        root: c_int,
        c: Handle,
    },
    /// Allgather (`alltoall` false) or alltoall.
    All {
        alltoall: bool,
        s: usize,
        sn: c_int,
        sdt: Handle,
        r: usize,
        rn: c_int,
        rdt: Handle,
        c: Handle,
    },
    Allgatherv {
        s: usize,
        sn: c_int,
        sdt: Handle,
        r: usize,
        rcounts: Vec<c_int>,
        displs: Vec<c_int>,
        rdt: Handle,
        c: Handle,
    },
    Alltoallv {
        s: usize,
        scounts: Vec<c_int>,
        sdispls: Vec<c_int>,
        sdt: Handle,
        r: usize,
        rcounts: Vec<c_int>,
        rdispls: Vec<c_int>,
        rdt: Handle,
        c: Handle,
    },
    Alltoallw {
        s: usize,
        scounts: Vec<c_int>,
        sdispls: Vec<c_int>,
        sdts: Vec<Handle>,
        r: usize,
        rcounts: Vec<c_int>,
        rdispls: Vec<c_int>,
        rdts: Vec<Handle>,
        c: Handle,
    },
}

/// The `c` field of any variant of `$s` (by reference, as `$s` is borrowed).
macro_rules! each_comm {
    ($s:expr) => {
        match $s {
            Start::Barrier { c }
            | Start::Bcast { c, .. }
            | Start::Reduce { c, .. }
            | Start::ReduceScatter { c, .. }
            | Start::ReduceScatterBlock { c, .. }
            | Start::Rooted { c, .. }
            | Start::Gatherv { c, .. }
            | Start::Scatterv { c, .. }
            | Start::All { c, .. }
            | Start::Allgatherv { c, .. }
            | Start::Alltoallv { c, .. }
            | Start::Alltoallw { c, .. } => c,
        }
    };
}

impl Start {
    /// The communicator it runs on (its own duplicate, after [`init`]).
    pub fn comm(&self) -> Handle {
        *self.comm_ref()
    }

    fn comm_mut(&mut self) -> &mut Handle {
        each_comm!(self)
    }

    fn comm_ref(&self) -> &Handle {
        each_comm!(self)
    }

    /// Starts it: the nonblocking collective's request.
    ///
    /// # Safety
    /// The buffers named are the program's, valid (MPI: while the request lives).
    pub unsafe fn start(&self) -> Res<Req> {
        let call = "MPI_Start";
        let mut h: Handle = MPI_REQUEST_NULL;
        let r = Some(&mut h as *mut Handle);
        let (cv, vp) = (|p: usize| p as *const c_void, |p: usize| p as *mut c_void);
        unsafe {
            match self {
                Start::Barrier { c } => barrier(call, *c, r),
                Start::Bcast {
                    buf,
                    n,
                    dt,
                    root,
                    c,
                } => bcast(call, vp(*buf), *n, *dt, *root, *c, r),
                Start::Reduce {
                    s,
                    r: rb,
                    n,
                    dt,
                    op,
                    root,
                    c,
                    wire,
                } => reduce(call, cv(*s), vp(*rb), *n, *dt, *op, *root, *c, *wire, r),
                Start::ReduceScatter {
                    s,
                    r: rb,
                    counts,
                    dt,
                    op,
                    c,
                } => {
                    let info = comm(call, *c)?;
                    reduce_scatter(call, cv(*s), vp(*rb), counts, *dt, *op, *c, &info, r)
                }
                Start::ReduceScatterBlock {
                    s,
                    r: rb,
                    n,
                    dt,
                    op,
                    c,
                } => reduce_scatter_block(call, cv(*s), vp(*rb), *n, *dt, *op, *c, r),
                Start::Rooted {
                    scatter: false,
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rn,
                    rdt,
                    root,
                    c,
                } => gather(call, cv(*s), *sn, *sdt, vp(*rb), *rn, *rdt, *root, *c, r),
                Start::Rooted {
                    scatter: true,
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rn,
                    rdt,
                    root,
                    c,
                } => scatter(call, cv(*s), *sn, *sdt, vp(*rb), *rn, *rdt, *root, *c, r),
                Start::Gatherv {
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rcounts,
                    displs,
                    rdt,
                    root,
                    c,
                } => gatherv(
                    call,
                    cv(*s),
                    *sn,
                    *sdt,
                    vp(*rb),
                    rcounts.as_ptr(),
                    displs.as_ptr(),
                    *rdt,
                    *root,
                    *c,
                    r,
                ),
                Start::Scatterv {
                    s,
                    scounts,
                    displs,
                    sdt,
                    r: rb,
                    rn,
                    rdt,
                    root,
                    c,
                } => scatterv(
                    call,
                    cv(*s),
                    scounts.as_ptr(),
                    displs.as_ptr(),
                    *sdt,
                    vp(*rb),
                    *rn,
                    *rdt,
                    *root,
                    *c,
                    r,
                ),
                Start::All {
                    alltoall: false,
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rn,
                    rdt,
                    c,
                } => allgather(call, cv(*s), *sn, *sdt, vp(*rb), *rn, *rdt, *c, r),
                Start::All {
                    alltoall: true,
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rn,
                    rdt,
                    c,
                } => alltoall(call, cv(*s), *sn, *sdt, vp(*rb), *rn, *rdt, *c, r),
                Start::Allgatherv {
                    s,
                    sn,
                    sdt,
                    r: rb,
                    rcounts,
                    displs,
                    rdt,
                    c,
                } => allgatherv(
                    call,
                    cv(*s),
                    *sn,
                    *sdt,
                    vp(*rb),
                    rcounts.as_ptr(),
                    displs.as_ptr(),
                    *rdt,
                    *c,
                    r,
                ),
                Start::Alltoallv {
                    s,
                    scounts,
                    sdispls,
                    sdt,
                    r: rb,
                    rcounts,
                    rdispls,
                    rdt,
                    c,
                } => alltoallv(
                    call,
                    cv(*s),
                    scounts.as_ptr(),
                    sdispls.as_ptr(),
                    *sdt,
                    vp(*rb),
                    rcounts.as_ptr(),
                    rdispls.as_ptr(),
                    *rdt,
                    *c,
                    r,
                ),
                Start::Alltoallw {
                    s,
                    scounts,
                    sdispls,
                    sdts,
                    r: rb,
                    rcounts,
                    rdispls,
                    rdts,
                    c,
                } => alltoallw(
                    call,
                    cv(*s),
                    scounts.as_ptr(),
                    sdispls.as_ptr(),
                    sdts.as_ptr(),
                    vp(*rb),
                    rcounts.as_ptr(),
                    rdispls.as_ptr(),
                    rdts.as_ptr(),
                    *c,
                    r,
                ),
            }?;
        }
        state::with(|s| s.requests.remove(&h)).ok_or_else(|| {
            raise(
                Some(self.comm()),
                call,
                class::INTERN,
                "the collective gave no request",
            )
        })
    }
}

/// Makes the persistent request of `start` into `*request`. Persistent collectives match in
/// the order they were made, whatever order their starts come in (MPI-4): each runs on a
/// duplicate of its communicator made here (in that order on every rank, as MPI requires of
/// the init calls), freed with the request.
unsafe fn init(call: &str, mut start: Start, request: *mut Handle) -> c_int {
    let c = start.comm();
    ret((|| {
        comm(call, c)?;
        let r = request_ptr(call, c, request)?.unwrap_or(request);
        let mut dup = MPI_COMM_NULL;
        match unsafe { crate::api::comm::PMPI_Comm_dup(c, &mut dup) } {
            0 => *start.comm_mut() = dup,
            rc => return Err(rc),
        }
        let p = Persistent {
            op: Op::Barrier,
            mode: 0,
            buf: 0,
            count: 0,
            dt: crate::dtype::predefined(0x247).expect("MPI_BYTE"),
            peer: 0,
            tag: 0,
            comm: c,
            active: None,
            coll: Some(Box::new(start)),
        };
        unsafe { *r = store(Req::Persistent(Box::new(p))) };
        Ok(())
    })())
}

/// The `n` ints at `p` (none if `p` is NULL).
unsafe fn v(c: Handle, p: *const c_int) -> Vec<c_int> {
    let n = state::with(|s| s.comms.get(&c).map_or(0, |i| i.size));
    unsafe { ints(p, n) }
}

/// The `n` handles at `p`.
unsafe fn hv(c: Handle, p: *const Handle) -> Vec<Handle> {
    let n = state::with(|s| s.comms.get(&c).map_or(0, |i| i.size)) as usize;
    if p.is_null() {
        return vec![MPI_DATATYPE_NULL; n];
    }
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

mpi! {
    fn MPI_Barrier_init / PMPI_Barrier_init(c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Barrier_init", Start::Barrier { c }, r) }
    }

    fn MPI_Bcast_init / PMPI_Bcast_init(buf: *mut c_void, n: c_int, dt: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Bcast_init", Start::Bcast { buf: buf as usize, n, dt, root, c }, r) }
    }

    fn MPI_Reduce_init / PMPI_Reduce_init(s: *const c_void, rb: *mut c_void, n: c_int, dt: Handle, op: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Reduce_init", Start::Reduce { s: s as usize, r: rb as usize, n, dt, op, root: Some(root), c, wire: Op::Reduce }, r) }
    }

    fn MPI_Allreduce_init / PMPI_Allreduce_init(s: *const c_void, rb: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Allreduce_init", Start::Reduce { s: s as usize, r: rb as usize, n, dt, op, root: None, c, wire: Op::Allreduce }, r) }
    }

    fn MPI_Scan_init / PMPI_Scan_init(s: *const c_void, rb: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Scan_init", Start::Reduce { s: s as usize, r: rb as usize, n, dt, op, root: None, c, wire: Op::Scan }, r) }
    }

    fn MPI_Exscan_init / PMPI_Exscan_init(s: *const c_void, rb: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Exscan_init", Start::Reduce { s: s as usize, r: rb as usize, n, dt, op, root: None, c, wire: Op::Exscan }, r) }
    }

    fn MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init(s: *const c_void, rb: *mut c_void, counts: *const c_int, dt: Handle, op: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Reduce_scatter_init", Start::ReduceScatter { s: s as usize, r: rb as usize, counts: v(c, counts), dt, op, c }, r) }
    }

    fn MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init(s: *const c_void, rb: *mut c_void, n: c_int, dt: Handle, op: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Reduce_scatter_block_init", Start::ReduceScatterBlock { s: s as usize, r: rb as usize, n, dt, op, c }, r) }
    }

    fn MPI_Gather_init / PMPI_Gather_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rn: c_int, rdt: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Gather_init", Start::Rooted { scatter: false, s: s as usize, sn, sdt, r: rb as usize, rn, rdt, root, c }, r) }
    }

    fn MPI_Scatter_init / PMPI_Scatter_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rn: c_int, rdt: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Scatter_init", Start::Rooted { scatter: true, s: s as usize, sn, sdt, r: rb as usize, rn, rdt, root, c }, r) }
    }

    fn MPI_Gatherv_init / PMPI_Gatherv_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Gatherv_init", Start::Gatherv { s: s as usize, sn, sdt, r: rb as usize, rcounts: v(c, rcounts), displs: v(c, displs), rdt, root, c }, r) }
    }

    fn MPI_Scatterv_init / PMPI_Scatterv_init(s: *const c_void, scounts: *const c_int, displs: *const c_int, sdt: Handle, rb: *mut c_void, rn: c_int, rdt: Handle, root: c_int, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Scatterv_init", Start::Scatterv { s: s as usize, scounts: v(c, scounts), displs: v(c, displs), sdt, r: rb as usize, rn, rdt, root, c }, r) }
    }

    fn MPI_Allgather_init / PMPI_Allgather_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rn: c_int, rdt: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Allgather_init", Start::All { alltoall: false, s: s as usize, sn, sdt, r: rb as usize, rn, rdt, c }, r) }
    }

    fn MPI_Alltoall_init / PMPI_Alltoall_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rn: c_int, rdt: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Alltoall_init", Start::All { alltoall: true, s: s as usize, sn, sdt, r: rb as usize, rn, rdt, c }, r) }
    }

    fn MPI_Allgatherv_init / PMPI_Allgatherv_init(s: *const c_void, sn: c_int, sdt: Handle, rb: *mut c_void, rcounts: *const c_int, displs: *const c_int, rdt: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Allgatherv_init", Start::Allgatherv { s: s as usize, sn, sdt, r: rb as usize, rcounts: v(c, rcounts), displs: v(c, displs), rdt, c }, r) }
    }

    fn MPI_Alltoallv_init / PMPI_Alltoallv_init(s: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdt: Handle, rb: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdt: Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Alltoallv_init", Start::Alltoallv { s: s as usize, scounts: v(c, scounts), sdispls: v(c, sdispls), sdt, r: rb as usize, rcounts: v(c, rcounts), rdispls: v(c, rdispls), rdt, c }, r) }
    }

    fn MPI_Alltoallw_init / PMPI_Alltoallw_init(s: *const c_void, scounts: *const c_int, sdispls: *const c_int, sdts: *const Handle, rb: *mut c_void, rcounts: *const c_int, rdispls: *const c_int, rdts: *const Handle, c: Handle, _info: Handle, r: *mut Handle) -> c_int {
        unsafe { init("MPI_Alltoallw_init", Start::Alltoallw { s: s as usize, scounts: v(c, scounts), sdispls: v(c, sdispls), sdts: hv(c, sdts), r: rb as usize, rcounts: v(c, rcounts), rdispls: v(c, rdispls), rdts: hv(c, rdts), c }, r) }
    }
}
