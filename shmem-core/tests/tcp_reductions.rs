//! Reductions over `UCX_TLS=tcp,self` on one node, where puts and gets go through UCX but the
//! collectives map the members' memory all the same (`Transport::coll_mapped`): the mailbox's
//! sizes, the large reductions' threshold (16 KiB) and sizes of several of their chunks, odd
//! element counts, sum, max, and, xor on f32, f64, i64, u8, private and symmetric sources, in
//! place, back-to-back reductions of different sizes (the progress words' epochs), at 2, 3 and
//! 4 PEs and once at 8. Every PE checks every element against values computed here
//! independently (integer-valued floats: the sums are exact).
//!
//! Evidence that the data does not go through UCX, without timing: lazily connected
//! (`SHMEM_CONNECT=lazy`), a 1 MiB reduction opens no UCX endpoint (no socket), as
//! `coll::large`'s gets would.

use shmem_testkit as common;

use common::Path;
use common::check_elements as check;
use shmem_core::prelude::*;

/// Elements of the reductions (of 8-byte elements unless said): the mailbox's, below the large
/// reductions' threshold, at it, just past it, and several of their chunks with odd counts.
const SIZES: [usize; 7] = [500, 2_047, 2_048, 2_049, 16_385, 50_001, 131_079];

/// PE `pe`'s element `i`: an integer in -50_000..50_003.
fn v(pe: usize, i: usize) -> i64 {
    ((i as i64).wrapping_mul(2_654_435_761) ^ (pe as i64 * 977)) % 100_003 - 50_000
}

/// Every case on `team` (whose member `m` is given values `v(m, _)`).
fn reduce_on(world: &World, team: &Team<'_>, sizes: &[usize]) {
    let (me, n) = (team.my_pe(), team.n_pes());
    let fold = |i: usize, f: fn(i64, i64) -> i64| (1..n).fold(v(0, i), |a, pe| f(a, v(pe, i)));
    for &len in sizes {
        let mine: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
        let dest = world.alloc::<i64>(len);
        let mut got = vec![0i64; len];
        // i64 sum and xor, private source.
        team.sum_reduce(&dest, &mine);
        dest.local_read(.., &mut got);
        check(&format!("i64 sum of {len}"), &got, |i| {
            fold(i, i64::wrapping_add)
        });
        team.xor_reduce(&dest, &mine);
        dest.local_read(.., &mut got);
        check(&format!("i64 xor of {len}"), &got, |i| {
            fold(i, |a, b| a ^ b)
        });
        // A symmetric source (as C passes one).
        let src = world.alloc::<i64>(len);
        src.local_write(.., &mine);
        // SAFETY: nothing writes `src` while the reduction reads it.
        team.max_reduce(&dest, unsafe { src.local_slice() });
        dest.local_read(.., &mut got);
        check(&format!("i64 max of {len}, symmetric"), &got, |i| {
            fold(i, i64::max)
        });
        // In place, twice (the second on the result: n times the sum).
        dest.local_write(.., &mine);
        team.sum_reduce_in_place(&dest);
        team.sum_reduce_in_place(&dest);
        dest.local_read(.., &mut got);
        check(&format!("i64 sum in place of {len}"), &got, |i| {
            fold(i, i64::wrapping_add).wrapping_mul(n as i64)
        });
        // f64 and f32 sums of integers (exact), and f64 max in place.
        let f: Vec<f64> = mine.iter().map(|&x| x as f64).collect();
        let d64 = world.alloc::<f64>(len);
        let mut g64 = vec![0f64; len];
        team.sum_reduce(&d64, &f);
        d64.local_read(.., &mut g64);
        check(&format!("f64 sum of {len}"), &g64, |i| {
            fold(i, i64::wrapping_add) as f64
        });
        d64.local_write(.., &f);
        team.max_reduce_in_place(&d64);
        d64.local_read(.., &mut g64);
        check(&format!("f64 max in place of {len}"), &g64, |i| {
            fold(i, i64::max) as f64
        });
        // f32: twice the elements (the same bytes), odd counts included.
        let l32 = 2 * len + 1;
        let f: Vec<f32> = (0..l32).map(|i| v(me, i) as f32).collect();
        let d32 = world.alloc::<f32>(l32);
        let mut g32 = vec![0f32; l32];
        team.sum_reduce(&d32, &f);
        d32.local_read(.., &mut g32);
        check(&format!("f32 sum of {l32}"), &g32, |i| {
            fold(i, i64::wrapping_add) as f32
        });
        // u8 (8 times the elements, wrapping sum and and).
        let l8 = 8 * len - 3;
        let b: Vec<u8> = (0..l8).map(|i| v(me, i) as u8).collect();
        let d8 = world.alloc::<u8>(l8);
        let mut g8 = vec![0u8; l8];
        team.sum_reduce(&d8, &b);
        d8.local_read(.., &mut g8);
        check(&format!("u8 sum of {l8}"), &g8, |i| {
            (0..n).fold(0u8, |a, pe| a.wrapping_add(v(pe, i) as u8))
        });
        team.and_reduce(&d8, &b);
        d8.local_read(.., &mut g8);
        check(&format!("u8 and of {l8}"), &g8, |i| {
            (0..n).fold(0xff, |a, pe| a & v(pe, i) as u8)
        });
        drop((d8, d32, d64, src, dest));
    }
}

