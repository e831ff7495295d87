//! Latency of single-element RMA operations between two PEs.
//!
//! PE 0 measures; PE 1 only waits in `barrier_all` (which also progresses UCX, so operations that
//! need the target's progress engine, as over tcp, complete). Every case targets PE 1 and runs
//! once on a symmetric heap array (`world.alloc::<u64>`) and once on a `#[symmetric]` static:
//!
//! - `put 8 B + quiet`: `put` of one `u64`, then `world.quiet()`, per iteration;
//! - `p 8 B + quiet`: `p` of one `u64`, then `world.quiet()`, per iteration;
//! - `get 8 B`: `get` of one `u64` into a local buffer;
//! - `g 8 B`: `g` of one `u64`.
//!
//! After a warm-up, each case runs `--reps` timed loops of `--iters` iterations; the report gives
//! the median and the minimum over the loops of the mean time per operation, in nanoseconds.
//! `benches/c/latency.c` runs the same cases on Open MPI's OpenSHMEM, with the same output format;
//! `benches/run-latency.sh` runs both side by side.
//!
//! Run: `target/release/shmemrun -n 2 target/release/latency [--iters N] [--reps N] [--csv]`
//! (add `UCX_TLS=tcp,self` to the environment to send everything through UCX).

use clap::Parser;
use shmem_core::prelude::*;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    about = "Latency of 8-byte put/p/get/g between two PEs (heap array and symmetric static)"
)]
struct Args {
    /// Operations per timed loop.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    iters: u64,
    /// Timed loops per case; the median and minimum are taken over these.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Print `case,variant,median_ns,min_ns` lines instead of a table.
    #[arg(long)]
    csv: bool,
}

/// Elements of the target objects (only element 0 is used; the rest keeps it off shared lines).
const LEN: usize = 8;
/// The PE that is written to and read from.
const TARGET: usize = 1;
/// Value written at the end to check that puts land on the target.
const CHECK: u64 = 0x5eed_cafe;

#[symmetric]
static STATIC_BUF: [u64; LEN] = [0; LEN];

/// Median and minimum of the per-loop means, ns per operation.
struct Stats {
    median: f64,
    min: f64,
}

/// Runs `op(i)` for a warm-up, then `reps` timed loops of `iters` calls each.
fn measure(iters: u64, reps: u64, mut op: impl FnMut(u64)) -> Stats {
    for i in 0..iters.div_ceil(4).max(1000) {
        op(i);
    }
    let mut per_op: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            for i in 0..iters {
                op(black_box(i));
            }
            start.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    per_op.sort_by(f64::total_cmp);
    let n = per_op.len();
    let median = if n % 2 == 1 {
        per_op[n / 2]
    } else {
        (per_op[n / 2 - 1] + per_op[n / 2]) / 2.0
    };
    Stats {
        median,
        min: per_op[0],
    }
}

/// Measures the four cases on `a`, appending `(case, variant, stats)` rows.
fn run_cases<A: SymmetricArray<u64> + ?Sized>(
    world: &World,
    a: &A,
    variant: &'static str,
    args: &Args,
    rows: &mut Vec<(&'static str, &'static str, Stats)>,
) {
    let (iters, reps) = (args.iters, args.reps);
    let put = measure(iters, reps, |i| {
        a.put(TARGET, 0..1, black_box(&[i]));
        world.quiet();
    });
    rows.push(("put 8 B + quiet", variant, put));
    let p = measure(iters, reps, |i| {
        a.p(TARGET, 0, black_box(i));
        world.quiet();
    });
    rows.push(("p 8 B + quiet", variant, p));
    let mut buf = [0u64; 1];
    let get = measure(iters, reps, |_| {
        a.get(TARGET, 0..1, black_box(&mut buf));
        black_box(&buf);
    });
    rows.push(("get 8 B", variant, get));
    let g = measure(iters, reps, |_| {
        black_box(a.g(TARGET, 0));
    });
    rows.push(("g 8 B", variant, g));
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("latency: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let world = shmem_core::init().map_err(|e| format!("shmem init failed: {e}"))?;
    if world.n_pes() != 2 {
        return Err(format!(
            "needs exactly 2 PEs, got {}; run it as `target/release/shmemrun -n 2 target/release/latency`",
            world.n_pes()
        ));
    }
    let heap = world
        .try_alloc::<u64>(LEN)
        .map_err(|e| format!("symmetric heap allocation failed: {e}"))?;
    world.barrier_all();

    if world.my_pe() == 0 {
        let mut rows = Vec::new();
        run_cases(&world, &heap, "heap", args, &mut rows);
        run_cases(&world, &STATIC_BUF, "static", args, &mut rows);
        if args.csv {
            println!("case,variant,median_ns,min_ns");
            for (case, variant, s) in &rows {
                println!("{case},{variant},{:.1},{:.1}", s.median, s.min);
            }
        } else {
            println!(
                "{:<16} {:<7} {:>10} {:>10}",
                "case", "variant", "median_ns", "min_ns"
            );
            for (case, variant, s) in &rows {
                println!("{case:<16} {variant:<7} {:>10.1} {:>10.1}", s.median, s.min);
            }
        }
    }
    // PE 1 waits here (progressing UCX) for the whole measurement.
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
    }
    Ok(())
}
