//! Team collectives at 1, 2, 3, 4 and 8 PEs on the direct and UCX paths, on the world team and on
//! split teams, with values every PE checks.

use shmem_testkit as common;

use common::{multi_pe_at, multi_pe_hosts};
use shmem_core::prelude::*;

#[test]
fn broadcast_from_every_root_and_fcollect_collect() {
    multi_pe_hosts("broadcast_from_every_root_and_fcollect_collect", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let dest = world.alloc::<u32>(3000);
        for root in 0..n {
            let src: Vec<u32> = (0..3000).map(|i| (root * 10_000 + i) as u32).collect();
            let mine = if me == root {
                src.clone()
            } else {
                vec![0; 3000]
            };
            team.broadcast(&dest, &mine, root);
            let mut got = vec![0u32; 3000];
            dest.local_read(.., &mut got);
            if let Some(i) = (0..3000).find(|&i| got[i] != src[i]) {
                panic!(
                    "broadcast from root {root}: element {i} is {} instead of {}",
                    got[i], src[i]
                );
            }
        }
        let all = world.alloc::<i64>(4 * n);
        team.fcollect(&all, &[me as i64; 4]);
        for pe in 0..n {
            for k in 0..4 {
                assert_eq!(all.local_get(pe * 4 + k), pe as i64);
            }
        }
        // collect: PE p contributes p + 1 elements.
        let var = world.alloc::<u16>(n * (n + 1) / 2);
        let total = team.collect(&var, &vec![me as u16; me + 1]);
        assert_eq!(total, n * (n + 1) / 2);
        let mut at = 0;
        for pe in 0..n {
            for _ in 0..=pe {
                assert_eq!(var.local_get(at), pe as u16);
                at += 1;
            }
        }
    });
}

#[test]
fn broadcast_to_others_leaves_the_roots_dest_as_it_is() {
    multi_pe_hosts(
        "broadcast_to_others_leaves_the_roots_dest_as_it_is",
        |world| {
            let team = world.team_world();
            let (me, n) = (team.my_pe(), team.n_pes());
            // 3 elements go through the mailboxes, 3000 (12 KB) by puts down the tree.
            for len in [3usize, 3000] {
                let dest = world.alloc::<u32>(len);
                for root in 0..n {
                    let src: Vec<u32> = (0..len).map(|i| (root * 10_000 + i) as u32).collect();
                    let before: Vec<u32> = (0..len).map(|i| (me * 7 + i + 1) as u32).collect();
                    dest.local_write(0..len, &before);
                    team.barrier();
                    let mine = if me == root {
                        src.clone()
                    } else {
                        vec![0; len]
                    };
                    team.broadcast_to_others(&dest, &mine, root);
                    let mut got = vec![0u32; len];
                    dest.local_read(.., &mut got);
                    let want = if me == root { &before } else { &src };
                    if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
                        panic!(
                            "broadcast_to_others of {len} from root {root}: PE {me} element {i} is \
                         {} instead of {}",
                            got[i], want[i]
                        );
                    }
                    team.barrier();
                }
            }
        },
    );
}

#[test]
fn alltoall_and_alltoalls() {
    multi_pe_hosts("alltoall_and_alltoalls", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let k = 3;
        let src: Vec<u64> = (0..n * k).map(|i| (me * 1000 + i) as u64).collect();
        let dest = world.alloc::<u64>(n * k);
        team.alltoall(&dest, &src);
        for j in 0..n {
            for i in 0..k {
                // Block `me` of PE j's source, element i.
                assert_eq!(dest.local_get(j * k + i), (j * 1000 + me * k + i) as u64);
            }
        }
        // Strided: 2 elements per PE, source stride 3, destination stride 2.
        let nel = 2;
        let src2: Vec<u64> = (0..(n * nel - 1) * 3 + 1)
            .map(|i| (me * 1000 + i) as u64)
            .collect();
        let dest2 = world.alloc::<u64>((n * nel - 1) * 2 + 1);
        team.alltoalls(&dest2, 2, &src2, 3, nel);
        for j in 0..n {
            for i in 0..nel {
                let want = (j * 1000 + (me * nel + i) * 3) as u64;
                assert_eq!(
                    dest2.local_get((j * nel + i) * 2),
                    want,
                    "from PE {j}, element {i}"
                );
            }
        }
    });
}

