// A lock is not an element: no put can overwrite one.
use shmem_core::prelude::*;

#[symmetric]
static LOCKS: [Lock; 2] = [Lock::new(); 2];

fn main() {
    let world = shmem_core::init().unwrap();
    LOCKS.put(0, 0..1, &[Lock::new()]);
    let heap = world.alloc::<Lock>(2);
    heap.p(0, 1, Lock::new());
}
