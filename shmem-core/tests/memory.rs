//! Aligned allocation, realloc and allocation with hints in real jobs at 1, 2, 3 and 4 PEs on
//! both paths, checking values across PEs.

use shmem_testkit as common;

use common::multi_pe_at;
use shmem_core::prelude::*;

const COUNTS: &[usize] = &[1, 2, 3, 4];

#[test]
fn alloc_aligned_is_aligned_zeroed_and_remote() {
    multi_pe_at(
        "alloc_aligned_is_aligned_zeroed_and_remote",
        COUNTS,
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            // A small array first, so that the aligned one does not start at a round offset anyway.
            let _pad = world.alloc::<u8>(100);
            for align in [8usize, 64, 128, 1024, 4096] {
                let a = world.alloc_aligned::<u64>(33, align);
                let addr = a.peer_slice(me).expect("own copy").as_ptr() as usize;
                assert_eq!(addr % align, 0, "alignment {align}");
                for i in 0..33 {
                    assert_eq!(a.local_get(i), 0, "zeroed: align {align} index {i} pe {me}");
                }
                // Nobody writes into a neighbour's copy before the neighbour has checked it.
                world.barrier_all();
                let row: Vec<u64> = (0..33)
                    .map(|i| (me * 1000 + i) as u64 + align as u64)
                    .collect();
                a.put(right, .., &row);
                world.barrier_all();
                for i in 0..33 {
                    assert_eq!(a.local_get(i), (left * 1000 + i) as u64 + align as u64);
                }
                world.barrier_all();
            }
            // Allocations of different alignments interleave and are freed in order.
            let x = world.alloc_aligned::<u32>(5, 256);
            let y = world.alloc::<u32>(7);
            let z = world.alloc_aligned::<u32>(1, 2048);
            x.p(right, 4, 1);
            y.p(right, 6, 2);
            z.p(right, 0, 3);
            world.barrier_all();
            assert_eq!((x.local_get(4), y.local_get(6), z.local_get(0)), (1, 2, 3));
            drop(z);
            drop(y);
            drop(x);
            world.barrier_all();
        },
    );
}

#[test]
fn realloc_keeps_prefix_and_zeroes_rest() {
    multi_pe_at("realloc_keeps_prefix_and_zeroes_rest", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let a = world.alloc::<u64>(10);
        let row: Vec<u64> = (0..10).map(|i| (me * 100 + i) as u64).collect();
        a.put(right, .., &row);
        // Something after `a`, so that growing it must move it.
        let blocker = world.alloc::<u64>(3);
        blocker.p(right, 2, 77);
        // Grow: the prefix survives on every PE, the rest is zero, remote access works.
        let a = a.realloc(5000);
        assert_eq!(a.len(), 5000);
        for i in 0..10 {
            assert_eq!(a.local_get(i), (left * 100 + i) as u64);
        }
        for i in [10, 11, 63, 64, 4999] {
            assert_eq!(a.local_get(i), 0);
        }
        world.barrier_all();
        a.p(right, 4999, me as u64 + 1);
        world.barrier_all();
        assert_eq!(a.local_get(4999), left as u64 + 1);
        assert_eq!(blocker.local_get(2), 77);
        // Shrink: the first 4 stay.
        let mut a = a.realloc(4);
        assert_eq!(a.len(), 4);
        for i in 0..4 {
            assert_eq!(a.local_get(i), (left * 100 + i) as u64);
        }
        // Grow again (in place or not): element 4.. are zero, not the old values.
        a.try_realloc(20).expect("fits");
        for i in 0..4 {
            assert_eq!(a.local_get(i), (left * 100 + i) as u64);
        }
        for i in 4..20 {
            assert_eq!(a.local_get(i), 0, "element {i} after shrink and grow");
        }
        // A failing realloc leaves the array as it was, on every PE.
        let err = a.try_realloc(usize::MAX / 16).expect_err("cannot fit");
        assert!(err.to_string().contains("exhausted"), "{err}");
        assert_eq!(a.len(), 20);
        assert_eq!(a.local_get(3), (left * 100 + 3) as u64);
        // To and from zero length.
        let a = a.realloc(0);
        assert!(a.is_empty());
        let a = a.realloc(3);
        assert_eq!((a.local_get(0), a.local_get(2)), (0, 0));
        world.barrier_all();
        a.p(right, 1, 9);
        world.barrier_all();
        assert_eq!(a.local_get(1), 9);
        // Aligned arrays keep their alignment.
        let b = world.alloc_aligned::<u8>(10, 1024);
        b.p(right, 9, 5);
        let b = b.realloc(3000);
        let addr = b.peer_slice(me).expect("own copy").as_ptr() as usize;
        assert_eq!(addr % 1024, 0);
        assert_eq!(b.local_get(9), 5);
        world.barrier_all();
    });
}

