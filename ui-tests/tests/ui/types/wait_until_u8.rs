// OpenSHMEM's wait_until and test take 16-, 32- and 64-bit integers: not bytes.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let flags = world.alloc::<u8>(4);
    flags.wait_until(0, Cmp::Eq, 1u8);
}
