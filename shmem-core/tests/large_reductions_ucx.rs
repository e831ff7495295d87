//! Large reductions where some members are reached through UCX (`coll::large` with
//! `coll::fetch`'s pipelined gets): on hosts (the PEs of a host load from each other, get from
//! the others). Odd PE counts and a team of stride 2, private and symmetric sources, in place,
//! at sizes around the gets' chunk (64 KiB per member) and beyond. Every PE checks every
//! element against values computed here independently. (On one node over `UCX_TLS=tcp,self` the
//! collectives map the members' memory all the same, and load instead of getting:
//! `tcp_reductions.rs`.)
//!
//! Evidence that the path is taken, without timing: on hosts, a 1 MiB reduction sends far fewer
//! of our active messages than the mailbox's 1 KiB slots would.

use shmem_testkit as common;

use common::{multi_pe_at, multi_pe_on_hosts};
use shmem_core::prelude::*;

/// Elements (i64) of the reductions: below, at and past one chunk of gets per member, and a
/// size that no cut divides.
const SIZES: [usize; 4] = [2_100, 8_192, 65_537, 300_007];

/// PE `pe`'s element `i`.
fn v(pe: usize, i: usize) -> i64 {
    ((i as i64).wrapping_mul(2_654_435_761) ^ (pe as i64 * 977)) % 100_003 - 50_000
}

/// The first element where `got` differs from `want(i)`, as a message.
fn check(what: &str, got: &[i64], want: impl Fn(usize) -> i64) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want(i)) {
        panic!(
            "{what}: element {i} of {} is {} instead of {}",
            got.len(),
            got[i],
            want(i)
        );
    }
}

/// Reductions on `team` (whose member `m` is given values `v(m, _)`): private and symmetric
/// sources, in place, at every size.
fn reduce_on(world: &World, team: &Team<'_>, what: &str) {
    let (me, n) = (team.my_pe(), team.n_pes());
    let sum = |i| (0..n).fold(0i64, |a, pe| a.wrapping_add(v(pe, i)));
    let max = |i| (0..n).map(|pe| v(pe, i)).max().unwrap_or(0);
    for len in SIZES {
        let mine: Vec<i64> = (0..len).map(|i| v(me, i)).collect();
        let dest = world.alloc::<i64>(len);
        let mut got = vec![0i64; len];
        // A private source.
        team.sum_reduce(&dest, &mine);
        dest.local_read(.., &mut got);
        check(&format!("{what}: sum of {len}, private"), &got, sum);
        // A symmetric source (as C passes one): the others read it where it lies.
        let src = world.alloc::<i64>(len);
        src.local_write(.., &mine);
        // SAFETY: nothing writes `src` while the reduction reads it.
        team.max_reduce(&dest, unsafe { src.local_slice() });
        dest.local_read(.., &mut got);
        check(&format!("{what}: max of {len}, symmetric"), &got, max);
        // In place, twice (the second on the result: n times the sum).
        dest.local_write(.., &mine);
        team.sum_reduce_in_place(&dest);
        team.sum_reduce_in_place(&dest);
        dest.local_read(.., &mut got);
        check(&format!("{what}: sum in place of {len}"), &got, |i| {
            sum(i).wrapping_mul(n as i64)
        });
        team.sync();
        drop(src);
        drop(dest);
    }
}

/// The world team, then its even PEs (a team of stride 2), on every PE.
fn world_and_stride_two(world: &World) {
    let all = world.team_world();
    reduce_on(world, &all, "world");
    let members = all.n_pes().div_ceil(2);
    let even = all
        .split_strided(0, 2, members, TeamConfig::default())
        .expect("split");
    // Every PE allocates (a collective of the world); only the members reduce.
    match &even {
        Some(t) => reduce_on(world, t, "stride 2"),
        None => {
            // The members' allocations, in their order.
            for len in SIZES {
                let dest = world.alloc::<i64>(len);
                let src = world.alloc::<i64>(len);
                drop(src);
                drop(dest);
            }
        }
    }
    world.barrier_all();
}

#[test]
fn odd_teams_and_stride_two_over_ucx() {
    multi_pe_at(
        "odd_teams_and_stride_two_over_ucx",
        &[3, 5],
        world_and_stride_two,
    );
}

#[test]
fn mixed_mapped_and_remote_members_on_hosts() {
    // 2 x 2: every member has one peer it loads from and two it gets from; 2 x 3: the even team
    // {0, 2, 4} has two members on one host and one on the other.
    multi_pe_on_hosts(
        "mixed_mapped_and_remote_members_on_hosts",
        &[(2, 2), (2, 3)],
        |world| {
            world_and_stride_two(world);
            // Far fewer of our active messages than 1 MiB in 1 KiB mailbox slots (more than a
            // thousand per PE): the syncs' flags, a few per sync.
            let team = world.team_world();
            let len = 1 << 17;
            let dest = world.alloc::<i64>(len);
            let mine: Vec<i64> = (0..len).map(|i| v(team.my_pe(), i)).collect();
            world.barrier_all();
            let before = shmem_ucx::am_sends_total();
            team.sum_reduce(&dest, &mine);
            let sent = shmem_ucx::am_sends_total() - before;
            assert!(
                sent < 200,
                "PE {}: a 1 MiB reduction sent {sent} active messages",
                world.my_pe()
            );
            world.barrier_all();
        },
    );
}
