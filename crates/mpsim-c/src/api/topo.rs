//! Cartesian topologies, kept on the rank's side: a Cartesian communicator is a communicator
//! (made by a split of the old one: the ranks beyond the grid get `MPI_COMM_NULL`) plus its
//! dimensions and periods, and every query (`MPI_Cart_coords`, `MPI_Cart_shift`, ...) is
//! arithmetic here. `reorder` is accepted and ignored: ranks keep their order.

use std::ffi::c_int;

use mpsim_door::wire::{Op, class};

use super::{Res, comm, ret};
use crate::abi::*;
use crate::door;
use crate::state::{self, CommInfo, raise};

/// A Cartesian communicator's grid.
#[derive(Clone, Debug)]
pub struct Cart {
    pub dims: Vec<c_int>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// Coordinates of `rank`, row-major.
    pub fn coords(&self, mut rank: c_int) -> Vec<c_int> {
        let mut out = vec![0; self.dims.len()];
        for i in (0..self.dims.len()).rev() {
            let d = self.dims[i].max(1);
            out[i] = rank % d;
            rank /= d;
        }
        out
    }

    /// The rank at `coords` (periodic dimensions wrap), or `None` off a non-periodic edge.
    pub fn rank(&self, coords: &[c_int]) -> Option<c_int> {
        let mut r = 0;
        for (i, &c) in coords.iter().enumerate() {
            let d = self.dims[i].max(1);
            let c = if self.periods[i] {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return None;
            };
            r = r * d + c;
        }
        Some(r)
    }
}

fn cart(call: &str, c: Handle) -> Res<(std::sync::Arc<CommInfo>, Cart)> {
    let info = comm(call, c)?;
    let grid = state::with(|s| s.carts.get(&c).cloned()).ok_or_else(|| {
        raise(
            Some(c),
            call,
            class::TOPOLOGY,
            "the communicator has no Cartesian topology",
        )
    })?;
    Ok((info, grid))
}

