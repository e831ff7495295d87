// The destination of a non-blocking get cannot be read before the scope's quiet.

fn main() {
    let world = shmem_core::init().unwrap();
    let arr = world.alloc::<u32>(4);
    let mut dst = [0u32; 4];
    world.nbi(|s| {
        s.get(&arr, 0, .., &mut dst);
        println!("{}", dst[0]);
    });
}
