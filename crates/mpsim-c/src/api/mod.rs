//! The MPI functions, by group. Each is defined through [`mpi!`], which exports it under its
//! `MPI_` and `PMPI_` names.

use std::borrow::Cow;
use std::ffi::c_int;
use std::sync::Arc;

use crate::abi::*;
use crate::dtype::Datatype;
use crate::state::{self, CommInfo, raise};

/// An exported symbol `$export` (x86-64) that stores its return address in
/// [`crate::site::CALL_SITE`] and jumps to `$body`, whose arguments it leaves untouched
/// (`$m`: the function's attributes).
#[cfg(target_arch = "x86_64")]
macro_rules! trampoline {
    ($export:expr => $body:ident; $(#[$m:meta])*) => {
        const _: () = {
            $(#[$m])*
            #[unsafe(naked)]
            #[unsafe(export_name = $export)]
            pub unsafe extern "C" fn trampoline() {
                core::arch::naked_asm!(
                    "mov rax, [rsp]",
                    "mov [rip + {site}], rax",
                    "jmp {body}",
                    site = sym crate::site::CALL_SITE,
                    body = sym $body,
                )
            }
        };
    };
}

/// Defines MPI functions: the body is a Rust function named as the `PMPI_` one (not exported:
/// the library's own calls go to it directly); the exported `MPI_` and `PMPI_` symbols are
/// trampolines that note where the program called from ([`crate::site`]) and jump to it.
macro_rules! mpi {
    ($( $(#[$m:meta])* fn $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block )*) => {$(
        $(#[$m])*
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> $ret $body

        #[cfg(target_arch = "x86_64")]
        trampoline!(stringify!($name) => $pname; $(#[$m])*);
        #[cfg(target_arch = "x86_64")]
        trampoline!(concat!("P", stringify!($name)) => $pname; $(#[$m])*);

        #[cfg(not(target_arch = "x86_64"))]
        const _: () = {
            $(#[$m])*
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                unsafe { $pname($($arg),*) }
            }

            $(#[$m])*
            #[unsafe(export_name = concat!("P", stringify!($name)))]
            pub unsafe extern "C" fn profiling($($arg: $ty),*) -> $ret {
                unsafe { $pname($($arg),*) }
            }
        };
    )*};
}

mod arrays;
mod attr;
pub mod coll;
pub mod comm;
mod compat;
mod envelope;
pub mod errh;
mod init;
pub mod inter;
mod large;
mod misc;
pub mod missing;
mod neighbor;
mod p2p;
pub(crate) mod rma;
pub mod topo;
mod types;
pub mod wait;

/// `Err(class)` of a call that failed and returned (`MPI_ERRORS_RETURN`).
pub type Res<T> = Result<T, c_int>;

/// Runs a call's body; its error is already raised, so only the class remains to return.
pub fn ret(r: Res<()>) -> c_int {
    match r {
        Ok(()) => state::OK,
        Err(c) => {
            coll::forget_sent();
            c
        }
    }
}

/// Fails `call` unless `MPI_Init` ran and `MPI_Finalize` did not.
pub fn live(call: &str) -> Res<()> {
    let (init, fin) = state::with(|s| (s.initialized, s.finalized));
    if !init {
        return Err(raise(
            None,
            call,
            mpsim_door::wire::class::OTHER,
            "called before MPI_Init",
        ));
    }
    if fin {
        return Err(raise(
            None,
            call,
            mpsim_door::wire::class::OTHER,
            "called after MPI_Finalize",
        ));
    }
    Ok(())
}

/// The communicator `h` (shared with the rank's table, not copied), or `MPI_ERR_COMM`.
pub fn comm(call: &str, h: Handle) -> Res<Arc<CommInfo>> {
    // One look at the tables: whether the library is live, and the communicator.
    let (live_now, info) =
        state::with(|s| (s.initialized && !s.finalized, s.comms.get(&h).cloned()));
    if !live_now {
        live(call)?;
    }
    info.ok_or_else(|| {
        let what = if h == MPI_COMM_NULL {
            "MPI_COMM_NULL is not a communicator".to_string()
        } else {
            format!("{h:#x} is not a communicator")
        };
        raise(None, call, mpsim_door::wire::class::COMM, &what)
    })
}

/// The committed datatype `h` (shared, not copied), or `MPI_ERR_TYPE`.
pub fn datatype(call: &str, comm: Handle, h: Handle) -> Res<Arc<Datatype>> {
    // A predefined datatype needs no look at the rank's tables.
    let t = crate::dtype::predefined_shared(h).or_else(|| state::with(|s| s.datatype(h)));
    match t {
        Some(t) if t.committed => Ok(t),
        Some(_) => Err(raise(
            Some(comm),
            call,
            mpsim_door::wire::class::TYPE,
            "the datatype is not committed (MPI_Type_commit)",
        )),
        None => Err(raise(
            Some(comm),
            call,
            mpsim_door::wire::class::TYPE,
            &format!("{h:#x} is not a datatype"),
        )),
    }
}

/// A count, or `MPI_ERR_COUNT` when negative.
pub fn count(call: &str, comm: Handle, n: c_int) -> Res<usize> {
    usize::try_from(n).map_err(|_| {
        raise(
            Some(comm),
            call,
            mpsim_door::wire::class::COUNT,
            &format!("negative count {n}"),
        )
    })
}

/// `count` elements of `dt` at `buf`, as bytes: borrowed when contiguous, packed otherwise.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (or `count` is 0).
pub unsafe fn packed<'a>(buf: *const libc::c_void, count: usize, dt: &Datatype) -> Cow<'a, [u8]> {
    let bytes = dt.size * count;
    if bytes == 0 {
        return Cow::Borrowed(&[]);
    }
    if dt.is_contiguous() {
        Cow::Borrowed(unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), bytes) })
    } else {
        let mut out = Vec::new();
        unsafe { dt.pack(buf.cast(), count, &mut out) };
        Cow::Owned(out)
    }
}

/// Writes `status` unless it is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `out` is null or points to an `MPI_Status`.
pub unsafe fn put_status(out: *mut MpiStatus, status: MpiStatus) {
    if !out.is_null() {
        // MPI: a call sets the MPI_ERROR field only when it returns MPI_ERR_IN_STATUS (which
        // no call here does); programs may keep their own value there.
        unsafe {
            *out = MpiStatus {
                error: (*out).error,
                ..status
            }
        };
    }
}
