//! The rendezvous through a real `shmemrun` and real PE processes.
//!
//! The PEs are this test binary itself, re-executed under `shmemrun` to run only [`pe_role`]
//! with `SHMEM_TEST_ROLE` saying what to do. They speak to the launcher with this crate's
//! client, as shmem-core does. (`shmemrun` is found, or built, by `shmem_testkit::shmemrun`.)

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shmem_launch::client::{Client, ClientError, LaunchEnv};
use shmem_launch::wire;
use shmem_testkit::{Finished, shmemrun};

const ROLE: &str = "SHMEM_TEST_ROLE";
const LIMIT: Duration = Duration::from_secs(30);
/// A folder of its own for each job, where its PEs leave marks for each other.
const MARKS: &str = "SHMEM_TEST_MARKS";

// ---------------------------------------------------------------------------------------------
// The PE side.

/// Connects as the launcher's environment says; returns the client, my PE and the job size.
fn connect() -> (Client, usize, usize) {
    let env = LaunchEnv::from_env().unwrap().expect("started by shmemrun");
    let client = env.connect().unwrap();
    (client, env.pe, env.npes)
}

/// Starts the watchdog on the control connection, as shmem-core's init does.
fn watchdog() {
    let env = LaunchEnv::from_env().unwrap().expect("started by shmemrun");
    shmem_launch::watchdog::start(
        &env.rendezvous,
        env.job_id,
        &env.secret,
        env.pe,
        env.timeout,
        Box::new(shmem_launch::watchdog::exit_now),
    )
    .unwrap();
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
            let (mut c, me, n) = connect();
            c.allgather(b"", &mut progress).unwrap();
            let marks = std::path::PathBuf::from(std::env::var(MARKS).expect("marks folder"));
            let mark = |pe: usize| marks.join(format!("waiting-{pe}"));
            if me == n - 1 {
                // Leaves without finalizing once the others have sent their barrier requests.
                let deadline = std::time::Instant::now() + LIMIT;
                while !(0..me).all(|p| mark(p).exists()) {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "the others never waited"
                    );
                    thread::sleep(Duration::from_millis(2));
                }
                std::process::exit(0);
            }
            // Progress runs once the request is written: the mark says "in the barrier".
            let mut marked = false;
            let mut progress = || {
                if !marked {
                    std::fs::write(mark(me), b"").unwrap();
                    marked = true;
                }
            };
            if let Err(e) = c.barrier(&mut progress) {
                report(e, 9);
            }
        }
        "stop" => {
            watchdog();
            let (mut c, me, _) = connect();
            c.allgather(b"", &mut progress).unwrap();
            if me == 1 {
                // SAFETY: kill(2) on this very process; no memory involved.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
            }
            thread::sleep(Duration::from_secs(30));
        }
        "exit0" => {
            watchdog();
            let (mut c, me, _) = connect();
            c.allgather(b"", &mut progress).unwrap();
            if me == 1 {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "EXIT-AT {}", now.as_nanos());
                let _ = out.flush();
                std::process::exit(0); // without finalize
            }
            // Waiting where the launcher cannot see it (as in barrier_all).
            thread::sleep(Duration::from_secs(30));
        }
        "quiet" => {}
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
    static JOBS: AtomicUsize = AtomicUsize::new(0);
    let marks = std::env::temp_dir().join(format!(
        "launcher-rendezvous-{}-{}",
        std::process::id(),
        JOBS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&marks);
    std::fs::create_dir(&marks).unwrap();
    let me = std::env::current_exe().unwrap();
    let mut cmd = Command::new(shmemrun());
    cmd.args(["-n", &n.to_string()])
        .args(options)
        .arg(me)
        .args(["--exact", "pe_role", "--nocapture", "--test-threads", "1"])
        .env(ROLE, role)
        .env(MARKS, &marks)
        .env_remove(wire::ENV_INIT_TIMEOUT)
        .stdin(Stdio::null());
    let r = shmem_testkit::start(cmd).finish(LIMIT);
    let _ = std::fs::remove_dir_all(&marks);
    r
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
    // The last PE leaves once the others have sent their barrier requests: the report names
    // them, though the launcher may see the exit before it reads their requests.
    for (n, want) in [
        (
            2,
            "PE 1 exited before finalizing while PE 0 waits in a barrier",
        ),
        (
            3,
            "PE 2 exited before finalizing while PEs 0, 1 wait in a barrier",
        ),
    ] {
        let r = launch(n, "leave", &[]);
        assert_eq!(r.status.code(), Some(1), "{r:?}");
        assert!(r.stderr.contains(want), "{want}: {r:?}");
        assert!(r.elapsed < Duration::from_secs(5), "{r:?}");
    }
}

