//! Memory follows use, and nothing outlives the job (issue 31).
//!
//! - A PE's symmetric heap costs memory only for the pages touched: with a 2 GiB heap a PE holds
//!   a few pages after `init`, and about what it wrote after a put (measured as the blocks the
//!   kernel allocated to the heap's memfd, here and in the peer that was written).
//! - 4 PEs whose heaps together are more than three times this machine's memory start, put, get
//!   and finish.
//! - A job killed at any moment of its start-up (the launcher or a PE, SIGKILL, at random
//!   delays) leaves `/dev/shm` and the SysV shared-memory table as they were (12 rounds;
//!   `SHMEM_TEST_KILL_ROUNDS` for more).
//! - A PE that touches more than its memory cgroup allows is killed by the kernel, and the job's
//!   message names it, the cause and the heap size.
//!
//! Each runs on the direct path and over `UCX_TLS=tcp,self`.

use shmem_core::prelude::*;
use shmem_testkit as common;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// The bytes of memory the kernel has allocated to this PE's symmetric heap (its memfd).
fn heap_committed() -> u64 {
    for entry in std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
    {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if target
            .to_string_lossy()
            .starts_with("/memfd:shmem-symmetric-heap")
        {
            let meta = std::fs::metadata(entry.path()).expect("stat the heap's memfd");
            return std::os::unix::fs::MetadataExt::blocks(&meta) * 512;
        }
    }
    panic!("no memfd named shmem-symmetric-heap among this PE's descriptors")
}

/// This machine's physical memory in bytes.
fn physical_memory() -> u64 {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    pages as u64 * page as u64
}

/// Runs this test binary's test `name` on `n` PEs on both paths with `env`; asserts success.
fn launch_both_paths(name: &str, counts: &[usize], env: &[(&str, &str)]) {
    for path in common::Path::ALL {
        for &n in counts {
            let (out, took) = common::launch(name, n, path, env);
            assert!(
                out.status.success(),
                "{name} on {n} PEs ({path:?} path) failed: {}\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!("{name}: {n} PEs, {path:?} path: {took:?}");
        }
    }
}

#[test]
fn a_large_heap_costs_only_the_pages_touched() {
    const NAME: &str = "a_large_heap_costs_only_the_pages_touched";
    if !common::is_pe() {
        launch_both_paths(NAME, &[1, 3], &[("SHMEM_SYMMETRIC_SIZE", "2G")]);
        return;
    }
    let world = shmem_core::init().expect("init");
    let (me, n) = (world.my_pe(), world.n_pes());
    let at_init = heap_committed();
    assert!(
        at_init <= 64 * MIB,
        "PE {me}: {at_init} bytes of a 2 GiB heap committed right after init (at most 64 MiB \
         expected)"
    );
    // 4 MiB written by the left neighbour into this PE's copy.
    let len = (4 * MIB / 8) as usize;
    let a = world.alloc::<u64>(len);
    let right = (me + 1) % n;
    let data: Vec<u64> = (0..len as u64).map(|i| i ^ ((me as u64) << 40)).collect();
    a.put(right, .., &data);
    world.barrier_all();
    let left = (me + n - 1) % n;
    let mut back = vec![0u64; len];
    a.get(me, .., &mut back);
    assert!(
        back.iter()
            .enumerate()
            .all(|(i, &v)| v == (i as u64) ^ ((left as u64) << 40)),
        "PE {me}: wrong data from PE {left}"
    );
    let after = heap_committed();
    assert!(
        after >= at_init + 4 * MIB && after <= at_init + 4 * MIB + 64 * MIB,
        "PE {me}: {after} bytes committed after 4 MiB were written into a heap that held \
         {at_init}"
    );
    println!("PE {me}: heap committed {at_init} bytes after init, {after} after a 4 MiB put");
    world.barrier_all();
}

#[test]
fn heaps_larger_than_the_machine_start_and_run() {
    const NAME: &str = "heaps_larger_than_the_machine_start_and_run";
    if !common::is_pe() {
        // Four heaps of 80% of the machine's memory each: 3.2 times what it has.
        let size = (physical_memory() / 10 * 8 / MIB).to_string() + "M";
        launch_both_paths(NAME, &[4], &[("SHMEM_SYMMETRIC_SIZE", &size)]);
        return;
    }
    let world = shmem_core::init().expect("init with a heap of 80% of the machine's memory");
    let (me, n) = (world.my_pe(), world.n_pes());
    let len = (2 * MIB) as usize;
    let a = world.alloc::<u8>(len);
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + me) as u8).collect();
    let right = (me + 1) % n;
    a.put(right, .., &data);
    world.barrier_all();
    let mut back = vec![0u8; len];
    a.get(right, .., &mut back);
    assert!(
        back == data,
        "PE {me}: the 2 MiB read back from PE {right} differ"
    );
    world.barrier_all();
}

