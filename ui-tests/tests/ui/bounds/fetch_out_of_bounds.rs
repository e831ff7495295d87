// A fetching atomic at a constant index past the end.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let old = shmem!(HITS[pe, 4].fetch_add(1));
    let _ = old;
}
