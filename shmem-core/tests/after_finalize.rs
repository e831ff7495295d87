//! Handles that outlive the `World`: every handle made from a `#[symmetric]` static (`Remote`,
//! `PeerView`, `LockRef`, `Signal`, the wait sets, the static's own methods) panics with "used
//! after the World was dropped" instead of touching freed memory, on the direct path and through
//! UCX, also while another thread is using it as the `World` drops. (Handles made from the `World`
//! itself, heap arrays, teams and contexts, borrow it: the compiler rejects their use after the
//! drop, see `ui-tests`.)

use shmem_testkit as common;

use common::{Path, is_pe, launch};
use shmem_core::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

#[symmetric]
static COUNTER: u64 = 0;
#[symmetric]
static ARR: [u64; 4] = [0; 4];
#[symmetric]
static L: Lock = Lock::new();
#[symmetric]
static SIG: u64 = 0;

const MESSAGE: &str = "used after the World was dropped";

/// Runs `f`, which must panic with [`MESSAGE`].
#[track_caller]
fn expect_stale<R>(what: &str, f: impl FnOnce() -> R) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("{what} after the World was dropped did not panic"),
        Err(e) => {
            let text = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(
                text.contains(MESSAGE),
                "{what} after the World was dropped panicked with {text:?}"
            );
        }
    }
}

fn pe_body() {
    let world = shmem_core::init().expect("init");
    let (me, n) = (world.my_pe(), world.n_pes());
    let right = (me + 1) % n;

    // Every kind of handle a static gives, made and used while the World lives.
    let remote = COUNTER.at(right);
    let elem = ARR.at(right, 1);
    let view = ARR
        .peer_slice(me)
        .expect("a PE's own copy is always mapped");
    let lock = L.lock_ref();
    let sig = SIG.signal();
    remote.inc();
    elem.add(2);
    drop(lock.lock());
    world.barrier_all();
    assert_eq!(COUNTER.local(), 1);
    assert_eq!(view.read(1), 2);

    // A thread that keeps using a static while the World drops ends with the same panic (the
    // memory it writes stays mapped, so the race is harmless).
    let started = AtomicBool::new(false);
    std::thread::scope(|s| {
        let t = s.spawn(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let mut i = 0u64;
                loop {
                    ARR.p(me, 3, i);
                    started.store(true, Ordering::Release);
                    i += 1;
                }
            }))
        });
        while !started.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        drop(world);
        let outcome = t.join().expect("the thread's panic is caught inside it");
        assert!(
            outcome.is_err(),
            "the racing thread stopped without a panic"
        );
    });

    expect_stale("Remote::inc", || remote.inc());
    expect_stale("Remote::fetch", || elem.fetch());
    expect_stale("Remote::get", || elem.get());
    expect_stale("PeerView::read", || view.read(0));
    expect_stale("PeerView::write", || view.write(0, 1));
    expect_stale("LockRef::lock", || drop(lock.lock()));
    expect_stale("LockRef::try_lock", || lock.try_lock().is_some());
    expect_stale("LockRef::home_pe", || lock.home_pe());
    expect_stale("Signal::fetch", || sig.fetch());
    expect_stale("Signal::wait_until", || sig.wait_until(Cmp::Ge, 0));
    expect_stale("Signal::set", || sig.set(right, 1));
    expect_stale("WaitArray::test", || ARR.test(0, Cmp::Ge, 0));
    expect_stale("WaitSet::test_all", || ARR.test_all(None, Cmp::Ge, 0));
    expect_stale("WaitSet::wait_until_any", || {
        ARR.wait_until_any(None, Cmp::Ge, 0)
    });
    expect_stale("put", || ARR.put(right, 0..1, &[1]));
    expect_stale("get", || {
        let mut b = [0];
        ARR.get(right, 0..1, &mut b)
    });
    expect_stale("iput", || ARR.iput(right, 0..4, 2, &[1, 2], 1));
    expect_stale("g", || ARR.g(right, 0));
    expect_stale("local_get", || ARR.local_get(0));
    expect_stale("put_value", || COUNTER.put_value(right, 5));
    expect_stale("local", || COUNTER.local());
    expect_stale("static lock", || drop(L.lock()));
    assert!(matches!(
        shmem_core::init(),
        Err(shmem_core::Error::Finalized)
    ));
    use std::io::Write;
    let _ = std::io::stdout().write_all(format!("<stale-ok {me}>\n").as_bytes());
}

#[test]
fn handles_from_statics_panic_after_the_world_is_dropped() {
    if is_pe() {
        pe_body();
        return;
    }
    for n in [1, 2, 3] {
        for path in Path::ALL {
            let (out, took) = launch(
                "handles_from_statics_panic_after_the_world_is_dropped",
                n,
                path,
                &[],
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{n} PEs, {path:?} path ({took:?}): {}\n{stdout}\n{stderr}",
                out.status
            );
            for pe in 0..n {
                assert!(
                    stdout.contains(&format!("<stale-ok {pe}>")),
                    "{n} PEs, {path:?}: PE {pe} did not finish\n{stdout}\n{stderr}"
                );
            }
        }
    }
}
