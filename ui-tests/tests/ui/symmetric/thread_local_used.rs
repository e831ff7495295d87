// `thread_local!`: one error; the uses see the symmetric static it stands for.
use shmem_core::prelude::*;

#[symmetric]
thread_local! {
    static HITS: [u64; 4] = [0; 4];
}

fn main() {
    let world = shmem_core::init().unwrap();
    shmem!(HITS[world.my_pe(), 1] += 1);
    let _ = HITS.local_get(1);
}
