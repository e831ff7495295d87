// A struct that is plain data but lacks the element derive.
use shmem_core::prelude::*;
use zerocopy::{FromBytes, Immutable, IntoBytes};

#[derive(Clone, Copy, FromBytes, IntoBytes, Immutable)]
#[repr(C)]
struct Point {
    x: f64,
    y: f64,
}

#[symmetric]
static POINTS: [Point; 4] = [Point { x: 0.0, y: 0.0 }; 4];

fn main() {}
