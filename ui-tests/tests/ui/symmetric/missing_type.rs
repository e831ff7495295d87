// A static without a type: the compiler's one error, which suggests the type; no error at uses.
use shmem_core::prelude::*;

#[symmetric]
static TOTAL = 0u64;

fn main() {
    let world = shmem_core::init().unwrap();
    shmem!(TOTAL[world.my_pe()] += 1);
    let _ = TOTAL.local();
}
