// A strided local destination for a single-element read.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut column = [0.0; 7];
    shmem!(column[0..7;2] = A[pe, 3]);
}
