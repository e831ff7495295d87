//! Multi-PE test harness.
//!
//! A test calls [`multi_pe`] with its own name and a body. Run normally, the test launches its own
//! test binary under `shmemrun` for each PE count and each transport path, filtered to just this
//! test, and fails if the job fails. Run as a PE (the harness sets `SHMEM_TEST_AS_PE`), it runs the
//! body, so assertions inside the body execute on every PE of a real job.
//!
//! [`multi_pe_hosts`] adds the two-host layout: two network namespaces made to look like two
//! machines by `scripts/netns-hosts.sh` ([`TwoHosts`]), two PEs on each, the launcher on the
//! first, the PEs started with `shmemrun --hosts ... --rsh`. It needs root; without it the test
//! fails and says so.

#![allow(dead_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
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

/// The harness's arguments for running this test binary's test `name` as a PE.
fn pe_args(name: &str) -> Vec<std::ffi::OsString> {
    let exe = std::env::current_exe().expect("current test executable");
    let mut v = vec![exe.into_os_string()];
    v.extend(
        [name, "--exact", "--nocapture", "--test-threads=1"]
            .iter()
            .map(std::ffi::OsString::from),
    );
    v
}

/// Launches this test binary's test `name` on [`TwoHosts`] (2 x 2 PEs) on `path`. The PEs get the
/// harness's variables through shmemrun, which passes every `SHMEM_*` and `UCX_*` variable on.
pub fn launch_two_hosts(name: &str, path: Path) -> (Output, Duration) {
    let _guard = JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let hosts = TwoHosts::up();
    let mut cmd = hosts.shmemrun(&["--hosts", &hosts.list(2)]);
    cmd.arg("--").args(pe_args(name));
    cmd.env("SHMEM_TEST_AS_PE", "1")
        .env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    let out = run_with_limit(cmd, Duration::from_secs(120));
    hosts.assert_no_processes_left(Duration::from_secs(5));
    out
}

/// PE counts of the jobs every multi-PE test also runs under Open MPI's `mpirun` (PMIx start-up).
pub const MPIRUN_COUNTS: &[usize] = &[3, 4];

/// How a test job is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `shmemrun -n N` on this machine.
    Local(usize),
    /// `shmemrun --hosts` on [`TwoHosts`], two PEs each.
    TwoHosts,
    /// `mpirun -n N` (PMIx start-up).
    Mpirun(usize),
}

impl Layout {
    pub fn n_pes(self) -> usize {
        match self {
            Layout::Local(n) | Layout::Mpirun(n) => n,
            Layout::TwoHosts => 4,
        }
    }
}

/// Launches this test binary's test `name` as an `n`-PE job under Open MPI's `mpirun` on `path`.
pub fn launch_mpirun(name: &str, n: usize, path: Path) -> (Output, Duration) {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
    ])
    .args(["-x", "SHMEM_TEST_AS_PE", "-x", "SHMEM_INIT_TIMEOUT"]);
    if path == Path::Ucx {
        cmd.args(["-x", "UCX_TLS"]);
    }
    cmd.arg("-n").arg(n.to_string()).args(pe_args(name));
    cmd.env("SHMEM_TEST_AS_PE", "1")
        .env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    let _guard = JOBS.lock().unwrap_or_else(|p| p.into_inner());
    if Command::new("mpirun").arg("--version").output().is_err() {
        panic!(
            "mpirun not found: the PMIx start-up tests need Open MPI (apt-get install openmpi-bin)"
        );
    }
    run_with_limit(cmd, Duration::from_secs(120))
}

/// Runs `body` on every PE of a job, for each PE count in `counts` and both paths, and under
/// `mpirun` at [`MPIRUN_COUNTS`]. Use as the whole body of a `#[test]` whose name is `name`.
pub fn multi_pe_at(name: &str, counts: &[usize], body: impl FnOnce(&shmem_core::World)) {
    multi_pe_layouts(name, counts, false, body)
}

/// [`multi_pe`], and also on two hosts with two PEs each ([`TwoHosts`]), on both paths (on the
/// direct path, PEs of one host reach each other directly and the others through UCX over TCP).
pub fn multi_pe_hosts(name: &str, body: impl FnOnce(&shmem_core::World)) {
    multi_pe_layouts(name, PE_COUNTS, true, body)
}

fn multi_pe_layouts(
    name: &str,
    counts: &[usize],
    two_hosts: bool,
    body: impl FnOnce(&shmem_core::World),
) {
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
    let layouts = counts
        .iter()
        .map(|&n| Layout::Local(n))
        .chain(two_hosts.then_some(Layout::TwoHosts))
        .chain(MPIRUN_COUNTS.iter().map(|&n| Layout::Mpirun(n)));
    for layout in layouts {
        for path in Path::ALL {
            let (out, took) = match layout {
                Layout::Local(n) => launch(name, n, path, &[]),
                Layout::TwoHosts => launch_two_hosts(name, path),
                Layout::Mpirun(n) => launch_mpirun(name, n, path),
            };
            let n = layout.n_pes();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{name} failed on {layout:?}, {path:?} path ({took:?}): {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                out.status
            );
            // Every PE must actually have run the body and finalized.
            for pe in 0..n {
                assert!(
                    stdout.contains(&format!("<pe-done {name} {pe}>")),
                    "{name} on {layout:?} ({path:?}): PE {pe} did not report completion\n{stdout}\n{stderr}"
                );
            }
        }
    }
}

