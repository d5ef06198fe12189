//! Attribute caching (MPI §7.7): keyvals, and values a program hangs on its communicators and
//! datatypes, with the copy callbacks `MPI_Comm_dup`/`MPI_Type_dup` call and the delete
//! callbacks `MPI_Comm_free`/`MPI_Type_free`, a replaced or deleted value and `MPI_Finalize`
//! (for `MPI_COMM_SELF`, then `MPI_COMM_WORLD`) call. Libraries keep their per-communicator
//! state this way, so a program that links one needs it even if it never says "attribute".
//!
//! All of it lives in the rank's process, where the callbacks' code is: nothing crosses the
//! door. Callbacks may call MPI (and usually do), so no lock is held while one runs.
//!
//! Choices where MPI leaves room: a new object's attributes are copied, and an object's
//! attributes deleted, in the order they were first set (copy) and in the reverse order (delete),
//! the order MPI requires for `MPI_COMM_SELF` at finalize. Keyvals are numbered from 1,024 up
//! and never reused.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use mpsim_door::wire::class;

use super::{comm, ret};
use crate::abi::*;
use crate::state::{self, raise};

/// What an attribute hangs on: keyvals of one kind only serve objects of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Comm,
    Type,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "communicator",
            Kind::Type => "datatype",
        }
    }
}

