// An atomic method that does not exist.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(HITS[pe, 0].frobnicate(1));
}
