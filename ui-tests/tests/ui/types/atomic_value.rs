// An atomic add of an `i32` value to a `u64` element.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let delta: i32 = 1;
    shmem!(HITS[pe, 0] += delta);
}