/// The names in `/dev/shm` and the ids in the SysV shared-memory table.
fn shared_memory_names() -> BTreeSet<String> {
    let mut names: BTreeSet<String> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| format!("/dev/shm/{}", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    if let Ok(table) = std::fs::read_to_string("/proc/sysvipc/shm") {
        for line in table.lines().skip(1) {
            if let Some(id) = line.split_whitespace().nth(1) {
                names.insert(format!("sysv shmid {id}"));
            }
        }
    }
    names
}

/// The pids of processes (other than this one) whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|&pid| pid != me)
                .filter(|pid| {
                    let stat =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    let zombie = stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'));
                    !zombie
                        && std::fs::read(format!("/proc/{pid}/cmdline"))
                            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_job_killed_during_start_up_leaves_no_shared_memory() {
    const NAME: &str = "a_job_killed_during_start_up_leaves_no_shared_memory";
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let a = world.alloc::<u64>(1 << 16);
        a.put((world.my_pe() + 1) % world.n_pes(), .., &[7u64; 1 << 16]);
        world.barrier_all();
        return;
    }
    let before = shared_memory_names();
    // A small generator seeded from the clock, printed so that a failure can be replayed.
    let mut seed = common::unix_nanos() as u64 | 1;
    eprintln!("{NAME}: seed {seed}");
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // SHMEM_TEST_KILL_ROUNDS=N for a longer run than the suite's.
    let rounds = std::env::var("SHMEM_TEST_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    for round in 0..rounds {
        let path = common::Path::ALL[round % 2];
        let n = 2 + (next() % 3) as usize;
        let delay = Duration::from_millis(next() % 150);
        let kill_launcher = next() % 2 == 0;
        let mut cmd = std::process::Command::new(common::shmemrun());
        cmd.arg("-n")
            .arg(n.to_string())
            .arg("--")
            .arg(std::env::current_exe().expect("test executable"))
            .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env("SHMEM_TEST_AS_PE", "1")
            .env("SHMEM_SYMMETRIC_SIZE", "1G")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        path.apply(&mut cmd);
        let _one = common::one_job_at_a_time();
        let mut job = cmd.spawn().expect("start shmemrun");
        std::thread::sleep(delay);
        let victim = if kill_launcher {
            Some(job.id())
        } else {
            // A PE of this job, if one runs yet (its parent is the launcher).
            processes_with(NAME).into_iter().find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .and_then(|r| r.split_whitespace().nth(1))
                        .is_some_and(|ppid| ppid == job.id().to_string())
                })
            })
        };
        if let Some(pid) = victim {
            // SAFETY: sending a signal to a process of this test.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        let start = Instant::now();
        while job.try_wait().expect("wait for shmemrun").is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "round {round}: the launcher did not end within 30 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Every PE ends too (their launcher's end, or the job's, ends them).
        while !processes_with(NAME).is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "round {round}: PEs left 30 s after the job: {:?}",
                processes_with(NAME)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let after = shared_memory_names();
        let left: Vec<&String> = after.difference(&before).collect();
        assert!(
            left.is_empty(),
            "round {round} ({n} PEs, {path:?} path, SIGKILL to {} after {delay:?}) left shared \
             memory behind: {left:?}",
            if kill_launcher {
                "the launcher"
            } else {
                "a PE"
            }
        );
    }
}

