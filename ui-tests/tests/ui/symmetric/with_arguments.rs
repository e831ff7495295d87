// #[symmetric] given an argument.
use shmem_core::prelude::*;

#[symmetric(foo)]
static COUNT: u64 = 0;

fn main() {}
