//! Put, get, p, g, iput, iget and the non-blocking forms on heap arrays and `#[symmetric]`
//! statics, run as real jobs at 1, 2, 3, 4 and 8 PEs on the direct and the UCX path. Every test
//! reads back on one PE what another PE wrote.

use shmem_testkit as common;

use common::multi_pe_hosts;
use shmem_core::prelude::*;
use zerocopy::{FromBytes, Immutable, IntoBytes};

#[symmetric]
static STATIC_ARR: [i32; 100] = [7; 100];

#[symmetric]
static SCALAR: u64 = 0xdead_beef;

#[derive(Clone, Copy, Debug, PartialEq, FromBytes, IntoBytes, Immutable, Element)]
#[repr(C)]
struct Cell {
    value: f64,
    owner: u32,
    step: u32,
}

#[symmetric]
static CELLS: [Cell; 4] = [Cell {
    value: 0.5,
    owner: 99,
    step: 0,
}; 4];

fn pattern(pe: usize, i: usize) -> u64 {
    (pe as u64) << 32 | i as u64
}

#[test]
fn heap_put_then_get_round_trip() {
    multi_pe_hosts("heap_put_then_get_round_trip", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let a = world.alloc::<u64>(1000);
        let b = world.alloc::<u64>(3);
        for i in 0..1000 {
            assert_eq!(a.local_get(i), 0, "fresh heap arrays are zeroed");
        }
        // Nobody writes into `a` before every PE has checked it.
        world.barrier_all();
        let src: Vec<u64> = (0..500).map(|i| pattern(me, i)).collect();
        a.put(right, 250..750, &src);
        b.put(right, .., &[me as u64, 1, 2]);
        world.barrier_all();
        let mut mine = vec![0u64; 1000];
        a.local_read(.., &mut mine);
        for (i, v) in mine.iter().enumerate() {
            let want = if (250..750).contains(&i) {
                pattern(left, i - 250)
            } else {
                0
            };
            assert_eq!(*v, want, "element {i} on PE {me}");
        }
        assert_eq!(b.local_get(0), left as u64);
        let mut back = vec![0u64; 500];
        a.get(right, 250..750, &mut back);
        assert_eq!(
            back, src,
            "get from PE {right} returns what PE {me} put there"
        );
        world.barrier_all();
    });
}

#[test]
fn static_initial_values_and_puts() {
    multi_pe_hosts("static_initial_values_and_puts", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        assert_eq!(SCALAR.local(), 0xdead_beef);
        for i in 0..100 {
            assert_eq!(STATIC_ARR.local_get(i), 7);
        }
        assert_eq!(
            CELLS.local_get(3),
            Cell {
                value: 0.5,
                owner: 99,
                step: 0
            }
        );
        world.barrier_all();
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        STATIC_ARR.put(right, 10..20, &[me as i32 * -3; 10]);
        SCALAR.put_value(right, me as u64 + 1000);
        CELLS.p(
            right,
            2,
            Cell {
                value: me as f64 * 1.5,
                owner: me as u32,
                step: 7,
            },
        );
        world.barrier_all();
        for i in 0..100 {
            let want = if (10..20).contains(&i) {
                left as i32 * -3
            } else {
                7
            };
            assert_eq!(STATIC_ARR.local_get(i), want, "element {i}");
        }
        assert_eq!(SCALAR.local(), left as u64 + 1000);
        assert_eq!(
            CELLS.local_get(2),
            Cell {
                value: left as f64 * 1.5,
                owner: left as u32,
                step: 7
            }
        );
        assert_eq!(
            CELLS.local_get(1),
            Cell {
                value: 0.5,
                owner: 99,
                step: 0
            }
        );
        // Read back remotely what we wrote.
        assert_eq!(SCALAR.get_value(right), me as u64 + 1000);
        assert_eq!(STATIC_ARR.g(right, 15), me as i32 * -3);
        let mut got = [0i32; 10];
        STATIC_ARR.get(right, 10..20, &mut got);
        assert_eq!(got, [me as i32 * -3; 10]);
        world.barrier_all();
    });
}

