//! The wait hook keeps a second worker moving: over tcp an atomic completes only when the
//! target worker progresses, and here the only thing that progresses it is the hook, called by
//! the origin's blocking waits on the same thread.
//!
//! One test per binary: it sets `UCX_TLS` before creating the context, and installs the
//! process-wide hook.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use shmem_ucx::{AtomicOp, AtomicSize, Context, ContextParams, ThreadMode, Worker};

/// The worker the hook progresses.
static TARGET: OnceLock<Worker> = OnceLock::new();
/// How often the hook ran.
static HOOK_ROUNDS: AtomicU64 = AtomicU64::new(0);

fn progress_target(waiting_on: shmem_ucx::sys::ucp_worker_h) {
    HOOK_ROUNDS.fetch_add(1, Ordering::Relaxed);
    if let Some(target) = TARGET.get() {
        // The origin's waits pass the origin, never the target.
        assert_ne!(
            waiting_on,
            target.raw(),
            "the hook got the worker it should progress"
        );
        target.progress();
    }
}

#[test]
fn blocking_waits_drive_another_worker_through_the_hook() {
    // SAFETY: the only test of this binary; no other thread reads the environment now.
    unsafe { std::env::set_var("UCX_TLS", "tcp") };
    let ctx = Context::new(&ContextParams::default()).expect("context");
    let origin = ctx.create_worker(ThreadMode::Multi).expect("origin worker");
    let target = TARGET.get_or_init(|| ctx.create_worker(ThreadMode::Multi).expect("target"));
    let mem = ctx.mem_map_alloc(1 << 16).expect("mem_map_alloc");
    // SAFETY: genuine worker address and packed key from this process.
    let ep = unsafe { origin.connect(&target.address().expect("address")) }.expect("connect");
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&mem.pack_rkey().expect("pack")) }.expect("unpack");
    let base = mem.address() as u64;

    shmem_ucx::set_wait_hook(Some(progress_target));
    for i in 0..20u64 {
        // SAFETY: an aligned word inside the mapped region, which outlives the call.
        let old = unsafe { ep.atomic_fetch(AtomicOp::Add, 1, 0, AtomicSize::U64, base, &rkey) }
            .expect("fetch_add");
        assert_eq!(old, i);
    }
    // Over tcp UCX emulates puts with active messages, and a worker flush after one waits
    // for the put's completion message (progressing the target through the hook) before it
    // flushes: the data is in place when it returns, for single and back-to-back puts.
    assert!(
        ep.rma_over_am(),
        "a tcp endpoint does RMA through active messages"
    );
    for (round, len) in [1usize, 8, 3000, 40_000].into_iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|i| (i * 13 + round) as u8).collect();
        let at = base + 4096;
        for k in 0..3u64 {
            // SAFETY: `data` is readable for `len` bytes and the remote range lies in the region.
            unsafe { ep.put(data.as_ptr(), len, at + k * 8, &rkey) }.expect("put");
        }
        origin.flush().expect("flush");
        // SAFETY: our own live mapping; every put to it is complete (flushed).
        let landed = unsafe { std::slice::from_raw_parts(mem.address().add(4096 + 16), len) };
        assert_eq!(landed, &data[..], "{len} bytes after put + worker flush");
    }
    // Non-blocking puts completed by the endpoint's own flush (over tcp, UCX 1.13 flushes the
    // lane with a zero-length put, whose acknowledgement needs the target's progress too); a
    // worker flush after it still waits for, and completes, a put made after it.
    // The three puts overlap (8 bytes apart) and the check reads the third one's bytes: one
    // tcp endpoint carries its puts' fragments over one stream, in order, so the third lands
    // last (UCX orders RMA on an endpoint only after a fence in general; this test is tcp only).
    for (round, len) in [1usize, 8, 3000, 40_000].into_iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + round + 100) as u8).collect();
        let at = base + 8192;
        for k in 0..3u64 {
            // SAFETY: as above; `data` outlives the flush below.
            unsafe { ep.put_nbi(data.as_ptr(), len, at + k * 8, &rkey) }.expect("put_nbi");
        }
        ep.flush().expect("endpoint flush");
        // SAFETY: our own live mapping; every put to it is complete (flushed).
        let landed = unsafe { std::slice::from_raw_parts(mem.address().add(8192 + 16), len) };
        assert_eq!(
            landed,
            &data[..],
            "{len} bytes after put_nbi + endpoint flush"
        );
        let last = [round as u8 ^ 0x5a; 8];
        // SAFETY: as above.
        unsafe { ep.put(last.as_ptr(), 8, at + 50_000, &rkey) }.expect("put");
        origin.flush().expect("flush");
        // SAFETY: as above.
        let landed = unsafe { std::slice::from_raw_parts(mem.address().add(8192 + 50_000), 8) };
        assert_eq!(
            landed,
            &last[..],
            "round {round}: put + worker flush after an endpoint flush"
        );
    }
    // Closing flushes the endpoint, which over tcp needs the target's progress too.
    drop(rkey);
    ep.close().expect("close");
    shmem_ucx::set_wait_hook(None);

    let rounds = HOOK_ROUNDS.load(Ordering::Relaxed);
    assert!(
        rounds >= 20,
        "the hook ran {rounds} times for 20 remote atomics"
    );
    // Removed: nothing calls it any more.
    origin.flush().expect("flush");
    assert_eq!(HOOK_ROUNDS.load(Ordering::Relaxed), rounds);
}
