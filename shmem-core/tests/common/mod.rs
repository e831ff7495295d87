//! Multi-PE test harness.
//!
//! A test calls [`multi_pe`] with its own name and a body. Run normally, the test launches its own
//! test binary under `shmemrun` for each PE count and each transport path, filtered to just this
//! test, and fails if the job fails. Run as a PE (the harness sets `SHMEM_TEST_AS_PE`), it runs the
//! body, so assertions inside the body execute on every PE of a real job.

#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// PE counts every multi-PE test runs at.
pub const PE_COUNTS: &[usize] = &[1, 2, 3, 4, 8];

/// The two ways PEs reach each other on one machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Load/store into the peer's mapped heap (UCX shared memory, `ucp_rkey_ptr`).
    Direct,
    /// Every transfer through UCX over TCP (`UCX_TLS=tcp,self`).
    Ucx,
}

impl Path {
    pub const ALL: [Path; 2] = [Path::Direct, Path::Ucx];

    pub fn apply(self, cmd: &mut Command) {
        match self {
            Path::Direct => cmd.env_remove("UCX_TLS"),
            Path::Ucx => cmd.env("UCX_TLS", "tcp,self"),
        };
    }
}

/// One job at a time: the machine has 2 cores and jobs of 8 PEs.
static JOBS: Mutex<()> = Mutex::new(());

pub fn shmemrun() -> &'static str {
    env!("CARGO_BIN_EXE_shmemrun")
}

/// True in a process started by the harness as a PE.
pub fn is_pe() -> bool {
    std::env::var_os("SHMEM_TEST_AS_PE").is_some()
}

/// Runs `cmd` to completion, killing it after `limit`.
pub fn run_with_limit(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let t0 = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => (out.expect("wait for job"), t0.elapsed()),
        Err(_) => {
            // SIGINT makes shmemrun end every PE of the job.
            let _ = Command::new("kill")
                .arg("-INT")
                .arg(pid.to_string())
                .status();
            let out = rx
                .recv_timeout(Duration::from_secs(10))
                .ok()
                .and_then(Result::ok);
            panic!(
                "job {cmd:?} did not finish within {limit:?}; output: {:?}",
                out.map(|o| (
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                    String::from_utf8_lossy(&o.stderr).into_owned()
                ))
            );
        }
    }
}

/// Launches this test binary's test `name` as an `n`-PE job on `path`.
pub fn launch(name: &str, n: usize, path: Path, extra_env: &[(&str, &str)]) -> (Output, Duration) {
    let exe = std::env::current_exe().expect("current test executable");
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n").arg(n.to_string()).arg("--").arg(exe).args([
        name,
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd.env("SHMEM_TEST_AS_PE", "1")
        .env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let _guard = JOBS.lock().unwrap_or_else(|p| p.into_inner());
    run_with_limit(cmd, Duration::from_secs(120))
}

/// Runs `body` on every PE of a job, for each PE count in `counts` and both paths. Use as the whole
/// body of a `#[test]` whose name is `name`.
pub fn multi_pe_at(name: &str, counts: &[usize], body: impl FnOnce(&shmem_core::World)) {
    if is_pe() {
        let world = shmem_core::init().expect("shmem_core::init in a test PE");
        let me = world.my_pe();
        body(&world);
        drop(world);
        // One write, so that lines of other PEs cannot split it.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(format!("<pe-done {name} {me}>\n").as_bytes());
        let _ = out.flush();
        return;
    }
    for &n in counts {
        for path in Path::ALL {
            let (out, took) = launch(name, n, path, &[]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{name} failed on {n} PEs, {path:?} path ({took:?}): {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                out.status
            );
            // Every PE must actually have run the body and finalized.
            for pe in 0..n {
                assert!(
                    stdout.contains(&format!("<pe-done {name} {pe}>")),
                    "{name} on {n} PEs ({path:?}): PE {pe} did not report completion\n{stdout}\n{stderr}"
                );
            }
        }
    }
}

/// [`multi_pe_at`] at the standard PE counts.
pub fn multi_pe(name: &str, body: impl FnOnce(&shmem_core::World)) {
    multi_pe_at(name, PE_COUNTS, body)
}
