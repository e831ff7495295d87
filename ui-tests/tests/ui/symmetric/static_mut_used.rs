// `static mut`: one error at `mut`; the uses still see a symmetric static, so none of them errs.
use shmem_core::prelude::*;

#[symmetric]
static mut COUNTS: [u64; 8] = [0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    COUNTS.put(pe, 0..2, &[1, 2]);
    shmem!(COUNTS[pe, 3] += 1);
    let _ = COUNTS.local_get(0);
}
