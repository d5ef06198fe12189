//! Derived datatypes and user operations: all local to the rank (datatypes never cross the
//! door; see `dtype.rs`).

use std::ffi::{c_char, c_int};

use mpsim_door::wire::class;

use super::envelope::combiner;
use super::{Res, ret};
use crate::abi::*;
use crate::dtype::Datatype;
use crate::state::{self, UserOp, raise};

pub(super) fn old(call: &str, h: Handle) -> Res<std::sync::Arc<Datatype>> {
    state::with(|s| s.datatype(h)).ok_or_else(|| {
        raise(
            None,
            call,
            class::TYPE,
            &format!("{h:#x} is not a datatype"),
        )
    })
}

fn n(call: &str, v: c_int) -> Res<usize> {
    usize::try_from(v).map_err(|_| raise(None, call, class::COUNT, &format!("negative count {v}")))
}

/// The datatype `made`, or `MPI_ERR_TYPE` when it holds too many separate runs of bytes
/// (`dtype::RUNS_LIMIT`).
pub(super) fn built(call: &str, made: Option<Datatype>) -> Res<Datatype> {
    made.ok_or_else(|| {
        raise(
            None,
            call,
            class::TYPE,
            &format!(
                "the datatype would hold more than {} separate runs of bytes, beyond this \
                 version's limit",
                crate::dtype::RUNS_LIMIT
            ),
        )
    })
}

pub(super) fn store(t: Datatype, out: *mut Handle) -> Res<()> {
    let h = state::with(|s| {
        let h = s.handle();
        s.types.insert(h, t.into());
        h
    });
    unsafe { *out = h };
    Ok(())
}

/// Records how datatype `*out` was made (`envelope.rs`).
fn made(
    out: *mut Handle,
    comb: i32,
    ints: Vec<c_int>,
    aints: Vec<isize>,
    types: &[Handle],
) -> Res<()> {
    super::envelope::record(unsafe { *out }, comb, ints, aints, types);
    Ok(())
}

unsafe fn slice<'a, T>(n: usize, p: *const T) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

