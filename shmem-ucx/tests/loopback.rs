//! Single-process tests against the real UCX: a worker connected to its own address.
//!
//! Uses the default `UCX_TLS` (shared memory available), so `rkey_ptr` works here; see
//! `tcp_only.rs` for the case without shared memory.

use shmem_ucx::{
    AtomicOp, AtomicSize, Context, ContextParams, Endpoint, MemHandle, RemoteKey, ThreadMode,
    Worker,
};

const LEN: usize = 1 << 20;

/// Field order = drop order: key, endpoint, memory, worker, context.
struct Loop {
    rkey: RemoteKey,
    ep: Endpoint,
    mem: MemHandle,
    worker: Worker,
    _ctx: Context,
}

impl Loop {
    fn new() -> Loop {
        let ctx = Context::new(&ContextParams::default()).expect("context");
        let worker = ctx.create_worker(ThreadMode::Multi).expect("worker");
        let mem = ctx.mem_map_alloc(LEN).expect("mem_map_alloc");
        assert!(mem.len() >= LEN);
        assert!(!mem.address().is_null());
        let packed = mem.pack_rkey().expect("pack_rkey");
        assert!(!packed.is_empty());
        let addr = worker.address().expect("worker address");
        // SAFETY: a genuine worker address and packed key, from this process.
        let ep = unsafe { worker.connect(&addr) }.expect("connect to self");
        // SAFETY: as above.
        let rkey = unsafe { ep.unpack_rkey(&packed) }.expect("unpack_rkey");
        Loop {
            rkey,
            ep,
            mem,
            worker,
            _ctx: ctx,
        }
    }

    fn base(&self) -> u64 {
        self.mem.address() as u64
    }

    /// Reads the region's memory directly (it is ours).
    fn local(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.mem.len());
        // SAFETY: in bounds of the live mapping; no RMA is in flight when tests call this.
        unsafe { std::slice::from_raw_parts(self.mem.address().add(off), len).to_vec() }
    }

    fn write_local<T: Copy>(&self, off: usize, v: T) {
        // SAFETY: in bounds and aligned by the tests' choice of offsets.
        unsafe { self.mem.address().add(off).cast::<T>().write_volatile(v) }
    }

    fn read_local<T: Copy>(&self, off: usize) -> T {
        // SAFETY: as for write_local.
        unsafe { self.mem.address().add(off).cast::<T>().read_volatile() }
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn version_is_at_least_1_12() {
    let (major, minor, _) = shmem_ucx::version();
    assert!((major, minor) >= (1, 12), "{major}.{minor}");
}

#[test]
fn put_then_read_memory_and_get_back() {
    let l = Loop::new();
    // Over shared memory (or `self`) UCX does RMA itself, not through active messages.
    assert!(!l.ep.rma_over_am());
    for (off, len) in [(0usize, 8usize), (64, 1), (4096, 100_000), (LEN - 3, 3)] {
        let data = pattern(len, off as u8 ^ 0x5a);
        // SAFETY: local buffer is `len` bytes; the remote range is inside the region.
        unsafe { l.ep.put(data.as_ptr(), len, l.base() + off as u64, &l.rkey) }.expect("put");
        l.ep.flush().expect("ep flush");
        assert_eq!(l.local(off, len), data, "put at {off} len {len}");

        let mut back = vec![0u8; len];
        // SAFETY: as above, `back` writable for `len` bytes.
        unsafe {
            l.ep.get(back.as_mut_ptr(), len, l.base() + off as u64, &l.rkey)
        }
        .expect("get");
        assert_eq!(back, data, "get at {off} len {len}");
    }
}

#[test]
fn put_nbi_and_get_nbi_complete_at_worker_flush() {
    let l = Loop::new();
    let chunks: Vec<Vec<u8>> = (0..16).map(|i| pattern(1000 + i * 37, i as u8)).collect();
    let mut off = 0usize;
    let mut offs = Vec::new();
    for c in &chunks {
        offs.push(off);
        // SAFETY: `c` stays alive and unmodified until the flush below.
        unsafe {
            l.ep.put_nbi(c.as_ptr(), c.len(), l.base() + off as u64, &l.rkey)
        }
        .expect("put_nbi");
        off += c.len();
    }
    l.worker.flush().expect("worker flush");
    for (c, &o) in chunks.iter().zip(&offs) {
        assert_eq!(&l.local(o, c.len()), c);
    }

    let mut backs: Vec<Vec<u8>> = chunks.iter().map(|c| vec![0u8; c.len()]).collect();
    for (b, &o) in backs.iter_mut().zip(&offs) {
        // SAFETY: `b` stays alive and untouched until the flush below.
        unsafe {
            l.ep.get_nbi(b.as_mut_ptr(), b.len(), l.base() + o as u64, &l.rkey)
        }
        .expect("get_nbi");
    }
    l.worker.flush().expect("worker flush");
    assert_eq!(backs, chunks);
}

#[test]
fn atomics_64() {
    let l = Loop::new();
    let off = 1024usize;
    let addr = l.base() + off as u64;
    let s = AtomicSize::U64;
    l.write_local::<u64>(off, 40);
    // SAFETY: `addr` is an aligned 8-byte word of the region, for all atomics below.
    unsafe {
        l.ep.atomic_post(AtomicOp::Add, 2, s, addr, &l.rkey)
            .unwrap();
        assert_eq!(l.read_local::<u64>(off), 42);
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Add, 1 << 40, 0, s, addr, &l.rkey)
                .unwrap(),
            42
        );
        assert_eq!(l.read_local::<u64>(off), 42 + (1 << 40));
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Swap, u64::MAX - 1, 0, s, addr, &l.rkey)
                .unwrap(),
            42 + (1 << 40)
        );
        assert_eq!(l.read_local::<u64>(off), u64::MAX - 1);
        // Compare fails: old value returned, memory unchanged.
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Cswap, 7, 3, s, addr, &l.rkey)
                .unwrap(),
            u64::MAX - 1
        );
        assert_eq!(l.read_local::<u64>(off), u64::MAX - 1);
        // Compare succeeds: old value returned, new value stored.
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Cswap, 7, u64::MAX - 1, s, addr, &l.rkey)
                .unwrap(),
            u64::MAX - 1
        );
        assert_eq!(l.read_local::<u64>(off), 7);
        l.ep.atomic_post(AtomicOp::Or, 0xf0, s, addr, &l.rkey)
            .unwrap();
        l.ep.atomic_post(AtomicOp::And, 0x3c, s, addr, &l.rkey)
            .unwrap();
        l.ep.atomic_post(AtomicOp::Xor, 0xff00_0000_0000_0001, s, addr, &l.rkey)
            .unwrap();
        // ((7 | 0xf0) & 0x3c) ^ 0xff00_0000_0000_0001 = 0x34 ^ ... = 0xff00_0000_0000_0035
        assert_eq!(l.read_local::<u64>(off), 0xff00_0000_0000_0035);
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Xor, 0xff00_0000_0000_0000, 0, s, addr, &l.rkey)
                .unwrap(),
            0xff00_0000_0000_0035
        );
        assert_eq!(l.read_local::<u64>(off), 0x35);
    }
}

