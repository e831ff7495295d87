//! [`Storable`]: what may occupy symmetric memory. Every [`Element`] (which puts and gets move),
//! and [`Lock`] (which only its own methods touch, so that no transfer can overwrite one).

use crate::element::Element;
use crate::lock::Lock;
use zerocopy::{FromBytes, Immutable, IntoBytes};

mod sealed {
    pub trait Storable {}
    impl<E: crate::Element> Storable for E {}
    impl Storable for crate::Lock {}
    impl<const N: usize> Storable for [crate::Lock; N] {}
}

/// A type that may live in symmetric memory: a `#[symmetric]` static's type or a
/// [`SymArray`](crate::SymArray)'s element. Every [`Element`] is one, and so are [`Lock`]s and
/// arrays of them, which are not elements: puts and gets cannot overwrite a lock.
///
/// Implemented by the crate only; make your own types [`Element`]s.
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
impl Storable for Lock {}
impl<const N: usize> Storable for [Lock; N] {}
