// `#[element]` takes no arguments; the struct is still an element, so this is the only error.
use shmem_core::prelude::*;

#[element(packed)]
struct Pair {
    a: u32,
    b: f32,
}

#[symmetric]
static PAIR: Pair = Pair { a: 1, b: 2.0 };

fn main() {}
