// `NAME[pe]` on an ordinary `static` that lacks #[symmetric].
use shmem_core::prelude::*;

static COUNT: u64 = 0;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(COUNT[pe] = 1);
}
