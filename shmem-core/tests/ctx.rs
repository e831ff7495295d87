//! Contexts at 1, 2, 3, 4 and 8 PEs on the direct and UCX paths: context-scoped RMA and atomics
//! land, `quiet` completes them, and shared contexts work from several threads at once.

use shmem_testkit as common;

use common::multi_pe;
use shmem_core::ThreadLevel;
use shmem_core::prelude::*;

#[symmetric]
static SLOTS: [u64; 64] = [0; 64];

#[symmetric]
static HITS: [u64; 2] = [0; 2];

#[test]
fn context_rma_and_atomics_complete_at_quiet() {
    multi_pe("context_rma_and_atomics_complete_at_quiet", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let ctx = world
            .ctx_create::<Private>(CtxOptions::default())
            .expect("ctx");
        let heap = world.alloc::<i32>(16);
        ctx.put(&SLOTS, right, 0..4, &[me as u64; 4]);
        ctx.p(&heap, right, 15, -(me as i32));
        ctx.fence();
        ctx.at(&HITS, 0, 0).add(1);
        assert_eq!(ctx.at(&HITS, 0, 1).fetch_add(2) % 2, 0);
        ctx.quiet();
        world.barrier_all();
        assert_eq!(SLOTS.local_get(3), left as u64);
        assert_eq!(heap.local_get(15), -(left as i32));
        let mut back = [0u64; 4];
        ctx.get(&SLOTS, right, 0..4, &mut back);
        assert_eq!(back, [me as u64; 4]);
        assert_eq!(ctx.g(&heap, right, 15), -(me as i32));
        if me == 0 {
            assert_eq!(HITS.local_get(0), n as u64);
            assert_eq!(HITS.local_get(1), 2 * n as u64);
        }
        world.barrier_all();
    });
}

#[test]
fn shared_and_serialized_contexts_across_threads() {
    multi_pe("shared_and_serialized_contexts_across_threads", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let shared = world
            .ctx_create::<Shared>(CtxOptions { nostore: true })
            .expect("ctx");
        let threads = 3;
        let per = 20u64;
        std::thread::scope(|s| {
            for t in 0..threads {
                let ctx = &shared;
                s.spawn(move || {
                    for k in 0..per {
                        // Each thread fills its own slots on every PE and counts on PE 0.
                        let pe = ((k as usize) + t) % n;
                        ctx.p(&SLOTS, pe, 8 + me * threads + t, k + 1);
                        ctx.at(&HITS, 0, 0).inc();
                    }
                    ctx.quiet();
                });
            }
        });
        let serialized = world
            .ctx_create::<Serialized>(CtxOptions::default())
            .expect("ctx");
        // Moved into another thread (it is Send), used there, and handed back.
        let moved = std::thread::scope(|s| {
            s.spawn(move || {
                serialized.at(&HITS, 0, 1).add(10);
                serialized.quiet();
                serialized
            })
            .join()
            .expect("thread")
        });
        drop(moved);
        world.barrier_all();
        if me == 0 {
            assert_eq!(HITS.local_get(0), (n * threads) as u64 * per);
            assert_eq!(HITS.local_get(1), 10 * n as u64);
        }
        // Slot 8 + pe*threads + t on this PE was last written by thread t of PE `pe` with the
        // largest k + 1 such that (k + t) % n == me.
        for pe in 0..n {
            for t in 0..threads {
                let last = (0..per).filter(|&k| (k as usize + t) % n == me).max();
                let want = last.map_or(0, |k| k + 1);
                assert_eq!(
                    SLOTS.local_get(8 + pe * threads + t),
                    want,
                    "slot of PE {pe} thread {t}"
                );
            }
        }
        world.barrier_all();
    });
}

