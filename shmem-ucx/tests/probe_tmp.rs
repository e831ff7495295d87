use shmem_ucx::*;
#[test]
fn probe() {
    let ctx = Context::new(&ContextParams::default()).unwrap();
    let w = ctx.create_worker(ThreadMode::Multi).unwrap();
    let ep = w.connect(&w.address().unwrap()).unwrap();
    for fill in [0xffu8, 0x01, 0x00] {
        let garbage = vec![fill; 64 * 1024];
        match ep.unpack_rkey(&garbage) { Ok(_) => eprintln!("fill {fill:#x}: Ok"), Err(e) => eprintln!("fill {fill:#x}: {e}") }
    }
}
