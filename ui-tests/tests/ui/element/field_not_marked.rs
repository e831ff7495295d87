// A field whose struct is not marked `#[element]` itself.
use shmem_core::prelude::*;

#[derive(Clone, Copy)]
#[repr(C)]
struct Point {
    x: f64,
    y: f64,
}

#[element]
struct Segment {
    from: Point,
    to: Point,
}

fn main() {}
