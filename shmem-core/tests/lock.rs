//! Distributed locks in real jobs at 1, 2, 3 and 4 PEs on both paths: read-modify-write of a
//! counter with plain get and put under the lock must never lose an update.

use shmem_testkit as common;

use common::multi_pe_at;
use shmem_core::prelude::*;

#[symmetric]
static L: Lock = Lock::new();

#[symmetric]
static COUNTER: u64 = 0;

const K: u64 = 25;
const COUNTS: &[usize] = &[1, 2, 3, 4];

#[test]
fn lock_protected_counter_on_pe0() {
    multi_pe_at("lock_protected_counter_on_pe0", COUNTS, |world| {
        let n = world.n_pes() as u64;
        for _ in 0..K {
            let _held = L.lock();
            let c = COUNTER.get_value(0);
            // Widen the window between read and write: without the lock updates get lost.
            std::thread::yield_now();
            COUNTER.put_value(0, c + 1);
        }
        world.barrier_all();
        assert_eq!(COUNTER.get_value(0), n * K);
        world.barrier_all();
    });
}

#[test]
fn heap_lock_array_and_test_lock() {
    multi_pe_at("heap_lock_array_and_test_lock", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let locks = world.alloc::<Lock>(n);
        let counters = world.alloc::<u64>(1);
        // Lock j guards the counter on PE j; locks live on different home PEs.
        for round in 0..K as usize {
            for k in 0..n {
                let j = (me + k + round) % n;
                let guard = if round % 2 == 0 {
                    locks.lock(j)
                } else {
                    // test_lock until it succeeds (it never waits by itself).
                    let mut tries = 0u64;
                    loop {
                        if let Some(g) = locks.try_lock(j) {
                            break g;
                        }
                        tries += 1;
                        if tries.is_multiple_of(64) {
                            std::thread::yield_now();
                        }
                    }
                };
                let c = counters.g(j, 0);
                std::thread::yield_now();
                counters.p(j, 0, c + 1);
                guard.unlock();
            }
        }
        world.barrier_all();
        assert_eq!(counters.local_get(0), n as u64 * K, "counter on PE {me}");
        // All locks are free again: exactly one PE wins a test_lock on each.
        let wins = world.alloc::<u64>(n);
        for j in 0..n {
            if let Some(g) = locks.try_lock(j) {
                wins.at(0, j).inc();
                // Hold it until everybody has tried.
                world.barrier_all();
                drop(g);
            } else {
                world.barrier_all();
            }
            world.barrier_all();
        }
        if me == 0 {
            for j in 0..n {
                assert_eq!(
                    wins.local_get(j),
                    1,
                    "lock {j} taken by test_lock exactly once"
                );
            }
        }
        world.barrier_all();
    });
}
