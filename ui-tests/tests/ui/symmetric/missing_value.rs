// A static without a value: the compiler's one error; the uses check against its type.
use shmem_core::prelude::*;

#[symmetric]
static GRID: [f64; 16];

fn main() {
    let world = shmem_core::init().unwrap();
    shmem!(GRID[world.my_pe(), 0..2] = [1.0, 2.0]);
    let _ = GRID.local_get(3);
}
