// Complex numbers have sum and product reductions but no order: no max or min.
use shmem_core::Complex64;

fn main() {
    let world = shmem_core::init().unwrap();
    let z = world.alloc::<Complex64>(1);
    world
        .team_world()
        .max_reduce(&z, &[Complex64::new(1.0, 0.0)]);
}
