// The signal is updated on the PE of the put: it takes no PE of its own.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 4] = [0.0; 4];
#[symmetric]
static FLAGS: [u64; 4] = [0; 4];

fn main() {
    let _world = shmem_core::init().unwrap();
    shmem!(DATA[0, 0..4] = [1.0; 4] => FLAGS[0, 1] = 1);
}
