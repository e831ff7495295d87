//! Collectives from 8 B to 4 MiB per PE over all PEs: `reduce_sum_f32`, `reduce_sum_i64`,
//! `broadcast` (root 0), `fcollect`, `alltoall`, `collect` (every PE contributing as many
//! elements), `alltoalls` (strides 2 on both sides) and `broadcast_fresh`, and `memcpy`
//! (below); `benches/c/coll_sweep.c` runs the same cases on a C OpenSHMEM (this runtime's C API
//! or Open MPI's oshmem) with the same output, and `benches/coll-sweep.sh` runs the three side
//! by side. `collect`, `alltoalls` and `broadcast_fresh` run only when `--only` names them.
//!
//! So do the reductions of every other operation and type family ([`OPS`]), one case each,
//! `reduce_OP_TYPE` (C's routine in brackets): `reduce_and_i64` (`shmem_longlong_and_to_all`),
//! `reduce_or_i32` (`shmem_int_or_to_all`), `reduce_xor_i16` (`shmem_short_xor_to_all`),
//! `reduce_max_f64` (`shmem_double_max_to_all`), `reduce_min_i32` (`shmem_int_min_to_all`),
//! `reduce_sum_i16` (`shmem_short_sum_to_all`), `reduce_sum_c64` (`shmem_complexd_sum_to_all`),
//! `reduce_prod_f64` (`shmem_double_prod_to_all`) and `reduce_prod_c32`
//! (`shmem_complexf_prod_to_all`): every operation of the three type sets (bitwise, min/max,
//! sum/prod), on 16-, 32- and 64-bit integers, `f64` and both complex types. Their sources hold
//! `(i % 1000) + me` (complex: that plus 1i; the complex product's `1 + (i % 7) / 8 + me / 16
//! i`, whose products stay finite), the `i64` one the other cases' `i (me + 1)`.
//!
//! `broadcast` sends the same source in every call, so that the members of a library that read
//! it where it lies (the C programs' symmetric source, which oshmem's broadcast reads in place)
//! find its lines in their own caches from the second call on; `broadcast_fresh` is the same
//! broadcast of a source that the root rewrites (every element, untimed, before each call's
//! barrier), as a program broadcasts data it has just made.
//!
//! `broadcast` is [`Team::broadcast_to_others`](shmem_core::Team::broadcast_to_others): the
//! operation of the C twin's `shmem_broadcast64` (OpenSHMEM 1.4), which leaves the root's own
//! `dest` as it is. (`Team::broadcast` writes the root's `dest` too: one more copy of the
//! data on the root, which neither C program makes.)
//!
//! Sizes: 8 B, then 16 B to 4 MiB by powers of 4 (`--max-bytes` caps them). A size is the bytes
//! of one PE's source: the reduced array, the broadcast array, one PE's fcollect contribution
//! (the destination holds `npes` of them) and collect contribution, one PE's whole alltoall
//! source (`npes` blocks of `size / npes` bytes, rounded down to whole 8-byte elements, at least
//! one), and the span of one PE's alltoalls source (`npes` blocks of `size / npes / 16` elements
//! at stride 2, at least one).
//!
//! Timing is OSU style, as `latency.rs`'s collectives: every iteration is an untimed
//! `barrier_all` followed by the collective, and only the collective is timed, on every PE; a
//! loop's figure is the average over the PEs of each PE's mean time per call (gathered to PE 0
//! by a put, then `barrier_all`); the row is the median over `--reps` loops of that figure, and
//! the minimum. A loop has `--iters` calls at 8 B and fewer for large sizes (about `--budget`
//! bytes per PE per loop, at least 2), after untimed warm-up calls of its own. A size's loops
//! take turns: each of the `--reps` repetitions runs one loop of every case in turn, so that a
//! spell of the machine's (a host that moves the vCPUs apart for seconds, a scheduler that keeps
//! three PEs on one CPU for tens of milliseconds) falls on every case of the size alike instead
//! of on all of one case's loops.
//!
//! `memcpy` is no collective: every PE copies `size` bytes between two private vectors of its
//! own, all PEs at once and timed the same way, which is what moving the data costs on this
//! node at this PE count; `coll-sweep.sh` states the memory bound of the large collectives
//! with it (the C twin runs the same case with `memcpy`, so that each job has its own).
//!
//! Sources are private vectors here (what a Rust program passes); the C twin's are symmetric,
//! as C asks. Output: `case,size,npes,median_ns,min_ns`, one line per case and size, on PE 0.
//!
//! Destinations are page-aligned on both sides by default (`alloc_aligned(.., 4096)` here,
//! `shmem_align(4096, ..)` in the C twin), the favourable case for a copy routine; with
//! `--offset K` (the C twin's `offset K`) every destination starts K elements past that page
//! boundary (K x 4 bytes for `f32`, K x 8 for `i64`), and so does every source (here K elements
//! into a `Vec` at the allocator's address; in C K elements past its page-aligned symmetric
//! source) and `memcpy`'s two buffers (K x 8 bytes): the unfavourable case, which
//! `coll-sweep.sh` labels (`OFFSET`).
//!
//! Run: `target/release/shmemrun -n 2 target/release/coll_sweep [--iters N] [--reps N]
//! [--max-bytes B] [--budget B] [--offset K]` (`SHMEM_SYMMETRIC_SIZE` must hold `npes + 1`
//! times the largest size plus slack, e.g. 256M at 8 PEs and 4 MiB).