/// [`multi_pe_at`] at the standard PE counts.
pub fn multi_pe(name: &str, body: impl FnOnce(&shmem_core::World)) {
    multi_pe_at(name, PE_COUNTS, body)
}

// ---------------------------------------------------------------------------------------------
// Two hosts on this machine.

/// The script that makes and runs the hosts.
pub fn netns_script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/netns-hosts.sh")
}

/// Where the tags in use are locked (`flock`), so that tests in parallel threads and in other
/// processes never share or tear down each other's hosts.
const TAG_LOCKS: &str = "/run/shmem-netns-hosts-locks";

/// Two hosts made by `scripts/netns-hosts.sh up TAG` (network namespaces joined by a veth pair,
/// each with its own boot id, so UCX sees two machines); torn down on drop.
pub struct TwoHosts {
    pub tag: u32,
    /// `10.231.TAG.1` and `10.231.TAG.2`.
    pub hosts: [String; 2],
    _lock: File,
}

impl TwoHosts {
    /// Creates the hosts under a free tag; panics with the reason when it cannot (not root, no
    /// `ip`), so that a two-host test never passes without running.
    pub fn up() -> TwoHosts {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        std::fs::create_dir_all(TAG_LOCKS).unwrap_or_else(|e| {
            panic!("two-host tests need root (network namespaces): cannot create {TAG_LOCKS}: {e}")
        });
        // Spread the starting points so that concurrent runs rarely probe the same tags.
        let start = std::process::id() + 37 * NEXT.fetch_add(1, Ordering::Relaxed);
        let mut tagged = None;
        for tag in (0..254).map(|i| (start + i) % 254 + 1) {
            let path = format!("{TAG_LOCKS}/{tag}.lock");
            let f = File::create(&path).unwrap_or_else(|e| {
                panic!("two-host tests need root (network namespaces): cannot create {path}: {e}")
            });
            // SAFETY: flock on a descriptor we own; no memory is involved.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                tagged = Some((tag, f));
                break;
            }
        }
        let (tag, lock) =
            tagged.expect("every netns-hosts tag from 1 to 254 is locked by another test");
        let out = Command::new("bash")
            .args([netns_script(), "up", &tag.to_string()])
            .output()
            .expect("run bash scripts/netns-hosts.sh");
        assert!(
            out.status.success(),
            "cannot create the two test hosts (network namespaces; the two-host tests need root \
             and iproute2): `netns-hosts.sh up {tag}` {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        TwoHosts {
            tag,
            hosts: [format!("10.231.{tag}.1"), format!("10.231.{tag}.2")],
            _lock: lock,
        }
    }

    /// `--hosts` with `slots` slots on each host.
    pub fn list(&self, slots: usize) -> String {
        format!("{}:{slots},{}:{slots}", self.hosts[0], self.hosts[1])
    }

    /// The start command template for `--rsh`.
    pub fn rsh(&self) -> String {
        format!("bash {} exec {{host}}", netns_script())
    }

    /// `shmemrun` run on host 1; add the arguments.
    pub fn launcher(&self) -> Command {
        let mut cmd = Command::new("bash");
        cmd.args([netns_script(), "enter", &self.hosts[0], shmemrun()]);
        cmd
    }

    /// `shmemrun` run on host 1 with `--rsh` for these hosts and `args`; add the rest.
    pub fn shmemrun(&self, args: &[&str]) -> Command {
        let mut cmd = self.launcher();
        cmd.arg("--rsh").arg(self.rsh()).args(args);
        cmd
    }

    /// The name of host `i`'s network namespace.
    pub fn netns(&self, i: usize) -> String {
        format!("shmemh-{}-{}", self.tag, i + 1)
    }

    /// The live processes on the hosts (zombies, which are already gone, excluded).
    pub fn processes(&self) -> Vec<(u32, String)> {
        let out = Command::new("bash")
            .args([netns_script(), "pids", &self.tag.to_string()])
            .output()
            .expect("run netns-hosts.sh pids");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let state = stat
                    .rsplit(')')
                    .next()?
                    .split_whitespace()
                    .next()?
                    .to_string();
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                (state != "Z").then_some((pid, cmdline))
            })
            .collect()
    }

    /// Waits up to `limit` for every process on the hosts to be gone; panics naming them.
    pub fn assert_no_processes_left(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let left = self.processes();
            if left.is_empty() {
                return;
            }
            if start.elapsed() > limit {
                panic!("processes left on the test hosts {limit:?} after the job: {left:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([netns_script(), "down", &self.tag.to_string()])
            .status();
    }
}
