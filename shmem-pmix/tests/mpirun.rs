//! Jobs under Open MPI's `mpirun` (a PMIx launcher; the job itself uses no MPI).
//!
//! Run normally, each test launches this test binary under `mpirun`, filtered to the same
//! test, with `SHMEM_PMIX_TEST_AS_RANK` set; run that way, the test body is one rank of
//! the job, so its assertions execute on every rank. The launching side checks that every
//! rank printed its marker and that `mpirun` exited as expected, and kills a job that
//! does not finish in time.
//!
//! Needs `mpirun` on the PATH (Debian/Ubuntu: `apt-get install openmpi-bin`); set
//! `SHMEM_PMIX_MPIRUN` to use another one.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use shmem_pmix::{Error, Pmix};
use shmem_testkit::Finished as Job;

/// Set in the environment of the ranks this file launches.
const AS_RANK: &str = "SHMEM_PMIX_TEST_AS_RANK";
/// How long a job may take before it is killed; a start-up job takes well under a second.
const JOB_LIMIT: Duration = Duration::from_secs(60);
/// A rank ends itself this long after starting, so a bug cannot leave ranks behind even
/// if `mpirun` dies without killing them.
const RANK_LIMIT: Duration = Duration::from_secs(70);

fn is_rank() -> bool {
    std::env::var_os(AS_RANK).is_some()
}

/// The `mpirun` to use: `$SHMEM_PMIX_MPIRUN`, else `mpirun` from the PATH. Panics with
/// installation advice when there is none: a missing launcher must fail the tests, not skip
/// them.
fn mpirun() -> PathBuf {
    if let Some(p) = std::env::var_os("SHMEM_PMIX_MPIRUN") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("mpirun"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "mpirun not found on the PATH: these tests start PMIx jobs with Open MPI's \
                 launcher. Install it (Debian/Ubuntu: apt-get install openmpi-bin) or set \
                 SHMEM_PMIX_MPIRUN to a PMIx launcher that takes mpirun's options."
            )
        })
}

/// A finished job, for messages.
fn describe(job: &Job) -> String {
    format!(
        "exit {} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
        job.status, job.elapsed, job.stdout, job.stderr
    )
}

/// Launches this test binary's test `name` as an `n`-rank job under mpirun.
fn launch(name: &str, n: usize) -> Job {
    let exe = std::env::current_exe().expect("path of this test executable");
    let mut cmd = Command::new(mpirun());
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
    ])
    .args(["-x", AS_RANK, "-n", &n.to_string()])
    .arg(exe)
    .args([name, "--exact", "--nocapture", "--test-threads=1"])
    .env(AS_RANK, "1")
    .stdin(Stdio::null());
    // One job at a time: the machine may have 2 cores and a job has up to 4 ranks.
    let _one_job = shmem_testkit::one_job_at_a_time();
    // Past the limit: SIGTERM (mpirun then ends its ranks), SIGKILL if that is not enough.
    let job = shmem_testkit::start(cmd)
        .stop_with(libc::SIGTERM)
        .finish(JOB_LIMIT);
    eprintln!("{name}: {n} ranks under mpirun took {:?}", job.elapsed);
    job
}

/// Prints `line` in one write, so that lines of other ranks cannot split it.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("{line}\n").as_bytes());
    let _ = out.flush();
}

/// Ends this rank if the job runs far too long, whatever the launcher does.
fn watchdog() {
    std::thread::spawn(|| {
        std::thread::sleep(RANK_LIMIT);
        eprintln!(
            "rank {}: still running after {RANK_LIMIT:?}, aborting",
            std::process::id()
        );
        std::process::abort();
    });
}

/// The blob rank `rank` of `size` puts: its rank byte `rank + 1` times, and for the last
/// rank a 1000-byte tail as well, so the lengths differ and one value is not tiny.
fn blob(rank: u32, size: u32) -> Vec<u8> {
    let mut b = vec![rank as u8; rank as usize + 1];
    if rank == size - 1 {
        b.extend((0..1000u32).map(|i| (i * 7 + rank) as u8));
    }
    b
}

const BLOB_KEY: &str = "test.blob";
const EMPTY_KEY: &str = "test.empty";

