// A view of a peer's copy borrows the array it shows.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let arr = world.alloc::<u32>(4);
    let view = arr.peer_slice(0).unwrap();
    drop(arr);
    view.write(0, 1);
    drop(world);
}
