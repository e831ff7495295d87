// A range bound that is an f64.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let end = 4.0;
    shmem!(A[pe, 0..end] = [0.0; 4]);
}
