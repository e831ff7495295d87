// `.compare_swap` with one argument instead of two.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let old = shmem!(HITS[pe, 0].compare_swap(1));
    let _ = old;
}
