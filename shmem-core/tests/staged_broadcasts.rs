//! Broadcasts that the members read from the root in pieces (`coll::staged`): from the root's
//! `dest`, its symmetric source or its staging area (`broadcast_to_others` of a private source;
//! in a pair on the direct path, the put tree), on one node whatever `UCX_TLS` says. Sizes around each threshold (the mailbox's
//! 1 KiB, two PEs' 512 KiB on the direct path) and across many pieces and more than one turn of
//! the staging area's slots, every root, back to back with different roots and sizes (the epochs),
//! private and symmetric sources, `broadcast_to_others`. Every job runs on both paths (the test
//! kit's `multi_pe_at`), at 2, 3 and 4 PEs, and one at 8; many of one size class at 3 and 5
//! (the root's cached and streaming stores, `coll::stores`). Every PE checks every byte. Members
//! that pass another length than the root's panic, naming both.

use shmem_testkit as common;

use common::check_elements as check;
use common::multi_pe_at;
use shmem_core::prelude::*;

/// Byte counts around the thresholds (the mailbox's 1 KiB; 512 KiB for two PEs on the direct
/// path), across pieces (32 KiB) and past one turn of the staging area's slots (256 KiB), odd
/// ones included.
const SIZES: [usize; 7] = [
    1023,
    1025,
    4096,
    32 * 1024 + 1,
    256 * 1024 + 1,
    512 * 1024 - 1,
    (1 << 20) + 7,
];

