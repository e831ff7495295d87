//! put-with-signal, signal_wait_until and wait_until in real jobs at 1, 2, 3, 4 and 8 PEs on both
//! paths: a pipeline where each PE streams rounds of data to its right neighbour and the
//! neighbour waits on the signal before reading; and the orderings the UCX path's one-message
//! put-with-signal must keep (after a fence, at a quiet, many adders, payloads too large for
//! one message), also on two hosts.

use shmem_testkit as common;

use common::{multi_pe, multi_pe_hosts};
use shmem_core::prelude::*;

#[symmetric]
static ROUND: u64 = 0;

#[symmetric]
static BOX: [u32; 16] = [0; 16];

const ROUNDS: u64 = 20;

#[test]
fn pipeline_with_put_signal_add() {
    multi_pe("pipeline_with_put_signal_add", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let inbox = world.alloc::<u64>(ROUNDS as usize * 4);
        for r in 0..ROUNDS {
            let payload = [me as u64 * 1000 + r; 4];
            let at = r as usize * 4;
            if r % 2 == 0 {
                inbox.put_signal(
                    right,
                    at..at + 4,
                    &payload,
                    ROUND.signal(),
                    SignalOp::Add(1),
                );
            } else {
                shmem!(inbox[right, at..at + 4] = payload => ROUND += 1);
            }
            // The data of round r from the left is here once the signal reaches r + 1.
            let seen = ROUND.signal().wait_until(Cmp::Ge, r + 1);
            assert!(seen > r);
            for k in 0..4 {
                assert_eq!(inbox.local_get(at + k), left as u64 * 1000 + r, "round {r}");
            }
        }
        world.barrier_all();
        assert_eq!(ROUND.signal().fetch(), ROUNDS);
        world.barrier_all();
    });
}

#[test]
fn put_signal_set_into_array_signal_and_wait_until() {
    multi_pe("put_signal_set_into_array_signal_and_wait_until", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let flags = world.alloc::<u64>(n);
        // Every PE sends four words to PE 0 and sets its own flag slot there.
        shmem!(BOX[0, 0..4] = [me as u32; 4] => flags[me] = me as u64 + 100);
        if me == 0 {
            for pe in 0..n {
                let v = flags.signal(pe).wait_until(Cmp::Eq, pe as u64 + 100);
                assert_eq!(v, pe as u64 + 100);
            }
        }
        world.barrier_all();
        // wait_until on a plain element, written by an atomic from the last PE.
        let last = n - 1;
        if me == last {
            BOX.at(0, 9).add(7);
        }
        if me == 0 {
            assert_eq!(BOX.wait_until(9, Cmp::Ge, 7), 7);
            assert!(BOX.test(9, Cmp::Eq, 7));
            assert!(!BOX.test(9, Cmp::Lt, 7));
        }
        world.barrier_all();
    });
}

#[test]
fn nonblocking_put_signal_and_fetch_with_sync_all() {
    multi_pe("nonblocking_put_signal_and_fetch_with_sync_all", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let inbox = world.alloc::<u32>(4);
        let flag = world.alloc::<u64>(1);
        let counter = world.alloc::<u64>(1);
        let src = [me as u32 + 1; 4];
        let mut ticket = u64::MAX;
        world.nbi(|s| {
            s.put_signal(&inbox, right, .., &src, flag.signal(0), SignalOp::Set(9));
            s.fetch(&mut ticket, || counter.at(0, 0).fetch_inc());
        });
        assert!(ticket < n as u64);
        assert_eq!(flag.signal(0).wait_until(Cmp::Eq, 9), 9);
        assert_eq!(inbox.local_get(3), left as u32 + 1);
        world.quiet();
        world.sync_all();
        assert_eq!(counter.at(0, 0).fetch(), n as u64);
        world.barrier_all();
    });
}

/// What the UCX path's one-message put-with-signal must keep: (1) a large plain put, a fence,
/// then a put-with-signal: whoever sees the signal sees the plain put; (2) a put-with-signal,
/// a quiet, then a plain flag: whoever sees the flag sees the put-with-signal's data and
/// signal; (3) every PE adds to one signal word on PE 0 with put-with-signal, which counts them
/// all; (4) a payload larger than one message (96 KiB) with its signal.
#[test]
fn put_signal_orders_with_fence_quiet_and_other_adders() {
    multi_pe_hosts(
        "put_signal_orders_with_fence_quiet_and_other_adders",
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let (right, left) = ((me + 1) % n, (me + n - 1) % n);
            const ROUNDS: u64 = 6;
            const BIG: usize = 96 << 10;
            let bulk = world.alloc::<u64>(BIG / 8);
            let small = world.alloc::<u64>(4);
            let sig = world.alloc::<u64>(3);
            let flag = world.alloc::<u64>(1);
            let value = |pe: usize, r: u64, k: usize| (pe as u64) << 40 | r << 20 | k as u64;
            world.barrier_all();
            for r in 1..=ROUNDS {
                // (1) A plain put of the whole 96 KiB, a fence, then a small put-with-signal.
                let src: Vec<u64> = (0..BIG / 8).map(|k| value(me, r, k)).collect();
                bulk.put(right, .., &src);
                world.fence();
                small.put_signal(right, .., &[r; 4], sig.signal(0), SignalOp::Set(r));
                sig.signal(0).wait_until(Cmp::Ge, r);
                for k in [0, 1, BIG / 16, BIG / 8 - 1] {
                    assert_eq!(
                        bulk.local_get(k),
                        value(left, r, k),
                        "round {r}, element {k}"
                    );
                }
                world.barrier_all();
                // (2) A put-with-signal, a quiet, then a plain flag.
                small.put_signal(right, .., &[r + 100; 4], sig.signal(1), SignalOp::Set(r));
                world.quiet();
                flag.p(right, 0, r);
                flag.wait_until(0, Cmp::Ge, r);
                assert_eq!(sig.signal(1).fetch(), r, "round {r}: signal after the flag");
                assert_eq!(
                    small.local_get(3),
                    r + 100,
                    "round {r}: data after the flag"
                );
                world.barrier_all();
                // (4) 96 KiB with its signal in one call.
                let src: Vec<u64> = (0..BIG / 8).map(|k| value(me, r + 50, k)).collect();
                bulk.put_signal(right, .., &src, sig.signal(1), SignalOp::Add(1));
                sig.signal(1).wait_until(Cmp::Ge, r + 1);
                for k in [0, BIG / 16, BIG / 8 - 1] {
                    assert_eq!(
                        bulk.local_get(k),
                        value(left, r + 50, k),
                        "round {r}, big {k}"
                    );
                }
                world.barrier_all();
                sig.signal(1).set_local(r);
                world.barrier_all();
            }
            // (3) Every PE adds its number plus one to PE 0's word, ROUNDS times.
            for r in 0..ROUNDS {
                small.put_signal(0, 0..1, &[r], sig.signal(2), SignalOp::Add(me as u64 + 1));
            }
            world.quiet();
            world.barrier_all();
            if me == 0 {
                let want = ROUNDS * (n as u64) * (n as u64 + 1) / 2;
                assert_eq!(sig.signal(2).fetch(), want);
            }
            world.barrier_all();
        },
    );
}
