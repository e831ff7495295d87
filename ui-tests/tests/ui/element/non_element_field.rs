// A field that is not plain data: not every byte is a valid `bool`.
use shmem_core::prelude::*;

#[element]
struct Flags {
    ready: bool,
    done: bool,
}

#[symmetric]
static FLAGS: [Flags; 4] = [Flags { ready: false, done: false }; 4];

fn main() {}
