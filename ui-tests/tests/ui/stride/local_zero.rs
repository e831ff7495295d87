// A strided local source with a literal stride of 0.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let column = [1.0; 7];
    shmem!(A[pe, 0..4] = column[0..7;0]);
}
