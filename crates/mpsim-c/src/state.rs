//! The rank's own tables: communicators, datatypes, requests, groups, operations, as the C
//! program's handles name them, and how an error is raised.
//!
//! One lock guards them: the library gives `MPI_THREAD_SERIALIZED` at most, so calls never
//! overlap and the lock is never contended; it is there so that a program that breaks that
//! promise gets serialized calls, not torn tables.

use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use mpsim_door::wire::{Op, class};
// Handles are the library's own numbers, not input from outside: a fast hash (every call looks
// up its communicator here) rather than the standard library's SipHash.
use rustc_hash::FxHashMap as HashMap;

use crate::abi::*;
use crate::dtype::{Datatype, predefined_shared};

/// What the rank knows of a communicator.
#[derive(Clone, Debug)]
pub struct CommInfo {
    /// The proxy's id for it.
    pub id: i64,
    /// This rank's rank in it.
    pub rank: u32,
    /// Its size.
    pub size: u32,
    /// `MPI_ERRORS_RETURN` (else fatal).
    pub errors_return: bool,
    /// World ranks of its members, once asked for.
    pub members: Option<Vec<u32>>,
    /// Its name.
    pub name: String,
    /// How many ranks its point-to-point calls may name: its size, or on an
    /// intercommunicator the remote group's.
    pub peers: u32,
    /// An intercommunicator's parts (`api/inter.rs`); `None` for an intracommunicator.
    pub inter: Option<std::sync::Arc<crate::api::inter::Inter>>,
}

impl CommInfo {
    /// An intracommunicator the proxy made: `id`, this rank's `rank`, `size` ranks.
    pub fn intra(id: i64, rank: u32, size: u32, errors_return: bool) -> CommInfo {
        CommInfo {
            id,
            rank,
            size,
            errors_return,
            members: None,
            name: String::new(),
            peers: size,
            inter: None,
        }
    }
}

/// A request, as the rank holds it.
#[derive(Clone, Debug)]
pub enum Req {
    /// A send in flight at the proxy, with the checksum of its buffer at the post
    /// ([`Guard`]): the buffer must not change until the send completes.
    Send { proxy: i64, guard: Option<Guard> },
    /// A receive in flight at the proxy; its data goes to `buf` at completion, which first
    /// checks that the program did not write the buffer meanwhile ([`Guard`]).
    Recv {
        proxy: i64,
        buf: usize,
        count: usize,
        dt: Arc<Datatype>,
        guard: Option<Guard>,
    },
    /// A nonblocking collective in flight at the proxy; completing it checks that the
    /// program did not write the buffers its result goes to (`guards`), then puts the result
    /// in place as `finish` says.
    Coll {
        proxy: i64,
        finish: crate::api::coll::Finish,
        guards: Vec<Guard>,
    },
    /// Complete already (a transfer with `MPI_PROC_NULL`), with this status.
    Done { status: MpiStatus },
    /// A persistent request ([`Persistent`]), active or not.
    Persistent(Box<Persistent>),
}

/// What a buffer of a nonblocking call held when the call was posted: MPI forbids writing a
/// send's buffer before the send completes (a real MPI may still be reading it) and touching a
/// receive's before it completes (a real MPI may be writing it), so the completion checks that
/// it did not change. Contiguous buffers only: a derived datatype's gaps are the program's to
/// write, and its runs are not rechecked. A receive can only be caught writing, not reading.
#[derive(Clone, Copy, Debug)]
pub struct Guard {
    pub addr: usize,
    pub len: usize,
    pub sum: u64,
}

impl Guard {
    /// The guard of a contiguous buffer of `n` elements of `dt` at `addr`, if there is one
    /// to check.
    pub fn contiguous(addr: usize, n: usize, dt: &Datatype) -> Option<Guard> {
        (dt.is_contiguous() && n > 0 && dt.size > 0 && addr != 0)
            .then(|| Guard::of(addr, n * dt.size))
    }

    /// The guard of `len` bytes at `addr`.
    pub fn of(addr: usize, len: usize) -> Guard {
        // SAFETY: the caller's send buffer, `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        Guard {
            addr,
            len,
            sum: checksum(bytes),
        }
    }

    /// Whether the buffer still holds what it held.
    pub fn unchanged(&self) -> bool {
        let bytes = unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.len) };
        checksum(bytes) == self.sum
    }
}

/// A fast 64-bit checksum (eight bytes at a time, multiply and rotate).
fn checksum(bytes: &[u8]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x94D0_49BB_1331_11EB);
    }
    h
}

