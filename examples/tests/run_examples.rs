//! Runs the example programs as real jobs under `shmemrun`, at several PE counts and on both the
//! direct (shared-memory) and the UCX path, and checks what they print.

use std::path::PathBuf;
use std::process::Command;

/// `shmemrun` is built next to the example binaries (same target directory and profile).
fn shmemrun() -> PathBuf {
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

fn run_job(n: usize, ucx_path: bool, program: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(shmemrun());
    cmd.arg("-n").arg(n.to_string()).arg(program).args(args);
    if ucx_path {
        cmd.env("UCX_TLS", "tcp,self");
    } else {
        cmd.env_remove("UCX_TLS");
    }
    let out = cmd.output().expect("start shmemrun");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{program} on {n} PEs (UCX path: {ucx_path}) failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn heat_matches_the_single_pe_computation() {
    for ucx_path in [false, true] {
        for n in [1, 2, 3, 4] {
            // An uneven split: 61 columns over 2, 3 and 4 PEs.
            let out = run_job(
                n,
                ucx_path,
                env!("CARGO_BIN_EXE_heat"),
                &["--nx", "61", "--ny", "40", "--iters", "60"],
            );
            assert!(
                out.contains(&format!("60 iterations on {n} PEs"))
                    && out.contains("check against 1 PE: OK"),
                "{out}"
            );
        }
    }
}

#[test]
fn ring_brings_every_token_home() {
    for ucx_path in [false, true] {
        for n in [1, 2, 3, 5, 8] {
            let out = run_job(n, ucx_path, env!("CARGO_BIN_EXE_ring"), &[]);
            for pe in 0..n {
                assert!(
                    out.contains(&format!("ring: PE {pe} of {n}: token")),
                    "{out}"
                );
            }
            assert_eq!(out.matches(" OK").count(), n, "{out}");
        }
    }
}
