// A get of 4 elements into a 5-element array.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut dst = [0.0; 5];
    shmem!(dst = A[pe, 0..4]);
}
