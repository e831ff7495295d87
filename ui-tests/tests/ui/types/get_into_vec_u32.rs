// A get from an f64 symmetric array into a Vec<u32>.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut dst: Vec<u32> = vec![0; 4];
    shmem!(dst = A[pe, 0..4]);
}
