// OpenSHMEM signals are set or added to; there is no subtract.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 4] = [0.0; 4];
#[symmetric]
static READY: u64 = 0;

fn main() {
    let _world = shmem_core::init().unwrap();
    shmem!(DATA[0, 0..4] = [1.0; 4] => READY -= 1);
}