#[test]
fn p_and_g_to_every_pe() {
    multi_pe_hosts("p_and_g_to_every_pe", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let a = world.alloc::<f32>(n);
        for pe in 0..n {
            a.p(pe, me, me as f32 + 0.25);
        }
        world.barrier_all();
        for pe in 0..n {
            assert_eq!(
                a.local_get(pe),
                pe as f32 + 0.25,
                "slot {pe} written by PE {pe}"
            );
            assert_eq!(a.g(pe, me), me as f32 + 0.25, "g of my slot on PE {pe}");
        }
        world.barrier_all();
    });
}

#[test]
fn strided_iput_iget_with_independent_strides() {
    multi_pe_hosts("strided_iput_iget_with_independent_strides", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let left = (me + n - 1) % n;
        let a = world.alloc::<i64>(64);
        // Target elements 1, 4, 7, ..., 28 (10 of them) from source elements 0, 2, ..., 18.
        let src: Vec<i64> = (0..19).map(|i| (me * 100 + i) as i64).collect();
        a.iput(right, 1..30, 3, &src, 2);
        STATIC_ARR.iput(right, 50..60, 5, &[me as i32, -(me as i32)], 1);
        world.barrier_all();
        for i in 0..64 {
            let want = if (1..30).contains(&i) && (i - 1) % 3 == 0 {
                (left * 100 + (i - 1) / 3 * 2) as i64
            } else {
                0
            };
            assert_eq!(a.local_get(i), want, "element {i} on PE {me}");
        }
        assert_eq!(STATIC_ARR.local_get(50), left as i32);
        assert_eq!(STATIC_ARR.local_get(55), -(left as i32));
        assert_eq!(STATIC_ARR.local_get(51), 7);
        // Strided get back into every fourth slot of a local buffer.
        let mut dst = vec![-1i64; 37];
        a.iget(right, 1..30, 3, &mut dst, 4);
        for (k, v) in dst.iter().enumerate() {
            let want = if k % 4 == 0 {
                (me * 100 + k / 4 * 2) as i64
            } else {
                -1
            };
            assert_eq!(*v, want, "dst[{k}]");
        }
        world.barrier_all();
    });
}

#[test]
fn nonblocking_put_and_get() {
    multi_pe_hosts("nonblocking_put_and_get", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let a = world.alloc::<u32>(256);
        let src: Vec<u32> = (0..256).map(|i| (me * 1000 + i) as u32).collect();
        let right = (me + 1) % n;
        world.nbi(|s| {
            s.put(&a, right, 0..128, &src[..128]);
            s.put(&a, right, 128.., &src[128..]);
        });
        world.barrier_all();
        let left = (me + n - 1) % n;
        let mut back = vec![0u32; 256];
        let mut tail = vec![0u32; 6];
        world.nbi(|s| {
            s.get(&a, me, .., &mut back);
            s.get(&STATIC_ARR_U32, right, 4..10, &mut tail);
        });
        for (i, v) in back.iter().enumerate() {
            assert_eq!(*v, (left * 1000 + i) as u32);
        }
        assert_eq!(tail, [3u32; 6]);
        world.barrier_all();
    });
}

#[symmetric]
static STATIC_ARR_U32: [u32; 10] = [3; 10];

#[test]
fn fence_and_quiet_order_puts() {
    multi_pe_hosts("fence_and_quiet_order_puts", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let right = (me + 1) % n;
        let a = world.alloc::<u64>(1024);
        for round in 1..=20u64 {
            let data: Vec<u64> = (0..1023).map(|i| round * 10_000 + i).collect();
            a.put(right, 0..1023, &data);
            world.fence();
            a.p(right, 1023, round);
            world.quiet();
            world.barrier_all();
            assert_eq!(a.local_get(1023), round);
            let left_data: Vec<u64> = (0..1023).map(|i| round * 10_000 + i).collect();
            let mut got = vec![0; 1023];
            a.local_read(0..1023, &mut got);
            assert_eq!(got, left_data, "round {round}");
            world.barrier_all();
        }
    });
}

