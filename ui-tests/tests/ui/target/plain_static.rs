// The target is an ordinary `static` that lacks #[symmetric].
use shmem_core::prelude::*;

static PLAIN: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(PLAIN[pe, 0..2] = [1.0, 2.0]);
}
