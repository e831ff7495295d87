// An atomic update whose left side is a local variable.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut total = 0u64;
    shmem!(total += HITS[pe, 0]);
}
