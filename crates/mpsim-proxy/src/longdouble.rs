//! Reductions on C's `long double` (`MPI_LONG_DOUBLE`, `MPI_LONG_DOUBLE_INT`), which Rust has
//! no type for. On x86-64 a `long double` is the x87 80-bit extended format in 16 bytes: the
//! sum and product run on the x87 unit itself (the C program's own arithmetic, bit for bit);
//! comparisons (`MPI_MIN`, `MPI_MAX`, `MPI_MINLOC`, `MPI_MAXLOC`) order the encoding exactly.
//! Elsewhere the sum and product are `MPI_ERR_OP` (not provided).

use bytemuck::{Pod, Zeroable};
use mpsim::Op;
use mpsim_door::wire::ReduceOp;

/// A `long double` as its 16 bytes.
#[derive(Clone, Copy, Zeroable, Pod)]
#[repr(C)]
pub(crate) struct Ld([u8; 16]);

/// `MPI_LONG_DOUBLE_INT` packed: the value, then the index.
#[derive(Clone, Copy, Zeroable, Pod)]
#[repr(C, packed)]
pub(crate) struct LdInt {
    value: Ld,
    index: i32,
}

impl Ld {
    /// A key that orders values as the numbers they encode (x87 extended: 64-bit significand
    /// with explicit integer bit in bytes 0..8, sign and 15-bit exponent in bytes 8..10);
    /// both zeros are equal.
    fn key(&self) -> i128 {
        let mant = u64::from_le_bytes(self.0[..8].try_into().unwrap_or([0; 8]));
        let se = u16::from_le_bytes([self.0[8], self.0[9]]);
        let mag = (((se & 0x7fff) as i128) << 64) | mant as i128;
        if se & 0x8000 != 0 { -mag } else { mag }
    }
}

/// `b = a + b` or `b = a * b` on the x87 unit.
#[cfg(target_arch = "x86_64")]
fn arith(a: &Ld, b: &mut Ld, product: bool) {
    let (pa, pb) = (a.0.as_ptr(), b.0.as_mut_ptr());
    // SAFETY: both point to 16 readable bytes (10 used), `pb` writable; the x87 stack is
    // left as found.
    unsafe {
        if product {
            std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "fmulp st(1), st",
                "fstp tbyte ptr [{b}]",
                a = in(reg) pa,
                b = in(reg) pb,
                out("st(0)") _,
                out("st(1)") _,
                options(nostack),
            );
        } else {
            std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "faddp st(1), st",
                "fstp tbyte ptr [{b}]",
                a = in(reg) pa,
                b = in(reg) pb,
                out("st(0)") _,
                out("st(1)") _,
                options(nostack),
            );
        }
    }
}

/// The operation `op` on `long double` values, if it has one here.
pub(crate) fn op(op: ReduceOp) -> Option<Op<Ld>> {
    let pick = |f: fn(i128, i128) -> bool| {
        Op::user(
            move |a: &[Ld], b: &mut [Ld]| {
                for (x, y) in a.iter().zip(b.iter_mut()) {
                    if f(x.key(), y.key()) {
                        *y = *x;
                    }
                }
            },
            true,
        )
    };
    match op {
        ReduceOp::Min => Some(pick(|a, b| a < b)),
        ReduceOp::Max => Some(pick(|a, b| a > b)),
        #[cfg(target_arch = "x86_64")]
        ReduceOp::Sum | ReduceOp::Prod => {
            let product = op == ReduceOp::Prod;
            Some(Op::user(
                move |a: &[Ld], b: &mut [Ld]| {
                    for (x, y) in a.iter().zip(b.iter_mut()) {
                        arith(x, y, product);
                    }
                },
                true,
            ))
        }
        _ => None,
    }
}

/// `MPI_MINLOC`/`MPI_MAXLOC` on `MPI_LONG_DOUBLE_INT`: on equal values the lower index wins.
pub(crate) fn loc(op: ReduceOp) -> Option<Op<LdInt>> {
    let max = match op {
        ReduceOp::Minloc => false,
        ReduceOp::Maxloc => true,
        _ => return None,
    };
    Some(Op::user(
        move |a: &[LdInt], b: &mut [LdInt]| {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                let (xv, yv) = ({ x.value }.key(), { y.value }.key());
                let (xi, yi) = ({ x.index }, { y.index });
                let better = if max { xv > yv } else { xv < yv };
                if better || (xv == yv && xi < yi) {
                    *y = *x;
                }
            }
        },
        true,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(bytes10: [u8; 10]) -> Ld {
        let mut b = [0u8; 16];
        b[..10].copy_from_slice(&bytes10);
        Ld(b)
    }

    /// 1.0, 2.0 and -3.0 in x87 extended: ordered as numbers; on x86-64, 1 + 2 = 3 and
    /// 2 * -3 = -6 exactly.
    #[test]
    fn long_double_orders_and_computes() {
        let one = ld([0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]);
        let two = ld([0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x40]);
        let minus3 = ld([0, 0, 0, 0, 0, 0, 0, 0xc0, 0x00, 0xc0]);
        assert!(one.key() < two.key() && minus3.key() < one.key());
        #[cfg(target_arch = "x86_64")]
        {
            let mut s = two;
            arith(&one, &mut s, false);
            assert_eq!(s.0[..10], [0, 0, 0, 0, 0, 0, 0, 0xc0, 0x00, 0x40]);
            let mut p = minus3;
            arith(&two, &mut p, true);
            assert_eq!(p.0[..10], [0, 0, 0, 0, 0, 0, 0, 0xc0, 0x01, 0xc0]);
        }
    }
}
