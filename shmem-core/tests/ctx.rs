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
