//! Reductions on teams: the OpenSHMEM reduction type sets ([`ReduceSum`], [`ReduceArith`],
//! [`ReduceBitwise`]) with their impls (the complex types' included), `*_reduce` and their
//! in-place forms, and the sum scans.
//!
//! Part of the collectives layer; uses `coll::collectives` (the scans and the size checks),
//! `coll::mailbox` (the all-reduce), `ops::rma`, and the base modules.

use super::collectives::{check_fits, own_copy, scan_chunks};
use super::mailbox;
use super::team::Team;
use crate::complex::{Complex32, Complex64};
use crate::element::Element;
use crate::ops::rma::SymmetricArray;

/// Element types with the OpenSHMEM `sum` and `prod` reductions: the integer types, `f32`,
/// `f64` and the complex types ([`Complex32`],
/// [`Complex64`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no sum or product reductions in OpenSHMEM",
    note = "sum and prod reductions exist for the integer types, f32, f64, Complex32 and Complex64"
)]
pub trait ReduceSum: Element {
    /// `a + b` (wrapping for integers).
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    fn prod(a: Self, b: Self) -> Self;
}

/// Element types with all the OpenSHMEM arithmetic reductions (`sum`, `prod`, `max`, `min`):
/// the ordered ones, integers and `f32`, `f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no max or min reductions in OpenSHMEM",
    note = "max and min reductions exist for the integer types and f32, f64"
)]
pub trait ReduceArith: ReduceSum + PartialOrd {}

/// Element types with the OpenSHMEM bitwise reductions (`and`, `or`, `xor`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bitwise reductions in OpenSHMEM",
    note = "and, or and xor reductions exist for the integer types"
)]
pub trait ReduceBitwise: Element {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
}

macro_rules! reduce_ints {
    ($($t:ty)*) => {$(
        impl ReduceSum for $t {
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
        }
        impl ReduceArith for $t {}
        impl ReduceBitwise for $t {
            fn and(a: Self, b: Self) -> Self { a & b }
            fn or(a: Self, b: Self) -> Self { a | b }
            fn xor(a: Self, b: Self) -> Self { a ^ b }
        }
    )*};
}
reduce_ints!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

macro_rules! reduce_floats {
    ($($t:ty)*) => {$(
        impl ReduceSum for $t {
            fn sum(a: Self, b: Self) -> Self { a + b }
            fn prod(a: Self, b: Self) -> Self { a * b }
        }
        impl ReduceArith for $t {}
    )*};
}
reduce_floats!(f32 f64);

macro_rules! reduce_complex {
    ($($t:ident)*) => {$(
        impl ReduceSum for $t {
            fn sum(a: Self, b: Self) -> Self {
                $t::new(a.re + b.re, a.im + b.im)
            }
            fn prod(a: Self, b: Self) -> Self {
                $t::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
            }
        }
    )*};
}
reduce_complex!(Complex32 Complex64);

fn max_of<E: PartialOrd>(a: E, b: E) -> E {
    if b > a { b } else { a }
}

fn min_of<E: PartialOrd>(a: E, b: E) -> E {
    if b < a { b } else { a }
}

macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident, $in_place:ident: $tr:ident => $op:expr;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
            self.reduce_into(dest, source, $op, stringify!($name));
        }

        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") in place: ")]
        /// the source is this PE's own copy of `dest` (all of it; use
        /// [`slice`](crate::SymmetricArray::slice) for part of an array), as C's
        /// `dest == source`.
        #[track_caller]
        pub fn $in_place<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A) {
            let source = own_copy(dest);
            self.reduce_into(dest, &source, $op, stringify!($in_place));
        }
    )*};
}

impl Team<'_> {
    /// Reduces element-wise over the members, result in `dest[..source.len()]` on every member.
    #[track_caller]
    fn reduce_into<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        op: fn(E, E) -> E,
        name: &str,
    ) {
        check_fits(dest, source.len(), name);
        let mut out = source.to_vec();
        mailbox::allreduce(self, &mut out, op, name);
        dest.local_write(0..out.len(), &out);
    }

    reductions! {
        /// `shmem_sum_reduce`: element-wise sum over the team into `dest` on every member.
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let total = world.alloc::<u64>(1);
        /// team.sum_reduce(&total, &[team.my_pe() as u64 + 1]);
        /// let n = team.n_pes() as u64;
        /// assert_eq!(total.local_get(0), n * (n + 1) / 2);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_sum_reduce")]
        sum_reduce, sum_reduce_in_place: ReduceSum => E::sum;
        /// `shmem_prod_reduce`: element-wise product.
        #[doc(alias = "shmem_prod_reduce")]
        prod_reduce, prod_reduce_in_place: ReduceSum => E::prod;
        /// `shmem_max_reduce`: element-wise maximum.
        #[doc(alias = "shmem_max_reduce")]
        max_reduce, max_reduce_in_place: ReduceArith => max_of;
        /// `shmem_min_reduce`: element-wise minimum.
        #[doc(alias = "shmem_min_reduce")]
        min_reduce, min_reduce_in_place: ReduceArith => min_of;
        /// `shmem_and_reduce`: element-wise bitwise and.
        #[doc(alias = "shmem_and_reduce")]
        and_reduce, and_reduce_in_place: ReduceBitwise => E::and;
        /// `shmem_or_reduce`: element-wise bitwise or.
        #[doc(alias = "shmem_or_reduce")]
        or_reduce, or_reduce_in_place: ReduceBitwise => E::or;
        /// `shmem_xor_reduce`: element-wise bitwise xor.
        #[doc(alias = "shmem_xor_reduce")]
        xor_reduce, xor_reduce_in_place: ReduceBitwise => E::xor;
    }

    /// `shmem_sum_inscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..=p`.
    #[doc(alias = "shmem_sum_inscan")]
    #[track_caller]
    pub fn sum_inscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        check_fits(dest, source.len(), "sum_inscan");
        let mut out = source.to_vec();
        scan_chunks(self, source, &mut out, E::sum, true);
        dest.local_write(0..out.len(), &out);
    }

    /// `shmem_sum_exscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..p` (zero on PE 0).
    #[doc(alias = "shmem_sum_exscan")]
    #[track_caller]
    pub fn sum_exscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        check_fits(dest, source.len(), "sum_exscan");
        let mut out = source.to_vec();
        scan_chunks(self, source, &mut out, E::sum, false);
        dest.local_write(0..out.len(), &out);
    }
}

#[cfg(test)]
mod tests {
    use super::ReduceSum;
    use crate::complex::{Complex32, Complex64};

    #[test]
    fn complex_sum_and_product() {
        let c = Complex64::new(1.5, -2.0);
        assert_eq!(Complex64::sum(c, c), Complex64::new(3.0, -4.0));
        // (1.5 - 2i)^2 = 2.25 - 4 - 6i, exact in binary floating point.
        assert_eq!(Complex64::prod(c, c), Complex64::new(-1.75, -6.0));
        let i = Complex32::new(0.0, 1.0);
        assert_eq!(Complex32::prod(i, i), Complex32::new(-1.0, 0.0));
        #[cfg(feature = "num-complex")]
        {
            let z = num_complex::Complex64::from(c);
            assert_eq!(num_complex::Complex64::from(Complex64::prod(c, c)), z * z);
        }
    }
}
