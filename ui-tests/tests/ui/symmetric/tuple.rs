// A tuple is not a symmetric element (no defined layout).
use shmem_core::prelude::*;

#[symmetric]
static PAIR: (u32, u32) = (0, 0);

fn main() {}
