// Signals are u64 statics: an f64 static cannot be one.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 4] = [0.0; 4];
#[symmetric]
static LEVEL: f64 = 0.0;

fn main() {
    let _world = shmem_core::init().unwrap();
    shmem!(DATA[0, 0..4] = [1.0; 4] => LEVEL += 1);
}
