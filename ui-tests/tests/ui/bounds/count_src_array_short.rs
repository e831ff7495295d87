// A 3-element array put into a 4-element range.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(A[pe, 0..4] = [1.0, 2.0, 3.0]);
}
