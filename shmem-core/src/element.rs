//! Element types: the plain-data types that may live in symmetric memory and cross the wire.
//!
//! Base layer: uses nothing of the crate; every layer moves elements.

use zerocopy::{FromBytes, Immutable, IntoBytes};

/// A type that can be stored in symmetric memory and moved by put and get.
///
/// An element is plain data: every bit pattern is a valid value ([`FromBytes`]), it has no padding
/// and no interior pointers ([`IntoBytes`], [`Immutable`]). The primitive integers and floats and
/// arrays of elements are elements. A struct of your own becomes one with
/// [`#[element]`](macro@crate::element), which brings everything else (the zerocopy derives that
/// check the fields and the padding, `Clone`, `Copy`, `#[repr(C)]`); your crate needs no other
/// dependency than shmem-core:
///
/// ```
/// use shmem_core::prelude::*;
///
/// #[element]
/// struct Particle {
///     pos: [f64; 3],
///     id: u64,
/// }
///
/// #[symmetric]
/// static PARTICLES: [Particle; 2] = [Particle { pos: [0.0; 3], id: 0 }; 2];
///
/// fn takes_element<E: Element>() {}
/// takes_element::<Particle>();
/// takes_element::<[u32; 4]>();
/// ```
///
/// A struct with padding is rejected, with a message that says how many bytes. A struct that
/// already derives zerocopy's `FromBytes`, `IntoBytes` and `Immutable` itself can derive
/// [`Element`](derive@crate::Element) alone instead.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a symmetric element type",
    label = "not plain data that can live in symmetric memory",
    note = "element types are primitive integers and floats, arrays of elements, and structs of \
            elements marked `#[shmem_core::element]`"
)]
pub trait Element: FromBytes + IntoBytes + Immutable + Copy + Send + Sync + 'static {}

macro_rules! primitive_elements {
    ($($t:ty)*) => { $(impl Element for $t {})* };
}
primitive_elements!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);

impl<E: Element, const N: usize> Element for [E; N] {}
