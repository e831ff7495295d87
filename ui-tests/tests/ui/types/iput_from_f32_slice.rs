// A strided put from a `&[f32]` into an f64 symmetric static.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let data = [1.0f32, 2.0, 3.0, 4.0];
    let src: &[f32] = &data;
    shmem!(A[pe, 0..8;2] = src);
}
