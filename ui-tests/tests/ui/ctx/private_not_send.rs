// A private context belongs to the thread that created it: it cannot move to another thread.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let ctx = world.ctx_create::<Private>(CtxOptions::default()).unwrap();
    std::thread::spawn(move || ctx.quiet());
}
