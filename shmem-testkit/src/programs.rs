//! Programs (the examples, the benchmarks) run as jobs under `shmemrun`, and the lines of their
//! output picked apart.

use std::process::{Command, ExitStatus};
use std::time::Duration;

use crate::child::{one_job_at_a_time, start};
use crate::jobs::Path;
use crate::shmemrun::shmemrun;

/// How long one program's job may take.
const PROGRAM_LIMIT: Duration = Duration::from_secs(120);

/// Runs `program args` on `n` PEs under `shmemrun`, on `path`, one job at a time and killed
/// (failing the test) after two minutes; returns the exit status, stdout and stderr.
pub fn run_job_status(
    n: usize,
    path: Path,
    program: &str,
    args: &[&str],
) -> (ExitStatus, String, String) {
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n").arg(n.to_string()).arg(program).args(args);
    path.apply(&mut cmd);
    let _one = one_job_at_a_time();
    let done = start(cmd).finish(PROGRAM_LIMIT);
    (done.status, done.stdout, done.stderr)
}

/// Like [`run_job_status`], asserting that the job succeeded; returns its stdout.
pub fn run_job(n: usize, path: Path, program: &str, args: &[&str]) -> String {
    let (status, stdout, stderr) = run_job_status(n, path, program, args);
    assert!(
        status.success(),
        "{program} on {n} PEs ({path:?} path) failed: {status}\n{stdout}\n{stderr}"
    );
    stdout
}

/// The one line of `out` that starts with `prefix`.
///
/// ```
/// let out = "pi: 200 points on 2 PEs: 3.1 OK\nother\n";
/// assert_eq!(shmem_testkit::line_with(out, "pi: "), "pi: 200 points on 2 PEs: 3.1 OK");
/// ```
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
