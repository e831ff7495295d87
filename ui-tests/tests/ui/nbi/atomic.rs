// An atomic update inside the non-blocking form.
use shmem_core::prelude::*;

#[symmetric]
static HITS: [u64; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    world.nbi(|s| shmem!(nbi s: HITS[pe, 0] += 1));
}