#[test]
fn reductions_and_scans() {
    multi_pe_hosts("reductions_and_scans", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        // 300 elements: more than one scratch chunk of u64s.
        let len = 300;
        let src: Vec<i64> = (0..len).map(|i| (me as i64 + 1) * (i as i64 - 7)).collect();
        let dest = world.alloc::<i64>(len);
        team.sum_reduce(&dest, &src);
        let tri = (n * (n + 1) / 2) as i64;
        for i in 0..len {
            assert_eq!(dest.local_get(i), tri * (i as i64 - 7), "sum element {i}");
        }
        team.max_reduce(&dest, &src);
        for i in 0..len {
            let v = i as i64 - 7;
            assert_eq!(dest.local_get(i), if v >= 0 { n as i64 * v } else { v });
        }
        team.min_reduce(&dest, &src);
        for i in 0..len {
            let v = i as i64 - 7;
            assert_eq!(dest.local_get(i), if v >= 0 { v } else { n as i64 * v });
        }
        let f = world.alloc::<f64>(2);
        team.prod_reduce(&f, &[2.0, 0.5]);
        assert_eq!(f.local_get(0), 2f64.powi(n as i32));
        assert_eq!(f.local_get(1), 0.5f64.powi(n as i32));
        let bits = world.alloc::<u32>(3);
        let all = (1u32 << n) - 1;
        team.or_reduce(&bits, &[1 << me, 0, 0]);
        assert_eq!(bits.local_get(0), all);
        team.xor_reduce(&bits, &[1 << me, 0b1, 0]);
        assert_eq!(bits.local_get(0), all);
        assert_eq!(bits.local_get(1), (n % 2) as u32);
        team.and_reduce(&bits, &[!(1 << me), u32::MAX, 5]);
        assert_eq!(bits.local_get(0), !all);
        assert_eq!(bits.local_get(2), 5);
        // Scans.
        let scan = world.alloc::<u64>(2);
        team.sum_inscan(&scan, &[me as u64 + 1, 10]);
        assert_eq!(scan.local_get(0), ((me + 1) * (me + 2) / 2) as u64);
        assert_eq!(scan.local_get(1), 10 * (me as u64 + 1));
        team.sum_exscan(&scan, &[me as u64 + 1, 10]);
        assert_eq!(scan.local_get(0), (me * (me + 1) / 2) as u64);
        assert_eq!(scan.local_get(1), 10 * me as u64);
    });
}

#[test]
fn split_teams_translate_and_run_their_own_collectives() {
    multi_pe_hosts(
        "split_teams_translate_and_run_their_own_collectives",
        |world| {
            let all = world.team_world();
            let (me, n) = (all.my_pe(), all.n_pes());
            let sums = world.alloc::<u64>(1);
            // Created and destroyed many times: blocks are released and reused.
            for round in 0..70 {
                let evens = all
                    .split_strided(0, 2, n.div_ceil(2), TeamConfig::default())
                    .expect("split evens");
                // At 1 PE the size is 0: no team, and no error.
                let odds = all
                    .split_strided(1, 2, n / 2, TeamConfig::default())
                    .expect("split odds");
                let team = if me % 2 == 0 {
                    evens.as_ref()
                } else {
                    odds.as_ref()
                }
                .expect("member of one");
                assert_eq!(team.my_pe(), me / 2);
                assert_eq!(team.world_pe(team.my_pe()), me);
                assert_eq!(team.translate_pe(team.my_pe(), &all), Some(me));
                if me % 2 == 0 && n > 1 {
                    assert_eq!(all.translate_pe(1, team), None);
                }
                team.sum_reduce(&sums, &[me as u64 + round]);
                let members: Vec<u64> = (0..n as u64).filter(|p| p % 2 == me as u64 % 2).collect();
                let want: u64 = members.iter().map(|p| p + round).sum();
                assert_eq!(sums.local_get(0), want, "round {round}");
                team.barrier();
                drop(evens);
                drop(odds);
                all.sync();
            }
            // 2-D split: rows of 2.
            let (row, col) = all
                .split_2d(2, TeamConfig::default(), TeamConfig::default())
                .expect("split_2d");
            assert_eq!(row.my_pe(), me % 2);
            assert_eq!(col.my_pe(), me / 2);
            assert_eq!(row.n_pes(), 2.min(n - (me / 2) * 2));
            assert_eq!(col.n_pes(), (n - me % 2).div_ceil(2));
            col.sum_reduce(&sums, &[1]);
            assert_eq!(sums.local_get(0), col.n_pes() as u64);
            // Every PE of this node's memory is mapped, unless shared memory is off (UCX path).
            // The harness's layouts put the PEs on SHMEM_NNODES nodes in equal blocks.
            let nnodes: usize = std::env::var("SHMEM_NNODES").map_or(1, |v| v.parse().unwrap());
            let per_node = n / nnodes;
            let node_of = |pe: usize| pe / per_node;
            let shared = world.team_shared();
            let ucx_only =
                std::env::var("UCX_TLS").is_ok_and(|t| !t.contains("sysv") && !t.contains("posix"));
            assert_eq!(shared.n_pes(), if ucx_only { 1 } else { per_node });
            assert_eq!(shared.world_pe(shared.my_pe()), me);
            // team_ptr: every member of the shared team is mapped here; read its sums copy.
            for pe in 0..shared.n_pes() {
                assert_eq!(node_of(shared.world_pe(pe)), node_of(me));
                let view = shared.ptr(&sums, pe).expect("shared-team PEs are mapped");
                assert_eq!(view.len(), 1);
            }
            let last = all.n_pes() - 1;
            assert_eq!(
                all.ptr(&sums, last).is_some(),
                (!ucx_only && node_of(last) == node_of(me)) || last == me
            );
            world.barrier_all();
        },
    );
}

/// The small-message (mailbox) paths, back to back without barriers: the broadcast ring wraps
/// many times while one PE lags (flow control), reductions and fcollects reuse their slots every
/// other call (parity), and every PE checks every result.
#[test]
fn small_collectives_back_to_back() {
    multi_pe_hosts("small_collectives_back_to_back", small_collectives);
}

/// Teams above 8 members use the binomial tree, recursive doubling (with folding at 13 = 8 + 5)
/// and Bruck instead of the flat exchanges.
#[test]
fn small_collectives_on_larger_teams() {
    multi_pe_at("small_collectives_on_larger_teams", &[9, 13], |world| {
        small_collectives(world);
        float_sums_identical(world);
    });
}

