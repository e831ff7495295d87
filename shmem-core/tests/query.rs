//! Queries (pe_accessible, addr_accessible, peer_slice, version) in real jobs at 1, 2, 3 and 4
//! PEs on both paths, and global_exit ending a job whose other PEs wait in a barrier.

use shmem_testkit as common;

use common::{Path, is_pe, launch, multi_pe_at};
use shmem_core::prelude::*;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const COUNTS: &[usize] = &[1, 2, 3, 4];

#[symmetric]
static TABLE: [u64; 16] = [0; 16];
#[symmetric]
static SCALAR: f64 = 1.5;

fn ucx_only() -> bool {
    std::env::var("UCX_TLS").is_ok_and(|v| v == "tcp,self")
}

#[test]
fn accessibility_and_version() {
    multi_pe_at("accessibility_and_version", COUNTS, |world| {
        let n = world.n_pes();
        assert_eq!(shmem_core::VERSION, (1, 6));
        assert!(shmem_core::VENDOR_STRING.starts_with("shmem-rs"));
        let heap = world.alloc::<u32>(4);
        for pe in 0..n {
            assert!(world.pe_accessible(pe));
            assert!(world.addr_accessible(&TABLE, pe));
            assert!(world.addr_accessible(&SCALAR, pe));
            assert!(world.addr_accessible(&heap, pe));
        }
        for pe in [n, n + 1, usize::MAX] {
            assert!(!world.pe_accessible(pe));
            assert!(!world.addr_accessible(&heap, pe));
        }
        world.barrier_all();
    });
}

#[test]
fn peer_slice_reads_and_writes_peers_on_the_node() {
    multi_pe_at(
        "peer_slice_reads_and_writes_peers_on_the_node",
        COUNTS,
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            let heap = world.alloc::<u32>(8);
            for i in 0..16 {
                TABLE.local_set(i, (me * 100 + i) as u64);
            }
            heap.local_set(7, me as u32 + 1);
            world.barrier_all();
            // Own copy: always mapped.
            let own = TABLE.peer_slice(me).expect("own copy is mapped");
            assert_eq!((own.len(), own.pe()), (16, me));
            assert_eq!(own.read(3), (me * 100 + 3) as u64);
            for pe in 0..n {
                let view = heap.peer_slice(pe);
                if pe != me && ucx_only() {
                    assert!(view.is_none(), "PE {pe} is reached through UCX only");
                    continue;
                }
                let view = view.expect("same node, shared memory");
                assert_eq!(view.read(7), pe as u32 + 1);
                let mut all = [0u32; 8];
                view.copy_to(&mut all);
                assert_eq!(all[7], pe as u32 + 1);
            }
            world.barrier_all();
            // Write through the view (or by put where there is none) into the right neighbour.
            match TABLE.peer_slice(right) {
                Some(v) => v.write(5, 5000 + me as u64),
                None => TABLE.p(right, 5, 5000 + me as u64),
            }
            world.barrier_all();
            assert_eq!(TABLE.local_get(5), 5000 + left as u64);
            world.barrier_all();
        },
    );
}

const GLOBAL_EXIT: &str = "global_exit_ends_the_job_with_its_status";

#[test]
fn global_exit_ends_the_job_with_its_status() {
    if is_pe() {
        let world = shmem_core::init().expect("init");
        if world.my_pe() == 1 {
            std::thread::sleep(Duration::from_millis(100));
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            println!("<global-exit-at {now}>");
            world.global_exit(7);
        }
        // Everybody else waits for PE 1, which never comes.
        world.barrier_all();
        unreachable!(
            "PE {} left a barrier that PE 1 never entered",
            world.my_pe()
        );
    }
    for n in [2, 3, 4] {
        for path in Path::ALL {
            let (out, took) = launch(GLOBAL_EXIT, n, path, &[]);
            let ended = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let ctx = format!("{n} PEs, {path:?} ({took:?})\n{stdout}\n{stderr}");
            assert_eq!(out.status.code(), Some(7), "{ctx}");
            assert!(
                stderr.contains("shmemrun: PE 1 called global_exit(7)"),
                "{ctx}"
            );
            assert!(!stderr.contains("unreachable"), "{ctx}");
            let at: u128 = stdout
                .split("<global-exit-at ")
                .nth(1)
                .and_then(|s| s.split('>').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no time stamp: {ctx}"));
            let lag = ended.saturating_sub(at);
            assert!(
                lag < 2000,
                "the job ended {lag} ms after global_exit: {ctx}"
            );
        }
    }
}

#[test]
fn global_exit_in_a_singleton_exits_with_the_status() {
    if std::env::var_os("QUERY_SINGLETON_EXIT").is_some() {
        let world = shmem_core::init().expect("init");
        world.global_exit(3);
    }
    if is_pe() {
        return;
    }
    let exe = std::env::current_exe().expect("test executable");
    let out = std::process::Command::new(exe)
        .args([
            "global_exit_in_a_singleton_exits_with_the_status",
            "--exact",
            "--nocapture",
        ])
        .env("QUERY_SINGLETON_EXIT", "1")
        .env_remove("SHMEM_RENDEZVOUS")
        .output()
        .expect("run singleton");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

/// The CPUs in a `Cpus_allowed_list` value such as "0-3,8".
fn cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().expect("cpu"), b.parse().expect("cpu"));
        cpus.extend(a..=b);
    }
    cpus
}

/// The CPUs process `pid` (its main thread) may run on, from /proc.
fn allowed_of(pid: u32) -> Vec<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list");
    cpu_list(line)
}

#[test]
fn pes_bind_to_their_own_core_unless_the_host_is_oversubscribed() {
    multi_pe_at(
        "pes_bind_to_their_own_core_unless_the_host_is_oversubscribed",
        COUNTS,
        |world| {
            if std::env::var_os("SHMEM_RENDEZVOUS").is_none() {
                // Started by mpirun (PMIx), which binds its processes itself.
                world.barrier_all();
                return;
            }
            // shmemrun's CPUs (the PE's parent) are the ones its PEs share.
            let launcher = allowed_of(std::os::unix::process::parent_id());
            let local =
                |name: &str| -> usize { std::env::var(name).expect(name).parse().expect(name) };
            let (rank, size) = (local("SHMEM_LOCAL_RANK"), local("SHMEM_LOCAL_SIZE"));
            assert_eq!((rank, size), (world.my_pe(), world.n_pes()), "one host");
            assert_eq!(std::env::var("SHMEM_BIND_TO").as_deref(), Ok("core"));
            // The thread that called init, and the threads it starts after.
            let mine = shmem_launch::affinity::allowed_cpus().expect("sched_getaffinity");
            let later = std::thread::spawn(shmem_launch::affinity::allowed_cpus)
                .join()
                .expect("thread")
                .expect("sched_getaffinity");
            let want = if size <= launcher.len() {
                vec![launcher[rank]]
            } else {
                launcher.clone()
            };
            assert_eq!(
                (&mine, &later),
                (&want, &want),
                "PE {rank} of {size} on a host where shmemrun may use CPUs {launcher:?}"
            );
            world.barrier_all();
        },
    );
}
