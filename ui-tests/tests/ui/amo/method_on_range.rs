// A fetching atomic on a range instead of one element.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let old = shmem!(HITS[pe, 0..2].fetch_inc());
    let _ = old;
}
