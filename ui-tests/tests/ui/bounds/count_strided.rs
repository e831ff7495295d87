// A strided put `0..8;2` (4 elements) from an array of 3.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(A[pe, 0..8;2] = [0.0; 3]);
}