fn small_collectives(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    let b = world.alloc::<u64>(128);
    let zeros = [0u64; 128];
    for it in 0..200usize {
        // A fixed root first (it can run a whole ring ahead of a lagging leaf), then each PE.
        let root = if it < 100 { 0 } else { it % n };
        // 8 bytes up to 1 KiB, the largest eager broadcast.
        let len = [1, 3, 8, 128][it % 4];
        let src: Vec<u64> = (0..len).map(|i| (it * 1000 + i + root) as u64).collect();
        // Now and then one PE lags, so that the others run many broadcasts ahead of it.
        if it % 50 == 7 && me == (n - 1 + it / 50) % n {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mine = if me == root { &src[..] } else { &zeros[..len] };
        team.broadcast(&b, mine, root);
        let mut got = vec![0; len];
        b.local_read(0..len, &mut got);
        assert_eq!(got, src, "broadcast {it} from root {root}");
    }
    let r = world.alloc::<u64>(200);
    let g = world.alloc::<u32>(3 * n);
    let a = world.alloc::<u16>(2 * n);
    for it in 0..100u64 {
        // Reductions of 1 and of 200 elements (two chunks).
        let len = if it % 5 == 0 { 200 } else { 1 };
        let src: Vec<u64> = (0..len).map(|i| it * (me as u64 + 1) + i as u64).collect();
        team.sum_reduce(&r, &src);
        let tri = (n * (n + 1) / 2) as u64;
        for i in 0..len {
            assert_eq!(
                r.local_get(i),
                it * tri + (n * i) as u64,
                "sum {it}, element {i}"
            );
        }
        team.fcollect(&g, &[it as u32, me as u32, 7]);
        for pe in 0..n {
            assert_eq!(g.local_get(3 * pe), it as u32, "fcollect {it}");
            assert_eq!(g.local_get(3 * pe + 1), pe as u32, "fcollect {it}");
        }
        let src: Vec<u16> = (0..2 * n)
            .map(|j| (it as usize * 100 + me * 10 + j / 2) as u16)
            .collect();
        team.alltoall(&a, &src);
        for pe in 0..n {
            for k in 0..2 {
                let want = (it as usize * 100 + pe * 10 + me) as u16;
                assert_eq!(a.local_get(2 * pe + k), want, "alltoall {it} from {pe}");
            }
        }
    }
}

/// A float sum whose value depends on the order of the additions comes out bit-identical on
/// every PE.
#[test]
fn float_reductions_are_identical_on_every_pe() {
    multi_pe_hosts(
        "float_reductions_are_identical_on_every_pe",
        float_sums_identical,
    );
}

fn float_sums_identical(world: &World) {
    let team = world.team_world();
    let (me, n) = (team.my_pe(), team.n_pes());
    let vals: Vec<f64> = (0..64)
        .map(|i| 1e16f64.powi(((me + i) % 3) as i32 - 1) * (1.0 + 0.1 * (me * 7 + i) as f64))
        .collect();
    let sum = world.alloc::<f64>(64);
    team.sum_reduce(&sum, &vals);
    let bits: Vec<u64> = (0..64).map(|i| sum.local_get(i).to_bits()).collect();
    let all = world.alloc::<u64>(64 * n);
    team.fcollect(&all, &bits);
    for pe in 0..n {
        for (i, &b) in bits.iter().enumerate() {
            assert_eq!(all.local_get(pe * 64 + i), b, "PE {pe}, element {i}");
        }
    }
}

/// `alltoall_symmetric` reads its source where it lies: blocks small enough for the mailbox and
/// larger ones (straight into the members' `dest` on one node, puts between hosts), from a view
/// 3 bytes into a symmetric array, into a view 5 bytes in; the source is the same afterwards; a
/// source that is the destination itself (copied first) gives what a private copy gives.
#[test]
fn alltoall_symmetric_reads_the_source_where_it_lies() {
    multi_pe_hosts(
        "alltoall_symmetric_reads_the_source_where_it_lies",
        |world| {
            let team = world.team_world();
            let (me, n) = (team.my_pe(), team.n_pes());
            let val = |from: usize, to: usize, i: usize, it: usize| {
                (from * 131 + to * 17 + i * 7 + it * 3) as u8
            };
            let most = 100_003 * n;
            let src = world.alloc::<u8>(most + 3);
            let dest = world.alloc::<u8>(most + 5);
            for (it, len) in [1usize, 40, 3_001, 100_003].into_iter().enumerate() {
                let mine: Vec<u8> = (0..n * len)
                    .map(|x| val(me, x / len, x % len, it))
                    .collect();
                src.local_write(3..3 + n * len, &mine);
                team.barrier();
                team.alltoall_symmetric(&dest.slice(5..5 + n * len), &src.slice(3..3 + n * len));
                let mut got = vec![0u8; n * len];
                dest.local_read(5..5 + n * len, &mut got);
                for (x, &g) in got.iter().enumerate() {
                    let (from, i) = (x / len, x % len);
                    assert_eq!(
                        g,
                        val(from, me, i, it),
                        "PE {me}: alltoall_symmetric of {len}-byte blocks: byte {i} from PE {from}"
                    );
                }
                src.local_read(3..3 + n * len, &mut got);
                assert!(
                    got == mine,
                    "PE {me}: the source of {len}-byte blocks changed"
                );
            }
            // In place: the source is the destination.
            let k = 2_001;
            let both = world.alloc::<u64>(n * k);
            let mine: Vec<u64> = (0..n * k)
                .map(|x| ((me << 32) | ((x / k) << 20) | (x % k)) as u64)
                .collect();
            both.local_write(.., &mine);
            team.barrier();
            team.alltoall_symmetric(&both, &both);
            for x in 0..n * k {
                let (from, i) = (x / k, x % k);
                assert_eq!(
                    both.local_get(x),
                    ((from << 32) | (me << 20) | i) as u64,
                    "PE {me}: in-place alltoall_symmetric, element {i} from PE {from}"
                );
            }
        },
    );
}

/// `collect` with contributions that come with their counts through the mailbox (up to 256
/// bytes) and larger ones (put into every member's `dest`), mixed in one call and back to back
/// without barriers: empty ones, one element, around the limit, 40 KB; `u32` elements into a
/// view at an odd offset. Every PE
/// checks the total and every element, and that the element after the result is untouched.
#[test]
fn collect_in_and_beyond_the_mailbox() {
    multi_pe_hosts("collect_in_and_beyond_the_mailbox", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let room = 256 / 4;
        // Elements of member `p` in call `it`.
        let len = |p: usize, it: usize| match (p + it) % 5 {
            0 => 0,
            1 => 1,
            2 => room,
            3 => room + 1,
            _ if it.is_multiple_of(2) => 10_007,
            _ => 3,
        };
        let most: usize = (0..n).map(|p| len(p, 4 - p % 5).max(10_007)).sum();
        let dest = world.alloc::<u32>(most + 6);
        let val = |p: usize, i: usize, it: usize| (p << 24 | i << 4 | it) as u32;
        for it in 0..12 {
            let mine: Vec<u32> = (0..len(me, it)).map(|i| val(me, i, it)).collect();
            let total: usize = (0..n).map(|p| len(p, it)).sum();
            dest.local_write(5 + total..6 + total, &[u32::MAX]);
            let view = dest.slice(5..);
            let got_total = team.collect(&view, &mine);
            assert_eq!(got_total, total, "PE {me}: call {it}: total");
            let mut got = vec![0u32; total + 1];
            view.local_read(..total + 1, &mut got);
            let mut at = 0;
            for p in 0..n {
                for i in 0..len(p, it) {
                    assert_eq!(
                        got[at],
                        val(p, i, it),
                        "PE {me}: call {it}: element {i} of PE {p} ({} elements)",
                        len(p, it)
                    );
                    at += 1;
                }
            }
            assert_eq!(got[total], u32::MAX, "PE {me}: call {it}: past the result");
        }
    });
}

