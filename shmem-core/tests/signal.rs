//! put-with-signal, signal_wait_until and wait_until in real jobs at 1, 2, 3, 4 and 8 PEs on both
//! paths: a pipeline where each PE streams rounds of data to its right neighbour and the
//! neighbour waits on the signal before reading.

use shmem_testkit as common;

use common::multi_pe;
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
