// Padding bytes would carry uninitialized memory to other PEs: rejected.
use shmem_core::prelude::*;
use zerocopy::{FromBytes, Immutable, IntoBytes};

#[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, Element)]
#[repr(C)]
struct Padded {
    tag: u8,
    value: u64,
}

fn main() {}
