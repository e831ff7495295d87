// An atomic update at a constant index past the end.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(HITS[pe, 4] += 1);
}
