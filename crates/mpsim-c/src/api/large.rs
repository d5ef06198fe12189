//! MPI-4's large-count functions (`MPI_Send_c`, `MPI_Bcast_c`, `MPI_Type_size_c`, ...): the
//! same calls with `MPI_Count` counts. Each converts its counts and defers to the `int` form,
//! so it behaves as that form does; a count beyond `INT_MAX` (or below `INT_MIN` where a count
//! may be negative, as a stride) is `MPI_ERR_COUNT` naming the call, since this library's
//! calls take `int` counts. Results are widened to `MPI_Count`.
//!
//! The large-count forms whose counts come in arrays (the `v` and `w` collectives, the indexed
//! and struct datatypes) and those of one-sided communication and MPI-IO are not here: they
//! link and say they are not implemented (`missing.rs`).

use std::ffi::{c_int, c_void};

use mpsim_door::wire::class;

use super::coll::*;
use super::compat::*;
use super::misc::*;
use super::neighbor::*;
use super::p2p::*;
use super::types::*;
use crate::abi::*;
use crate::state::raise;

/// `n` as an `int` count of `call`, or `MPI_ERR_COUNT` (raised as every error is).
fn int(call: &str, n: i64) -> Result<c_int, c_int> {
    c_int::try_from(n).map_err(|_| {
        raise(
            None,
            call,
            class::COUNT,
            &format!(
                "count {n} is beyond an int's range: this version takes large-count calls' \
                 counts up to {}",
                c_int::MAX
            ),
        )
    })
}

/// `n` as an address-sized integer (`MPI_Aint`) of `call`.
fn aint(call: &str, n: i64) -> Result<isize, c_int> {
    isize::try_from(n).map_err(|_| raise(None, call, class::COUNT, &format!("{n} is too large")))
}

/// Defines `MPI_X_c`/`PMPI_X_c` from the `int` form `PMPI_X`: the arguments marked `= int`
/// (or `= aint`) are converted, the others passed as they are.
macro_rules! large_count {
    ($( fn $name:ident / $pname:ident => $int:ident ( $($arg:ident : $ty:ty $(= $conv:ident)?),* ); )*) => {
        mpi! {$(
            fn $name / $pname($($arg: $ty),*) -> c_int {
                $($(
                    let $arg = match $conv(stringify!($name), $arg) {
                        Ok(v) => v,
                        Err(rc) => return rc,
                    };
                )?)*
                unsafe { $int($($arg),*) }
            }
        )*}
    };
}