/// A memory cgroup of its own for one test, limited to `limit` bytes, removed on drop; `None`
/// when this machine offers none that this process may create (cgroup v1 `memory` or v2).
struct MemoryCgroup {
    dir: std::path::PathBuf,
}

impl MemoryCgroup {
    fn new(name: &str, limit: u64) -> Option<MemoryCgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let path = path.trim_start_matches('/');
            let (root, limit_file) = if controllers.split(',').any(|c| c == "memory") {
                ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
            } else if controllers.is_empty() {
                ("/sys/fs/cgroup", "memory.max")
            } else {
                continue;
            };
            let dir = std::path::Path::new(root).join(path).join(name);
            let _ = std::fs::remove_dir(&dir);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let group = MemoryCgroup { dir };
            if std::fs::write(group.dir.join(limit_file), limit.to_string()).is_ok() {
                return Some(group);
            }
        }
        None
    }

    /// `cmd` run inside the group (a shell puts itself in, then execs it).
    fn wrap(&self, cmd: &std::process::Command) -> std::process::Command {
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // The group can be removed once its processes are gone.
        for _ in 0..200 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn a_pe_out_of_memory_is_named_with_its_heap_and_the_cause() {
    const NAME: &str = "a_pe_out_of_memory_is_named_with_its_heap_and_the_cause";
    if common::is_pe() {
        let world = shmem_core::init().expect("init");
        let me = world.my_pe();
        let chunk = (16 * MIB) as usize;
        let a = world.alloc::<u8>(64 * chunk);
        if me == 1 {
            // 1 GiB touched, in a group that may hold 256 MiB.
            let data = vec![0x5au8; chunk];
            for i in 0..64 {
                a.put(me, i * chunk..(i + 1) * chunk, &data);
            }
            panic!("PE 1 touched 1 GiB of its heap in a 256 MiB memory cgroup and lived");
        }
        world.barrier_all();
        return;
    }
    let Some(group) = MemoryCgroup::new(&format!("shmem-oom-{}", std::process::id()), 256 * MIB)
    else {
        eprintln!("SKIPPED {NAME}: no memory cgroup can be made here (cgroup v1 or v2, as root)");
        return;
    };
    let before = shared_memory_names();
    for path in common::Path::ALL {
        let mut cmd = std::process::Command::new(common::shmemrun());
        cmd.args(["-n", "2", "--"])
            .arg(std::env::current_exe().expect("test executable"))
            .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env("SHMEM_TEST_AS_PE", "1")
            .env("SHMEM_SYMMETRIC_SIZE", "2G");
        path.apply(&mut cmd);
        let _one = common::one_job_at_a_time();
        let (out, took) = common::run_with_limit(group.wrap(&cmd), Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(137), "{path:?} path: {stderr}");
        for want in [
            "PE 1 ",
            "killed by signal 9 (SIGKILL)",
            "out-of-memory killer",
            "SHMEM_SYMMETRIC_SIZE=2G",
        ] {
            assert!(
                stderr.contains(want),
                "{path:?} path: no {want:?} in:\n{stderr}"
            );
        }
        assert!(
            took < Duration::from_secs(20),
            "{path:?} path: the job took {took:?}"
        );
        eprintln!("{NAME}: {path:?} path: ended in {took:?}");
    }
    let left: Vec<String> = shared_memory_names().difference(&before).cloned().collect();
    assert!(left.is_empty(), "shared memory left behind: {left:?}");
}
