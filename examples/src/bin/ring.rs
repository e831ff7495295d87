//! Ring: every PE passes a token to its right neighbour `n` times with one-sided puts into a
//! `#[symmetric]` static; after `n` steps each token is back home and carries one mark per PE.

use shmem_core::prelude::*;

/// Slot 0: the token's origin PE, slot 1: how many PEs it has visited, slot 2: sum of their numbers.
#[symmetric]
static TOKEN: [u64; 3] = [0; 3];

fn main() -> Result<(), shmem_core::Error> {
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let right = (me + 1) % n;
    TOKEN.local_write(.., &[me as u64, 1, me as u64]);
    world.barrier_all();
    for _ in 0..n {
        let mut t = [0u64; 3];
        TOKEN.local_read(.., &mut t);
        world.barrier_all(); // everyone has read its token before anyone overwrites one
        shmem!(TOKEN[right, ..] = t);
        world.barrier_all();
        let mut got = [0u64; 3];
        TOKEN.local_read(.., &mut got);
        got[1] += 1;
        got[2] += me as u64;
        TOKEN.local_write(.., &got);
    }
    world.barrier_all();
    let mut t = [0u64; 3];
    TOKEN.local_read(.., &mut t);
    let sum: u64 = (0..n as u64).sum();
    // n hops bring the token home; it was marked at the start and after each hop.
    let ok = t[0] == me as u64 && t[1] == n as u64 + 1 && t[2] == sum + me as u64;
    println!(
        "ring: PE {me} of {n}: token {t:?} {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
