// Every mistake of an invocation is reported, each at its own tokens.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 16] = [0.0; 16];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut dst = [0.0; 4];
    shmem!(A[pe, 0..8;0] = [1.0; 4]; dst = A[pe, 5..2]; A[pe, 0].frobnicate());
}
