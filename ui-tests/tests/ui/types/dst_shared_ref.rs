// A get into a shared reference `&[f64]`.
use shmem_core::prelude::*;

#[symmetric]
static A: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut buf = [0.0; 4];
    let dst: &[f64] = &buf;
    shmem!(dst = A[pe, 0..4]);
    let _ = &mut buf;
}
