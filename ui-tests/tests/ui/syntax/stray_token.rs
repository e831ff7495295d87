// A stray token after the range.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let b = [0.0; 4];
    shmem!(A[pe, 0..4 x] = b);
}
