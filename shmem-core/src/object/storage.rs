//! [`Storable`]: what may occupy symmetric memory. Every [`Element`] (which puts and gets move),
//! and the types the operations layer adds that only their own methods touch, so that no
//! transfer can overwrite one (`Lock`, whose impls live with it in `ops::lock`).
//!
//! Part of the object layer; uses `element` only.

use crate::element::Element;
use zerocopy::{FromBytes, Immutable, IntoBytes};

pub(crate) mod sealed {
    /// Only the crate decides what may live in symmetric memory.
    pub trait Storable {}
    impl<E: crate::element::Element> Storable for E {}
}

/// A type that may live in symmetric memory: a `#[symmetric]` static's type or a
/// [`SymArray`](crate::SymArray)'s element. Every [`Element`] is one, and so are
/// [`Lock`](crate::Lock)s and arrays of them, which are not elements: puts and gets cannot
/// overwrite a lock.
///
/// Implemented by the crate only; make your own types [`Element`]s.
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// // Anything Storable can be allocated on the symmetric heap: elements and locks alike.
/// fn zeroed_block<E: Storable>(world: &World, len: usize) -> SymArray<'_, E> {
///     world.alloc::<E>(len)
/// }
/// let world = shmem_core::init()?;
/// let numbers = zeroed_block::<f64>(&world, 4);
/// let locks = zeroed_block::<Lock>(&world, 2);
/// assert_eq!(numbers.local_get(3), 0.0);
/// drop(locks.lock(1));
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a symmetric element type",
    label = "not plain data that can live in symmetric memory",
    note = "element types are primitive integers and floats, arrays of elements, and structs of \
            elements marked `#[shmem_core::element]`; `Lock`s may live in symmetric memory too"
)]
pub trait Storable:
    FromBytes + IntoBytes + Immutable + Copy + Send + Sync + 'static + sealed::Storable
{
}

impl<E: Element> Storable for E {}
