// `v[0] = S[pe]`: both sides look like `NAME[x]`.
use shmem_core::prelude::*;

#[symmetric]
static S: f64 = 0.0;

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    let mut v = [0.0; 4];
    shmem!(v[0] = S[pe]);
}
