//! `shmem!` in real jobs at 1, 2, 3, 4 and 8 PEs on both paths: every form moves the values it
//! should, and run-time checks fire before any byte moves.

use shmem_testkit as common;

use common::{multi_pe, multi_pe_at};
use shmem_core::prelude::*;

#[symmetric]
static GRID: [f64; 64] = [0.0; 64];

#[symmetric]
static TOTAL: i64 = 0;

#[symmetric]
static FLAGS: [u32; 8] = [0; 8];

#[test]
fn put_get_and_strided_forms_between_neighbours() {
    multi_pe("put_get_and_strided_forms_between_neighbours", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let heap = world.alloc::<u16>(32);
        let tag = me as f64 * 100.0;
        let row: Vec<f64> = (0..8).map(|i| tag + i as f64).collect();
        shmem!(GRID[right, 0..8] = row);
        shmem!(GRID[right, 16..32;2] = &row[..]);
        shmem!(GRID[right as i32, 63] = tag + 0.5);
        shmem!(heap[right, ..] = [me as u16; 32]; heap[right, 31] = 7);
        world.barrier_all();
        let lt = left as f64 * 100.0;
        for i in 0..8 {
            assert_eq!(GRID.local_get(i), lt + i as f64);
            assert_eq!(GRID.local_get(16 + 2 * i), lt + i as f64);
            assert_eq!(
                GRID.local_get(17 + 2 * i),
                0.0,
                "strided put skips odd slots"
            );
        }
        assert_eq!(GRID.local_get(63), lt + 0.5);
        assert_eq!(heap.local_get(0), left as u16);
        assert_eq!(heap.local_get(31), 7);
        // Reads from the right neighbour give back what this PE wrote there.
        let mut back = [0.0; 8];
        shmem!(back = GRID[right, 0..8]);
        assert_eq!(back.to_vec(), row);
        let mut strided = vec![0.0; 8];
        shmem!(strided = GRID[right, 16..=30;2]);
        assert_eq!(strided, row);
        let mut part = [0u16; 4];
        shmem!(part[1..3] = heap[right, 29..31]);
        assert_eq!(part, [0, me as u16, me as u16, 0]);
        let one: f64 = shmem!(GRID[right, 63]);
        assert_eq!(one, tag + 0.5);
        world.barrier_all();
        // Strided on both sides: every third local element into every other remote one.
        let wide: Vec<f64> = (0..22)
            .map(|i| if i % 3 == 0 { tag + i as f64 } else { -1.0 })
            .collect();
        shmem!(GRID[right, 40..56;2] = wide[0..22;3]);
        world.barrier_all();
        let mut got = [0.0; 15];
        shmem!(got[0..15;2] = GRID[me, 40..56;2]);
        for k in 0..8 {
            assert_eq!(got[2 * k], lt + (3 * k) as f64, "element {k}");
        }
        assert!(got.iter().skip(1).step_by(2).all(|&x| x == 0.0));
        world.barrier_all();
    });
}

#[test]
fn scalar_statics_and_atomics() {
    multi_pe("scalar_statics_and_atomics", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let last = n - 1;
        shmem!(TOTAL[last] += me as i64 + 1);
        shmem!(FLAGS[0, 1] |= 1 << me);
        shmem!(FLAGS[0, 2] ^= 1 << me);
        let ticket = shmem!(FLAGS[last, 3].fetch_inc());
        assert!((ticket as usize) < n);
        world.barrier_all();
        let want = (n * (n + 1) / 2) as i64;
        assert_eq!(shmem!(TOTAL[last]), want);
        assert_eq!(shmem!(FLAGS[0, 1].fetch()), (1u32 << n) - 1);
        assert_eq!(shmem!(FLAGS[0, 2]), (1u32 << n) - 1);
        assert_eq!(shmem!(FLAGS[last, 3]), n as u32);
        world.barrier_all();
        shmem!(TOTAL[last] -= me as i64 + 1);
        world.barrier_all();
        assert_eq!(shmem!(TOTAL[last]), 0);
        world.barrier_all();
        if me == 0 {
            let old = shmem!(TOTAL[last].compare_swap(0, -5));
            assert_eq!(old, 0);
            shmem!(TOTAL[last] = 11);
            assert_eq!(shmem!(TOTAL[last].swap(12)), 11);
        }
        world.barrier_all();
        let t: i64;
        shmem!(t = TOTAL[last]);
        assert_eq!(t, 12);
        world.barrier_all();
    });
}