unsafe fn ints<'a>(n: c_int, p: *const c_int) -> &'a [c_int] {
    if n <= 0 || p.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// Splits the factors of `n` over the free (zero) entries of `dims`, as evenly as possible,
/// largest first (MPI_Dims_create).
fn dims_create(n: c_int, dims: &mut [c_int]) -> Result<(), String> {
    let fixed: c_int = dims.iter().filter(|&&d| d > 0).product();
    if dims.iter().any(|&d| d < 0) {
        return Err("a negative dimension".into());
    }
    if fixed == 0 || n % fixed != 0 {
        return Err(format!("{n} ranks do not fill the dimensions given"));
    }
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    let mut rest = n / fixed;
    if free.is_empty() {
        return if rest == 1 {
            Ok(())
        } else {
            Err(format!("{n} ranks do not fill the dimensions given"))
        };
    }
    let mut factors = Vec::new();
    let mut f = 2;
    while rest > 1 {
        while rest % f == 0 {
            factors.push(f);
            rest /= f;
        }
        f += 1;
    }
    let mut out = vec![1; free.len()];
    for &f in factors.iter().rev() {
        let smallest = (0..out.len()).min_by_key(|&i| out[i]).unwrap_or(0);
        out[smallest] *= f;
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    for (k, &i) in free.iter().enumerate() {
        dims[i] = out[k];
    }
    Ok(())
}

mpi! {
    fn MPI_Dims_create / PMPI_Dims_create(n: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
        let d = if ndims <= 0 || dims.is_null() { &mut [][..] } else { unsafe { std::slice::from_raw_parts_mut(dims, ndims as usize) } };
        match dims_create(n, d) {
            Ok(()) => 0,
            Err(e) => raise(None, "MPI_Dims_create", class::DIMS, &e),
        }
    }

    fn MPI_Cart_create / PMPI_Cart_create(old: Handle, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Cart_create";
            let info = comm(call, old)?;
            let d = unsafe { ints(ndims, dims) }.to_vec();
            let p: Vec<bool> = unsafe { ints(ndims, periods) }.iter().map(|&x| x != 0).collect();
            let cells = d.iter().try_fold(1i64, |acc, &x| (x > 0).then_some(acc * x as i64));
            let cells = cells.ok_or_else(|| raise(Some(old), call, class::DIMS, "a dimension is not positive"))?;
            if cells > info.size as i64 {
                return Err(raise(Some(old), call, class::DIMS, &format!("a grid of {cells} cells on {} ranks", info.size)));
            }
            let color = if (info.rank as i64) < cells { 0 } else { -1 };
            let r = door::simple(Op::CommSplit, &[info.id, color, info.rank as i64], &[])
                .map_err(|f| state::failed(Some(old), call, f))?;
            let h = if r.v[0] == 0 {
                MPI_COMM_NULL
            } else {
                state::with(|s| {
                    let h = s.handle();
                    s.comms.insert(h, CommInfo::intra(r.v[0], r.v[1] as u32, r.v[2] as u32, info.errors_return).into());
                    s.carts.insert(h, Cart { dims: d, periods: p });
                    h
                })
            };
            unsafe { *out = h };
            Ok(())
        })())
    }

    fn MPI_Cartdim_get / PMPI_Cartdim_get(c: Handle, ndims: *mut c_int) -> c_int {
        ret(cart("MPI_Cartdim_get", c).map(|(_, g)| unsafe { *ndims = g.dims.len() as c_int }))
    }

    fn MPI_Cart_get / PMPI_Cart_get(c: Handle, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
        ret(cart("MPI_Cart_get", c).map(|(info, g)| {
            let me = g.coords(info.rank as c_int);
            let n = (maxdims.max(0) as usize).min(g.dims.len());
            for (i, ((&d, &p), &x)) in g.dims.iter().zip(&g.periods).zip(&me).take(n).enumerate() {
                unsafe {
                    *dims.add(i) = d;
                    *periods.add(i) = p as c_int;
                    *coords.add(i) = x;
                }
            }
        }))
    }

    fn MPI_Cart_coords / PMPI_Cart_coords(c: Handle, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
        ret((|| {
            let (info, g) = cart("MPI_Cart_coords", c)?;
            if !(0..info.size as c_int).contains(&rank) {
                return Err(raise(Some(c), "MPI_Cart_coords", class::RANK, &format!("rank {rank} is not in the communicator")));
            }
            for (i, x) in g.coords(rank).into_iter().enumerate().take(maxdims.max(0) as usize) {
                unsafe { *coords.add(i) = x };
            }
            Ok(())
        })())
    }

    fn MPI_Cart_rank / PMPI_Cart_rank(c: Handle, coords: *const c_int, rank: *mut c_int) -> c_int {
        ret((|| {
            let (_, g) = cart("MPI_Cart_rank", c)?;
            let xs = unsafe { ints(g.dims.len() as c_int, coords) };
            let r = g.rank(xs).ok_or_else(|| raise(Some(c), "MPI_Cart_rank", class::ARG, "coordinates off the grid"))?;
            unsafe { *rank = r };
            Ok(())
        })())
    }

    fn MPI_Cart_shift / PMPI_Cart_shift(c: Handle, direction: c_int, disp: c_int, source: *mut c_int, dest: *mut c_int) -> c_int {
        ret((|| {
            let (info, g) = cart("MPI_Cart_shift", c)?;
            let d = usize::try_from(direction).ok().filter(|&d| d < g.dims.len())
                .ok_or_else(|| raise(Some(c), "MPI_Cart_shift", class::ARG, &format!("direction {direction} is not a dimension")))?;
            let me = g.coords(info.rank as c_int);
            let at = |delta: c_int| {
                let mut x = me.clone();
                x[d] += delta;
                g.rank(&x).unwrap_or(MPI_PROC_NULL)
            };
            unsafe {
                *source = at(-disp);
                *dest = at(disp);
            }
            Ok(())
        })())
    }

    fn MPI_Cart_sub / PMPI_Cart_sub(c: Handle, remain: *const c_int, out: *mut Handle) -> c_int {
        ret((|| {
            let call = "MPI_Cart_sub";
            let (info, g) = cart(call, c)?;
            let keep: Vec<bool> = unsafe { ints(g.dims.len() as c_int, remain) }.iter().map(|&x| x != 0).collect();
            let me = g.coords(info.rank as c_int);
            // Color: the coordinates dropped; key: the rank in the kept ones.
            let (mut color, mut key) = (0i64, 0i64);
            for i in 0..g.dims.len() {
                if keep[i] {
                    key = key * g.dims[i] as i64 + me[i] as i64;
                } else {
                    color = color * g.dims[i] as i64 + me[i] as i64;
                }
            }
            let r = door::simple(Op::CommSplit, &[info.id, color, key], &[])
                .map_err(|f| state::failed(Some(c), call, f))?;
            let sub = Cart {
                dims: (0..g.dims.len()).filter(|&i| keep[i]).map(|i| g.dims[i]).collect(),
                periods: (0..g.dims.len()).filter(|&i| keep[i]).map(|i| g.periods[i]).collect(),
            };
            let h = state::with(|s| {
                let h = s.handle();
                s.comms.insert(h, CommInfo::intra(r.v[0], r.v[1] as u32, r.v[2] as u32, info.errors_return).into());
                s.carts.insert(h, sub);
                h
            });
            unsafe { *out = h };
            Ok(())
        })())
    }

    fn MPI_Topo_test / PMPI_Topo_test(c: Handle, status: *mut c_int) -> c_int {
        ret(comm("MPI_Topo_test", c).map(|_| unsafe {
            *status = if state::with(|s| s.carts.contains_key(&c)) {
                MPI_CART
            } else {
                super::neighbor::graph_kind(c).unwrap_or(MPI_UNDEFINED)
            };
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MPI_Dims_create's balanced factors, largest first, keeping fixed entries.
    #[test]
    fn dims_are_balanced() {
        let mut d = [0, 0];
        dims_create(12, &mut d).unwrap();
        assert_eq!(d, [4, 3]);
        let mut d = [0, 0, 0];
        dims_create(8, &mut d).unwrap();
        assert_eq!(d, [2, 2, 2]);
        let mut d = [0, 3];
        dims_create(6, &mut d).unwrap();
        assert_eq!(d, [2, 3]);
        assert!(dims_create(7, &mut [0, 2]).is_err());
    }

    /// Coordinates and ranks round-trip; a periodic dimension wraps, another ends.
    #[test]
    fn cart_coordinates() {
        let g = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(g.coords(5), [1, 2]);
        assert_eq!(g.rank(&[1, 3]), Some(3));
        assert_eq!(g.rank(&[2, 0]), None);
    }
}
