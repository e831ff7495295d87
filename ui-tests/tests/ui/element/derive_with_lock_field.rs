// `#[derive(Element)]` requires every field to be an element: a struct around a `Lock` cannot
// become something puts may overwrite.
use shmem_core::prelude::*;
use shmem_core::__private::zerocopy::{FromBytes, Immutable, IntoBytes};

#[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, Element)]
#[zerocopy(crate = "shmem_core::__private::zerocopy")]
#[repr(C)]
struct Wrapped {
    lock: Lock,
}

fn main() {}
