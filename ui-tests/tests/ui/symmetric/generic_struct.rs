// A generic type is not a symmetric object.
use shmem_core::prelude::*;

#[symmetric]
struct Grid<T> {
    cells: [T; 4],
}

fn main() {}
