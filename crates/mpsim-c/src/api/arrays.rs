//! Datatypes that cut a multidimensional array: `MPI_Type_create_subarray` (a box of it) and
//! `MPI_Type_create_darray` (one process's share under a block or cyclic distribution, as HPF
//! defines them). Stencil and I/O codes build their halo and file views this way.
//!
//! Both come down to the rows of the array they select: each row is a run of the fastest
//! dimension, made into a block of the old type at its byte offset. The result spans the whole
//! array (lower bound 0, extent the array's), as MPI says, so `count` of them step from one
//! array to the next.

use std::ffi::c_int;

use mpsim_door::wire::class;

use super::types::{old, store};
use super::{Res, ret};
use crate::abi::*;
use crate::dtype::Datatype;
use crate::state::raise;

unsafe fn ints<'a>(n: usize, p: *const c_int) -> &'a [c_int] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

fn bad(call: &str, what: String) -> c_int {
    raise(None, call, class::ARG, &what)
}

/// Dimensions from the fastest-varying last: C order as given, Fortran order reversed.
fn by_order(call: &str, order: c_int, ndims: usize) -> Res<Vec<usize>> {
    match order {
        MPI_ORDER_C => Ok((0..ndims).collect()),
        MPI_ORDER_FORTRAN => Ok((0..ndims).rev().collect()),
        o => Err(bad(
            call,
            format!("order {o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
        )),
    }
}

/// The blocks of `old` that select, in an array of `sizes` (dimension order `dims`, fastest
/// last), the indices `owned[d]` (ranges, increasing) of each dimension; and the array's
/// extent.
fn rows(
    old: &Datatype,
    sizes: &[usize],
    dims: &[usize],
    owned: &[Vec<(usize, usize)>],
) -> (Vec<(isize, usize)>, isize) {
    let k = dims.len();
    let mut stride = vec![0isize; sizes.len()];
    let mut s = old.extent;
    for &d in dims.iter().rev() {
        stride[d] = s;
        s *= sizes[d] as isize;
    }
    let fast = dims[k - 1];
    // Every index of each outer dimension, then every combination in row-major order.
    let outer: Vec<Vec<usize>> = dims[..k - 1]
        .iter()
        .map(|&d| owned[d].iter().flat_map(|&(a, b)| a..b).collect())
        .collect();
    let mut blocks = Vec::new();
    if outer.iter().all(|o| !o.is_empty()) {
        let mut at = vec![0usize; k - 1];
        'all: loop {
            let base: isize = dims[..k - 1]
                .iter()
                .zip(&at)
                .zip(&outer)
                .map(|((&d, &i), o)| o[i] as isize * stride[d])
                .sum();
            for &(a, b) in &owned[fast] {
                if b > a {
                    blocks.push((base + a as isize * stride[fast], b - a));
                }
            }
            for j in (0..k - 1).rev() {
                at[j] += 1;
                if at[j] < outer[j].len() {
                    continue 'all;
                }
                at[j] = 0;
            }
            break;
        }
    }
    (blocks, s)
}

/// A non-negative array argument.
fn size(call: &str, what: &str, d: usize, v: c_int) -> Res<usize> {
    usize::try_from(v).map_err(|_| bad(call, format!("{what}[{d}] is {v}")))
}

/// One process's indices of a dimension of `g` elements spread over `p` processes; this one
/// is at coordinate `c` (MPI's darray distributions).
fn share(
    call: &str,
    d: usize,
    g: usize,
    dist: c_int,
    darg: c_int,
    p: usize,
    c: usize,
) -> Res<Vec<(usize, usize)>> {
    let default = darg == MPI_DISTRIBUTE_DFLT_DARG;
    if !default && darg <= 0 {
        return Err(bad(call, format!("dargs[{d}] is {darg}")));
    }
    match dist {
        MPI_DISTRIBUTE_NONE => {
            if p != 1 {
                return Err(bad(
                    call,
                    format!("dimension {d} is not distributed but psizes[{d}] is {p}"),
                ));
            }
            Ok(vec![(0, g)])
        }
        MPI_DISTRIBUTE_BLOCK => {
            let b = if default {
                g.div_ceil(p)
            } else {
                darg as usize
            };
            if b * p < g {
                return Err(bad(
                    call,
                    format!(
                        "blocks of {b} over {p} processes do not cover the {g} elements of dimension {d}"
                    ),
                ));
            }
            Ok(vec![((c * b).min(g), ((c + 1) * b).min(g))])
        }
        MPI_DISTRIBUTE_CYCLIC => {
            let b = if default { 1 } else { darg as usize };
            let mut out = Vec::new();
            let mut start = c * b;
            while start < g {
                out.push((start, (start + b).min(g)));
                start += p * b;
            }
            Ok(out)
        }
        other => Err(bad(call, format!("distribs[{d}] is {other}"))),
    }
}

