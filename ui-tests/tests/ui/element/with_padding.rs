// Padding bytes would carry uninitialized memory to other PEs: rejected, with the byte count.
use shmem_core::prelude::*;

#[element]
struct Padded {
    tag: u8,
    value: u64,
}

#[symmetric]
static LAST: Padded = Padded { tag: 0, value: 0 };

fn main() {}
