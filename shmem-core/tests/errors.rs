//! Bad input: each case gets a clear error or panic message naming the values, before any byte
//! moves, on real multi-PE jobs.

use common::unix_nanos;
use shmem_testkit as common;

use common::multi_pe_at;
use shmem_core::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[symmetric]
static TARGET: [u32; 16] = [5; 16];

/// Runs `f`, expects a panic, returns its message.
fn panic_message(f: impl FnOnce()) -> String {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    match r {
        Ok(()) => panic!("expected a panic"),
        Err(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }
}

fn expect_panic(f: impl FnOnce(), parts: &[&str]) {
    let msg = panic_message(f);
    for p in parts {
        assert!(msg.contains(p), "panic message {msg:?} lacks {p:?}");
    }
}

#[test]
fn bad_pe_index_range_length_and_stride_are_rejected_before_any_byte_moves() {
    multi_pe_at(
        "bad_pe_index_range_length_and_stride_are_rejected_before_any_byte_moves",
        &[1, 3],
        |world| {
            let n = world.n_pes();
            let me = world.my_pe();
            let a = world.alloc::<u32>(8);
            let nn = n.to_string();
            expect_panic(
                || a.put(n, 0..2, &[1, 2]),
                &[&format!("PE {n} is out of range"), &format!("{nn} PEs")],
            );
            expect_panic(
                || a.p(n + 5, 0, 1),
                &[&format!("PE {} is out of range", n + 5)],
            );
            expect_panic(|| _ = TARGET.g(usize::MAX, 0), &["out of range"]);
            expect_panic(|| a.p(me, 8, 1), &["index 8", "length 8"]);
            expect_panic(|| _ = a.g(me, 100), &["index 100", "length 8"]);
            expect_panic(|| a.put(me, 4..10, &[0; 6]), &["range 4..10", "length 8"]);
            expect_panic(
                || TARGET.put(me, 10..=16, &[0; 7]),
                &["range 10..17", "length 16"],
            );
            #[allow(clippy::reversed_empty_ranges)]
            expect_panic(|| a.put(me, 5..3, &[]), &["range 5..3 is reversed"]);
            expect_panic(
                || a.put(me, 0..4, &[1, 2, 3]),
                &["selects 4 elements", "source has 3"],
            );
            expect_panic(
                || a.get(me, .., &mut [0; 3]),
                &["selects 8 elements", "destination has 3"],
            );
            expect_panic(|| a.iput(me, 0..8, 0, &[1], 1), &["target stride is 0"]);
            expect_panic(
                || a.iput(me, 0..8, 2, &[1, 2, 3, 4], 0),
                &["source stride is 0"],
            );
            expect_panic(
                || a.iput(me, 0..8, 2, &[1, 2, 3], 1),
                &["selects 4 elements", "strided source has 3"],
            );
            expect_panic(
                || a.iget(me, 0..8, 3, &mut [0; 9], 2),
                &["selects 3 elements", "strided destination has 5"],
            );
            world.nbi(|s| {
                expect_panic(|| s.put(&a, n, .., &[0; 8]), &["out of range"]);
            });
            // Nothing above moved a byte.
            for i in 0..8 {
                assert_eq!(a.local_get(i), 0);
            }
            world.barrier_all();
            for i in 0..16 {
                assert_eq!(TARGET.local_get(i), 5);
            }
        },
    );
}

#[test]
fn allocation_sizes_that_differ_are_detected_and_named() {
    multi_pe_at(
        "allocation_sizes_that_differ_are_detected_and_named",
        &[2, 3, 4],
        |world| {
            let (me, n) = (world.my_pe(), world.n_pes());
            let last = n - 1;
            let len = if me == last { 20 } else { 10 };
            let err = world.try_alloc::<u64>(len).expect_err("sizes differ");
            let msg = err.to_string();
            assert!(
                matches!(err, shmem_core::Error::AllocMismatch { .. }),
                "{msg}"
            );
            if me == last {
                assert!(
                    msg.contains(&format!(
                        "PE {last} asked for 160 bytes but PE 0 asked for 80"
                    )),
                    "{msg}"
                );
            } else {
                assert!(
                    msg.contains(&format!(
                        "PE {me} asked for 80 bytes but PE {last} asked for 160"
                    )),
                    "{msg}"
                );
            }
            // The heap is still consistent afterwards.
            let ok = world.alloc::<u64>(4);
            ok.p((me + 1) % n, 0, 9);
            world.barrier_all();
            assert_eq!(ok.local_get(0), 9);
        },
    );
}

#[test]
fn heap_exhaustion_states_requested_and_free_bytes() {
    if !common::is_pe() {
        for path in common::Path::ALL {
            for n in [1, 3] {
                let (out, _) = common::launch(
                    "heap_exhaustion_states_requested_and_free_bytes",
                    n,
                    path,
                    &[("SHMEM_SYMMETRIC_SIZE", "1M")],
                );
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        return;
    }
    let world = shmem_core::init().expect("init");
    let keep = world.alloc::<u8>(1000);
    let err = world
        .try_alloc::<u64>(1 << 20)
        .expect_err("8 MiB does not fit in 1 MiB");
    let msg = err.to_string();
    assert!(
        matches!(err, shmem_core::Error::HeapExhausted { .. }),
        "{msg}"
    );
    assert!(msg.contains("requested 8388608 bytes"), "{msg}");
    assert!(
        msg.contains(&format!("{} bytes free", (1 << 20) - 1024)),
        "{msg}"
    );
    assert!(msg.contains("SHMEM_SYMMETRIC_SIZE"), "{msg}");
    let msg = panic_message(|| drop(world.alloc::<u64>(1 << 20)));
    assert!(msg.contains("requested 8388608 bytes"), "{msg}");
    drop(keep);
}

#[test]
#[should_panic(expected = "call shmem_core::init() first")]
fn use_before_init_panics_with_advice() {
    if common::is_pe() {
        // Only meaningful outside a job: this process never calls init.
        panic!("call shmem_core::init() first");
    }
    TARGET.p(0, 0, 1);
}

#[test]
fn bad_heap_size_is_a_clear_error() {
    if !common::is_pe() {
        for (size, expect) in [
            (
                "lots",
                "SHMEM_SYMMETRIC_SIZE=\"lots\" is invalid: expected a byte count",
            ),
            ("1E", "SHMEM_SYMMETRIC_SIZE=\"1E\" is invalid"),
            (
                "1000T",
                "must be between 1 byte and this machine's physical memory",
            ),
            ("0", "must be between 1 byte"),
        ] {
            let (out, _) = common::launch(
                "bad_heap_size_is_a_clear_error",
                2,
                common::Path::Direct,
                &[("SHMEM_SYMMETRIC_SIZE", size), ("EXPECT", expect)],
            );
            assert!(
                out.status.success(),
                "{size}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        return;
    }
    let want = std::env::var("EXPECT").expect("EXPECT");
    let err = shmem_core::init().expect_err("bad SHMEM_SYMMETRIC_SIZE");
    assert!(err.to_string().contains(&want), "{err}");
}

/// The PE body of the failing-PE tests: PE 1 prints the time and panics after 200 ms while the
/// others wait for it in a barrier.
fn pe_1_panics_while_the_others_wait() {
    let world = shmem_core::init().expect("init");
    if world.my_pe() == 1 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        eprintln!("<panic-at {}>", unix_nanos());
        panic!("PE 1 gives up on purpose");
    }
    world.barrier_all();
    unreachable!("the barrier cannot complete without PE 1");
}

/// Seconds from PE 1's panic (the time it printed) to `ended`.
fn secs_since_the_panic(stderr: &str, ended: u128) -> f64 {
    let at: u128 = stderr
        .split("<panic-at ")
        .nth(1)
        .and_then(|rest| rest.split('>').next())
        .and_then(|t| t.parse().ok())
        .expect("PE 1 printed its panic time");
    (ended - at) as f64 / 1e9
}

#[test]
fn a_panicking_pe_ends_the_job_promptly() {
    if common::is_pe() {
        return pe_1_panics_while_the_others_wait();
    }
    for path in common::Path::ALL {
        for n in [2, 3, 8] {
            let (out, _) = common::launch("a_panicking_pe_ends_the_job_promptly", n, path, &[]);
            let ended = unix_nanos();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "job must fail: {stderr}");
            assert_eq!(
                out.status.code(),
                Some(101),
                "the job exits with the panicking PE's status: {stderr}"
            );
            assert!(stderr.contains("PE 1 gives up on purpose"), "{stderr}");
            assert!(
                stderr.contains("shmemrun: PE 1 "),
                "the launcher names the PE: {stderr}"
            );
            let secs = secs_since_the_panic(&stderr, ended);
            assert!(
                secs < 2.0,
                "{n} PEs ({path:?}): the job ended {secs:.2} s after the panic"
            );
            eprintln!(
                "{n} PEs ({path:?}): job ended {:.0} ms after the panic",
                secs * 1e3
            );
        }
    }
}

#[test]
fn a_pe_missing_the_rendezvous_times_out_with_a_clear_error() {
    if common::is_pe() {
        let pe: usize = std::env::var("SHMEM_PE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if pe == 1 {
            // Never reaches init within the timeout.
            std::thread::sleep(std::time::Duration::from_secs(30));
            return;
        }
        let err = shmem_core::init().expect_err("PE 1 never arrives");
        let msg = err.to_string();
        assert!(
            matches!(err, shmem_core::Error::RendezvousTimeout { .. }),
            "{msg}"
        );
        assert!(msg.contains('1'), "names the missing PE: {msg}");
        eprintln!("PE {pe} saw: {msg}");
        std::process::exit(3);
    }
    let (out, took) = common::launch(
        "a_pe_missing_the_rendezvous_times_out_with_a_clear_error",
        3,
        common::Path::Direct,
        &[("SHMEM_INIT_TIMEOUT", "2")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("saw:"), "{stderr}");
    assert!(took.as_secs_f64() < 15.0, "took {took:?}");
}

/// Under mpirun (PMIx start-up) a PE that panics while the others wait in a barrier ends the
/// job too: Open MPI notices the failed rank and stops the rest.
#[test]
fn a_panicking_pe_ends_an_mpirun_job_promptly() {
    if common::is_pe() {
        return pe_1_panics_while_the_others_wait();
    }
    for n in [2, 3] {
        let (out, _) = common::launch_mpirun(
            "a_panicking_pe_ends_an_mpirun_job_promptly",
            n,
            common::Path::Direct,
        );
        let ended = unix_nanos();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "the job must fail: {stderr}");
        assert!(stderr.contains("PE 1 gives up on purpose"), "{stderr}");
        let secs = secs_since_the_panic(&stderr, ended);
        assert!(
            secs < 5.0,
            "{n} PEs under mpirun: the job ended {secs:.2} s after the panic"
        );
        eprintln!(
            "{n} PEs under mpirun: job ended {:.0} ms after the panic",
            secs * 1e3
        );
    }
}
