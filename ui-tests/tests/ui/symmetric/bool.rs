// `bool` is not FromBytes (not every byte is a valid bool): not a symmetric element.
use shmem_core::prelude::*;

#[symmetric]
static READY: bool = false;

fn main() {}
