//! A counter on PE 0 that every PE increments with a plain get and put, made safe by a
//! distributed lock (`shmem_set_lock` / `shmem_clear_lock`, here an RAII guard). Without the lock
//! increments would be lost; with it the count is exact.
//!
//! Run: `target/release/shmemrun -n 4 target/release/lock_counter --iters 100`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Lock-protected counter")]
struct Args {
    /// Increments per PE.
    #[arg(long, default_value_t = 100)]
    iters: u64,
}

#[symmetric]
static LOCK: Lock = Lock::new();

#[symmetric]
static COUNTER: [u64; 1] = [0; 1];

fn main() -> Result<(), shmem_core::Error> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    for _ in 0..args.iters {
        let _guard = LOCK.lock(); // released (after a quiet) when the guard drops
        let v = shmem!(COUNTER[0, 0]);
        std::thread::yield_now(); // widen the window a lost update would need
        shmem!(COUNTER[0, 0] = v + 1);
    }
    world.barrier_all();
    let total = shmem!(COUNTER[0, 0]);
    let want = n as u64 * args.iters;
    let ok = total == want;
    println!(
        "lock_counter: PE {me} of {n}: counter {total} of {want} {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
