//! Latency of RMA, atomic, point-to-point and collective operations, and the bandwidth of a
//! 256 KiB put against a local memcpy.
//!
//! PE 0 measures the one-sided cases against PE 1 while the other PEs wait in `barrier_all`
//! (which also progresses UCX, so operations that need the target's progress engine, as over
//! tcp, complete). Output columns: case, size (bytes per operation, per PE for collectives),
//! variant, median and minimum, in ns per operation. Variants:
//!
//! - `aligned`: a page-aligned `world.alloc_aligned` heap array on the target, and a
//!   page-aligned private buffer on PE 0 (as the OSU benchmarks do; hides alignment effects);
//! - `vec`: the private buffer is a fresh `vec![0u8; n]` (filled before use) wherever the
//!   allocator puts it, the target range starts at the page-aligned start of a heap array: what
//!   a user's code does. glibc's malloc serves vectors of 128 KiB and more from `mmap` at 16
//!   bytes past a page start, which makes (destination - source) mod 4096 = 16 for a get;
//! - `vec odd`: the same with odd offsets on both sides: the private buffer is `&v[1..]` of a
//!   vector one byte longer, the target range starts at byte 3 of the heap array (a get's
//!   distance is then 14, inside the range, about 1 to 15, where glibc's `rep movsb` memcpy
//!   stalls on AMD EPYC, glibc bug 30994; `copy_sweep` maps the distances);
//! - `heap`: a `world.alloc` array; `static`: a `#[symmetric]` static; `local`: private memory
//!   of PE 0.
//!
//! For the `vec` variants PE 0 prints, on stderr, where each buffer lies modulo 4096 and the
//! distance (destination - source) mod 4096 of the copy (on the direct path).
//!
//! - `put + quiet` and `get`: `aligned` at 8 B to 1 MiB, `vec` and `vec odd` at 8 B, 64 B,
//!   4 KiB, 64 KiB, 256 KiB, 1 MiB and 4 MiB, `static` at 8 B;
//! - `p + quiet`, `g`: one `u64`;
//! - `iput 16x stride 2 + quiet`, `iget 16x stride 2`: 16 `u64` at stride 2 on the target;
//! - `fetch_add`, `add + quiet`, `compare_swap`, `swap`: 64-bit atomics on the target;
//! - `ping-pong p + g polling` (ours only): the same with `p`, each PE spinning on `g` of its
//!   own copy (polling through the library instead of `wait_until`);
//! - `ping-pong put + wait_until`, `ping-pong put_signal + wait`: PE 0 puts 8 B to PE 1, which
//!   waits for it and puts it back; half the round trip;
//! - `put_nbi 8 B stream (ns/op)`: scopes of 64 `put_nbi` of 8 B (quiet at the scope's end);
//!   the inverse of the message rate;
//! - `barrier_all`, `broadcast`, `sum_reduce 1 long`, `fcollect`, `alltoall` (8 B per PE), over
//!   all PEs.
//!
//! Point-to-point cases: after a warm-up, each case runs `--reps` timed loops of `--iters`
//! iterations (fewer for sizes over 4 KiB, half for ping-pong, an eighth of scopes for the
//! stream); the report gives the median and the minimum over the loops of the mean time per
//! operation.
//!
//! Collectives (OSU style; `benches/c/latency.c` does exactly the same): `barrier_all` is a
//! back-to-back loop timed on PE 0. For `broadcast` (root 0), `sum_reduce`, `fcollect` and
//! `alltoall`, every iteration is an untimed `barrier_all` followed by the collective call, and
//! only that call is timed, on every PE; each PE's figure for a loop is its mean over the loop,
//! and the loop's figure is the average of those means over all PEs (gathered to PE 0 by a put
//! into a symmetric array there, then `barrier_all`). The row is the median over the loops of
//! that average, and the minimum. Collective loops have a quarter of `--iters` iterations.
//! (Timing only the root of a broadcast, back to back, would measure how fast it can fire
//! messages, not a latency.)
//!
//! Bandwidth (`--bandwidth`): on PE 0, a 256 KiB `put` to PE 1 followed by `quiet`, against a
//! `copy_from_slice` of 256 KiB between two private buffers of PE 0, in alternating timed
//! loops; rows `put 256 KiB + quiet` and `memcpy 256 KiB` (ns per copy; bytes / ns = GB/s).
//!
//! `benches/c/latency.c` runs the same cases on Open MPI's OpenSHMEM, with the same output
//! format; `benches/run.sh` runs both side by side.
//!
//! Run: `target/release/shmemrun -n 2 target/release/latency [--iters N] [--reps N] [--csv]
//! [--collectives | --bandwidth | --basic | --small | --vec-mib | --pipeline]` (add `UCX_TLS=tcp,self` to
//! the environment to send everything through UCX). `--collectives` runs only the collectives
//! (at any number of PEs, 2 or more), `--bandwidth` only the put/memcpy bandwidth case, `--basic`
//! only the 8-byte put/get/p/g cases, heap and static, `--small` every 8-byte one-sided case
//! (put/get/p/g, strided, atomics; heap and static: the rows of `benches/c-twin.sh`),
//! `--vec-mib` only the `vec` put + quiet and get of 1 MiB (the Rust row of benches/python.sh),
//! `--pipeline` only the point-to-point pipeline rows (any number of PEs; see `run_pipeline`):
//! put 8 B + fence, the flag pipeline down the chain of all PEs (per row), and fcollect of
//! 64 KiB per PE.

