// A range read used as an expression: it needs a destination.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let x = shmem!(A[pe, 0..2]);
}
