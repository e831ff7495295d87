//! Polling loops complete on every transport. Over tcp (`UCX_TLS=tcp,self`) a put, an atomic
//! or a signal aimed at a PE is carried out by that PE's UCX progress engine, and with the
//! default `SHMEM_PROGRESS_THREAD=auto` no progress thread runs on one host: a PE that spins on
//! its own memory through the library must drive UCX from inside the call it spins on, or the
//! job hangs (the harness kills it). Each shape below once hung: `g` of this PE's own memory, a
//! lock built on `compare_swap` of an element of PE 0, a set/fetch exchange, `Signal::fetch`, and
//! `wait_until` whose condition already holds. Run at 2, 3 and 4 PEs on both paths.

use shmem_core::prelude::*;
use shmem_testkit as common;

#[symmetric]
static FLAG: [u64; 1] = [0];

#[symmetric]
static LOCK_WORD: [u64; 1] = [0];

#[symmetric]
static COUNT: [u64; 1] = [0];

const COUNTS: &[usize] = &[2, 3, 4];
const ROUNDS: u64 = 20;

/// A token goes round the ring `ROUNDS` times; each PE waits for it by polling its own copy of
/// `FLAG` with `g` (the shape of issue 11's hang) and passes it on with `p`.
#[test]
fn ring_polling_with_g_of_own_memory() {
    common::multi_pe_at("ring_polling_with_g_of_own_memory", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let next = (me + 1) % n;
        world.barrier_all();
        for round in 1..=ROUNDS {
            if me == 0 {
                FLAG.p(next, 0, round);
            }
            // PE 0 waits for the token to come back; the others for it to arrive.
            while FLAG.g(me, 0) != round {
                std::thread::yield_now();
            }
            if me != 0 {
                FLAG.p(next, 0, round);
            }
        }
        world.barrier_all();
        assert_eq!(FLAG.local_get(0), ROUNDS);
    });
}

/// Every PE takes a spin lock that lives on PE 0 with `compare_swap`, increments a counter on PE
/// 0 with `g` and `p` under it, and releases it with `set`; PE 0 spins on its own element. The
/// counter is exact only if the lock excludes.
#[test]
fn lock_built_on_compare_swap() {
    common::multi_pe_at("lock_built_on_compare_swap", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        world.barrier_all();
        for _ in 0..10 {
            while LOCK_WORD.at(0, 0).compare_swap(0, me as u64 + 1) != 0 {
                std::thread::yield_now();
            }
            let c = COUNT.g(0, 0);
            COUNT.p(0, 0, c + 1);
            world.quiet();
            LOCK_WORD.at(0, 0).set(0);
        }
        world.barrier_all();
        if me == 0 {
            assert_eq!(COUNT.local_get(0), 10 * n as u64);
        }
    });
}

/// Each PE sets a value on its right neighbour with an atomic `set`, then polls its own element
/// with `fetch` until its left neighbour's value arrives.
#[test]
fn set_then_fetch_own_element() {
    common::multi_pe_at("set_then_fetch_own_element", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        let cells = world.alloc::<u64>(1);
        world.barrier_all();
        cells.at(right, 0).set(1000 + me as u64);
        while cells.at(me, 0).fetch() != 1000 + left as u64 {
            std::thread::yield_now();
        }
        world.barrier_all();
    });
}

/// PE 0 sends a put-with-signal to every other PE; each polls `Signal::fetch` until it is set
/// and then finds the data in place.
#[test]
fn signal_fetch_polling() {
    common::multi_pe_at("signal_fetch_polling", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let data = world.alloc::<u64>(4);
        let sig = world.alloc::<u64>(1);
        world.barrier_all();
        if me == 0 {
            for pe in 1..n {
                let v = [pe as u64; 4];
                data.put_signal(pe, .., &v, sig.signal(0), SignalOp::Set(7));
            }
        } else {
            while sig.signal(0).fetch() != 7 {
                std::thread::yield_now();
            }
            let mut got = [0u64; 4];
            data.local_read(.., &mut got);
            assert_eq!(got, [me as u64; 4]);
        }
        world.barrier_all();
    });
}

/// PE 1 polls with `wait_until` on a condition that always holds and reads its own copy with
/// `local_get`, until PE 0's fetching atomics on it (carried out by PE 1's progress over tcp)
/// are all done and PE 0 says so.
#[test]
fn wait_until_already_true_progresses() {
    common::multi_pe_at("wait_until_already_true_progresses", COUNTS, |world| {
        let me = world.my_pe();
        let counter = world.alloc::<u64>(1);
        let done = world.alloc::<u64>(1);
        world.barrier_all();
        if me == 0 {
            for i in 0..20 {
                assert_eq!(counter.at(1, 0).fetch_add(1), i);
            }
            done.at(1, 0).set(1);
        } else if me == 1 {
            loop {
                counter.wait_until(0, Cmp::Ge, 0);
                if done.local_get(0) == 1 {
                    break;
                }
                std::thread::yield_now();
            }
            assert_eq!(counter.local_get(0), 20);
        }
        world.barrier_all();
    });
}

/// Every PE issues fetching atomics on its right neighbour in an `nbi` scope (completed by the
/// scope's quiet), then polls its own counter with `fetch` until all of its left neighbour's
/// have landed.
#[test]
fn nbi_atomics_then_fetch_polling() {
    common::multi_pe_at("nbi_atomics_then_fetch_polling", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let counter = world.alloc::<u64>(1);
        world.barrier_all();
        let mut olds = [u64::MAX; 10];
        world.nbi(|s| {
            for old in olds.iter_mut() {
                s.fetch(old, || counter.at(right, 0).fetch_add(1));
            }
        });
        let mut sorted = olds;
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        while counter.at(me, 0).fetch() != 10 {
            std::thread::yield_now();
        }
        world.barrier_all();
    });
}
