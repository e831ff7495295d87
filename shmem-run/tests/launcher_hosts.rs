//! `shmemrun --hosts` on two hosts made of network namespaces (`scripts/netns-hosts.sh`, which
//! needs root: without it these tests are skipped with a `SKIPPED` line on stderr, or fail when
//! `SHMEM_TEST_REQUIRE_ROOT` is set). The PEs are this test binary, re-run by the launcher as
//! [`pe_role`], real shmem-core PEs with UCX between the hosts: placement and environment, a PE
//! killed on the far host, a host whose link goes down, a stopped PE, a killed launcher, hosts
//! that cannot be started, and no process left behind in any of these cases.

use shmem_testkit as common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use common::TwoHosts;
use shmem_core::prelude::*;

/// What the PEs do; shmemrun passes it on (every SHMEM_* variable goes to the PEs).
const ROLE: &str = "SHMEM_TEST_ROLE";
/// No job may take longer than this; a hung launcher fails the test instead of hanging it.
const LIMIT: Duration = Duration::from_secs(60);
/// Time the remote PEs have to be gone after the launcher is.
const CLEANUP: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// The PE side.

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| "-".into())
}

/// The PE program. As a normal test (no role) it does nothing.
#[test]
fn pe_role() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    if role == "stranger" {
        strangers_knock();
    }
    let world = match shmem_core::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("PE {}: init failed: {e}", env("SHMEM_PE"));
            std::process::exit(3);
        }
    };
    let me = world.my_pe();
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(format!("{line}\n").as_bytes());
        let _ = out.flush();
    };
    match role.as_str() {
        "place" => {
            let boot =
                std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
            say(format!(
                "PLACE {me} {} {} {} {} {} {} {}",
                world.n_pes(),
                env("SHMEM_NODE"),
                env("SHMEM_NNODES"),
                boot.trim(),
                env("OMP_NUM_THREADS"),
                env("SHMEM_TEST_FORWARDED"),
                env("TEST_EXPORTED"),
            ));
            // Data across the hosts, through the real runtime.
            let cells = world.alloc::<u64>(world.n_pes());
            for pe in 0..world.n_pes() {
                cells.put(pe, me..me + 1, &[me as u64 + 100]);
            }
            world.barrier_all();
            // PE `far`'s cells hold what every PE put there.
            let far = (me + world.n_pes() / 2) % world.n_pes();
            let mut got = vec![0u64; world.n_pes()];
            cells.get(far, 0..world.n_pes(), &mut got);
            let want: Vec<u64> = (0..world.n_pes() as u64).map(|p| p + 100).collect();
            assert_eq!(got, want);
            world.barrier_all();
        }
        "stranger" => {
            world.barrier_all();
            say(format!("PAST-STRANGERS {me}"));
        }
        "sleep" => {
            // `init` returned on every PE: the launcher's barrier ends it. (No `barrier_all`
            // here: its closing quiet may need a peer's progress over TCP, and the peers go
            // to sleep without calling into the library.)
            say(format!("READY {me} {}", std::process::id()));
            loop {
                thread::sleep(Duration::from_secs(1));
            }
        }
        "leave" => {
            // The last PE exits with 0 without finalizing while the others wait for it in
            // barrier_all, which goes PE to PE, not through the launcher.
            if me == world.n_pes() - 1 {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                say(format!("EXIT-AT {}", now.as_nanos()));
                std::process::exit(0);
            }
            world.barrier_all();
            say(format!("PAST-BARRIER {me}"));
        }
        other => panic!("unknown role {other}"),
    }
    drop(world);
    std::process::exit(0);
}