use clap::Parser;
use shmem_benches::{Stats, stats};
use shmem_core::prelude::*;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    about = "Latency of RMA, atomics, ping-pong and collectives (heap array and symmetric static)"
)]
struct Args {
    /// Operations per timed loop.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    iters: u64,
    /// Timed loops per case; the median and minimum are taken over these.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Print `case,size,variant,median_ns,min_ns` lines instead of a table.
    #[arg(long)]
    csv: bool,
    /// Only the 8-byte put/get/p/g cases (a quick check).
    #[arg(long, conflicts_with_all = ["collectives", "bandwidth"])]
    basic: bool,
    /// Only the one-sided 8-byte cases on the heap and the static (put/get/p/g, strided,
    /// atomics), as the C twin's `small` (benches/c-twin.sh).
    #[arg(long, conflicts_with_all = ["basic", "collectives", "bandwidth"])]
    small: bool,
    /// Only the collectives (`barrier_all`, `broadcast`, `sum_reduce`, `fcollect`, `alltoall`).
    #[arg(long, conflicts_with = "bandwidth")]
    collectives: bool,
    /// Only the bandwidth of a 256 KiB put + quiet against a local 256 KiB memcpy.
    #[arg(long, conflicts_with = "pipeline")]
    bandwidth: bool,
    /// Only the point-to-point pipeline rows: put 8 B + fence, the flag pipeline down the chain
    /// of all PEs, and fcollect of 64 KiB per PE.
    #[arg(long, conflicts_with_all = ["collectives", "basic", "small"])]
    pipeline: bool,
    /// Only the user-shaped (`vec`) put + quiet and get of 1 MiB: the Rust row that
    /// benches/python.sh sets beside the Python packages' 1 MiB rows.
    #[arg(long, conflicts_with_all = ["collectives", "basic", "small", "bandwidth", "pipeline"])]
    vec_mib: bool,
}

