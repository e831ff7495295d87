//! Producer/consumer pipeline with signals: PE `i` streams `--rounds` rounds of data to PE `i + 1`
//! (a ring) with `put_signal` (`shmem!(DATA[pe, ..] = src => READY += 1)`): the put, then an add
//! of 1 to the consumer's `READY` signal once the data has arrived. The consumer waits with
//! `READY.signal().wait_until(Cmp::Ge, round + 1)` and checks that round's data.
//!
//! Rounds go through `SLOTS` buffer slots in turn. Before a producer reuses a slot it waits until
//! the consumer has acknowledged the round that last used it (an atomic add on the producer's
//! `ACK` word), so no round is overwritten before it has been checked.
//!
//! Run: `target/release/shmemrun -n 4 target/release/pipeline --rounds 1000 --len 256`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "put_signal producer/consumer ring")]
struct Args {
    /// Rounds each PE sends.
    #[arg(long, default_value_t = 200)]
    rounds: u64,
    /// Elements per round.
    #[arg(long, default_value_t = 64)]
    len: usize,
}

/// Buffer slots per consumer (double buffering).
const SLOTS: usize = 2;

/// Rounds received from the left neighbour (raised by its `put_signal`s).
#[symmetric]
static READY: u64 = 0;
/// Rounds the right neighbour has checked (raised by its atomic adds).
#[symmetric]
static ACK: u64 = 0;

/// Element `k` of round `round` sent by PE `from`.
fn value(from: usize, round: u64, k: usize) -> u64 {
    ((from as u64) << 40) | (round << 16) | k as u64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let len = args.len;
    let data = world.alloc::<u64>(SLOTS * len);

    let mut bad_rounds = 0u64;
    let mut got = vec![0u64; len];
    for round in 0..args.rounds {
        let slot = (round as usize % SLOTS) * len;
        // Produce: wait until the consumer has checked the round that last used this slot.
        if round >= SLOTS as u64 {
            ACK.signal().wait_until(Cmp::Ge, round + 1 - SLOTS as u64);
        }
        let src: Vec<u64> = (0..len).map(|k| value(me, round, k)).collect();
        shmem!(data[right, slot..slot + len] = src => READY += 1);

        // Consume: the left neighbour's data for this round, then acknowledge it.
        READY.signal().wait_until(Cmp::Ge, round + 1);
        data.local_read(slot..slot + len, &mut got);
        if (0..len).any(|k| got[k] != value(left, round, k)) {
            bad_rounds += 1;
        }
        shmem!(ACK[left] += 1);
    }
    world.barrier_all();

    let received = READY.local();
    let ok = bad_rounds == 0 && received == args.rounds && ACK.local() == args.rounds;
    println!(
        "pipeline: PE {me} of {n}: received {received} rounds of {len} elements from PE {left}, {bad_rounds} wrong {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
