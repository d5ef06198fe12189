//! The program's own error handlers and error codes: `MPI_Comm_create_errhandler` (a function
//! a failing call on that communicator calls before it returns its code),
//! `MPI_Comm_call_errhandler`, and `MPI_Add_error_class`/`_code`/`_string` (codes a library
//! adds, with their text for `MPI_Error_string`).
//!
//! A communicator with a program's handler behaves as under `MPI_ERRORS_RETURN` at the proxy
//! (errors come back to the call); the call then runs the handler here, in the rank's
//! process, where its code is. `MPI_Comm_dup` passes the handler on, as MPI says.

use std::ffi::{c_char, c_int};
use std::sync::Mutex;

use mpsim_door::wire::class;

use super::{comm, ret};
use crate::abi::*;
use crate::state::{self, raise};

/// `MPI_Comm_errhandler_function`: `(MPI_Comm *, int *, ...)`.
type HandlerFn = unsafe extern "C" fn(*mut Handle, *mut c_int);

/// The first code `MPI_Add_error_class`/`_code` hands out: above `MPI_ERR_LASTCODE`.
const FIRST_ADDED: c_int = 16384;

#[derive(Default)]
struct Table {
    /// Handlers the program made: handle and function.
    handlers: Vec<(Handle, HandlerFn)>,
    /// Which communicators use which of them.
    used: Vec<(Handle, Handle)>,
    /// Added codes, from `FIRST_ADDED` on: the class each belongs to (a class is its own).
    added: Vec<c_int>,
    /// Texts given with `MPI_Add_error_string`.
    strings: Vec<(c_int, String)>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    handlers: Vec::new(),
    used: Vec::new(),
    added: Vec::new(),
    strings: Vec::new(),
});

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    f(&mut TABLE.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Whether `h` is a handler the program made.
pub fn is_program_handler(h: Handle) -> bool {
    with(|t| t.handlers.iter().any(|e| e.0 == h))
}

/// Records that communicator `c` uses handler `h` (a program's) or none of the program's.
pub fn set_for(c: Handle, h: Option<Handle>) {
    with(|t| {
        t.used.retain(|e| e.0 != c);
        if let Some(h) = h {
            t.used.push((c, h));
        }
    });
}

/// The program's handler communicator `c` uses, if any.
pub fn handler_of(c: Handle) -> Option<Handle> {
    with(|t| t.used.iter().find(|e| e.0 == c).map(|e| e.1))
}

/// Runs communicator `c`'s handler (the program's, if it set one) for `code`: called by a
/// failing call under a returning handler, before it returns `code`.
pub fn invoke(c: Handle, code: c_int) {
    let f = with(|t| {
        let h = t.used.iter().find(|e| e.0 == c)?.1;
        t.handlers.iter().find(|e| e.0 == h).map(|e| e.1)
    });
    if let Some(f) = f {
        let (mut comm, mut code) = (c, code);
        // SAFETY: the program's handler, called as MPI says.
        unsafe { f(&mut comm, &mut code) };
    }
}

/// The largest code handed out so far (`MPI_LASTUSEDCODE`).
pub fn last_used_code() -> c_int {
    with(|t| FIRST_ADDED - 1 + t.added.len() as c_int)
}

/// The class of an added code, or `None` for MPI's own.
pub fn added_class(code: c_int) -> Option<c_int> {
    let i = usize::try_from(code.checked_sub(FIRST_ADDED)?).ok()?;
    with(|t| t.added.get(i).copied())
}

/// The text given for `code` with `MPI_Add_error_string`, if any.
pub fn added_string(code: c_int) -> Option<String> {
    with(|t| t.strings.iter().find(|e| e.0 == code).map(|e| e.1.clone()))
}

fn add(class_of: Option<c_int>) -> c_int {
    with(|t| {
        let code = FIRST_ADDED + t.added.len() as c_int;
        t.added.push(class_of.unwrap_or(code));
        code
    })
}

mpi! {
    fn MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler(f: Option<HandlerFn>, out: *mut Handle) -> c_int {
        let Some(f) = f else {
            return raise(None, "MPI_Comm_create_errhandler", class::ARG, "the handler function is NULL");
        };
        let h = state::with(|s| s.handle());
        with(|t| t.handlers.push((h, f)));
        unsafe { *out = h };
        0
    }

    // MPI-1's name, removed in MPI-3.0 and kept by MPICH and Open MPI.
    fn MPI_Errhandler_create / PMPI_Errhandler_create(f: Option<HandlerFn>, out: *mut Handle) -> c_int {
        unsafe { PMPI_Comm_create_errhandler(f, out) }
    }

    fn MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler(c: Handle, code: c_int) -> c_int {
        ret(comm("MPI_Comm_call_errhandler", c).map(|info| {
            if handler_of(c).is_some() {
                invoke(c, code);
            } else if !info.errors_return {
                state::fatal("MPI_Comm_call_errhandler", code, &format!("error code {code} raised by the program"));
            }
        }))
    }

    fn MPI_Add_error_class / PMPI_Add_error_class(out: *mut c_int) -> c_int {
        unsafe { *out = add(None) };
        0
    }

    fn MPI_Add_error_code / PMPI_Add_error_code(cls: c_int, out: *mut c_int) -> c_int {
        let known = (0..=61).contains(&cls) || added_class(cls) == Some(cls);
        if !known {
            return raise(None, "MPI_Add_error_code", class::ARG, &format!("{cls} is not an error class"));
        }
        unsafe { *out = add(Some(cls)) };
        0
    }

    fn MPI_Add_error_string / PMPI_Add_error_string(code: c_int, text: *const c_char) -> c_int {
        if added_class(code).is_none() {
            return raise(None, "MPI_Add_error_string", class::ARG, &format!("{code} is not a code the program added"));
        }
        if text.is_null() {
            return raise(None, "MPI_Add_error_string", class::ARG, "the string is NULL");
        }
        let s = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned();
        with(|t| {
            t.strings.retain(|e| e.0 != code);
            t.strings.push((code, s));
        });
        0
    }
}
