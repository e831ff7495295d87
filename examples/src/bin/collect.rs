//! Collect: PE `p` contributes `p + 1` elements; `team.collect` concatenates the contributions in
//! PE order into a symmetric heap array on every PE (lengths may differ, unlike `fcollect`), and
//! every PE checks the concatenation.
//!
//! Run: `target/release/shmemrun -n 4 target/release/collect`

use shmem_core::prelude::*;

/// Element `k` of PE `pe`'s contribution.
fn value(pe: usize, k: usize) -> u32 {
    (pe * 1000 + k) as u32
}

fn main() -> Result<(), shmem_core::Error> {
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();
    // 1 + 2 + ... + n elements in all.
    let dest = world.alloc::<u32>(n * (n + 1) / 2);

    let mine: Vec<u32> = (0..=me).map(|k| value(me, k)).collect();
    let total = team.collect(&dest, &mine);

    let want: Vec<u32> = (0..n)
        .flat_map(|pe| (0..=pe).map(move |k| value(pe, k)))
        .collect();
    let mut got = vec![0u32; dest.len()];
    dest.local_read(.., &mut got);
    let ok = total == want.len() && got == want;
    println!(
        "collect: PE {me} of {n}: contributed {} elements, collected {total} {}",
        mine.len(),
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
