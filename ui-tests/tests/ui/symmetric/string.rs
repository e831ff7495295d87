use shmem_core::prelude::*;

#[symmetric]
static NAME: String = String::new();

fn main() {}
