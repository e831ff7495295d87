// `&=` on a usize element: no bitwise AMO for usize.
use shmem_core::prelude::*;

#[symmetric]
static U: [usize; 4] = [0; 4];

fn main() {
    let world = shmem_core::init().unwrap();
    let pe = world.my_pe();
    shmem!(U[pe, 0] &= 1);
}