/// `quiet` alone completes contiguous puts: the target sees their data after a `sync_all`, which
/// (unlike `barrier_all`) completes nothing, and on one node passes its flags through shared
/// memory, which would overtake puts still travelling through UCX. Over tcp a quiet after a put
/// first waits for the put's completion message and then flushes what is left (`Worker::flush`):
/// single puts, back-to-back puts to both neighbours, puts of several fragments, `p` and
/// non-blocking puts, in rounds that each overwrite the last.
#[test]
fn quiet_completes_puts_before_a_sync_all() {
    multi_pe_hosts("quiet_completes_puts_before_a_sync_all", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        let (right, left) = ((me + 1) % n, (me + n - 1) % n);
        // 8 B, 3000 B and 320 000 B (more than one 256 KiB TCP segment), from each neighbour.
        const LENS: [usize; 3] = [1, 375, 40_000];
        let from_left = world.alloc::<u64>(LENS.iter().sum::<usize>() + 1);
        let from_right = world.alloc::<u64>(LENS.iter().sum::<usize>());
        let value = |pe: usize, round: u64, k: usize| (pe as u64) << 48 | round << 32 | k as u64;
        for round in 1..=12u64 {
            let mut at = 0;
            for (i, &len) in LENS.iter().enumerate() {
                let mine: Vec<u64> = (at..at + len).map(|k| value(me, round, k)).collect();
                match (round + i as u64) % 3 {
                    0 => from_left.put(right, at..at + len, &mine),
                    1 => world.nbi(|s| s.put(&from_left, right, at..at + len, &mine)),
                    _ => {
                        // The ends element by element, the middle as one put.
                        let edge = len.min(4);
                        let mid = edge..len.saturating_sub(edge).max(edge);
                        for k in (0..edge).chain(mid.end..len) {
                            from_left.p(right, at + k, mine[k]);
                        }
                        if !mid.is_empty() {
                            from_left.put(right, at + mid.start..at + mid.end, &mine[mid]);
                        }
                    }
                }
                if round % 2 == 0 {
                    from_right.put(left, at..at + len, &mine);
                }
                at += len;
            }
            from_left.p(right, at, round);
            world.quiet();
            world.sync_all();
            assert_eq!(
                from_left.local_get(at),
                round,
                "round {round}: PE {left}'s last p"
            );
            let mut got = vec![0u64; at];
            from_left.local_read(0..at, &mut got);
            for (k, &v) in got.iter().enumerate() {
                assert_eq!(
                    v,
                    value(left, round, k),
                    "round {round}: element {k} of PE {left}'s puts on PE {me} after quiet and sync_all"
                );
            }
            if round % 2 == 0 {
                from_right.local_read(0..at, &mut got);
                for (k, &v) in got.iter().enumerate() {
                    assert_eq!(
                        v,
                        value(right, round, k),
                        "round {round}: element {k} of PE {right}'s puts on PE {me} after quiet and sync_all"
                    );
                }
            }
            // Nobody writes the next round before everyone has read this one.
            world.sync_all();
        }
    });
}

#[test]
fn many_allocations_reuse_the_heap() {
    multi_pe_hosts("many_allocations_reuse_the_heap", |world| {
        let (me, n) = (world.my_pe(), world.n_pes());
        for round in 0..50usize {
            let len = 1 + (round * 37) % 4000;
            let a = world.alloc::<u16>(len);
            let b = world.alloc::<u8>(round);
            a.p((me + 1) % n, len - 1, round as u16);
            world.barrier_all();
            assert_eq!(a.local_get(len - 1), round as u16);
            assert_eq!(a.local_get(0), if len == 1 { round as u16 } else { 0 });
            drop(b);
            drop(a);
        }
    });
}

#[test]
fn init_twice_is_an_error_and_finalize_is_clean() {
    common::multi_pe_at(
        "init_twice_is_an_error_and_finalize_is_clean",
        &[1, 3],
        |world| {
            let err = shmem_core::init().expect_err("second init while a World lives");
            assert!(
                matches!(err, shmem_core::Error::AlreadyInitialized),
                "{err}"
            );
            assert!(err.to_string().contains("while a World is alive"), "{err}");
            world.barrier_all();
        },
    );
}

