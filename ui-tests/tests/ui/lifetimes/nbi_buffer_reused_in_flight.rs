// A buffer handed to a non-blocking put stays borrowed until the scope's quiet.

fn main() {
    let world = shmem_core::init().unwrap();
    let arr = world.alloc::<u32>(4);
    let mut buf = [1u32, 2, 3, 4];
    world.nbi(|s| {
        s.put(&arr, 0, .., &buf);
        buf[0] = 9;
    });
}