/// Strided all-to-alls whose blocks the mailbox takes (packed, exchanged in one step, stored at
/// their stride here) and larger ones (strided puts between two syncs), back to back without
/// barriers so that the two paths follow each other: `u32` elements around the mailbox's limit
/// (`((16 KiB / n) & !63) - 16` bytes a block), strides 3 and 2 and contiguous, into a view at
/// an odd offset. Every PE checks every element it receives, and that the elements between them
/// and the source kept their values.
#[test]
fn alltoalls_in_and_beyond_the_mailbox() {
    multi_pe_hosts("alltoalls_in_and_beyond_the_mailbox", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let eager = (((16384 / n) & !63) - 16) / 4;
        let calls = [
            (1, 3, 2),
            (3, 1, 1),
            (eager - 1, 3, 2),
            (eager, 2, 3),
            (eager + 1, 3, 2),
            (2, 5, 7),
            (10_007, 3, 2),
            (eager, 1, 1),
            (eager + 3, 1, 1),
        ];
        let (gap, junk) = (u32::MAX - 1, u32::MAX);
        let most = calls.iter().map(|&(k, d, _)| n * k * d).max().unwrap_or(0);
        let dest = world.alloc::<u32>(most + 5);
        for (it, &(nel, dst, sst)) in calls.iter().enumerate() {
            let val =
                |from: usize, to: usize, i: usize| (from << 24 | to << 20 | i << 4 | it) as u32;
            let span = |stride: usize| (n * nel - 1) * stride + 1;
            let mut src = vec![junk; span(sst)];
            for k in 0..n * nel {
                src[k * sst] = val(me, k / nel, k % nel);
            }
            let view = dest.slice(5..5 + span(dst));
            view.local_write(.., &vec![gap; span(dst)]);
            let before = src.clone();
            team.alltoalls(&view, dst, &src, sst, nel);
            let mut got = vec![0u32; span(dst)];
            view.local_read(.., &mut got);
            for (x, &g) in got.iter().enumerate() {
                let (k, on) = (x / dst, x % dst == 0);
                let want = if on { val(k / nel, me, k % nel) } else { gap };
                assert_eq!(
                    g, want,
                    "PE {me}: alltoalls of {nel} elements (dst {dst}, sst {sst}): element {x} of dest"
                );
            }
            assert!(src == before, "PE {me}: alltoalls changed its source");
        }
    });
}

