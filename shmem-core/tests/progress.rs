//! The progress thread: over tcp, atomics are carried out by the target's progress engine, so a
//! target that computes without calling the library stalls them, unless its progress thread
//! serves them. PE 0 times 100 `fetch_add`s on a PE that spins for 1.5 s.

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
    eprintln!("{what}: slowest fetch_add {us} µs");
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
    let on = [("SHMEM_PROGRESS_THREAD", "on")];
    let (out, _) = common::launch(name, 2, Path::Ucx, &on);
    let with_thread = check(&out, "one host over tcp, SHMEM_PROGRESS_THREAD=on");
    assert!(
        with_thread < 300_000,
        "an atomic waited {with_thread} µs for a busy PE"
    );
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
