// An expression that is not a symmetric reference.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let _ = pe;
    shmem!(world.barrier_all());
}
