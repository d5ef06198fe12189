//! Small local calls: addresses, packing, memory, attributes of the world, info objects (kept
//! but not read: mpsim takes no hints), `MPI_Pcontrol`, `MPI_Request_get_status`.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};

use mpsim_door::wire::class;

use super::{comm, count, datatype, ret};
use crate::abi::*;
use crate::state::{self, raise};

/// `MPI_TAG_UB`'s keyval (mpi.h).
const KEY_TAG_UB: c_int = 501;
const KEY_HOST: c_int = 503;
const KEY_WTIME_IS_GLOBAL: c_int = 504;
const KEY_IO: c_int = 502;

static mut TAG_UB_VALUE: c_int = TAG_UB;
static mut NO_HOST: c_int = MPI_PROC_NULL;
static mut WTIME_GLOBAL: c_int = 1;

mpi! {
    fn MPI_Get_address / PMPI_Get_address(location: *const c_void, address: *mut isize) -> c_int {
        unsafe { *address = location as isize };
        0
    }

    fn MPI_Pack_size / PMPI_Pack_size(n: c_int, dt: Handle, c: Handle, size: *mut c_int) -> c_int {
        ret((|| {
            let k = count("MPI_Pack_size", c, n)?;
            let t = datatype("MPI_Pack_size", c, dt)?;
            unsafe { *size = c_int::try_from(k * t.size).unwrap_or(c_int::MAX) };
            Ok(())
        })())
    }

    fn MPI_Pack / PMPI_Pack(inbuf: *const c_void, n: c_int, dt: Handle, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Pack";
            let k = count(call, c, n)?;
            let t = datatype(call, c, dt)?;
            let pos = unsafe { *position }.max(0) as usize;
            let bytes = k * t.size;
            if pos + bytes > outsize.max(0) as usize {
                return Err(raise(Some(c), call, class::TRUNCATE, &format!("{bytes} bytes do not fit at position {pos} of {outsize}")));
            }
            let mut v = Vec::new();
            unsafe {
                t.pack(inbuf.cast(), k, &mut v);
                std::ptr::copy_nonoverlapping(v.as_ptr(), outbuf.cast::<u8>().add(pos), v.len());
                *position = (pos + v.len()) as c_int;
            }
            Ok(())
        })())
    }

    fn MPI_Unpack / PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, n: c_int, dt: Handle, c: Handle) -> c_int {
        ret((|| {
            let call = "MPI_Unpack";
            let k = count(call, c, n)?;
            let t = datatype(call, c, dt)?;
            let pos = unsafe { *position }.max(0) as usize;
            let bytes = k * t.size;
            if pos + bytes > insize.max(0) as usize {
                return Err(raise(Some(c), call, class::TRUNCATE, &format!("{bytes} bytes are not there at position {pos} of {insize}")));
            }
            unsafe {
                let data = std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), bytes);
                t.unpack(data, outbuf.cast(), k);
                *position = (pos + bytes) as c_int;
            }
            Ok(())
        })())
    }

    fn MPI_Alloc_mem / PMPI_Alloc_mem(size: isize, _info: Handle, base: *mut *mut c_void) -> c_int {
        let p = unsafe { libc::malloc(size.max(1) as usize) };
        if p.is_null() {
            return raise(None, "MPI_Alloc_mem", class::NO_MEM, &format!("{size} bytes"));
        }
        unsafe { *base = p };
        0
    }

    fn MPI_Free_mem / PMPI_Free_mem(base: *mut c_void) -> c_int {
        unsafe { libc::free(base) };
        0
    }

    fn MPI_Comm_get_attr / PMPI_Comm_get_attr(c: Handle, key: c_int, value: *mut *mut c_int, flag: *mut c_int) -> c_int {
        ret(comm("MPI_Comm_get_attr", c).map(|_| unsafe {
            let found: *mut c_int = match key {
                KEY_TAG_UB => &raw mut TAG_UB_VALUE,
                KEY_HOST | KEY_IO => &raw mut NO_HOST,
                KEY_WTIME_IS_GLOBAL => &raw mut WTIME_GLOBAL,
                _ => std::ptr::null_mut(),
            };
            *flag = (!found.is_null()) as c_int;
            if !found.is_null() {
                *value = found;
            }
        }))
    }

    fn MPI_Info_create / PMPI_Info_create(info: *mut Handle) -> c_int {
        let h = state::with(|s| {
            let h = s.handle();
            s.infos.insert(h, HashMap::new());
            h
        });
        unsafe { *info = h };
        0
    }

    fn MPI_Info_set / PMPI_Info_set(info: Handle, key: *const c_char, value: *const c_char) -> c_int {
        let (k, v) = unsafe {
            (std::ffi::CStr::from_ptr(key).to_string_lossy().into_owned(), std::ffi::CStr::from_ptr(value).to_string_lossy().into_owned())
        };
        match state::with(|s| s.infos.get_mut(&info).map(|m| m.insert(k, v))) {
            Some(_) => 0,
            None => raise(None, "MPI_Info_set", class::INFO, "not an info object"),
        }
    }

    fn MPI_Info_free / PMPI_Info_free(info: *mut Handle) -> c_int {
        let h = unsafe { *info };
        state::with(|s| s.infos.remove(&h));
        unsafe { *info = MPI_INFO_NULL };
        0
    }

    fn MPI_Request_get_status / PMPI_Request_get_status(h: Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret(super::wait::peek(h).map(|s| unsafe {
            *flag = s.is_some() as c_int;
            if let Some(s) = s {
                super::put_status(status, s);
            }
        }))
    }
}

/// `MPI_Pcontrol`: accepted, no effect (variadic in C; the extra arguments are ignored).
#[unsafe(no_mangle)]
pub extern "C" fn PMPI_Pcontrol(_level: c_int) -> c_int {
    0
}

/// `MPI_Pcontrol`.
#[unsafe(no_mangle)]
pub extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    PMPI_Pcontrol(level)
}
