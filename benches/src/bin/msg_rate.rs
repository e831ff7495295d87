//! Message rate: windows of puts, gets, `put_nbi`s and `get_nbi`s of 1 B to 1 MiB to
//! consecutive offsets of one peer's heap, each window ended by one quiet; and how fast the
//! target reads data that a put left in its memory (put-then-consume).
//!
//! The C twin `benches/c/msg_rate.c` runs the same cases with the same output;
//! `benches/msg-rate.sh` runs ours (Rust and C) and Open MPI's oshmem side by side.
//!
//! # Message rate (PE 0 against PE 1)
//! For every size `s` in 1 B, 2 B, 4 B, ... 1 MiB, a window of `W(s)` messages (64, fewer from
//! 128 KiB on so that a window stays within 4 MiB: `W = min(64, 4 MiB / s)`): message `j` moves
//! `s` bytes between bytes `j s .. (j + 1) s` of a private buffer of PE 0 (a `Vec<u8>` of
//! 4 MiB, wherever the allocator put it) and the same bytes of a page-aligned heap array on
//! PE 1. Cases:
//! - `put`: `W` blocking puts, then `quiet`;
//! - `get`: `W` blocking gets, then `quiet`;
//! - `put_nbi`, `get_nbi`: one `nbi` scope of `W` calls (the scope ends with the quiet).
//!
//! After a warm-up, `--reps` timed loops of `k` windows each (`k` = `--iters` windows at small
//! sizes, fewer so that a loop moves about 16 MiB, at least 2). A row's figures are the median
//! and the minimum over the loops of the mean time **per message**, in ns: messages per second
//! are `1e9 / median_ns` (the script's tables show them).
//!
//! # Put-then-consume (PE 1 reads what arrived)
//! For 64 KiB, 1 MiB and 4 MiB, rounds of: `barrier_all`; PE 0 writes the bytes into a heap
//! array of PE 1 one of three ways; `quiet`; `barrier_all`; PE 1 sums the array as 64-bit
//! words, timed. Variants (the `variant` column), alternating inside every round:
//! - `after put`: PE 0's `put` of the whole array (this library's copy engine);
//! - `after memcpy by PE 0`: PE 0 copies the same bytes with a plain `memcpy`
//!   (`std::ptr::copy_nonoverlapping`) through the pointer to PE 1's copy (`peer_slice`; the
//!   row is missing where PE 1's heap is not mapped here, as over tcp);
//! - `after local memcpy`: PE 1 copies the bytes into its own array with a plain `memcpy`
//!   (PE 0 writes nothing).
//!
//! The case is `consume`; the figures are PE 1's sum time, median and minimum over the
//! rounds, ns for the whole array. A copy that leaves the data out of the caches (non-temporal
//! stores) shows as a slower `after put` than `after memcpy by PE 0`.
//!
//! Output: `case,size,variant,median_ns,min_ns` lines with `--csv`, else a table with
//! messages per second.
//!
//! Run: `target/release/shmemrun -n 2 target/release/msg_rate [--csv] [--iters N] [--reps N]
//! [--rate | --consume] [--min-size N] [--max-size N] [--offset N]` (`UCX_TLS=tcp,self` in the environment for the tcp path).

use clap::Parser;
use shmem_benches::{Stats, stats};
use shmem_core::prelude::*;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "Message rate of put/get/put_nbi/get_nbi windows, and put-then-consume")]
struct Args {
    /// Windows per timed loop at small sizes (fewer at large ones).
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..))]
    iters: u64,
    /// Timed loops per case (rounds for the consume rows).
    #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Print `case,size,variant,median_ns,min_ns` lines instead of a table.
    #[arg(long)]
    csv: bool,
    /// Only the message-rate rows.
    #[arg(long, conflicts_with = "consume")]
    rate: bool,
    /// Only the put-then-consume rows.
    #[arg(long)]
    consume: bool,
    /// Largest message size (a power of 2, at most 1 MiB).
    #[arg(long, default_value_t = 1 << 20)]
    max_size: usize,
    /// Smallest message size (the sizes are the powers of 2 from it to `--max-size`).
    #[arg(long, default_value_t = 1)]
    min_size: usize,
    /// Start both private buffers this many bytes (mod 4096) further into their vectors, to
    /// move the copies' distance (destination - source) mod 4096.
    #[arg(long, default_value_t = 0)]
    offset: usize,
}

/// Messages per window at small sizes.
const WINDOW: usize = 64;
/// Bytes a window may span (and the private buffers' size).
const SPAN: usize = 4 << 20;
/// Largest message.
const MAX_MSG: usize = 1 << 20;
/// Bytes a timed loop moves, about (sets the windows per loop at large sizes).
const LOOP_BYTES: usize = 16 << 20;
/// Sizes of the put-then-consume rows.
const CONSUME_SIZES: [usize; 3] = [64 << 10, 1 << 20, 4 << 20];
/// The PE written to and read from.
const TARGET: usize = 1;
const PAGE: usize = 4096;

