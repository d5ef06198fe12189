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

    fn MPI_Request_get_status_all / PMPI_Request_get_status_all(n: c_int, reqs: *const Handle, flag: *mut c_int, statuses: *mut MpiStatus) -> c_int {
        ret((|| {
            let reqs = unsafe { handles(n, reqs) };
            let mut got = Vec::with_capacity(reqs.len());
            for &h in reqs {
                got.push(super::wait::peek_active(h)?);
            }
            let all = got.iter().all(|g| !matches!(g, Some(None)));
            unsafe { *flag = all as c_int };
            if all && !statuses.is_null() {
                for (i, g) in got.into_iter().enumerate() {
                    let s = g.flatten().unwrap_or_else(MpiStatus::empty);
                    unsafe { super::put_status(statuses.add(i), s) };
                }
            }
            Ok(())
        })())
    }

    fn MPI_Request_get_status_any / PMPI_Request_get_status_any(n: c_int, reqs: *const Handle, index: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        ret((|| {
            let reqs = unsafe { handles(n, reqs) };
            let mut active = false;
            for (i, &h) in reqs.iter().enumerate() {
                match super::wait::peek_active(h)? {
                    None => {}
                    Some(None) => active = true,
                    Some(Some(s)) => {
                        unsafe {
                            *index = i as c_int;
                            *flag = 1;
                            super::put_status(status, s);
                        }
                        return Ok(());
                    }
                }
            }
            // None complete: with none active, MPI says flag true and index MPI_UNDEFINED.
            unsafe {
                *index = MPI_UNDEFINED;
                *flag = (!active) as c_int;
                if !active {
                    super::put_status(status, MpiStatus::empty());
                }
            }
            Ok(())
        })())
    }

    fn MPI_Request_get_status_some / PMPI_Request_get_status_some(n: c_int, reqs: *const Handle, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MpiStatus) -> c_int {
        ret((|| {
            let reqs = unsafe { handles(n, reqs) };
            let (mut active, mut k) = (false, 0usize);
            for (i, &h) in reqs.iter().enumerate() {
                match super::wait::peek_active(h)? {
                    None => {}
                    Some(None) => active = true,
                    Some(Some(s)) => {
                        active = true;
                        unsafe {
                            *indices.add(k) = i as c_int;
                            if !statuses.is_null() {
                                super::put_status(statuses.add(k), s);
                            }
                        }
                        k += 1;
                    }
                }
            }
            unsafe { *outcount = if active { k as c_int } else { MPI_UNDEFINED } };
            Ok(())
        })())
    }

    fn MPI_Type_match_size / PMPI_Type_match_size(typeclass: c_int, size: c_int, out: *mut Handle) -> c_int {
        // MPI's choice for C: the sized Fortran types of the class (as MPICH gives), which
        // are predefined here with their C equivalents' layouts.
        let t = match (typeclass, size) {
            (MPI_TYPECLASS_INTEGER, 1) => Some(MPI_INTEGER1),
            (MPI_TYPECLASS_INTEGER, 2) => Some(MPI_INTEGER2),
            (MPI_TYPECLASS_INTEGER, 4) => Some(MPI_INTEGER4),
            (MPI_TYPECLASS_INTEGER, 8) => Some(MPI_INTEGER8),
            (MPI_TYPECLASS_REAL, 4) => Some(MPI_REAL4),
            (MPI_TYPECLASS_REAL, 8) => Some(MPI_REAL8),
            (MPI_TYPECLASS_REAL, 16) => Some(MPI_LONG_DOUBLE),
            (MPI_TYPECLASS_COMPLEX, 8) => Some(MPI_COMPLEX8),
            (MPI_TYPECLASS_COMPLEX, 16) => Some(MPI_COMPLEX16),
            (MPI_TYPECLASS_COMPLEX, 32) => Some(MPI_COMPLEX32),
            _ => None,
        };
        match t {
            Some(t) => {
                unsafe { *out = t };
                0
            }
            None => raise(
                None,
                "MPI_Type_match_size",
                class::ARG,
                &format!("no predefined datatype of type class {typeclass} and size {size}"),
            ),
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

/// The `n` handles at `p` (none when `n` is not positive or `p` is null).
unsafe fn handles<'a>(n: c_int, p: *const Handle) -> &'a [Handle] {
    if n <= 0 || p.is_null() {
        return &[];
    }
    unsafe { std::slice::from_raw_parts(p, n as usize) }
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

/// Defines the `MPI_X_c2f`/`MPI_X_f2c` pairs: a handle here is a small number (predefined
/// ones below 0x1000, the library's own counted up from 0x10000), so its Fortran integer is
/// the same number and converting back gives the same handle.
macro_rules! fortran_handles {
    ($($c2f:ident / $pc2f:ident, $f2c:ident / $pf2c:ident;)*) => {
        mpi! {$(
            fn $c2f / $pc2f(h: Handle) -> c_int {
                c_int::try_from(h).unwrap_or(-1)
            }

            fn $f2c / $pf2c(f: c_int) -> Handle {
                Handle::try_from(f).unwrap_or(0)
            }
        )*}
    };
}

fortran_handles! {
    MPI_Comm_c2f / PMPI_Comm_c2f, MPI_Comm_f2c / PMPI_Comm_f2c;
    MPI_Type_c2f / PMPI_Type_c2f, MPI_Type_f2c / PMPI_Type_f2c;
    MPI_Group_c2f / PMPI_Group_c2f, MPI_Group_f2c / PMPI_Group_f2c;
    MPI_Request_c2f / PMPI_Request_c2f, MPI_Request_f2c / PMPI_Request_f2c;
    MPI_Op_c2f / PMPI_Op_c2f, MPI_Op_f2c / PMPI_Op_f2c;
    MPI_Info_c2f / PMPI_Info_c2f, MPI_Info_f2c / PMPI_Info_f2c;
    MPI_Errhandler_c2f / PMPI_Errhandler_c2f, MPI_Errhandler_f2c / PMPI_Errhandler_f2c;
    MPI_Message_c2f / PMPI_Message_c2f, MPI_Message_f2c / PMPI_Message_f2c;
    MPI_Win_c2f / PMPI_Win_c2f, MPI_Win_f2c / PMPI_Win_f2c;
    MPI_File_c2f / PMPI_File_c2f, MPI_File_f2c / PMPI_File_f2c;
}