/// All-to-alls whose data on the node (every member's source and `dest`, 2 n² blocks) is 8 MiB
/// or more, one after the other in the same size class: there each member learns from its own
/// timings whether to copy with cached or streaming stores (a warm-up with cached ones, a
/// trial of each, then the quicker, with trials of the other now and then), so both kinds
/// deliver here whatever this machine prefers. Odd block lengths, one PE late now and then,
/// every element checked after every call.
#[test]
fn alltoall_that_learns_its_stores() {
    multi_pe_at("alltoall_that_learns_its_stores", &[3, 4], |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        // 2 n² blocks of this length: 9.0 MiB at 3 PEs, 16 MiB at 4.
        let len = 524_289;
        let dest = world.alloc::<u8>(n * len);
        let mut got = vec![0u8; n * len];
        for it in 0..6 {
            let val = |from: usize, to: usize, i: usize| (from * 37 + to * 11 + i * 3 + it) as u8;
            let src: Vec<u8> = (0..n * len).map(|x| val(me, x / len, x % len)).collect();
            if it % 3 == 2 && me == it % n {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            team.alltoall(&dest, &src);
            dest.local_read(.., &mut got);
            for (x, &g) in got.iter().enumerate() {
                let (from, i) = (x / len, x % len);
                if g != val(from, me, i) {
                    panic!(
                        "PE {me}: alltoall {it} of {len}-byte blocks: byte {i} from PE {from} \
                         is {g}, not {}",
                        val(from, me, i)
                    );
                }
            }
        }
    });
}

/// All-to-all around the largest block the mailbox takes (`(16 KiB / n) & !63` less a 16-byte
/// header: 8176 bytes at 2 PEs, 5424 at 3, 4080 at 4, 3248 at 5) and well beyond it, where the
/// blocks go straight into the destinations (on the direct path without syncs, waiting through
/// the team blocks): odd lengths in bytes and in u64s, back to back without barriers (eager and
/// direct ones alternate, so both reuse the same slots), one PE now and then late, a
/// destination that is a view at an odd offset, and blocks large enough for non-temporal
/// stores. Every PE checks every element.
#[test]
fn alltoall_around_the_eager_limit() {
    multi_pe_at("alltoall_around_the_eager_limit", &[2, 3, 4, 5], |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let eager = ((16384 / n) & !63) - 16;
        // Where every member is mapped here, as in this test, blocks above 512 bytes go straight
        // into the `dest`s even though they fit the mailbox (`A2A_EAGER_MAX`): 511 to 513
        // straddle that limit, `eager - 1` to `eager + 1` the mailbox's own (taken only where
        // members are not mapped here).
        // Blocks of two pages and more go up to a page below their end, then top down
        // (`copy_block`): 8193 and 12288 (and the longer ones below) put that split a little
        // or up to a page below the end, in views at two offsets.
        let mut blocks = vec![
            eager - 1,
            eager,
            eager + 1,
            eager + 7,
            12_345,
            3,
            65_537,
            8_193,
            12_288,
            511,
            512,
            513,
        ];
        // 4 MiB + 17: the exchange's sources and destinations (2 n² blocks, 32 MiB and more)
        // outgrow the last-level cache of a 2-core machine, so its copies stream.
        blocks.extend([eager - 1, eager + 1, 100_003, (4 << 20) + 17, eager + 2]);
        let most = blocks.iter().max().copied().unwrap_or(0) * n;
        let dest = world.alloc::<u8>(most + 5);
        for (it, &len) in blocks.iter().enumerate() {
            let val = |from: usize, to: usize, i: usize| (from * 131 + to * 17 + i * 7 + it) as u8;
            // Block j of this PE's source goes to PE j.
            let src: Vec<u8> = (0..n * len).map(|x| val(me, x / len, x % len)).collect();
            if it % 4 == 1 && me == it % n {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // Every other exchange into a view 5 bytes in.
            let at = if it % 2 == 1 { 5 } else { 0 };
            team.alltoall(&dest.slice(at..at + n * len), &src);
            let mut got = vec![0u8; n * len];
            dest.local_read(at..at + n * len, &mut got);
            for (x, &g) in got.iter().enumerate() {
                let (from, i) = (x / len, x % len);
                if g != val(from, me, i) {
                    panic!(
                        "PE {me}: alltoall {it} of {len}-byte blocks: byte {i} from PE {from} is \
                         {g}, not {}",
                        val(from, me, i)
                    );
                }
            }
        }
        // u64 blocks of an odd number of elements on both sides of the limit.
        let e64 = eager / 8;
        let d64 = world.alloc::<u64>(n * (e64 + 9));
        for (it, k) in [e64 - 1, e64, e64 + 1, e64 + 9, e64]
            .into_iter()
            .enumerate()
        {
            let val = |from: usize, to: usize, i: usize| {
                ((from << 40) | (to << 32) | (i << 4) | it) as u64
            };
            let src: Vec<u64> = (0..n * k).map(|x| val(me, x / k, x % k)).collect();
            team.alltoall(&d64, &src);
            for x in 0..n * k {
                assert_eq!(
                    d64.local_get(x),
                    val(x / k, me, x % k),
                    "PE {me}: alltoall of {k} u64s, element {x}"
                );
            }
        }
    });
}

