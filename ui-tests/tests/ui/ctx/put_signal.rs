// Contexts have no put-with-signal: rejected rather than done outside the context.
use shmem_core::prelude::*;

#[symmetric]
static DATA: [f64; 8] = [0.0; 8];
#[symmetric]
static READY: u64 = 0;

fn main() {
    let world = shmem_core::init().unwrap();
    let ctx = world.ctx_create::<Private>(CtxOptions::default()).unwrap();
    shmem!(ctx ctx: DATA[0, 0..4] = [1.0; 4] => READY += 1);
}
