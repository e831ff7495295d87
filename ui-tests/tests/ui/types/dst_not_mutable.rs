// A get into an immutable binding.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let dst = [0.0; 4];
    shmem!(dst = A[pe, 0..4]);
    let _ = dst;
}
