// The non-blocking form with a single index.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    world.nbi(|s| shmem!(nbi s: A[pe, 3] = 1.0));
}