mpi! {
    fn MPI_Type_contiguous / PMPI_Type_contiguous(count: c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_contiguous";
            let t = old(call, oldtype)?;
            store(built(call, Datatype::derived(&t, &[(0, n(call, count)?)], None))?, out)?;
            made(out, combiner::CONTIGUOUS, vec![count], vec![], &[oldtype])
        })())
    }

    fn MPI_Type_vector / PMPI_Type_vector(count: c_int, len: c_int, stride: c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_vector";
            let t = old(call, oldtype)?;
            let (count, len) = (n(call, count)?, n(call, len)?);
            let bytes = (stride as isize).checked_mul(t.extent);
            store(built(call, bytes.and_then(|s| Datatype::vector(&t, count, len, s)))?, out)?;
            made(out, combiner::VECTOR, vec![count as c_int, len as c_int, stride], vec![], &[oldtype])
        })())
    }

    fn MPI_Type_create_hvector / PMPI_Type_create_hvector(count: c_int, len: c_int, stride: isize, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_hvector";
            let t = old(call, oldtype)?;
            let (count, len) = (n(call, count)?, n(call, len)?);
            store(built(call, Datatype::vector(&t, count, len, stride))?, out)?;
            made(out, combiner::HVECTOR, vec![count as c_int, len as c_int], vec![stride], &[oldtype])
        })())
    }

    fn MPI_Type_indexed / PMPI_Type_indexed(count: c_int, lens: *const c_int, displs: *const c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_indexed";
            let t = old(call, oldtype)?;
            let k = n(call, count)?;
            let (l, d) = unsafe { (slice(k, lens), slice(k, displs)) };
            let blocks = l.iter().zip(d).map(|(&l, &d)| Ok((d as isize * t.extent, n(call, l)?))).collect::<Res<Vec<_>>>()?;
            store(built(call, Datatype::derived(&t, &blocks, None))?, out)?;
            made(out, combiner::INDEXED, [&[count][..], l, d].concat(), vec![], &[oldtype])
        })())
    }

    fn MPI_Type_create_hindexed / PMPI_Type_create_hindexed(count: c_int, lens: *const c_int, displs: *const isize, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_hindexed";
            let t = old(call, oldtype)?;
            let k = n(call, count)?;
            let (l, d) = unsafe { (slice(k, lens), slice(k, displs)) };
            let blocks = l.iter().zip(d).map(|(&l, &d)| Ok((d, n(call, l)?))).collect::<Res<Vec<_>>>()?;
            store(built(call, Datatype::derived(&t, &blocks, None))?, out)?;
            made(out, combiner::HINDEXED, [&[count][..], l].concat(), d.to_vec(), &[oldtype])
        })())
    }

    fn MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block(count: c_int, len: c_int, displs: *const c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_indexed_block";
            let t = old(call, oldtype)?;
            let k = n(call, count)?;
            let len = n(call, len)?;
            let d = unsafe { slice(k, displs) };
            let blocks: Vec<_> = d.iter().map(|&d| (d as isize * t.extent, len)).collect();
            store(built(call, Datatype::derived(&t, &blocks, None))?, out)?;
            made(out, combiner::INDEXED_BLOCK, [&[count, len as c_int][..], d].concat(), vec![], &[oldtype])
        })())
    }

    fn MPI_Type_create_struct / PMPI_Type_create_struct(count: c_int, lens: *const c_int, displs: *const isize, types: *const Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_struct";
            let k = n(call, count)?;
            let (l, d, ty) = unsafe { (slice(k, lens), slice(k, displs), slice(k, types)) };
            let olds = ty.iter().map(|&h| old(call, h)).collect::<Res<Vec<_>>>()?;
            let blocks = (0..k).map(|i| Ok((d[i], n(call, l[i])?, &*olds[i]))).collect::<Res<Vec<_>>>()?;
            store(built(call, Datatype::structure(&blocks))?, out)?;
            made(out, combiner::STRUCT, [&[count][..], l].concat(), d.to_vec(), ty)
        })())
    }

    fn MPI_Type_create_resized / PMPI_Type_create_resized(oldtype: Handle, lb: isize, extent: isize, out: *mut Handle) -> c_int {
        ret((|| {
            let t = old("MPI_Type_create_resized", oldtype)?;
            let r = Datatype { lb, extent, committed: false, predefined: false, name: String::new(), ..(*t).clone() };
            store(r, out)?;
            made(out, combiner::RESIZED, vec![], vec![lb, extent], &[oldtype])
        })())
    }

    fn MPI_Type_dup / PMPI_Type_dup(oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let t = old("MPI_Type_dup", oldtype)?;
            store(Datatype { predefined: false, ..(*t).clone() }, out)?;
            made(out, combiner::DUP, vec![], vec![], &[oldtype])?;
            super::attr::copy_all("MPI_Type_dup", oldtype, unsafe { *out })
        })())
    }

    fn MPI_Type_commit / PMPI_Type_commit(h: *mut Handle) -> c_int {
        ret((|| {
            let h = unsafe { *h };
            old("MPI_Type_commit", h)?;
            state::with(|s| {
                if let Some(t) = s.types.get_mut(&h) {
                    std::sync::Arc::make_mut(t).committed = true;
                }
            });
            Ok(())
        })())
    }

    fn MPI_Type_free / PMPI_Type_free(h: *mut Handle) -> c_int {
        ret((|| {
            let handle = unsafe { *h };
            let t = old("MPI_Type_free", handle)?;
            if t.predefined {
                return Err(raise(None, "MPI_Type_free", class::TYPE, &format!("{} is predefined and cannot be freed", t.name)));
            }
            super::attr::delete_all("MPI_Type_free", handle)?;
            state::with(|s| s.types.remove(&handle));
            super::envelope::forget(handle);
            unsafe { *h = MPI_DATATYPE_NULL };
            Ok(())
        })())
    }

    fn MPI_Type_size / PMPI_Type_size(h: Handle, size: *mut c_int) -> c_int {
        ret(old("MPI_Type_size", h).map(|t| unsafe { *size = c_int::try_from(t.size).unwrap_or(MPI_UNDEFINED) }))
    }

    fn MPI_Type_get_extent / PMPI_Type_get_extent(h: Handle, lb: *mut isize, extent: *mut isize) -> c_int {
        ret(old("MPI_Type_get_extent", h).map(|t| unsafe {
            *lb = t.lb;
            *extent = t.extent;
        }))
    }

    fn MPI_Type_get_true_extent / PMPI_Type_get_true_extent(h: Handle, lb: *mut isize, extent: *mut isize) -> c_int {
        ret(old("MPI_Type_get_true_extent", h).map(|t| unsafe {
            let lo = t.runs.iter().map(|r| r.bounds().0).min().unwrap_or(0);
            let hi = t.runs.iter().map(|r| r.bounds().1).max().unwrap_or(0);
            *lb = lo;
            *extent = hi - lo;
        }))
    }

    fn MPI_Type_get_name / PMPI_Type_get_name(h: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
        ret(old("MPI_Type_get_name", h).map(|t| unsafe {
            let given = state::with(|s| s.type_names.get(&h).cloned());
            let text = given.unwrap_or_else(|| t.name.clone());
            let k = text.len().min(MPI_MAX_OBJECT_NAME - 1);
            std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, k);
            *name.add(k) = 0;
            *len = k as c_int;
        }))
    }

    fn MPI_Type_set_name / PMPI_Type_set_name(h: Handle, name: *const c_char) -> c_int {
        ret((|| {
            let t = old("MPI_Type_set_name", h)?;
            let text = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned();
            state::with(|s| {
                if t.predefined {
                    s.type_names.insert(h, text);
                } else if let Some(t) = s.types.get_mut(&h) {
                    std::sync::Arc::make_mut(t).name = text;
                }
            });
            Ok(())
        })())
    }

    fn MPI_Op_create / PMPI_Op_create(f: Option<unsafe extern "C" fn(*mut libc::c_void, *mut libc::c_void, *mut c_int, *mut usize)>, commute: c_int, op: *mut Handle) -> c_int {
        ret((|| {
            let f = f.ok_or_else(|| raise(None, "MPI_Op_create", class::ARG, "the function is null"))?;
            let h = state::with(|s| {
                let h = s.handle();
                s.ops.insert(h, UserOp { f, commute: commute != 0 });
                h
            });
            unsafe { *op = h };
            Ok(())
        })())
    }

    fn MPI_Op_free / PMPI_Op_free(op: *mut Handle) -> c_int {
        ret((|| {
            let h = unsafe { *op };
            state::with(|s| s.ops.remove(&h))
                .ok_or_else(|| raise(None, "MPI_Op_free", class::OP, &format!("{h:#x} is not a user operation")))?;
            unsafe { *op = MPI_OP_NULL };
            Ok(())
        })())
    }

    fn MPI_Op_commutative / PMPI_Op_commutative(op: Handle, out: *mut c_int) -> c_int {
        let user = state::with(|s| s.ops.get(&op).map(|u| u.commute));
        unsafe { *out = user.unwrap_or(true) as c_int };
        0
    }
}
