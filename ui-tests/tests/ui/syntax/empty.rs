// An empty `shmem!()`.
use shmem_core::prelude::*;

fn main() {
    shmem!();
}
