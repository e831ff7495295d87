//! Times an 8-byte `put` + `Endpoint::flush` loop (and a few other operations) over a
//! loopback endpoint (a worker connected to its own address).
//!
//! `cargo run --release -p shmem-ucx --example put_latency [iterations]`; set `UCX_TLS` to
//! choose transports (e.g. `UCX_TLS=self,sysv,posix,cma`).

use std::time::Instant;

use shmem_ucx::{AtomicOp, AtomicSize, Context, ContextParams, Result, ThreadMode};

fn time(name: &str, iters: u32, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    for _ in 0..iters / 10 {
        f()?;
    }
    let t = Instant::now();
    for _ in 0..iters {
        f()?;
    }
    let ns = t.elapsed().as_nanos() as f64 / f64::from(iters);
    println!("{name:<28} {ns:>8.1} ns/op");
    Ok(())
}

fn main() -> Result<()> {
    let iters: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let (a, b, c) = shmem_ucx::version();
    println!("UCX {a}.{b}.{c}, {iters} iterations");
    for mode in [ThreadMode::Single, ThreadMode::Multi] {
        println!("-- worker thread mode {mode:?}");
        let ctx = Context::new(&ContextParams::default())?;
        // SAFETY: only this thread (the main one, which creates it) ever uses the worker and
        // everything made from it, and drops them all before the next round.
        let worker = unsafe { ctx.create_worker_unsynchronized(mode)? };
        let mem = ctx.mem_map_alloc(1 << 20)?;
        // SAFETY: our own worker address and packed key.
        let ep = unsafe { worker.connect(&worker.address()?)? };
        // SAFETY: as above.
        let rkey = unsafe { ep.unpack_rkey(&mem.pack_rkey()?)? };
        // An aligned word inside the 1 MiB region, which stays mapped (`mem`) until the end.
        let dst = mem.address() as u64 + 64;
        let src = 42u64;
        let mut back = 0u64;
        time("put 8 B + ep flush", iters, || {
            // SAFETY: `src` is readable for 8 bytes; `dst` is a word of the key's region.
            unsafe { ep.put((&raw const src).cast(), 8, dst, &rkey)? };
            ep.flush()
        })?;
        time("put 8 B + worker flush", iters, || {
            // SAFETY: as above.
            unsafe { ep.put((&raw const src).cast(), 8, dst, &rkey)? };
            worker.flush()
        })?;
        time("put 8 B (local completion)", iters, || {
            // SAFETY: as above.
            unsafe { ep.put((&raw const src).cast(), 8, dst, &rkey) }
        })?;
        time("get 8 B", iters, || {
            // SAFETY: `back` is writable for 8 bytes and not otherwise used during the call;
            // `dst` is a word of the key's region.
            unsafe { ep.get((&raw mut back).cast(), 8, dst, &rkey) }
        })?;
        time("atomic_post add 64", iters, || {
            // SAFETY: `dst` is an 8-byte aligned word of the key's region.
            unsafe { ep.atomic_post(AtomicOp::Add, 1, AtomicSize::U64, dst, &rkey) }
        })?;
        time("atomic_fetch add 64", iters, || {
            // SAFETY: as above.
            unsafe { ep.atomic_fetch(AtomicOp::Add, 1, 0, AtomicSize::U64, dst, &rkey) }.map(drop)
        })?;
        time("worker progress (idle)", iters, || {
            worker.progress();
            Ok(())
        })?;
        drop(rkey);
        ep.close()?;
    }
    Ok(())
}
