// A whole-static put of an `f64` into a `u64` static.
use shmem_core::prelude::*;

#[symmetric]
static COUNT: u64 = 0;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(COUNT[pe] = 1.5);
}
