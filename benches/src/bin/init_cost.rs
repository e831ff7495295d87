//! The cost of starting shmem-core on each PE, for benches/python-init.sh, which sets it beside
//! the cost of `from shmem_rs import shmem` (the import, which loads the extension module and
//! its libraries and starts the runtime) in Python (benches/python/init_cost.py).
//!
//! Every PE first sleeps until the wall-clock time `START_AT` (seconds since the epoch, a float,
//! from the environment), so that all PEs begin together however long their processes took to
//! start (Python interpreters take far longer than this binary). Then it execs itself, so that
//! what a Rust program pays before `main` (loading UCX's and PMIx's libraries, their
//! constructors) is counted as the Python import counts it, and times from just before the exec
//! to the end of `init()` (`exec_init_ns`, wall clock; `exec_init_cpu_ns`, the CPU time the
//! process used meanwhile), and `init()` alone (`init_ns`; `init_cpu_ns`). PE 0
//! prints one line per PE and figure, `NAME,PE,NANOSECONDS`, gathered through symmetric arrays.
//!
//! Run: `START_AT=$(date -d '+2 sec' +%s.%N) target/release/shmemrun -n 8 target/release/init_cost`

use shmem_core::prelude::*;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Sleeps until `START_AT` (no sleep when it is unset or past).
fn wait_for_start() {
    let Some(at) = std::env::var("START_AT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    else {
        return;
    };
    let wait = at - now();
    if wait > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
}

/// The CPU time this process has used (all its threads, user and system), in nanoseconds; it
/// carries over the exec.
fn cpu_ns() -> u64 {
    // SAFETY: getrusage writes the zeroed struct it is given; no other memory is involved.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Seconds since the epoch, now.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn main() -> ExitCode {
    let Some(exec_at) = std::env::var("EXEC_AT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    else {
        wait_for_start();
        // SAFETY: one thread (nothing else reads the environment meanwhile).
        unsafe {
            std::env::set_var("EXEC_AT", format!("{:.9}", now()));
            std::env::set_var("EXEC_CPU_NS", cpu_ns().to_string());
        }
        let me = std::env::current_exe().unwrap_or_else(|_| "init_cost".into());
        let err = std::os::unix::process::CommandExt::exec(&mut std::process::Command::new(me));
        eprintln!("init_cost: exec failed: {err}");
        return ExitCode::FAILURE;
    };
    let cpu0 = cpu_ns();
    let t0 = Instant::now();
    let world = match shmem_core::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("init_cost: init failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ns = t0.elapsed().as_nanos() as u64;
    let exec_ns = ((now() - exec_at) * 1e9) as u64;
    let cpu_before: u64 = std::env::var("EXEC_CPU_NS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let cpu1 = cpu_ns();
    let figures = [
        ("init_ns", ns),
        ("exec_init_ns", exec_ns),
        ("exec_init_cpu_ns", cpu1.saturating_sub(cpu_before)),
        ("init_cpu_ns", cpu1.saturating_sub(cpu0)),
    ];
    let k = figures.len();
    let all = world.alloc::<u64>(k * world.n_pes());
    let me = world.my_pe();
    for (i, (_, v)) in figures.iter().enumerate() {
        all.p(0, k * me + i, *v);
    }
    world.barrier_all();
    if me == 0 {
        for pe in 0..world.n_pes() {
            for (i, (name, _)) in figures.iter().enumerate() {
                println!("{name},{pe},{}", all.local_get(k * pe + i));
            }
        }
    }
    ExitCode::SUCCESS
}