type Row = (&'static str, usize, &'static str, Stats);

/// Messages per window of `size`-byte messages.
fn window(size: usize) -> usize {
    WINDOW.min(SPAN / size)
}

/// Windows per timed loop.
fn windows(iters: u64, size: usize) -> u64 {
    let by_bytes = (LOOP_BYTES / (window(size) * size)) as u64;
    iters.min(by_bytes).max(2)
}

/// Warm-up, then `reps` loops of `k` calls of `op`; ns per call, median and minimum.
fn measure(k: u64, reps: u64, mut op: impl FnMut()) -> Stats {
    for _ in 0..k.max(4) {
        op();
    }
    let v = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..k {
                op();
            }
            t.elapsed().as_nanos() as f64 / k as f64
        })
        .collect();
    stats(v)
}

/// A private buffer of `len` bytes wherever the allocator puts it, written once so that its
/// pages are real.
fn user_vec(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 1) as u8).collect()
}

/// The message-rate rows, on PE 0.
fn run_rate(world: &World, heap: &SymArray<'_, u8>, args: &Args, rows: &mut Vec<Row>) {
    let off = args.offset % PAGE;
    let src_vec = user_vec(SPAN + PAGE);
    let mut dst_vec = user_vec(SPAN + PAGE);
    let src = &src_vec[off..off + SPAN];
    let dst = &mut dst_vec[off..off + SPAN];
    eprintln!(
        "msg_rate: private buffers at {} and {} mod 4096, heap at {}",
        src.as_ptr() as usize % PAGE,
        dst.as_ptr() as usize % PAGE,
        heap.peer_slice(TARGET)
            .map_or(0, |v| v.as_ptr() as usize % PAGE)
    );
    let sizes: Vec<usize> = (0..=20)
        .map(|k| 1usize << k)
        .filter(|&s| s >= args.min_size && s <= args.max_size)
        .collect();
    for &size in &sizes {
        let w = window(size);
        let k = windows(args.iters, size);
        let per = |s: Stats| Stats {
            median: s.median / w as f64,
            min: s.min / w as f64,
        };
        let put = measure(k, args.reps, || {
            for j in 0..w {
                let r = j * size..(j + 1) * size;
                heap.put(TARGET, r.clone(), black_box(&src[r]));
            }
            world.quiet();
        });
        rows.push(("put", size, "heap", per(put)));
        let get = measure(k, args.reps, || {
            for j in 0..w {
                let r = j * size..(j + 1) * size;
                heap.get(TARGET, r.clone(), black_box(&mut dst[r]));
            }
            world.quiet();
            black_box(&mut *dst);
        });
        rows.push(("get", size, "heap", per(get)));
        let put_nbi = measure(k, args.reps, || {
            world.nbi(|s| {
                for j in 0..w {
                    let r = j * size..(j + 1) * size;
                    s.put(heap, TARGET, r.clone(), black_box(&src[r]));
                }
            });
        });
        rows.push(("put_nbi", size, "heap", per(put_nbi)));
        let get_nbi = measure(k, args.reps, || {
            world.nbi(|s| {
                for (j, chunk) in dst.chunks_mut(size).take(w).enumerate() {
                    s.get(heap, TARGET, j * size..(j + 1) * size, chunk);
                }
            });
            black_box(&mut *dst);
        });
        rows.push(("get_nbi", size, "heap", per(get_nbi)));
    }
}

/// Sum of `words` as 64-bit words (wrapping): PE 1's read of what arrived.
#[inline(never)]
fn sum(words: &[u64]) -> u64 {
    words.iter().fold(0u64, |a, &w| a.wrapping_add(w))
}