/// Before `init`: connections to this PE's rendezvous address (its host agent's port, or
/// shmemrun's) that do not prove the secret: junk, a hello with a wrong MAC, a frame length far
/// over the limit, one that says nothing. They must be dropped without hurting the job.
fn strangers_knock() {
    use std::net::TcpStream;
    let addr = env("SHMEM_RENDEZVOUS");
    let mut hello = vec![0u8; 4];
    hello.push(1); // a hello's tag
    hello.extend_from_slice(&4u32.to_le_bytes()); // version
    hello.extend_from_slice(&[0xab; 8 + 4 + 4 + 32 + 32]);
    let n = (hello.len() - 4) as u32;
    hello[..4].copy_from_slice(&n.to_le_bytes());
    let mut silent = Vec::new();
    for bytes in [
        b"GET / HTTP/1.0\r\n\r\n".to_vec(),
        hello,
        u32::MAX.to_le_bytes().to_vec(),
        Vec::new(),
    ] {
        let mut s = TcpStream::connect(&addr).expect("connect to the rendezvous address");
        let _ = s.write_all(&bytes);
        silent.push(s);
    }
    // Answered (a challenge, then a refusal or the end) or not, they are left open while the
    // PE starts: the silent one is closed by the launcher's handshake timeout, or here.
    std::mem::forget(silent);
}

// ---------------------------------------------------------------------------------------------
// The launcher side.

/// A running `shmemrun` on host 1 of `hosts`.
struct Job {
    child: Child,
    started: Instant,
    lines: Receiver<String>,
    stdout: Vec<String>,
    stderr: thread::JoinHandle<Vec<(Instant, String)>>,
}

#[derive(Debug)]
struct Run {
    status: ExitStatus,
    stdout: Vec<String>,
    stderr: String,
    /// The lines of stderr with the time each arrived.
    stderr_lines: Vec<(Instant, String)>,
    /// From the start, or from [`Job::finish_since`]'s instant.
    elapsed: Duration,
}

impl Run {
    /// When the first stderr line containing `needle` arrived.
    fn said_at(&self, needle: &str) -> Instant {
        self.stderr_lines
            .iter()
            .find(|(_, l)| l.contains(needle))
            .unwrap_or_else(|| panic!("nothing on stderr says {needle:?}: {self:?}"))
            .0
    }
}

impl Job {
    /// Starts `shmemrun --rsh ... ARGS -- <this test binary as pe_role>` with `role`.
    fn start(hosts: &TwoHosts, role: &str, args: &[&str]) -> Job {
        Job::start_with(hosts.shmemrun(args), role)
    }

