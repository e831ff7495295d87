//! The progress thread: over tcp, atomics are carried out by the target's progress engine, so a
//! target that computes without calling the library stalls them, unless its progress thread
//! serves them. PE 0 times 100 `fetch_add`s on a PE that spins for 1.5 s; and puts, a fence
//! and a flag reach a PE that computes, the sender's quiet returning within milliseconds.

use shmem_testkit as common;

use common::Path;
use shmem_core::prelude::*;
use std::time::{Duration, Instant};

const BUSY: Duration = Duration::from_millis(1500);

/// The PE body: `busy` computes, PE 0 times atomics on it and prints the slowest.
fn atomics_to_a_busy_pe(busy: usize) {
    let world = shmem_core::init().expect("init");
    let me = world.my_pe();
    let counter = world.alloc::<u64>(1);
    let busy_now = world.alloc::<u64>(1);
    world.barrier_all();
    if me == busy {
        // Tell PE 0, make sure it got there, then compute without calling the library.
        busy_now.p(0, 0, 1);
        world.quiet();
        let t0 = Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < BUSY {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    } else if me == 0 {
        busy_now.wait_until(0, Cmp::Ge, 1);
        // The busy PE has left the library (a scheduler hiccup only delays it further).
        std::thread::sleep(Duration::from_millis(20));
        let t0 = Instant::now();
        let mut slowest = Duration::ZERO;
        for i in 0..100 {
            let t = Instant::now();
            let old = counter.at(busy, 0).fetch_add(1);
            slowest = slowest.max(t.elapsed());
            assert_eq!(old, i);
        }
        println!(
            "<atomics total_us={} slowest_us={}>",
            t0.elapsed().as_micros(),
            slowest.as_micros()
        );
    }
    world.barrier_all();
    if me == busy {
        assert_eq!(counter.local_get(0), 100);
    }
}

fn slowest_us(stdout: &str) -> u128 {
    stdout
        .split("slowest_us=")
        .nth(1)
        .and_then(|r| r.split('>').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("PE 0 printed no timing: {stdout}"))
}

fn check(out: &std::process::Output, what: &str) -> u128 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
    let us = slowest_us(&stdout);
    eprintln!("{what}: slowest operation {us} µs");
    us
}

#[test]
fn atomics_to_a_busy_pe_on_another_host_complete_promptly() {
    if common::is_pe() {
        // PE 2 is on the second host: its atomics travel over tcp.
        return atomics_to_a_busy_pe(2);
    }
    // Without root: skipped, with a SKIPPED line on stderr (SHMEM_TEST_REQUIRE_ROOT=1 fails).
    let Some((out, _)) = common::launch_two_hosts(
        "atomics_to_a_busy_pe_on_another_host_complete_promptly",
        Path::Direct,
    ) else {
        return;
    };
    // The progress thread is on by default when the job spans hosts.
    let us = check(&out, "two hosts, default settings");
    assert!(us < 300_000, "an atomic waited {us} µs for a busy PE");
}

#[test]
fn the_progress_thread_serves_atomics_while_the_target_computes() {
    if common::is_pe() {
        return atomics_to_a_busy_pe(1);
    }
    let name = "the_progress_thread_serves_atomics_while_the_target_computes";
    // By default on one host over tcp too (UCX_TLS without shared memory: no peer is mapped).
    for (n, env) in [(2, &[][..]), (3, &[("SHMEM_PROGRESS_THREAD", "on")][..])] {
        let (out, _) = common::launch(name, n, Path::Ucx, env);
        let with_thread = check(&out, &format!("{n} PEs on one host over tcp, {env:?}"));
        assert!(
            with_thread < 300_000,
            "an atomic waited {with_thread} µs for a busy PE"
        );
    }
    // Without the thread the same atomic waits for the target to finish computing: this is what
    // the thread is for (and shows that this test can tell the difference).
    let off = [("SHMEM_PROGRESS_THREAD", "off")];
    let (out, _) = common::launch(name, 2, Path::Ucx, &off);
    let without = check(&out, "one host over tcp, SHMEM_PROGRESS_THREAD=off");
    assert!(
        without > 500_000,
        "without a progress thread an atomic took only {without} µs: the target was not busy?"
    );
}

/// The PE body: PE 0 computes without calling the library; PE 1 puts data, fences, puts a
/// flag and quiets, timing it; PE 0 then finds both.
fn puts_to_a_busy_pe() {
    let world = shmem_core::init().expect("init");
    let me = world.my_pe();
    let data = world.alloc::<u64>(16);
    let flag = world.alloc::<u64>(1);
    let busy_now = world.alloc::<u64>(1);
    world.barrier_all();
    if me == 0 {
        busy_now.p(1, 0, 1);
        world.quiet();
        let t0 = Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < BUSY {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        assert_eq!(
            flag.local_get(0),
            1,
            "the flag had not landed after {BUSY:?}"
        );
        assert_eq!(data.local_get(15), 15 * 7);
    } else if me == 1 {
        busy_now.wait_until(0, Cmp::Ge, 1);
        std::thread::sleep(Duration::from_millis(20));
        let t = Instant::now();
        let values: Vec<u64> = (0..16).map(|i| i * 7).collect();
        data.put(0, 0..16, &values);
        world.fence();
        flag.p(0, 0, 1);
        world.quiet();
        println!("<puts slowest_us={}>", t.elapsed().as_micros());
    }
    world.barrier_all();
}

#[test]
fn puts_reach_a_pe_that_computes_by_default_on_every_path() {
    if common::is_pe() {
        return puts_to_a_busy_pe();
    }
    let name = "puts_reach_a_pe_that_computes_by_default_on_every_path";
    for (n, path) in [(2, Path::Ucx), (3, Path::Ucx), (2, Path::Direct)] {
        let (out, _) = common::launch(name, n, path, &[]);
        let us = check(
            &out,
            &format!("{n} PEs on one host, {path:?} path: put, fence, flag, quiet"),
        );
        assert!(
            us < 300_000,
            "the sender's quiet waited {us} µs for a busy PE"
        );
    }
    for path in Path::ALL {
        if let Some((out, _)) = common::launch_hosts(name, 2, 2, path) {
            let us = check(
                &out,
                &format!("2 hosts x 2 PEs, {path:?} path: put, fence, flag, quiet"),
            );
            assert!(
                us < 300_000,
                "the sender's quiet waited {us} µs for a busy PE"
            );
        }
    }
}
