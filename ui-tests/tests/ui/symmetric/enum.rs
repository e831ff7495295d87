// An enum is not a symmetric element (not every bit pattern is valid).
use shmem_core::prelude::*;

#[derive(Clone, Copy)]
enum Mode {
    Off,
    On,
}

#[symmetric]
static MODE: Mode = Mode::Off;

fn main() {}
