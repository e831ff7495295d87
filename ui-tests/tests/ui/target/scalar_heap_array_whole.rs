// `NAME[pe]` (whole static) on a heap array from World::alloc.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let heap = world.alloc::<u64>(4);
    let x = shmem!(heap[pe]);
    let _ = x;
}
