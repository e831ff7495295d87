// A non-blocking get of 2 elements into an array of 4.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut dst = [0.0; 4];
    world.nbi(|s| shmem!(nbi s: dst = A[pe, 2..4]));
}
