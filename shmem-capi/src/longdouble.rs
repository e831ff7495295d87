//! C's `long double` (x87 80-bit extended precision, stored in 16 bytes on x86-64) as an element
//! type with the arithmetic the reductions need, computed by the x87 unit itself, so that the
//! results are the bits a C program would compute.

use shmem_core::{ReduceArith, ReduceSum};
use std::cmp::Ordering;

/// One C `long double`: its 16 bytes (the value in the low 10).
#[shmem_core::element]
pub struct LongDouble {
    /// The bytes as C stores them.
    pub bytes: [u8; 16],
}

#[cfg(target_arch = "x86_64")]
mod x87 {
    use std::arch::asm;

    /// The x87 binary operations used here.
    #[derive(Clone, Copy)]
    pub(super) enum Op {
        Add,
        Mul,
    }

    /// `a OP b` in extended precision.
    pub(super) fn binop(a: &[u8; 16], b: &[u8; 16], op: Op) -> [u8; 16] {
        let mut out = [0u8; 16];
        // SAFETY: each pointer addresses 16 valid bytes (10 are read or written); the sequence
        // pushes two values on the x87 stack and pops both, leaving it empty as the ABI requires;
        // the x87 registers it uses are declared clobbered.
        unsafe {
            match op {
                Op::Add => asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "faddp st(1), st",
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) a.as_ptr(),
                    b = in(reg) b.as_ptr(),
                    o = in(reg) out.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _,
                    options(nostack),
                ),
                Op::Mul => asm!(
                    "fld tbyte ptr [{a}]",
                    "fld tbyte ptr [{b}]",
                    "fmulp st(1), st",
                    "fstp tbyte ptr [{o}]",
                    a = in(reg) a.as_ptr(),
                    b = in(reg) b.as_ptr(),
                    o = in(reg) out.as_mut_ptr(),
                    out("st(0)") _, out("st(1)") _,
                    options(nostack),
                ),
            }
        }
        out
    }

    /// `(a > b, a < b, a == b)`; all false when either is NaN.
    pub(super) fn compare(a: &[u8; 16], b: &[u8; 16]) -> (bool, bool, bool) {
        let (gt, lt, eq, unordered): (u8, u8, u8, u8);
        // SAFETY: both pointers address 16 valid bytes; two values are pushed and both popped;
        // the x87 registers are declared clobbered.
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fcomip st, st(1)",
                "fstp st(0)",
                "seta {gt}",
                "setb {lt}",
                "sete {eq}",
                "setp {un}",
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                gt = out(reg_byte) gt,
                lt = out(reg_byte) lt,
                eq = out(reg_byte) eq,
                un = out(reg_byte) unordered,
                out("st(0)") _, out("st(1)") _,
                options(nostack),
            );
        }
        if unordered != 0 {
            (false, false, false)
        } else {
            (gt != 0, lt != 0 && eq == 0, eq != 0)
        }
    }
}

impl PartialEq for LongDouble {
    fn eq(&self, other: &Self) -> bool {
        x87::compare(&self.bytes, &other.bytes).2
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match x87::compare(&self.bytes, &other.bytes) {
            (true, _, _) => Some(Ordering::Greater),
            (_, true, _) => Some(Ordering::Less),
            (_, _, true) => Some(Ordering::Equal),
            _ => None,
        }
    }
}

impl ReduceSum for LongDouble {
    fn sum(a: Self, b: Self) -> Self {
        LongDouble {
            bytes: x87::binop(&a.bytes, &b.bytes, x87::Op::Add),
        }
    }
    fn prod(a: Self, b: Self) -> Self {
        LongDouble {
            bytes: x87::binop(&a.bytes, &b.bytes, x87::Op::Mul),
        }
    }
}

impl ReduceArith for LongDouble {}

#[cfg(test)]
mod tests {
    use super::*;

    /// 80-bit extended encodings of small integers (sign/exponent in bytes 8..10).
    fn ld(v: u64) -> LongDouble {
        let mut bytes = [0u8; 16];
        if v != 0 {
            let shift = v.leading_zeros();
            bytes[..8].copy_from_slice(&(v << shift).to_le_bytes());
            let exp = 16383 + 63 - shift as u16;
            bytes[8..10].copy_from_slice(&exp.to_le_bytes());
        }
        LongDouble { bytes }
    }

    #[test]
    fn arithmetic_and_order() {
        assert!(LongDouble::sum(ld(2), ld(3)) == ld(5));
        assert!(LongDouble::prod(ld(6), ld(7)) == ld(42));
        assert!(ld(3) > ld(2) && ld(2) < ld(3) && ld(4) == ld(4));
        assert_eq!(ld(1).partial_cmp(&ld(1)), Some(Ordering::Equal));
    }
}
