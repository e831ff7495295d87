// A `Remote` made through a context borrows the array as well as the context.
use shmem_core::prelude::*;

fn main() {
    let world = shmem_core::init().unwrap();
    let ctx = world.ctx_create::<Private>(CtxOptions::default()).unwrap();
    let r;
    {
        let a = world.alloc::<u64>(4);
        r = ctx.at(&a, 0, 0);
    }
    r.set(5);
}
