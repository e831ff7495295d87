// Runs as a single PE (no launcher). The compile-time bounds check goes by the target's type,
// not its name: an upper-case local heap array with constant ranges compiles (its length is
// known at run time only) and a lower-case static in bounds compiles too.
#![allow(non_snake_case, non_upper_case_globals)]
use shmem_core::prelude::*;

#[symmetric]
static grid: [f64; 8] = [0.0; 8];

/// A generic target: no length known to the check, the run-time check applies.
fn put_first<A: SymmetricArray<u64>>(a: &A, pe: usize) {
    shmem!((*a)[pe, 0..2] = [5, 6]);
}

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();

    let HEAP = world.alloc::<u64>(4);
    shmem!(HEAP[pe, 0..4] = [1, 2, 3, 4]);
    shmem!(HEAP[pe, 3] += 10);
    let mut back = [0; 4];
    shmem!(back = HEAP[pe, 0..=3]);
    assert_eq!(back, [1, 2, 3, 14]);
    assert_eq!(shmem!(HEAP[pe, 3].fetch()), 14);

    shmem!(grid[pe, 6..8] = [1.5, 2.5]);
    shmem!(grid[pe, 7] = 3.5);
    assert_eq!(shmem!(grid[pe, 6]), 1.5);
    let g = &grid;
    assert_eq!(shmem!((*g)[pe, 7]), 3.5);

    put_first(&HEAP, pe);
    assert_eq!(HEAP.local_get(1), 6);
}
