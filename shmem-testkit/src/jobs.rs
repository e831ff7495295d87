//! Running this test binary's own test as the PEs of a job: under `shmemrun` on this machine, on
//! [`Hosts`] (two or more), or under Open MPI's `mpirun`.

use std::ffi::OsString;
use std::process::{Command, Output};
use std::time::Duration;

use crate::child::{one_job_at_a_time, run_with_limit};
use crate::hosts::Hosts;
use crate::shmemrun::shmemrun;

/// PE counts every multi-PE test runs at.
pub const PE_COUNTS: &[usize] = &[1, 2, 3, 4, 8];

/// PE counts of the jobs every multi-PE test also runs under Open MPI's `mpirun` (PMIx start-up).
pub const MPIRUN_COUNTS: &[usize] = &[3, 4];

/// Set in the environment of the PEs the harness starts.
const AS_PE: &str = "SHMEM_TEST_AS_PE";

/// How long one job may take.
const JOB_LIMIT: Duration = Duration::from_secs(120);

/// The limit for a job of `n` PEs: [`JOB_LIMIT`] up to 8 PEs; beyond, 20 s more per PE, since
/// on a 2-core machine 13 PEs over TCP take about 100 s of real work when the machine is idle
/// (and far more while other builds run).
fn job_limit(n: usize) -> Duration {
    JOB_LIMIT + Duration::from_secs(20) * n.saturating_sub(8) as u32
}

/// The two ways PEs reach each other on one machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Load/store into the peer's mapped heap (its memfd, mapped by the node's PEs).
    Direct,
    /// Every transfer through UCX over TCP (`UCX_TLS=tcp,self`).
    Ucx,
}

impl Path {
    /// Both paths, direct first.
    pub const ALL: [Path; 2] = [Path::Direct, Path::Ucx];

    /// Sets up `cmd`'s environment for this path.
    pub fn apply(self, cmd: &mut Command) {
        match self {
            Path::Direct => cmd.env_remove("UCX_TLS"),
            Path::Ucx => cmd.env("UCX_TLS", "tcp,self"),
        };
    }
}

/// How a test job is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `shmemrun -n N` on this machine.
    Local(usize),
    /// `shmemrun --hosts` on two [`Hosts`], two PEs each.
    TwoHosts,
    /// `shmemrun --hosts` on `hosts` [`Hosts`], `per_host` PEs each.
    Hosts {
        /// The number of hosts, 2 to [`Hosts::MAX`].
        hosts: usize,
        /// PEs on each host.
        per_host: usize,
    },
    /// `mpirun -n N` (PMIx start-up).
    Mpirun(usize),
}

impl Layout {
    /// The number of PEs of a job of this layout.
    pub fn n_pes(self) -> usize {
        match self {
            Layout::Local(n) | Layout::Mpirun(n) => n,
            Layout::TwoHosts => 4,
            Layout::Hosts { hosts, per_host } => hosts * per_host,
        }
    }
}

/// True in a process started by the harness as a PE.
pub fn is_pe() -> bool {
    std::env::var_os(AS_PE).is_some()
}

/// The harness's arguments for running this test binary's test `name` as a PE.
fn pe_args(name: &str) -> Vec<OsString> {
    let exe = std::env::current_exe().expect("current test executable");
    let mut v = vec![exe.into_os_string()];
    v.extend(
        [name, "--exact", "--nocapture", "--test-threads=1"]
            .iter()
            .map(OsString::from),
    );
    v
}

/// Launches this test binary's test `name` as an `n`-PE job under `shmemrun` on `path`, with
/// `extra_env` for the PEs; returns the job's output and how long it took.
pub fn launch(name: &str, n: usize, path: Path, extra_env: &[(&str, &str)]) -> (Output, Duration) {
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg("--")
        .args(pe_args(name));
    cmd.env(AS_PE, "1").env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let _one = one_job_at_a_time();
    run_with_limit(cmd, job_limit(n))
}

/// Launches this test binary's test `name` as an `n`-PE job on `path` (see [`launch`]) that
/// must fail, its stderr holding every one of `needles` (a PE's panic message); returns the
/// stderr. Panics, with the output, where the job succeeds or a needle is missing.
pub fn launch_failing(name: &str, n: usize, path: Path, needles: &[&str]) -> String {
    let (out, took) = launch(name, n, path, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "{name}: the job must fail ({path:?}, {n} PEs, {took:?}): {stderr}"
    );
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{name} ({path:?}, {n} PEs): no {needle:?} in stderr: {stderr}"
        );
    }
    stderr
}

/// Launches this test binary's test `name` on two [`Hosts`] (2 x 2 PEs) on `path`: see
/// [`launch_hosts`].
pub fn launch_two_hosts(name: &str, path: Path) -> Option<(Output, Duration)> {
    launch_hosts(name, 2, 2, path)
}

/// Launches this test binary's test `name` on `hosts` [`Hosts`] with `per_host` PEs each, on
/// `path`, and checks that no process is left on the hosts after it. The PEs get the harness's
/// variables through shmemrun, which passes every `SHMEM_*` and `UCX_*` variable on. `None` when
/// the test is skipped because it does not run as root (see [`Hosts::up_or_skip`]).
pub fn launch_hosts(
    name: &str,
    hosts: usize,
    per_host: usize,
    path: Path,
) -> Option<(Output, Duration)> {
    launch_hosts_env(name, (hosts, per_host), path, &[])
}

/// Like [`launch_hosts`] (`layout` = hosts, PEs per host), with `extra_env` for the PEs.
pub fn launch_hosts_env(
    name: &str,
    (hosts, per_host): (usize, usize),
    path: Path,
    extra_env: &[(&str, &str)],
) -> Option<(Output, Duration)> {
    let _one = one_job_at_a_time();
    let what = if hosts == 2 {
        "two hosts".to_string()
    } else {
        format!("{hosts} hosts")
    };
    let hosts = Hosts::up_or_skip(&format!("{name} (on {what}, {path:?} path)"), hosts)?;
    let mut cmd = hosts.shmemrun(&["--hosts", &hosts.list(per_host)]);
    cmd.arg("--").args(pe_args(name));
    cmd.env(AS_PE, "1").env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = run_with_limit(cmd, job_limit(hosts.hosts.len() * per_host));
    hosts.assert_no_processes_left(Duration::from_secs(5));
    Some(out)
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
    .args(["-x", AS_PE, "-x", "SHMEM_INIT_TIMEOUT"]);
    if path == Path::Ucx {
        cmd.args(["-x", "UCX_TLS"]);
    }
    cmd.arg("-n").arg(n.to_string()).args(pe_args(name));
    cmd.env(AS_PE, "1").env("SHMEM_INIT_TIMEOUT", "60");
    path.apply(&mut cmd);
    let _one = one_job_at_a_time();
    if Command::new("mpirun").arg("--version").output().is_err() {
        panic!(
            "mpirun not found: the PMIx start-up tests need Open MPI (apt-get install openmpi-bin)"
        );
    }
    run_with_limit(cmd, JOB_LIMIT)
}
