//! Helpers shared by the integration tests: run a program as a job under `shmemrun` and pick the
//! lines of its output apart.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, ExitStatus};

/// `shmemrun` is built next to the example binaries (same target directory and profile).
pub fn shmemrun() -> PathBuf {
    let heat = PathBuf::from(env!("CARGO_BIN_EXE_heat"));
    let dir = heat.parent().expect("binary directory");
    let run = dir.join("shmemrun");
    assert!(
        run.exists(),
        "{} is missing: build the workspace (cargo build --workspace)",
        run.display()
    );
    run
}

/// Runs `program args` on `n` PEs, on the UCX path (`UCX_TLS=tcp,self`) or on the direct one;
/// returns the exit status, stdout and stderr.
pub fn run_job_status(
    n: usize,
    ucx_path: bool,
    program: &str,
    args: &[&str],
) -> (ExitStatus, String, String) {
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n").arg(n.to_string()).arg(program).args(args);
    if ucx_path {
        cmd.env("UCX_TLS", "tcp,self");
    } else {
        cmd.env_remove("UCX_TLS");
    }
    let out = cmd.output().expect("start shmemrun");
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Like [`run_job_status`], asserting that the job succeeded; returns its stdout.
pub fn run_job(n: usize, ucx_path: bool, program: &str, args: &[&str]) -> String {
    let (status, stdout, stderr) = run_job_status(n, ucx_path, program, args);
    assert!(
        status.success(),
        "{program} on {n} PEs (UCX path: {ucx_path}) failed: {status}\n{stdout}\n{stderr}"
    );
    stdout
}

/// The one line of `out` that starts with `prefix`.
pub fn line_with<'a>(out: &'a str, prefix: &str) -> &'a str {
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one line starting with {prefix:?}:\n{out}"
    );
    lines[0]
}

/// Checks that `out` has exactly one line per PE of the form `"{name}: PE {pe} of {n}: ... OK"`
/// and nothing else; returns the lines in PE order.
pub fn per_pe_ok_lines<'a>(out: &'a str, name: &str, n: usize) -> Vec<&'a str> {
    assert_eq!(out.lines().count(), n, "expected {n} lines:\n{out}");
    (0..n)
        .map(|pe| {
            let line = line_with(out, &format!("{name}: PE {pe} of {n}: "));
            assert!(line.ends_with(" OK"), "{line}\n{out}");
            line
        })
        .collect()
}
