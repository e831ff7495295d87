// A constant index past the end, inside a generic function: checked where it is instantiated.
use shmem_core::prelude::*;

#[symmetric]
static SLOTS: [u32; 4] = [0; 4];

fn bump<P: Copy + Into<u64>>(pe: P) {
    shmem!(SLOTS[pe.into(), 4] += 1);
}

fn main() {
    let world = shmem_core::init().unwrap();
    bump(world.my_pe() as u32);
}
