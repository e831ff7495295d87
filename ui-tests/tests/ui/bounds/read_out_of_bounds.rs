// A single-element read at a constant index past the end.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let x: f64 = shmem!(A[pe, 10]);
    let _ = x;
}
