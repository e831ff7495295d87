// The target of an atomic is a local array.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let counts = [0u64; 4];
    shmem!(counts[pe, 1] += 1);
}