large_count! {
    fn MPI_Send_c / PMPI_Send_c => PMPI_Send(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle);
    fn MPI_Ssend_c / PMPI_Ssend_c => PMPI_Ssend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle);
    fn MPI_Bsend_c / PMPI_Bsend_c => PMPI_Bsend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle);
    fn MPI_Rsend_c / PMPI_Rsend_c => PMPI_Rsend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle);
    fn MPI_Isend_c / PMPI_Isend_c => PMPI_Isend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Issend_c / PMPI_Issend_c => PMPI_Issend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Ibsend_c / PMPI_Ibsend_c => PMPI_Ibsend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Irsend_c / PMPI_Irsend_c => PMPI_Irsend(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Send_init_c / PMPI_Send_init_c => PMPI_Send_init(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Ssend_init_c / PMPI_Ssend_init_c => PMPI_Ssend_init(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Bsend_init_c / PMPI_Bsend_init_c => PMPI_Bsend_init(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Rsend_init_c / PMPI_Rsend_init_c => PMPI_Rsend_init(buf: *const c_void, n: i64 = int, dt: Handle, dest: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Recv_c / PMPI_Recv_c => PMPI_Recv(buf: *mut c_void, n: i64 = int, dt: Handle, source: c_int, tag: c_int, c: Handle, status: *mut MpiStatus);
    fn MPI_Irecv_c / PMPI_Irecv_c => PMPI_Irecv(buf: *mut c_void, n: i64 = int, dt: Handle, source: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Recv_init_c / PMPI_Recv_init_c => PMPI_Recv_init(buf: *mut c_void, n: i64 = int, dt: Handle, source: c_int, tag: c_int, c: Handle, r: *mut Handle);
    fn MPI_Sendrecv_c / PMPI_Sendrecv_c => PMPI_Sendrecv(sbuf: *const c_void, sn: i64 = int, st: Handle, dest: c_int, stag: c_int, rbuf: *mut c_void, rn: i64 = int, rt: Handle, source: c_int, rtag: c_int, c: Handle, status: *mut MpiStatus);
    fn MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c => PMPI_Sendrecv_replace(buf: *mut c_void, n: i64 = int, dt: Handle, dest: c_int, stag: c_int, source: c_int, rtag: c_int, c: Handle, status: *mut MpiStatus);
    fn MPI_Mrecv_c / PMPI_Mrecv_c => PMPI_Mrecv(buf: *mut c_void, n: i64 = int, dt: Handle, message: *mut Handle, status: *mut MpiStatus);
    fn MPI_Imrecv_c / PMPI_Imrecv_c => PMPI_Imrecv(buf: *mut c_void, n: i64 = int, dt: Handle, message: *mut Handle, r: *mut Handle);
    fn MPI_Buffer_attach_c / PMPI_Buffer_attach_c => PMPI_Buffer_attach(buf: *mut c_void, size: i64 = int);
    fn MPI_Reduce_local_c / PMPI_Reduce_local_c => PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, n: i64 = int, dt: Handle, op: Handle);

    fn MPI_Bcast_c / PMPI_Bcast_c => PMPI_Bcast(buf: *mut c_void, n: i64 = int, dt: Handle, root: c_int, c: Handle);
    fn MPI_Ibcast_c / PMPI_Ibcast_c => PMPI_Ibcast(buf: *mut c_void, n: i64 = int, dt: Handle, root: c_int, c: Handle, r: *mut Handle);
    fn MPI_Bcast_init_c / PMPI_Bcast_init_c => PMPI_Bcast_init(buf: *mut c_void, n: i64 = int, dt: Handle, root: c_int, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Reduce_c / PMPI_Reduce_c => PMPI_Reduce(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, root: c_int, c: Handle);
    fn MPI_Ireduce_c / PMPI_Ireduce_c => PMPI_Ireduce(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, root: c_int, c: Handle, r: *mut Handle);
    fn MPI_Reduce_init_c / PMPI_Reduce_init_c => PMPI_Reduce_init(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, root: c_int, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Allreduce_c / PMPI_Allreduce_c => PMPI_Allreduce(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle);
    fn MPI_Iallreduce_c / PMPI_Iallreduce_c => PMPI_Iallreduce(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, r: *mut Handle);
    fn MPI_Allreduce_init_c / PMPI_Allreduce_init_c => PMPI_Allreduce_init(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Scan_c / PMPI_Scan_c => PMPI_Scan(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle);
    fn MPI_Iscan_c / PMPI_Iscan_c => PMPI_Iscan(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, r: *mut Handle);
    fn MPI_Scan_init_c / PMPI_Scan_init_c => PMPI_Scan_init(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Exscan_c / PMPI_Exscan_c => PMPI_Exscan(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle);
    fn MPI_Iexscan_c / PMPI_Iexscan_c => PMPI_Iexscan(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, r: *mut Handle);
    fn MPI_Exscan_init_c / PMPI_Exscan_init_c => PMPI_Exscan_init(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c => PMPI_Reduce_scatter_block(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle);
    fn MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c => PMPI_Ireduce_scatter_block(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, r: *mut Handle);
    fn MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c => PMPI_Reduce_scatter_block_init(s: *const c_void, rb: *mut c_void, n: i64 = int, dt: Handle, op: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Gather_c / PMPI_Gather_c => PMPI_Gather(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle);
    fn MPI_Igather_c / PMPI_Igather_c => PMPI_Igather(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle, r: *mut Handle);
    fn MPI_Gather_init_c / PMPI_Gather_init_c => PMPI_Gather_init(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Scatter_c / PMPI_Scatter_c => PMPI_Scatter(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle);
    fn MPI_Iscatter_c / PMPI_Iscatter_c => PMPI_Iscatter(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle, r: *mut Handle);
    fn MPI_Scatter_init_c / PMPI_Scatter_init_c => PMPI_Scatter_init(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, root: c_int, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Allgather_c / PMPI_Allgather_c => PMPI_Allgather(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle);
    fn MPI_Iallgather_c / PMPI_Iallgather_c => PMPI_Iallgather(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle, r: *mut Handle);
    fn MPI_Allgather_init_c / PMPI_Allgather_init_c => PMPI_Allgather_init(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Alltoall_c / PMPI_Alltoall_c => PMPI_Alltoall(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle);
    fn MPI_Ialltoall_c / PMPI_Ialltoall_c => PMPI_Ialltoall(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle, r: *mut Handle);
    fn MPI_Alltoall_init_c / PMPI_Alltoall_init_c => PMPI_Alltoall_init(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle, info: Handle, r: *mut Handle);
    fn MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c => PMPI_Neighbor_allgather(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle);
    fn MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c => PMPI_Neighbor_alltoall(s: *const c_void, sn: i64 = int, st: Handle, rb: *mut c_void, rn: i64 = int, rt: Handle, c: Handle);

    fn MPI_Type_contiguous_c / PMPI_Type_contiguous_c => PMPI_Type_contiguous(n: i64 = int, old: Handle, out: *mut Handle);
    fn MPI_Type_vector_c / PMPI_Type_vector_c => PMPI_Type_vector(n: i64 = int, block: i64 = int, stride: i64 = int, old: Handle, out: *mut Handle);
    fn MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c => PMPI_Type_create_hvector(n: i64 = int, block: i64 = int, stride: i64 = aint, old: Handle, out: *mut Handle);
    fn MPI_Type_create_resized_c / PMPI_Type_create_resized_c => PMPI_Type_create_resized(old: Handle, lb: i64 = aint, extent: i64 = aint, out: *mut Handle);
    fn MPI_Status_set_elements_c / PMPI_Status_set_elements_c => PMPI_Status_set_elements_x(status: *mut MpiStatus, dt: Handle, n: i64);
    fn MPI_Get_elements_c / PMPI_Get_elements_c => PMPI_Get_elements_x(status: *const MpiStatus, dt: Handle, n: *mut i64);
    fn MPI_Type_size_c / PMPI_Type_size_c => PMPI_Type_size_x(dt: Handle, size: *mut i64);
    fn MPI_Type_get_extent_c / PMPI_Type_get_extent_c => PMPI_Type_get_extent_x(dt: Handle, lb: *mut i64, extent: *mut i64);
    fn MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c => PMPI_Type_get_true_extent_x(dt: Handle, lb: *mut i64, extent: *mut i64);
}

/// The `int` result `k` of a call that returned `rc`, widened into `*out` (when the call
/// succeeded and `out` is not null); gives `rc`.
fn widened(rc: c_int, k: c_int, out: *mut i64) -> c_int {
    if rc == 0 && !out.is_null() {
        unsafe { *out = i64::from(k) };
    }
    rc
}

/// `Ok` of a call's return code, `Err` of an argument's conversion error: either is what the
/// call returns.
fn code(r: Result<c_int, c_int>) -> c_int {
    r.unwrap_or_else(|rc| rc)
}

mpi! {
    fn MPI_Get_count_c / PMPI_Get_count_c(status: *const MpiStatus, dt: Handle, n: *mut i64) -> c_int {
        let mut k: c_int = 0;
        let rc = unsafe { PMPI_Get_count(status, dt, &mut k) };
        widened(rc, k, n)
    }

    fn MPI_Buffer_detach_c / PMPI_Buffer_detach_c(addr: *mut c_void, size: *mut i64) -> c_int {
        let mut k: c_int = 0;
        let rc = unsafe { PMPI_Buffer_detach(addr.cast(), &mut k) };
        widened(rc, k, size)
    }

    fn MPI_Pack_size_c / PMPI_Pack_size_c(n: i64, dt: Handle, c: Handle, size: *mut i64) -> c_int {
        code((|| {
            let n = int("MPI_Pack_size_c", n)?;
            let mut k: c_int = 0;
            let rc = unsafe { PMPI_Pack_size(n, dt, c, &mut k) };
            Ok(widened(rc, k, size))
        })())
    }

    fn MPI_Pack_c / PMPI_Pack_c(inbuf: *const c_void, n: i64, dt: Handle, outbuf: *mut c_void, outsize: i64, position: *mut i64, c: Handle) -> c_int {
        let call = "MPI_Pack_c";
        code((|| {
            let (n, outsize) = (int(call, n)?, int(call, outsize)?);
            let mut pos = int(call, position_of(call, position)?)?;
            let rc = unsafe { PMPI_Pack(inbuf, n, dt, outbuf, outsize, &mut pos, c) };
            Ok(widened(rc, pos, position))
        })())
    }

    fn MPI_Unpack_c / PMPI_Unpack_c(inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, n: i64, dt: Handle, c: Handle) -> c_int {
        let call = "MPI_Unpack_c";
        code((|| {
            let (insize, n) = (int(call, insize)?, int(call, n)?);
            let mut pos = int(call, position_of(call, position)?)?;
            let rc = unsafe { PMPI_Unpack(inbuf, insize, &mut pos, outbuf, n, dt, c) };
            Ok(widened(rc, pos, position))
        })())
    }
}

/// The position `*p` of `MPI_Pack_c`/`MPI_Unpack_c`, or `MPI_ERR_ARG` for a null pointer.
fn position_of(call: &str, p: *const i64) -> Result<i64, c_int> {
    if p.is_null() {
        return Err(raise(None, call, class::ARG, "position is a null pointer"));
    }
    Ok(unsafe { *p })
}
