// put-with-signal moves a contiguous range.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 8] = [0.0; 8];
#[symmetric]
static READY: u64 = 0;

fn main() {
    let _world = shmem_core::init().unwrap();
    shmem!(DATA[0, 0..8;2] = [1.0; 4] => READY += 1);
}