/// Back-to-back reductions of different sizes into the same array, without any sync between:
/// a member that leaves one may start the next while the others still gather.
fn back_to_back(world: &World, team: &Team<'_>) {
    let (me, n) = (team.my_pe(), team.n_pes());
    let dest = world.alloc::<i64>(300_000);
    let mine: Vec<i64> = (0..300_000).map(|i| v(me, i)).collect();
    let mut got = vec![0i64; 300_000];
    for (k, len) in [300_000, 600, 40_000, 513, 170_000, 16_385, 4_000]
        .into_iter()
        .enumerate()
    {
        let add = k as i64;
        let src: Vec<i64> = mine[..len].iter().map(|x| x + add).collect();
        team.sum_reduce(&dest.slice(0..len), &src);
        dest.local_read(0..len, &mut got[..len]);
        check(
            &format!("back-to-back sum {k} of {len}"),
            &got[..len],
            |i| (0..n).map(|pe| v(pe, i) + add).sum(),
        );
    }
    world.barrier_all();
}

const NAME: &str = "reductions_over_tcp";

#[test]
fn reductions_over_tcp() {
    if common::is_pe() {
        common::multi_pe_at(NAME, &[], |world| {
            let team = world.team_world();
            let sizes: &[usize] = if team.n_pes() > 4 {
                &[513, 50_001]
            } else {
                &SIZES
            };
            reduce_on(world, &team, sizes);
            back_to_back(world, &team);
            // A team of stride 2 at 4 PEs: its own team block and epochs.
            if team.n_pes() == 4 {
                let even = team
                    .split_strided(0, 2, 2, TeamConfig::default())
                    .expect("split");
                for len in [513, 50_001] {
                    let dest = world.alloc::<i64>(len);
                    if let Some(t) = &even {
                        let mine: Vec<i64> = (0..len).map(|i| v(t.my_pe(), i)).collect();
                        t.sum_reduce(&dest, &mine);
                        let mut got = vec![0i64; len];
                        dest.local_read(.., &mut got);
                        check(&format!("stride 2: sum of {len}"), &got, |i| {
                            v(0, i) + v(1, i)
                        });
                    }
                    world.barrier_all();
                    drop(dest);
                }
            }
            // Lazily connected: a 1 MiB reduction opens no UCX endpoint.
            let len = 1 << 17;
            let dest = world.alloc::<i64>(len);
            let mine: Vec<i64> = (0..len).map(|i| v(team.my_pe(), i)).collect();
            world.barrier_all();
            let before = sockets();
            team.sum_reduce(&dest, &mine);
            let after = sockets();
            assert_eq!(
                after,
                before,
                "PE {}: a 1 MiB reduction opened UCX endpoints",
                world.my_pe()
            );
            world.barrier_all();
        });
        return;
    }
    for n in [2, 3, 4, 8] {
        let (out, took) = common::launch(NAME, n, Path::Ucx, &[("SHMEM_CONNECT", "lazy")]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{NAME} at {n} PEs ({took:?}): {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        for pe in 0..n {
            assert!(
                stdout.contains(&format!("<pe-done {NAME} {pe}>")),
                "PE {pe} did not finish:\n{stdout}"
            );
        }
        eprintln!("{NAME}: {n} PEs in {took:?}");
    }
}

const MISMATCH: &str = "members_passing_different_lengths_are_named";

#[test]
fn members_passing_different_lengths_are_named() {
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let me = team.my_pe();
        // 32 KiB and more: every member takes the large reduction, with its own length.
        let len = 4096 + 1024 * me;
        let dest = world.alloc::<i64>(8192);
        let mine = vec![1i64; len];
        team.sum_reduce(&dest.slice(0..len), &mine);
        unreachable!("the members passed different lengths");
    }
    for path in Path::ALL {
        for n in [2, 3] {
            common::launch_failing(
                MISMATCH,
                n,
                path,
                &["sum_reduce: team PE", "bytes while team PE"],
            );
        }
    }
}

/// Socket descriptors this process holds.
fn sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|t| t.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}