/// Elements of the small target objects (`iput`/`iget` use 16 of them at stride 2).
const LEN: usize = 32;
/// Message sizes, in bytes, of the sized `put`/`get` cases.
const SIZES: [usize; 7] = [8, 64, 512, 4096, 32 << 10, 256 << 10, 1 << 20];
/// Elements of the heap array that the sized cases use (the largest size).
const BIG: usize = (1 << 20) / 8;
/// Elements moved by `iput`/`iget`, and their stride on the target.
const STRIDED: usize = 16;
const STRIDE: usize = 2;
/// `put_nbi` calls per `nbi` scope in the message-rate case.
const WINDOW: u64 = 64;
/// The PE that is written to and read from.
const TARGET: usize = 1;
/// The element of the ping-pong array that the `g`-polling ping-pong uses (0 and 1 serve the
/// other ping-pongs, 2 the message rate).
const POLL: usize = 5;
/// Bytes per copy in the bandwidth case.
const BW_BYTES: usize = 256 << 10;
/// Message sizes, in bytes, of the user-shaped (`vec`, `vec odd`) `put`/`get` cases.
const VEC_SIZES: [usize; 7] = [8, 64, 4096, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
/// The largest of [`VEC_SIZES`].
const VEC_MAX: usize = 4 << 20;
/// Offsets of the `vec odd` variant: into the private vector, and into the heap array.
const LOCAL_ODD: usize = 1;
const HEAP_ODD: usize = 3;
/// Value written at the end to check that puts land on the target.
const CHECK: u64 = 0x5eed_cafe;
/// Rows (flag and value slots) per sweep of the flag pipeline.
const PIPE_ROWS: usize = 256;
/// Bytes per PE of the large fcollect of the pipeline rows.
const FC_BIG: usize = 64 << 10;

#[symmetric]
static STATIC_BUF: [u64; LEN] = [0; LEN];
#[symmetric]
static PING_SIG: u64 = 0;

/// One result line: case, message size in bytes, variant, statistics.
type Row = (&'static str, usize, &'static str, Stats);

/// Loop size for a case moving `bytes` per operation: `iters` up to 4 KiB, then scaled down
/// so that every size moves about the same number of bytes (at least 10 operations).
fn iters_for(iters: u64, bytes: usize) -> u64 {
    (iters * 4096 / bytes.max(4096) as u64).max(10)
}

/// Warm-up iterations before the timed loops of `iters` iterations.
fn warm_up(iters: u64) -> u64 {
    (iters / 4).max(iters.min(1000))
}

/// Mean ns per call of `iters` calls of `op`.
fn time_loop(iters: u64, op: &mut impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    for i in 0..iters {
        op(black_box(i));
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// Runs `op(i)` for a warm-up, then `reps` timed loops of `iters` calls each.
fn measure(iters: u64, reps: u64, mut op: impl FnMut(u64)) -> Stats {
    for i in 0..warm_up(iters) {
        op(i);
    }
    stats((0..reps).map(|_| time_loop(iters, &mut op)).collect())
}

/// Like [`measure`] for two operations, their timed loops alternating (the order swapped every
/// repetition) so that machine noise hits both alike.
fn measure_pair(
    iters: u64,
    reps: u64,
    mut a: impl FnMut(u64),
    mut b: impl FnMut(u64),
) -> (Stats, Stats) {
    for i in 0..warm_up(iters) {
        a(i);
        b(i);
    }
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for r in 0..reps {
        if r % 2 == 0 {
            ta.push(time_loop(iters, &mut a));
            tb.push(time_loop(iters, &mut b));
        } else {
            tb.push(time_loop(iters, &mut b));
            ta.push(time_loop(iters, &mut a));
        }
    }
    (stats(ta), stats(tb))
}

/// OSU-style timing of a collective `op(i)`, called by every PE: each iteration is an untimed
/// `barrier_all`, then the timed call. Each PE's mean over a loop goes into `means[my_pe]` on
/// PE 0; the loop's figure is the average over the PEs. Returns the median and minimum over
/// `reps` loops of that average (meaningful on PE 0 only; the other PEs get their own means).
fn measure_collective(
    world: &World,
    means: &SymArray<'_, f64>,
    iters: u64,
    reps: u64,
    op: impl FnMut(u64),
) -> Stats {
    let loops = shmem_benches::collective_loops(world, means, warm_up(iters), iters, reps, op);
    stats(loops)
}

/// Bytes to which private buffers and the big heap array are aligned, in both twins (as the OSU
/// benchmarks do): memcpy speed at large sizes depends on the relative alignment of source and
/// destination by a few percent, which must not pass for a difference between implementations.
const PAGE: usize = 4096;

/// A page-aligned private buffer of `n` `u64`s holding `0, 1, 2, ...` (a sub-slice of a slightly
/// larger vector).
struct Aligned {
    buf: Vec<u64>,
    at: usize,
    n: usize,
}

impl Aligned {
    fn new(n: usize) -> Aligned {
        let mut buf: Vec<u64> = (0..(n + PAGE / 8) as u64).collect();
        let at = (PAGE - buf.as_ptr() as usize % PAGE) % PAGE / 8;
        for (i, v) in buf[at..at + n].iter_mut().enumerate() {
            *v = i as u64;
        }
        Aligned { buf, at, n }
    }
    fn get(&self) -> &[u64] {
        &self.buf[self.at..self.at + self.n]
    }
    fn get_mut(&mut self) -> &mut [u64] {
        &mut self.buf[self.at..self.at + self.n]
    }
}

/// Sized `put + quiet` and `get` on the heap array `big`, at every size in [`SIZES`].
fn run_sized(world: &World, big: &SymArray<'_, u64>, args: &Args, rows: &mut Vec<Row>) {
    let src_buf = Aligned::new(BIG);
    let src = src_buf.get();
    let mut dst_buf = Aligned::new(BIG);
    let dst = dst_buf.get_mut();
    let sizes = if args.basic || args.small {
        &SIZES[..1]
    } else {
        &SIZES[..]
    };
    for &bytes in sizes {
        let n = bytes / 8;
        let iters = iters_for(args.iters, bytes);
        let put = measure(iters, args.reps, |_| {
            big.put(TARGET, 0..n, black_box(&src[..n]));
            world.quiet();
        });
        rows.push(("put + quiet", bytes, "aligned", put));
    }
    for &bytes in sizes {
        let n = bytes / 8;
        let iters = iters_for(args.iters, bytes);
        let get = measure(iters, args.reps, |_| {
            big.get(TARGET, 0..n, black_box(&mut dst[..n]));
            black_box(&dst);
        });
        rows.push(("get", bytes, "aligned", get));
    }
}

/// A fresh private buffer of `len` bytes as a user allocates it (`vec![0u8; len]`, wherever the
/// allocator puts it), written once so that its pages are real (a zeroed allocation served by
/// `mmap` would otherwise read from the kernel's shared zero page).
fn user_vec(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    for (i, b) in v.iter_mut().enumerate() {
        *b = i as u8;
    }
    v
}

/// Reports on stderr where a `vec` case's buffers lie modulo 4096 and the distance
/// (destination - source) mod 4096 of its copy, when PE `TARGET`'s heap is mapped here.
fn report_distance(variant: &str, op: &str, bytes: usize, local: usize, remote: Option<usize>) {
    let Some(remote) = remote else {
        return;
    };
    let (dst, src) = if op == "get" {
        (local, remote)
    } else {
        (remote, local)
    };
    eprintln!(
        "latency: {op} {bytes} B {variant}: local buffer at {} mod 4096, remote at {} mod 4096, \
         (dst - src) mod 4096 = {}",
        local % 4096,
        remote % 4096,
        dst.wrapping_sub(src) % 4096
    );
}

/// User-shaped `put + quiet` and `get` at every size in [`VEC_SIZES`]: variant `vec` (a
/// `vec![0u8; n]` against the start of the page-aligned heap array `user`) and `vec odd`
/// (`&v[LOCAL_ODD..]` of a vector one byte longer against byte [`HEAP_ODD`] of `user`).
///
/// Every vector (one per variant, operation and size) is allocated up front and kept, as a
/// program that allocates its buffers once does, and this runs before any large buffer of the
/// process is freed: glibc's malloc then serves those of 128 KiB and more by `mmap`, 16 bytes
/// past a page start (freeing one raises its threshold, and later ones come from the heap, at
/// other offsets). `benches/c/latency.c` allocates its buffers with `malloc` in the same order.
fn run_user_shaped(world: &World, user: &SymArray<'_, u8>, args: &Args, rows: &mut Vec<Row>) {
    // The address of PE TARGET's copy in this process, for the distance report only.
    let remote_base = user.peer_slice(TARGET).map(|v| v.as_ptr() as usize);
    let all = [("vec", 0, 0), ("vec odd", LOCAL_ODD, HEAP_ODD)];
    let (variants, sizes): (&[_], &[usize]) = if args.vec_mib {
        (&all[..1], &[1 << 20])
    } else {
        (&all, &VEC_SIZES)
    };
    // bufs[variant][0 put, 1 get][size]
    let mut bufs: Vec<[Vec<Vec<u8>>; 2]> = variants
        .iter()
        .map(|&(_, loff, _)| {
            let one = || sizes.iter().map(|&b| user_vec(loff + b)).collect();
            [one(), one()]
        })
        .collect();
    for (&(variant, loff, hoff), [put_bufs, get_bufs]) in variants.iter().zip(&mut bufs) {
        for (&bytes, v) in sizes.iter().zip(put_bufs.iter()) {
            let src = &v[loff..];
            report_distance(
                variant,
                "put",
                bytes,
                src.as_ptr() as usize,
                remote_base.map(|r| r + hoff),
            );
            let put = measure(iters_for(args.iters, bytes), args.reps, |_| {
                user.put(TARGET, hoff..hoff + bytes, black_box(src));
                world.quiet();
            });
            rows.push(("put + quiet", bytes, variant, put));
        }
        for (&bytes, v) in sizes.iter().zip(get_bufs.iter_mut()) {
            let dst = &mut v[loff..];
            report_distance(
                variant,
                "get",
                bytes,
                dst.as_ptr() as usize,
                remote_base.map(|r| r + hoff),
            );
            let get = measure(iters_for(args.iters, bytes), args.reps, |_| {
                user.get(TARGET, hoff..hoff + bytes, black_box(&mut *dst));
                black_box(&mut *dst);
            });
            rows.push(("get", bytes, variant, get));
        }
    }
}

/// Measures the single-element, strided and atomic cases on `a`, appending rows.
/// `with_put_get`: also the 8-byte `put`/`get` (the heap has them among the sized cases).
fn run_cases<A: SymmetricArray<u64> + ?Sized>(
    world: &World,
    a: &A,
    variant: &'static str,
    with_put_get: bool,
    args: &Args,
    rows: &mut Vec<Row>,
) {
    let (iters, reps) = (args.iters, args.reps);
    if with_put_get {
        let put = measure(iters, reps, |i| {
            a.put(TARGET, 0..1, black_box(&[i]));
            world.quiet();
        });
        rows.push(("put + quiet", 8, variant, put));
        let mut buf = [0u64; 1];
        let get = measure(iters, reps, |_| {
            a.get(TARGET, 0..1, black_box(&mut buf));
            black_box(&buf);
        });
        rows.push(("get", 8, variant, get));
    }
    let p = measure(iters, reps, |i| {
        a.p(TARGET, 0, black_box(i));
        world.quiet();
    });
    rows.push(("p + quiet", 8, variant, p));
    let g = measure(iters, reps, |_| {
        black_box(a.g(TARGET, 0));
    });
    rows.push(("g", 8, variant, g));
    if args.basic {
        return;
    }

    let src = [7u64; 2 * STRIDED];
    let iput = measure(iters, reps, |_| {
        a.iput(
            TARGET,
            0..STRIDE * STRIDED,
            STRIDE,
            black_box(&src[..STRIDED]),
            1,
        );
        world.quiet();
    });
    rows.push(("iput 16x stride 2 + quiet", 8 * STRIDED, variant, iput));
    let mut dst = [0u64; STRIDED];
    let iget = measure(iters, reps, |_| {
        a.iget(TARGET, 0..STRIDE * STRIDED, STRIDE, black_box(&mut dst), 1);
        black_box(&dst);
    });
    rows.push(("iget 16x stride 2", 8 * STRIDED, variant, iget));

    // Atomics on element 2 (element 1 is the final check's).
    let fadd = measure(iters, reps, |_| {
        black_box(a.at(TARGET, 2).fetch_add(black_box(1)));
    });
    rows.push(("fetch_add", 8, variant, fadd));
    let add = measure(iters, reps, |_| {
        a.at(TARGET, 2).add(black_box(1));
        world.quiet();
    });
    rows.push(("add + quiet", 8, variant, add));
    let cswap = measure(iters, reps, |i| {
        black_box(a.at(TARGET, 2).compare_swap(black_box(i), i + 1));
    });
    rows.push(("compare_swap", 8, variant, cswap));
    let swap = measure(iters, reps, |i| {
        black_box(a.at(TARGET, 2).swap(black_box(i)));
    });
    rows.push(("swap", 8, variant, swap));
}

/// Ping-pong between PEs 0 and 1 (half round trip) and the `put_nbi` message rate; the other
/// PEs only take part in the barriers. Every PE calls this.
fn run_p2p(world: &World, pp: &SymArray<'_, u64>, args: &Args, rows: &mut Vec<Row>) {
    let me = world.my_pe();
    let iters = (args.iters / 2).max(10);
    if me < 2 {
        let peer = 1 - me;
        // PE 0 sends seq and waits for the echo; PE 1 waits for seq and echoes it.
        let mut seq = 0u64;
        let put = measure(iters, args.reps, |_| {
            seq += 1;
            if me == 0 {
                pp.put(peer, 0..1, &[seq]);
                pp.wait_until(0, Cmp::Ge, seq);
            } else {
                pp.wait_until(0, Cmp::Ge, seq);
                pp.put(peer, 0..1, &[seq]);
            }
        });
        rows.push(("ping-pong put + wait_until", 8, "heap", put.per(2.0)));
    }
    world.barrier_all();
    if me < 2 {
        let peer = 1 - me;
        let sig = PING_SIG.signal();
        let mut seq = 0u64;
        let put_signal = measure(iters, args.reps, |_| {
            seq += 1;
            if me == 0 {
                pp.put_signal(peer, 1..2, &[seq], sig, SignalOp::Set(seq));
                sig.wait_until(Cmp::Ge, seq);
            } else {
                sig.wait_until(Cmp::Ge, seq);
                pp.put_signal(peer, 1..2, &[seq], sig, SignalOp::Set(seq));
            }
        });
        rows.push((
            "ping-pong put_signal + wait",
            8,
            "heap",
            put_signal.per(2.0),
        ));
    }
    world.barrier_all();
    if me < 2 {
        let peer = 1 - me;
        let mut seq = 0u64;
        // Polling this PE's own copy with `g`, as users write it: over UCX (tcp) the peer's
        // `p` lands only because the `g` itself drives this PE's progress.
        let poll_g = |seq: u64| {
            let mut spins = 0u32;
            while pp.g(me, POLL) < seq {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        };
        let polled = measure(iters, args.reps, |_| {
            seq += 1;
            if me == 0 {
                pp.p(peer, POLL, seq);
                poll_g(seq);
            } else {
                poll_g(seq);
                pp.p(peer, POLL, seq);
            }
        });
        rows.push(("ping-pong p + g polling", 8, "heap", polled.per(2.0)));
    }
    world.barrier_all();
    if me == 0 {
        let src = [3u64; 1];
        let rate = measure((args.iters / 8).max(10), args.reps, |_| {
            world.nbi(|s| {
                for _ in 0..WINDOW {
                    s.put(pp, TARGET, 2..3, &src);
                }
            });
        });
        rows.push((
            "put_nbi 8 B stream (ns/op)",
            8,
            "heap",
            rate.per(WINDOW as f64),
        ));
    }
    world.barrier_all();
}

/// Collectives over all PEs (every PE calls this; PE 0 keeps the rows). `barrier_all` is a
/// back-to-back loop; the others are timed by [`measure_collective`].
fn run_collectives(world: &World, args: &Args, rows: &mut Vec<Row>) -> Result<(), String> {
    let team = world.team_world();
    let n = world.n_pes();
    let (iters, reps) = ((args.iters / 4).max(10), args.reps);
    let alloc_err = |e| format!("symmetric heap allocation failed: {e}");
    let one = world.try_alloc::<u64>(1).map_err(alloc_err)?;
    let all = world.try_alloc::<u64>(n).map_err(alloc_err)?;
    let means = world.try_alloc::<f64>(n).map_err(alloc_err)?;
    let src: Vec<u64> = (0..n as u64).collect();
    world.barrier_all();
    rows.push((
        "barrier_all",
        0,
        "heap",
        measure(iters, reps, |_| world.barrier_all()),
    ));
    let bcast = measure_collective(world, &means, iters, reps, |i| {
        team.broadcast(&one, &[i], 0)
    });
    rows.push(("broadcast", 8, "heap", bcast));
    let sum = measure_collective(world, &means, iters, reps, |i| team.sum_reduce(&one, &[i]));
    rows.push(("sum_reduce 1 long", 8, "heap", sum));
    let fcollect = measure_collective(world, &means, iters, reps, |i| team.fcollect(&all, &[i]));
    rows.push(("fcollect", 8, "heap", fcollect));
    let alltoall = measure_collective(world, &means, iters, reps, |_| {
        team.alltoall(&all, black_box(&src))
    });
    rows.push(("alltoall", 8, "heap", alltoall));
    Ok(())
}

/// On PE 0: a [`BW_BYTES`] `put + quiet` into `big` on PE 1 against a local copy of the same
/// size between two private buffers (neither of them `big`), in alternating timed loops.
fn run_bandwidth(world: &World, big: &SymArray<'_, u64>, args: &Args, rows: &mut Vec<Row>) {
    let n = BW_BYTES / 8;
    let src_buf = Aligned::new(n);
    let src = src_buf.get();
    let mut local_buf = Aligned::new(n);
    let local = local_buf.get_mut();
    let iters = iters_for(args.iters, BW_BYTES);
    let (put, copy) = measure_pair(
        iters,
        args.reps,
        |_| {
            big.put(TARGET, 0..n, black_box(src));
            world.quiet();
        },
        |_| {
            // black_box on both sides: the source may have changed and the copy is read, so
            // the compiler can neither drop nor hoist it.
            local.copy_from_slice(black_box(src));
            black_box(&mut *local);
        },
    );
    rows.push(("put 256 KiB + quiet", BW_BYTES, "heap", put));
    rows.push(("memcpy 256 KiB", BW_BYTES, "local", copy));
}

/// The pipeline rows (every PE calls this; PE 0 keeps the rows), as `benches/c/latency.c`'s:
/// - `put 8 B + fence`: PE 0 puts one `u64` to PE 1 and fences, in a loop (a quiet after it);
/// - `flag pipeline (per row)`: down the chain of all PEs, per row `r` of a sweep of
///   [`PIPE_ROWS`]: every PE but 0 waits for row `r`'s flag from its left neighbour and checks
///   the value that came before it; every PE but the last puts a value, fences and puts the flag
///   to its right neighbour. After each sweep the last PE puts a corner flag to PE 0, which waits
///   for it before the next. The time of a sweep on PE 0, divided by the rows;
/// - `fcollect` of [`FC_BIG`] bytes per PE, timed as the other collectives and checked.
fn run_pipeline(
    world: &World,
    pp: &SymArray<'_, u64>,
    args: &Args,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let (me, n) = (world.my_pe(), world.n_pes());
    let alloc_err = |e| format!("symmetric heap allocation failed: {e}");
    let flags = world.try_alloc::<u64>(PIPE_ROWS + 1).map_err(alloc_err)?;
    let vals = world.try_alloc::<u64>(PIPE_ROWS).map_err(alloc_err)?;
    let k = FC_BIG / 8;
    let fc = world.try_alloc::<u64>(n * k).map_err(alloc_err)?;
    let means = world.try_alloc::<f64>(n).map_err(alloc_err)?;
    world.barrier_all();
    if me == 0 {
        let fenced = measure(args.iters, args.reps, |i| {
            pp.put(TARGET, 0..1, &[i]);
            world.fence();
        });
        world.quiet();
        rows.push(("put 8 B + fence", 8, "heap", fenced));
    }
    world.barrier_all();
    let mut sweep = 0u64;
    let mut bad = 0u64;
    let sweeps = (args.iters / PIPE_ROWS as u64).max(10);
    let pipe = measure(sweeps, args.reps, |_| {
        sweep += 1;
        for r in 0..PIPE_ROWS {
            let v = sweep * PIPE_ROWS as u64 + r as u64;
            if me > 0 {
                flags.wait_until(r, Cmp::Ge, sweep);
                bad += u64::from(vals.local_get(r) != v);
            }
            if me < n - 1 {
                vals.put(me + 1, r..r + 1, &[v]);
                world.fence();
                flags.put(me + 1, r..r + 1, &[sweep]);
            }
        }
        // The last PE tells PE 0 that the sweep went through, before PE 0 starts the next.
        if me == n - 1 {
            flags.put(0, PIPE_ROWS..PIPE_ROWS + 1, &[sweep]);
        } else if me == 0 {
            flags.wait_until(PIPE_ROWS, Cmp::Ge, sweep);
        }
    });
    rows.push((
        "flag pipeline (per row)",
        8,
        "heap",
        pipe.per(PIPE_ROWS as f64),
    ));
    world.barrier_all();
    let team = world.team_world();
    let mut src: Vec<u64> = (0..k as u64).map(|j| ((me as u64) << 32) + j).collect();
    let iters = (iters_for(args.iters, FC_BIG) / 4).max(10);
    let fcollect = measure_collective(world, &means, iters, args.reps, |i| {
        src[0] = i;
        team.fcollect(&fc, &src);
    });
    rows.push(("fcollect", FC_BIG, "heap", fcollect));
    world.barrier_all();
    for pe in 0..n {
        for j in 1..k {
            bad += u64::from(fc.local_get(pe * k + j) != ((pe as u64) << 32) + j as u64);
        }
    }
    if bad != 0 {
        return Err(format!(
            "check failed: PE {me} saw {bad} wrong values in the pipeline and fcollect"
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    shmem_benches::exit_status("latency", run(&args))
}

fn run(args: &Args) -> Result<(), String> {
    let world = shmem_benches::init_two_pes("latency")?;
    let heap = world
        .try_alloc::<u64>(LEN)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    let big = world
        .try_alloc_aligned::<u64>(BIG, PAGE)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    let user = world
        .try_alloc_aligned::<u8>(VEC_MAX + HEAP_ODD, PAGE)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    let pp = world
        .try_alloc::<u64>(LEN)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    world.barrier_all();

    let mut rows = Vec::new();
    let full = !(args.basic
        || args.small
        || args.collectives
        || args.bandwidth
        || args.pipeline
        || args.vec_mib);
    if args.pipeline {
        run_pipeline(&world, &pp, args, &mut rows)?;
    } else if args.bandwidth {
        if world.my_pe() == 0 {
            run_bandwidth(&world, &big, args, &mut rows);
        }
        world.barrier_all();
    } else if !args.collectives {
        if world.my_pe() == 0 {
            // The user-shaped cases run first (see run_user_shaped), their rows come after the
            // aligned ones.
            let mut user_rows = Vec::new();
            if full || args.vec_mib {
                run_user_shaped(&world, &user, args, &mut user_rows);
            }
            if !args.vec_mib {
                run_sized(&world, &big, args, &mut rows);
            }
            rows.append(&mut user_rows);
            if !args.vec_mib {
                run_cases(&world, &heap, "heap", false, args, &mut rows);
                run_cases(&world, &STATIC_BUF, "static", true, args, &mut rows);
            }
        }
        // The other PEs wait here (progressing UCX) for the one-sided cases.
        world.barrier_all();
    }
    if full {
        run_p2p(&world, &pp, args, &mut rows);
    }
    if full || args.collectives {
        run_collectives(&world, args, &mut rows)?;
    }

    if world.my_pe() == 0 {
        if args.csv {
            println!("case,size,variant,median_ns,min_ns");
            for (case, size, variant, s) in &rows {
                println!("{case},{size},{variant},{:.1},{:.1}", s.median, s.min);
            }
        } else {
            println!(
                "{:<28} {:>8} {:<7} {:>10} {:>10}",
                "case", "size", "variant", "median_ns", "min_ns"
            );
            for (case, size, variant, s) in &rows {
                println!(
                    "{case:<28} {size:>8} {variant:<7} {:>10.1} {:>10.1}",
                    s.median, s.min
                );
            }
            for (case, size, _, s) in &rows {
                if case.starts_with("put 256") || case.starts_with("memcpy") {
                    println!("{case}: {:.2} GB/s", *size as f64 / s.median);
                }
            }
        }
    }
    world.barrier_all();

    // Sanity check that the puts really reach PE 1's copies.
    if world.my_pe() == 0 {
        heap.put(TARGET, 1..2, &[CHECK]);
        STATIC_BUF.p(TARGET, 1, CHECK);
    }
    world.barrier_all();
    if world.my_pe() == TARGET {
        let (h, s) = (heap.local_get(1), STATIC_BUF.local_get(1));
        if (h, s) != (CHECK, CHECK) {
            return Err(format!(
                "check failed: PE {TARGET} holds {h:#x} (heap) and {s:#x} (static), expected {CHECK:#x}"
            ));
        }
        // The last sized put wrote 0..BIG from a 0, 1, 2, ... source.
        let last = big.local_get(BIG - 1);
        if full && last != BIG as u64 - 1 {
            return Err(format!(
                "check failed: PE {TARGET} big[{}] = {last}",
                BIG - 1
            ));
        }
    }
    Ok(())
}
