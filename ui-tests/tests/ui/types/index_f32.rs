// An index that is an f32.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let i = 3.0f32;
    shmem!(A[pe, i] = 1.0);
}
