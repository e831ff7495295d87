// A strided range whose constant end is past the end of the static.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(A[pe, 0..16;4] = [0.0; 4]);
}
