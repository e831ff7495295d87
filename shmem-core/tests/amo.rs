//! Atomic memory operations from every PE on one PE's words, at 1, 2, 3, 4 and 8 PEs on the
//! direct (CPU atomics on mapped memory) and UCX paths. Totals are checked on the target.

use shmem_testkit as common;

use common::multi_pe_hosts;
use shmem_core::prelude::*;

#[symmetric]
static COUNTERS: [u64; 4] = [0; 4];

#[symmetric]
static SMALL: u32 = 0;

#[symmetric]
static FLOAT: f64 = 1.5;

const K: u64 = 50;

#[test]
fn fetch_inc_and_add_from_every_pe_count_exactly() {
    multi_pe_hosts("fetch_inc_and_add_from_every_pe_count_exactly", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let heap = world.alloc::<i64>(2);
        let target = n - 1;
        let mut seen = 0u64;
        for _ in 0..K {
            seen += COUNTERS.at(target, 0).fetch_inc();
            heap.at(target, 1).add(-3);
            SMALL.at(target).inc();
        }
        // The fetched old values are a permutation of 0..n*K: their sum is fixed.
        COUNTERS.at(target, 1).add(seen);
        world.barrier_all();
        if me == target {
            let total = n as u64 * K;
            assert_eq!(COUNTERS.local_get(0), total);
            assert_eq!(COUNTERS.local_get(1), total * (total - 1) / 2);
            assert_eq!(heap.local_get(1), -3 * total as i64);
            assert_eq!(SMALL.local(), total as u32);
        }
        // Fetch from anywhere sees the final value.
        assert_eq!(COUNTERS.at(target, 0).fetch(), n as u64 * K);
        world.barrier_all();
    });
}

#[test]
fn compare_swap_has_exactly_one_winner() {
    multi_pe_hosts("compare_swap_has_exactly_one_winner", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let slot = world.alloc::<u32>(2);
        let old = slot.at(0, 0).compare_swap(0, me as u32 + 1);
        if old == 0 {
            slot.at(0, 1).inc();
        }
        world.barrier_all();
        let winner = slot.at(0, 0).fetch();
        assert!((1..=n as u32).contains(&winner), "winner {winner}");
        assert_eq!(
            slot.at(0, 1).fetch(),
            1,
            "exactly one PE saw the old value 0"
        );
        if old == 0 {
            assert_eq!(winner, me as u32 + 1);
        } else {
            assert_eq!(old, winner, "losers see the winner's value");
        }
        world.barrier_all();
    });
}

#[test]
fn bitwise_swap_set_and_sub() {
    multi_pe_hosts("bitwise_swap_set_and_sub", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let words = world.alloc::<u64>(4);
        words.at(0, 1).set(u64::MAX);
        world.barrier_all();
        words.at(0, 0).or(1 << me);
        words.at(0, 1).and(!(1 << me));
        let before = words.at(0, 2).fetch_xor(1 << (me + 8));
        assert_eq!(before & (1 << (me + 8)), 0, "nobody else flips my bit");
        COUNTERS.at(0, 3).sub(0); // wrapping sub of zero changes nothing
        world.barrier_all();
        let all = (1u64 << n) - 1;
        assert_eq!(words.at(0, 0).fetch(), all);
        assert_eq!(words.at(0, 1).fetch(), !all);
        assert_eq!(words.at(0, 2).fetch(), all << 8);
        world.barrier_all();
        if me == 0 {
            assert_eq!(words.at(0, 0).fetch_and(0), all);
            assert_eq!(words.at(0, 0).fetch_or(5), 0);
            assert_eq!(words.at(0, 0).swap(9), 5);
            assert_eq!(words.local_get(0), 9);
            FLOAT.at(n - 1).set(-2.25);
            assert_eq!(FLOAT.at(n - 1).swap(3.5), -2.25);
            assert_eq!(FLOAT.at(n - 1).fetch(), 3.5);
        }
        world.barrier_all();
        if me == n - 1 {
            assert_eq!(FLOAT.local(), 3.5);
        }
        // Subtraction through the add of the negation, on an unsigned word.
        COUNTERS.at(0, 2).add(100);
        world.barrier_all();
        COUNTERS.at(0, 2).sub(7);
        world.barrier_all();
        assert_eq!(COUNTERS.at(0, 2).fetch(), 100 * n as u64 - 7 * n as u64);
        world.barrier_all();
    });
}

/// A non-fetching add is complete at the next quiet: the PE that sees a flag put after the
/// quiet sees the adds (through UCX an add completes when its reply is in, and quiet waits for
/// that), 64- and 32-bit.
#[test]
fn adds_are_complete_at_quiet() {
    multi_pe_hosts("adds_are_complete_at_quiet", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let words = world.alloc::<u64>(1);
        let small = world.alloc::<u32>(1);
        let flag = world.alloc::<u64>(1);
        world.barrier_all();
        for r in 1..=40u64 {
            words.at(right, 0).add(r);
            small.at(right, 0).add(1);
            world.quiet();
            flag.p(right, 0, r);
            flag.wait_until(0, Cmp::Ge, r);
            assert_eq!(words.local_get(0), r * (r + 1) / 2, "round {r}, 64-bit");
            assert_eq!(small.local_get(0), r as u32, "round {r}, 32-bit");
            // Nobody adds for the next round before everybody has checked this one.
            world.barrier_all();
        }
    });
}
