// The PE number is an f64.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let _ = pe;
    let target = 1.0f64;
    shmem!(A[target, 0] = 1.0);
}
