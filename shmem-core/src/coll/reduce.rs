//! Reductions on teams: the OpenSHMEM reduction type sets ([`ReduceSum`], [`ReduceArith`],
//! [`ReduceBitwise`]) with their impls (the complex types' included), `*_reduce` and their
//! in-place forms, and the sum scans.
//!
//! Part of the collectives layer; uses `coll::collectives` (the scans and the size checks),
//! `coll::mailbox` (the all-reduce), `coll::large` (the large ones), `ops::rma`, and the base
//! modules.

use super::collectives::{check_fits, own_copy, scan_chunks};
use super::large::{self, Source};
use super::mailbox;
use super::team::Team;
use crate::complex::{Complex32, Complex64};
use crate::element::Element;
use crate::ops::rma::SymmetricArray;
use crate::transport::collective::Coll;

/// Element types with the OpenSHMEM `sum` and `prod` reductions: the integer types, `f32`,
/// `f64` and the complex types ([`Complex32`],
/// [`Complex64`]).
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // The total over the team, for any type with a sum reduction.
/// fn team_total<E: ReduceSum>(world: &World, team: &Team<'_>, mine: E) -> E {
///     let out = world.alloc::<E>(1);
///     team.sum_reduce(&out, &[mine]);
///     out.local_get(0)
/// }
/// let world = shmem_core::init()?;
/// let team = world.team_world();
/// let n = team.n_pes();
/// assert_eq!(team_total(&world, &team, 1.5f64), 1.5 * n as f64);
/// assert_eq!(team_total(&world, &team, 2u8), (2 * n) as u8); // wrapping, as in C
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no sum or product reductions in OpenSHMEM",
    note = "sum and prod reductions exist for the integer types, f32, f64, Complex32 and Complex64"
)]
pub trait ReduceSum: Element {
    /// `a + b` (wrapping for integers).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{Complex32, ReduceSum};
    /// assert_eq!(<u8 as ReduceSum>::sum(250, 10), 4); // wrapping
    /// let (a, b) = (Complex32::new(1.0, 2.0), Complex32::new(0.5, -2.0));
    /// assert_eq!(Complex32::sum(a, b), Complex32::new(1.5, 0.0));
    /// ```
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::{Complex64, ReduceSum};
    /// assert_eq!(<i32 as ReduceSum>::prod(-6, 7), -42);
    /// let i = Complex64::new(0.0, 1.0);
    /// assert_eq!(Complex64::prod(i, i), Complex64::new(-1.0, 0.0));
    /// ```
    fn prod(a: Self, b: Self) -> Self;
}

/// Element types with all the OpenSHMEM arithmetic reductions (`sum`, `prod`, `max`, `min`):
/// the ordered ones, integers and `f32`, `f64`.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // The spread (max - min) of one value per member, for any ordered reducible type.
/// fn spread<E: ReduceArith + std::ops::Sub<Output = E>>(world: &World, mine: E) -> E {
///     let team = world.team_world();
///     let (hi, lo) = (world.alloc::<E>(1), world.alloc::<E>(1));
///     team.max_reduce(&hi, &[mine]);
///     team.min_reduce(&lo, &[mine]);
///     hi.local_get(0) - lo.local_get(0)
/// }
/// let world = shmem_core::init()?;
/// assert_eq!(spread(&world, world.my_pe() as i64), world.n_pes() as i64 - 1);
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no max or min reductions in OpenSHMEM",
    note = "max and min reductions exist for the integer types and f32, f64"
)]
pub trait ReduceArith: ReduceSum + PartialOrd {}

