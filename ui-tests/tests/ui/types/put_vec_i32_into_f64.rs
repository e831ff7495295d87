// A put of a Vec<i32> into an f64 symmetric array.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let src: Vec<i32> = vec![1, 2, 3, 4];
    shmem!(A[pe, 0..4] = src);
}
