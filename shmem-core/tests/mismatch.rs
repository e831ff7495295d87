//! Collectives called differently on different PEs end the job with a message instead of
//! hanging it (issue 16): PE 0 returns from `main` (its `World` is dropped, which finalizes)
//! while the other PEs go on to a collective it will never join. Before, the job hung silently
//! in finalize; now the waiting PEs name PE 0 (after a 0.5 s grace; at once where their
//! barrier meets finalize's barrier) and the launcher ends the job (on one host and on two
//! hosts). A member of a team that does not include the finalized PE is not disturbed.

use common::unix_nanos;
use shmem_core::prelude::*;
use shmem_testkit as common;
use std::time::Instant;

#[symmetric]
static DEST: [u64; 1] = [0];

/// PE 0 leaves at once; the others allocate collectively (the first of their collectives that
/// PE 0 never joins: they name it after the grace), then would call `barrier_all` and a
/// broadcast.
fn pe_0_returns_early() {
    let world = shmem_core::init().expect("init");
    if world.my_pe() == 0 {
        eprintln!("<finalize-at {}>", unix_nanos());
        return;
    }
    let dest = world.alloc::<u64>(4);
    world.barrier_all();
    world.team_world().broadcast(&dest, &[1, 2, 3, 4], 1);
    unreachable!("the broadcast cannot complete without PE 0");
}

#[test]
fn a_pe_that_finalizes_during_a_collective_is_named() {
    if common::is_pe() {
        return pe_0_returns_early();
    }
    let name = "a_pe_that_finalizes_during_a_collective_is_named";
    // Local jobs of 2, 3 and 4 PEs, and 4 PEs on two hosts (0 stands for those; skipped
    // without root), on both paths.
    for path in common::Path::ALL {
        for n in [2, 3, 4, 0] {
            let start = Instant::now();
            let out = if n == 0 {
                match common::launch_two_hosts(name, path) {
                    Some((out, _)) => out,
                    None => continue,
                }
            } else {
                common::launch(name, n, path, &[]).0
            };
            let n = if n == 0 {
                "2 hosts x 2".to_string()
            } else {
                n.to_string()
            };
            let took = start.elapsed();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "the job must fail: {stderr}");
            assert!(
                stderr.contains("PE 0 finalized") && stderr.contains("collective"),
                "the waiting PEs name PE 0: {stderr}"
            );
            let at: u128 = stderr
                .split("<finalize-at ")
                .nth(1)
                .and_then(|r| r.split('>').next())
                .and_then(|t| t.parse().ok())
                .expect("PE 0 printed its time");
            let secs = (unix_nanos() - at) as f64 / 1e9;
            assert!(
                secs < 4.0,
                "{n} PEs ({path:?}): the job ended {secs:.2} s after PE 0 finalized"
            );
            eprintln!(
                "{n} PEs ({path:?}): ended {:.0} ms after PE 0 finalized (job {took:.2?})",
                secs * 1e3
            );
        }
    }
}