/// Element types with the OpenSHMEM bitwise reductions (`and`, `or`, `xor`).
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // Whether every member agrees on a set of flags, for any integer type.
/// fn all_agree<E: ReduceBitwise + PartialEq>(world: &World, flags: E) -> bool {
///     let team = world.team_world();
///     let (all, any) = (world.alloc::<E>(1), world.alloc::<E>(1));
///     team.and_reduce(&all, &[flags]);
///     team.or_reduce(&any, &[flags]);
///     all.local_get(0) == any.local_get(0)
/// }
/// let world = shmem_core::init()?;
/// assert!(all_agree(&world, 0b1010u32));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bitwise reductions in OpenSHMEM",
    note = "and, or and xor reductions exist for the integer types"
)]
pub trait ReduceBitwise: Element {
    /// `a & b`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::ReduceBitwise;
    /// assert_eq!(<u8 as ReduceBitwise>::and(0b1100, 0b1010), 0b1000);
    /// ```
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::ReduceBitwise;
    /// assert_eq!(<u8 as ReduceBitwise>::or(0b1100, 0b1010), 0b1110);
    /// ```
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::ReduceBitwise;
    /// assert_eq!(<i16 as ReduceBitwise>::xor(0b1100, 0b1010), 0b0110);
    /// ```
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
    ($(
        $(#[$doc:meta])* $name:ident,
        $(#[$in_doc:meta])* $in_place:ident: $tr:ident => $op:expr;
    )*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
            self.reduce_into(dest, Source::Slice(source), $op, stringify!($name));
        }

        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") in place: ")]
        /// the source is this PE's own copy of `dest` (all of it; use
        /// [`slice`](crate::SymmetricArray::slice) for part of an array), as C's
        /// `dest == source`.
        $(#[$in_doc])*
        #[track_caller]
        pub fn $in_place<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A) {
            self.reduce_into(dest, Source::InPlace, $op, stringify!($in_place));
        }
    )*};
}

