//! Copy time against the distance between destination and source modulo 4096, on the direct
//! (shared-memory) path: `put + quiet` and `get` between a private buffer of PE 0 and PE 1's
//! symmetric heap, next to a plain local `memcpy`.
//!
//! Why: glibc's `memcpy` (`rep movsb` for large copies) stalls on AMD EPYC when the destination
//! lies just past the source modulo 4096 bytes (d = (dst - src) mod 4096 in 1..~31; glibc bug
//! 30994): a 4 KiB copy takes ~2 us instead of ~60 ns. Where a user's buffer lies decides d, so
//! page-aligned benchmarks never see it. This sweep sets d on purpose.
//!
//! What: for every size in [`SIZES`] (8 B, 64 B, 256 B, 4 KiB, 64 KiB, 256 KiB, 4 MiB), every
//! source alignment in [`SRC_ALIGNS`] (source address mod 4096: 0, an odd one, and one 3 bytes
//! before a page boundary, so that every source crosses it) and every distance in
//! [`DISTANCES`], PE 0 times three copies of `size` bytes:
//!
//! - `put`: `put` from the private buffer into PE 1's heap array, then `quiet` (source: the
//!   private buffer, destination: PE 1's copy as mapped into PE 0);
//! - `get`: `get` from PE 1's heap array into the private buffer (source and destination swap);
//! - `memcpy`: `copy_from_slice` between two private buffers of PE 0 (glibc's `memcpy`), the
//!   reference.
//!
//! The buffers are allocated once with a page of slack and each copy starts at the offset that
//! gives the wanted source alignment and distance, computed from the real addresses (PE 1's
//! heap where it is mapped in PE 0, found with `peer_slice`). Each repetition (`--reps`) goes
//! round every point of a size (forwards, then backwards on the next), and times at each point
//! one loop of `max(4, --bytes / size)` copies per copy, the three copies' loops alternating
//! (order rotated per repetition), each after an untimed loop of an eighth as many copies.
//! So a change in the machine's speed during the sweep falls on every point alike, not on a
//! run of neighbouring points whose best or worst it would then decide. This VM also slows
//! down by 1.2-1.7x for spells of 0.1-2 s, a few times a minute (a plain C loop of `memcpy`
//! calls, with no runtime and no other PE, shows them too): a spell over fewer than half of
//! a point's loops leaves its median alone, a longer one can still move some points'
//! medians and so a size's worst/best ratio; `benches/run.sh` takes the median over three
//! jobs. (Timing each loop against a twin loop at a reference point, back to back, did not
//! steady the ratios here: the loop-to-loop noise is as large.) The other PEs wait in
//! `barrier_all`.
//!
//! Output (stdout, CSV): a header `op,size,d,src_align,median_ns,min_ns`, then one line per
//! (op, size, source alignment, d): the median and the minimum over the timed loops of the mean
//! ns per copy. `benches/c/copy_sweep.c` is the twin for Open MPI's OpenSHMEM (same output);
//! `benches/run.sh` runs both, tabulates them and draws `benches/results/copy_sweep.png` with
//! `sweep_plot`.
//!
//! Run: `target/release/shmemrun -n 2 target/release/copy_sweep [--bytes N] [--reps N]`.

use clap::Parser;
use shmem_core::prelude::*;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    about = "put/get/memcpy time against (destination - source) mod 4096, direct path, PE 0 to PE 1"
)]
struct Args {
    /// Bytes copied per timed loop (a loop has max(4, bytes / size) copies: a single copy of
    /// the largest size is too short a loop to time against the machine's noise).
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    bytes: u64,
    /// Timed loops per point; the median and minimum are taken over these.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Only these sizes (comma-separated bytes, each at most 4 MiB); default: the whole list.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=MAX as u64))]
    sizes: Vec<u64>,
    /// Only these source alignments (comma-separated, each below 4096); default: 0, 7, 4093.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..PAGE as u64))]
    aligns: Vec<u64>,
    /// Only these distances (comma-separated, each below 4096); default: the whole list.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..PAGE as u64))]
    distances: Vec<u64>,
}

/// `list` as sizes, or `default` when it is empty.
fn or_default(list: &[u64], default: &[usize]) -> Vec<usize> {
    if list.is_empty() {
        default.to_vec()
    } else {
        list.iter().map(|&v| v as usize).collect()
    }
}

/// Copy sizes, in bytes.
const SIZES: [usize; 7] = [8, 64, 256, 4096, 64 << 10, 256 << 10, 4 << 20];
/// The largest of [`SIZES`].
const MAX: usize = 4 << 20;
/// Distances (destination - source) mod 4096.
const DISTANCES: [usize; 21] = [
    0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 256, 512, 1024, 2048, 3072, 4032, 4064, 4080, 4088,
    4095,
];
/// Source alignments: the source address mod 4096 (4093: the source crosses a page boundary,
/// and so does the destination wherever d puts it within `size` of one).
const SRC_ALIGNS: [usize; 3] = [0, 7, 4093];
const PAGE: usize = 4096;
/// Copies per timed loop at least.
const MIN_COPIES: u64 = 4;
/// The PE whose heap is the remote side.
const TARGET: usize = 1;

/// An untimed loop of `iters / WARM_DIVISOR` copies (at least `MIN_COPIES`) comes before each
/// timed loop: the point's buffers back in cache and TLB after the other points'.
const WARM_DIVISOR: u64 = 8;

/// One point of the sweep: the source alignment, the distance, and where each op's copy starts
/// in its buffers.
struct Point {
    a: usize,
    d: usize,
    put_l: usize,
    put_r: usize,
    get_r: usize,
    get_l: usize,
    cp_s: usize,
    cp_d: usize,
}