/// One rank of the exchange test.
fn exchange_rank(name: &str, n: u32) {
    watchdog();
    assert!(Pmix::launched(), "mpirun did not set the PMIx variables");
    let mut pmix = Pmix::init().expect("Pmix::init under mpirun");
    let (rank, size) = (pmix.rank(), pmix.size());
    assert!(rank < size, "rank {rank} >= size {size}");
    assert_eq!(size, n, "job size");
    assert!(!pmix.namespace().is_empty());
    assert!(
        matches!(Pmix::init(), Err(Error::Invalid { .. })),
        "a second Pmix in one process must be refused"
    );

    pmix.put(BLOB_KEY, &blob(rank, size)).expect("put blob");
    pmix.put(EMPTY_KEY, &[]).expect("put empty");
    assert!(
        matches!(pmix.put("pmix.mine", b"x"), Err(Error::Invalid { .. })),
        "reserved key accepted"
    );
    pmix.commit().expect("commit");
    let mut polls = 0u64;
    pmix.fence(true, &mut || polls += 1)
        .expect("collecting fence");

    for r in 0..size {
        let got = pmix
            .get(r, BLOB_KEY)
            .unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert_eq!(got, blob(r, size), "rank {rank}: blob of rank {r}");
        let got = pmix
            .get(r, EMPTY_KEY)
            .unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert!(
            got.is_empty(),
            "rank {rank}: empty value of rank {r}: {got:?}"
        );
    }
    if n == 3 && rank == 0 {
        // mpirun 4.1.4's server answers a key nobody put with a timeout after ~2 s;
        // other launchers say NOT-FOUND. Either way it is an error naming the key.
        let e = pmix
            .get(1, "test.missing")
            .expect_err("a key nobody put was found");
        assert!(e.status().is_some(), "{e}");
        assert!(e.to_string().contains("\"test.missing\""), "{e}");
    }

    let peers = pmix.local_peers().expect("local_peers");
    assert_eq!(
        peers,
        (0..size).collect::<Vec<_>>(),
        "one node: all ranks are local"
    );

    pmix.fence(false, &mut || {}).expect("plain fence");
    drop(pmix);
    say(&format!("<rank-done {name} {rank} polls={polls}>"));
}

/// Launches `name` on `n` ranks and checks that every rank finished.
fn exchange(name: &str, n: u32) {
    if is_rank() {
        return exchange_rank(name, n);
    }
    let job = launch(name, n as usize);
    assert!(job.status.success(), "{name}: {}", describe(&job));
    for rank in 0..n {
        assert!(
            job.stdout.contains(&format!("<rank-done {name} {rank} ")),
            "{name}: rank {rank} did not report completion: {}",
            describe(&job)
        );
    }
}

#[test]
fn exchange_1_rank() {
    exchange("exchange_1_rank", 1);
}

#[test]
fn exchange_3_ranks() {
    exchange("exchange_3_ranks", 3);
}

#[test]
fn exchange_4_ranks() {
    exchange("exchange_4_ranks", 4);
}

/// Rank 1 aborts the job while the others sleep: the job must end early with an error
/// status and no rank may finish its sleep.
///
/// (The others do not wait in a fence: mpirun 4.1.4 itself sometimes crashes or hangs
/// after killing the ranks when one of them is inside a fence at that moment, with C
/// programs as well.)
#[test]
fn abort_ends_the_job() {
    const NAME: &str = "abort_ends_the_job";
    const STATUS: i32 = 7;
    if is_rank() {
        watchdog();
        let pmix = Pmix::init().expect("Pmix::init under mpirun");
        if pmix.rank() == 1 {
            let r = pmix.abort(STATUS, "abort_ends_the_job: rank 1 gives up");
            say(&format!("<abort returned {r:?}>"));
        }
        std::thread::sleep(Duration::from_secs(30));
        say(&format!("<survived {}>", pmix.rank()));
        return;
    }
    let job = launch(NAME, 3);
    assert!(
        !job.status.success(),
        "mpirun reported success after an abort: {}",
        describe(&job)
    );
    assert!(
        !job.stdout.contains("<survived"),
        "a rank outlived the abort: {}",
        describe(&job)
    );
    assert!(
        job.elapsed < Duration::from_secs(20),
        "the abort took {:?} to end the job: {}",
        job.elapsed,
        describe(&job)
    );
}

/// A rank started without a launcher's variables, and one with them faked: `launched`
/// looks only at the environment.
#[test]
fn launched_follows_the_environment() {
    const CHILD: &str = "SHMEM_PMIX_TEST_REPORT_LAUNCHED";
    if std::env::var_os(CHILD).is_some() {
        say(&format!("<launched {}>", Pmix::launched()));
        return;
    }
    let run = |fake: bool| {
        let exe = std::env::current_exe().expect("path of this test executable");
        let mut cmd = Command::new(exe);
        cmd.args(["launched_follows_the_environment", "--exact", "--nocapture"])
            .env(CHILD, "1");
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("PMIX_") {
                cmd.env_remove(k);
            }
        }
        if fake {
            cmd.env("PMIX_NAMESPACE", "fake")
                .env("PMIX_RANK", "0")
                .env("PMIX_SERVER_URI41", "fake");
        }
        let out = cmd.output().expect("run this test binary");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run(false).contains("<launched false>"));
    assert!(run(true).contains("<launched true>"));
}
