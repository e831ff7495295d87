//! `shmem!` against the hand-written runtime call, measured side by side in one run.
//!
//! Both forms of each case run in alternating timed loops (so machine noise hits both alike) on
//! the direct path to this PE's own heap (one PE, no launcher needed: the point is the CPU cost of
//! the expansion, not the wire). Prints the median time per operation of each form and their
//! ratio (of the medians, and of the fastest loops). `--only dsl|call --iters N` runs just one
//! form, for instruction counts under callgrind (`benches/dsl-callgrind.sh`).
//! `benches/dsl-overhead.sh` builds it with aligned loops and runs it; `benches/run.sh` too.

use clap::{Parser, ValueEnum};
use shmem_core::prelude::*;
use std::hint::black_box;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Form {
    Dsl,
    Call,
}

#[derive(Parser, Debug)]
#[command(about = "shmem! versus the hand-written runtime call")]
struct Args {
    /// Operations per timed loop (0 is allowed with `--only`: the callgrind baseline).
    #[arg(long, default_value_t = 200_000)]
    iters: u64,
    /// Timed loops per form and case.
    #[arg(long, default_value_t = 31, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Run only this form once (for callgrind), without timing.
    #[arg(long, value_enum)]
    only: Option<Form>,
    /// With `--only`: run just the case with this number (0-based), not all of them.
    #[arg(long)]
    case: Option<usize>,
}

#[symmetric]
static STATIC: [u64; 64] = [0; 64];

type Case = (&'static str, fn(Form, u64, usize));

/// The cases: each runs `iters` operations of the given form on this PE (`pe`).
const CASES: &[Case] = &[
    ("put 8 x u64 (static)", |f, n, pe| {
        let src = [7u64; 8];
        for i in 0..n {
            let src = black_box(&src);
            match f {
                Form::Dsl => shmem!(STATIC[pe, 8..16] = src),
                Form::Call => STATIC.put(pe, 8..16, src),
            }
            black_box(i);
        }
    }),
    ("p u64 (static)", |f, n, pe| {
        for i in 0..n {
            match f {
                Form::Dsl => shmem!(STATIC[pe, 3] = black_box(i)),
                Form::Call => STATIC.p(pe, 3, black_box(i)),
            }
        }
    }),
    ("g u64 (static)", |f, n, pe| {
        for _ in 0..n {
            let v = match f {
                Form::Dsl => shmem!(STATIC[pe, 5]),
                Form::Call => STATIC.g(pe, 5),
            };
            black_box(v);
        }
    }),
    ("iput 16 x stride 2 (static)", |f, n, pe| {
        let src = [3u64; 16];
        for i in 0..n {
            let src = black_box(&src);
            match f {
                Form::Dsl => shmem!(STATIC[pe, 32..64;2] = src),
                Form::Call => STATIC.iput(pe, 32..64, 2, src, 1),
            }
            black_box(i);
        }
    }),
    ("atomic add u64 (static)", |f, n, pe| {
        for i in 0..n {
            match f {
                Form::Dsl => shmem!(STATIC[pe, 1] += black_box(i)),
                Form::Call => STATIC.at(pe, 1).add(black_box(i)),
            }
        }
    }),
];

fn time(case: fn(Form, u64, usize), form: Form, iters: u64, pe: usize) -> f64 {
    let t = Instant::now();
    case(form, iters, pe);
    t.elapsed().as_nanos() as f64 / iters as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), shmem_core::Error> {
    let args = Args::parse();
    if args.only.is_none() && args.iters == 0 {
        eprintln!("dsl_overhead: --iters must be at least 1 when timing");
        std::process::exit(2);
    }
    let world = shmem_core::init()?;
    let pe = black_box(world.my_pe());
    if let Some(form) = args.only {
        for (i, (_, case)) in CASES.iter().enumerate() {
            if args.case.is_none_or(|c| c == i) {
                case(form, args.iters, pe);
            }
        }
        return Ok(());
    }
    println!(
        "{:<30} {:>10} {:>10} {:>8} {:>10}",
        "case", "dsl ns", "call ns", "ratio", "min ratio"
    );
    for (name, case) in CASES {
        // Warm-up, then alternate the forms loop by loop.
        case(Form::Dsl, args.iters / 10, pe);
        case(Form::Call, args.iters / 10, pe);
        let (mut dsl, mut call) = (Vec::new(), Vec::new());
        for r in 0..args.reps {
            let order = if r % 2 == 0 {
                [Form::Dsl, Form::Call]
            } else {
                [Form::Call, Form::Dsl]
            };
            for form in order {
                let ns = time(*case, form, args.iters, pe);
                match form {
                    Form::Dsl => dsl.push(ns),
                    Form::Call => call.push(ns),
                }
            }
        }
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let min_ratio = min(&dsl) / min(&call);
        let (d, c) = (median(&mut dsl), median(&mut call));
        println!(
            "{name:<30} {d:>10.2} {c:>10.2} {:>8.3} {min_ratio:>10.3}",
            d / c
        );
    }
    Ok(())
}
