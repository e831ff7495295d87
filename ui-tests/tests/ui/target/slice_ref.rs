// The target of a get is a `&[f64]` slice, which is local memory.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let local = [0.0f64; 8];
    let s: &[f64] = &local;
    let x: f64 = shmem!(s[pe, 3]);
    let _ = x;
}
