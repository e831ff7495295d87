//! Rotate by get: every PE fills its own copy of a `#[symmetric]` static array, and after a
//! barrier reads its left neighbour's copy with a one-sided get (`shmem!(dst = S[pe, ..])`); the
//! neighbour takes no part in the transfer.
//!
//! Run: `target/release/shmemrun -n 4 target/release/rotget`

use shmem_core::prelude::*;

const LEN: usize = 8;

/// Element `k` of PE `p`'s copy is `value(p, k)`.
#[symmetric]
static VALUES: [u64; LEN] = [0; LEN];

fn value(pe: usize, k: usize) -> u64 {
    (pe * 100 + k) as u64
}

fn main() -> Result<(), shmem_core::Error> {
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let left = (me + n - 1) % n;

    let mine: Vec<u64> = (0..LEN).map(|k| value(me, k)).collect();
    VALUES.local_write(.., &mine);
    world.barrier_all(); // every PE has filled its copy before anyone reads

    let mut got = [0u64; LEN];
    shmem!(got = VALUES[left, ..]);
    let want: Vec<u64> = (0..LEN).map(|k| value(left, k)).collect();
    let ok = got[..] == want[..];
    println!(
        "rotget: PE {me} of {n}: got {got:?} from the left neighbour PE {left} {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
