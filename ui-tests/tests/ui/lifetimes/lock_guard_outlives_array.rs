// A lock guard borrows the lock array: the array cannot be freed while the lock is held.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let locks = world.alloc::<Lock>(2);
    let guard = locks.lock(1);
    drop(locks);
    drop(guard);
    drop(world);
}
