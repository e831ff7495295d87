//! `shmemrun --hosts` on 4 and 8 hosts made of network namespaces joined by a bridge
//! (`scripts/netns-hosts.sh up TAG N`, which needs root: without it these tests are skipped with
//! a `SKIPPED` line on stderr, or fail when `SHMEM_TEST_REQUIRE_ROOT` is set). Each job runs
//! [`exchange`] on every PE, on both paths (the default environment: PEs of one host reach each
//! other directly, the other hosts over TCP; and `UCX_TLS=tcp,self`), and no process may be left
//! on the hosts after it (`shmem_testkit::launch_hosts` checks).

use shmem_testkit as common;

use shmem_core::prelude::*;

/// Elements every PE puts to every other PE.
const BLOCK: usize = 96;

/// Elements of the broadcast.
const BCAST_LEN: usize = 1000;

/// Element `i` of the block that PE `from` puts to PE `to`: distinct for every triple.
fn value(from: usize, to: usize, i: usize) -> u64 {
    ((from as u64) << 40) | ((to as u64) << 20) | i as u64
}

fn var(name: &str) -> usize {
    let v = std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    v.parse()
        .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
}

/// This host's boot id (the one `netns-hosts.sh exec` mounts), as a number: its first 16 hex
/// digits.
fn boot_id() -> u64 {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let hex: String = id
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    u64::from_str_radix(&hex, 16).unwrap()
}

/// The PE program, with values checked exactly on every PE: block placement (the node of every
/// PE, and a boot id of its own on every host, which UCX takes for the machine), a block from
/// every PE to every other one (put, then checked in place after a barrier and read back by the
/// sender with get), a sum reduction, and a broadcast from the last PE (on the last host).
fn exchange(world: &World) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let team = world.team_world();

    // Placement: `--hosts h1:k,h2:k,...` puts PEs k*j .. k*(j+1) on host j.
    let nodes = var("SHMEM_NNODES");
    assert_eq!(n % nodes, 0, "{n} PEs on {nodes} nodes");
    let per_host = n / nodes;
    assert_eq!(var("SHMEM_NODE"), me / per_host, "node of PE {me}");
    let boots = world.alloc::<u64>(n);
    team.fcollect(&boots, &[boot_id()]);
    let mut boot = vec![0u64; n];
    boots.local_read(.., &mut boot);
    for p in 0..n {
        for q in 0..n {
            assert_eq!(
                boot[p] == boot[q],
                p / per_host == q / per_host,
                "boot ids of PEs {p} and {q}: {boot:x?}"
            );
        }
    }

    // A block from every PE to every other: PE `from`'s lands at block `from` of the target.
    let inbox = world.alloc::<u64>(n * BLOCK);
    for off in 1..n {
        let to = (me + off) % n;
        let data: Vec<u64> = (0..BLOCK).map(|i| value(me, to, i)).collect();
        inbox.put(to, me * BLOCK..(me + 1) * BLOCK, &data);
    }
    world.barrier_all();
    let mut got = vec![0u64; n * BLOCK];
    inbox.local_read(.., &mut got);
    for from in 0..n {
        let want: Vec<u64> = if from == me {
            vec![0; BLOCK]
        } else {
            (0..BLOCK).map(|i| value(from, me, i)).collect()
        };
        assert_eq!(
            got[from * BLOCK..(from + 1) * BLOCK],
            want[..],
            "PE {me}: the block from PE {from}"
        );
    }
    // And what this PE put, read back from every other PE.
    let mut back = vec![0u64; BLOCK];
    for off in 1..n {
        let to = (me + off) % n;
        inbox.get(to, me * BLOCK..(me + 1) * BLOCK, &mut back);
        let want: Vec<u64> = (0..BLOCK).map(|i| value(me, to, i)).collect();
        assert_eq!(back, want, "PE {me}: its block read back from PE {to}");
    }

    // Sums over every PE: 1..=n, their squares, and the node numbers.
    let sums = world.alloc::<u64>(3);
    let k = me as u64 + 1;
    team.sum_reduce(&sums, &[k, k * k, (me / per_host) as u64]);
    let (n64, per64, nodes64) = (n as u64, per_host as u64, nodes as u64);
    let want = [
        n64 * (n64 + 1) / 2,
        n64 * (n64 + 1) * (2 * n64 + 1) / 6,
        per64 * nodes64 * (nodes64 - 1) / 2,
    ];
    let mut got = [0u64; 3];
    sums.local_read(.., &mut got);
    assert_eq!(got, want, "PE {me}: sums");

    // A broadcast from the last PE.
    let root = n - 1;
    let payload: Vec<u64> = (0..BCAST_LEN as u64).map(|i| i * i + root as u64).collect();
    let dest = world.alloc::<u64>(BCAST_LEN);
    let source = if me == root {
        payload.clone()
    } else {
        vec![0; BCAST_LEN]
    };
    team.broadcast(&dest, &source, root);
    let mut got = vec![0u64; BCAST_LEN];
    dest.local_read(.., &mut got);
    assert_eq!(got, payload, "PE {me}: broadcast from PE {root}");
    world.barrier_all();
}

#[test]
fn exchange_on_2_hosts_x_3_pes() {
    common::multi_pe_on_hosts("exchange_on_2_hosts_x_3_pes", &[(2, 3)], exchange);
}

#[test]
fn exchange_on_4_hosts_x_2_pes() {
    common::multi_pe_on_hosts("exchange_on_4_hosts_x_2_pes", &[(4, 2)], exchange);
}

#[test]
fn exchange_on_8_hosts_x_2_pes() {
    common::multi_pe_on_hosts("exchange_on_8_hosts_x_2_pes", &[(8, 2)], exchange);
}

#[test]
fn exchange_on_4_hosts_x_3_pes() {
    common::multi_pe_on_hosts("exchange_on_4_hosts_x_3_pes", &[(4, 3)], exchange);
}
