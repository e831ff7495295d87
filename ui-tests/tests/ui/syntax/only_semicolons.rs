// `shmem!` with separators but no statement.
use shmem_core::prelude::*;

fn main() {
    shmem!(;;);
}
