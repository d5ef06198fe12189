//! How a derived datatype was made: `MPI_Type_get_envelope` (which constructor, how many
//! arguments) and `MPI_Type_get_contents` (the arguments), which generic code uses to walk a
//! datatype it was handed (serializers, I/O layers, tools).
//!
//! A datatype itself is flattened into byte runs (`dtype.rs`), so each constructor records its
//! call here, with a snapshot of the datatypes it was made from: MPI lets the program free
//! those before it asks, and `MPI_Type_get_contents` must still return equivalent ones (new
//! handles for derived ones, which the program frees; the same handle for predefined ones).

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

use mpsim_door::wire::class;

use super::ret;
use crate::abi::*;
use crate::dtype::Datatype;
use crate::state::{self, raise};

/// The combiners (`MPI_COMBINER_*`, mpi.h).
pub mod combiner {
    pub const NAMED: i32 = 101;
    pub const DUP: i32 = 102;
    pub const CONTIGUOUS: i32 = 103;
    pub const VECTOR: i32 = 104;
    pub const HVECTOR: i32 = 105;
    pub const INDEXED: i32 = 106;
    pub const HINDEXED: i32 = 107;
    pub const INDEXED_BLOCK: i32 = 108;
    pub const STRUCT: i32 = 110;
    pub const SUBARRAY: i32 = 111;
    pub const DARRAY: i32 = 112;
    pub const RESIZED: i32 = 116;
}

/// A datatype a constructor was given, as it was then.
#[derive(Clone, Debug)]
enum Part {
    Predefined(Handle),
    Derived(Box<(Datatype, Option<Recipe>)>),
}

/// One constructor call.
#[derive(Clone, Debug)]
struct Recipe {
    combiner: i32,
    ints: Vec<c_int>,
    aints: Vec<isize>,
    parts: Vec<Part>,
}

static RECIPES: Mutex<Option<HashMap<Handle, Recipe>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashMap<Handle, Recipe>) -> R) -> R {
    let mut g = RECIPES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// Records that datatype `made` came from `combiner` with these arguments (`types` as the
/// program named them).
pub fn record(made: Handle, combiner: i32, ints: Vec<c_int>, aints: Vec<isize>, types: &[Handle]) {
    let parts = types
        .iter()
        .map(|&t| match crate::dtype::predefined(t) {
            Some(_) => Part::Predefined(t),
            None => {
                let dt = state::with(|s| s.types.get(&t).cloned());
                let recipe = with(|m| m.get(&t).cloned());
                match dt {
                    Some(dt) => Part::Derived(Box::new(((*dt).clone(), recipe))),
                    None => Part::Predefined(MPI_DATATYPE_NULL),
                }
            }
        })
        .collect();
    with(|m| {
        m.insert(
            made,
            Recipe {
                combiner,
                ints,
                aints,
                parts,
            },
        )
    });
}

/// Forgets datatype `h` (freed).
pub fn forget(h: Handle) {
    with(|m| m.remove(&h));
}

/// The recipe of `h`, or `None` for a predefined datatype; an unknown handle is `MPI_ERR_TYPE`.
fn recipe(call: &str, h: Handle) -> Result<Option<Recipe>, c_int> {
    if crate::dtype::predefined(h).is_some() {
        return Ok(None);
    }
    match with(|m| m.get(&h).cloned()) {
        Some(r) => Ok(Some(r)),
        None => Err(raise(
            None,
            call,
            class::TYPE,
            &format!("{h:#x} is not a datatype"),
        )),
    }
}

/// A handle for `part`: the predefined one, or a new datatype equal to the snapshot.
fn handle_of(part: &Part) -> Handle {
    match part {
        Part::Predefined(h) => *h,
        Part::Derived(b) => {
            let (dt, recipe) = &**b;
            let h = state::with(|s| {
                let h = s.handle();
                s.types.insert(h, dt.clone().into());
                h
            });
            if let Some(r) = recipe {
                with(|m| m.insert(h, r.clone()));
            }
            h
        }
    }
}

mpi! {
    fn MPI_Type_get_envelope / PMPI_Type_get_envelope(dt: Handle, ni: *mut c_int, na: *mut c_int, nd: *mut c_int, comb: *mut c_int) -> c_int {
        ret(recipe("MPI_Type_get_envelope", dt).map(|r| unsafe {
            match r {
                None => {
                    (*ni, *na, *nd, *comb) = (0, 0, 0, combiner::NAMED);
                }
                Some(r) => {
                    *ni = r.ints.len() as c_int;
                    *na = r.aints.len() as c_int;
                    *nd = r.parts.len() as c_int;
                    *comb = r.combiner;
                }
            }
        }))
    }

    fn MPI_Type_get_contents / PMPI_Type_get_contents(dt: Handle, maxi: c_int, maxa: c_int, maxd: c_int, ints: *mut c_int, aints: *mut isize, types: *mut Handle) -> c_int {
        let call = "MPI_Type_get_contents";
        ret(recipe(call, dt).and_then(|r| {
            let Some(r) = r else {
                return Err(raise(None, call, class::ARG, "a predefined datatype has no contents (MPI_COMBINER_NAMED)"));
            };
            let fits = |n: usize, max: c_int| usize::try_from(max).is_ok_and(|m| m >= n);
            if !fits(r.ints.len(), maxi) || !fits(r.aints.len(), maxa) || !fits(r.parts.len(), maxd) {
                return Err(raise(None, call, class::ARG, &format!(
                    "the arrays hold {maxi}, {maxa}, {maxd}; the contents are {}, {}, {} (MPI_Type_get_envelope)",
                    r.ints.len(), r.aints.len(), r.parts.len()
                )));
            }
            unsafe {
                for (i, &v) in r.ints.iter().enumerate() {
                    *ints.add(i) = v;
                }
                for (i, &v) in r.aints.iter().enumerate() {
                    *aints.add(i) = v;
                }
                for (i, p) in r.parts.iter().enumerate() {
                    *types.add(i) = handle_of(p);
                }
            }
            Ok(())
        }))
    }
}