#[test]
fn heap_arrays_are_shared_by_threads_at_thread_level_multiple() {
    if !common::is_pe() {
        for path in common::Path::ALL {
            for n in [1, 2, 3, 4] {
                let (out, _) = common::launch(
                    "heap_arrays_are_shared_by_threads_at_thread_level_multiple",
                    n,
                    path,
                    &[],
                );
                assert!(
                    out.status.success(),
                    "{n} PEs {path:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let stdout = String::from_utf8_lossy(&out.stdout);
                for pe in 0..n {
                    assert!(
                        stdout.contains(&format!("<threads-ok {pe}>")),
                        "PE {pe} did not finish: {stdout}"
                    );
                }
            }
        }
        return;
    }
    let (world, provided) = shmem_core::init_thread(ThreadLevel::Multiple).expect("init_thread");
    assert_eq!(provided, ThreadLevel::Multiple);
    let (me, n) = (world.my_pe(), world.n_pes());
    let grid = world.alloc::<u32>(4 * n);
    // Four threads of every PE write their own slots on every PE through a shared &SymArray.
    std::thread::scope(|s| {
        for t in 0..4 {
            let grid = &grid;
            s.spawn(move || {
                for pe in 0..n {
                    grid.p(pe, 4 * me + t, (100 * me + t) as u32);
                }
            });
        }
    });
    world.barrier_all();
    for pe in 0..n {
        for t in 0..4 {
            assert_eq!(grid.local_get(4 * pe + t), (100 * pe + t) as u32);
        }
    }
    world.barrier_all();
    println!("<threads-ok {me}>");
}

#[symmetric]
static BOARD: [u64; 64] = [0; 64];

/// The OpenSHMEM 1.5 context operations beyond put/get/atomics: put-with-signal, strided
/// iput/iget, the non-blocking forms (completed by the context's quiet at the scope's end), the
/// default context, and contexts made on worker threads with a `CtxFactory`. Every value is
/// read back on the PE that did not write it.
#[test]
fn context_signals_strided_nbi_default_and_threads() {
    common::multi_pe_at(
        "context_signals_strided_nbi_default_and_threads",
        &[2, 3, 4],
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            let (m, l) = (me as u64, left as u64);
            let sig = world.alloc::<u64>(2);
            let ctx = world
                .ctx_create::<Private>(CtxOptions::default())
                .expect("ctx");
            world.barrier_all();
            // Put-with-signal on the context: the data is there when the signal is.
            ctx.put_signal(
                &BOARD,
                right,
                0..3,
                &[m, m + 1, m + 2],
                sig.signal(0),
                SignalOp::Set(1),
            );
            sig.wait_until(0, Cmp::Eq, 1);
            assert_eq!((BOARD.local_get(0), BOARD.local_get(2)), (l, l + 2));
            // More than one message (80 KiB): through UCX the data goes as puts on the
            // context's endpoint, and the signal after that endpoint's flush.
            const BIG: usize = 10 << 10;
            let big = world.alloc::<u64>(BIG);
            let big_sig = world.alloc::<u64>(1);
            let src: Vec<u64> = (0..BIG as u64).map(|k| m << 32 | k).collect();
            world.barrier_all();
            ctx.put_signal(&big, right, .., &src, big_sig.signal(0), SignalOp::Add(1));
            big_sig.wait_until(0, Cmp::Eq, 1);
            for k in [0, 1, BIG / 2, BIG - 1] {
                assert_eq!(
                    big.local_get(k),
                    l << 32 | k as u64,
                    "80 KiB put_signal, element {k}"
                );
            }
            // Strided: four elements at stride 3 from 10, and back.
            ctx.iput(
                &BOARD,
                right,
                10..22,
                3,
                &[m, 0, m + 1, 0, m + 2, 0, m + 3],
                2,
            );
            ctx.quiet();
            world.barrier_all();
            for (i, want) in [
                (10, l),
                (13, l + 1),
                (16, l + 2),
                (19, l + 3),
                (11, 0),
                (20, 0),
            ] {
                assert_eq!(BOARD.local_get(i), want, "BOARD[{i}]");
            }
            let mut back = [0u64; 4];
            ctx.iget(&BOARD, right, 10..22, 3, &mut back, 1);
            assert_eq!(back, [m, m + 1, m + 2, m + 3]);
            world.barrier_all();
            // Non-blocking forms, completed by the scope's end.
            let src = [m * 10, m * 10 + 1];
            let mut got = [0u64; 2];
            let mut old = u64::MAX;
            ctx.nbi(|s| {
                s.put(&BOARD, right, 30..32, &src);
                s.put_signal(
                    &BOARD,
                    right,
                    32..33,
                    &src[..1],
                    sig.signal(1),
                    SignalOp::Add(5),
                );
                s.fetch(&mut old, || ctx.at(&BOARD, right, 40).fetch_add(1));
            });
            sig.wait_until(1, Cmp::Eq, 5);
            world.barrier_all();
            assert_eq!(
                (BOARD.local_get(30), BOARD.local_get(31)),
                (l * 10, l * 10 + 1)
            );
            assert_eq!(BOARD.local_get(32), l * 10);
            assert_eq!((old, BOARD.local_get(40)), (0, 1));
            ctx.nbi(|s| s.get(&BOARD, right, 30..32, &mut got));
            assert_eq!(got, src);
            world.barrier_all();
            // The default context is the plain route.
            let dflt = world.ctx_default();
            dflt.p(&BOARD, right, 50, m + 100);
            dflt.iput(&BOARD, right, 51..55, 2, &[m + 7, m + 8], 1);
            dflt.quiet();
            world.barrier_all();
            assert_eq!(BOARD.local_get(50), l + 100);
            assert_eq!((BOARD.local_get(51), BOARD.local_get(53)), (l + 7, l + 8));
            // Worker threads make their own contexts.
            let factory = world.ctx_factory();
            std::thread::scope(|s| {
                for t in 0..3usize {
                    s.spawn(move || {
                        let c = factory
                            .ctx_create::<Private>(CtxOptions::default())
                            .expect("ctx on a worker thread");
                        c.p(&BOARD, right, 56 + t, m * 1000 + t as u64);
                        c.quiet();
                    });
                }
            });
            world.barrier_all();
            for t in 0..3 {
                assert_eq!(BOARD.local_get(56 + t), l * 1000 + t as u64);
            }
            world.barrier_all();
        },
    );
}