mpi! {
    fn MPI_Type_create_subarray / PMPI_Type_create_subarray(ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_subarray";
            let k = usize::try_from(ndims).ok().filter(|&k| k > 0).ok_or_else(|| bad(call, format!("ndims is {ndims}")))?;
            let (sz, sub, st) = unsafe { (ints(k, sizes), ints(k, subsizes), ints(k, starts)) };
            let t = old(call, oldtype)?;
            let mut full = Vec::with_capacity(k);
            let mut owned = Vec::with_capacity(k);
            for d in 0..k {
                let (n, m, s) = (size(call, "sizes", d, sz[d])?, size(call, "subsizes", d, sub[d])?, size(call, "starts", d, st[d])?);
                if n == 0 || m > n || s > n - m {
                    return Err(bad(call, format!("dimension {d}: {m} elements from {s} do not fit in {n}")));
                }
                full.push(n);
                owned.push(vec![(s, s + m)]);
            }
            let dims = by_order(call, order, k)?;
            let (blocks, extent) = rows(&t, &full, &dims, &owned);
            store(super::types::built(call, Datatype::derived(&t, &blocks, Some((0, extent))))?, out)?;
            let ints = [&[ndims][..], sz, sub, st, &[order]].concat();
            super::envelope::record(unsafe { *out }, super::envelope::combiner::SUBARRAY, ints, vec![], &[oldtype]);
            Ok(())
        })())
    }

    fn MPI_Type_create_darray / PMPI_Type_create_darray(nprocs: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, oldtype: Handle, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Type_create_darray";
            let k = usize::try_from(ndims).ok().filter(|&k| k > 0).ok_or_else(|| bad(call, format!("ndims is {ndims}")))?;
            let (gs, ds, da, ps) = unsafe { (ints(k, gsizes), ints(k, distribs), ints(k, dargs), ints(k, psizes)) };
            let t = old(call, oldtype)?;
            let procs: Vec<usize> = (0..k).map(|d| size(call, "psizes", d, ps[d]).and_then(|p| if p == 0 { Err(bad(call, format!("psizes[{d}] is 0"))) } else { Ok(p) })).collect::<Res<_>>()?;
            if procs.iter().product::<usize>() != nprocs.max(0) as usize {
                return Err(bad(call, format!("the process grid {procs:?} does not hold {nprocs} processes")));
            }
            let me = usize::try_from(rank).ok().filter(|&r| r < nprocs.max(0) as usize).ok_or_else(|| raise(None, call, class::RANK, &format!("rank {rank} is not in 0..{nprocs}")))?;
            // The process grid is row-major whatever the array's order (as MPI_Cart_create's).
            let mut coords = vec![0usize; k];
            let mut r = me;
            for d in (0..k).rev() {
                coords[d] = r % procs[d];
                r /= procs[d];
            }
            let mut full = Vec::with_capacity(k);
            let mut owned = Vec::with_capacity(k);
            for d in 0..k {
                let g = size(call, "gsizes", d, gs[d])?;
                owned.push(share(call, d, g, ds[d], da[d], procs[d], coords[d])?);
                full.push(g);
            }
            let dims = by_order(call, order, k)?;
            let (blocks, extent) = rows(&t, &full, &dims, &owned);
            store(super::types::built(call, Datatype::derived(&t, &blocks, Some((0, extent))))?, out)?;
            let ints = [&[nprocs, rank, ndims][..], gs, ds, da, ps, &[order]].concat();
            super::envelope::record(unsafe { *out }, super::envelope::combiner::DARRAY, ints, vec![], &[oldtype]);
            Ok(())
        })())
    }
}
