//! A soak job: every family of operations in a loop, every result checked, for as long as asked,
//! with a report per PE at the start and every `--report` seconds of what the process and the
//! runtime hold (private and shared RSS, open descriptors, heap free space and its fragmentation, teams, contexts).
//! At the end each PE checks that it holds what it held after the first round (the first round
//! makes the endpoints and the allocator's own arenas): descriptors, heap free space, free
//! ranges, teams and contexts exactly, private RSS (`RssAnon`) within `--rss-slack-kb`.
//!
//! ```sh
//! target/release/shmemrun -n 4 target/release/soak --minutes 60
//! UCX_TLS=tcp,self target/release/shmemrun -n 4 target/release/soak --minutes 60
//! ```
//!
//! `scripts/soak.sh` runs it on both paths.

use std::time::{Duration, Instant};

use clap::Parser;
use shmem_core::Usage;
use shmem_core::prelude::*;

#[symmetric]
static FLAG: u64 = 0;

#[symmetric]
static LOCKED_COUNT: u64 = 0;

#[symmetric]
static TICKETS: u64 = 0;

#[symmetric]
static LOCK: Lock = Lock::new();

/// The command line.
#[derive(Parser, Debug)]
#[command(about = "Every family of operations in a loop, checked, watching for leaks")]
struct Args {
    /// How long to run, in minutes (fractions allowed).
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// Seconds between reports.
    #[arg(long, default_value_t = 60)]
    report: u64,
    /// The families each round does, comma-separated (for finding which one leaks): rma,
    /// strided, atomics, signals, locks, coll, team, ctx, alloc.
    #[arg(
        long,
        default_value = "rma,strided,atomics,signals,locks,coll,team,ctx,alloc"
    )]
    families: String,
    /// How much private RSS (`RssAnon`) may grow between the first round and the end, in KiB.
    #[arg(long, default_value_t = 2048)]
    rss_slack_kb: u64,
}

/// One PE's view of what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    /// Private memory (`RssAnon`): what a leak of the library or the program grows.
    rss_kb: u64,
    /// Shared memory touched (`RssShmem`): heap pages of this PE and its node's peers that
    /// were ever written, which grows until the allocator has used every offset it hands out.
    shmem_kb: u64,
    fds: usize,
    usage: Usage,
}

fn held(world: &World) -> Held {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    Held {
        rss_kb: kb("RssAnon:"),
        shmem_kb: kb("RssShmem:"),
        fds,
        usage: world.usage(),
    }
}

fn report(me: usize, t: Duration, round: u64, h: &Held) {
    let u = &h.usage;
    println!(
        "SOAK pe={me} t={} round={round} rss_anon_kb={} rss_shmem_kb={} fds={} heap_free={} \
         heap_free_ranges={} teams={} contexts={}",
        t.as_secs(),
        h.rss_kb,
        h.shmem_kb,
        h.fds,
        u.heap_free,
        u.heap_free_ranges,
        u.teams,
        u.contexts
    );
}

/// The families of operations a round does (`--families`).
struct Families(Vec<String>);

impl Families {
    fn has(&self, family: &str) -> bool {
        self.0.iter().any(|f| f == family)
    }
}

/// A small deterministic generator, the same on every PE for the same seed (collective sizes
/// must agree).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One round of every family in `on`; `round` counts from 1.
fn round(world: &World, round: u64, on: &Families) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let mut rng = Lcg(round);

    // Allocations of random sizes, freed in random order (the same on every PE).
    let count = if on.has("alloc") {
        1 + rng.below(6) as usize
    } else {
        0
    };
    let mut blocks: Vec<SymArray<'_, u64>> = (0..count)
        .map(|_| world.alloc::<u64>(1 + rng.below(1 << 14) as usize))
        .collect();
    let a = world.alloc::<u64>(64);

    // RMA: a put to the right, a get from the left, p and g, read back.
    let tag = round * 1000 + me as u64;
    let from_left = round * 1000 + left as u64;
    if on.has("rma") {
        rma(world, &a, round, (tag, from_left));
    }
    if on.has("strided") {
        // Every other element to the right, read back with a strided get.
        a.iput(right, 32..40, 2, &[tag; 4], 1);
        world.barrier_all();
        let mut every_other = [0u64; 4];
        a.iget(me, 32..40, 2, &mut every_other, 1);
        assert_eq!(every_other, [from_left; 4], "iput/iget, round {round}");
    }
    if on.has("atomics") {
        // Everyone adds to PE 0's ticket counter.
        TICKETS.at(0).add(1);
    }
    if on.has("signals") {
        // Data and a signal to the right; wait for the left's.
        a.put_signal(right, 48..52, &[tag; 4], FLAG.signal(), SignalOp::Add(1));
        FLAG.signal().wait_until(Cmp::Ge, round);
        assert_eq!(a.local_get(51), from_left, "put_signal, round {round}");
    }
    if on.has("locks") {
        // A read-modify-write of PE 0's count under the lock.
        let _held = LOCK.lock();
        let c = LOCKED_COUNT.as_array().g(0, 0);
        LOCKED_COUNT.as_array().p(0, 0, c + 1);
        world.quiet();
    }
    let team = world.team_world();
    if on.has("coll") {
        collectives(world, &team, round, tag);
    }
    if on.has("team") {
        // A split team: the even or odd PEs, a reduction over it, then gone.
        let start = (round % 2) as usize;
        let size = (n + 1 - start) / 2;
        let s = world.alloc::<u64>(1);
        if let Some(sub) = team
            .split_strided(start, 2, size, TeamConfig::default())
            .expect("split")
        {
            sub.sum_reduce(&s, &[1]);
            assert_eq!(s.local_get(0), size as u64, "team sum, round {round}");
            drop(sub);
        }
        drop(s);
    }
    if on.has("ctx") {
        // A context: a put through it to the right, quiet, gone.
        let ctx = world
            .ctx_create::<Private>(CtxOptions::default())
            .expect("ctx_create");
        ctx.p(&a, right, 60, tag);
        ctx.quiet();
        drop(ctx);
        world.barrier_all();
        assert_eq!(a.local_get(60), from_left, "ctx put, round {round}");
    }

    // Free in random order.
    while !blocks.is_empty() {
        let i = rng.below(blocks.len() as u64) as usize;
        drop(blocks.swap_remove(i));
    }
    world.barrier_all();
}