/// Members that pass different lengths to an all-to-all, one small enough for the mailbox and
/// the other not, get a panic naming both lengths instead of waiting for each other.
#[test]
fn alltoall_length_mismatch_is_named() {
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let n = world.n_pes();
        let dest = world.alloc::<u8>(20_000 * n);
        let len = if world.my_pe() == 0 { 100 } else { 20_000 };
        team.alltoall(&dest, &vec![1u8; len * n]);
        unreachable!("the lengths differ");
    }
    for n in [2, 3] {
        let (out, took) = common::launch(
            "alltoall_length_mismatch_is_named",
            n,
            common::Path::Direct,
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("alltoall: team PE") && stderr.contains("bytes for an alltoall"),
            "{n} PEs: {stderr}"
        );
        assert!(took.as_secs_f64() < 20.0, "took {took:?}");
    }
}

/// Members that pass different lengths to a small reduction get a panic that names both lengths
/// (at 2 PEs each sees the other's message and both panic; the job then fails).
#[test]
fn collective_length_mismatch_is_named() {
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let dest = world.alloc::<u64>(4);
        let len = if world.my_pe() == 0 { 2 } else { 3 };
        team.sum_reduce(&dest, &vec![1u64; len]);
        unreachable!("the lengths differ");
    }
    for n in [2, 3] {
        let (out, took) = common::launch(
            "collective_length_mismatch_is_named",
            n,
            common::Path::Direct,
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("sum_reduce: team PE") && stderr.contains("expects 16 bytes"),
            "{n} PEs: {stderr}"
        );
        assert!(took.as_secs_f64() < 20.0, "took {took:?}");
    }
}

/// Members whose lengths put them on different paths of a reduction (one within a mailbox
/// exchange, one beyond: they wait for different things) end the job with a message that says
/// so, instead of hanging it: at 2 PEs 100 and 3000 `u64`s (the direct path from 16 KiB), at 8
/// PEs 200 and 300 (beyond 2 KiB: more than one exchange of the mailbox), either way round.
#[test]
fn lengths_on_both_sides_of_the_reduction_paths_are_named() {
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let dest = world.alloc::<u64>(3000);
        let (few, many) = if world.n_pes() == 2 {
            (100, 3000)
        } else {
            (200, 300)
        };
        let swap = std::env::var("SWAP_LENGTHS").is_ok();
        let len = if (world.my_pe() == 0) != swap {
            few
        } else {
            many
        };
        team.sum_reduce(&dest, &vec![1u64; len]);
        unreachable!("the lengths differ");
    }
    for (n, swap) in [(2, false), (2, true), (8, false), (8, true)] {
        let env: &[(&str, &str)] = if swap { &[("SWAP_LENGTHS", "1")] } else { &[] };
        let (out, took) = common::launch(
            "lengths_on_both_sides_of_the_reduction_paths_are_named",
            n,
            common::Path::Direct,
            env,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("members passed different lengths to a reduction")
                && stderr.contains("more bytes than one exchange of the mailbox holds")
                && stderr.contains("bytes that the mailbox takes in one exchange"),
            "{n} PEs (swapped: {swap}): {stderr}"
        );
        assert!(took.as_secs_f64() < 20.0, "took {took:?}");
    }
}

/// Splits that cannot make a team return values every member can test, never a panic: a size
/// of 0 is `Ok(None)` everywhere, PEs outside the parent or a zero stride are errors, and when
/// every team block is in use the next split is an error on every PE alike (no hang); dropping
/// teams makes splits work again.
#[test]
fn splits_that_cannot_make_a_team_return_errors() {
    multi_pe_at(
        "splits_that_cannot_make_a_team_return_errors",
        &[2, 3, 4],
        |world| {
            let all = world.team_world();
            let n = all.n_pes();
            let cfg = TeamConfig::default();
            assert!(all.split_strided(0, 1, 0, cfg).expect("size 0").is_none());
            let outside = all.split_strided(1, 1, n, cfg).map(|t| t.is_some());
            let msg = format!("{}", outside.expect_err("outside the parent"));
            assert!(msg.contains("outside the parent team of"), "{msg}");
            assert!(all.split_strided(0, 0, 2, cfg).is_err(), "zero stride");
            assert!(all.split_2d(0, cfg, cfg).is_err(), "xrange 0");
            // Take every block.
            let mut teams = Vec::new();
            let err = loop {
                match all.split_strided(0, 1, n, cfg) {
                    Ok(t) => teams.push(t.expect("every PE is a member")),
                    Err(e) => break e,
                }
                assert!(teams.len() <= 64, "more teams than blocks");
            };
            let msg = format!("{err}");
            assert!(msg.contains("no free team block"), "{msg}");
            // Every PE failed at the same count.
            let counts = world.alloc::<u64>(1);
            all.max_reduce(&counts, &[teams.len() as u64]);
            assert_eq!(counts.local_get(0), teams.len() as u64);
            assert!(
                all.split_2d(1, cfg, cfg).is_err(),
                "split_2d with no blocks left"
            );
            teams.clear();
            all.sync();
            let t = all
                .split_strided(0, 1, n, cfg)
                .expect("blocks were released");
            assert_eq!(t.expect("member").n_pes(), n);
        },
    );
}