/// Root `root`'s byte `i` in round `r`: the high byte of a multiplicative hash, which depends
/// on every bit of `i`, so that a piece copied to or from the wrong place (the pieces are
/// powers of two apart) shows.
fn v(root: usize, r: usize, i: usize) -> u8 {
    let x = (i as u64) ^ (((root * 31 + r * 97) as u64) << 40);
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

/// Every size from every root, private sources: `broadcast` twice back to back (the source
/// reused at once with other values), then `broadcast_to_others`; one byte past the broadcast
/// must stay as it was.
fn private_sources(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    for len in SIZES {
        let dest = world.alloc::<u8>(len + 1);
        let mut got = vec![0u8; len + 1];
        for root in 0..n {
            dest.local_write(.., &vec![0xa5; len + 1]);
            team.barrier();
            for r in 0..2 {
                let src: Vec<u8> = if me == root {
                    (0..len).map(|i| v(root, r, i)).collect()
                } else {
                    vec![0; len]
                };
                team.broadcast(&dest, &src, root);
                dest.local_read(.., &mut got);
                check(
                    &format!("broadcast {r} of {len} B from {root}"),
                    &got,
                    |i| if i < len { v(root, r, i) } else { 0xa5 },
                );
            }
            dest.local_write(.., &vec![0x5a; len + 1]);
            team.barrier();
            let src: Vec<u8> = if me == root {
                (0..len).map(|i| v(root, 2, i)).collect()
            } else {
                vec![0; len]
            };
            team.broadcast_to_others(&dest, &src, root);
            dest.local_read(.., &mut got);
            check(
                &format!("broadcast_to_others of {len} B from {root}"),
                &got,
                |i| {
                    if i < len && me != root {
                        v(root, 2, i)
                    } else {
                        0x5a
                    }
                },
            );
        }
        world.barrier_all();
    }
}

#[test]
fn private_sources_from_every_root() {
    multi_pe_at(
        "private_sources_from_every_root",
        &[2, 3, 4],
        private_sources,
    );
}

/// Broadcasts back to back without any sync between them, each from another root, of another
/// size, into two destinations in turn, every third a `broadcast_to_others`: the next
/// broadcast's root writes its staging area (or its `dest`, or the `dest` of the member after
/// it) while slower members may still be in the previous one.
fn back_to_back(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    let max = SIZES[SIZES.len() - 1];
    let dests = [world.alloc::<u8>(max), world.alloc::<u8>(max)];
    let mut got = vec![0u8; max];
    for round in 0..3 * n {
        let root = (round * 5 + 1) % n;
        let len = SIZES[(round * 3 + n) % SIZES.len()];
        let dest = &dests[round % 2];
        let src: Vec<u8> = if me == root {
            (0..len).map(|i| v(root, round, i)).collect()
        } else {
            vec![0; len]
        };
        let to_others = round % 3 == 2;
        if to_others {
            team.broadcast_to_others(dest, &src, root);
        } else {
            team.broadcast(dest, &src, root);
        }
        if to_others && me == root {
            // Its `dest` holds what an earlier round left there.
            continue;
        }
        dest.local_read(..len, &mut got[..len]);
        check(
            &format!("round {round}: broadcast (to others: {to_others}) of {len} B from {root}"),
            &got[..len],
            |i| v(root, round, i),
        );
    }
    world.barrier_all();
}

#[test]
fn back_to_back_with_other_roots_and_sizes() {
    multi_pe_at(
        "back_to_back_with_other_roots_and_sizes",
        &[2, 3, 4],
        back_to_back,
    );
}

#[test]
fn back_to_back_at_eight() {
    multi_pe_at("back_to_back_at_eight", &[8], back_to_back);
}

/// Many broadcasts of one size class from one root, private sources, `broadcast` and
/// `broadcast_to_others` in turn, every byte checked each time: the root stores into its own
/// `dest` or the holder's with cached or streaming stores as its timings choose
/// (`coll::stores`), and every class's second and third calls are trials of each kind whatever
/// the timings say, and one call in 32 after them, so both kinds' data is checked here.
fn learned_stores(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    let sizes = [(300 << 10) + 3, (1 << 20) + 7];
    let dest = world.alloc::<u8>(sizes[1]);
    let mut got = vec![0u8; sizes[1]];
    let root = n - 1;
    for round in 0..80 {
        let len = sizes[round % 2];
        let to_others = round % 4 >= 2;
        dest.local_write(..len, &vec![0x3c; len]);
        team.barrier();
        let src: Vec<u8> = if me == root {
            (0..len).map(|i| v(root, round, i)).collect()
        } else {
            vec![0; len]
        };
        if to_others {
            team.broadcast_to_others(&dest, &src, root);
        } else {
            team.broadcast(&dest, &src, root);
        }
        dest.local_read(..len, &mut got[..len]);
        check(
            &format!("round {round}: broadcast (to others: {to_others}) of {len} B from {root}"),
            &got[..len],
            |i| {
                if to_others && me == root {
                    0x3c
                } else {
                    v(root, round, i)
                }
            },
        );
    }
    world.barrier_all();
}

#[test]
fn both_kinds_of_stores_deliver() {
    multi_pe_at("both_kinds_of_stores_deliver", &[3, 5], learned_stores);
}

/// `broadcast_to_others` of a private source through the root's staging area (teams of three
/// or more; on the UCX path, every size past the mailbox's): the root returns once it has made
/// the last piece readable, without waiting for its members, and changes its source at once;
/// its next broadcast waits until every member has read the previous one. Root 0 broadcasts
/// again and again without syncs, now and then one from root 1 or a reduction between, while
/// the last member sleeps before some rounds so that the root runs ahead of it.
fn staged_root_runs_ahead(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    let sizes = [1025, 32 * 1024 + 1, 100_003, 256 * 1024];
    let dest = world.alloc::<u8>(256 * 1024);
    let sum = world.alloc::<u64>(1);
    let mut got = vec![0u8; 256 * 1024];
    for round in 0..24 {
        let root = if round % 7 == 6 { 1 } else { 0 };
        let len = sizes[round % sizes.len()];
        if me == n - 1 && round % 3 == 1 {
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        if me == root {
            let mut src: Vec<u8> = (0..len).map(|i| v(root, round, i)).collect();
            team.broadcast_to_others(&dest, &src, root);
            // The members read the staging area's copy, not this.
            src.fill(0xa5);
            std::hint::black_box(&src);
        } else {
            team.broadcast_to_others(&dest, &vec![0; len], root);
            dest.local_read(..len, &mut got[..len]);
            check(
                &format!("round {round}: broadcast_to_others of {len} B from {root}"),
                &got[..len],
                |i| v(root, round, i),
            );
        }
        if round % 5 == 4 {
            team.sum_reduce(&sum, &[me as u64 + 1]);
            assert_eq!(
                sum.local_get(0),
                (n * (n + 1) / 2) as u64,
                "round {round}: sum"
            );
        }
    }
    world.barrier_all();
}

#[test]
fn a_staged_root_runs_ahead_of_its_members() {
    multi_pe_at(
        "a_staged_root_runs_ahead_of_its_members",
        &[3, 4, 8],
        staged_root_runs_ahead,
    );
}

/// Symmetric sources (as C passes them): apart from `dest` and `dest` itself, `broadcast` and
/// `broadcast_to_others`, at sizes across the thresholds.
#[test]
fn symmetric_sources_from_every_root() {
    multi_pe_at("symmetric_sources_from_every_root", &[2, 3, 4], |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        for len in [1025, 32 * 1024, 300 * 1024 + 3, 600 * 1024 + 1] {
            let src = world.alloc::<u8>(len);
            let dest = world.alloc::<u8>(len);
            let mut got = vec![0u8; len];
            for root in 0..n {
                // Every PE's source holds its own values: only the root's may arrive.
                src.local_write(.., &(0..len).map(|i| v(me, 3, i)).collect::<Vec<_>>());
                dest.local_write(.., &vec![0xa5; len]);
                team.barrier();
                // SAFETY: nobody writes `src` until the barrier after the broadcasts.
                let s = unsafe { src.local_slice() };
                team.broadcast(&dest, s, root);
                dest.local_read(.., &mut got);
                check(
                    &format!("broadcast of {len} B from symmetric memory, root {root}"),
                    &got,
                    |i| v(root, 3, i),
                );
                dest.local_write(.., &vec![0x5a; len]);
                team.barrier();
                team.broadcast_to_others(&dest, s, root);
                dest.local_read(.., &mut got);
                check(
                    &format!("broadcast_to_others of {len} B from symmetric memory"),
                    &got,
                    |i| if me == root { 0x5a } else { v(root, 3, i) },
                );
                team.barrier();
                // `dest` itself as the root's source (C's `dest == source`).
                dest.local_write(.., &(0..len).map(|i| v(me, 4, i)).collect::<Vec<_>>());
                team.barrier();
                let zeros = vec![0u8; len];
                let s = if me == root {
                    // SAFETY: the root's `dest` is its source, which the broadcast does not
                    // write on the root (the data is already there).
                    unsafe { dest.local_slice() }
                } else {
                    &zeros
                };
                team.broadcast(&dest, s, root);
                dest.local_read(.., &mut got);
                check(
                    &format!("broadcast of {len} B from dest, root {root}"),
                    &got,
                    |i| v(root, 4, i),
                );
                team.barrier();
            }
            world.barrier_all();
        }
    });
}

/// The job of a mismatch test named `name` (its PEs' side, or the launches): the root
/// broadcasts 600 KiB (with `broadcast_to_others` when `to_others`), the other members expect
/// `others` bytes; on every path at each PE count of `pes`, the job fails naming both lengths.
fn mismatched_lengths(name: &str, others: usize, to_others: bool, pes: &[usize]) {
    const ROOTS: usize = 600 << 10;
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let len = if team.my_pe() == 0 { ROOTS } else { others };
        let dest = world.alloc::<u8>(ROOTS.max(others));
        let (dest, src) = (dest.slice(0..len), vec![3u8; len]);
        if to_others {
            team.broadcast_to_others(&dest, &src, 0);
        } else {
            team.broadcast(&dest, &src, 0);
        }
        unreachable!("the members passed other lengths than the root");
    }
    let want = [
        format!("broadcast: the root (team PE 0) sends {ROOTS} bytes while team PE"),
        format!("receives {others}"),
    ];
    for path in common::Path::ALL {
        for &n in pes {
            common::launch_failing(name, n, path, &[&want[0], &want[1]]);
        }
    }
}

/// 600 KiB from the root, 700 KiB expected by the others: both read from the root (more than
/// two PEs' 512 KiB).
#[test]
fn members_passing_other_lengths_are_named() {
    mismatched_lengths(
        "members_passing_other_lengths_are_named",
        700 << 10,
        false,
        &[2, 3],
    );
}

/// `broadcast_to_others` of a private source larger than the root's staging area in teams of
/// three: on the direct path the root copies it into the `dest` of the member after it, which
/// must check the length before it lets the root write (it panics; the root does not write
/// past that member's `dest`).
#[test]
fn members_passing_other_lengths_to_others_are_named() {
    mismatched_lengths(
        "members_passing_other_lengths_to_others_are_named",
        500 << 10,
        true,
        &[3],
    );
}
