// The target of a put is a local Vec, which other PEs cannot access.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let v = vec![0.0f64; 8];
    shmem!(v[pe, 0..2] = [1.0, 2.0]);
}
