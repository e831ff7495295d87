//! Runs the small example programs (hello, rotput, rotget, broadcast, collect, fcollect,
//! alltoall, pi, race_winner, pipeline, lock_counter) as jobs under `shmemrun` at 1 to 4 PEs (8 for the
//! races and the pipeline), each on the direct path and on the UCX path, and checks the lines
//! they print. Problem sizes are kept small so the whole file runs in seconds.

use shmem_testkit as common;

use common::{Path, line_with, per_pe_ok_lines, run_job, run_job_status};

const PATHS: [Path; 2] = Path::ALL;
const PES: [usize; 4] = [1, 2, 3, 4];
const PES_8: [usize; 5] = [1, 2, 3, 4, 8];

fn left(pe: usize, n: usize) -> usize {
    (pe + n - 1) % n
}

#[test]
fn hello_greets_from_every_pe() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_hello"), &[]);
            assert_eq!(out.lines().count(), n, "{out}");
            for pe in 0..n {
                line_with(&out, &format!("Hello from PE {pe} of {n}"));
            }
        }
    }
}

#[test]
fn rotput_delivers_the_left_neighbours_number() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_rotput"), &[]);
            for (pe, line) in per_pe_ok_lines(&out, "rotput", n).into_iter().enumerate() {
                let l = left(pe, n);
                assert!(
                    line.contains(&format!("got {l} from the left neighbour PE {l} ")),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn rotget_reads_the_left_neighbours_array() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_rotget"), &[]);
            for (pe, line) in per_pe_ok_lines(&out, "rotget", n).into_iter().enumerate() {
                let l = left(pe, n);
                assert!(
                    line.contains(&format!("got [{}, ", l * 100))
                        && line.contains(&format!("from the left neighbour PE {l} ")),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn broadcast_reaches_every_pe() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_broadcast"), &["--len", "300"]);
            for line in per_pe_ok_lines(&out, "broadcast", n) {
                assert!(line.contains("received 300 elements from PE 0"), "{line}");
            }
        }
    }
}

#[test]
fn collect_concatenates_contributions_of_different_lengths() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_collect"), &[]);
            let total = n * (n + 1) / 2;
            for (pe, line) in per_pe_ok_lines(&out, "collect", n).into_iter().enumerate() {
                assert!(
                    line.contains(&format!(
                        "contributed {} elements, collected {total} ",
                        pe + 1
                    )),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn fcollect_gathers_equal_blocks() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_fcollect"), &["--count", "5"]);
            for line in per_pe_ok_lines(&out, "fcollect", n) {
                assert!(
                    line.contains(&format!("gathered {n} x 5 elements")),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn alltoall_transposes_the_blocks() {
    for path in PATHS {
        for n in PES {
            let out = run_job(n, path, env!("CARGO_BIN_EXE_alltoall"), &["--block", "3"]);
            for line in per_pe_ok_lines(&out, "alltoall", n) {
                assert!(
                    line.contains(&format!("received {n} blocks of 3 elements")),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn pi_estimate_converges() {
    for path in PATHS {
        for n in PES {
            // The default 200 000 points per PE: the real check (|pi - estimate| < 0.05).
            let out = run_job(n, path, env!("CARGO_BIN_EXE_pi"), &[]);
            assert_eq!(out.lines().count(), 1, "{out}");
            let line = line_with(
                &out,
                &format!("pi: {} points on {n} PEs: estimate 3.1", n * 200_000),
            );
            assert!(line.ends_with(" OK"), "{line}");
        }
    }
}

#[test]
fn pi_reports_a_wrong_estimate_and_fails() {
    // A tolerance of 0 cannot be met: PE 0 prints FAILED and the job exits non-zero.
    let (status, out, _) = run_job_status(
        2,
        Path::Direct,
        env!("CARGO_BIN_EXE_pi"),
        &["--points", "100", "--tolerance", "0"],
    );
    assert!(!status.success(), "{out}");
    assert!(
        line_with(&out, "pi: 200 points on 2 PEs: ").ends_with(" FAILED"),
        "{out}"
    );
}

#[test]
fn race_winner_has_exactly_one_winner_per_round() {
    for path in PATHS {
        for n in PES_8 {
            let out = run_job(
                n,
                path,
                env!("CARGO_BIN_EXE_race_winner"),
                &["--rounds", "5"],
            );
            let lines = per_pe_ok_lines(&out, "race_winner", n);
            // The PEs' wins add up to the rounds, and all PEs name the same winner of round 0.
            let mut wins = 0;
            let mut first = None;
            for line in &lines {
                let won: usize = line
                    .split(": won ")
                    .nth(1)
                    .and_then(|s| s.split(' ').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("no win count in {line}"));
                wins += won;
                let winner = line
                    .split("round 0 won by ")
                    .nth(1)
                    .and_then(|s| s.split(',').next())
                    .unwrap_or_else(|| panic!("no winner in {line}"));
                assert_eq!(*first.get_or_insert(winner), winner, "{out}");
            }
            assert_eq!(wins, 5, "{out}");
        }
    }
}

#[test]
fn pipeline_delivers_every_round_in_order() {
    for path in PATHS {
        for n in PES_8 {
            let out = run_job(
                n,
                path,
                env!("CARGO_BIN_EXE_pipeline"),
                &["--rounds", "30", "--len", "16"],
            );
            for (pe, line) in per_pe_ok_lines(&out, "pipeline", n).into_iter().enumerate() {
                assert!(
                    line.contains(&format!(
                        "received 30 rounds of 16 elements from PE {}, 0 wrong ",
                        left(pe, n)
                    )),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn lock_counter_loses_no_increment() {
    for path in PATHS {
        for n in PES {
            let out = run_job(
                n,
                path,
                env!("CARGO_BIN_EXE_lock_counter"),
                &["--iters", "25"],
            );
            for line in per_pe_ok_lines(&out, "lock_counter", n) {
                assert!(
                    line.contains(&format!("counter {} of {}", 25 * n, 25 * n)),
                    "{line}"
                );
            }
        }
    }
}
