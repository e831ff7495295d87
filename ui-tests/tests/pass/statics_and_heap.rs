// Runs as a single PE (no launcher): statics get their initial values, puts to self land.
use shmem_core::prelude::*;

#[element]
#[derive(Debug, PartialEq)]
pub struct Pair {
    a: u32,
    b: f32,
}

#[symmetric]
static GRID: [f64; 32] = [1.5; 32];

#[symmetric]
pub static PAIRS: [Pair; 2] = [Pair { a: 1, b: 2.0 }; 2];

#[symmetric]
static SCALAR: i16 = -3;

fn main() {
    let world = shmem_core::init().unwrap();
    assert_eq!(world.n_pes(), 1);
    assert_eq!(GRID.local_get(31), 1.5);
    assert_eq!(SCALAR.local(), -3);
    GRID.put(0, 0..2, &[4.0, 5.0]);
    assert_eq!(GRID.g(0, 1), 5.0);
    PAIRS.p(0, 1, Pair { a: 7, b: 8.0 });
    assert_eq!(PAIRS.local_get(1), Pair { a: 7, b: 8.0 });
    let heap = world.alloc::<u8>(100);
    let buf = [9u8; 10];
    let mut back = [0u8; 10];
    world.nbi(|s| {
        s.put(&heap, 0, 90.., &buf);
    });
    world.nbi(|s| s.get(&heap, 0, 90.., &mut back));
    assert_eq!(back, buf);
    drop(heap);
    assert!(matches!(shmem_core::init(), Err(shmem_core::Error::AlreadyInitialized)));
    drop(world);
    assert!(matches!(shmem_core::init(), Err(shmem_core::Error::Finalized)));
}
