// `^=` on an f32 element.
use shmem_core::prelude::*;

#[symmetric]
static F: [f32; 4] = [0.0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(F[pe, 0] ^= 1.0);
}
