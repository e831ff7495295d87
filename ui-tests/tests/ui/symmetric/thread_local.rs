// A thread-local static cannot be symmetric: other PEs address one object per process.
use shmem_core::prelude::*;

#[symmetric]
thread_local! {
    static PER_THREAD: u64 = 0;
}

fn main() {}
