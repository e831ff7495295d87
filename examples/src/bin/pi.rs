//! Monte Carlo estimate of pi: every PE draws points in the unit square with its own
//! deterministic xorshift generator (seeded by its PE number), counts those inside the quarter
//! circle, and a sum reduction over the world team (`team.sum_reduce`) adds up the counts on
//! every PE. PE 0 prints the estimate `4 * hits / points` and checks it against pi.
//!
//! Run: `target/release/shmemrun -n 4 target/release/pi --points 1000000`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Monte Carlo pi with a sum reduction")]
struct Args {
    /// Points drawn by each PE.
    #[arg(long, default_value_t = 200_000)]
    points: u64,
    /// Largest accepted distance between the estimate and pi.
    #[arg(long, default_value_t = 0.05)]
    tolerance: f64,
}

/// xorshift64 (Marsaglia): a small, fast, deterministic generator.
struct XorShift(u64);

impl XorShift {
    /// A generator for PE `pe`: distinct, nonzero seeds spread over the 64 bits.
    fn for_pe(pe: usize) -> XorShift {
        let mut g = XorShift((pe as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // Let the seed's bits mix before the first draw.
        for _ in 0..8 {
            g.next();
        }
        g
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in [0, 1) from the top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();

    let mut rng = XorShift::for_pe(me);
    let mut hits = 0u64;
    for _ in 0..args.points {
        let (x, y) = (rng.unit(), rng.unit());
        if x * x + y * y < 1.0 {
            hits += 1;
        }
    }

    // [hits, points], summed over every PE into `totals` on every PE.
    let totals = world.alloc::<u64>(2);
    team.sum_reduce(&totals, &[hits, args.points]);
    let (all_hits, all_points) = (totals.local_get(0), totals.local_get(1));
    // Every PE got the same sums; the point count is known in advance.
    let sums_ok = all_points == args.points * n as u64 && all_hits <= all_points;
    if !sums_ok {
        println!("pi: PE {me} of {n}: wrong sums: {all_hits} hits of {all_points} points FAILED");
        std::process::exit(1);
    }
    if me == 0 {
        let estimate = 4.0 * all_hits as f64 / all_points as f64;
        let error = (estimate - std::f64::consts::PI).abs();
        let ok = error < args.tolerance;
        println!(
            "pi: {all_points} points on {n} PEs: estimate {estimate:.6}, error {error:.6} {}",
            if ok { "OK" } else { "FAILED" }
        );
        if !ok {
            std::process::exit(1);
        }
    }
    Ok(())
}
