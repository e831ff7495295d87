// A signal handle borrows the signal array.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let sigs = world.alloc::<u64>(2);
    let s = sigs.signal(1);
    drop(sigs);
    s.fetch();
    drop(world);
}
