//! Persistent collectives (MPI-4's `MPI_Bcast_init` ... `MPI_Alltoallw_init`): the call keeps its
//! arguments in a persistent request; each `MPI_Start` runs the nonblocking form with them (the
//! buffers read at that start, as MPI says), and the ordinary wait and test calls complete it,
//! leaving the request inactive for the next start. The `info` argument is accepted and not read.
//!
//! The entry points are made with the blocking and nonblocking ones (`collectives!` in
//! `coll.rs`), so a start checks and packs its arguments in the same code as `MPI_Ibcast`.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mpsim_door::wire::Op;

use super::*;
use crate::api::p2p::store;
use crate::state::{Persistent, Req};

/// What a start runs: the nonblocking collective on communicator `c`, with the arguments the
/// init call kept (named `MPI_Start (MPI_Bcast_init)` in its errors and checks).
type Run = dyn Fn(Handle, Option<*mut Handle>) -> Res<()> + Send + Sync;

/// What a persistent collective runs at each start.
#[derive(Clone)]
pub struct Start {
    /// Its own duplicate of the communicator (see [`init`]).
    c: Handle,
    run: Arc<Run>,
}

impl std::fmt::Debug for Start {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Start {{ c: {:#x} }}", self.c)
    }
}

impl Start {
    /// The communicator it runs on (its own duplicate, after [`init`]).
    pub fn comm(&self) -> Handle {
        self.c
    }

    /// Starts it: the nonblocking collective's request.
    ///
    /// # Safety
    /// The buffers named are the program's, valid (MPI: while the request lives).
    pub unsafe fn start(&self) -> Res<Req> {
        let call = "MPI_Start";
        let mut h: Handle = MPI_REQUEST_NULL;
        (self.run)(self.c, Some(&mut h as *mut Handle))?;
        state::with(|s| s.requests.remove(&h)).ok_or_else(|| {
            raise(
                Some(self.c),
                call,
                class::INTERN,
                "the collective gave no request",
            )
        })
    }
}

/// An argument as a persistent request keeps it: buffers by address (the program's, valid
/// while the request lives), arrays copied (MPI lets the program reuse them after the init
/// call), the rest as it is.
pub trait Keep: Sized {
    type Kept: Send + Sync + 'static;
    /// What to keep of it; `n` is the communicator's size (the length of an array argument).
    fn keep(self, n: u32) -> Self::Kept;
    /// The argument again, for a start (an array points into `k`).
    fn lend(k: &Self::Kept) -> Self;
}

macro_rules! keep_as_is {
    ($($t:ty),*) => {$(
        impl Keep for $t {
            type Kept = $t;
            fn keep(self, _: u32) -> $t {
                self
            }
            fn lend(k: &$t) -> $t {
                *k
            }
        }
    )*};
}
keep_as_is!(c_int, Handle);

macro_rules! keep_address {
    ($($t:ty),*) => {$(
        impl Keep for $t {
            type Kept = usize;
            fn keep(self, _: u32) -> usize {
                self as usize
            }
            fn lend(k: &usize) -> $t {
                *k as $t
            }
        }
    )*};
}
keep_address!(*const c_void, *mut c_void);

macro_rules! keep_array {
    ($($t:ty),*) => {$(
        impl Keep for *const $t {
            type Kept = Option<Vec<$t>>;
            // The pointer is the C program's argument, checked for null; MPI's contract gives
            // it one entry per rank (the init calls are the unsafe boundary, not this method).
            #[allow(clippy::not_unsafe_ptr_arg_deref)]
            fn keep(self, n: u32) -> Option<Vec<$t>> {
                // SAFETY: an array argument holds one entry per rank (MPI).
                (!self.is_null()).then(|| unsafe { std::slice::from_raw_parts(self, n as usize) }.to_vec())
            }
            fn lend(k: &Option<Vec<$t>>) -> *const $t {
                k.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
            }
        }
    )*};
}
keep_array!(c_int, Handle);

/// The size of communicator `c` (0 if it is none: the init call then fails on it).
///
/// On an intercommunicator the larger of its two groups: an array argument there has an entry
/// per remote rank (counts, displacements) or per local one (`MPI_Reduce_scatter`'s counts).
pub fn size(c: Handle) -> u32 {
    state::with(|s| s.comms.get(&c).map_or(0, |i| i.size.max(i.peers)))
}

/// Makes the persistent request that runs `run` at each start into `*request`. Persistent
/// collectives match in the order they were made, whatever order their starts come in (MPI-4):
/// each runs on a duplicate of its communicator `c` made here (in that order on every rank, as
/// MPI requires of the init calls), freed with the request.
///
/// # Safety
/// `request` is the program's request argument.
pub unsafe fn init(
    call: &str,
    c: Handle,
    request: *mut Handle,
    run: impl Fn(Handle, Option<*mut Handle>) -> Res<()> + Send + Sync + 'static,
) -> c_int {
    ret((|| {
        comm(call, c)?;
        let r = request_ptr(call, c, request)?.unwrap_or(request);
        let mut dup = MPI_COMM_NULL;
        match unsafe { crate::api::comm::PMPI_Comm_dup(c, &mut dup) } {
            0 => {}
            rc => return Err(rc),
        }
        let p = Persistent {
            op: Op::Barrier,
            mode: 0,
            buf: 0,
            count: 0,
            dt: crate::dtype::predefined_shared(0x247).expect("MPI_BYTE"),
            peer: 0,
            tag: 0,
            comm: c,
            active: None,
            coll: Some(Box::new(Start {
                c: dup,
                run: Arc::new(run),
            })),
        };
        unsafe { *r = store(Req::Persistent(Box::new(p))) };
        Ok(())
    })())
}