    /// Starts `cmd` (shmemrun and its options) `-- <this test binary as pe_role>` with `role`.
    fn start_with(mut cmd: Command, role: &str) -> Job {
        cmd.arg("--")
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "pe_role", "--nocapture", "--test-threads", "1"])
            .env(ROLE, role)
            .env("SHMEM_INIT_TIMEOUT", "30")
            .env("SHMEM_TEST_FORWARDED", "forwarded")
            .env_remove("UCX_TLS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("start shmemrun");
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = thread::spawn(move || {
            BufReader::new(err)
                .lines()
                .map_while(Result::ok)
                .map(|l| (Instant::now(), l))
                .collect()
        });
        Job {
            child,
            started,
            lines,
            stdout: Vec::new(),
            stderr,
        }
    }

    /// Waits for `n` lines `READY pe pid`; returns the pids by PE.
    fn wait_ready(&mut self, n: usize) -> Vec<u32> {
        let mut pids = vec![0u32; n];
        let mut seen = 0;
        while seen < n {
            let left = LIMIT.saturating_sub(self.started.elapsed());
            let Ok(line) = self.lines.recv_timeout(left) else {
                let _ = self.child.kill();
                panic!(
                    "only {seen} of {n} PEs got ready; stdout: {:?}",
                    self.stdout
                );
            };
            // libtest's "test pe_role ... " has no newline: the line may start with it.
            if let Some(rest) = line.find("READY ").map(|i| &line[i + 6..]) {
                let v: Vec<u32> = rest.split(' ').map(|x| x.parse().unwrap()).collect();
                pids[v[0] as usize] = v[1];
                seen += 1;
            }
            self.stdout.push(line);
        }
        pids
    }

    /// Waits for the launcher to exit (stopping it and failing after [`LIMIT`]).
    fn finish(self) -> Run {
        let since = self.started;
        self.finish_since(since)
    }

    /// As [`finish`](Self::finish), with `elapsed` counted from `since`.
    fn finish_since(mut self, since: Instant) -> Run {
        let status = common::wait_with_limit(&mut self.child, self.started, LIMIT, libc::SIGINT)
            .unwrap_or_else(|how| {
                panic!(
                    "shmemrun still running after {LIMIT:?}; {how}: {:?}",
                    self.stdout
                )
            });
        let elapsed = since.elapsed();
        // The forwarders may hold the pipes a moment longer.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.stdout.push(line);
        }
        let stderr_lines: Vec<(Instant, String)> = self.stderr.join().unwrap();
        let stderr = stderr_lines.iter().map(|l| format!("{}\n", l.1)).collect();
        Run {
            status,
            stdout: self.stdout,
            stderr,
            stderr_lines,
            elapsed,
        }
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) on a pid this test read from its own PE or launcher; no memory involved.
    let rc = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("run ip");
    assert!(st.success(), "ip {args:?}: {st}");
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn pes_are_placed_in_blocks_with_their_node_and_environment() {
    let Some(hosts) =
        TwoHosts::up_or_skip("pes_are_placed_in_blocks_with_their_node_and_environment")
    else {
        return;
    };
    let real_boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let hostfile = std::env::temp_dir().join(format!("shmem-hostfile-{}", std::process::id()));
    std::fs::write(
        &hostfile,
        format!("# test\n{} slots=1\n{}:3\n", hosts.hosts[0], hosts.hosts[1]),
    )
    .unwrap();
    let slots = hosts.list(2);
    let even = format!("{},{}", hosts.hosts[0], hosts.hosts[1]);
    let file_arg = hostfile.to_str().unwrap().to_string();
    // (arguments, the node of every PE)
    let cases: [(Vec<&str>, Vec<usize>); 3] = [
        (vec!["--hosts", &slots], vec![0, 0, 1, 1]),
        (vec!["--hosts", &even, "-n", "3"], vec![0, 0, 1]),
        (vec!["--hostfile", &file_arg], vec![0, 1, 1, 1]),
    ];
    for (args, nodes) in cases {
        let mut args = args.clone();
        args.extend(["-x", "TEST_EXPORTED=exported value"]);
        let r = Job::start(&hosts, "place", &args).finish();
        assert_eq!(r.status.code(), Some(0), "{args:?}: {r:?}");
        let mut boots = vec![String::new(); 2];
        let n = nodes.len();
        for (pe, &node) in nodes.iter().enumerate() {
            let line = r
                .stdout
                .iter()
                .find_map(|l| l.find(&format!("PLACE {pe} ")).map(|i| &l[i..]))
                .unwrap_or_else(|| panic!("PE {pe} did not report: {r:?}"));
            let f: Vec<&str> = line.splitn(9, ' ').collect();
            assert_eq!(f[2], n.to_string(), "{line}");
            assert_eq!(f[3], node.to_string(), "{args:?}: {line}");
            assert_eq!(f[4], "2", "{line}");
            // Each host has a boot id of its own, which UCX takes for the machine's identity.
            assert_ne!(f[5], real_boot.trim(), "{line}");
            if boots[node].is_empty() {
                boots[node] = f[5].to_string();
            }
            assert_eq!(boots[node], f[5], "PEs of node {node}: {line}");
            // A SHMEM_* variable of the launcher's environment, and one given with -x.
            // The host's cores shared among its PEs, unless the launcher's environment sets it.
            let on_node = nodes.iter().filter(|&&x| x == node).count();
            let threads = std::env::var("OMP_NUM_THREADS").unwrap_or_else(|_| {
                let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
                (cores / on_node).max(1).to_string()
            });
            assert_eq!(
                f[6], threads,
                "OMP_NUM_THREADS, {on_node} PEs on the host: {line}"
            );
            assert_eq!(f[7], "forwarded", "{line}");
            assert_eq!(f[8], "exported value", "{line}");
        }
        assert_ne!(boots[0], boots[1]);
        hosts.assert_no_processes_left(CLEANUP);
    }
    let _ = std::fs::remove_file(&hostfile);
}

