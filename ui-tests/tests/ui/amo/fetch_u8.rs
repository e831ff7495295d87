// `.fetch()` on a u8 scalar static: no atomics at all for u8.
use shmem_core::prelude::*;

#[symmetric]
static FLAG: u8 = 0;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let v = shmem!(FLAG[pe].fetch());
    let _ = v;
}
