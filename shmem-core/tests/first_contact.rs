//! Endpoints made at first contact (`SHMEM_CONNECT=lazy`, what `auto` does beyond 256 PEs
//! reached through UCX): every family works when no endpoint exists before the program's own
//! first operation to a PE, from several threads at once too, on the UCX path on one host
//! (every peer through UCX) at 2, 3 and 5 PEs, and on two hosts with two PEs each on both paths.

use shmem_core::prelude::*;
use shmem_testkit as common;

#[symmetric]
static COUNT: u64 = 0;

#[symmetric]
static FLAG: u64 = 0;

/// Every family, each PE's first contact with every peer being the program's own operation.
fn body(world: &shmem_core::World) {
    let (me, n) = (world.my_pe(), world.n_pes());
    let a = world.alloc::<u64>(n * 8);
    // First contact from several threads at once: each thread puts into every PE.
    std::thread::scope(|s| {
        for t in 0..4usize {
            let a = &a;
            s.spawn(move || {
                for k in 0..n {
                    let pe = (me + k) % n;
                    if t % 2 == 0 {
                        a.p(pe, me * 8 + t, (me * 100 + t) as u64);
                    } else {
                        a.put(pe, me * 8 + t..me * 8 + t + 1, &[(me * 100 + t) as u64]);
                    }
                }
            });
        }
    });
    world.barrier_all();
    for src in 0..n {
        for t in 0..4 {
            assert_eq!(a.local_get(src * 8 + t), (src * 100 + t) as u64, "PE {me}");
        }
    }
    // Gets, atomics, strided, signals to every PE.
    for k in 0..n {
        let pe = (me + k) % n;
        assert_eq!(a.g(pe, me * 8), (me * 100) as u64);
        COUNT.at(0).add(1);
        let mut two = [0u64; 2];
        a.iget(pe, me * 8..me * 8 + 4, 2, &mut two, 1);
        assert_eq!(two, [(me * 100) as u64, (me * 100 + 2) as u64]);
    }
    world.barrier_all();
    if me == 0 {
        assert_eq!(COUNT.as_array().local_get(0), (n * n) as u64);
    }
    let right = (me + 1) % n;
    a.put_signal(
        right,
        4..8,
        &[me as u64; 4],
        FLAG.signal(),
        SignalOp::Set(1),
    );
    FLAG.signal().wait_until(Cmp::Eq, 1);
    assert_eq!(a.local_get(7), ((me + n - 1) % n) as u64);
    // A context's endpoints are made at first contact too.
    let ctx = world
        .ctx_create::<Private>(CtxOptions::default())
        .expect("ctx");
    ctx.p(&a, right, me * 8 + 5, 5);
    ctx.quiet();
    world.barrier_all();
    assert_eq!(a.local_get(((me + n - 1) % n) * 8 + 5), 5);
    // A collective over everyone.
    let team = world.team_world();
    let all = world.alloc::<i64>(n);
    team.fcollect(&all, &[me as i64]);
    assert_eq!(
        (0..n).map(|i| all.local_get(i)).collect::<Vec<_>>(),
        (0..n as i64).collect::<Vec<_>>()
    );
    world.barrier_all();
}

#[test]
fn every_family_works_with_endpoints_made_at_first_contact() {
    const NAME: &str = "every_family_works_with_endpoints_made_at_first_contact";
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        body(&world);
        return;
    }
    let lazy = [("SHMEM_CONNECT", "lazy")];
    let check = |out: std::process::Output, what: &str| {
        assert!(
            out.status.success(),
            "{what}: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for n in [2, 3, 5] {
        let (out, took) = common::launch(NAME, n, common::Path::Ucx, &lazy);
        check(out, &format!("{n} PEs over UCX"));
        eprintln!("{NAME}: {n} PEs, UCX path: {took:?}");
    }
    for path in common::Path::ALL {
        if let Some((out, took)) = common::launch_hosts_env(NAME, (2, 2), path, &lazy) {
            check(out, &format!("2 hosts x 2 PEs, {path:?} path"));
            eprintln!("{NAME}: 2 hosts x 2 PEs, {path:?} path: {took:?}");
        }
    }
}

/// This PE's mapping of the node's start-up table: the inode of the memfd, from
/// `/proc/self/maps` (`None`: not mapped, the PE holds its own copy).
fn table_inode() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
    maps.lines()
        .find(|l| l.contains("memfd:shmem-start-up-table"))
        .and_then(|l| l.split_whitespace().nth(4).map(str::to_string))
}

#[test]
fn the_start_up_table_is_held_once_per_node_and_read_at_first_contact() {
    const NAME: &str = "the_start_up_table_is_held_once_per_node_and_read_at_first_contact";
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        println!(
            "TABLE {} {}",
            world.my_pe(),
            table_inode().unwrap_or_else(|| "none".into())
        );
        // The peers' addresses and keys come from the table at first contact.
        body(&world);
        return;
    }
    // PE number -> inode of the table it maps, from the job's output.
    let tables = |out: &std::process::Output, what: &str| -> Vec<String> {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{what}: {}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines: Vec<(usize, String)> = text
            .lines()
            // (libtest may have written "test NAME ... " on the same line.)
            .filter_map(|l| l.find("TABLE ").map(|at| &l[at + 6..]))
            .map(|l| {
                let (pe, ino) = l.split_once(' ').expect("TABLE line");
                (pe.parse().expect("PE"), ino.to_string())
            })
            .collect();
        lines.sort();
        lines.into_iter().map(|(_, ino)| ino).collect()
    };
    let lazy = [("SHMEM_CONNECT", "lazy")];
    for (n, path) in [(3, common::Path::Direct), (4, common::Path::Ucx)] {
        let (out, _) = common::launch(NAME, n, path, &lazy);
        let t = tables(&out, &format!("{n} PEs, {path:?} path"));
        eprintln!("{NAME}: {n} PEs, {path:?} path: tables {t:?}");
        assert_eq!(t.len(), n, "{t:?}");
        assert!(
            t[0] != "none" && t.iter().all(|i| *i == t[0]),
            "one table: {t:?}"
        );
    }
    // Under mpirun (PMIx) the node's lowest rank shares the table the same way.
    for (n, path) in [(3, common::Path::Direct), (4, common::Path::Ucx)] {
        let (out, _) = common::launch_mpirun(NAME, n, path);
        let t = tables(&out, &format!("{n} PEs under mpirun, {path:?} path"));
        eprintln!("{NAME}: {n} PEs under mpirun, {path:?} path: tables {t:?}");
        assert_eq!(t.len(), n, "{t:?}");
        assert!(
            t[0] != "none" && t.iter().all(|i| *i == t[0]),
            "one table: {t:?}"
        );
    }
    // Two hosts of 3 PEs: one table per host, each mapped by its host's PEs.
    if let Some((out, _)) = common::launch_hosts_env(NAME, (2, 3), common::Path::Ucx, &lazy) {
        let t = tables(&out, "2 hosts x 3 PEs");
        eprintln!("{NAME}: 2 hosts x 3 PEs: tables {t:?}");
        assert_eq!(t.len(), 6, "{t:?}");
        assert!(t[0] != "none" && t[..3].iter().all(|i| *i == t[0]), "{t:?}");
        assert!(t[3] != "none" && t[3..].iter().all(|i| *i == t[3]), "{t:?}");
        assert_ne!(t[0], t[3], "the hosts share one table: {t:?}");
    }
}
