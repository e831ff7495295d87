//! OpenSHMEM 1.5/1.6 point-to-point synchronization in real jobs at 1, 2, 3 and 4 PEs on both
//! paths: wait_until_{all,any,some}[_vector], test_*, signal_add/signal_set and pe_quiet.

use shmem_testkit as common;

use common::multi_pe_at;
use shmem_core::prelude::*;
use std::time::Duration;

const COUNTS: &[usize] = &[1, 2, 3, 4];

#[symmetric]
static SUM: u64 = 0;
#[symmetric]
static GO: u64 = 0;
#[symmetric]
static DATA: [u32; 8] = [0; 8];

/// PE `p` writes `value` into slot `p` of `arr` on every PE, staggered in time, alternating
/// between an atomic set and a plain put (the caller quiets).
fn announce(arr: &SymArray<'_, u64>, me: usize, n: usize, value: u64) {
    std::thread::sleep(Duration::from_millis(5 * me as u64));
    for k in 0..n {
        let pe = (me + k) % n;
        if (me + k).is_multiple_of(2) {
            arr.at(pe, me).set(value);
        } else {
            arr.p(pe, me, value);
        }
    }
}

#[test]
fn wait_until_any_collects_every_writer() {
    multi_pe_at("wait_until_any_collects_every_writer", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let slots = world.alloc::<u64>(n);
        announce(&slots, me, n, me as u64 + 1);
        world.quiet();
        // Every PE collects the n writers one by one, masking the ones already seen.
        let mut seen = vec![false; n];
        for _ in 0..n {
            let i = slots
                .wait_until_any(Some(&seen), Cmp::Ne, 0)
                .expect("some slot is still included");
            assert!(!seen[i], "index {i} returned twice");
            assert_eq!(slots.local_get(i), i as u64 + 1);
            seen[i] = true;
        }
        assert!(seen.iter().all(|&s| s));
        // Everything is masked now: no index, at once.
        assert_eq!(slots.wait_until_any(Some(&seen), Cmp::Ne, 0), None);
        assert_eq!(slots.test_any(Some(&seen), Cmp::Ne, 0), None);
        assert_eq!(slots.test_any(None, Cmp::Eq, n as u64), Some(n - 1));
        assert_eq!(slots.test_any(None, Cmp::Gt, n as u64), None);
        world.barrier_all();
    });
}

#[test]
fn wait_until_some_and_all() {
    multi_pe_at("wait_until_some_and_all", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let slots = world.alloc::<u64>(n);
        announce(&slots, me, n, 10 * (me as u64 + 1));
        world.quiet();
        let mut seen = vec![false; n];
        let mut got = Vec::new();
        while got.len() < n {
            let some = slots.wait_until_some(Some(&seen), Cmp::Ge, 10);
            assert!(!some.is_empty());
            assert!(
                some.windows(2).all(|w| w[0] < w[1]),
                "{some:?} is not increasing"
            );
            for &i in &some {
                assert!(!seen[i], "index {i} returned twice");
                assert_eq!(slots.local_get(i), 10 * (i as u64 + 1));
                seen[i] = true;
            }
            got.extend(some);
        }
        got.sort_unstable();
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        assert!(slots.wait_until_some(Some(&seen), Cmp::Ge, 10).is_empty());
        slots.wait_until_all(None, Cmp::Ge, 10);
        assert!(slots.test_all(None, Cmp::Ge, 10));
        assert!(!slots.test_all(None, Cmp::Ge, 20) || n == 1);
        assert_eq!(
            slots.test_some(None, Cmp::Ge, 20),
            (1..n).collect::<Vec<_>>()
        );
        world.barrier_all();

        // wait_until_all waits for the slowest writer: PE n-1 updates its slot late.
        if me == n - 1 {
            std::thread::sleep(Duration::from_millis(30));
            for pe in 0..n {
                slots.at(pe, me).add(1);
            }
        }
        let mut want: Vec<u64> = (0..n as u64).map(|i| 10 * (i + 1)).collect();
        want[n - 1] += 1;
        slots.wait_until_all_vector(None, Cmp::Eq, &want);
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(slots.local_get(i), w);
        }
        // Ignored elements do not count.
        let mut ignore = vec![false; n];
        ignore[0] = true;
        slots.wait_until_all(Some(&ignore), Cmp::Gt, 10);
        assert!(slots.test_all(Some(&ignore), Cmp::Gt, 10));
        world.barrier_all();
    });
}

#[test]
fn vector_variants_compare_per_element() {
    multi_pe_at("vector_variants_compare_per_element", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let slots = world.alloc::<i64>(n);
        // Thresholds differ per element: element i is "done" at i * 3.
        let limits: Vec<i64> = (0..n as i64).map(|i| i * 3).collect();
        world.barrier_all();
        // Every PE raises its slot everywhere in steps of 1 up to me * 3 (atomically).
        for _ in 0..me * 3 {
            for pe in 0..n {
                slots.at(pe, me).inc();
            }
        }
        let i = slots
            .wait_until_any_vector(None, Cmp::Ge, &limits)
            .expect("no mask");
        assert!(slots.local_get(i) >= limits[i]);
        let some = slots.wait_until_some_vector(None, Cmp::Ge, &limits);
        assert!(
            some.contains(&0),
            "element 0 (limit 0) is done from the start: {some:?}"
        );
        slots.wait_until_all_vector(None, Cmp::Eq, &limits);
        assert!(slots.test_all_vector(None, Cmp::Eq, &limits));
        assert_eq!(
            slots.test_some_vector(None, Cmp::Eq, &limits),
            (0..n).collect::<Vec<_>>()
        );
        let above: Vec<i64> = limits.iter().map(|l| l + 1).collect();
        assert_eq!(slots.test_any_vector(None, Cmp::Ge, &above), None);
        assert!(!slots.test_all_vector(None, Cmp::Ge, &above));
        let mut ignore = vec![true; n];
        ignore[n - 1] = false;
        assert_eq!(
            slots.test_any_vector(Some(&ignore), Cmp::Lt, &above),
            Some(n - 1)
        );
        world.barrier_all();
    });
}

#[test]
fn signal_add_set_and_pe_quiet() {
    multi_pe_at("signal_add_set_and_pe_quiet", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        // signal_add: every PE adds me + 1 to PE 0's SUM.
        SUM.signal().add(0, me as u64 + 1);
        if me == 0 {
            let total = (n * (n + 1) / 2) as u64;
            assert_eq!(SUM.signal().wait_until(Cmp::Eq, total), total);
        }
        world.barrier_all();
        // pe_quiet orders the data before a separately issued signal_set.
        for round in 1..=5u64 {
            let row = [me as u32 * 100 + round as u32; 8];
            DATA.put(right, .., &row);
            world.pe_quiet(&[right]);
            GO.signal().set(right, round);
            GO.signal().wait_until(Cmp::Eq, round);
            for k in 0..8 {
                assert_eq!(
                    DATA.local_get(k),
                    left as u32 * 100 + round as u32,
                    "round {round}"
                );
            }
            // The left neighbour must not overwrite DATA before it is read.
            world.barrier_all();
        }
        // pe_quiet on several PEs and on none.
        world.pe_quiet(&[]);
        let all: Vec<usize> = (0..n).collect();
        world.pe_quiet(&all);
        world.barrier_all();
        assert_eq!(GO.signal().fetch(), 5);
    });
}
