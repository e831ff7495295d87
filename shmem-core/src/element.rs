//! Element types: the plain-data types that may live in symmetric memory and cross the wire.

use zerocopy::{FromBytes, Immutable, IntoBytes};

/// A type that can be stored in symmetric memory and moved by put and get.
///
/// An element is plain data: every bit pattern is a valid value ([`FromBytes`]), it has no padding
/// and no interior pointers ([`IntoBytes`], [`Immutable`]). The primitive integers and floats and
/// arrays of them are elements. A struct of your own becomes one by deriving zerocopy's traits
/// (`zerocopy` rejects structs with padding and says how many bytes):
///
/// ```
/// use shmem_core::prelude::*;
/// use zerocopy::{FromBytes, Immutable, IntoBytes};
///
/// #[derive(Clone, Copy, FromBytes, IntoBytes, Immutable)]
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
    note = "element types are primitive integers and floats, arrays of them, and `#[repr(C)]` structs \
            without padding that derive zerocopy's `FromBytes`, `IntoBytes` and `Immutable` (plus `Clone, Copy`)"
)]
pub trait Element: FromBytes + IntoBytes + Immutable + Copy + Send + Sync + 'static {}

impl<T> Element for T where T: FromBytes + IntoBytes + Immutable + Copy + Send + Sync + 'static {}
