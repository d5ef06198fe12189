//! Calls programs and test suites use that are thin forms of others: the `_x` forms of the
//! datatype and status queries (`MPI_Count` results), the status setters
//! (`MPI_Status_set_elements`, `MPI_Status_set_cancelled`), and functions the standard removed
//! in MPI-3.0 that older programs still call (`MPI_Errhandler_set`, `MPI_Type_extent`,
//! `MPI_Type_hvector`, `MPI_Address`, ...; MPICH and Open MPI keep them too). Each defers to
//! the current function it stands for.

use std::ffi::{c_int, c_void};

use mpsim_door::wire::class;

use super::{Res, ret};
use crate::abi::*;
use crate::state::raise;

/// The datatype `dt` for a query or status call, committed or not (MPI lets the queries take
/// either; errors go to `MPI_COMM_WORLD`'s handler).
fn dtype(call: &str, dt: Handle) -> Res<std::sync::Arc<crate::dtype::Datatype>> {
    super::types::old(call, dt)
}

/// Sets `status` so that `MPI_Get_elements` with `dt` gives `n`.
unsafe fn set_elements(call: &str, status: *mut MpiStatus, dt: Handle, n: i64) -> Res<()> {
    let t = dtype(call, dt)?;
    let n = usize::try_from(n)
        .map_err(|_| raise(None, call, class::COUNT, &format!("negative count {n}")))?;
    let bytes = t.bytes_of_elements(n) as u64;
    if !status.is_null() {
        unsafe {
            (*status).bytes_lo = bytes as u32 as i32;
            (*status).bytes_hi = (bytes >> 32) as u32 as i32;
        }
    }
    Ok(())
}

mpi! {
    fn MPI_Type_size_x / PMPI_Type_size_x(dt: Handle, size: *mut i64) -> c_int {
        ret(dtype("MPI_Type_size_x", dt).map(|t| unsafe { *size = t.size as i64 }))
    }

    fn MPI_Type_get_extent_x / PMPI_Type_get_extent_x(dt: Handle, lb: *mut i64, extent: *mut i64) -> c_int {
        let (mut l, mut e) = (0isize, 0isize);
        let rc = unsafe { super::types::PMPI_Type_get_extent(dt, &mut l, &mut e) };
        if rc == 0 {
            unsafe {
                *lb = l as i64;
                *extent = e as i64;
            }
        }
        rc
    }

    fn MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x(dt: Handle, lb: *mut i64, extent: *mut i64) -> c_int {
        let (mut l, mut e) = (0isize, 0isize);
        let rc = unsafe { super::types::PMPI_Type_get_true_extent(dt, &mut l, &mut e) };
        if rc == 0 {
            unsafe {
                *lb = l as i64;
                *extent = e as i64;
            }
        }
        rc
    }

    fn MPI_Get_elements_x / PMPI_Get_elements_x(status: *const MpiStatus, dt: Handle, out: *mut i64) -> c_int {
        ret(dtype("MPI_Get_elements_x", dt).map(|t| unsafe {
            let bytes = (*status).bytes() as usize;
            *out = t.elements_in(bytes).map_or(MPI_UNDEFINED as i64, |n| n as i64);
        }))
    }

    fn MPI_Status_set_elements / PMPI_Status_set_elements(status: *mut MpiStatus, dt: Handle, n: c_int) -> c_int {
        ret(unsafe { set_elements("MPI_Status_set_elements", status, dt, n as i64) })
    }

    fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x(status: *mut MpiStatus, dt: Handle, n: i64) -> c_int {
        ret(unsafe { set_elements("MPI_Status_set_elements_x", status, dt, n) })
    }

    fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled(status: *mut MpiStatus, flag: c_int) -> c_int {
        if !status.is_null() {
            unsafe { (*status).cancelled = (flag != 0) as c_int };
        }
        0
    }

    fn MPI_Errhandler_set / PMPI_Errhandler_set(c: Handle, handler: Handle) -> c_int {
        unsafe { super::init::PMPI_Comm_set_errhandler(c, handler) }
    }

    fn MPI_Errhandler_get / PMPI_Errhandler_get(c: Handle, out: *mut Handle) -> c_int {
        unsafe { super::init::PMPI_Comm_get_errhandler(c, out) }
    }

    fn MPI_Type_extent / PMPI_Type_extent(dt: Handle, extent: *mut isize) -> c_int {
        let mut lb = 0isize;
        unsafe { super::types::PMPI_Type_get_extent(dt, &mut lb, extent) }
    }

    fn MPI_Type_lb / PMPI_Type_lb(dt: Handle, lb: *mut isize) -> c_int {
        let mut extent = 0isize;
        unsafe { super::types::PMPI_Type_get_extent(dt, lb, &mut extent) }
    }

    fn MPI_Type_ub / PMPI_Type_ub(dt: Handle, ub: *mut isize) -> c_int {
        let (mut lb, mut extent) = (0isize, 0isize);
        let rc = unsafe { super::types::PMPI_Type_get_extent(dt, &mut lb, &mut extent) };
        if rc == 0 {
            unsafe { *ub = lb + extent };
        }
        rc
    }

    fn MPI_Type_hvector / PMPI_Type_hvector(count: c_int, len: c_int, stride: isize, old: Handle, out: *mut Handle) -> c_int {
        unsafe { super::types::PMPI_Type_create_hvector(count, len, stride, old, out) }
    }

    fn MPI_Type_hindexed / PMPI_Type_hindexed(count: c_int, lens: *const c_int, displs: *const isize, old: Handle, out: *mut Handle) -> c_int {
        unsafe { super::types::PMPI_Type_create_hindexed(count, lens, displs, old, out) }
    }

    fn MPI_Type_struct / PMPI_Type_struct(count: c_int, lens: *const c_int, displs: *const isize, types: *const Handle, out: *mut Handle) -> c_int {
        unsafe { super::types::PMPI_Type_create_struct(count, lens, displs, types, out) }
    }

    fn MPI_Address / PMPI_Address(location: *const c_void, address: *mut isize) -> c_int {
        unsafe { super::misc::PMPI_Get_address(location, address) }
    }
}
