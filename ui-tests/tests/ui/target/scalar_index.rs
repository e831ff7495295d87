// An index on a scalar #[symmetric] static.
use shmem_core::prelude::*;

#[symmetric]
static COUNT: u64 = 0;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(COUNT[pe, 0] = 1);
}
