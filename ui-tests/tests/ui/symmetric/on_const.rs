// #[symmetric] on a `const`: constants have no memory other PEs could access.
use shmem_core::prelude::*;

#[symmetric]
const LIMIT: u64 = 10;

fn main() {}
