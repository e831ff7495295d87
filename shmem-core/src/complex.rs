//! Complex element types for the `sum`/`prod` reductions (C's `float _Complex` and
//! `double _Complex`: `shmem_complexf_sum_reduce`, `shmem_complexd_prod_reduce`, ...).
//!
//! [`Complex32`] and [`Complex64`] are plain `#[repr(C)]` pairs (real part first), laid out as
//! C's complex types and as `num_complex::Complex<f32>`/`<f64>`; with the `num-complex` feature
//! they convert to and from those with `From`. They are elements: they live in symmetric memory
//! and move by put and get like any other.
//!
//! C's `long double` (x87 80-bit extended precision on x86-64, 128-bit IEEE on some other
//! targets) has no Rust counterpart on stable Rust: the `longdouble` reductions and RMA types
//! are not offered; `f64` is the widest floating type here.
//!
//! Base layer: uses `element` only (their `sum`/`prod` live with the reductions, in
//! `coll::reduce`).

use crate::element::Element;
use zerocopy::{FromBytes, Immutable, IntoBytes};

macro_rules! complex {
    ($(#[$doc:meta])* $name:ident, $t:ty, $c:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, FromBytes, IntoBytes, Immutable)]
        #[repr(C)]
        pub struct $name {
            /// Real part.
            pub re: $t,
            /// Imaginary part.
            pub im: $t,
        }

        impl $name {
            /// `re + im·i`.
            ///
            /// # Examples
            ///
            #[doc = concat!(
                "```\n",
                "use shmem_core::", stringify!($name), ";\n",
                "const Z: ", stringify!($name), " = ", stringify!($name), "::new(1.5, -2.0);\n",
                "assert_eq!((Z.re, Z.im), (1.5, -2.0));\n",
                "assert_eq!(", stringify!($name), "::new(0.0, 0.0), ",
                stringify!($name), "::default());\n",
                "```",
            )]
            pub const fn new(re: $t, im: $t) -> Self {
                $name { re, im }
            }
        }

        impl Element for $name {}

        #[cfg(feature = "num-complex")]
        impl From<num_complex::Complex<$t>> for $name {
            fn from(c: num_complex::Complex<$t>) -> Self {
                $name::new(c.re, c.im)
            }
        }

        #[cfg(feature = "num-complex")]
        impl From<$name> for num_complex::Complex<$t> {
            fn from(c: $name) -> Self {
                num_complex::Complex::new(c.re, c.im)
            }
        }

        const _: () = assert!(size_of::<$name>() == 2 * size_of::<$t>(), $c);
    };
}

complex! {
    /// A single-precision complex number (C's `float _Complex`, `num_complex::Complex32`).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// use shmem_core::Complex32;
    /// let world = shmem_core::init()?;
    /// let z = world.alloc::<Complex32>(1);
    /// world.team_world().prod_reduce(&z, &[Complex32::new(0.0, 1.0)]);
    /// // i to the power of the number of PEs.
    /// let want = [Complex32::new(1.0, 0.0), Complex32::new(0.0, 1.0),
    ///             Complex32::new(-1.0, 0.0), Complex32::new(0.0, -1.0)][world.n_pes() % 4];
    /// assert_eq!(z.local_get(0), want);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    Complex32, f32, "no padding"
}

complex! {
    /// A double-precision complex number (C's `double _Complex`, `num_complex::Complex64`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// use shmem_core::Complex64;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let total = world.alloc::<Complex64>(1);
    /// // Member p contributes p + i.
    /// team.sum_reduce(&total, &[Complex64::new(team.my_pe() as f64, 1.0)]);
    /// let n = team.n_pes() as f64;
    /// assert_eq!(total.local_get(0), Complex64::new(n * (n - 1.0) / 2.0, n));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    Complex64, f64, "no padding"
}

#[cfg(all(test, feature = "num-complex"))]
mod tests {
    use super::*;

    #[test]
    fn converts_to_and_from_num_complex() {
        let z = num_complex::Complex64::new(1.5, -2.0);
        let c: Complex64 = z.into();
        assert_eq!(c, Complex64::new(1.5, -2.0));
        assert_eq!(num_complex::Complex64::from(c), z);
    }
}
