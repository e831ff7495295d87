// `-=` on a u8 element: no atomics for 1-byte types.
use shmem_core::prelude::*;

#[symmetric]
static B: [u8; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(B[pe, 0] -= 1);
}
