//! Runs the example programs as real jobs under `shmemrun`, at several PE counts and on both the
//! direct (shared-memory) and the UCX path, and checks what they print.

use shmem_testkit as common;

use common::{Path, run_job};

#[test]
fn heat_matches_the_single_pe_computation() {
    for path in Path::ALL {
        for n in [1, 2, 3, 4] {
            // An uneven split: 61 columns over 2, 3 and 4 PEs.
            let out = run_job(
                n,
                path,
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
    for path in Path::ALL {
        for n in [1, 2, 3, 5, 8] {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_ring"), &[]);
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