/// This process's private memory (`RssAnon`), in KiB.
fn rss_anon_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn contexts_made_and_dropped_in_a_loop_cost_no_memory() {
    multi_pe(
        "contexts_made_and_dropped_in_a_loop_cost_no_memory",
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let slots = world.alloc::<u64>(1);
            let round = |i: u64| {
                let ctx = world
                    .ctx_create::<Private>(CtxOptions::default())
                    .expect("ctx");
                ctx.p(&slots, right, 0, i);
                ctx.quiet();
            };
            // Warm up (the first contexts make the routes that later ones reuse).
            (0..200).for_each(round);
            let before = rss_anon_kb();
            (200..2200).for_each(round);
            let grew = rss_anon_kb().saturating_sub(before);
            world.barrier_all();
            assert_eq!(slots.local_get(0), 2199, "PE {me}: the last context's put");
            assert_eq!(world.usage().contexts, 0);
            // Over tcp each context used to connect anew, and about 1.6 KiB per context stayed.
            assert!(
                grew < 512,
                "PE {me}: 2000 contexts made and dropped grew private memory by {grew} KiB"
            );
        },
    );
}

#[symmetric]
static GRID: [u32; 48] = [0; 48];

/// OpenSHMEM 1.6 blocked strided transfers (`ibput`/`ibget`) on the runtime's own route and on a
/// context, with small blocks (packed over UCX) and blocks over one active message (a put or
/// get each); the signal updates and `pe_quiet` of a context. Values are read on the PE that
/// did not write them.
#[test]
fn blocked_strided_signals_and_pe_quiet_on_contexts() {
    common::multi_pe_at(
        "blocked_strided_signals_and_pe_quiet_on_contexts",
        &[2, 3],
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            let (m, l) = (me as u32, left as u32);
            let ctx = world
                .ctx_create::<Private>(CtxOptions::default())
                .expect("ctx");
            world.barrier_all();
            // Blocks of 3 every 8 elements from 1 (three of them), from blocks every 4.
            let src: Vec<u32> = (0..12).map(|k| m * 100 + k).collect();
            GRID.ibput(right, 1..24, 8, &src, 4, 3);
            ctx.ibput(&GRID, right, 25..48, 8, &src, 4, 3);
            world.quiet();
            ctx.quiet();
            world.barrier_all();
            for base in [1, 25] {
                for k in 0..3 {
                    for e in 0..3 {
                        let i = base + 8 * k + e;
                        let want = l * 100 + (4 * k + e) as u32;
                        assert_eq!(GRID.local_get(i), want, "GRID[{i}]");
                    }
                    assert_eq!(GRID.local_get(base + 8 * k + 3), 0, "between blocks");
                }
            }
            let mut packed = [0u32; 9];
            GRID.ibget(right, 1..24, 8, &mut packed, 3, 3);
            let mut from_ctx = [0u32; 9];
            ctx.ibget(&GRID, right, 25..48, 8, &mut from_ctx, 3, 3);
            for k in 0..3 {
                for e in 0..3 {
                    let want = m * 100 + (4 * k + e) as u32;
                    assert_eq!(packed[3 * k + e], want);
                    assert_eq!(from_ctx[3 * k + e], want);
                }
            }
            // Two blocks of 96 KiB (more than one active message each), 128 KiB apart.
            const BLOCK: usize = 12 << 10;
            let big = world.alloc::<u64>(2 * 2 * BLOCK);
            let src: Vec<u64> = (0..2 * BLOCK as u64)
                .map(|k| (me as u64) << 40 | k)
                .collect();
            world.barrier_all();
            ctx.ibput(&big, right, .., 2 * BLOCK, &src, BLOCK, BLOCK);
            ctx.pe_quiet(&[right]);
            world.barrier_all();
            for (i, want) in [(0, 0), (BLOCK - 1, BLOCK - 1), (2 * BLOCK, BLOCK)] {
                assert_eq!(
                    big.local_get(i),
                    (left as u64) << 40 | want as u64,
                    "big[{i}]"
                );
            }
            assert_eq!(big.local_get(BLOCK), 0, "between the big blocks");
            let mut back = vec![0u64; 2 * BLOCK];
            big.ibget(right, .., 2 * BLOCK, &mut back, BLOCK, BLOCK);
            assert_eq!(back, src);
            // Signal updates on the context.
            let sig = world.alloc::<u64>(1);
            world.barrier_all();
            ctx.signal_add(sig.signal(0), 0, me as u64 + 1);
            ctx.quiet();
            if me == 0 {
                let want = (n * (n + 1) / 2) as u64;
                assert_eq!(sig.wait_until(0, Cmp::Eq, want), want);
            }
            world.barrier_all();
            ctx.signal_set(sig.signal(0), right, 7 + me as u64);
            sig.wait_until(0, Cmp::Eq, 7 + left as u64);
            world.barrier_all();
        },
    );
}
