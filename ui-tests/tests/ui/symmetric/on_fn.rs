use shmem_core::prelude::*;

#[symmetric]
fn not_a_static() {}

fn main() {}