#[test]
fn alloc_with_hints_works_for_atomics_and_signals() {
    multi_pe_at(
        "alloc_with_hints_works_for_atomics_and_signals",
        COUNTS,
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let counters =
                world.alloc_with_hints::<u64>(n, MallocHints::ATOMICS_REMOTE | MallocHints::NONE);
            let flags = world.alloc_with_hints::<u64>(1, MallocHints::SIGNAL_REMOTE);
            let both = world.alloc_with_hints::<u64>(
                2,
                MallocHints::ATOMICS_REMOTE | MallocHints::SIGNAL_REMOTE,
            );
            // Hints C does not know (a later OpenSHMEM's, an implementation's own) are ignored.
            let unknown = MallocHints::from_bits_truncate(1 << 40 | 1 << 7 | 1);
            assert_eq!(unknown, MallocHints::ATOMICS_REMOTE);
            let extra = world.alloc_with_hints::<u64>(1, unknown);
            extra.at((me + 1) % n, 0).inc();
            for pe in 0..n {
                counters.at(pe, me).add(me as u64 + 1);
                both.at(pe, 1).inc();
            }
            flags.signal(0).add(0, 1);
            if me == 0 {
                flags.signal(0).wait_until(Cmp::Eq, n as u64);
            }
            world.barrier_all();
            for i in 0..n {
                assert_eq!(counters.local_get(i), i as u64 + 1);
            }
            assert_eq!(both.local_get(1), n as u64);
            assert_eq!(both.local_get(0), 0);
            assert_eq!(extra.local_get(0), 1);
            world.barrier_all();
        },
    );
}

/// Alignments above the page size, up to 64 MiB, at the same offset on every PE: every heap is
/// mapped at a 1 GiB boundary. Repeated, since where a heap lands used to vary from run to run;
/// alignments below the element's are met as C's untyped `shmem_align` meets them.
#[test]
fn alloc_aligned_above_the_page_size() {
    multi_pe_at(
        "alloc_aligned_above_the_page_size",
        &[1, 2, 3, 4],
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            let _pad = world.alloc::<u8>(100);
            for round in 0..3u64 {
                for align in [8192usize, 1 << 16, 1 << 20, 4 << 20, 64 << 20] {
                    let a = world.alloc_aligned::<u64>(17, align);
                    let addr = a.peer_slice(me).expect("own copy").as_ptr() as usize;
                    assert_eq!(addr % align, 0, "alignment {align}, round {round}");
                    world.barrier_all();
                    a.p(right, 16, align as u64 + round);
                    world.barrier_all();
                    assert_eq!(a.local_get(16), align as u64 + round, "from PE {left}");
                }
            }
            // Below the element's alignment: a u64 array asked for at 2 bytes is 8-aligned.
            let b = world.alloc_aligned::<u64>(3, 2);
            let addr = b.peer_slice(me).expect("own copy").as_ptr() as usize;
            assert_eq!(addr % 8, 0);
            world.barrier_all();
        },
    );
}

#[test]
fn usage_counts_what_is_held_and_returns_to_its_start() {
    multi_pe_at(
        "usage_counts_what_is_held_and_returns_to_its_start",
        COUNTS,
        |world| {
            let before = world.usage();
            assert_eq!(before.heap_free, before.heap_largest_free);
            assert_eq!((before.heap_free_ranges, before.contexts), (1, 0));
            let a = world.alloc::<u64>(1000);
            let b = world.alloc::<u8>(3);
            drop(a);
            let mid = world.usage();
            // A hole where `a` was, then `b`, then the rest.
            assert_eq!(mid.heap_free_ranges, 2, "{mid:?}");
            assert!(mid.heap_free < before.heap_free && mid.heap_largest_free < before.heap_free);
            let n = world.n_pes();
            let team = world
                .team_world()
                .split_strided(0, 1, n, TeamConfig::default())
                .expect("split")
                .expect("every PE is a member");
            let ctx = world
                .ctx_create::<Private>(CtxOptions::default())
                .expect("ctx");
            let held = world.usage();
            assert_eq!(
                (held.teams, held.contexts),
                (before.teams + 1, before.contexts + 1),
                "{held:?}"
            );
            drop((ctx, team, b));
            world.barrier_all();
            assert_eq!(world.usage(), before);
        },
    );
}
