//! Broadcast: PE 0 of the world team broadcasts an array into a symmetric heap array on every PE
//! (`team.broadcast`, a binomial tree); every PE checks what it received.
//!
//! Run: `target/release/shmemrun -n 4 target/release/broadcast --len 1000`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Team broadcast of an array from PE 0")]
struct Args {
    /// Elements to broadcast.
    #[arg(long, default_value_t = 1000)]
    len: usize,
}

/// The data PE 0 sends.
fn payload(len: usize) -> Vec<u64> {
    (0..len as u64).map(|i| i * i + 7).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();
    let dest = world.alloc::<u64>(args.len);

    // Only the root's source is read; the others pass a buffer of the same length.
    let source = if me == 0 {
        payload(args.len)
    } else {
        vec![0; args.len]
    };
    team.broadcast(&dest, &source, 0);

    let mut got = vec![0u64; args.len];
    dest.local_read(.., &mut got);
    let ok = got == payload(args.len);
    println!(
        "broadcast: PE {me} of {n}: received {} elements from PE 0 {}",
        args.len,
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