/// The PE that returns early in [`early_finalize_meets_barrier`]: `SHMEM_TEST_EARLY_PE`
/// (passed on to the PEs of every layout), 1 if unset.
fn early_pe() -> usize {
    std::env::var("SHMEM_TEST_EARLY_PE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// The early PE returns from `main` at once while the others call `barrier_all`: its
/// finalize's barrier must not pass for theirs. Before, it did, the others went on
/// to their own finalize, and the job hung there without a word.
fn early_finalize_meets_barrier() {
    let world = shmem_core::init().expect("init");
    let early = early_pe();
    if world.my_pe() == early {
        eprintln!("<finalize-at {}>", unix_nanos());
        return;
    }
    world.barrier_all();
    // Unreachable when the mismatch is caught; before, this PE went on to finalize and hung.
    eprintln!("<barrier_all returned on PE {}>", world.my_pe());
}

#[test]
fn a_pe_that_finalizes_while_the_others_wait_in_a_barrier_is_named() {
    if common::is_pe() {
        return early_finalize_meets_barrier();
    }
    let name = "a_pe_that_finalizes_while_the_others_wait_in_a_barrier_is_named";
    // (PEs, the early PE) on one host; `(0, early)` stands for 2 hosts x 2 PEs (skipped
    // without root). The early PE in the middle, at the end, and on either host.
    let layouts = [(3, 1), (2, 1), (5, 2), (5, 4), (0, 1), (0, 2)];
    for path in common::Path::ALL {
        for (n, early) in layouts {
            let early_var = early.to_string();
            // No backtraces: symbolizing one in a debug build takes longer than the runtime
            // needs to end the job.
            let env = [
                ("SHMEM_TEST_EARLY_PE", early_var.as_str()),
                ("RUST_BACKTRACE", "0"),
            ];
            let (out, what) = if n == 0 {
                match common::launch_hosts_env(name, (2, 2), path, &env) {
                    Some((out, _)) => (out, "2 hosts x 2 PEs".to_string()),
                    None => continue,
                }
            } else {
                (common::launch(name, n, path, &env).0, format!("{n} PEs"))
            };
            let ended = unix_nanos();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let case = format!("{what}, PE {early} early, {path:?} path");
            assert!(!out.status.success(), "{case}: the job must fail: {stderr}");
            assert!(
                !stderr.contains("<barrier_all returned"),
                "{case}: a barrier_all passed for the early PE's finalize: {stderr}"
            );
            // One line names the early PE and a PE that waits for it in the barrier.
            let line = stderr
                .lines()
                .find(|l| l.contains(&format!("PE {early} finalized")))
                .unwrap_or_else(|| panic!("{case}: no PE names PE {early}: {stderr}"));
            let waiting = line
                .split(" while PE ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|pe| pe.parse::<usize>().ok())
                .unwrap_or_else(|| panic!("{case}: the message names no waiting PE: {line}"));
            assert!(
                waiting != early && line.contains("in a barrier"),
                "{case}: the message names PE {waiting} waiting in a barrier: {line}"
            );
            let at: u128 = stderr
                .split("<finalize-at ")
                .nth(1)
                .and_then(|r| r.split('>').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("{case}: PE {early} printed its time: {stderr}"));
            let secs = (ended - at) as f64 / 1e9;
            assert!(
                secs < 1.0,
                "{case}: the job ended {secs:.2} s after PE {early} finalized"
            );
            eprintln!(
                "{case}: ended {:.0} ms after PE {early} finalized",
                secs * 1e3
            );
        }
    }
}

/// PE 0 finalizes while PEs 1 and 2 go on with collectives of a team without PE 0 for longer
/// than the grace period: legal, and it must complete.
#[test]
fn collectives_of_a_team_without_the_finalized_pe_go_on() {
    common::multi_pe_at(
        "collectives_of_a_team_without_the_finalized_pe_go_on",
        &[3, 4],
        |world| {
            let me = world.my_pe();
            let n = world.n_pes();
            let rest = world
                .team_world()
                .split_strided(1, 1, n - 1, Default::default())
                .expect("split");
            if let Some(team) = rest {
                if team.my_pe() == 0 {
                    // Longer than the grace period before the others can finish.
                    std::thread::sleep(std::time::Duration::from_millis(1500));
                }
                team.broadcast(&DEST, &[me as u64 + 10], 0);
                team.sync();
                assert_eq!(DEST.local_get(0), 11);
                drop(team);
            }
            // PE 0 reaches finalize long before the others.
        },
    );
}

/// The PEs of [`pes_in_different_collectives_are_named`], by `SHMEM_TEST_MISMATCH`:
/// - `alloc`: the last PE allocates collectively while the others call `barrier_all`;
/// - `bcast`: after an allocation on every PE, PE 0 broadcasts from itself and goes on to
///   `barrier_all` (a small broadcast's root does not wait), while the others reduce into
///   the array. They meet PE 0 one collective ahead of them.
/// - `team`: the even PEs' team (a split of the world, then a reduction on it, on every even
///   PE): the team's PE 0 calls `sync`, the others reduce. (Exchanges through the mailbox,
///   such as `fcollect` against `alltoall`, already name each other by the tags of their
///   messages.)
fn different_collectives() {
    let world = shmem_core::init().expect("init");
    let (me, n) = (world.my_pe(), world.n_pes());
    let scenario = std::env::var("SHMEM_TEST_MISMATCH").unwrap_or_default();
    match scenario.as_str() {
        "alloc" => {
            eprintln!("<mismatch-at {}>", unix_nanos());
            if me == n - 1 {
                let _a = world.alloc::<u64>(4);
            } else {
                world.barrier_all();
            }
        }
        "bcast" => {
            let dest = world.alloc::<u64>(4);
            eprintln!("<mismatch-at {}>", unix_nanos());
            let team = world.team_world();
            if me == 0 {
                team.broadcast(&dest, &[1, 2, 3, 4], 0);
                world.barrier_all();
            } else {
                team.sum_reduce(&dest, &[1, 2, 3, 4]);
            }
        }
        _ => {
            let team = world
                .team_world()
                .split_strided(0, 2, n.div_ceil(2), TeamConfig::default())
                .expect("split");
            let dest = world.alloc::<u64>(4 * n);
            if let Some(team) = team {
                team.sum_reduce(&dest, &[1, 2, 3, 4]);
                assert_eq!(dest.local_get(0), team.n_pes() as u64);
                eprintln!("<mismatch-at {}>", unix_nanos());
                if team.my_pe() == 0 {
                    team.sync();
                } else {
                    team.sum_reduce(&dest, &[5, 6, 7, 8]);
                }
            } else {
                // The odd PEs wait for the job to end.
                world.barrier_all();
            }
        }
    }
    eprintln!("<mismatch passed on PE {me}>");
}

#[test]
fn pes_in_different_collectives_are_named() {
    if common::is_pe() {
        return different_collectives();
    }
    let name = "pes_in_different_collectives_are_named";
    // (scenario, PEs, the PE that must be named, the collectives the message names)
    let cases = [
        (
            "alloc",
            2,
            1,
            ["a collective allocation", "a barrier or sync"],
        ),
        (
            "alloc",
            3,
            2,
            ["a collective allocation", "a barrier or sync"],
        ),
        ("bcast", 3, 0, ["a reduction", "a broadcast"]),
        ("bcast", 4, 0, ["a reduction", "a broadcast"]),
        ("team", 3, 0, ["a reduction", "a barrier or sync"]),
        ("team", 5, 0, ["a reduction", "a barrier or sync"]),
    ];
    for path in common::Path::ALL {
        for (scenario, n, named, kinds) in cases {
            let env = [("SHMEM_TEST_MISMATCH", scenario), ("RUST_BACKTRACE", "0")];
            let (out, _) = common::launch(name, n, path, &env);
            let ended = unix_nanos();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let case = format!("{scenario}, {n} PEs, {path:?} path");
            assert!(!out.status.success(), "{case}: the job must fail: {stderr}");
            assert!(
                !stderr.contains("<mismatch passed"),
                "{case}: different collectives passed for each other: {stderr}"
            );
            let line = stderr
                .lines()
                .find(|l| l.contains("called different collectives"))
                .unwrap_or_else(|| panic!("{case}: no PE names the mismatch: {stderr}"));
            // Either side may see it first: the named PE waits, or the other waits for it.
            assert!(
                (line.contains(&format!("PE {named} is in"))
                    || line.contains(&format!("PE {named} waits in")))
                    && kinds.iter().all(|k| line.contains(k)),
                "{case}: the message names PE {named} and both collectives ({kinds:?}): {line}"
            );
            let at: u128 = stderr
                .split("<mismatch-at ")
                .nth(1)
                .and_then(|r| r.split('>').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("{case}: no start time: {stderr}"));
            let secs = (ended - at) as f64 / 1e9;
            assert!(
                secs < 4.0,
                "{case}: the job ended {secs:.2} s after the mismatch"
            );
            eprintln!("{case}: ended {:.0} ms after the mismatch", secs * 1e3);
        }
    }
}
