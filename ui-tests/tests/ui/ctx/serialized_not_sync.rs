// A serialized context may move between threads but not be used by two at once.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let ctx = world.ctx_create::<Serialized>(CtxOptions::default()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| ctx.quiet());
        s.spawn(|| ctx.quiet());
    });
}
