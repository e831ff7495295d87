//! All-to-all: every PE's source holds one block of `--block` elements for each PE; block `j`
//! goes to PE `j`, where it lands at block `me` of a symmetric heap array (`team.alltoall`, a
//! transpose of the PE-by-PE matrix of blocks). Every PE checks that block `j` of what it
//! received came from PE `j` and was meant for it.
//!
//! Run: `target/release/shmemrun -n 4 target/release/alltoall --block 8`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "All-to-all exchange of blocks over the world team")]
struct Args {
    /// Elements per block (one block per pair of PEs).
    #[arg(long, default_value_t = 8)]
    block: usize,
}

/// Element `i` of the block that PE `from` sends to PE `to`.
fn value(from: usize, to: usize, i: usize) -> u64 {
    (from * 1_000_000 + to * 1000 + i) as u64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();
    let k = args.block;
    let dest = world.alloc::<u64>(n * k);

    let source: Vec<u64> = (0..n)
        .flat_map(|to| (0..k).map(move |i| value(me, to, i)))
        .collect();
    team.alltoall(&dest, &source);

    let want: Vec<u64> = (0..n)
        .flat_map(|from| (0..k).map(move |i| value(from, me, i)))
        .collect();
    let mut got = vec![0u64; n * k];
    dest.local_read(.., &mut got);
    let ok = got == want;
    println!(
        "alltoall: PE {me} of {n}: received {n} blocks of {k} elements {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
