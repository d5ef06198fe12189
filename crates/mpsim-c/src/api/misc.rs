//! Small local calls: addresses, packing, memory, info objects (kept and read back, but
//! mpsim takes no hints from them), `MPI_Pcontrol`, `MPI_Request_get_status`.

use std::ffi::{c_char, c_int, c_void};

use mpsim_door::wire::class;

use super::{count, datatype, ret};
use crate::abi::*;
use crate::state::{self, raise};

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

    fn MPI_Info_create / PMPI_Info_create(info: *mut Handle) -> c_int {
        let h = state::with(|s| {
            let h = s.handle();
            s.infos.insert(h, Vec::new());
            h
        });
        unsafe { *info = h };
        0
    }

    fn MPI_Info_set / PMPI_Info_set(info: Handle, key: *const c_char, value: *const c_char) -> c_int {
        let (k, v) = unsafe { (cstr(key), cstr(value)) };
        match state::with(|s| s.infos.get_mut(&info).map(|m| match m.iter_mut().find(|e| e.0 == k) {
            Some(e) => e.1 = v,
            None => m.push((k, v)),
        })) {
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

    fn MPI_Info_get / PMPI_Info_get(info: Handle, key: *const c_char, len: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        info_get("MPI_Info_get", info, key, |v| unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                put_c(v, value, len.max(0) as usize + 1);
            }
        })
    }

    fn MPI_Info_get_string / PMPI_Info_get_string(info: Handle, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
        info_get("MPI_Info_get_string", info, key, |v| unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                let room = (*buflen).max(0) as usize;
                if room > 0 {
                    put_c(v, value, room);
                }
                *buflen = v.len() as c_int + 1;
            }
        })
    }

    fn MPI_Info_get_valuelen / PMPI_Info_get_valuelen(info: Handle, key: *const c_char, len: *mut c_int, flag: *mut c_int) -> c_int {
        info_get("MPI_Info_get_valuelen", info, key, |v| unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                *len = v.len() as c_int;
            }
        })
    }

    fn MPI_Info_delete / PMPI_Info_delete(info: Handle, key: *const c_char) -> c_int {
        let k = unsafe { cstr(key) };
        match state::with(|s| s.infos.get_mut(&info).map(|m| m.iter().position(|e| e.0 == k).map(|i| m.remove(i)))) {
            Some(Some(_)) => 0,
            Some(None) => raise(None, "MPI_Info_delete", MPI_ERR_INFO_NOKEY, &format!("no key {k:?}")),
            None => raise(None, "MPI_Info_delete", class::INFO, "not an info object"),
        }
    }

    fn MPI_Info_get_nkeys / PMPI_Info_get_nkeys(info: Handle, n: *mut c_int) -> c_int {
        match state::with(|s| s.infos.get(&info).map(|m| m.len())) {
            Some(k) => {
                unsafe { *n = k as c_int };
                0
            }
            None => raise(None, "MPI_Info_get_nkeys", class::INFO, "not an info object"),
        }
    }

    fn MPI_Info_get_nthkey / PMPI_Info_get_nthkey(info: Handle, i: c_int, key: *mut c_char) -> c_int {
        let got = state::with(|s| s.infos.get(&info).map(|m| usize::try_from(i).ok().and_then(|i| m.get(i)).map(|e| e.0.clone())));
        match got {
            Some(Some(k)) => {
                unsafe { put_c(&k, key, MPI_MAX_INFO_KEY) };
                0
            }
            Some(None) => raise(None, "MPI_Info_get_nthkey", class::ARG, &format!("no key number {i}")),
            None => raise(None, "MPI_Info_get_nthkey", class::INFO, "not an info object"),
        }
    }

    fn MPI_Info_dup / PMPI_Info_dup(info: Handle, out: *mut Handle) -> c_int {
        let h = state::with(|s| {
            let m = s.infos.get(&info).cloned()?;
            let h = s.handle();
            s.infos.insert(h, m);
            Some(h)
        });
        match h {
            Some(h) => {
                unsafe { *out = h };
                0
            }
            None => raise(None, "MPI_Info_dup", class::INFO, "not an info object"),
        }
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

/// The C string at `p` (empty when null).
unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

/// Copies `text` into `out`, cut to `room - 1` bytes and terminated (MPI's info strings).
unsafe fn put_c(text: &str, out: *mut c_char, room: usize) {
    if out.is_null() || room == 0 {
        return;
    }
    let n = text.len().min(room - 1);
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr().cast(), out, n);
        *out.add(n) = 0;
    }
}

/// Looks `key` up in `info` and hands the value (if set) to `put`.
fn info_get(call: &str, info: Handle, key: *const c_char, put: impl FnOnce(Option<&str>)) -> c_int {
    let k = unsafe { cstr(key) };
    match state::with(|s| {
        s.infos
            .get(&info)
            .map(|m| m.iter().find(|e| e.0 == k).map(|e| e.1.clone()))
    }) {
        Some(v) => {
            put(v.as_deref());
            0
        }
        None => raise(None, call, class::INFO, "not an info object"),
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
