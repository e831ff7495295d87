//! Broadcasts at sizes around the tree's 1 KiB pieces and beyond: odd byte counts, every root,
//! `broadcast_to_others`, in place, from symmetric memory, and on a team of stride 2, at 2, 3 and
//! 5 PEs on the direct and UCX paths. Every PE checks every element.

use shmem_testkit as common;

use common::check_elements as check;
use common::multi_pe_at;
use shmem_core::prelude::*;

/// Byte counts around the thresholds, odd ones included.
const SIZES: [usize; 6] = [1000, 1025, 16_383, 16_385, 100_003, 1_048_579];

/// Root `root`'s byte `i` in round `r`.
fn v(root: usize, r: usize, i: usize) -> u8 {
    ((i.wrapping_mul(2_654_435_761) >> 7) ^ (root * 31) ^ (r * 97)) as u8
}

#[test]
fn every_root_at_sizes_across_the_threshold() {
    multi_pe_at(
        "every_root_at_sizes_across_the_threshold",
        &[2, 3, 5],
        |world| {
            let team = world.team_world();
            let (me, n) = (team.my_pe(), team.n_pes());
            for len in SIZES {
                // One element more than the broadcast: it must stay as it was.
                let dest = world.alloc::<u8>(len + 1);
                let mut got = vec![0u8; len + 1];
                for root in 0..n {
                    dest.local_write(.., &vec![0xa5; len + 1]);
                    team.barrier();
                    let src: Vec<u8> = if me == root {
                        (0..len).map(|i| v(root, 0, i)).collect()
                    } else {
                        vec![0; len]
                    };
                    team.broadcast(&dest, &src, root);
                    dest.local_read(.., &mut got);
                    check(&format!("broadcast of {len} B from {root}"), &got, |i| {
                        if i < len { v(root, 0, i) } else { 0xa5 }
                    });
                    // Back to back, the source reused at once with other values.
                    let src: Vec<u8> = if me == root {
                        (0..len).map(|i| v(root, 1, i)).collect()
                    } else {
                        vec![0; len]
                    };
                    team.broadcast(&dest, &src, root);
                    dest.local_read(.., &mut got);
                    check(
                        &format!("second broadcast of {len} B from {root}"),
                        &got,
                        |i| {
                            if i < len { v(root, 1, i) } else { 0xa5 }
                        },
                    );
                    // The root's dest left as it is.
                    dest.local_write(.., &vec![0x5a; len + 1]);
                    team.barrier();
                    team.broadcast_to_others(&dest, &src, root);
                    dest.local_read(.., &mut got);
                    check(
                        &format!("broadcast_to_others of {len} B from {root}"),
                        &got,
                        |i| {
                            if i < len && me != root {
                                v(root, 1, i)
                            } else {
                                0x5a
                            }
                        },
                    );
                }
                // In place, of u64 elements (len / 8 of them, at least one).
                let k = (len / 8).max(1);
                let a = world.alloc::<u64>(k);
                let root = n - 1;
                let mine: Vec<u64> = (0..k).map(|i| (i as u64) << 8 | me as u64).collect();
                a.local_write(.., &mine);
                team.barrier();
                team.broadcast_in_place(&a, root);
                let mut got = vec![0u64; k];
                a.local_read(.., &mut got);
                if let Some(i) = (0..k).find(|&i| got[i] != (i as u64) << 8 | root as u64) {
                    panic!(
                        "broadcast_in_place of {k} u64: element {i} is {:#x}",
                        got[i]
                    );
                }
                world.barrier_all();
            }
        },
    );
}

#[test]
fn teams_of_stride_two() {
    multi_pe_at("teams_of_stride_two", &[3, 5], |world| {
        let all = world.team_world();
        let n = all.n_pes();
        let members = n.div_ceil(2);
        let team = all
            .split_strided(0, 2, members, TeamConfig::default())
            .expect("split");
        for len in [16_385, 1_048_579] {
            let dest = world.alloc::<u8>(len);
            if let Some(t) = &team {
                let me = t.my_pe();
                for root in 0..members {
                    let src: Vec<u8> = if me == root {
                        (0..len).map(|i| v(root, 2, i)).collect()
                    } else {
                        vec![0; len]
                    };
                    t.broadcast(&dest, &src, root);
                    let mut got = vec![0u8; len];
                    dest.local_read(.., &mut got);
                    check(
                        &format!("stride-2 broadcast of {len} from {root}"),
                        &got,
                        |i| v(root, 2, i),
                    );
                }
            }
            world.barrier_all();
            drop(dest);
        }
    });
}

/// Sources in symmetric memory, which the members read where they lie on the direct path: apart
/// from `dest`, and `dest` itself (`broadcast` and `broadcast_to_others`), at sizes that are not
/// multiples of the root's pieces.
#[test]
fn symmetric_sources() {
    multi_pe_at("symmetric_sources", &[2, 3, 5], |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        for len in [600_001, 1_048_579] {
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
                    &format!("broadcast of {len} B from symmetric memory"),
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
                // `dest` itself as the source: C's `dest == source`.
                dest.local_write(.., &(0..len).map(|i| v(me, 4, i)).collect::<Vec<_>>());
                team.barrier();
                let zeros = vec![0u8; len];
                for keep_root in [false, true] {
                    // The members pass a private source.
                    let s = if me == root {
                        // SAFETY: the root's `dest` is its source, which neither call writes
                        // on the root (the data is already there).
                        unsafe { dest.local_slice() }
                    } else {
                        &zeros
                    };
                    if keep_root {
                        team.broadcast_to_others(&dest, s, root);
                    } else {
                        team.broadcast(&dest, s, root);
                    }
                    dest.local_read(.., &mut got);
                    check(
                        &format!("broadcast of {len} B from dest (keep_root {keep_root})"),
                        &got,
                        |i| v(root, 4, i),
                    );
                }
                team.barrier();
            }
            world.barrier_all();
        }
    });
}
