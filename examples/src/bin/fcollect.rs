//! Fixed-size collect: every PE contributes the same number of elements; `team.fcollect`
//! concatenates them in PE order into a symmetric heap array on every PE, and every PE checks it.
//!
//! Run: `target/release/shmemrun -n 4 target/release/fcollect --count 16`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Fixed-size collect (all-gather) over the world team")]
struct Args {
    /// Elements contributed by each PE.
    #[arg(long, default_value_t = 16)]
    count: usize,
}

/// Element `k` of PE `pe`'s contribution.
fn value(pe: usize, k: usize) -> i64 {
    -((pe * 1_000_000 + k) as i64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();
    let k = args.count;
    let dest = world.alloc::<i64>(n * k);

    let mine: Vec<i64> = (0..k).map(|i| value(me, i)).collect();
    team.fcollect(&dest, &mine);

    let want: Vec<i64> = (0..n)
        .flat_map(|pe| (0..k).map(move |i| value(pe, i)))
        .collect();
    let mut got = vec![0i64; n * k];
    dest.local_read(.., &mut got);
    let ok = got == want;
    println!(
        "fcollect: PE {me} of {n}: gathered {n} x {k} elements {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
