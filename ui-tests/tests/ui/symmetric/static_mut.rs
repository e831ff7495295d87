use shmem_core::prelude::*;

#[symmetric]
static mut COUNTS: [u64; 8] = [0; 8];

fn main() {}
