//! Race for a flag: in each round every PE tries to claim a word on PE 0 with an atomic
//! compare-and-swap from 0 to its own number + 1 (`shmem!(W[0, r].compare_swap(0, me + 1))`).
//! Exactly one PE finds 0 there and wins; it counts its win with an atomic `fetch_inc` on PE 0.
//! A barrier starts every round, so the PEs really race. After a barrier every PE reads the winners and the win counts back from PE 0 and checks that
//! every round had exactly one winner, and that it won exactly the rounds it thinks it won.
//!
//! Run: `target/release/shmemrun -n 8 target/release/race_winner --rounds 10`

use clap::Parser;
use shmem_core::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Atomic compare-and-swap race: one winner per round")]
struct Args {
    /// Independent races (one word each on PE 0).
    #[arg(long, default_value_t = 10)]
    rounds: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let rounds = args.rounds;
    // Used on PE 0 only: the winner of each round (PE number + 1, 0 = unclaimed) and how many
    // PEs believe they won it.
    let winner = world.alloc::<u64>(rounds);
    let wins = world.alloc::<u64>(rounds);

    let mut won = vec![false; rounds];
    let mut counted_first = true; // each of my wins was the first one counted in its round
    for (r, won) in won.iter_mut().enumerate() {
        world.barrier_all(); // everyone starts the round together
        let old = shmem!(winner[0, r].compare_swap(0, me as u64 + 1));
        if old == 0 {
            *won = true;
            counted_first &= shmem!(wins[0, r].fetch_inc()) == 0;
        }
    }
    world.barrier_all(); // every attempt is complete

    let mut winners = vec![0u64; rounds];
    let mut counts = vec![0u64; rounds];
    shmem!(winners = winner[0, ..]; counts = wins[0, ..]);
    let ok = counted_first
        && (0..rounds).all(|r| {
            counts[r] == 1
                && (1..=n as u64).contains(&winners[r])
                && won[r] == (winners[r] == me as u64 + 1)
        });
    let mine = won.iter().filter(|&&w| w).count();
    let first = winners.first().map_or(String::from("none"), |w| {
        format!("PE {}", w.wrapping_sub(1))
    });
    println!(
        "race_winner: PE {me} of {n}: won {mine} of {rounds} rounds, round 0 won by {first}, one winner in every round {}",
        if ok { "OK" } else { "FAILED" }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
