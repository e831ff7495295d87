//! The rendezvous through a real `shmemrun` and real PE processes.
//!
//! The PEs are this test binary itself, re-executed under `shmemrun` to run only [`pe_role`]
//! with `SHMEM_TEST_ROLE` saying what to do. They speak to the launcher with this crate's
//! client, as shmem-core does. (`shmemrun` is found, or built, by `shmem_testkit::shmemrun`.)

use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use shmem_launch::client::{Client, ClientError, LaunchEnv};
use shmem_launch::wire;
use shmem_testkit::{Finished, shmemrun};

const ROLE: &str = "SHMEM_TEST_ROLE";
const LIMIT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// The PE side.

/// Connects as the launcher's environment says; returns the client, my PE and the job size.
fn connect() -> (Client, usize, usize) {
    let env = LaunchEnv::from_env().unwrap().expect("started by shmemrun");
    let client = env.connect().unwrap();
    (client, env.pe, env.npes)
}

/// Reports a failed collective the way a program would and exits with `code`.
fn report(e: ClientError, code: i32) -> ! {
    match e {
        ClientError::Timeout(d) => println!("PE-ERROR timeout: {d}"),
        ClientError::Failed(d) => println!("PE-ERROR failed: {d}"),
    }
    std::process::exit(code)
}

/// The PE program. As a normal test (no role) it does nothing.
#[test]
fn pe_role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let mut progress_calls = 0u64;
    let mut progress = || progress_calls += 1;
    match role.as_str() {
        "gather" => {
            let (mut c, me, n) = connect();
            let table = c
                .allgather(format!("pe{me}").as_bytes(), &mut progress)
                .unwrap();
            let want: Vec<Vec<u8>> = (0..n).map(|p| format!("pe{p}").into_bytes()).collect();
            assert_eq!(table, want);
            for round in 0..10u32 {
                c.barrier(&mut progress).unwrap();
                let t = c
                    .allgather(&(round * 100 + me as u32).to_le_bytes(), &mut progress)
                    .unwrap();
                assert_eq!(t[n - 1], (round * 100 + n as u32 - 1).to_le_bytes());
            }
            c.barrier(&mut progress).unwrap();
            c.finalize().unwrap();
            assert!(progress_calls > 0);
            println!("PE-OK {me} of {n}");
        }
        "panic" => {
            let (mut c, me, _) = connect();
            c.allgather(b"", &mut progress).unwrap();
            if me == 1 {
                panic!("PE 1 fails on purpose");
            }
            if let Err(e) = c.barrier(&mut progress) {
                report(e, 9);
            }
        }
        "leave" => {
            let (mut c, me, _) = connect();
            c.allgather(b"", &mut progress).unwrap();
            if me == 2 {
                std::process::exit(0); // without finalize, while the others wait
            }
            if let Err(e) = c.barrier(&mut progress) {
                report(e, 9);
            }
        }
        "timeout" => {
            if std::env::var(wire::ENV_PE).as_deref() == Ok("2") {
                thread::sleep(Duration::from_secs(30)); // never reaches the rendezvous
            }
            let (mut c, _, _) = connect();
            if let Err(e) = c.allgather(b"", &mut progress) {
                report(e, 42);
            }
        }
        other => panic!("unknown role {other}"),
    }
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Runs `n` PEs of [`pe_role`] with `role` under `shmemrun`, with extra launcher options.
fn launch(n: usize, role: &str, options: &[&str]) -> Finished {
    let me = std::env::current_exe().unwrap();
    let mut cmd = Command::new(shmemrun());
    cmd.args(["-n", &n.to_string()])
        .args(options)
        .arg(me)
        .args(["--exact", "pe_role", "--nocapture", "--test-threads", "1"])
        .env(ROLE, role)
        .env_remove(wire::ENV_INIT_TIMEOUT)
        .stdin(Stdio::null());
    shmem_testkit::start(cmd).finish(LIMIT)
}

#[test]
fn allgather_and_barriers_across_processes() {
    for n in [1, 4] {
        let r = launch(n, "gather", &[]);
        assert_eq!(r.status.code(), Some(0), "{r:?}");
        for pe in 0..n {
            assert!(r.stdout.contains(&format!("PE-OK {pe} of {n}")), "{r:?}");
        }
    }
}

#[test]
fn a_panicking_pe_ends_the_job_while_others_wait() {
    let r = launch(3, "panic", &[]);
    assert_eq!(r.status.code(), Some(101), "{r:?}");
    assert!(r.stderr.contains("PE 1 (pid "), "{r:?}");
    assert!(
        r.stderr.contains("exited with status 101 (Rust panic)"),
        "{r:?}"
    );
    assert!(r.elapsed < Duration::from_secs(5), "{r:?}");
}

#[test]
fn a_pe_exiting_before_finalize_ends_the_job() {
    let r = launch(3, "leave", &[]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    assert!(
        r.stderr
            .contains("PE 2 exited before finalizing while PEs 0, 1 wait in a barrier"),
        "{r:?}"
    );
    assert!(r.elapsed < Duration::from_secs(5), "{r:?}");
}

#[test]
fn rendezvous_timeout_names_the_missing_pe() {
    let timeout = Duration::from_secs(1);
    let r = launch(3, "timeout", &["--init-timeout", "1"]);
    // PEs 0 and 1 report the timeout and exit with 42; the launcher stops PE 2 and passes 42 on.
    assert_eq!(r.status.code(), Some(42), "{r:?}");
    // A PE's report may follow the test harness's own "test pe_role ... " on the same line.
    let reports: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.find("PE-ERROR").map(|at| &l[at..]))
        .collect();
    assert!(!reports.is_empty(), "{r:?}");
    for line in reports {
        assert!(
            line.starts_with("PE-ERROR timeout: PE 2 of 3 did not reach the rendezvous within 1 s"),
            "{r:?}"
        );
    }
    assert!(
        r.stderr
            .contains("shmemrun: PE 2 of 3 did not reach the rendezvous within 1 s"),
        "{r:?}"
    );
    // Start-up of three test processes plus the timeout, with slack for a loaded machine.
    assert!(
        r.elapsed >= timeout && r.elapsed < timeout + Duration::from_secs(4),
        "{r:?}"
    );
}