/// Runs `role` where PE 1 exits with 0 without finalizing while the others sleep (as in a
/// `barrier_all`, which does not go through the launcher); returns the run and the time from
/// PE 1's exit to the launcher's end.
fn exit_without_finalize(options: &[&str]) -> (Finished, Duration) {
    let before = SystemTime::now();
    let r = launch(3, "exit0", options);
    let ended = before + r.elapsed;
    let exit_at: u128 = r
        .stdout
        .split("EXIT-AT ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("PE 1 did not report its exit: {r:?}"));
    let exit_at = UNIX_EPOCH + Duration::from_nanos(exit_at as u64);
    let lag = ended.duration_since(exit_at).unwrap_or_default();
    (r, lag)
}

#[test]
fn a_pe_exiting_zero_without_finalize_ends_the_job_within_a_second() {
    let (r, lag) = exit_without_finalize(&[]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    assert!(
        r.stderr.contains("shmemrun: PE 1 (pid ")
            && r.stderr.contains("exited with status 0 without finalizing"),
        "{r:?}"
    );
    eprintln!("exit without finalize (one host): job over {lag:?} after the exit");
    assert!(lag < Duration::from_secs(1), "{lag:?}: {r:?}");
}

#[test]
fn a_pe_exiting_zero_without_finalize_ends_the_job_in_hosts_mode() {
    // Two "hosts" that are this machine, through a start command that passes stdin (the
    // secret's line) on as ssh does.
    let (r, lag) = exit_without_finalize(&[
        "--hosts",
        "127.0.0.1:2,localhost:1",
        "--rsh",
        "sh -c \"exec {cmd}\" {host}",
    ]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    assert!(
        r.stderr.contains("shmemrun: PE 1 on host 127.0.0.1 (pid ")
            && r.stderr.contains("exited with status 0 without finalizing"),
        "{r:?}"
    );
    // The others were told why over their control connections.
    assert!(
        r.stderr
            .contains("PE 0: shmemrun ended the job: PE 1 on host"),
        "{r:?}"
    );
    eprintln!("exit without finalize (--hosts): job over {lag:?} after the exit");
    assert!(lag < Duration::from_secs(2), "{lag:?}: {r:?}");
}

#[test]
fn a_stopped_pe_on_one_host_is_found_with_heartbeats() {
    // Without --heartbeat-timeout a PE stopped on one host is not detected (README, --help);
    // with it, the launcher names the PE after the timeout.
    let r = launch(3, "stop", &["--heartbeat-timeout", "1"]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    assert!(
        r.stderr.contains("shmemrun: PE 1 (pid ")
            && r.stderr.contains("stopped answering: no heartbeat for")
            && r.stderr.contains("(heartbeat timeout 1 s); is it stopped?"),
        "{r:?}"
    );
    eprintln!(
        "a stopped PE on one host with --heartbeat-timeout 1: job over after {:?}",
        r.elapsed
    );
    assert!(r.elapsed < Duration::from_secs(5), "{r:?}");
}

#[test]
fn pes_that_never_say_hello_may_exit_zero() {
    let r = launch(2, "quiet", &[]);
    assert_eq!(r.status.code(), Some(0), "{r:?}");
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
