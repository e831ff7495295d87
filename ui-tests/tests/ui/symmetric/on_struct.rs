// #[symmetric] on a struct instead of a static.
use shmem_core::prelude::*;

#[symmetric]
struct Grid {
    cells: [f64; 4],
}

fn main() {}
