//! In-place collectives (the source is the destination's own local copy, C's `dest == source`)
//! and gets into a symmetric array's own copy (`get_to`, `iget_to`, C's `&sym[k]` destination),
//! all without `unsafe`. At 2, 3 and 4 PEs on both paths; the results are checked on every PE.

use shmem_core::prelude::*;
use shmem_testkit as common;

#[symmetric]
static TOTALS: [i64; 8] = [0; 8];

const COUNTS: &[usize] = &[2, 3, 4];

#[test]
fn in_place_reductions_and_broadcasts() {
    common::multi_pe_at("in_place_reductions_and_broadcasts", COUNTS, |world| {
        let all = world.team_world();
        let (me, n) = (world.my_pe(), world.n_pes());
        let a = world.alloc::<u64>(5);
        a.local_write(.., &[me as u64 + 1, 10, 1 << me, 7, 99]);
        // The first four elements in place; element 4 is not part of the slice.
        all.sum_reduce_in_place(&a.slice(0..2));
        all.xor_reduce_in_place(&a.slice(2..3));
        all.max_reduce_in_place(&a.slice(3..4));
        let mut got = [0u64; 5];
        a.local_read(.., &mut got);
        let xor = (0..n).fold(0, |x, p| x ^ (1u64 << p));
        assert_eq!(got, [(n * (n + 1) / 2) as u64, 10 * n as u64, xor, 7, 99]);
        // On a static, signed.
        TOTALS.local_write(0..1, &[-(me as i64)]);
        all.min_reduce_in_place(&TOTALS.slice(0..1));
        assert_eq!(TOTALS.local_get(0), -(n as i64 - 1));
        // Broadcasts from the last PE, small (mailbox) and large (straight into dest).
        let root = n - 1;
        for len in [3usize, 5000] {
            let b = world.alloc::<u32>(len + 1);
            if me == root {
                let v: Vec<u32> = (0..len as u32).map(|i| i * 3 + 1).collect();
                b.local_write(0..len, &v);
            }
            b.local_set(len, 555);
            all.broadcast_in_place(&b.slice(0..len), root);
            let mut out = vec![0u32; len + 1];
            b.local_read(.., &mut out);
            for (i, x) in out[..len].iter().enumerate() {
                assert_eq!(*x, i as u32 * 3 + 1, "len {len}, element {i}");
            }
            assert_eq!(out[len], 555, "past the broadcast");
            world.barrier_all();
        }
    });
}

#[test]
fn gets_into_own_symmetric_copy() {
    common::multi_pe_at("gets_into_own_symmetric_copy", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let src = world.alloc::<u32>(16);
        let dst = world.alloc::<u32>(16);
        let v: Vec<u32> = (0..16).map(|i| me as u32 * 100 + i).collect();
        src.local_write(.., &v);
        world.barrier_all();
        // Elements 4..8 of the right neighbour into dst[10..14].
        src.get_to(right, 4..8, &dst.slice(10..14));
        let r = right as u32 * 100;
        for (i, want) in [(10, r + 4), (11, r + 5), (13, r + 7), (9, 0), (14, 0)] {
            assert_eq!(dst.local_get(i), want, "dst[{i}]");
        }
        // Every third element of 0..12 into dst[0], dst[2], dst[4], dst[6].
        src.iget_to(right, 0..12, 3, &dst.slice(0..8), 2);
        for (i, want) in [(0, r), (2, r + 3), (4, r + 6), (6, r + 9), (1, 0), (7, 0)] {
            assert_eq!(dst.local_get(i), want, "dst[{i}] after iget_to");
        }
        // Nobody changes `src` before every PE has read its neighbour's.
        world.barrier_all();
        // From this PE itself, overlapping: src[2..10] <- src[0..8].
        src.get_to(me, 0..8, &src.slice(2..10));
        let mine = me as u32 * 100;
        for (i, want) in [
            (2, mine),
            (3, mine + 1),
            (9, mine + 7),
            (1, mine + 1),
            (10, mine + 10),
        ] {
            assert_eq!(src.local_get(i), want, "src[{i}] after the overlapping get");
        }
        // A length mismatch panics before anything moves.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            src.get_to(right, 0..3, &dst.slice(0..4));
        }));
        assert!(r.is_err(), "3 elements into a 4-element destination");
        world.barrier_all();
    });
}
