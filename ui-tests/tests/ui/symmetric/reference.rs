// A reference points into one PE's memory: not a symmetric element.
use shmem_core::prelude::*;

#[symmetric]
static R: &'static u8 = &0;

fn main() {}
