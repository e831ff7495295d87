// A `Remote` (and every other handle) made from a heap array borrows the array, which borrows
// the World: the issue's `let r = { let w = init()?; X.at(0) }; r.inc();` does not compile for
// heap arrays. (For `#[symmetric]` statics the same shape compiles and panics with "used after
// the World was dropped": see shmem-core/tests/after_finalize.rs.)
use shmem_core::prelude::*;

fn main() {
    let r = {
        let world = shmem_core::init().unwrap();
        let counter = world.alloc::<u64>(1);
        counter.at(0, 0)
    };
    r.inc();
}
