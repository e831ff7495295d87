//! 2-D heat diffusion (Jacobi iteration) on a grid split into column blocks across PEs.
//!
//! Each PE owns a block of columns plus one ghost column on each side. Every iteration it sends
//! its first and last owned columns into the ghost columns of its neighbours' symmetric grid with
//! strided puts (`shmem!(ghosts[pe, a..b;row] = cur[c..d;row])`: one element per row, row length
//! apart on both sides), waits at a barrier, and updates its
//! block. At the end PE 0 gathers the grid, recomputes it on one PE and compares.
//!
//! Run: `target/release/shmemrun -n 4 target/release/heat --nx 512 --ny 512 --iters 500`

use clap::Parser;
use shmem_core::prelude::*;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "2-D heat diffusion with halo exchange by strided puts")]
struct Args {
    /// Grid columns, boundary included.
    #[arg(long, default_value_t = 512)]
    nx: usize,
    /// Grid rows, boundary included.
    #[arg(long, default_value_t = 512)]
    ny: usize,
    /// Jacobi iterations.
    #[arg(long, default_value_t = 500)]
    iters: usize,
}

/// Temperature of the top edge; the other edges are held at 0.
const HOT: f64 = 100.0;

/// First global column owned by PE `pe` and how many it owns (columns spread as evenly as possible).
fn block(nx: usize, n_pes: usize, pe: usize) -> (usize, usize) {
    let base = nx / n_pes;
    let extra = nx % n_pes;
    let start = pe * base + pe.min(extra);
    (start, base + usize::from(pe < extra))
}

/// One Jacobi sweep over local columns `1..=w` of a grid with row length `row` (ghosts at 0 and
/// w+1). `c0` is the global index of local column 1; global boundary cells are not updated.
fn sweep(cur: &[f64], next: &mut [f64], ny: usize, row: usize, w: usize, c0: usize, nx: usize) {
    for i in 1..ny - 1 {
        for j in 1..=w {
            let gj = c0 + j - 1;
            let k = i * row + j;
            next[k] = if gj == 0 || gj == nx - 1 {
                cur[k]
            } else {
                0.25 * (cur[k - row] + cur[k + row] + cur[k - 1] + cur[k + 1])
            };
        }
    }
}

/// The whole computation on one PE, for the check.
fn serial(nx: usize, ny: usize, iters: usize) -> Vec<f64> {
    let row = nx + 2;
    let mut cur = vec![0.0; ny * row];
    cur[1..=nx].fill(HOT);
    let mut next = cur.clone();
    for _ in 0..iters {
        sweep(&cur, &mut next, ny, row, nx, 0, nx);
        std::mem::swap(&mut cur, &mut next);
    }
    (0..ny)
        .flat_map(|i| cur[i * row + 1..i * row + 1 + nx].to_vec())
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let (nx, ny, iters) = (args.nx, args.ny, args.iters);
    if nx < n || ny < 3 {
        return Err(
            format!("grid {nx}x{ny} is too small for {n} PEs (need nx >= PEs, ny >= 3)").into(),
        );
    }
    let (c0, w) = block(nx, n, me);
    let wmax = block(nx, n, 0).1;
    let row = wmax + 2; // the same row length on every PE: symmetric arrays have one size
    // Two copies of the grid's ghost space, used on alternate iterations, so a fast neighbour
    // writing the next halo never overwrites one this PE has not read yet.
    let ghosts = world.alloc::<f64>(2 * ny * row);
    let gathered = world.alloc::<f64>(nx * ny);

    let mut cur = vec![0.0; ny * row];
    cur[1..=w].fill(HOT);
    let mut next = cur.clone();
    let left = (me > 0).then(|| me - 1);
    let right = (me + 1 < n).then_some(me + 1);
    // A column of the grid is every `row`-th element of a span of this many elements.
    let span = (ny - 1) * row + 1;

    world.barrier_all();
    let t0 = Instant::now();
    for it in 0..iters {
        let half = (it % 2) * ny * row;
        if let Some(l) = left {
            let lw = block(nx, n, l).1;
            // My first column becomes the left neighbour's right ghost column (local column lw+1):
            // a strided put, one element per row, both sides `row` elements apart.
            let g = half + lw + 1;
            shmem!(ghosts[l, g..g + span;row] = cur[1..1 + span;row]);
        }
        if let Some(r) = right {
            // My last column becomes the right neighbour's left ghost column (local column 0).
            shmem!(ghosts[r, half..half + span;row] = cur[w..w + span;row]);
        }
        world.barrier_all();
        // Pull the ghosts that arrived into the working grid (a strided get from this PE itself).
        if left.is_some() {
            shmem!(cur[0..span;row] = ghosts[me, half..half + span;row]);
        }
        if right.is_some() {
            let (g, c) = (half + w + 1, w + 1);
            shmem!(cur[c..c + span;row] = ghosts[me, g..g + span;row]);
        }
        sweep(&cur, &mut next, ny, row, w, c0, nx);
        std::mem::swap(&mut cur, &mut next);
    }
    world.barrier_all();
    let elapsed = t0.elapsed();

    // Gather every block into PE 0, one contiguous put per row.
    for i in 0..ny {
        gathered.put(
            0,
            i * nx + c0..i * nx + c0 + w,
            &cur[i * row + 1..i * row + 1 + w],
        );
    }
    world.barrier_all();
    if me == 0 {
        let mut got = vec![0.0; nx * ny];
        gathered.local_read(.., &mut got);
        let want = serial(nx, ny, iters);
        let max_err = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let ok = max_err <= 1e-12;
        println!(
            "heat: {nx}x{ny} grid, {iters} iterations on {n} PEs: {:.3} s; check against 1 PE: {} (max error {max_err:.3e})",
            elapsed.as_secs_f64(),
            if ok { "OK" } else { "FAILED" }
        );
        if !ok {
            std::process::exit(1);
        }
    }
    Ok(())
}