/// Complex sum and product reductions (C's `shmem_complexd_sum_reduce`, ...), over the world
/// team and in place, checked on every PE against the value computed locally.
#[test]
fn complex_sum_and_prod_reductions() {
    multi_pe_at("complex_sum_and_prod_reductions", &[2, 3, 4], |world| {
        use shmem_core::{Complex32, Complex64};
        let all = world.team_world();
        let (me, n) = (world.my_pe(), world.n_pes());
        let mine = Complex64::new(me as f64 + 1.0, 0.5 * me as f64);
        let sums = world.alloc::<Complex64>(2);
        all.sum_reduce(&sums, &[mine, Complex64::new(1.0, -1.0)]);
        let re: f64 = (1..=n).map(|p| p as f64).sum();
        let im: f64 = (0..n).map(|p| 0.5 * p as f64).sum();
        assert_eq!(sums.local_get(0), Complex64::new(re, im));
        assert_eq!(sums.local_get(1), Complex64::new(n as f64, -(n as f64)));
        // (1 + i)^n by repeated products, in place.
        let prods = world.alloc::<Complex32>(1);
        prods.local_set(0, Complex32::new(1.0, 1.0));
        all.prod_reduce_in_place(&prods);
        let mut want = Complex32::new(1.0, 0.0);
        for _ in 0..n {
            want = Complex32::new(want.re - want.im, want.re + want.im);
        }
        assert_eq!(prods.local_get(0), want);
    });
}

#[test]
fn collectives_on_one_node_send_no_ucx_message() {
    // Every PE of a node maps the others' team segments whatever UCX_TLS says: on one node the
    // barriers and the small collectives send no UCX message, even over UCX_TLS=tcp,self (where
    // the heap itself goes through UCX); on two hosts they do.
    multi_pe_hosts("collectives_on_one_node_send_no_ucx_message", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        let nodes: usize = std::env::var("SHMEM_NNODES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let sum = world.alloc::<u64>(1);
        let all = world.alloc::<u64>(n);
        let b = world.alloc::<u64>(4);
        world.barrier_all();
        let before = shmem_ucx::am_sends_total();
        for round in 0..20u64 {
            world.barrier_all();
            team.sum_reduce(&sum, &[round + me as u64]);
            let want = round * n as u64 + (n * (n - 1) / 2) as u64;
            assert_eq!(sum.local_get(0), want, "sum in round {round}");
            team.fcollect(&all, &[round * 100 + me as u64]);
            for pe in 0..n {
                assert_eq!(
                    all.local_get(pe),
                    round * 100 + pe as u64,
                    "fcollect {round}"
                );
            }
            let root = round as usize % n;
            let src = [round, root as u64, 7, 9];
            team.broadcast(&b, if me == root { &src } else { &[0; 4] }, root);
            assert_eq!(b.local_get(1), root as u64, "broadcast {round}");
            assert_eq!(b.local_get(0), round, "broadcast {round}");
        }
        let sent = shmem_ucx::am_sends_total() - before;
        if nodes == 1 {
            assert_eq!(
                sent, 0,
                "PE {me}: collectives on one node sent {sent} UCX messages"
            );
        } else {
            assert!(
                sent > 0,
                "PE {me}: collectives across {nodes} hosts sent no UCX message"
            );
        }
    });
}

/// fcollect of blocks larger than the mailboxes hold, which go straight into every member's
/// `dest`: by stores on one node (over UCX_TLS=tcp,self too), by UCX puts across hosts. Odd
/// lengths, 64 KiB, 200,003 bytes, and 6 MiB + 5 (the members' `dest`s and sources, 36 MiB and
/// more, outgrow the last-level cache of a 2-core machine: the stores stream).
#[test]
fn large_fcollect_by_stores_and_puts() {
    multi_pe_hosts("large_fcollect_by_stores_and_puts", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        for len in [4081usize, 12_345, 65_536, 200_003, (6 << 20) + 5] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + me * 31 + len) as u8).collect();
            let all = world.alloc::<u8>(len * n);
            team.fcollect(&all, &src);
            let mut got = vec![0u8; len * n];
            all.local_read(.., &mut got);
            for pe in 0..n {
                let block = &got[pe * len..(pe + 1) * len];
                if let Some(i) = (0..len).find(|&i| block[i] != (i * 7 + pe * 31 + len) as u8) {
                    panic!(
                        "PE {me}: fcollect of {len} bytes: byte {i} of PE {pe}'s block is {}",
                        block[i]
                    );
                }
            }
            drop(all);
        }
    });
}

