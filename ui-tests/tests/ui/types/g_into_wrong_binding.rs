// A single-element read of an f64 array bound to an `i32`.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let x: i32 = shmem!(A[pe, 0]);
    let _ = x;
}
