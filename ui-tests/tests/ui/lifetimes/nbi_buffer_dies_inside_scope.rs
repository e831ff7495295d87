// A buffer that dies inside the scope could still be written by the get: rejected.

fn main() {
    let world = shmem_core::init().unwrap();
    let arr = world.alloc::<u32>(4);
    world.nbi(|s| {
        let mut tmp = [0u32; 4];
        s.get(&arr, 0, .., &mut tmp);
    });
}
