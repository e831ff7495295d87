// A local stride after a single index instead of a range.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let column = [1.0; 7];
    shmem!(A[pe, 0..4] = column[3;2]);
}
