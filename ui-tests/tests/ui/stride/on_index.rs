// A stride after a single index instead of a range.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(A[pe, 3;2] = 1.0);
}