use clap::Parser;
use shmem_benches::stats;
use shmem_core::prelude::*;
use shmem_core::{Complex32, Complex64};
use std::process::ExitCode;

/// Cases that run only when `--only` names them (and [`OPS`]).
const ON_REQUEST: [&str; 3] = ["collect", "alltoalls", "broadcast_fresh"];

/// The reductions of every other operation and type family, which run only when `--only` names
/// them (see the module docs).
const OPS: [&str; 9] = [
    "reduce_and_i64",
    "reduce_or_i32",
    "reduce_xor_i16",
    "reduce_max_f64",
    "reduce_min_i32",
    "reduce_sum_i16",
    "reduce_sum_c64",
    "reduce_prod_f64",
    "reduce_prod_c32",
];

#[derive(Parser, Debug)]
#[command(about = "Collectives from 8 B to 4 MiB per PE (OSU-style timing)")]
struct Args {
    /// Calls per timed loop at the smallest size.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    iters: u64,
    /// Timed loops per case and size; the median and minimum are taken over these.
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// The largest size, in bytes per PE.
    #[arg(long, default_value_t = 4 << 20)]
    max_bytes: usize,
    /// The smallest size, in bytes per PE.
    #[arg(long, default_value_t = 8)]
    min_bytes: usize,
    /// Only these cases (comma-separated names; default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Bytes per PE that one timed loop moves at large sizes (it sets the calls per loop).
    #[arg(long, default_value_t = 64 << 20)]
    budget: usize,
    /// Elements past a page boundary at which every destination and source starts (0: aligned).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=64))]
    offset: u64,
}

/// The sizes: 8 B, then 16 B to 4 MiB by powers of 4, up to `max`.
fn sizes(max: usize) -> Vec<usize> {
    let mut v = vec![8];
    let mut s = 16;
    while s <= max.min(4 << 20) {
        v.push(s);
        s *= 4;
    }
    v
}

/// One OSU-style loop of `op` (see the module docs), after its warm-up, with `prep` untimed
/// before each call's barrier: ns per call.
fn one_loop(
    world: &World,
    means: &SymArray<'_, f64>,
    iters: u64,
    prep: impl FnMut(u64),
    op: impl FnMut(u64),
) -> f64 {
    let warm_up = iters.div_ceil(4).max(2);
    shmem_benches::collective_loops_after(world, means, (warm_up, iters, 1), prep, op)[0]
}

/// A private source: `off` elements of padding (the `Vec` at the allocator's address), then
/// `f(i)` for the elements of `max` bytes and one more.
fn source<E: Element + Default>(max: usize, off: usize, f: impl Fn(usize) -> E) -> Vec<E> {
    let mut v = vec![E::default(); off];
    v.extend((0..max / size_of::<E>() + 1).map(f));
    v
}

/// The other reductions' private sources and symmetric destinations, for sizes up to `max`
/// bytes, whose elements the cases use from `off` on, as the other cases' (see the module docs
/// for the values).
struct Ops<'w> {
    src_f64: Vec<f64>,
    src_i32: Vec<i32>,
    src_i16: Vec<i16>,
    src_c64: Vec<Complex64>,
    src_c32: Vec<Complex32>,
    dest_f64: SymArray<'w, f64>,
    dest_i32: SymArray<'w, i32>,
    dest_i16: SymArray<'w, i16>,
    dest_c64: SymArray<'w, Complex64>,
    dest_c32: SymArray<'w, Complex32>,
}

