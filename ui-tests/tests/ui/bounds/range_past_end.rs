// Constant range `0..9` on a static of 8 elements.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(A[pe, 0..9] = [0.0; 9]);
}
