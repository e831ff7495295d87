//! With `UCX_TLS=tcp,self` there is no shared-memory transport: `rkey_ptr` must report
//! "unreachable" while put/get (over tcp, or self for a loopback endpoint) still work.
//!
//! Environment variables are process-global and tests in one binary run in threads, so
//! this binary holds exactly one test, which sets `UCX_TLS` before creating the context.

use shmem_ucx::{AtomicOp, AtomicSize, Context, ContextParams, ThreadMode};

#[test]
fn tcp_only_has_no_rkey_ptr_but_rma_works() {
    // SAFETY: the only test of this binary; no other thread reads the environment now.
    unsafe { std::env::set_var("UCX_TLS", "tcp,self") };

    let ctx = Context::new(&ContextParams::default()).expect("context");
    let worker = ctx.create_worker(ThreadMode::Multi).expect("worker");
    let mem = ctx.mem_map_alloc(1 << 20).expect("mem_map_alloc");
    // SAFETY: genuine worker address and packed key from this process.
    let ep = unsafe { worker.connect(&worker.address().unwrap()) }.expect("connect");
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&mem.pack_rkey().unwrap()) }.expect("unpack");
    let base = mem.address() as u64;

    let err = rkey
        .ptr(base)
        .expect_err("rkey_ptr must fail without shared memory");
    assert!(err.is_unreachable(), "{err}");
    assert_eq!(
        err.to_string(),
        "ucp_rkey_ptr: Destination is unreachable (UCX status -6)"
    );

    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
    // SAFETY: buffers valid for their lengths, remote range inside the region.
    unsafe { ep.put(data.as_ptr(), data.len(), base + 64, &rkey) }.expect("put");
    ep.flush().unwrap();
    let mut back = vec![0u8; data.len()];
    // SAFETY: as above.
    unsafe { ep.get(back.as_mut_ptr(), back.len(), base + 64, &rkey) }.expect("get");
    assert_eq!(back, data);
    // SAFETY: aligned word inside the region.
    let old =
        unsafe { ep.atomic_fetch(AtomicOp::Add, 5, 0, AtomicSize::U64, base, &rkey) }.unwrap();
    assert_eq!(old, 0);
    // SAFETY: as above.
    let now =
        unsafe { ep.atomic_fetch(AtomicOp::Cswap, 9, 5, AtomicSize::U64, base, &rkey) }.unwrap();
    assert_eq!(now, 5);
    worker.flush().unwrap();
    // SAFETY: our own live mapping, no RMA in flight.
    assert_eq!(unsafe { mem.address().cast::<u64>().read_volatile() }, 9);

    drop(rkey);
    ep.close().unwrap();
}