#[test]
fn a_pe_killed_on_the_far_host_ends_the_job_within_seconds() {
    let Some(hosts) =
        TwoHosts::up_or_skip("a_pe_killed_on_the_far_host_ends_the_job_within_seconds")
    else {
        return;
    };
    let mut job = Job::start(&hosts, "sleep", &["--hosts", &hosts.list(2)]);
    let pids = job.wait_ready(4);
    let killed = Instant::now();
    signal(pids[3], libc::SIGKILL);
    let r = job.finish_since(killed);
    assert_eq!(r.status.code(), Some(137), "{r:?}");
    let want = format!(
        "shmemrun: PE 3 on host {} (pid {} there) was killed by signal 9 (SIGKILL); \
         terminating 3 other PEs",
        hosts.hosts[1], pids[3]
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    let noticed = r.said_at(&want) - killed;
    eprintln!(
        "a PE killed on host 2: named by shmemrun after {noticed:?}, job over after {:?}",
        r.elapsed
    );
    assert!(
        noticed < Duration::from_secs(2),
        "noticed after {noticed:?}: {r:?}"
    );
    assert!(r.elapsed < Duration::from_secs(4), "{r:?}");
    // The others were told why over their control connections.
    for pe in 0..3 {
        assert!(
            r.stderr
                .contains(&format!("PE {pe}: shmemrun ended the job: PE 3 on host")),
            "PE {pe}: {r:?}"
        );
    }
    hosts.assert_no_processes_left(CLEANUP);
}

#[test]
fn a_host_whose_link_goes_down_is_found_by_heartbeats() {
    let Some(hosts) = TwoHosts::up_or_skip("a_host_whose_link_goes_down_is_found_by_heartbeats")
    else {
        return;
    };
    let timeout = 2.0;
    let mut job = Job::start(
        &hosts,
        "sleep",
        &["--hosts", &hosts.list(2), "--heartbeat-timeout", "2"],
    );
    job.wait_ready(4);
    let cut = Instant::now();
    ip(&["-n", &hosts.netns(1), "link", "set", "veth0", "down"]);
    let r = job.finish_since(cut);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    let want = format!(
        "shmemrun: host {} (PEs 2, 3) stopped answering: no heartbeat for",
        hosts.hosts[1]
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    assert!(
        r.stderr
            .contains("(heartbeat timeout 2 s); terminating 4 PEs"),
        "{r:?}"
    );
    let secs = r.elapsed.as_secs_f64();
    eprintln!("host 2's link cut: job over after {secs:.2} s (heartbeat timeout {timeout} s)");
    assert!(
        secs >= timeout && secs < timeout + 2.5,
        "detected after {secs} s: {r:?}"
    );
    // Cut off, the PEs on host 2 give up on the launcher by themselves (timeout + 1 s).
    hosts.assert_no_processes_left(CLEANUP);
}

#[test]
fn a_stopped_pe_is_found_by_heartbeats_and_exits_when_resumed() {
    let Some(hosts) =
        TwoHosts::up_or_skip("a_stopped_pe_is_found_by_heartbeats_and_exits_when_resumed")
    else {
        return;
    };
    // With host agents (the default) and with one start command per PE (from the environment).
    for agent in [true, false] {
        stopped_pe(&hosts, agent);
    }
}

fn stopped_pe(hosts: &TwoHosts, agent: bool) {
    // The timeout from the environment this time.
    let mut cmd = hosts.shmemrun(&["--hosts", &hosts.list(2)]);
    cmd.env("SHMEM_HEARTBEAT_TIMEOUT", "2");
    if !agent {
        cmd.env("SHMEM_LAUNCH_AGENT", "off");
    }
    let mut job = Job::start_with(cmd, "sleep");
    let pids = job.wait_ready(4);
    let stopped = Instant::now();
    signal(pids[3], libc::SIGSTOP);
    let r = job.finish_since(stopped);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    let want = format!(
        "shmemrun: PE 3 on host {} (pid {} there) stopped answering: no heartbeat for",
        hosts.hosts[1], pids[3]
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    // The last heartbeat came up to 0.5 s before the stop.
    let secs = (r.said_at(&want) - stopped).as_secs_f64();
    eprintln!("a stopped PE on host 2: named after {secs:.2} s (heartbeat timeout 2 s)");
    assert!((1.5..3.5).contains(&secs), "detected after {secs} s: {r:?}");
    assert!(r.elapsed < Duration::from_secs(6), "{r:?}");
    if agent {
        // Its host agent ended it (SIGKILL reaches a stopped process) with the others.
        hosts.assert_no_processes_left(Duration::from_secs(2));
        return;
    }
    // Every other PE is gone; the stopped one acts on the abort as soon as it runs again.
    let left: Vec<u32> = hosts.processes().iter().map(|p| p.0).collect();
    assert_eq!(left, [pids[3]], "{:?}", hosts.processes());
    signal(pids[3], libc::SIGCONT);
    hosts.assert_no_processes_left(Duration::from_secs(2));
}

/// Runs the "leave" role with `cmd`; checks that the job ends naming PE `last` as exited
/// without finalizing, and returns the time from its exit to the launcher's end.
fn leave(cmd: Command, last: usize, who: &str) -> Duration {
    let wall = std::time::SystemTime::now();
    let job = Job::start_with(cmd, "leave");
    let r = job.finish();
    let ended = wall + r.elapsed;
    let exit_at: u64 = r
        .stdout
        .iter()
        .find_map(|l| l.split("EXIT-AT ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("PE {last} did not report its exit: {r:?}"));
    let exit_at = std::time::UNIX_EPOCH + Duration::from_nanos(exit_at);
    let lag = ended.duration_since(exit_at).unwrap_or_default();
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    let want = format!("shmemrun: {who}");
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    assert!(
        r.stderr.contains("exited with status 0 without finalizing"),
        "{r:?}"
    );
    assert!(
        !r.stdout.iter().any(|l| l.contains("PAST-BARRIER")),
        "{r:?}"
    );
    lag
}

#[test]
fn a_pe_exiting_without_finalize_ends_the_job_on_one_host() {
    for path in [&[][..], &["-x", "UCX_TLS=tcp,self"]] {
        let mut cmd = Command::new(common::shmemrun());
        cmd.args(["-n", "3"]).args(path);
        let lag = leave(cmd, 2, "PE 2 (pid ");
        eprintln!("exit without finalize, one host {path:?}: job over {lag:?} after the exit");
        assert!(lag < Duration::from_secs(1), "{lag:?}");
    }
}

#[test]
fn a_pe_exiting_without_finalize_on_the_far_host_ends_the_job() {
    let Some(hosts) =
        TwoHosts::up_or_skip("a_pe_exiting_without_finalize_on_the_far_host_ends_the_job")
    else {
        return;
    };
    let cmd = hosts.shmemrun(&["--hosts", &hosts.list(2)]);
    let lag = leave(cmd, 3, &format!("PE 3 on host {} (pid ", hosts.hosts[1]));
    eprintln!("exit without finalize on host 2: job over {lag:?} after the exit");
    assert!(lag < Duration::from_secs(1), "{lag:?}");
    hosts.assert_no_processes_left(CLEANUP);
}

#[test]
fn remote_pes_end_when_the_launcher_is_killed() {
    let Some(hosts) = TwoHosts::up_or_skip("remote_pes_end_when_the_launcher_is_killed") else {
        return;
    };
    let mut job = Job::start(&hosts, "sleep", &["--hosts", &hosts.list(2)]);
    job.wait_ready(4);
    signal(job.child.id(), libc::SIGKILL);
    let r = job.finish();
    assert_eq!(r.status.code(), None, "{r:?}");
    // The watchdogs see their control connections close.
    hosts.assert_no_processes_left(Duration::from_secs(3));
}

#[test]
fn hosts_that_cannot_be_started_fail_the_job_with_the_reason() {
    let Some(hosts) =
        TwoHosts::up_or_skip("hosts_that_cannot_be_started_fail_the_job_with_the_reason")
    else {
        return;
    };
    // A host the start command does not know: it exits with 255, as ssh does.
    let bad = format!("10.231.{}.3", hosts.tag);
    let list = format!("{}:2,{bad}:2", hosts.hosts[0]);
    let r = Job::start(&hosts, "sleep", &["--hosts", &list]).finish();
    assert_eq!(r.status.code(), Some(255), "{r:?}");
    // PE 2 or PE 3, whichever is seen first.
    for want in [
        format!("on host {bad} exited with status 255 before reaching the launcher"),
        format!(
            "start command: bash {} exec {bad} env -C ",
            common::netns_script()
        ),
        format!("| netns-hosts: unknown host '{bad}'"),
    ] {
        assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    }
    assert!(r.elapsed < Duration::from_secs(10), "{r:?}");
    hosts.assert_no_processes_left(CLEANUP);

    // `ip netns exec` into a namespace that does not exist (no {cmd}: argv appended).
    let missing = format!("shmemh-{}-9", hosts.tag);
    let list = format!("{}:2,{missing}:2", hosts.netns(0));
    let mut cmd = hosts.launcher();
    cmd.args(["--hosts", &list, "--rsh", "ip netns exec {host}"])
        .args(["--rendezvous-addr", &hosts.hosts[0]]);
    let r = Job::start_with(cmd, "sleep").finish();
    assert_eq!(r.status.code(), Some(255), "{r:?}");
    for want in [
        format!("on host {missing} exited with status 255 before reaching the launcher"),
        format!("start command: ip netns exec {missing} env -C "),
        format!("| Cannot open network namespace \"{missing}\""),
    ] {
        assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    }
    hosts.assert_no_processes_left(CLEANUP);

    // A rendezvous address the PEs cannot reach: their error names it.
    let r = Job::start(
        &hosts,
        "sleep",
        &["--hosts", &hosts.list(2), "--rendezvous-addr", "127.0.0.2"],
    )
    .finish();
    assert_eq!(r.status.code(), Some(3), "{r:?}");
    assert!(
        r.stderr
            .contains("cannot connect to the launcher at 127.0.0.2:"),
        "{r:?}"
    );
    assert!(r.stderr.contains("before reaching the launcher"), "{r:?}");
    hosts.assert_no_processes_left(CLEANUP);
}

#[test]
fn hosts_left_over_from_a_killed_run_are_replaced() {
    let Some(hosts) = TwoHosts::up_or_skip("hosts_left_over_from_a_killed_run_are_replaced") else {
        return;
    };
    // A process left running on host 2, as after a killed test run.
    let mut stray = Command::new("bash")
        .args([
            common::netns_script(),
            "exec",
            &hosts.hosts[1],
            "sleep",
            "60",
        ])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while hosts.processes().len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the stray did not start"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new("bash")
        .args([common::netns_script(), "up", &hosts.tag.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{} {}", hosts.hosts[0], hosts.hosts[1])
    );
    assert!(hosts.processes().is_empty(), "{:?}", hosts.processes());
    let _ = stray.wait();
    // The new hosts work.
    let r = Job::start(&hosts, "place", &["--hosts", &hosts.list(1)]).finish();
    assert_eq!(r.status.code(), Some(0), "{r:?}");
    hosts.assert_no_processes_left(CLEANUP);
}

/// A start command template that logs every start (its host) to a file, then runs the
/// command on the host as `hosts.rsh()` does; the file's lines are the start commands run.
struct LoggedRsh {
    script: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl LoggedRsh {
    fn new(name: &str) -> LoggedRsh {
        let dir = std::env::temp_dir();
        let script = dir.join(format!("shmem-rsh-{name}-{}.sh", std::process::id()));
        let log = dir.join(format!("shmem-rsh-{name}-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&log);
        std::fs::write(
            &script,
            format!(
                "echo \"$1\" >> '{}'\nexec bash '{}' exec \"$@\"\n",
                log.display(),
                common::netns_script()
            ),
        )
        .unwrap();
        LoggedRsh { script, log }
    }

    fn template(&self) -> String {
        format!("sh {} {{host}}", self.script.display())
    }

    /// The hosts started so far, one per start command.
    fn starts(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for LoggedRsh {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.script);
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The TCP sockets process `pid` holds open (listeners and connections; not the launcher's
/// own wake-up socket pair).
fn tcp_sockets_of(pid: u32) -> usize {
    let tcp: std::collections::HashSet<String> = ["tcp", "tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/net/{t}")).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().nth(9).map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect();
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.to_string_lossy().into_owned();
            Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .filter(|inode| tcp.contains(inode))
        .count()
}

/// On `nhosts` hosts of `per_host` PEs: the number of start commands run and of sockets
/// shmemrun holds once every PE is up, with `agent` (host agents) or without; then shmemrun
/// is killed, and nothing may be left on the hosts.
fn count_starts_and_sockets(
    name: &str,
    nhosts: usize,
    per_host: usize,
    agent: bool,
) -> Option<(usize, usize)> {
    let hosts = common::Hosts::up_or_skip(name, nhosts)?;
    let rsh = LoggedRsh::new(name);
    let mut cmd = hosts.launcher();
    cmd.args(["--hosts", &hosts.list(per_host), "--rsh", &rsh.template()])
        .args(["--launch-agent", if agent { "on" } else { "off" }]);
    let mut job = Job::start_with(cmd, "sleep");
    let npes = nhosts * per_host;
    let pids = job.wait_ready(npes);
    // Every PE said READY after init: every connection is made.
    let launcher = job.child.id();
    let comm = std::fs::read_to_string(format!("/proc/{launcher}/comm")).unwrap();
    assert_eq!(comm.trim(), "shmemrun", "the launcher's pid");
    let starts = rsh.starts();
    let sockets = tcp_sockets_of(launcher);
    // The PEs' processes are on their own hosts: host i runs PEs i*per_host...
    for (pe, pid) in pids.iter().enumerate() {
        let host = pe / per_host;
        let ns = std::fs::read_link(format!("/proc/{pid}/ns/net")).unwrap();
        let script = std::process::Command::new("ip")
            .args(["netns", "pids", &hosts.netns(host)])
            .output()
            .unwrap();
        let on_host = String::from_utf8_lossy(&script.stdout);
        assert!(
            on_host.split_whitespace().any(|p| p == pid.to_string()),
            "PE {pe} (pid {pid}, {ns:?}) is not on host {host}"
        );
    }
    signal(launcher, libc::SIGKILL);
    let r = job.finish();
    assert_eq!(r.status.code(), None, "{r:?}");
    // The agents (or the PEs' watchdogs) see their connections close.
    hosts.assert_no_processes_left(Duration::from_secs(3));
    for (i, h) in hosts.hosts.iter().enumerate() {
        let n = starts.iter().filter(|s| *s == h).count();
        let want = if agent { 1 } else { per_host };
        assert_eq!(n, want, "start commands for host {i} ({h}): {starts:?}");
    }
    Some((starts.len(), sockets))
}

#[test]
fn one_agent_per_host_one_start_command_and_one_connection_each() {
    for (nhosts, per_host) in [(2, 3), (4, 2)] {
        let name = format!("one_agent_per_host_{nhosts}x{per_host}");
        let Some((starts, sockets)) = count_starts_and_sockets(&name, nhosts, per_host, true)
        else {
            return;
        };
        eprintln!(
            "{nhosts} hosts x {per_host} PEs with host agents: {starts} start commands, \
             shmemrun holds {sockets} sockets"
        );
        assert_eq!(starts, nhosts);
        // The listener and one connection per host agent.
        assert_eq!(sockets, 1 + nhosts, "{nhosts} hosts x {per_host} PEs");
    }
}

#[test]
fn without_agents_every_pe_has_a_start_command_and_two_connections() {
    let Some((starts, sockets)) = count_starts_and_sockets("without_agents_2x2", 2, 2, false)
    else {
        return;
    };
    eprintln!("2 hosts x 2 PEs without agents: {starts} start commands, {sockets} sockets");
    assert_eq!(starts, 4);
    // The listener and each PE's rendezvous and control connections.
    assert_eq!(sockets, 1 + 2 * 4);
}

#[test]
fn without_agents_a_pe_killed_on_the_far_host_ends_the_job() {
    let Some(hosts) = TwoHosts::up_or_skip("without_agents_a_pe_killed_on_the_far_host") else {
        return;
    };
    let mut job = Job::start(
        &hosts,
        "sleep",
        &["--hosts", &hosts.list(2), "--launch-agent", "off"],
    );
    let pids = job.wait_ready(4);
    signal(pids[3], libc::SIGKILL);
    let r = job.finish();
    assert_eq!(r.status.code(), Some(137), "{r:?}");
    let want = format!(
        "shmemrun: PE 3 on host {} (pid {} there) was killed by signal 9 (SIGKILL); \
         terminating 3 other PEs",
        hosts.hosts[1], pids[3]
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    hosts.assert_no_processes_left(CLEANUP);
}

#[test]
fn strangers_on_the_rendezvous_port_do_not_hurt_the_job() {
    let Some(hosts) = TwoHosts::up_or_skip("strangers_on_the_rendezvous_port_do_not_hurt_the_job")
    else {
        return;
    };
    // Every PE knocks on its host agent's port (and without agents on shmemrun's) first.
    for agent in ["on", "off"] {
        let r = Job::start(
            &hosts,
            "stranger",
            &["--hosts", &hosts.list(2), "--launch-agent", agent],
        )
        .finish();
        assert_eq!(r.status.code(), Some(0), "agents {agent}: {r:?}");
        // Through an agent the strangers never reach shmemrun: the agent drops them.
        assert_eq!(
            r.stderr.contains("refused a connection"),
            agent == "off",
            "agents {agent}: {r:?}"
        );
        for pe in 0..4 {
            assert!(
                r.stdout
                    .iter()
                    .any(|l| l.contains(&format!("PAST-STRANGERS {pe}"))),
                "agents {agent}, PE {pe}: {r:?}"
            );
        }
        hosts.assert_no_processes_left(CLEANUP);
    }
}

#[test]
fn pe_0_reads_the_launchers_stdin_on_its_host() {
    let Some(hosts) = TwoHosts::up_or_skip("pe_0_reads_the_launchers_stdin_on_its_host") else {
        return;
    };
    for agent in ["on", "off"] {
        let mut cmd = hosts.shmemrun(&["--hosts", &hosts.list(2), "--launch-agent", agent]);
        // Every PE copies its stdin to stdout: only PE 0's is the launcher's.
        cmd.args(["--prefix", "--", "cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(b"first line\nsecond line\n").unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "agents {agent}: {out:?}");
        assert_eq!(
            stdout, "[PE 0] first line\n[PE 0] second line\n",
            "agents {agent}: {out:?}"
        );
        hosts.assert_no_processes_left(CLEANUP);
    }
}

#[test]
fn remote_output_stays_whole_and_in_order_per_pe() {
    let Some(hosts) = TwoHosts::up_or_skip("remote_output_stays_whole_and_in_order_per_pe") else {
        return;
    };
    const LINES: usize = 3000;
    // Every PE writes numbered lines to stdout and stderr at once.
    let lines = format!(
        "i=0; while [ $i -lt {LINES} ]; do i=$((i+1)); echo \"out $SHMEM_PE $i\"; \
         echo \"err $SHMEM_PE $i\" >&2; done"
    );
    // PE 1 alone writes a line of 200,000 bytes (more than a piece of 64 KiB: pieces of a long
    // line do not wait for the other PEs' lines).
    let long = "if [ $SHMEM_PE = 1 ]; then head -c 200000 /dev/zero | tr '\\0' x; echo; fi";
    for agent in ["on", "off"] {
        let run = |script: &str| {
            let mut cmd = hosts.shmemrun(&["--hosts", &hosts.list(2), "--launch-agent", agent]);
            cmd.args(["--prefix", "--", "sh", "-c", script])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(0), "agents {agent}");
            hosts.assert_no_processes_left(CLEANUP);
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let (stdout, stderr) = run(&lines);
        for pe in 0..4 {
            let prefix = format!("[PE {pe}] ");
            let mine = |text: &str| -> Vec<String> {
                text.lines()
                    .filter_map(|l| l.strip_prefix(&prefix))
                    .map(str::to_string)
                    .collect()
            };
            let want_out: Vec<String> = (1..=LINES).map(|i| format!("out {pe} {i}")).collect();
            let want_err: Vec<String> = (1..=LINES).map(|i| format!("err {pe} {i}")).collect();
            // Compared by count first: a failure prints two numbers, not 3,000 lines.
            let (got_out, got_err) = (mine(&stdout), mine(&stderr));
            assert_eq!(
                got_out.len(),
                LINES,
                "agents {agent}, PE {pe}: lines on stdout"
            );
            assert_eq!(
                got_err.len(),
                LINES,
                "agents {agent}, PE {pe}: lines on stderr"
            );
            assert!(
                got_out == want_out,
                "agents {agent}, PE {pe}: stdout out of order"
            );
            assert!(
                got_err == want_err,
                "agents {agent}, PE {pe}: stderr out of order"
            );
        }
        let (stdout, _) = run(long);
        let shape: Vec<usize> = stdout.lines().map(str::len).collect();
        assert_eq!(shape, [200_007], "agents {agent}: the lengths of its lines");
        assert_eq!(
            stdout,
            format!("[PE 1] {}\n", "x".repeat(200_000)),
            "agents {agent}"
        );
    }
}
