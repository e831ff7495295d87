// Generic items cannot be symmetric (and only statics can).
use shmem_core::prelude::*;

#[symmetric]
fn buffer<T: Default>() -> T {
    T::default()
}

fn main() {}