/// `MPI_Comm_copy_attr_function` (and the type and legacy forms: same shape).
type CopyFn =
    unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function` (and the type and legacy forms).
type DeleteFn = unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut c_void) -> c_int;

/// A copy callback: the two the standard ABI names by value, or the program's.
#[derive(Clone, Copy, Debug)]
enum Copy {
    /// `MPI_COMM_NULL_COPY_FN` (0): the new object does not get the attribute.
    Null,
    /// `MPI_COMM_DUP_FN` (1): it gets the same value.
    Dup,
    Program(CopyFn),
}

/// A keyval.
#[derive(Clone, Copy, Debug)]
struct Keyval {
    kind: Kind,
    copy: Copy,
    delete: Option<DeleteFn>,
    extra: usize,
    /// Freed by the program: no new attribute may use it; existing ones stay until deleted.
    freed: bool,
}

#[derive(Default)]
struct Table {
    keyvals: Vec<Keyval>,
    /// Per object: (keyval, value), in the order first set.
    values: Vec<(Handle, Vec<(c_int, usize)>)>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    keyvals: Vec::new(),
    values: Vec::new(),
});

const FIRST_KEYVAL: c_int = 1024;

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    f(&mut TABLE.lock().unwrap_or_else(|p| p.into_inner()))
}

impl Table {
    fn keyval(&self, k: c_int) -> Option<Keyval> {
        let i = usize::try_from(k.checked_sub(FIRST_KEYVAL)?).ok()?;
        self.keyvals.get(i).copied()
    }

    fn of(&mut self, obj: Handle) -> Option<&mut Vec<(c_int, usize)>> {
        self.values
            .iter_mut()
            .find(|(o, _)| *o == obj)
            .map(|(_, v)| v)
    }
}

fn copy_fn(p: usize) -> Copy {
    match p {
        0 => Copy::Null,
        1 => Copy::Dup,
        // SAFETY: a non-sentinel copy callback is a function of this shape (MPI's contract).
        f => Copy::Program(unsafe { std::mem::transmute::<usize, CopyFn>(f) }),
    }
}

fn delete_fn(p: usize) -> Option<DeleteFn> {
    // SAFETY: as for `copy_fn`; 0 is `MPI_COMM_NULL_DELETE_FN`.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, DeleteFn>(p) })
}

/// Makes a keyval of `kind`.
fn create(kind: Kind, copy: usize, delete: usize, extra: usize) -> c_int {
    with(|t| {
        t.keyvals.push(Keyval {
            kind,
            copy: copy_fn(copy),
            delete: delete_fn(delete),
            extra,
            freed: false,
        });
        FIRST_KEYVAL + t.keyvals.len() as c_int - 1
    })
}

/// The keyval `k` of `kind`, or `MPI_ERR_KEYVAL` (a freed one only when `allow_freed`).
fn keyval(call: &str, k: c_int, kind: Kind, allow_freed: bool) -> Result<Keyval, c_int> {
    match with(|t| t.keyval(k)) {
        Some(kv) if kv.kind == kind && (allow_freed || !kv.freed) => Ok(kv),
        Some(kv) if kv.kind != kind => Err(raise(
            None,
            call,
            MPI_ERR_KEYVAL,
            &format!("keyval {k} is a {} keyval", kv.kind.name()),
        )),
        Some(_) => Err(raise(
            None,
            call,
            MPI_ERR_KEYVAL,
            &format!("keyval {k} was freed"),
        )),
        None => Err(raise(
            None,
            call,
            MPI_ERR_KEYVAL,
            &format!("{k} is not a keyval"),
        )),
    }
}

/// Runs `kv`'s delete callback on `obj`'s value `v`; its error is the call's.
fn run_delete(call: &str, obj: Handle, k: c_int, kv: &Keyval, v: usize) -> Result<(), c_int> {
    let Some(f) = kv.delete else { return Ok(()) };
    // SAFETY: the program's callback, called as MPI says.
    let rc = unsafe { f(obj, k, v as *mut c_void, kv.extra as *mut c_void) };
    if rc != 0 {
        return Err(raise(
            None,
            call,
            rc,
            &format!("the delete callback of keyval {k} returned {rc}"),
        ));
    }
    Ok(())
}

/// Sets `obj`'s attribute `k` to `v`, deleting the value it replaces.
fn set(call: &str, kind: Kind, obj: Handle, k: c_int, v: usize) -> Result<(), c_int> {
    let kv = keyval(call, k, kind, false)?;
    let old = with(|t| {
        t.of(obj)
            .and_then(|l| l.iter().find(|e| e.0 == k).map(|e| e.1))
    });
    if let Some(old) = old {
        run_delete(call, obj, k, &kv, old)?;
    }
    with(|t| {
        if t.of(obj).is_none() {
            t.values.push((obj, Vec::new()));
        }
        let list = t.of(obj).expect("just made");
        match list.iter_mut().find(|e| e.0 == k) {
            Some(e) => e.1 = v,
            None => list.push((k, v)),
        }
    });
    Ok(())
}

/// `obj`'s attribute `k`, if set.
fn get(call: &str, kind: Kind, obj: Handle, k: c_int) -> Result<Option<usize>, c_int> {
    keyval(call, k, kind, true)?;
    Ok(with(|t| {
        t.of(obj)
            .and_then(|l| l.iter().find(|e| e.0 == k).map(|e| e.1))
    }))
}

/// Deletes `obj`'s attribute `k` (its delete callback runs); deleting one that is not set does
/// nothing.
fn delete(call: &str, kind: Kind, obj: Handle, k: c_int) -> Result<(), c_int> {
    let kv = keyval(call, k, kind, true)?;
    let old = with(|t| {
        t.of(obj)
            .and_then(|l| l.iter().find(|e| e.0 == k).map(|e| e.1))
    });
    if let Some(v) = old {
        run_delete(call, obj, k, &kv, v)?;
        with(|t| {
            if let Some(l) = t.of(obj) {
                l.retain(|e| e.0 != k);
            }
        });
    }
    Ok(())
}

/// Deletes every attribute of `obj`, newest first (before the object goes: `MPI_Comm_free`,
/// `MPI_Type_free`, `MPI_Finalize`).
pub fn delete_all(call: &str, obj: Handle) -> Result<(), c_int> {
    loop {
        let last = with(|t| t.of(obj).and_then(|l| l.last().copied()));
        let Some((k, v)) = last else { break };
        let kv = with(|t| t.keyval(k));
        with(|t| {
            if let Some(l) = t.of(obj) {
                l.pop();
            }
        });
        if let Some(kv) = kv {
            run_delete(call, obj, k, &kv, v)?;
        }
    }
    with(|t| t.values.retain(|(o, _)| *o != obj));
    Ok(())
}

/// Gives `new` (a dup of `old`) the attributes `old`'s copy callbacks pass on.
pub fn copy_all(call: &str, old: Handle, new: Handle) -> Result<(), c_int> {
    let list = with(|t| t.of(old).cloned()).unwrap_or_default();
    for (k, v) in list {
        let Some(kv) = with(|t| t.keyval(k)) else {
            continue;
        };
        let out = match kv.copy {
            Copy::Null => None,
            Copy::Dup => Some(v),
            Copy::Program(f) => {
                let (mut out, mut flag): (usize, c_int) = (0, 0);
                // SAFETY: the program's callback, called as MPI says: `attribute_val_out` is
                // the address of a `void *`.
                let rc = unsafe {
                    f(
                        old,
                        k,
                        kv.extra as *mut c_void,
                        v as *mut c_void,
                        (&raw mut out).cast(),
                        &mut flag,
                    )
                };
                if rc != 0 {
                    return Err(raise(
                        None,
                        call,
                        rc,
                        &format!("the copy callback of keyval {k} returned {rc}"),
                    ));
                }
                (flag != 0).then_some(out)
            }
        };
        if let Some(out) = out {
            with(|t| {
                if t.of(new).is_none() {
                    t.values.push((new, Vec::new()));
                }
                t.of(new).expect("just made").push((k, out));
            });
        }
    }
    Ok(())
}

/// The value of a predefined attribute (`MPI_TAG_UB`, ...) on a communicator, if `k` is one.
fn predefined(k: c_int) -> Option<*mut c_int> {
    static mut TAG_UB_VALUE: c_int = TAG_UB;
    static mut NO_HOST: c_int = MPI_PROC_NULL;
    static mut WTIME_GLOBAL: c_int = 0;
    static mut UNIVERSE: c_int = 0;
    static mut APPNUM: c_int = 0;
    static mut LASTUSED: c_int = 0;
    // SAFETY: the rank's process only; the values are written here, before the address is
    // handed out, and the program only reads them.
    unsafe {
        Some(match k {
            MPI_TAG_UB => &raw mut TAG_UB_VALUE,
            MPI_HOST | MPI_IO => &raw mut NO_HOST,
            MPI_WTIME_IS_GLOBAL => {
                // Virtual time is one clock for all ranks under `sim`; real clocks under
                // `threads` are one host's clock too.
                WTIME_GLOBAL = 1;
                &raw mut WTIME_GLOBAL
            }
            MPI_UNIVERSE_SIZE => {
                UNIVERSE = state::with(|s| s.size) as c_int;
                &raw mut UNIVERSE
            }
            MPI_APPNUM => &raw mut APPNUM,
            MPI_LASTUSEDCODE => {
                LASTUSED = super::errh::last_used_code();
                &raw mut LASTUSED
            }
            _ => return None,
        })
    }
}

/// `MPI_Comm_get_attr`'s answer in the form C expects (`*value` is the attribute's `void *`).
unsafe fn answer(found: Option<usize>, value: *mut c_void, flag: *mut c_int) {
    unsafe {
        *flag = found.is_some() as c_int;
        if let Some(v) = found {
            *value.cast::<usize>() = v;
        }
    }
}

/// The datatype `h` exists (predefined or made), or `MPI_ERR_TYPE`.
fn type_exists(call: &str, h: Handle) -> Result<(), c_int> {
    match state::with(|s| s.datatype(h)) {
        Some(_) => Ok(()),
        None => Err(raise(
            None,
            call,
            class::TYPE,
            &format!("{h:#x} is not a datatype"),
        )),
    }
}

unsafe fn put_keyval(out: *mut c_int, k: c_int) {
    unsafe { *out = k };
}

unsafe fn free_keyval(call: &str, kind: Kind, k: *mut c_int) -> c_int {
    let key = unsafe { *k };
    ret(keyval(call, key, kind, false).map(|_| {
        with(|t| {
            if let Some(kv) = t.keyvals.get_mut((key - FIRST_KEYVAL) as usize) {
                kv.freed = true;
            }
        });
        unsafe { *k = MPI_KEYVAL_INVALID };
    }))
}

mpi! {
    fn MPI_Comm_create_keyval / PMPI_Comm_create_keyval(copy: usize, delete: usize, k: *mut c_int, extra: *mut c_void) -> c_int {
        unsafe { put_keyval(k, create(Kind::Comm, copy, delete, extra as usize)) };
        0
    }

    fn MPI_Comm_free_keyval / PMPI_Comm_free_keyval(k: *mut c_int) -> c_int {
        unsafe { free_keyval("MPI_Comm_free_keyval", Kind::Comm, k) }
    }

    fn MPI_Comm_set_attr / PMPI_Comm_set_attr(c: Handle, k: c_int, v: *mut c_void) -> c_int {
        let call = "MPI_Comm_set_attr";
        ret(comm(call, c).and_then(|_| {
            if predefined(k).is_some() {
                return Err(raise(Some(c), call, MPI_ERR_KEYVAL, &format!("keyval {k} is predefined and cannot be set")));
            }
            set(call, Kind::Comm, c, k, v as usize)
        }))
    }

    fn MPI_Comm_get_attr / PMPI_Comm_get_attr(c: Handle, k: c_int, value: *mut c_void, flag: *mut c_int) -> c_int {
        let call = "MPI_Comm_get_attr";
        ret(comm(call, c).and_then(|_| {
            let found = match predefined(k) {
                Some(p) => Some(p as usize),
                None => get(call, Kind::Comm, c, k)?,
            };
            unsafe { answer(found, value, flag) };
            Ok(())
        }))
    }

    fn MPI_Comm_delete_attr / PMPI_Comm_delete_attr(c: Handle, k: c_int) -> c_int {
        let call = "MPI_Comm_delete_attr";
        ret(comm(call, c).and_then(|_| delete(call, Kind::Comm, c, k)))
    }

    fn MPI_Type_create_keyval / PMPI_Type_create_keyval(copy: usize, delete: usize, k: *mut c_int, extra: *mut c_void) -> c_int {
        unsafe { put_keyval(k, create(Kind::Type, copy, delete, extra as usize)) };
        0
    }

    fn MPI_Type_free_keyval / PMPI_Type_free_keyval(k: *mut c_int) -> c_int {
        unsafe { free_keyval("MPI_Type_free_keyval", Kind::Type, k) }
    }

    fn MPI_Type_set_attr / PMPI_Type_set_attr(t: Handle, k: c_int, v: *mut c_void) -> c_int {
        let call = "MPI_Type_set_attr";
        ret(type_exists(call, t).and_then(|_| set(call, Kind::Type, t, k, v as usize)))
    }

    fn MPI_Type_get_attr / PMPI_Type_get_attr(t: Handle, k: c_int, value: *mut c_void, flag: *mut c_int) -> c_int {
        let call = "MPI_Type_get_attr";
        ret(type_exists(call, t).and_then(|_| {
            let found = get(call, Kind::Type, t, k)?;
            unsafe { answer(found, value, flag) };
            Ok(())
        }))
    }

    fn MPI_Type_delete_attr / PMPI_Type_delete_attr(t: Handle, k: c_int) -> c_int {
        let call = "MPI_Type_delete_attr";
        ret(type_exists(call, t).and_then(|_| delete(call, Kind::Type, t, k)))
    }

    // MPI-1's names, removed in MPI-3.0 and kept by MPICH and Open MPI for older programs.
    fn MPI_Keyval_create / PMPI_Keyval_create(copy: usize, delete: usize, k: *mut c_int, extra: *mut c_void) -> c_int {
        unsafe { put_keyval(k, create(Kind::Comm, copy, delete, extra as usize)) };
        0
    }

    fn MPI_Keyval_free / PMPI_Keyval_free(k: *mut c_int) -> c_int {
        unsafe { free_keyval("MPI_Keyval_free", Kind::Comm, k) }
    }

    fn MPI_Attr_put / PMPI_Attr_put(c: Handle, k: c_int, v: *mut c_void) -> c_int {
        unsafe { PMPI_Comm_set_attr(c, k, v) }
    }

    fn MPI_Attr_get / PMPI_Attr_get(c: Handle, k: c_int, value: *mut c_void, flag: *mut c_int) -> c_int {
        unsafe { PMPI_Comm_get_attr(c, k, value, flag) }
    }

    fn MPI_Attr_delete / PMPI_Attr_delete(c: Handle, k: c_int) -> c_int {
        unsafe { PMPI_Comm_delete_attr(c, k) }
    }
}
