// A reversed literal range `5..2`.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let src: Vec<f64> = Vec::new();
    shmem!(A[pe, 5..2] = src);
}
