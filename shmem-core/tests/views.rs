//! Symmetric views and the point-to-point types: `A.slice(a..b)` as a symmetric object of its
//! own (RMA, strided RMA, atomics, waits, signals, collectives, contexts), a scalar
//! `#[symmetric]` static as a one-element array (`X.as_array()`), and `wait_until`/`test` on
//! 16-bit elements. Run at 2, 3 and 4 PEs on both paths; every value is read back on the PE
//! that did not write it.

use shmem_core::prelude::*;
use shmem_testkit as common;

#[symmetric]
static GRID: [u64; 40] = [0; 40];

#[symmetric]
static READY: u64 = 0;

#[symmetric]
static HITS: u64 = 0;

const COUNTS: &[usize] = &[2, 3, 4];

#[test]
fn slices_are_symmetric_objects() {
    common::multi_pe_at("slices_are_symmetric_objects", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let heap = world.alloc::<u64>(30);
        // Ranges of each: GRID[10..20] and heap[5..25].
        let g = GRID.slice(10..20);
        let h = heap.slice(5..25);
        assert_eq!((g.len(), h.len()), (10, 20));
        let sub = h.slice(2..6); // heap[7..11]
        world.barrier_all();
        g.put(right, 1..4, &[me as u64 + 1, me as u64 + 2, me as u64 + 3]);
        sub.p(right, 3, 100 + me as u64);
        h.iput(right, 10..20, 3, &[7, 8, 9, 10], 1); // heap[15], [18], [21], [24]
        g.at(right, 9).fetch_add(5);
        world.barrier_all();
        let l = left as u64;
        assert_eq!(
            (GRID.local_get(11), GRID.local_get(12), GRID.local_get(13)),
            (l + 1, l + 2, l + 3)
        );
        assert_eq!(
            (GRID.local_get(10), GRID.local_get(14)),
            (0, 0),
            "outside the range"
        );
        assert_eq!(GRID.local_get(19), 5);
        assert_eq!(heap.local_get(10), 100 + l);
        for (i, want) in [(15, 7), (18, 8), (21, 9), (24, 10), (16, 0), (25, 0)] {
            assert_eq!(heap.local_get(i), want, "heap[{i}]");
        }
        // shmem! takes a view like any symmetric object.
        let v = GRID.slice(20..30);
        let src = [me as u64 + 50, me as u64 + 60];
        shmem!(v[right, 4..6] = src);
        world.barrier_all();
        assert_eq!((GRID.local_get(24), GRID.local_get(25)), (l + 50, l + 60));
        let mut two = [0u64; 2];
        shmem!(two = v[right, 4..6]);
        assert_eq!(two, src);
        let mut back = [0u64; 3];
        g.get(right, 1..4, &mut back);
        assert_eq!(back, [me as u64 + 1, me as u64 + 2, me as u64 + 3]);
        // Collectives into a slice: broadcast into heap[0..4], a reduction into GRID[30..31].
        let all = world.team_world();
        all.broadcast(&heap.slice(0..4), &[1, 2, 3, 4], 0);
        let mut got = [0u64; 4];
        heap.local_read(0..4, &mut got);
        assert_eq!(got, [1, 2, 3, 4]);
        all.sum_reduce(&GRID.slice(30..31), &[me as u64 + 1]);
        assert_eq!(GRID.local_get(30), (n * (n + 1) / 2) as u64);
        assert_eq!(GRID.local_get(31), 0, "past the reduction's slice");
        // A signal in a slice, and a wait on it.
        world.barrier_all();
        let sig = heap.slice(26..30);
        g.put_signal(right, 5..6, &[9], sig.signal(1), SignalOp::Set(1));
        sig.wait_until(1, Cmp::Eq, 1);
        assert_eq!(GRID.local_get(15), 9);
        assert_eq!(heap.local_get(26), 0);
        // Contexts take slices too.
        let ctx = world
            .ctx_create::<Private>(CtxOptions::default())
            .expect("ctx");
        ctx.put(&g, right, 0..1, &[77]);
        ctx.quiet();
        world.barrier_all();
        assert_eq!(GRID.local_get(10), 77);
        // A range outside the object panics before anything moves.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = heap.slice(20..31);
        }));
        let msg = r.expect_err("slice past the end");
        let text = msg
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(
            text.contains("20..31") && text.contains("length 30"),
            "{text}"
        );
        world.barrier_all();
    });
}

#[test]
fn scalar_statics_wait_test_and_ctx() {
    common::multi_pe_at("scalar_statics_wait_test_and_ctx", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        world.barrier_all();
        if me == 0 {
            for pe in 1..n {
                READY.at(pe).set(pe as u64 * 10);
            }
        } else {
            let seen = READY.as_array().wait_until(0, Cmp::Ge, 1);
            assert_eq!(seen, me as u64 * 10);
            assert!(READY.as_array().test(0, Cmp::Eq, me as u64 * 10));
            assert_eq!(READY.as_array().test_any(None, Cmp::Ne, 0), Some(0));
        }
        // Every PE adds to PE 0's scalar through a context.
        let ctx = world
            .ctx_create::<Private>(CtxOptions::default())
            .expect("ctx");
        ctx.at(&HITS.as_array(), 0, 0).fetch_add(me as u64 + 1);
        ctx.quiet();
        world.barrier_all();
        if me == 0 {
            assert_eq!(HITS.local(), (n * (n + 1) / 2) as u64);
        }
        world.barrier_all();
    });
}

#[test]
fn sixteen_bit_waits() {
    common::multi_pe_at("sixteen_bit_waits", COUNTS, |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let flags = world.alloc::<u16>(4);
        let signed = world.alloc::<i16>(2);
        world.barrier_all();
        let right = (me + 1) % n;
        flags.p(right, 2, 0xBEEF);
        signed.p(right, 1, -300);
        assert_eq!(flags.wait_until(2, Cmp::Eq, 0xBEEF), 0xBEEF);
        assert_eq!(signed.wait_until(1, Cmp::Lt, 0), -300);
        assert!(flags.test(2, Cmp::Gt, 0x1000));
        assert!(!flags.test(1, Cmp::Ne, 0));
        assert_eq!(flags.test_any(None, Cmp::Ne, 0), Some(2));
        world.barrier_all();
    });
}