/// The copies timed at each point, in output order.
const OPS: [&str; 3] = ["put", "get", "memcpy"];

/// Offset into a buffer at address `base` at which an address is `want` mod 4096.
fn offset_for(base: usize, want: usize) -> usize {
    (want % PAGE + PAGE - base % PAGE) % PAGE
}

/// A private buffer of `len` bytes with every page written (not the kernel's zero page).
fn filled(len: usize) -> Vec<u8> {
    (0..len).map(|i| i as u8).collect()
}

/// Mean ns per call of `iters` calls of `op`.
fn time_loop(iters: u64, op: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        op();
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// Panics (a bug in this program, not a user error) unless the copy from `src` to `dst` has
/// source alignment `a` and distance `d`.
fn check_placement(what: &str, dst: usize, src: usize, a: usize, d: usize) {
    assert!(
        src % PAGE == a && dst.wrapping_sub(src) % PAGE == d,
        "copy_sweep: {what}: source at {} mod 4096, distance {}, wanted {a} and {d}",
        src % PAGE,
        dst.wrapping_sub(src) % PAGE
    );
}

fn main() -> ExitCode {
    let args = Args::parse();
    shmem_benches::exit_status("copy_sweep", run(&args))
}

fn run(args: &Args) -> Result<(), String> {
    let world = shmem_benches::init_two_pes("copy_sweep")?;
    let remote = world
        .try_alloc_aligned::<u8>(MAX + PAGE, PAGE)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    world.barrier_all();
    let result = if world.my_pe() == 0 {
        sweep(&world, &remote, args)
    } else {
        Ok(())
    };
    // The other PEs wait here while PE 0 measures.
    world.barrier_all();
    result
}

/// PE 0's part: every point, printed as it is measured.
fn sweep(world: &World, remote: &SymArray<'_, u8>, args: &Args) -> Result<(), String> {
    let view = remote.peer_slice(TARGET).ok_or_else(|| {
        format!(
            "PE {TARGET}'s heap is not mapped into PE 0: this measures the direct shared-memory \
             path only (are the PEs on one node, with shared-memory transports in UCX_TLS?)"
        )
    })?;
    let rbase = view.as_ptr() as usize;
    let mut local = filled(MAX + PAGE);
    let src_buf = filled(MAX + PAGE);
    let mut dst_buf = filled(MAX + PAGE);
    let lbase = local.as_ptr() as usize;
    let (sbase, dbase) = (src_buf.as_ptr() as usize, dst_buf.as_ptr() as usize);

    println!("op,size,d,src_align,median_ns,min_ns");
    let (sizes, aligns, distances) = (
        or_default(&args.sizes, &SIZES),
        or_default(&args.aligns, &SRC_ALIGNS),
        or_default(&args.distances, &DISTANCES),
    );
    for &size in &sizes {
        let iters = (args.bytes / size as u64).max(MIN_COPIES);
        let warm = (iters / WARM_DIVISOR).max(MIN_COPIES);
        let mut points = Vec::new();
        for &a in &aligns {
            for &d in &distances {
                let p = Point {
                    a,
                    d,
                    // put: local (source) at a, remote (destination) at a + d.
                    put_l: offset_for(lbase, a),
                    put_r: offset_for(rbase, a + d),
                    // get: remote (source) at a, local (destination) at a + d.
                    get_r: offset_for(rbase, a),
                    get_l: offset_for(lbase, a + d),
                    // memcpy: src_buf at a, dst_buf at a + d.
                    cp_s: offset_for(sbase, a),
                    cp_d: offset_for(dbase, a + d),
                };
                check_placement("put", rbase + p.put_r, lbase + p.put_l, a, d);
                check_placement("get", lbase + p.get_l, rbase + p.get_r, a, d);
                check_placement("memcpy", dbase + p.cp_d, sbase + p.cp_s, a, d);
                points.push(p);
            }
        }
        let mut times: Vec<[Vec<f64>; 3]> = vec![Default::default(); points.len()];
        for r in 0..args.reps as usize {
            // Forwards on even repetitions, backwards on odd ones.
            for i in 0..points.len() {
                let i = if r % 2 == 0 { i } else { points.len() - 1 - i };
                let p = &points[i];
                // The put reads `local`, the get writes it: one closure holds it and switches
                // on the op.
                let mut copy = |op: usize| match op {
                    0 => {
                        remote.put(
                            TARGET,
                            p.put_r..p.put_r + size,
                            black_box(&local[p.put_l..p.put_l + size]),
                        );
                        world.quiet();
                    }
                    1 => {
                        let dst = &mut local[p.get_l..p.get_l + size];
                        remote.get(TARGET, p.get_r..p.get_r + size, black_box(&mut *dst));
                        black_box(dst);
                    }
                    _ => {
                        // black_box on both sides: the source may have changed and the copy
                        // is read, so the compiler can neither drop nor hoist it.
                        let dst = &mut dst_buf[p.cp_d..p.cp_d + size];
                        dst.copy_from_slice(black_box(&src_buf[p.cp_s..p.cp_s + size]));
                        black_box(dst);
                    }
                };
                for k in 0..OPS.len() {
                    let op = (k + r) % OPS.len();
                    time_loop(warm, &mut || copy(op));
                    times[i][op].push(time_loop(iters, &mut || copy(op)));
                }
            }
        }
        for (p, point_times) in points.iter().zip(times) {
            for (op, t) in OPS.iter().zip(point_times) {
                let shmem_benches::Stats { median, min } = shmem_benches::stats(t);
                println!("{op},{size},{},{},{median:.1},{min:.1}", p.d, p.a);
            }
        }
    }
    Ok(())
}