impl<'w> Ops<'w> {
    fn new(world: &'w World, max: usize, off: usize, me: usize) -> Ops<'w> {
        let dest = |bytes: usize| max / bytes + 1 + off;
        let v = |i: usize| (i % 1000 + me) as f64;
        Ops {
            src_f64: source(max, off, v),
            src_i32: source(max, off, |i| (i % 1000 + me) as i32),
            src_i16: source(max, off, |i| (i % 1000 + me) as i16),
            src_c64: source(max, off, |i| Complex64::new(v(i), 1.0)),
            src_c32: source(max, off, |i| {
                Complex32::new(1.0 + (i % 7) as f32 / 8.0, me as f32 / 16.0)
            }),
            dest_f64: world.alloc_aligned(dest(8), 4096),
            dest_i32: world.alloc_aligned(dest(4), 4096),
            dest_i16: world.alloc_aligned(dest(2), 4096),
            dest_c64: world.alloc_aligned(dest(16), 4096),
            dest_c32: world.alloc_aligned(dest(8), 4096),
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let world = match shmem_core::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("coll_sweep: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();
    let means = world.alloc::<f64>(n);
    let max = sizes(args.max_bytes).last().copied().unwrap_or(8);
    // Every destination and source starts `off` elements in (`--offset`); the byte copies
    // `off` x 8 bytes in.
    let off = args.offset as usize;
    // The sources' values count from the `off` elements of padding on, as the C twin's; the
    // f32 destination holds the f32 elements of the largest size.
    let max_elems = max / 4;
    let src_f32 = source(max, off, |i| (i % 1000) as f32 + me as f32);
    let src_i64 = source(max, off, |i| i as i64 * (me as i64 + 1));
    let fresh = std::cell::RefCell::new(src_i64.clone());
    let (src_f32, src_i64) = (&src_f32[off..], &src_i64[off..]);
    let dest_f32_all = world.alloc_aligned::<f32>(max_elems.max(1) + off, 4096);
    let dest_i64_all = world.alloc_aligned::<i64>(n * (max / 8 + 1) + off, 4096);
    let (dest_f32, dest_i64) = (dest_f32_all.slice(off..), dest_i64_all.slice(off..));
    let copy_src: Vec<u8> = (0..max + 8 * off).map(|i| (i * 7 + me) as u8).collect();
    let copy_src = &copy_src[8 * off..];
    let mut copy_dst_all: Vec<u8> = vec![1; max + 8 * off];
    let copy_dst = &mut copy_dst_all[8 * off..];
    let mut rows = Vec::new();
    // `collect` and `alltoalls` run only when named: oshmem's alltoalls moves large ones element
    // by element (4 MiB at 2 PEs: 5.3 ms a call), which over TCP would make a whole sweep last
    // hours.
    let want = |case: &str| {
        if args.only.is_empty() {
            !ON_REQUEST.contains(&case) && !OPS.contains(&case)
        } else {
            args.only.iter().any(|c| c == case)
        }
    };
    // The other reductions' sources and destinations, only where one of them runs (after the
    // other arrays, which keep their places in the heap).
    let ops = OPS
        .iter()
        .any(|c| want(c))
        .then(|| Ops::new(&world, max, off, me));
    for size in sizes(args.max_bytes)
        .into_iter()
        .filter(|&s| s >= args.min_bytes)
    {
        let iters = (args.budget / size).clamp(2, args.iters as usize) as u64;
        let k32 = (size / 4).max(1);
        let k64 = (size / 8).max(1);
        let block = (k64 / n).max(1);
        // alltoalls: every other element on both sides; the source spans about `size` bytes.
        let nel = (k64 / n / 2).max(1);
        let span = (n * nel - 1) * 2 + 1;
        // Each case's loop figures, in the order the cases first ran.
        let mut figures: Vec<(&'static str, Vec<f64>)> = Vec::new();
        for _ in 0..args.reps {
            let mut case_after =
                |name: &'static str, prep: &mut dyn FnMut(), op: &mut dyn FnMut()| {
                    if !want(name) {
                        return;
                    }
                    let f = one_loop(&world, &means, iters, |_| prep(), |_| op());
                    match figures.iter_mut().find(|(c, _)| *c == name) {
                        Some((_, v)) => v.push(f),
                        None => figures.push((name, vec![f])),
                    }
                };
            let mut case =
                |name: &'static str, op: &mut dyn FnMut()| case_after(name, &mut || {}, op);
            case("reduce_sum_f32", &mut || {
                team.sum_reduce(&dest_f32, &src_f32[..k32])
            });
            case("reduce_sum_i64", &mut || {
                team.sum_reduce(&dest_i64, &src_i64[..k64])
            });
            case("broadcast", &mut || {
                team.broadcast_to_others(&dest_i64, &src_i64[..k64], 0)
            });
            case("fcollect", &mut || {
                team.fcollect(&dest_i64, &src_i64[..k64])
            });
            case("memcpy", &mut || {
                copy_dst[..size].copy_from_slice(std::hint::black_box(&copy_src[..size]));
                std::hint::black_box(&mut *copy_dst);
            });
            case("alltoall", &mut || {
                team.alltoall(&dest_i64, &src_i64[..block * n])
            });
            if let Some(o) = &ops {
                // The elements of `size` bytes (at least one), from `off` on.
                let k = |bytes: usize| off..off + (size / bytes).max(1);
                case("reduce_and_i64", &mut || {
                    team.and_reduce(&dest_i64, &src_i64[..k64])
                });
                case("reduce_or_i32", &mut || {
                    team.or_reduce(&o.dest_i32.slice(off..), &o.src_i32[k(4)])
                });
                case("reduce_xor_i16", &mut || {
                    team.xor_reduce(&o.dest_i16.slice(off..), &o.src_i16[k(2)])
                });
                case("reduce_max_f64", &mut || {
                    team.max_reduce(&o.dest_f64.slice(off..), &o.src_f64[k(8)])
                });
                case("reduce_min_i32", &mut || {
                    team.min_reduce(&o.dest_i32.slice(off..), &o.src_i32[k(4)])
                });
                case("reduce_sum_i16", &mut || {
                    team.sum_reduce(&o.dest_i16.slice(off..), &o.src_i16[k(2)])
                });
                case("reduce_sum_c64", &mut || {
                    team.sum_reduce(&o.dest_c64.slice(off..), &o.src_c64[k(16)])
                });
                case("reduce_prod_f64", &mut || {
                    team.prod_reduce(&o.dest_f64.slice(off..), &o.src_f64[k(8)])
                });
                case("reduce_prod_c32", &mut || {
                    team.prod_reduce(&o.dest_c32.slice(off..), &o.src_c32[k(8)])
                });
            }
            case("collect", &mut || {
                team.collect(&dest_i64, &src_i64[..k64]);
            });
            case("alltoalls", &mut || {
                team.alltoalls(&dest_i64, 2, &src_i64[..span], 2, nel)
            });
            // The root writes every element of what it broadcasts before each call (untimed),
            // as a program broadcasts data it has just made; "broadcast" sends the same source
            // every time, which stays in every cache.
            case_after(
                "broadcast_fresh",
                &mut || {
                    if me == 0 {
                        for x in &mut fresh.borrow_mut()[off..off + k64] {
                            *x = x.wrapping_add(1);
                        }
                    }
                },
                &mut || team.broadcast_to_others(&dest_i64, &fresh.borrow()[off..off + k64], 0),
            );
        }
        for (name, v) in figures {
            let s = stats(v);
            rows.push((name, size, (s.median, s.min)));
        }
    }
    // A check that the last reduction summed: element 1 of the i64 sum is sum(p + 1) = n(n+1)/2.
    team.sum_reduce(&dest_i64, &src_i64[..2]);
    let want = (n * (n + 1) / 2) as i64;
    if dest_i64.local_get(1) != want {
        eprintln!(
            "coll_sweep: PE {me}: the check reduction gave {} instead of {want}",
            dest_i64.local_get(1)
        );
        return ExitCode::FAILURE;
    }
    if me == 0 {
        for (case, size, (median, min)) in rows {
            println!("{case},{size},{n},{median:.1},{min:.1}");
        }
    }
    ExitCode::SUCCESS
}
