// The target of a put is a local array, which other PEs cannot access.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut local = [0.0f64; 8];
    shmem!(local[pe, 0..4] = [1.0; 4]);
    let _ = &mut local;
}
