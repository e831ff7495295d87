// The PE number is a string.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let _ = pe;
    shmem!(A["left", 0] = 1.0);
}