#[test]
fn nonblocking_forms_complete_at_scope_end() {
    multi_pe("nonblocking_forms_complete_at_scope_end", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let heap = world.alloc::<u64>(16);
        let src: Vec<u64> = (0..16).map(|i| (me * 16 + i) as u64).collect();
        world.nbi(|s| {
            shmem!(nbi s: heap[right, 0..8] = src[..8]; nbi s: heap[right, 8..] = &src[8..]);
        });
        world.barrier_all();
        let mut got = vec![0u64; 16];
        world.nbi(|s| shmem!(nbi s: got = heap[me, ..]));
        let left = (me + n - 1) % n;
        assert_eq!(
            got,
            (0..16).map(|i| (left * 16 + i) as u64).collect::<Vec<_>>()
        );
        world.barrier_all();
    });
}

fn panic_message(f: impl FnOnce()) -> String {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    match r {
        Ok(()) => panic!("expected a panic"),
        Err(p) => p.downcast_ref::<String>().cloned().unwrap_or_default(),
    }
}

#[test]
fn run_time_checks_name_the_values() {
    multi_pe_at("run_time_checks_name_the_values", &[1, 3], |world| {
        let n = world.n_pes();
        let heap = world.alloc::<i32>(10);
        let pe = n + 2;
        let msg = panic_message(|| shmem!(heap[pe, 0..2] = [1, 2]));
        assert!(
            msg.contains(&format!("PE {pe} is out of range")) && msg.contains(&format!("{n} PEs")),
            "{msg}"
        );
        let neg = -1i32;
        let msg = panic_message(|| shmem!(heap[neg, 0] = 1));
        assert!(msg.contains("PE number -1"), "{msg}");
        let msg = panic_message(|| shmem!(heap[0, neg] = 1));
        assert!(msg.contains("index -1"), "{msg}");
        let k = 12;
        let msg = panic_message(|| shmem!(heap[0, 0..k] = vec![0; 12]));
        assert!(
            msg.contains("range 0..12") && msg.contains("length 10"),
            "{msg}"
        );
        let v = vec![1, 2, 3];
        let msg = panic_message(|| shmem!(heap[0, 0..4] = v));
        assert!(
            msg.contains("selects 4 elements") && msg.contains("source has 3"),
            "{msg}"
        );
        let s = 0;
        let msg = panic_message(|| shmem!(heap[0, 0..4;s] = [1]));
        assert!(msg.contains("stride is 0"), "{msg}");
        let mut small = [0.0; 2];
        let three = 3;
        let msg = panic_message(|| shmem!(small = GRID[0, 0..three]));
        assert!(
            msg.contains("selects 3 elements") && msg.contains("destination has 2"),
            "{msg}"
        );
        for i in 0..10 {
            assert_eq!(heap.local_get(i), 0, "nothing moved");
        }
        world.barrier_all();
    });
}

#[test]
#[should_panic(expected = "call shmem_core::init() first")]
fn dsl_before_init_panics_with_advice() {
    if common::is_pe() {
        panic!("call shmem_core::init() first");
    }
    shmem!(GRID[0, 1] = 2.0);
}

#[test]
fn team_relative_and_context_forms() {
    multi_pe("team_relative_and_context_forms", |world| {
        let all = world.team_world();
        let (me, n) = (world.my_pe(), world.n_pes());
        let heap = world.alloc::<u64>(8);
        // Odd world PEs form a team; its PE 0 is world PE 1.
        let odds = all
            .split_strided(1, 2, n / 2, TeamConfig::default())
            .expect("split odds");
        if let Some(odds) = &odds {
            let last = odds.n_pes() - 1;
            // Team PE `last` is world PE 2 * last + 1.
            shmem!(team odds: heap[last, 0] += 1);
            shmem!(team odds: heap[0, 1..3] = [me as u64, 7]);
            odds.barrier();
            if odds.my_pe() == 0 {
                assert_eq!(heap.local_get(2), 7);
            }
            if odds.my_pe() == last {
                assert_eq!(heap.local_get(0), odds.n_pes() as u64);
            }
        }
        world.barrier_all();
        let ctx = world
            .ctx_create::<Private>(CtxOptions::default())
            .expect("ctx");
        let right = (me + 1) % n;
        shmem!(ctx ctx: heap[right, 4..6] = [me as u64 + 10, me as u64 + 20]);
        shmem!(ctx ctx: heap[0, 7] += 1; ctx ctx: heap[right, 3] = 5);
        let old = shmem!(ctx ctx: heap[0, 6].fetch_add(2));
        assert_eq!(old % 2, 0);
        ctx.quiet();
        world.barrier_all();
        let left = (me + n - 1) % n;
        let mut got = [0u64; 2];
        shmem!(ctx ctx: got = heap[me, 4..6]);
        assert_eq!(got, [left as u64 + 10, left as u64 + 20]);
        assert_eq!(shmem!(ctx ctx: heap[me, 3]), 5);
        if me == 0 {
            assert_eq!(heap.local_get(7), n as u64);
            assert_eq!(heap.local_get(6), 2 * n as u64);
        }
        world.barrier_all();
    });
}
