//! Benchmarks live in `src/bin`; this library holds what several of them share.

use std::process::ExitCode;

/// Starts the runtime for a benchmark in which PE 0 measures against PE 1: the `World`, or a
/// message that says how to run the benchmark `name` when the job has fewer than 2 PEs.
pub fn init_two_pes(name: &str) -> Result<shmem_core::World, String> {
    let world = shmem_core::init().map_err(|e| format!("shmem init failed: {e}"))?;
    if world.n_pes() < 2 {
        return Err(format!(
            "needs at least 2 PEs, got {}; run it as `target/release/shmemrun -n 2 target/release/{name}`",
            world.n_pes()
        ));
    }
    Ok(world)
}

/// The exit status of benchmark `name`: success, or its error printed to stderr and failure.
pub fn exit_status(name: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{name}: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// The median and the minimum of a set of per-loop timings (ns per operation).
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// The median.
    pub median: f64,
    /// The minimum.
    pub min: f64,
}

impl Stats {
    /// Divides both figures by `k` (operations per measured call).
    pub fn per(self, k: f64) -> Stats {
        Stats {
            median: self.median / k,
            min: self.min / k,
        }
    }
}

/// The median and minimum of `v` (not empty).
pub fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Stats { median, min: v[0] }
}

/// OSU-style timing of a collective `op(i)`, called by every PE: `warm_up` untimed iterations,
/// then `reps` loops of `iters` iterations, each an untimed `barrier_all` and the timed call.
/// Each PE's mean over a loop goes into `means[my_pe]` on PE 0; a loop's figure is the average
/// over the PEs on PE 0, and the PE's own mean elsewhere. Returns the loops' figures.
pub fn collective_loops(
    world: &shmem_core::World,
    means: &shmem_core::SymArray<'_, f64>,
    warm_up: u64,
    iters: u64,
    reps: u64,
    op: impl FnMut(u64),
) -> Vec<f64> {
    collective_loops_after(world, means, (warm_up, iters, reps), |_| {}, op)
}

/// [`collective_loops`] with `prep(i)` run untimed before each iteration's `barrier_all`
/// (e.g. a root that writes what it broadcasts next, as a program would).
pub fn collective_loops_after(
    world: &shmem_core::World,
    means: &shmem_core::SymArray<'_, f64>,
    (warm_up, iters, reps): (u64, u64, u64),
    mut prep: impl FnMut(u64),
    mut op: impl FnMut(u64),
) -> Vec<f64> {
    use shmem_core::SymmetricArray;
    use std::hint::black_box;
    use std::time::{Duration, Instant};
    let (me, n) = (world.my_pe(), world.n_pes());
    for i in 0..warm_up {
        prep(i);
        world.barrier_all();
        op(i);
    }
    let mut figures = Vec::new();
    for _ in 0..reps {
        let mut spent = Duration::ZERO;
        for i in 0..iters {
            prep(i);
            world.barrier_all();
            let start = Instant::now();
            op(black_box(i));
            spent += start.elapsed();
        }
        let mean = spent.as_nanos() as f64 / iters as f64;
        means.p(0, me, mean);
        // Completes the put and lets PE 0 read every PE's mean. No PE writes `means` again
        // before PE 0 has passed the first barrier of the next loop.
        world.barrier_all();
        figures.push(if me == 0 {
            (0..n).map(|pe| means.local_get(pe)).sum::<f64>() / n as f64
        } else {
            mean
        });
    }
    figures
}
