//! `shmemrun` with plain shell scripts as PEs: environment, exit codes, failure handling,
//! signals, output forwarding. Every test runs real processes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use shmem_testkit::{Finished as Run, Running, start};

const SHMEMRUN: &str = env!("CARGO_BIN_EXE_shmemrun");
/// The same launcher under the OpenSHMEM name.
const OSHRUN: &str = env!("CARGO_BIN_EXE_oshrun");
/// No test may take longer than this; a hung launcher fails the test instead of hanging it.
const LIMIT: Duration = Duration::from_secs(30);

fn shmemrun(args: &[&str]) -> Command {
    launcher(SHMEMRUN, args)
}

fn oshrun(args: &[&str]) -> Command {
    launcher(OSHRUN, args)
}

fn launcher(exe: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_remove("SHMEM_INIT_TIMEOUT")
        .stdin(Stdio::null());
    cmd
}

/// Waits for the launcher (stopping it and failing after [`LIMIT`]) and collects its output.
fn finish(child: Running) -> Run {
    child.finish(LIMIT)
}

fn run(cmd: Command) -> Run {
    finish(start(cmd))
}

/// A fresh directory for pid files.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shmemrun-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until `n` PEs have written their pid files into `dir`; returns the pids.
fn wait_for_pids(dir: &Path, n: usize) -> Vec<libc::pid_t> {
    let started = Instant::now();
    loop {
        let pids: Vec<libc::pid_t> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        if pids.len() == n {
            return pids;
        }
        assert!(
            started.elapsed() < LIMIT,
            "only {} of {n} pid files",
            pids.len()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// Reads the pids the PEs wrote (after the launcher has finished).
fn pids_in(dir: &Path) -> Vec<libc::pid_t> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn alive(pid: libc::pid_t) -> bool {
    // A zombie has ended; whether it is reaped depends on who adopted it (in a container, PID 1
    // may never reap), so it does not count as a process left behind.
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next());
        if state == Some("Z") {
            return false;
        }
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Asserts that none of `pids` exists any more (allowing a moment for the kernel).
fn assert_all_gone(pids: &[libc::pid_t]) {
    let started = Instant::now();
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "PE processes still alive: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn every_pe_gets_its_environment_and_zero_exits_give_zero() {
    for n in [1usize, 3, 8] {
        let r = run(shmemrun(&[
            "-n",
            &n.to_string(),
            "sh",
            "-c",
            "echo \"$SHMEM_PE $SHMEM_NPES $SHMEM_RENDEZVOUS $SHMEM_JOB_ID $SHMEM_INIT_TIMEOUT\"",
        ]));
        assert_eq!(r.code(), Some(0), "{r:?}");
        let lines: Vec<Vec<&str>> = r.stdout.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), n, "{r:?}");
        let pes: BTreeSet<usize> = lines.iter().map(|l| l[0].parse().unwrap()).collect();
        assert_eq!(pes, (0..n).collect(), "{r:?}");
        for l in &lines {
            assert_eq!(l[1], n.to_string());
            assert!(l[2].starts_with("127.0.0.1:"), "{l:?}");
            assert_eq!(l[3].len(), 16, "{l:?}");
            assert_eq!(l[4], "60");
            assert_eq!(
                &l[2..4],
                &lines[0][2..4],
                "one rendezvous and job id per job"
            );
        }
        assert!(r.stderr.is_empty(), "{r:?}");
    }
}

/// Every PE gets `OMP_NUM_THREADS` (OpenMP's and OpenBLAS's pool size): the cores shared among
/// the host's PEs, at least 1; a value in the launcher's environment or given with `-x` stays.
#[test]
fn pes_get_a_share_of_the_cores_as_their_thread_count() {
    let cores = thread::available_parallelism().map_or(1, |c| c.get());
    for n in [1usize, 2, 3, 8] {
        let mut cmd = shmemrun(&["-n", &n.to_string(), "sh", "-c", "echo $OMP_NUM_THREADS"]);
        cmd.env_remove("OMP_NUM_THREADS");
        let r = run(cmd);
        assert_eq!(r.code(), Some(0), "{r:?}");
        let want = (cores / n).max(1).to_string();
        let got: Vec<&str> = r.stdout.lines().collect();
        assert_eq!(
            got,
            vec![want.as_str(); n],
            "{n} PEs on {cores} cores: {r:?}"
        );
    }
    let mut cmd = shmemrun(&["-n", "2", "sh", "-c", "echo $OMP_NUM_THREADS"]);
    cmd.env("OMP_NUM_THREADS", "5");
    let r = run(cmd);
    assert_eq!(r.stdout.lines().collect::<Vec<_>>(), ["5", "5"], "{r:?}");
    let mut cmd = shmemrun(&[
        "-n",
        "1",
        "-x",
        "OMP_NUM_THREADS=6",
        "sh",
        "-c",
        "echo $OMP_NUM_THREADS",
    ]);
    cmd.env_remove("OMP_NUM_THREADS");
    let r = run(cmd);
    assert_eq!(r.stdout.trim(), "6", "{r:?}");
}

#[test]
fn init_timeout_is_passed_on() {
    let r = run(shmemrun(&[
        "--init-timeout",
        "2.5",
        "sh",
        "-c",
        "echo $SHMEM_INIT_TIMEOUT",
    ]));
    assert_eq!((r.code(), r.stdout.trim()), (Some(0), "2.5"), "{r:?}");
    let mut cmd = shmemrun(&["sh", "-c", "echo $SHMEM_INIT_TIMEOUT"]);
    cmd.env("SHMEM_INIT_TIMEOUT", "7");
    let r = run(cmd);
    assert_eq!((r.code(), r.stdout.trim()), (Some(0), "7"), "{r:?}");
    let r = run(shmemrun(&["--init-timeout", "soon", "true"]));
    assert_eq!(r.code(), Some(2), "{r:?}");
}

/// PEs get 256 KiB TCP segments from UCX and no UCX memory events unless the user chose.
#[test]
fn ucx_defaults_are_passed_on_unless_set() {
    let show = "echo $UCX_TCP_TX_SEG_SIZE $UCX_TCP_RX_SEG_SIZE $UCX_MEM_EVENTS";
    let mut cmd = shmemrun(&["sh", "-c", show]);
    cmd.env_remove("UCX_TCP_TX_SEG_SIZE")
        .env_remove("UCX_TCP_RX_SEG_SIZE")
        .env_remove("UCX_MEM_EVENTS");
    let r = run(cmd);
    assert_eq!(
        (r.code(), r.stdout.trim()),
        (Some(0), "256k 256k no"),
        "{r:?}"
    );
    let mut cmd = shmemrun(&["sh", "-c", show]);
    cmd.env("UCX_TCP_TX_SEG_SIZE", "8k")
        .env_remove("UCX_TCP_RX_SEG_SIZE")
        .env("UCX_MEM_EVENTS", "yes");
    let r = run(cmd);
    assert_eq!(
        (r.code(), r.stdout.trim()),
        (Some(0), "8k 256k yes"),
        "{r:?}"
    );
}

#[test]
fn program_arguments_pass_through() {
    let r = run(shmemrun(&[
        "-n",
        "2",
        "--",
        "sh",
        "-c",
        "echo \"$@\"",
        "sh",
        "--foo",
        "-n",
        "3",
    ]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(r.stdout, "--foo -n 3\n--foo -n 3\n");
    // Without "--" too: everything after PROGRAM belongs to it.
    let r = run(shmemrun(&["-n", "1", "echo", "-p", "--np", "5"]));
    assert_eq!(r.stdout, "-p --np 5\n", "{r:?}");
}

#[test]
fn only_pe_0_reads_stdin() {
    let mut cmd = shmemrun(&["-n", "3", "-p", "sh", "-c", "read x; echo \"got:$x\""]);
    cmd.stdin(Stdio::piped());
    let mut child = start(cmd);
    {
        use std::io::Write;
        let mut stdin = child.take_stdin().unwrap();
        stdin.write_all(b"hello\n").unwrap();
    }
    let r = finish(child);
    assert_eq!(r.code(), Some(0), "{r:?}");
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        ["[PE 0] got:hello", "[PE 1] got:", "[PE 2] got:"],
        "{r:?}"
    );
}

#[test]
fn a_pe_that_exits_zero_early_is_fine() {
    let r = run(shmemrun(&[
        "-n",
        "3",
        "sh",
        "-c",
        "[ $SHMEM_PE = 0 ] || sleep 0.3",
    ]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert!(r.elapsed >= Duration::from_millis(300));
}

#[test]
fn failing_pe_ends_the_job_with_its_status() {
    let dir = scratch_dir("fail");
    let script = format!(
        "echo $$ > {}/pe$SHMEM_PE; if [ $SHMEM_PE = 1 ]; then sleep 0.3; exit 3; fi; exec sleep 30",
        dir.display()
    );
    let r = run(shmemrun(&["-n", "4", "sh", "-c", &script]));
    assert_eq!(r.code(), Some(3), "{r:?}");
    assert!(r.elapsed < Duration::from_millis(2300), "{r:?}");
    assert!(r.stderr.contains("PE 1 (pid "), "{r:?}");
    assert!(
        r.stderr
            .contains("exited with status 3; terminating 3 other PEs"),
        "{r:?}"
    );
    let pids = pids_in(&dir);
    assert_eq!(pids.len(), 4);
    assert_all_gone(&pids);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pe_that_ignores_sigterm_is_killed() {
    let dir = scratch_dir("stubborn");
    let script = format!(
        "echo $$ > {}/pe$SHMEM_PE; if [ $SHMEM_PE = 0 ]; then sleep 0.3; exit 1; fi; \
         trap '' TERM; while :; do sleep 0.05; done",
        dir.display()
    );
    let r = run(shmemrun(&["-n", "2", "sh", "-c", &script]));
    assert_eq!(r.code(), Some(1), "{r:?}");
    assert!(r.elapsed < Duration::from_secs(2), "{r:?}");
    assert_all_gone(&pids_in(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pe_killed_by_a_signal_gives_128_plus_signal() {
    let r = run(shmemrun(&[
        "-n",
        "3",
        "sh",
        "-c",
        "if [ $SHMEM_PE = 2 ]; then kill -SEGV $$; fi; exec sleep 30",
    ]));
    assert_eq!(r.code(), Some(139), "{r:?}");
    assert!(r.stderr.contains("PE 2 (pid "), "{r:?}");
    assert!(r.stderr.contains("killed by signal 11 (SIGSEGV"), "{r:?}");
    assert!(r.elapsed < Duration::from_secs(2), "{r:?}");
}

#[test]
fn sigint_to_the_launcher_stops_every_pe() {
    let dir = scratch_dir("sigint");
    let script = format!("echo $$ > {}/pe$SHMEM_PE; exec sleep 30", dir.display());
    let child = start(shmemrun(&["-n", "3", "sh", "-c", &script]));
    let pids = wait_for_pids(&dir, 3);
    child.signal(libc::SIGINT).unwrap();
    let r = finish(child);
    assert_eq!(r.code(), Some(130), "{r:?}");
    assert!(
        r.stderr.contains("received SIGINT; terminating 3 PEs"),
        "{r:?}"
    );
    assert_all_gone(&pids);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pes_die_with_a_killed_launcher() {
    let dir = scratch_dir("sigkill");
    let script = format!("echo $$ > {}/pe$SHMEM_PE; exec sleep 30", dir.display());
    let child = start(shmemrun(&["-n", "3", "sh", "-c", &script]));
    let pids = wait_for_pids(&dir, 3);
    child.signal(libc::SIGKILL).unwrap();
    let r = finish(child);
    assert_eq!(r.status.code(), None, "{r:?}");
    // PR_SET_PDEATHSIG: the kernel kills the PEs (init reaps them).
    assert_all_gone(&pids);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prefix_labels_every_line_and_keeps_streams_apart() {
    let r = run(shmemrun(&[
        "-n",
        "3",
        "--prefix",
        "sh",
        "-c",
        "echo out $SHMEM_PE; echo err $SHMEM_PE >&2; echo second; printf 'no newline'",
    ]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    for pe in 0..3 {
        for want in [
            format!("[PE {pe}] out {pe}"),
            format!("[PE {pe}] second"),
            format!("[PE {pe}] no newline"),
        ] {
            assert!(
                r.stdout.lines().any(|l| l == want),
                "{want:?} missing: {r:?}"
            );
        }
        assert!(
            r.stderr.lines().any(|l| l == format!("[PE {pe}] err {pe}")),
            "{r:?}"
        );
    }
    assert_eq!(r.stdout.lines().count(), 9, "{r:?}");
    assert!(r.stdout.lines().all(|l| l.starts_with("[PE ")), "{r:?}");
}

#[test]
fn missing_program_is_127_with_a_message() {
    let r = run(shmemrun(&["-n", "2", "./definitely-not-here"]));
    assert_eq!(r.code(), Some(127), "{r:?}");
    assert!(
        r.stderr
            .contains("shmemrun: cannot start ./definitely-not-here: No such file or directory"),
        "{r:?}"
    );
    let r = run(shmemrun(&["/etc/passwd"]));
    assert_eq!(r.code(), Some(126), "{r:?}");
}

#[test]
fn bad_command_lines_are_refused() {
    for args in [&["-n", "0", "true"][..], &["-n", "x", "true"], &[]] {
        let r = run(shmemrun(args));
        assert_eq!(r.code(), Some(2), "{args:?}: {r:?}");
    }
    let r = run(shmemrun(&["--help"]));
    assert_eq!(r.code(), Some(0));
    assert!(
        r.stdout.contains("--np <N>") && r.stdout.contains("--prefix"),
        "{r:?}"
    );
}

/// The PE numbers a job of `sh -c 'echo $SHMEM_PE'` printed, one per line.
fn pes_printed(r: &Run) -> Vec<usize> {
    let mut pes: Vec<usize> = r
        .stdout
        .lines()
        .map(|l| l.trim().parse().expect("a PE number"))
        .collect();
    pes.sort_unstable();
    pes
}

#[test]
fn oshrun_takes_np_and_the_other_spellings_of_mpirun() {
    let r = run(oshrun(&["-np", "3", "sh", "-c", "echo $SHMEM_PE"]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(pes_printed(&r), [0, 1, 2], "{r:?}");
    assert!(r.stderr.is_empty(), "{r:?}");
    for (exe, np) in [
        (SHMEMRUN, &["-np", "2"][..]),
        (SHMEMRUN, &["-np=2"]),
        (OSHRUN, &["--np", "2"]),
        (OSHRUN, &["--n", "2"]),
        (OSHRUN, &["-n", "2"]),
        (OSHRUN, &["-c", "2"]),
    ] {
        let mut args = np.to_vec();
        args.extend(["sh", "-c", "echo $SHMEM_PE"]);
        let r = run(launcher(exe, &args));
        assert_eq!(r.code(), Some(0), "{exe} {np:?}: {r:?}");
        assert_eq!(pes_printed(&r), [0, 1], "{exe} {np:?}: {r:?}");
    }
}

#[test]
fn np_among_the_programs_arguments_passes_through() {
    let r = run(oshrun(&[
        "-np",
        "2",
        "sh",
        "-c",
        "echo \"$@\"",
        "sh",
        "-np",
        "3",
    ]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(r.stdout, "-np 3\n-np 3\n", "{r:?}");
    let r = run(oshrun(&["-p", "--", "echo", "-np", "3", "-hostfile"]));
    assert_eq!(r.stdout, "[PE 0] -np 3 -hostfile\n", "{r:?}");
}

#[test]
fn a_bad_np_is_refused_naming_the_value_and_messages_name_oshrun() {
    for exe in [OSHRUN, SHMEMRUN] {
        let r = run(launcher(exe, &["-np", "x", "true"]));
        assert_eq!(r.code(), Some(2), "{r:?}");
        assert!(
            r.stderr.contains("invalid value 'x' for '--np <N>'"),
            "{r:?}"
        );
        assert_eq!(r.stdout, "", "{r:?}");
    }
    let r = run(oshrun(&["-np", "0", "true"]));
    assert_eq!(r.code(), Some(2), "{r:?}");
    assert!(r.stderr.contains("'0'"), "{r:?}");
    let r = run(oshrun(&["-np", "2", "./definitely-not-here"]));
    assert_eq!(r.code(), Some(127), "{r:?}");
    assert!(
        r.stderr
            .starts_with("oshrun: cannot start ./definitely-not-here: No such file or directory"),
        "{r:?}"
    );
    let r = run(oshrun(&["--version"]));
    assert!(r.stdout.starts_with("oshrun "), "{r:?}");
    let r = run(oshrun(&["--help"]));
    assert!(r.stdout.contains("Usage: oshrun [OPTIONS]"), "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Several hosts, without root: a start command that runs the remote command right here.

/// `sh -c "exec CMD" HOST`: the remote command, shell-quoted in one word as for ssh, run on this
/// host in place of the start command (so that stopping the start command stops the PE, as a
/// shell script PE has no control connection).
const HERE_RSH: &str = "sh -c \"exec {cmd}\" {host}";

#[test]
fn local_jobs_are_node_0_of_1_and_get_exported_variables() {
    let r = run(shmemrun(&[
        "-n",
        "2",
        "-x",
        "EXPORTED_A=a b",
        "-x",
        "PATH",
        "sh",
        "-c",
        "echo \"$SHMEM_NODE $SHMEM_NNODES $EXPORTED_A\"",
    ]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(r.stdout, "0 1 a b\n0 1 a b\n", "{r:?}");
}

#[test]
fn pes_learn_their_place_on_the_host_and_whether_to_bind() {
    let script = "echo \"$SHMEM_PE $SHMEM_LOCAL_RANK $SHMEM_LOCAL_SIZE $SHMEM_BIND_TO\"";
    let sorted = |r: &Run| {
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        lines.sort();
        lines.join("\n")
    };
    let r = run(shmemrun(&["-n", "3", "sh", "-c", script]));
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(sorted(&r), "0 0 3 core\n1 1 3 core\n2 2 3 core", "{r:?}");
    let r = run(shmemrun(&[
        "-n",
        "2",
        "--bind-to",
        "none",
        "sh",
        "-c",
        script,
    ]));
    assert_eq!(sorted(&r), "0 0 2 none\n1 1 2 none", "{r:?}");
    // $SHMEM_BIND_TO is the default; --bind-to wins over it.
    let mut cmd = shmemrun(&["-n", "1", "sh", "-c", script]);
    cmd.env("SHMEM_BIND_TO", "none");
    assert_eq!(run(cmd).stdout, "0 0 1 none\n");
    let mut cmd = shmemrun(&["-n", "1", "--bind-to", "core", "sh", "-c", script]);
    cmd.env("SHMEM_BIND_TO", "none");
    assert_eq!(run(cmd).stdout, "0 0 1 core\n");
    let mut cmd = shmemrun(&["-n", "1", "true"]);
    cmd.env("SHMEM_BIND_TO", "socket");
    let r = run(cmd);
    assert_eq!(r.code(), Some(2), "{r:?}");
    assert!(r.stderr.contains("expected core or none"), "{r:?}");
}

#[test]
fn hosts_get_their_pes_in_blocks_through_the_start_command() {
    let script = "echo \"$SHMEM_PE|$SHMEM_NODE|$SHMEM_NNODES|$SHMEM_NPES|$SHMEM_RENDEZVOUS|\
                  $EXPORTED_A|$SHMEM_EXTRA|$UCX_EXTRA|$PWD|$0|$1|$SHMEM_LOCAL_RANK|\
                  $SHMEM_LOCAL_SIZE\"";
    let mut cmd = shmemrun(&[
        "--hosts",
        "127.0.0.1:2,localhost:1",
        "--rsh",
        HERE_RSH,
        "-x",
        "EXPORTED_A=it's \"quoted\" $HOME",
        "sh",
        "-c",
        script,
        "zero",
        "one two",
    ]);
    cmd.env("SHMEM_EXTRA", "shmem var")
        .env("UCX_EXTRA", "ucx var");
    let r = run(cmd);
    assert_eq!(r.code(), Some(0), "{r:?}");
    let mut lines: Vec<Vec<&str>> = r.stdout.lines().map(|l| l.split('|').collect()).collect();
    lines.sort();
    assert_eq!(lines.len(), 3, "{r:?}");
    let cwd = std::env::current_dir().unwrap();
    for (pe, l) in lines.iter().enumerate() {
        let node = if pe < 2 { "0" } else { "1" };
        assert_eq!(l[..4], [pe.to_string().as_str(), node, "2", "3"], "{r:?}");
        // Both host names resolve to loopback, so the launcher is reached there.
        assert!(l[4].starts_with("127.0.0.1:"), "{r:?}");
        assert_eq!(l[5], "it's \"quoted\" $HOME", "{r:?}");
        assert_eq!(l[6..8], ["shmem var", "ucx var"], "{r:?}");
        assert_eq!(l[8], cwd.to_str().unwrap(), "{r:?}");
        assert_eq!(l[9..11], ["zero", "one two"], "{r:?}");
        // Host 0 runs PEs 0 and 1, host 1 PE 2.
        let local = if pe < 2 { [pe, 2] } else { [0, 1] };
        assert_eq!(l[11..], local.map(|v| v.to_string()), "{r:?}");
    }
    // Without slots: as even as possible, the first hosts get one more.
    let r = run(shmemrun(&[
        "--hosts",
        "127.0.0.1,localhost",
        "-n",
        "3",
        "--rsh",
        HERE_RSH,
        "sh",
        "-c",
        "echo $SHMEM_PE $SHMEM_NODE",
    ]));
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["0 0", "1 0", "2 1"], "{r:?}");
}

#[test]
fn a_failing_pe_on_a_host_ends_the_job_with_its_status() {
    let r = run(shmemrun(&[
        "--hosts",
        "127.0.0.1,localhost",
        "-n",
        "2",
        "--rsh",
        HERE_RSH,
        "sh",
        "-c",
        "if [ $SHMEM_PE = 1 ]; then sleep 0.3; exit 3; fi; exec sleep 30",
    ]));
    assert_eq!(r.code(), Some(3), "{r:?}");
    // A shell script never reaches the launcher: its start command and stderr are shown.
    assert!(
        r.stderr.contains(
            "shmemrun: PE 1 on host localhost exited with status 3 before reaching the \
             launcher; terminating 1 other PE"
        ),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("shmemrun:   start command: sh -c 'exec env -C "),
        "{r:?}"
    );
    assert!(r.stderr.contains("it wrote nothing on stderr"), "{r:?}");
    // 0.3 s, the abort grace (1 s) for PE 0, SIGTERM.
    assert!(r.elapsed < Duration::from_secs(3), "{r:?}");
}

#[test]
fn start_commands_that_cannot_run_or_fail_are_reported() {
    let r = run(shmemrun(&[
        "--hosts",
        "127.0.0.1",
        "--rsh",
        "/nonexistent/rsh {host}",
        "true",
    ]));
    assert_eq!(r.code(), Some(127), "{r:?}");
    assert!(
        r.stderr.contains(
            "shmemrun: cannot run the start command of PE 0 on host 127.0.0.1: \
             /nonexistent/rsh: No such file or directory"
        ),
        "{r:?}"
    );
    // Like ssh that cannot reach its host: status 255 and a word on stderr.
    let r = run(shmemrun(&[
        "--hosts",
        "127.0.0.1",
        "--rsh",
        "sh -c 'echo ssh: connect to host $0 port 22: Connection refused >&2; exit 255' {host}",
        "true",
    ]));
    assert_eq!(r.code(), Some(255), "{r:?}");
    for want in [
        "shmemrun: PE 0 on host 127.0.0.1 exited with status 255 before reaching the launcher",
        "shmemrun:   start command: sh -c 'echo ssh: connect",
        "shmemrun:   | ssh: connect to host 127.0.0.1 port 22: Connection refused",
    ] {
        assert!(r.stderr.contains(want), "{want}\n{r:?}");
    }
    assert!(r.elapsed < Duration::from_secs(2), "{r:?}");
}

#[test]
fn bad_host_options_are_refused_with_the_reason() {
    let dir = scratch_dir("hostfile");
    let hostfile = dir.join("hosts");
    std::fs::write(&hostfile, "node1 slots=2\nnode2 cpus=4\n").unwrap();
    let hostfile = hostfile.to_str().unwrap();
    for (args, want) in [
        (&["--hosts", "a,,b"][..], "--hosts: host \"\" is empty"),
        (&["--hosts", "a:0"], "a host needs at least 1 slot"),
        (
            &["--hosts", "a,a"],
            "host a is listed twice; give it slots instead (a:2)",
        ),
        (
            &["--hosts", "a:2,b"],
            "give slots for every host or for none",
        ),
        (
            &["--hosts", "a:1,b:1", "-n", "3"],
            "3 PEs do not fit in the 2 slots",
        ),
        (&["--hosts", "-oProxyCommand=x"], "starts with '-'"),
        (
            &["--hosts", "a", "--hostfile", hostfile],
            "cannot be used with",
        ),
        (&["--rsh", "ssh {host} {cmd}"], "--hosts"),
        (
            &["--hosts", "127.0.0.1", "--rsh", "ssh node1 {cmd}"],
            "does not contain {host}",
        ),
        (
            &["--hosts", "127.0.0.1", "--rsh", "ssh 'x {host}"],
            "unterminated '",
        ),
        (
            &["--hosts", "no-such-host.invalid"],
            "pass --rendezvous-addr",
        ),
        (
            &["--hosts", "a", "--rendezvous-addr", "::1"],
            "expected an IPv4 address",
        ),
        (
            &["--hosts", "127.0.0.1", "--heartbeat-timeout", "0.2"],
            "too short",
        ),
        (&["--hostfile", hostfile], ":2: \"cpus=4\": expected HOST"),
        (
            &["--hostfile", "/nonexistent/hosts"],
            "cannot read the host file",
        ),
        (&["-x", "1BAD"], "\"1BAD\" is not a variable name"),
        (&["-x", "SHMEM_PE=3"], "shmemrun sets SHMEM_PE itself"),
        (
            &["-x", "SHMEMRUN_SURELY_UNSET"],
            "is not set in shmemrun's environment",
        ),
    ] {
        let mut all = args.to_vec();
        all.push("true");
        let r = run(shmemrun(&all));
        assert_eq!(r.code(), Some(2), "{args:?}: {r:?}");
        assert!(r.stderr.contains(want), "{args:?}: want {want:?}: {r:?}");
    }
    let r = run(shmemrun(&["--help"]));
    for option in [
        "--hosts <HOST[:SLOTS],...>",
        "--hostfile <FILE>",
        "--rsh <TEMPLATE>",
        "--rendezvous-addr <IP>",
        "--heartbeat-timeout <SECS>",
        "-x <NAME[=VALUE]>",
        "--bind-to <core|none>",
        "SHMEM_NODE",
        "SHMEM_NNODES",
        "SHMEM_LOCAL_RANK",
        "SHMEM_BIND_TO",
        "SHMEM_RSH",
        "SHMEM_RENDEZVOUS_ADDR",
        "SHMEM_HEARTBEAT_TIMEOUT",
    ] {
        assert!(r.stdout.contains(option), "{option}: {r:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_low_soft_descriptor_limit_is_raised_and_a_low_hard_one_is_named() {
    use std::os::unix::process::CommandExt;
    let with_limits = |soft: u64, hard: u64, args: &[&str]| {
        let mut cmd = shmemrun(args);
        // SAFETY: setrlimit only, between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        run(cmd)
    };
    // Soft 64 would not hold 40 PEs' pipes and connections; the hard limit does.
    let r = with_limits(64, 4096, &["-n", "40", "sh", "-c", "exit 0"]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    // A hard limit too low for the job: refused before anything starts, naming the numbers.
    let r = with_limits(64, 300, &["-n", "100", "true"]);
    assert_eq!(r.code(), Some(2), "{r:?}");
    assert!(
        r.stderr
            .contains("a job of 100 PEs needs about 516 open files")
            && r.stderr.contains("the limit is 300"),
        "{r:?}"
    );
    // Across hosts without agents every PE holds descriptors in shmemrun; with agents (the
    // default) only one per host does, so the same limit holds 200 PEs on 2 hosts (whose start
    // commands then fail here: `false` stands in for ssh).
    let hosts = [
        "--hosts",
        "127.0.0.1:100,127.0.0.2:100",
        "--rsh",
        "false {host} {cmd}",
    ];
    let off: Vec<&str> = hosts
        .iter()
        .copied()
        .chain(["--launch-agent", "off", "true"])
        .collect();
    let r = with_limits(64, 300, &off);
    assert_eq!(r.code(), Some(2), "{r:?}");
    assert!(
        r.stderr
            .contains("a job of 200 PEs needs about 1016 open files")
            && r.stderr.contains("the limit is 300"),
        "{r:?}"
    );
    let on: Vec<&str> = hosts.iter().copied().chain(["true"]).collect();
    let r = with_limits(64, 300, &on);
    assert!(!r.stderr.contains("open files"), "{r:?}");
    // Both hosts' start commands fail; whichever the launcher hears of first is named.
    assert!(
        (r.stderr.contains("PEs 0-99 on host 127.0.0.1")
            || r.stderr.contains("PEs 100-199 on host 127.0.0.2"))
            && r.stderr.contains("host agent's start command"),
        "the failed start is named: {r:?}"
    );
}