#[test]
fn atomics_32_leave_neighbours_alone() {
    let l = Loop::new();
    let off = 2048usize;
    let addr = l.base() + off as u64;
    let s = AtomicSize::U32;
    l.write_local::<u32>(off - 4, 0xdead_beef);
    l.write_local::<u32>(off, u32::MAX);
    l.write_local::<u32>(off + 4, 0x1234_5678);
    // SAFETY: `addr` is an aligned 4-byte word of the region, for all atomics below.
    unsafe {
        // Wraps at 32 bits.
        l.ep.atomic_post(AtomicOp::Add, 2, s, addr, &l.rkey)
            .unwrap();
        assert_eq!(l.read_local::<u32>(off), 1);
        // Old value is zero-extended; the operand is truncated to 32 bits.
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Add, (1 << 32) | 10, 0, s, addr, &l.rkey)
                .unwrap(),
            1
        );
        assert_eq!(l.read_local::<u32>(off), 11);
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Swap, 0xffff_fff0, 0, s, addr, &l.rkey)
                .unwrap(),
            11
        );
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Cswap, 5, 6, s, addr, &l.rkey)
                .unwrap(),
            0xffff_fff0
        );
        assert_eq!(l.read_local::<u32>(off), 0xffff_fff0);
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Cswap, 5, 0xffff_fff0, s, addr, &l.rkey)
                .unwrap(),
            0xffff_fff0
        );
        assert_eq!(l.read_local::<u32>(off), 5);
        l.ep.atomic_post(AtomicOp::Or, 0x8000_0000, s, addr, &l.rkey)
            .unwrap();
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::And, 0x8000_0001, 0, s, addr, &l.rkey)
                .unwrap(),
            0x8000_0005
        );
        assert_eq!(
            l.ep.atomic_fetch(AtomicOp::Or, 0, 0, s, addr, &l.rkey)
                .unwrap(),
            0x8000_0001
        );
    }
    assert_eq!(l.read_local::<u32>(off - 4), 0xdead_beef);
    assert_eq!(l.read_local::<u32>(off + 4), 0x1234_5678);
}

