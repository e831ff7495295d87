// `nbi s` without the colon before the statement.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let src = [1.0; 4];
    world.nbi(|s| shmem!(nbi s A[pe, 0..4] = src));
}
