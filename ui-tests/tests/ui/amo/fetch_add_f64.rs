// `.fetch_add` on an f64 element.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let old = shmem!(A[pe, 0].fetch_add(1.0));
    let _ = old;
}