#[test]
fn atomic_post_rejects_swap() {
    let l = Loop::new();
    // SAFETY: aligned word of the region (and the call is rejected before UCX anyway).
    let err = unsafe {
        l.ep.atomic_post(AtomicOp::Swap, 1, AtomicSize::U64, l.base(), &l.rkey)
    }
    .unwrap_err();
    assert_eq!(err.op, "ucp_atomic_op_nbx");
    assert!(err.to_string().contains("Invalid parameter"), "{err}");
}

#[test]
fn rkey_of_another_endpoint_is_rejected() {
    let l = Loop::new();
    // SAFETY: our own worker address.
    let ep2 = unsafe { l.worker.connect(&l.worker.address().unwrap()) }.unwrap();
    let byte = 1u8;
    // SAFETY: valid buffer and address; the key mismatch is caught before UCX is called.
    let err = unsafe { ep2.put(&byte, 1, l.base(), &l.rkey) }.unwrap_err();
    assert!(err.message.contains("another endpoint"), "{err}");
    ep2.close().unwrap();
}

#[test]
fn rkey_ptr_on_own_memory() {
    let l = Loop::new();
    let p = l
        .rkey
        .ptr(l.base() + 128)
        .expect("rkey_ptr with shared memory transports");
    // SAFETY: p maps the region's byte 128 (directly, or through a second mapping).
    unsafe { p.cast::<u64>().write_volatile(0x0102_0304_0506_0708) };
    assert_eq!(l.read_local::<u64>(128), 0x0102_0304_0506_0708);
    let q = l.rkey.ptr(l.base() + 136).unwrap();
    assert_eq!(
        q as usize - p as usize,
        8,
        "offset is constant within a region"
    );
}

#[test]
fn error_display_carries_ucx_text() {
    // A context without the atomics features: UCX itself rejects an atomic (and logs an
    // ERROR line about the missing feature flags).
    let ctx = Context::new(&ContextParams {
        amo32: false,
        amo64: false,
        ..Default::default()
    })
    .unwrap();
    let worker = ctx.create_worker(ThreadMode::Multi).unwrap();
    let mem = ctx.mem_map_alloc(4096).unwrap();
    // SAFETY: genuine address and key from this process.
    let ep = unsafe { worker.connect(&worker.address().unwrap()) }.unwrap();
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&mem.pack_rkey().unwrap()) }.unwrap();
    // SAFETY: aligned word of the region.
    let err = unsafe {
        ep.atomic_fetch(
            AtomicOp::Add,
            1,
            0,
            AtomicSize::U64,
            mem.address() as u64,
            &rkey,
        )
    }
    .unwrap_err();
    assert_eq!(err.op, "ucp_atomic_op_nbx");
    assert_eq!(err.status, -5); // UCS_ERR_INVALID_PARAM
    assert_eq!(err.message, "Invalid parameter"); // ucs_status_string's text
    assert_eq!(
        err.to_string(),
        "ucp_atomic_op_nbx: Invalid parameter (UCX status -5)"
    );
    assert!(!err.is_unreachable());
    drop(rkey);
    ep.close().unwrap();

    let err = ctx.mem_map_alloc(0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ucp_mem_map: Invalid parameter: length must not be zero (UCX status -5)"
    );
}

/// Fetching AND/OR/XOR, value by value (UCX 1.13.1 gets these wrong over shared memory;
/// the wrapper works around it).
#[test]
fn fetching_bitwise_ops() {
    let l = Loop::new();
    let off = 3072usize;
    let addr = l.base() + off as u64;
    for (op, f) in [
        (AtomicOp::And, (|a, b| a & b) as fn(u64, u64) -> u64),
        (AtomicOp::Or, |a, b| a | b),
        (AtomicOp::Xor, |a, b| a ^ b),
    ] {
        for (start, operand) in [
            (0x0f0f_0f0f_0f0f_0f0fu64, 0x00ff_00ff_00ff_00ffu64),
            (0, u64::MAX),
            (u64::MAX, 0x8000_0000_0000_0001),
        ] {
            l.write_local::<u64>(off, start);
            // SAFETY: aligned 8-byte word of the region.
            let old = unsafe {
                l.ep.atomic_fetch(op, operand, 0, AtomicSize::U64, addr, &l.rkey)
            }
            .unwrap();
            assert_eq!(old, start, "{op:?} u64 old");
            assert_eq!(
                l.read_local::<u64>(off),
                f(start, operand),
                "{op:?} u64 {start:#x} {operand:#x}"
            );

            l.write_local::<u64>(off, 0x5555_5555_5555_5555);
            l.write_local::<u32>(off, start as u32);
            // SAFETY: aligned 4-byte word of the region.
            let old = unsafe {
                l.ep.atomic_fetch(op, operand, 0, AtomicSize::U32, addr, &l.rkey)
            }
            .unwrap();
            assert_eq!(old, u64::from(start as u32), "{op:?} u32 old");
            assert_eq!(
                l.read_local::<u32>(off),
                f(start, operand) as u32,
                "{op:?} u32"
            );
            assert_eq!(
                l.read_local::<u32>(off + 4),
                0x5555_5555,
                "{op:?} u32 neighbour"
            );
        }
    }
}

