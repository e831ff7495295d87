// The bounds check does not depend on the name: a lower-case #[symmetric] static gets it too.
use shmem_core::prelude::*;

#[symmetric]
#[allow(non_upper_case_globals)]
static grid: [f64; 8] = [0.0; 8];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(grid[pe, 6..10] = [1.0; 4]);
}
