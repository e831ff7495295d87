//! Event-driven progress: a thread that sleeps in `Worker::wait_for_events` wakes up for an
//! atomic arriving over tcp (which only completes when the target worker progresses), and
//! `Worker::signal` wakes it without any traffic.
//!
//! One test per binary: it sets `UCX_TLS` before creating the context.

use shmem_ucx::{AtomicOp, AtomicSize, Context, ContextParams, ThreadMode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[test]
fn a_sleeping_progress_thread_serves_tcp_atomics_and_wakes_on_signal() {
    // SAFETY: the only test of this binary; no other thread reads the environment now.
    unsafe { std::env::set_var("UCX_TLS", "tcp") };
    let ctx = Context::new(&ContextParams {
        wakeup: true,
        ..ContextParams::default()
    })
    .expect("context with wakeup");
    let target = ctx.create_worker(ThreadMode::Multi).expect("target worker");
    let origin = ctx.create_worker(ThreadMode::Multi).expect("origin worker");
    let mem = ctx.mem_map_alloc(1 << 16).expect("mem_map_alloc");
    // SAFETY: genuine worker address and packed key from this process.
    let ep = unsafe { origin.connect(&target.address().unwrap()) }.expect("connect");
    // SAFETY: as above.
    let rkey = unsafe { ep.unpack_rkey(&mem.pack_rkey().unwrap()) }.expect("unpack");
    let base = mem.address() as u64;

    // The target's only progress comes from this thread, which sleeps between events.
    let stop = Arc::new(AtomicBool::new(false));
    let (t, s) = (target.clone(), Arc::clone(&stop));
    let wakeups = std::thread::spawn(move || {
        let mut rounds = 0u64;
        while !s.load(Ordering::Acquire) {
            while t.progress() != 0 {}
            t.wait_for_events(Duration::from_secs(30)).expect("wait");
            rounds += 1;
        }
        rounds
    });

    let t0 = Instant::now();
    for i in 0..100u64 {
        // SAFETY: an aligned word inside the mapped region.
        let old = unsafe { ep.atomic_fetch(AtomicOp::Add, 1, 0, AtomicSize::U64, base, &rkey) }
            .expect("fetch_add");
        assert_eq!(old, i);
    }
    let took = t0.elapsed();
    // 100 round trips that each need the target's progress: a thread waking only on its 30 s
    // timeout could not have served them.
    assert!(took < Duration::from_secs(5), "100 atomics took {took:?}");

    // Closing flushes the endpoint, which over tcp needs the target's progress too.
    drop(rkey);
    ep.close().expect("close");

    // Wake the sleeping thread without traffic.
    std::thread::sleep(Duration::from_millis(50));
    let t1 = Instant::now();
    stop.store(true, Ordering::Release);
    target.signal().expect("signal");
    let rounds = wakeups.join().expect("progress thread");
    assert!(
        t1.elapsed() < Duration::from_secs(5),
        "signal took {:?}",
        t1.elapsed()
    );
    assert!(rounds >= 1);
    eprintln!("100 tcp fetch_adds served by a sleeping thread in {took:?} ({rounds} wake-ups)");
}
