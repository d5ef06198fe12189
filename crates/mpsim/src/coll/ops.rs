//! Reduction operations ([`Op`]): MPI's built-ins, typed so that an operation a type has no
//! meaning for does not compile (a bitwise `and` of `f64`s, a `minloc` of plain numbers), and
//! the program's own, with a flag saying whether they commute.
//!
//! Order: every operation is taken to be associative, as MPI does; a reduction combines the
//! ranks' contributions as `x0 ⊕ x1 ⊕ ... ⊕ x(n-1)` in rank order unless the operation is
//! commutative and the algorithm reorders them (`docs/collectives.md` says which do). Either
//! way each element is combined in one fixed order the whole run agrees on, so every rank gets
//! the same bits.

use std::fmt;
use std::rc::Rc;

use bytemuck::{Pod, Zeroable};

/// Numbers that add, multiply and compare: `sum`, `prod`, `min`, `max` (and the value side of
/// `minloc`, `maxloc`). Integers wrap on overflow (MPI leaves it undefined); `min(a, b)` and
/// `max(a, b)` of floating-point numbers give `a`, the lower ranks' value, when either is NaN.
pub trait Arithmetic: Pod + PartialOrd {
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
}

/// Integers: the bitwise (`band`, `bor`, `bxor`) and logical (`land`, `lor`, `lxor`: non-zero
/// is true, the result is 1 or 0) operations, and the index side of `minloc`, `maxloc`.
pub trait Integer: Arithmetic + Ord {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
    /// Whether it is non-zero.
    fn truth(self) -> bool;
    /// 1 or 0.
    fn of_truth(b: bool) -> Self;
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
        }
        impl Integer for $t {
            fn and(a: Self, b: Self) -> Self { a & b }
            fn or(a: Self, b: Self) -> Self { a | b }
            fn xor(a: Self, b: Self) -> Self { a ^ b }
            fn truth(self) -> bool { self != 0 }
            fn of_truth(b: bool) -> Self { Self::from(b) }
        }
    )*};
}
integers!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            fn add(a: Self, b: Self) -> Self { a + b }
            fn mul(a: Self, b: Self) -> Self { a * b }
        }
    )*};
}
floats!(f32, f64);

/// A value and where it came from, for `minloc` and `maxloc` (MPI's `MPI_DOUBLE_INT` and kin):
/// `Loc { value: 2.5f64, index: 7i32 }`. Packed, so that any pair of [`Arithmetic`] value and
/// [`Integer`] index is plain data; read its fields by value (`{ loc.value }`).
#[derive(Clone, Copy, Zeroable, Pod, PartialEq)]
#[repr(C, packed)]
pub struct Loc<V, I> {
    /// The value compared.
    pub value: V,
    /// Its index (a rank, a position): on equal values the lower one wins.
    pub index: I,
}

impl<V: Arithmetic + fmt::Debug, I: Integer + fmt::Debug> fmt::Debug for Loc<V, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (value, index) = (self.value, self.index);
        f.debug_struct("Loc")
            .field("value", &value)
            .field("index", &index)
            .finish()
    }
}

/// An element-wise operation `a ⊕ b`.
type Elementwise<T> = fn(T, T) -> T;

/// The program's operation: `f(a, b)` sets `b[i] = a[i] ⊕ b[i]`.
type UserFn<T> = dyn Fn(&[T], &mut [T]);

/// What an operation runs.
#[derive(Clone)]
enum Kind<T> {
    /// A built-in, element by element.
    Builtin(Elementwise<T>),
    /// The program's: `f(a, b)` sets `b[i] = a[i] ⊕ b[i]`, `a` the lower ranks' part.
    User(Rc<UserFn<T>>),
}

/// A reduction operation on `T`s (MPI's `MPI_Op`): a built-in, or the program's own.
///
/// ```
/// use mpsim::{Launcher, Loc, Op};
/// Launcher::new(3)
///     .run(|world| async move {
///         let me = world.rank();
///         let mut sum = [0u64; 2];
///         world.allreduce(&[u64::from(me), 1], &mut sum, &Op::sum()).await?;
///         assert_eq!(sum, [3, 3]);
///         // Where the largest value is: the rank that has it.
///         let mine = [Loc { value: f64::from(me % 2), index: me }];
///         let mut max = [Loc { value: 0.0, index: 0 }];
///         world.allreduce(&mine, &mut max, &Op::maxloc()).await?;
///         assert_eq!(({ max[0].value }, { max[0].index }), (1.0, 1));
///         // The program's own, in rank order: ranks 0, 1, 2 give "012".
///         let concat = Op::user(|a: &[u32], b: &mut [u32]| b[0] = a[0] * 10 + b[0], false);
///         let mut digits = [0u32];
///         world.reduce(&[me], &mut digits, &concat, 0).await?;
///         if me == 0 {
///             assert_eq!(digits, [12]);
///         }
///         Ok(())
///     })
///     .expect("reductions");
/// ```
///
/// A bitwise operation on floating-point numbers does not compile:
///
/// ```compile_fail,E0599
/// let and = mpsim::Op::<f64>::band();
/// ```
#[derive(Clone)]
pub struct Op<T> {
    kind: Kind<T>,
    commutative: bool,
    name: &'static str,
}

impl<T: Pod> Op<T> {
    /// The program's own operation: `f(a, b)` must set each `b[i]` to `a[i] ⊕ b[i]`, where
    /// `a` holds the contribution of lower ranks (MPI's `invec` and `inoutvec`), for slices of
    /// any length. `commutative` says whether `a ⊕ b == b ⊕ a`; if not, every algorithm
    /// chosen combines in rank order (those that cannot are not chosen, and forcing one is
    /// `Error::InvalidOp`).
    pub fn user(f: impl Fn(&[T], &mut [T]) + 'static, commutative: bool) -> Self {
        Op {
            kind: Kind::User(Rc::new(f)),
            commutative,
            name: "user",
        }
    }

