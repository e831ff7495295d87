// `#[symmetric] const`: one error; the uses see the symmetric static it stands for.
use shmem_core::prelude::*;

#[symmetric]
const LIMIT: u64 = 10;

fn main() {
    let world = shmem_core::init().unwrap();
    shmem!(LIMIT[world.my_pe()] = 3);
    let _ = LIMIT.local();
}
