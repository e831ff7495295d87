// Contexts borrow the World: one cannot outlive it.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let ctx = world.ctx_create::<Shared>(CtxOptions::default()).unwrap();
    drop(world);
    ctx.quiet();
}