#[test]
fn flush_start_and_wait() {
    let l = Loop::new();
    let data = pattern(4096, 9);
    // SAFETY: `data` lives until the flush below completes.
    unsafe { l.ep.put_nbi(data.as_ptr(), data.len(), l.base(), &l.rkey) }.unwrap();
    match l.ep.flush_start().unwrap() {
        None => {}
        Some(req) => {
            while !req.is_done().unwrap() {
                l.worker.progress();
            }
            req.wait(&l.worker).unwrap();
        }
    }
    assert_eq!(l.local(0, data.len()), data);
    l.worker.fence().unwrap();
}

#[test]
fn close_with_live_rkey_is_busy_and_clean_close_works() {
    let l = Loop::new();
    let addr = l.worker.address().unwrap();
    // SAFETY: genuine address and key from this process.
    let ep = unsafe { l.worker.connect(&addr) }.unwrap();
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&l.mem.pack_rkey().unwrap()) }.unwrap();
    let v = 77u64;
    // SAFETY: aligned word of the region.
    unsafe { ep.put((&raw const v).cast(), 8, l.base() + 512, &rkey) }.unwrap();
    let err = ep.close().unwrap_err();
    assert_eq!(err.status, -15, "{err}"); // UCS_ERR_BUSY
    // The close flushed: the data is there. The key still works with its endpoint gone
    // from our hands; dropping it force-closes the endpoint.
    assert_eq!(l.read_local::<u64>(512), 77);
    assert!(rkey.ptr(l.base() + 512).is_ok());
    drop(rkey);

    // SAFETY: as above.
    let ep = unsafe { l.worker.connect(&addr) }.unwrap();
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&l.mem.pack_rkey().unwrap()) }.unwrap();
    drop(rkey);
    ep.close().unwrap();
}

#[test]
fn objects_are_send_and_sync_and_work_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    assert_send_sync::<Worker>();
    assert_send_sync::<Endpoint>();
    assert_send_sync::<RemoteKey>();
    assert_send_sync::<MemHandle>();
    fn assert_send<T: Send>() {}
    assert_send::<shmem_ucx::Request>();

    let l = Loop::new();
    let addr = l.base() + 4096;
    l.write_local::<u64>(4096, 0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    // SAFETY: aligned word of the region; Multi thread mode worker.
                    unsafe {
                        l.ep.atomic_post(AtomicOp::Add, 1, AtomicSize::U64, addr, &l.rkey)
                    }
                    .unwrap();
                }
            });
        }
    });
    l.worker.flush().unwrap();
    assert_eq!(l.read_local::<u64>(4096), 4000);
}

#[test]
fn single_thread_worker_and_zero_length_map() {
    let ctx = Context::new(&ContextParams {
        estimated_num_eps: Some(4),
        ..Default::default()
    })
    .unwrap();
    // The safe constructor refuses the modes that leave locking to the caller.
    for mode in [ThreadMode::Single, ThreadMode::Serialized] {
        let err = ctx.create_worker(mode).unwrap_err();
        assert_eq!(err.status, -5, "{err}"); // UCS_ERR_INVALID_PARAM
        assert!(
            err.message.contains("create_worker_unsynchronized"),
            "{err}"
        );
    }
    // SAFETY: this thread is the only one that ever touches `w`, and it drops it.
    let w = unsafe { ctx.create_worker_unsynchronized(ThreadMode::Single) }.unwrap();
    w.progress();
    w.flush().unwrap();
    w.fence().unwrap();
    // SAFETY: empty slices are rejected before UCX sees them.
    let err = unsafe { w.connect(&[]) }.unwrap_err();
    assert_eq!(err.op, "ucp_ep_create");
}
