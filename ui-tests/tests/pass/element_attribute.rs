// Runs as a single PE (no launcher). Element structs of one's own with `#[element]` and nothing
// but shmem-core: this crate does not depend on zerocopy (`::zerocopy` does not resolve here).
use shmem_core::prelude::*;

#[element]
#[derive(Debug, PartialEq)]
struct Sample {
    time: f64,
    value: f32,
    sensor: u32,
}

/// Nested elements and arrays of them.
#[element]
#[derive(Debug, PartialEq)]
struct Track {
    samples: [Sample; 2],
    id: u64,
}

/// A tuple struct that already derives `Clone` and `Copy` and has its own `#[repr]`.
#[element]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(8))]
struct Pair(u32, f32);

#[symmetric]
static LAST: [Sample; 4] = [Sample { time: 0.0, value: 0.0, sensor: 0 }; 4];

#[symmetric]
static TRACK: Track = Track {
    samples: [Sample { time: 1.0, value: 2.0, sensor: 3 }; 2],
    id: 7,
};

fn takes_element<E: Element>() {}

fn main() {
    takes_element::<Sample>();
    takes_element::<Track>();
    takes_element::<Pair>();
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();

    let s = Sample { time: 0.5, value: 1.5, sensor: 9 };
    shmem!(LAST[pe, 2] = s);
    assert_eq!(shmem!(LAST[pe, 2]), s);
    assert_eq!(shmem!(TRACK[pe]).id, 7);

    let pairs = world.alloc::<Pair>(3);
    shmem!(pairs[pe, 0..3] = [Pair(1, 1.0), Pair(2, 2.0), Pair(3, 3.0)]);
    let mut back = [Pair(0, 0.0); 3];
    shmem!(back = pairs[pe, ..]);
    assert_eq!(back[2], Pair(3, 3.0));
}
