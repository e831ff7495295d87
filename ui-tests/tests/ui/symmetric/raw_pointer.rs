// A raw pointer is meaningless on other PEs: not a symmetric element.
use shmem_core::prelude::*;

#[symmetric]
static P: *const u8 = std::ptr::null();

fn main() {}
