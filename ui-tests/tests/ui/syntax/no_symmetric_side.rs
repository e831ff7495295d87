// Neither side of `=` is a symmetric reference.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let _ = pe;
    let mut a = 0;
    let b = 1;
    shmem!(a = b);
    let _ = a;
}
