//! Rotate by put: every PE writes its number into a `#[symmetric]` static on its right neighbour
//! (`shmem!(S[pe] = v)`, a one-sided `shmem_p`), waits at a barrier, and checks that its own copy
//! now holds its left neighbour's number.
//!
//! Run: `target/release/shmemrun -n 4 target/release/rotput`

use shmem_core::prelude::*;

/// Written by the left neighbour; starts at a value no PE sends.
#[symmetric]
static FROM_LEFT: u64 = u64::MAX;

fn main() -> Result<(), shmem_core::Error> {
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);

    shmem!(FROM_LEFT[right] = me as u64);
    world.barrier_all(); // completes every put and waits for all of them

    let got = FROM_LEFT.local();
    let ok = got == left as u64;
    println!(
        "rotput: PE {me} of {n}: got {got} from the left neighbour PE {left} {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
