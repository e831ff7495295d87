// `=>` follows a put; a get cannot signal.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 4] = [0.0; 4];
#[symmetric]
static READY: u64 = 0;

fn main() {
    let _world = shmem_core::init().unwrap();
    let mut dst = [0.0; 4];
    shmem!(dst = DATA[0, 0..4] => READY += 1);
}
