// `#[element]` on an enum: one error, at the attribute's item, none at the uses.
use shmem_core::prelude::*;

#[element]
#[derive(Clone, Copy)]
enum Mode {
    Off,
    On,
}

fn main() {
    let _ = Mode::On;
}