/// Members that pass different lengths to a large fcollect panic before any block moves,
/// however the lengths differ: both large (the range of lengths is named), or one small enough
/// for a single message (the kinds differ). Without the check a member could wait for a block
/// that never comes, or write past the end of another's block.
#[test]
fn fcollect_with_different_lengths_panics() {
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let team = world.team_world();
        let mine: usize = std::env::var("PE0_LEN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let len = if world.my_pe() == 0 { mine } else { 300_000 };
        let all = world.alloc::<u8>(300_000 * world.n_pes());
        team.fcollect(&all, &vec![1u8; len]);
        unreachable!("the lengths differ");
    }
    for path in common::Path::ALL {
        for (n, pe0, want) in [
            (2, "200000", "between 200000 and 300000 elements"),
            (3, "200000", "between 200000 and 300000 elements"),
            (2, "100", "an fcollect"),
        ] {
            let (out, took) = common::launch(
                "fcollect_with_different_lengths_panics",
                n,
                path,
                &[("PE0_LEN", pe0)],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{stderr}");
            assert!(
                stderr.contains("fcollect: ") && stderr.contains(want),
                "{path:?}, {n} PEs, PE 0 with {pe0} bytes: {stderr}"
            );
            assert!(took.as_secs_f64() < 20.0, "took {took:?}");
        }
    }
}

/// A PE may use its `dest` after a collective returns until it calls the next one, with no
/// barrier: no member writes another's `dest` before that one has called (more than OpenSHMEM
/// promises, which leaves it to the program to make every `dest` ready before any PE calls).
/// One PE at a time reads its result slowly (half, a pause, the other half) while the others
/// go straight on to the next collective, which writes other values into the same `dest`:
/// broadcasts, fcollects, collects, reductions, all-to-alls (private and symmetric sources)
/// and strided all-to-alls, each small enough for the mailbox and large enough to go straight
/// into the `dest`s. If a member wrote early, the slow PE's second half would hold the next
/// call's values.
#[test]
fn dest_stays_until_its_pe_calls_again() {
    multi_pe_hosts("dest_stays_until_its_pe_calls_again", |world| {
        let team = world.team_world();
        let (me, n) = (team.my_pe(), team.n_pes());
        // Elements (u64) of a small and a large broadcast or reduction, and per member of a
        // small and a large fcollect, collect or all-to-all.
        let (small, large, block) = (100, 40_000, 2_049);
        let most = (n * block + n * n).max(large);
        let dest = world.alloc::<u64>(most);
        // Two symmetric sources for the symmetric all-to-all, filled once: consecutive calls
        // alternate between them, so that no call rewrites a source another PE may still read.
        let sym = [world.alloc::<u64>(n * block), world.alloc::<u64>(n * block)];
        for (s, src) in sym.iter().enumerate() {
            let vals: Vec<u64> = (0..n * block)
                .map(|x| ((s as u64) << 56) | (((me * n + x / block) << 24) | (x % block)) as u64)
                .collect();
            src.local_write(.., &vals);
        }
        team.barrier();
        let mut step = 0usize;
        // Reads `dest[..len]` (slowly on this call's slow PE) and checks every element that
        // `want` gives a value for.
        let mut check = |what: &str, len: usize, want: &dyn Fn(usize) -> Option<u64>| {
            let mut got = vec![0u64; len];
            let half = len / 2;
            dest.local_read(..half, &mut got[..half]);
            if step % n == me {
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
            dest.local_read(half..len, &mut got[half..]);
            for (i, &g) in got.iter().enumerate() {
                if let Some(w) = want(i).filter(|&w| w != g) {
                    panic!(
                        "PE {me}: {what} (call {step}, slow PE {}): element {i} of {len} is \
                         {g:#x}, not {w:#x}: written before this PE called again",
                        step % n
                    );
                }
            }
            step += 1;
        };
        for it in 0..3u64 {
            let v = |from: usize, to: usize, i: usize| {
                (it << 48) | (((from * n + to) << 24) | i) as u64
            };
            for len in [small, large] {
                let root = (it as usize + len) % n;
                let src: Vec<u64> = (0..len).map(|i| v(root, 0, i)).collect();
                team.broadcast(&dest.slice(..len), &src, root);
                check("broadcast", len, &|i| Some(v(root, 0, i)));

                let mine: Vec<u64> = (0..len).map(|i| v(me, 0, i)).collect();
                team.sum_reduce(&dest.slice(..len), &mine);
                let sum = |i: usize| (0..n).map(|p| v(p, 0, i)).sum::<u64>();
                check("sum_reduce", len, &|i| Some(sum(i)));
            }
            for per in [8, block] {
                let mine: Vec<u64> = (0..per).map(|i| v(me, 0, i)).collect();
                team.fcollect(&dest.slice(..n * per), &mine);
                check("fcollect", n * per, &|x| Some(v(x / per, 0, x % per)));

                // Member p contributes `per + p` elements.
                let mine: Vec<u64> = (0..per + me).map(|i| v(me, 0, i)).collect();
                let total = team.collect(&dest, &mine);
                let start = |p: usize| p * per + p * p.saturating_sub(1) / 2;
                let owner = |x: usize| (0..n).rev().find(|&p| start(p) <= x).unwrap_or(0);
                check("collect", total, &|x| {
                    let p = owner(x);
                    Some(v(p, 0, x - start(p)))
                });

                let mine: Vec<u64> = (0..n * per).map(|x| v(me, x / per, x % per)).collect();
                team.alltoall(&dest.slice(..n * per), &mine);
                check("alltoall", n * per, &|x| Some(v(x / per, me, x % per)));

                // Every other element of the destination.
                let nel = per / 2;
                let mine: Vec<u64> = (0..n * nel).map(|x| v(me, x / nel, x % nel)).collect();
                team.alltoalls(&dest.slice(..2 * n * nel), 2, &mine, 1, nel);
                check("alltoalls", 2 * n * nel, &|x| {
                    (x % 2 == 0).then(|| v(x / 2 / nel, me, x / 2 % nel))
                });
            }
            let s = (it % 2) as usize;
            team.alltoall_symmetric(&dest.slice(..n * block), &sym[s]);
            check("alltoall_symmetric", n * block, &|x| {
                Some(((s as u64) << 56) | (((x / block * n + me) << 24) | (x % block)) as u64)
            });
        }
    });
}
