//! The benchmarks build and complete a tiny run: every expected row is there with a positive
//! figure. `latency` runs under `shmemrun` at 2 PEs (direct and UCX path) and 3 PEs, in its
//! full, `--collectives` and `--bandwidth` modes; `dsl_overhead` runs a short timing.
//! (`TINY=1 bash benches/run.sh` does the same against Open MPI's OpenSHMEM; it needs `oshcc`.)

use std::process::{Command, Output};
use std::time::Duration;

use shmem_testkit::shmemrun;

/// Runs `cmd` alone on the machine (it may have 2 cores), stopping it and failing after `limit`.
fn run_alone(cmd: Command, limit: Duration) -> Output {
    let _one_at_a_time = shmem_testkit::one_job_at_a_time();
    shmem_testkit::run_with_limit(cmd, limit).0
}

/// Message sizes of the sized put/get rows, as in `latency.rs`.
const SIZES: [u64; 7] = [8, 64, 512, 4096, 32 << 10, 256 << 10, 1 << 20];
/// Message sizes of the user-shaped (`vec`, `vec odd`) put/get rows, as in `latency.rs`.
const VEC_SIZES: [u64; 7] = [8, 64, 4096, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// The collective rows, in order.
const COLLECTIVES: [(&str, u64); 5] = [
    ("barrier_all", 0),
    ("broadcast", 8),
    ("sum_reduce 1 long", 8),
    ("fcollect", 8),
    ("alltoall", 8),
];

/// One CSV row of `latency --csv`.
#[derive(Debug)]
struct Row {
    case: String,
    size: u64,
    variant: String,
    median: f64,
    min: f64,
}

/// Runs `latency --csv --iters 20 --reps 1 <extra>` on `n` PEs (UCX path: `UCX_TLS=tcp,self`)
/// and returns its rows, checking the exit status and the CSV format.
fn latency(n: usize, ucx: bool, extra: &[&str]) -> Vec<Row> {
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg(env!("CARGO_BIN_EXE_latency"))
        .args(["--csv", "--iters", "20", "--reps", "1"])
        .args(extra)
        .env("SHMEM_INIT_TIMEOUT", "60");
    if ucx {
        cmd.env("UCX_TLS", "tcp,self");
    } else {
        cmd.env_remove("UCX_TLS");
    }
    let what = format!("latency {extra:?} on {n} PEs (UCX path: {ucx})");
    let out = run_alone(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("case,size,variant,median_ns,min_ns"),
        "{what}: header\n{stdout}"
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), 5, "{what}: bad row {line:?}");
            let num = |s: &str| -> f64 {
                s.parse()
                    .unwrap_or_else(|e| panic!("{what}: bad number in {line:?}: {e}"))
            };
            Row {
                case: f[0].to_string(),
                size: f[1]
                    .parse()
                    .unwrap_or_else(|e| panic!("{what}: bad size in {line:?}: {e}")),
                variant: f[2].to_string(),
                median: num(f[3]),
                min: num(f[4]),
            }
        })
        .collect()
}

/// Checks that `rows` are exactly `want` (case, size, variant), in order, each with a positive
/// median and minimum no larger than the median.
fn check(rows: &[Row], want: &[(&str, u64, &str)], what: &str) {
    let got: Vec<(&str, u64, &str)> = rows
        .iter()
        .map(|r| (r.case.as_str(), r.size, r.variant.as_str()))
        .collect();
    assert_eq!(got, want, "{what}: rows");
    for r in rows {
        assert!(
            r.median > 0.0 && r.min > 0.0 && r.min <= r.median && r.median.is_finite(),
            "{what}: implausible figures in {r:?}"
        );
    }
}

/// The rows of a full `latency` run, in order.
fn full_rows() -> Vec<(&'static str, u64, &'static str)> {
    let mut want = Vec::new();
    for case in ["put + quiet", "get"] {
        want.extend(SIZES.iter().map(|&s| (case, s, "aligned")));
    }
    for variant in ["vec", "vec odd"] {
        for case in ["put + quiet", "get"] {
            want.extend(VEC_SIZES.iter().map(|&s| (case, s, variant)));
        }
    }
    let cases = [
        ("p + quiet", 8),
        ("g", 8),
        ("iput 16x stride 2 + quiet", 128),
        ("iget 16x stride 2", 128),
        ("fetch_add", 8),
        ("add + quiet", 8),
        ("compare_swap", 8),
        ("swap", 8),
    ];
    want.extend(cases.iter().map(|&(c, s)| (c, s, "heap")));
    want.extend([("put + quiet", 8, "static"), ("get", 8, "static")]);
    want.extend(cases.iter().map(|&(c, s)| (c, s, "static")));
    want.extend([
        ("ping-pong put + wait_until", 8, "heap"),
        ("ping-pong put_signal + wait", 8, "heap"),
        ("ping-pong p + g polling", 8, "heap"),
        ("put_nbi 8 B stream (ns/op)", 8, "heap"),
    ]);
    want.extend(COLLECTIVES.iter().map(|&(c, s)| (c, s, "heap")));
    want
}

#[test]
fn latency_full_run_direct_and_ucx() {
    let want = full_rows();
    assert_eq!(want.len(), 69);
    for (n, ucx) in [(2, false), (2, true), (3, false)] {
        let rows = latency(n, ucx, &[]);
        check(&rows, &want, &format!("full run, {n} PEs, UCX path {ucx}"));
    }
}

#[test]
fn latency_collectives_only() {
    let want: Vec<_> = COLLECTIVES.iter().map(|&(c, s)| (c, s, "heap")).collect();
    for n in [2, 3] {
        let rows = latency(n, false, &["--collectives"]);
        check(&rows, &want, &format!("--collectives, {n} PEs"));
    }
}

#[test]
fn latency_bandwidth() {
    let rows = latency(2, false, &["--bandwidth"]);
    check(
        &rows,
        &[
            ("put 256 KiB + quiet", 256 << 10, "heap"),
            ("memcpy 256 KiB", 256 << 10, "local"),
        ],
        "--bandwidth",
    );
}

#[test]
fn dsl_overhead_tiny() {
    // One PE without the launcher.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsl_overhead"));
    cmd.args(["--iters", "1000", "--reps", "3"])
        .env_remove("UCX_TLS");
    let out = run_alone(cmd, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "dsl_overhead failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 5, "dsl_overhead rows:\n{stdout}");
    for row in rows {
        let nums: Vec<f64> = row
            .split_whitespace()
            .rev()
            .take(4)
            .map(|f| {
                f.parse()
                    .unwrap_or_else(|e| panic!("bad number in {row:?}: {e}"))
            })
            .collect();
        assert!(
            nums.len() == 4 && nums.iter().all(|&x| x > 0.0 && x.is_finite()),
            "dsl_overhead row {row:?}"
        );
    }
}
