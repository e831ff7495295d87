// A struct that is plain data but is not marked `#[element]`.
use shmem_core::prelude::*;

#[derive(Clone, Copy)]
#[repr(C)]
struct Point {
    x: f64,
    y: f64,
}

#[symmetric]
static POINTS: [Point; 4] = [Point { x: 0.0, y: 0.0 }; 4];

fn main() {}
