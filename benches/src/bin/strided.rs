//! Latency of strided transfers against the alternatives they replace: PE 0 measures against
//! PE 1 while the other PEs wait in `barrier_all`. Run with `UCX_TLS=tcp,self` to send them
//! through UCX: `shmemrun -n 2 target/release/strided [iters] [reps]`.
//!
//! Rows (median and minimum over `reps` loops of the mean time per operation, in µs):
//! `iput N x stride S + quiet` and `iget N x stride S` (the runtime's strided path), and for
//! comparison `N puts + quiet` (one blocking put per element, as iput did before),
//! `N put_nbi + quiet` (pipelined non-blocking puts completed by one quiet), `N get_nbi + quiet`
//! (as iget did before) and `put 8 B + quiet`.

use shmem_core::prelude::*;
use std::hint::black_box;
use std::time::Instant;

fn measure(world: &World, iters: usize, reps: usize, mut op: impl FnMut()) -> (f64, f64) {
    for _ in 0..iters.div_ceil(10) {
        op();
    }
    let mut loops = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..iters {
            op();
        }
        loops.push(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    world.quiet();
    loops.sort_by(f64::total_cmp);
    (loops[reps / 2], loops[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let iters: usize = args.next().map_or(Ok(200), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(7), |a| a.parse())?;
    let world = shmem_core::init()?;
    if world.n_pes() < 2 {
        return Err("run with 2 or more PEs".into());
    }
    let a = world.alloc::<u64>(512 * 130);
    world.barrier_all();
    if world.my_pe() == 0 {
        let mut rows: Vec<(String, (f64, f64))> = Vec::new();
        let one = [7u64];
        rows.push((
            "put 8 B + quiet".into(),
            measure(&world, iters, reps, || {
                a.put(1, 0..1, black_box(&one));
                world.quiet();
            }),
        ));
        for (n, stride) in [(16usize, 2usize), (512, 130)] {
            let src: Vec<u64> = (0..n as u64).collect();
            let mut dst = vec![0u64; n];
            let span = (n - 1) * stride + 1;
            rows.push((
                format!("iput {n} x stride {stride} + quiet"),
                measure(&world, iters, reps, || {
                    a.iput(1, 0..span, stride, black_box(&src), 1);
                    world.quiet();
                }),
            ));
            rows.push((
                format!("iget {n} x stride {stride}"),
                measure(&world, iters, reps, || {
                    a.iget(1, 0..span, stride, black_box(&mut dst), 1);
                }),
            ));
            rows.push((
                format!("{n} puts + quiet (old iput)"),
                measure(&world, iters, reps, || {
                    for k in 0..n {
                        a.put(1, k * stride..k * stride + 1, &src[k..k + 1]);
                    }
                    world.quiet();
                }),
            ));
            rows.push((
                format!("{n} put_nbi + quiet"),
                measure(&world, iters, reps, || {
                    world.nbi(|s| {
                        for k in 0..n {
                            s.put(&a, 1, k * stride..k * stride + 1, &src[k..k + 1]);
                        }
                    });
                }),
            ));
            rows.push((
                format!("{n} get_nbi + quiet (old iget)"),
                measure(&world, iters, reps, || {
                    world.nbi(|s| {
                        for (k, d) in dst.chunks_mut(1).enumerate() {
                            s.get(&a, 1, k * stride..k * stride + 1, d);
                        }
                    });
                }),
            ));
        }
        println!("{:<36} {:>12} {:>12}", "case", "median_us", "min_us");
        for (name, (med, min)) in rows {
            println!("{name:<36} {med:>12.2} {min:>12.2}");
        }
    }
    world.barrier_all();
    Ok(())
}