/// Put to the right, get from the left, `p` and `g`, each read back.
fn rma(world: &World, a: &SymArray<'_, u64>, round: u64, (tag, from_left): (u64, u64)) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mine: Vec<u64> = (0..16).map(|i| tag + i).collect();
    a.put(right, 0..16, &mine);
    world.barrier_all();
    for i in 0..16 {
        assert_eq!(a.local_get(i), from_left + i as u64, "put, round {round}");
    }
    let mut got = [0u64; 16];
    a.get(left, 0..16, &mut got);
    let left_of_left = round * 1000 + ((left + n - 1) % n) as u64;
    assert!(
        got.iter()
            .enumerate()
            .all(|(i, v)| *v == left_of_left + i as u64),
        "get, round {round}: {got:?}"
    );
    a.p(right, 20, tag);
    world.barrier_all();
    assert_eq!(a.g(me, 20), from_left, "p, round {round}");
}

/// A sum reduction, an fcollect and a broadcast on the world team, each checked.
fn collectives(world: &World, team: &Team<'_>, round: u64, tag: u64) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let sum = world.alloc::<u64>(1);
    team.sum_reduce(&sum, &[me as u64 + round]);
    let want = (0..n as u64).map(|p| p + round).sum::<u64>();
    assert_eq!(sum.local_get(0), want, "sum_reduce, round {round}");
    let all = world.alloc::<u64>(n);
    team.fcollect(&all, &[tag]);
    for p in 0..n {
        assert_eq!(
            all.local_get(p),
            round * 1000 + p as u64,
            "fcollect, round {round}"
        );
    }
    let b = world.alloc::<u64>(2);
    let root = (round as usize) % n;
    team.broadcast(&b, &[round, root as u64], root);
    assert_eq!((b.local_get(0), b.local_get(1)), (round, root as u64));
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let world = shmem_core::init()?;
    let (me, n) = (world.my_pe(), world.n_pes());
    let until = Duration::from_secs_f64(args.minutes.max(0.0) * 60.0);
    let every = Duration::from_secs(args.report.max(1));
    let t0 = Instant::now();
    report(me, Duration::ZERO, 0, &held(&world));
    let mut rounds = 1u64;
    let on = Families(
        args.families
            .split(',')
            .map(|f| f.trim().to_string())
            .collect(),
    );
    round(&world, rounds, &on);
    let start = held(&world);
    report(me, t0.elapsed(), rounds, &start);
    let mut next_report = every;
    // Every PE runs the same number of rounds: PE 0 decides when to stop, told by broadcast.
    let stop = world.alloc::<u64>(1);
    loop {
        let done = u64::from(t0.elapsed() >= until);
        world.team_world().broadcast(&stop, &[done], 0);
        if stop.local_get(0) == 1 {
            break;
        }
        rounds += 1;
        round(&world, rounds, &on);
        if t0.elapsed() >= next_report {
            report(me, t0.elapsed(), rounds, &held(&world));
            next_report += every;
        }
    }
    drop(stop);
    world.barrier_all();
    if me == 0 {
        let tickets = TICKETS.as_array().local_get(0);
        let locked = LOCKED_COUNT.as_array().local_get(0);
        let want = |family| if on.has(family) { rounds * n as u64 } else { 0 };
        assert_eq!(
            (tickets, locked),
            (want("atomics"), want("locks")),
            "atomics and locked counts"
        );
    }
    let end = held(&world);
    report(me, t0.elapsed(), rounds, &end);
    let grew = end.rss_kb.saturating_sub(start.rss_kb);
    let ok = end.fds == start.fds && end.usage == start.usage && grew <= args.rss_slack_kb;
    println!(
        "SOAK-END pe={me} rounds={rounds} {} rss_grew_kb={grew} start={start:?} end={end:?}",
        if ok { "ok" } else { "LEAK" }
    );
    world.barrier_all();
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