/// The put-then-consume rows (every PE calls this; PE 0 keeps the rows).
fn run_consume(
    world: &World,
    arr: &SymArray<'_, u64>,
    times: &SymArray<'_, f64>,
    args: &Args,
    rows: &mut Vec<Row>,
) {
    let me = world.my_pe();
    let src: Vec<u64> = (0..(4 << 20) / 8).map(|i| i as u64 * 3 + 1).collect();
    let peer_ptr = if me == 0 {
        arr.peer_slice(TARGET).map(|v| v.as_ptr())
    } else {
        None
    };
    // Whether PE 0 can write PE 1's copy by memcpy (the same on every PE: PE 0 tells).
    let flag = world.alloc::<u64>(1);
    if me == 0 {
        for pe in 0..world.n_pes() {
            flag.p(pe, 0, u64::from(peer_ptr.is_some()));
        }
    }
    world.barrier_all();
    let mapped = flag.local_get(0) == 1;
    const VARIANTS: [&str; 3] = ["after put", "after memcpy by PE 0", "after local memcpy"];
    for &bytes in &CONSUME_SIZES {
        let n = bytes / 8;
        let mut t: [Vec<f64>; 3] = Default::default();
        for _ in 0..args.reps + 1 {
            for (v, tv) in t.iter_mut().enumerate() {
                if v == 1 && !mapped {
                    continue;
                }
                world.barrier_all();
                if me == 0 {
                    match v {
                        0 => arr.put(TARGET, 0..n, black_box(&src[..n])),
                        1 => {
                            if let Some(p) = peer_ptr {
                                // SAFETY: `p` is PE 1's copy of `arr` (at least `n` u64s)
                                // mapped here; PE 1 does not touch it until the barrier below,
                                // and `src` is a private buffer.
                                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, n) };
                            }
                        }
                        _ => {}
                    }
                    world.quiet();
                } else if me == TARGET && v == 2 {
                    // SAFETY: this PE's own copy; no other PE writes it in this round.
                    let mine = unsafe { arr.local_slice_mut() };
                    mine[..n].copy_from_slice(&src[..n]);
                }
                world.barrier_all();
                if me == TARGET {
                    // SAFETY: no PE writes the array until the next barrier.
                    let mine = unsafe { arr.local_slice() };
                    let start = Instant::now();
                    let s = sum(black_box(&mine[..n]));
                    let ns = start.elapsed().as_nanos() as f64;
                    black_box(s);
                    tv.push(ns);
                }
            }
        }
        // PE 1 sends its figures to PE 0 (the first round was a warm-up).
        world.barrier_all();
        for (v, &name) in VARIANTS.iter().enumerate() {
            if me == TARGET && !t[v].is_empty() {
                let s = stats(t[v][1..].to_vec());
                times.put(0, 2 * v..2 * v + 2, &[s.median, s.min]);
            }
            world.barrier_all();
            if me == 0 && (v != 1 || mapped) {
                let s = Stats {
                    median: times.local_get(2 * v),
                    min: times.local_get(2 * v + 1),
                };
                rows.push(("consume", bytes, name, s));
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    shmem_benches::exit_status("msg_rate", run(&args))
}

fn run(args: &Args) -> Result<(), String> {
    if !args.max_size.is_power_of_two() || args.max_size > MAX_MSG {
        return Err(format!(
            "--max-size must be a power of 2 up to {MAX_MSG}, got {}",
            args.max_size
        ));
    }
    let world = shmem_benches::init_two_pes("msg_rate")?;
    let alloc_err = |e: shmem_core::Error| format!("symmetric heap allocation failed: {e}");
    let heap = world
        .try_alloc_aligned::<u8>(SPAN, PAGE)
        .map_err(alloc_err)?;
    let arr = world
        .try_alloc_aligned::<u64>((4 << 20) / 8, PAGE)
        .map_err(alloc_err)?;
    let times = world.try_alloc::<f64>(6).map_err(alloc_err)?;
    world.barrier_all();
    let mut rows = Vec::new();
    if !args.consume {
        if world.my_pe() == 0 {
            run_rate(&world, &heap, args, &mut rows);
        }
        // The other PEs wait here (progressing UCX, as the tcp path needs).
        world.barrier_all();
    }
    if !args.rate {
        run_consume(&world, &arr, &times, args, &mut rows);
    }
    if world.my_pe() == 0 {
        if args.csv {
            println!("case,size,variant,median_ns,min_ns");
            for (case, size, variant, s) in &rows {
                println!("{case},{size},{variant},{:.2},{:.2}", s.median, s.min);
            }
        } else {
            println!(
                "{:<8} {:>8} {:<22} {:>12} {:>12} {:>12}",
                "case", "size", "variant", "median_ns", "min_ns", "M msg/s"
            );
            for (case, size, variant, s) in &rows {
                println!(
                    "{case:<8} {size:>8} {variant:<22} {:>12.2} {:>12.2} {:>12.3}",
                    s.median,
                    s.min,
                    1e3 / s.median
                );
            }
        }
    }
    world.barrier_all();
    // The last put window wrote bytes 0.. of PE 1's array from `src`: check one.
    if !args.consume && world.my_pe() == TARGET {
        let (got, want) = (heap.local_get(0), (args.offset % PAGE * 7 + 1) as u8);
        if got != want {
            return Err(format!(
                "check failed: PE {TARGET} holds {got}, expected {want}"
            ));
        }
    }
    Ok(())
}