/// The PE body of [`puts_over_tcp_keep_their_order_and_complete_with_one_lane_or_several`]:
/// around the ring, puts of 8 bytes (our active messages over tcp) each followed by a fence and
/// a flag, which the right neighbour waits for and then checks the value; a put followed at
/// once by a get and by a fetching add of the same word, which must see it; a stream of puts
/// longer than the window of unacknowledged messages (4 MiB); then a quiet and a barrier, after
/// which every value is read back.
fn ordered_puts_around_the_ring() {
    const ROWS: usize = 300;
    const STREAM: usize = 70_000;
    let world = shmem_core::init().expect("init");
    let (me, n) = (world.my_pe(), world.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let vals = world.alloc::<u64>(ROWS);
    let flags = world.alloc::<u64>(ROWS);
    let word = world.alloc::<u64>(1);
    let stream = world.alloc::<u64>(1024);
    let value = |pe: usize, r: usize| ((pe as u64) << 32) | (r as u64 * 7 + 1);
    world.barrier_all();
    for r in 0..ROWS {
        vals.put(right, r..r + 1, &[value(me, r)]);
        world.fence();
        flags.put(right, r..r + 1, &[1]);
        flags.wait_until(r, Cmp::Ge, 1);
        let got = vals.local_get(r);
        assert_eq!(
            got,
            value(left, r),
            "PE {me}, row {r}: the flag overtook its value"
        );
    }
    for r in 0..ROWS as u64 {
        let v = value(me, r as usize);
        word.put(right, 0..1, &[v]);
        let mut back = [0u64];
        word.get(right, 0..1, &mut back);
        assert_eq!(
            back[0], v,
            "PE {me}, round {r}: a get overtook the put before it"
        );
        word.put(right, 0..1, &[v]);
        let old = word.at(right, 0).fetch_add(1);
        assert_eq!(
            old, v,
            "PE {me}, round {r}: an atomic overtook the put before it"
        );
    }
    for k in 0..STREAM {
        stream.put(right, k % 1024..k % 1024 + 1, &[value(me, k)]);
    }
    world.quiet();
    world.barrier_all();
    for k in STREAM - 1024..STREAM {
        assert_eq!(
            stream.local_get(k % 1024),
            value(left, k),
            "PE {me}, stream put {k}"
        );
    }
    assert_eq!(word.local_get(0), value(left, ROWS - 1) + 1);
    world.barrier_all();
    if me == 0 {
        println!("<ordered puts ok at {n} PEs>");
    }
}

/// Over `UCX_TLS=tcp,self` puts are our active messages, acknowledged on request: with the
/// endpoint's one lane a fence waits for nothing, and with several eager lanes
/// (`UCX_MAX_EAGER_LANES=2`, which makes the runtime assume messages may overtake each other) a
/// fence, a get and an atomic wait for the acknowledgement of the puts before them. Both ways
/// at 2 and 3 PEs.
#[test]
fn puts_over_tcp_keep_their_order_and_complete_with_one_lane_or_several() {
    if common::is_pe() {
        return ordered_puts_around_the_ring();
    }
    let name = "puts_over_tcp_keep_their_order_and_complete_with_one_lane_or_several";
    for env in [&[][..], &[("UCX_MAX_EAGER_LANES", "2")][..]] {
        for n in [2, 3] {
            let (out, took) = common::launch(name, n, common::Path::Ucx, env);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains(&format!("<ordered puts ok at {n} PEs>")),
                "{n} PEs, {env:?}: {}\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!("{n} PEs, {env:?}: {took:?}");
        }
    }
}

/// PE 1 puts a stream of values with fences to PE 0, then a flag (the wall-clock time it put
/// it), and computes for 3 s without calling the library; PE 0 waits for the flag, checks every
/// value and how long the flag took from its put. Over tcp with a progress thread, puts in a
/// stream wait in a batch (`transport::am::coalesces`): what the sender leaves there while it
/// computes must still arrive, sent by its progress thread.
fn batched_puts_before_computing() {
    const STREAM: u64 = 200;
    let now_ns = || {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        t.expect("the clock is past 1970").as_nanos() as u64
    };
    let world = shmem_core::init().expect("init");
    let vals = world.alloc::<u64>(STREAM as usize + 1);
    world.barrier_all();
    if world.my_pe() == 1 {
        for i in 0..STREAM {
            vals.put(0, i as usize..i as usize + 1, &[i * 3 + 1]);
            world.fence();
        }
        vals.put(0, STREAM as usize..STREAM as usize + 1, &[now_ns()]);
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_secs(3) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
    } else if world.my_pe() == 0 {
        vals.wait_until(STREAM as usize, Cmp::Ne, 0);
        let took = now_ns().saturating_sub(vals.local_get(STREAM as usize));
        for i in 0..STREAM {
            assert_eq!(
                vals.local_get(i as usize),
                i * 3 + 1,
                "value {i} after the flag"
            );
        }
        assert!(
            took < 1_000_000_000,
            "the flag took {took} ns from its put to arrive from a PE that computes"
        );
        println!("<batched flag after {} us>", took / 1000);
    }
    world.barrier_all();
}

/// See [`batched_puts_before_computing`]: over `UCX_TLS=tcp,self`, with the progress thread
/// (the default; puts in streams wait in batches), with `SHMEM_COALESCE=off` and without the
/// thread (they go at once).
#[test]
fn puts_left_in_a_batch_arrive_while_their_sender_computes() {
    if common::is_pe() {
        return batched_puts_before_computing();
    }
    let name = "puts_left_in_a_batch_arrive_while_their_sender_computes";
    let envs = [
        &[][..],
        &[("SHMEM_COALESCE", "off")][..],
        &[("SHMEM_PROGRESS_THREAD", "off")][..],
    ];
    for env in envs {
        let (out, took) = common::launch(name, 2, common::Path::Ucx, env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("<batched flag after"),
            "{env:?}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{env:?}: {took:?}, {}", stdout.trim());
    }
}

/// A stream of puts of 1 B to 65,537 B to overlapping ranges of the right neighbour, without a
/// quiet between them: over tcp, those of at most 8 KiB wait in batches (one message per
/// several puts, `transport::am::coalesces`), those of up to 64 KiB go as active messages after
/// the batch before them, and the larger ones as UCX puts. After one quiet every byte holds
/// what the last put to it wrote. Four passes: a put that overtook the batch that the
/// progress thread was sending (fixed) showed in about 1 pass in 10.
#[test]
fn a_stream_of_puts_of_mixed_sizes_lands_in_order() {
    common::multi_pe_at(
        "a_stream_of_puts_of_mixed_sizes_lands_in_order",
        &[2],
        |world| {
            const SIZES: [usize; 10] =
                [1, 300, 1024, 4000, 8192, 8193, 20_000, 65_536, 65_537, 512];
            const SPAN: usize = 256 << 10;
            let (me, n) = (world.my_pe(), world.n_pes());
            let dst = world.alloc::<u8>(SPAN);
            let value = |pass: usize, i: usize, k: usize, pe: usize| {
                (pass * 101 + i * 31 + k * 7 + pe) as u8
            };
            for pass in 0..4 {
                let mut at = 0;
                for i in 0..300usize {
                    let size = SIZES[i % SIZES.len()];
                    at = (at + 1500) % (SPAN - size);
                    let bytes: Vec<u8> = (0..size).map(|k| value(pass, i, k, me)).collect();
                    dst.put((me + 1) % n, at..at + size, &bytes);
                }
                world.quiet();
                world.barrier_all();
                // What the left neighbour wrote: the same stream with its own number.
                let left = (me + n - 1) % n;
                let mut want: Vec<u8> = (0..SPAN).map(|k| dst.local_get(k)).collect();
                let mut at = 0;
                for i in 0..300usize {
                    let size = SIZES[i % SIZES.len()];
                    at = (at + 1500) % (SPAN - size);
                    for (k, b) in want[at..at + size].iter_mut().enumerate() {
                        *b = value(pass, i, k, left);
                    }
                }
                let got: Vec<u8> = (0..SPAN).map(|k| dst.local_get(k)).collect();
                if let Some(k) = (0..SPAN).find(|&k| got[k] != want[k]) {
                    panic!(
                        "pass {pass}, byte {k}: {} where {} was put last",
                        got[k], want[k]
                    );
                }
                world.barrier_all();
            }
        },
    );
}