impl Team<'_> {
    /// Reduces element-wise over the members, result in `dest[..len]` on every member (`len`:
    /// the source's length, or all of `dest` in place). Large reductions (on one node, those
    /// that would take the mailbox more than one exchange; see [`large::min_bytes`]) read the
    /// members' memory straight, by loads (this node's PEs, whatever `UCX_TLS` says) or UCX
    /// gets ([`large`]); the others go through the mailbox.
    #[track_caller]
    fn reduce_into<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: Source<'_, E>,
        op: impl Fn(E, E) -> E + Copy,
        name: &str,
    ) {
        let len = match source {
            Source::Slice(s) => s.len(),
            Source::InPlace => dest.len(),
        };
        let at = dest.__heap_offset();
        let bytes = len * size_of::<E>();
        let large = self.n_pes() > 1 && bytes >= large::min_bytes(self, at, size_of::<E>());
        // Members that passed lengths on both sides of the threshold wait in different ways;
        // the two kinds let a wait that goes on too long name them.
        let _in = self.enter(if large {
            Coll::ReduceLarge
        } else {
            Coll::Reduce
        });
        check_fits(dest, len, name);
        if large {
            dest.__transport().check_live();
            large::reduce(self, at, source, len, op, name);
            return;
        }
        let mut out = match source {
            Source::Slice(s) => s.to_vec(),
            Source::InPlace => own_copy(dest),
        };
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
        sum_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let (me, n) = (team.my_pe() as u64, team.n_pes() as u64);
        /// let a = world.alloc::<u64>(1);
        /// a.local_set(0, me + 1);
        /// team.sum_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0), n * (n + 1) / 2);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        sum_reduce_in_place: ReduceSum => E::sum;
        /// `shmem_prod_reduce`: element-wise product.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<u64>(1);
        /// team.prod_reduce(&out, &[2]); // 2 from every member
        /// assert_eq!(out.local_get(0), 2u64.wrapping_pow(team.n_pes() as u32));
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_prod_reduce")]
        prod_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<f64>(2);
        /// a.local_write(.., &[0.5, -1.0]);
        /// team.prod_reduce_in_place(&a);
        /// let n = team.n_pes() as i32;
        /// assert_eq!((a.local_get(0), a.local_get(1)), (0.5f64.powi(n), (-1.0f64).powi(n)));
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        prod_reduce_in_place: ReduceSum => E::prod;
        /// `shmem_max_reduce`: element-wise maximum.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<i32>(2);
        /// let me = team.my_pe() as i32;
        /// team.max_reduce(&out, &[me, -me]);
        /// let n = team.n_pes() as i32;
        /// assert_eq!((out.local_get(0), out.local_get(1)), (n - 1, 0));
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_max_reduce")]
        max_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<f32>(1);
        /// a.local_set(0, team.my_pe() as f32 * 1.5);
        /// team.max_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0), (team.n_pes() - 1) as f32 * 1.5);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        max_reduce_in_place: ReduceArith => max_of;
        /// `shmem_min_reduce`: element-wise minimum.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<u32>(1);
        /// team.min_reduce(&out, &[10 + team.my_pe() as u32]);
        /// assert_eq!(out.local_get(0), 10);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_min_reduce")]
        min_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<i64>(1);
        /// a.local_set(0, -(team.my_pe() as i64));
        /// team.min_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0), 1 - team.n_pes() as i64);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        min_reduce_in_place: ReduceArith => min_of;
        /// `shmem_and_reduce`: element-wise bitwise and.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<u32>(1);
        /// // Odd members add bit 0; member 0 is even, so it is cleared in the result.
        /// team.and_reduce(&out, &[0b1110 | (team.my_pe() as u32 & 1)]);
        /// assert_eq!(out.local_get(0), 0b1110);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_and_reduce")]
        and_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<u8>(1);
        /// a.local_set(0, 0xf0 | team.my_pe() as u8 % 2);
        /// team.and_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0), 0xf0);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        and_reduce_in_place: ReduceBitwise => E::and;
        /// `shmem_or_reduce`: element-wise bitwise or.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<u64>(1);
        /// team.or_reduce(&out, &[1 << (team.my_pe() % 64)]); // one bit per member
        /// assert_eq!(out.local_get(0).count_ones() as usize, team.n_pes().min(64));
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_or_reduce")]
        or_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<u16>(1);
        /// a.local_set(0, 1 << (team.my_pe() % 16));
        /// team.or_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0) & 1, 1); // member 0's bit
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        or_reduce_in_place: ReduceBitwise => E::or;
        /// `shmem_xor_reduce`: element-wise bitwise xor.
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let out = world.alloc::<u64>(1);
        /// team.xor_reduce(&out, &[team.my_pe() as u64 + 1]);
        /// let want = (1..=team.n_pes() as u64).fold(0, |x, v| x ^ v);
        /// assert_eq!(out.local_get(0), want);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_xor_reduce")]
        xor_reduce,
        ///
        /// # Examples
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let a = world.alloc::<i32>(1);
        /// a.local_set(0, -1); // all bits set on every member
        /// team.xor_reduce_in_place(&a);
        /// assert_eq!(a.local_get(0), if team.n_pes() % 2 == 1 { -1 } else { 0 });
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        xor_reduce_in_place: ReduceBitwise => E::xor;
    }

    /// `shmem_sum_inscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..=p`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let me = team.my_pe() as u64;
    /// let dest = world.alloc::<u64>(2);
    /// team.sum_inscan(&dest, &[1, me]);
    /// assert_eq!((dest.local_get(0), dest.local_get(1)), (me + 1, me * (me + 1) / 2));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_sum_inscan")]
    #[track_caller]
    pub fn sum_inscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        let _in = self.enter(Coll::Scan);
        check_fits(dest, source.len(), "sum_inscan");
        let mut out = source.to_vec();
        scan_chunks(self, source, &mut out, E::sum, true);
        dest.local_write(0..out.len(), &out);
    }

    /// `shmem_sum_exscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..p` (zero on PE 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let dest = world.alloc::<u32>(1);
    /// team.sum_exscan(&dest, &[1]);
    /// assert_eq!(dest.local_get(0), team.my_pe() as u32); // one from each member before me
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_sum_exscan")]
    #[track_caller]
    pub fn sum_exscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        let _in = self.enter(Coll::Scan);
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