/// A persistent request: the call it starts, and the request it started.
#[derive(Clone, Debug)]
pub struct Persistent {
    /// `Isend` (with mode) or `Irecv`.
    pub op: Op,
    pub mode: i64,
    pub buf: usize,
    pub count: usize,
    pub dt: Arc<Datatype>,
    pub peer: i32,
    pub tag: i32,
    pub comm: Handle,
    /// The request of the current start, if active.
    pub active: Option<Box<Req>>,
    /// A persistent collective (`MPI_Bcast_init`, ...): what each start runs (the fields
    /// above are then unused).
    pub coll: Option<Box<crate::api::coll::persistent::Start>>,
}

/// A user-defined operation.
#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    /// `MPI_User_function`.
    pub f: unsafe extern "C" fn(*mut libc::c_void, *mut libc::c_void, *mut c_int, *mut usize),
    /// Commutative.
    pub commute: bool,
}

/// The rank's tables.
#[derive(Default)]
pub struct State {
    pub initialized: bool,
    pub finalized: bool,
    pub rank: u32,
    pub size: u32,
    /// Shared ([`Arc`]): a call takes its communicator's without copying it
    /// (`api::comm`); a change to one goes through [`Arc::make_mut`].
    pub comms: HashMap<Handle, Arc<CommInfo>>,
    /// Derived datatypes, shared as `comms` are.
    pub types: HashMap<Handle, Arc<Datatype>>,
    pub requests: HashMap<Handle, Req>,
    pub groups: HashMap<Handle, Vec<u32>>,
    pub ops: HashMap<Handle, UserOp>,
    /// Matched messages (`MPI_Mprobe`): the proxy's id and the status.
    pub messages: HashMap<Handle, (i64, MpiStatus)>,
    /// The attached buffer (`MPI_Buffer_attach`): address and bytes.
    pub buffer: Option<(usize, usize)>,
    /// Cartesian topologies of communicators (`api/topo.rs`).
    pub carts: HashMap<Handle, crate::api::topo::Cart>,
    /// Receives the program freed while active (`MPI_Request_free`): completed by
    /// `MPI_Finalize`, which delivers their data, as MPI lets them complete on their own.
    pub freed: Vec<Req>,
    /// Info objects: (key, value) in the order first set; mpsim reads no hints from them.
    pub infos: HashMap<Handle, Vec<(String, String)>>,
    /// Names the program gave predefined datatypes (`MPI_Type_set_name`), which MPI allows.
    pub type_names: HashMap<Handle, String>,
    next: Handle,
}

impl State {
    /// A fresh handle, never a predefined one.
    pub fn handle(&mut self) -> Handle {
        if self.next < FIRST_DYNAMIC {
            self.next = FIRST_DYNAMIC;
        }
        self.next += 1;
        self.next
    }

    /// The datatype of handle `h` (shared: no copy is made).
    pub fn datatype(&self, h: Handle) -> Option<Arc<Datatype>> {
        predefined_shared(h).or_else(|| self.types.get(&h).cloned())
    }
}

/// The rank's tables.
pub static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `f` on the tables (made on first use).
pub fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(State::default))
}

/// An error a call raises: `class`, with `text`. Under `MPI_ERRORS_RETURN` (on `comm`, or on
/// the world when the call has none) the call returns the class; under the default,
/// `MPI_ERRORS_ARE_FATAL`, the proxy ends the run with a report naming the rank, the call
/// and the virtual time, and this never returns.
pub fn raise(comm: Option<Handle>, call: &str, class: c_int, text: &str) -> c_int {
    let (errors_return, h) = with(|st| {
        let h = comm
            .filter(|h| st.comms.contains_key(h))
            .unwrap_or(MPI_COMM_WORLD);
        (st.comms.get(&h).is_some_and(|c| c.errors_return), h)
    });
    if errors_return {
        crate::api::errh::invoke(h, class);
        return class;
    }
    fatal(call, class, text)
}

/// Ends the run with an error (see [`raise`]).
pub fn fatal(call: &str, class: c_int, text: &str) -> ! {
    let mut payload = call.as_bytes().to_vec();
    payload.push(0);
    payload.extend_from_slice(text.as_bytes());
    let sent = crate::door::simple(Op::Fatal, &[class as i64], &[&payload]);
    // Not under `mpsim run` (or the run is gone): say it here and stop.
    eprintln!(
        "mpsim: {call}: {text}{}",
        sent.err()
            .map(|f| format!(" ({})", f.text))
            .unwrap_or_default()
    );
    unsafe { libc::_exit(1) }
}

/// A call's failure at the proxy, raised as [`raise`] does.
pub fn failed(comm: Option<Handle>, call: &str, f: crate::door::Failed) -> c_int {
    raise(comm, call, f.class, &f.text)
}

/// `MPI_SUCCESS`.
pub const OK: c_int = class::SUCCESS;
