// A get whose constant range runs past the end of the static.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut dst = vec![0.0; 8];
    shmem!(dst = A[pe, 4..12]);
}