    /// Whether the operation commutes.
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }

    /// Its name (`"sum"`, ..., `"user"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn builtin(name: &'static str, f: Elementwise<T>) -> Self {
        Op {
            kind: Kind::Builtin(f),
            commutative: true,
            name,
        }
    }

    /// `b = a ⊕ b`, element by element, here and now (MPI's `MPI_Reduce_local`: `a` is
    /// `inbuf`, `b` is `inoutbuf`). Slices of different lengths are `Error::InvalidArgument`.
    ///
    /// ```
    /// use mpsim::Op;
    /// let mut acc = [1, 2, 3];
    /// Op::sum().reduce_local(&[10, 20, 30], &mut acc)?;
    /// assert_eq!(acc, [11, 22, 33]);
    /// let before = |a: &[i32], b: &mut [i32]| b[0] = a[0] * 10 + b[0];
    /// let mut x = [2];
    /// Op::user(before, false).reduce_local(&[1], &mut x)?;
    /// assert_eq!(x, [12]);
    /// assert!(Op::<i32>::max().reduce_local(&[1, 2], &mut [3]).is_err());
    /// # Ok::<(), mpsim::Error>(())
    /// ```
    pub fn reduce_local(&self, a: &[T], b: &mut [T]) -> crate::Result<()> {
        if a.len() != b.len() {
            return Err(crate::Error::InvalidArgument {
                what: format!(
                    "reduce_local: {} elements in and {} in-out (the same number is needed)",
                    a.len(),
                    b.len()
                ),
            });
        }
        self.reduce_right(a, b);
        Ok(())
    }

    /// `b = a ⊕ b`, element by element (`a` the lower ranks' part).
    pub(crate) fn reduce_right(&self, a: &[T], b: &mut [T]) {
        debug_assert_eq!(a.len(), b.len());
        match &self.kind {
            Kind::Builtin(f) => {
                for (x, y) in a.iter().zip(b.iter_mut()) {
                    *y = f(*x, *y);
                }
            }
            Kind::User(f) => f(a, b),
        }
    }

    /// `a = a ⊕ b`, element by element (`a` the lower ranks' part).
    pub(crate) fn reduce_left(&self, a: &mut [T], b: &[T]) {
        debug_assert_eq!(a.len(), b.len());
        match &self.kind {
            Kind::Builtin(f) => {
                for (x, y) in a.iter_mut().zip(b.iter()) {
                    *x = f(*x, *y);
                }
            }
            Kind::User(f) => {
                let mut out = b.to_vec();
                f(a, &mut out);
                a.copy_from_slice(&out);
            }
        }
    }
}

impl<T: Arithmetic> Op<T> {
    /// Sum (MPI's `MPI_SUM`).
    pub fn sum() -> Self {
        Op::builtin("sum", T::add)
    }

    /// Product (`MPI_PROD`).
    pub fn prod() -> Self {
        Op::builtin("prod", T::mul)
    }

    /// Minimum (`MPI_MIN`).
    pub fn min() -> Self {
        Op::builtin("min", |a, b| if b < a { b } else { a })
    }

    /// Maximum (`MPI_MAX`).
    pub fn max() -> Self {
        Op::builtin("max", |a, b| if b > a { b } else { a })
    }
}

impl<T: Integer> Op<T> {
    /// Bitwise and (`MPI_BAND`).
    pub fn band() -> Self {
        Op::builtin("band", T::and)
    }

    /// Bitwise or (`MPI_BOR`).
    pub fn bor() -> Self {
        Op::builtin("bor", T::or)
    }

    /// Bitwise exclusive or (`MPI_BXOR`).
    pub fn bxor() -> Self {
        Op::builtin("bxor", T::xor)
    }

    /// Logical and (`MPI_LAND`): 1 when both are non-zero, else 0.
    pub fn land() -> Self {
        Op::builtin("land", |a: T, b: T| T::of_truth(a.truth() && b.truth()))
    }

    /// Logical or (`MPI_LOR`).
    pub fn lor() -> Self {
        Op::builtin("lor", |a: T, b: T| T::of_truth(a.truth() || b.truth()))
    }

    /// Logical exclusive or (`MPI_LXOR`).
    pub fn lxor() -> Self {
        Op::builtin("lxor", |a: T, b: T| T::of_truth(a.truth() != b.truth()))
    }
}

impl<V: Arithmetic, I: Integer> Op<Loc<V, I>> {
    /// The smallest value and its index, the lowest index among equal values (`MPI_MINLOC`).
    pub fn minloc() -> Self {
        Op::builtin("minloc", |a, b| {
            let (av, bv, ai, bi) = (a.value, b.value, a.index, b.index);
            if bv < av || (bv == av && bi < ai) {
                b
            } else {
                a
            }
        })
    }

    /// The largest value and its index, the lowest index among equal values (`MPI_MAXLOC`).
    pub fn maxloc() -> Self {
        Op::builtin("maxloc", |a, b| {
            let (av, bv, ai, bi) = (a.value, b.value, a.index, b.index);
            if bv > av || (bv == av && bi < ai) {
                b
            } else {
                a
            }
        })
    }
}

impl<T> fmt::Debug for Op<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Op")
            .field("name", &self.name)
            .field("commutative", &self.commutative)
            .finish()
    }
}
