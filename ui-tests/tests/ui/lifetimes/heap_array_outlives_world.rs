// Symmetric heap arrays are freed collectively while the runtime lives: they borrow the World.
fn main() {
    let world = shmem_core::init().unwrap();
    let arr = world.alloc::<u64>(16);
    drop(world);
    drop(arr);
}
