//! Element types: the plain-data types that may live in symmetric memory and cross the wire.

use zerocopy::{FromBytes, Immutable, IntoBytes};

/// A type that can be stored in symmetric memory and moved by put and get.
///
/// An element is plain data: every bit pattern is a valid value ([`FromBytes`]), it has no padding
/// and no interior pointers ([`IntoBytes`], [`Immutable`]). The primitive integers and floats and
/// arrays of elements are elements. A struct of your own becomes one with `#[derive(Element)]`
/// next to zerocopy's derives (zerocopy rejects structs with padding and says how many bytes):
///
/// ```
/// use shmem_core::prelude::*;
/// use zerocopy::{FromBytes, Immutable, IntoBytes};
///
/// #[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, Element)]
/// #[repr(C)]
/// struct Particle {
///     pos: [f64; 3],
///     id: u64,
/// }
///
/// fn takes_element<E: Element>() {}
/// takes_element::<Particle>();
/// takes_element::<[u32; 4]>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a symmetric element type",
    label = "not plain data that can live in symmetric memory",
    note = "element types are primitive integers and floats, arrays of elements, and `#[repr(C)]` \
            structs without padding that derive `Clone, Copy, FromBytes, IntoBytes, Immutable, Element`"
)]
pub trait Element: FromBytes + IntoBytes + Immutable + Copy + Send + Sync + 'static {}

macro_rules! primitive_elements {
    ($($t:ty)*) => { $(impl Element for $t {})* };
}
primitive_elements!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);

impl<E: Element, const N: usize> Element for [E; N] {}
