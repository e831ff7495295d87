//! `shmemrun` against a hostile or careless world: the job secret stays off command lines,
//! connections without it are refused, floods and descriptor exhaustion cost the launcher little
//! memory and CPU, huge output lines are forwarded in pieces, absurd PE counts are refused and
//! Ctrl-C stops a large start. The PEs are shell scripts; the launcher is the real binary.
//!
//! The figures the tests measure (launcher memory under a flood, CPU while out of descriptors,
//! memory for a 100 MB line) are printed with `--nocapture`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

const SHMEMRUN: &str = env!("CARGO_BIN_EXE_shmemrun");
/// No launcher may run longer than this.
const LIMIT: Duration = Duration::from_secs(60);

/// A running `shmemrun` whose stdout lines arrive as they come and whose stderr is collected.
struct Launcher {
    child: Child,
    lines: Receiver<String>,
    stderr: thread::JoinHandle<String>,
    started: Instant,
}

impl Launcher {
    /// Starts `shmemrun ARGS` (or `cmd` as given) with stdout and stderr piped.
    fn start(mut cmd: Command) -> Launcher {
        cmd.env_remove("SHMEM_INIT_TIMEOUT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("start shmemrun");
        let out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
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
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Launcher {
            child,
            lines,
            stderr,
            started,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next stdout line that starts with `tag`, without it.
    fn line(&self, tag: &str) -> String {
        loop {
            let left = LIMIT.saturating_sub(self.started.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    if let Some(rest) = l.strip_prefix(tag) {
                        return rest.to_string();
                    }
                }
                Err(_) => panic!("no line {tag:?} from the PEs"),
            }
        }
    }

    /// Waits for the exit; returns the exit code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        let status =
            shmem_testkit::wait_with_limit(&mut self.child, self.started, LIMIT, libc::SIGINT)
                .unwrap_or_else(|how| panic!("shmemrun did not finish: {how}"));
        (status.code(), self.take_stderr())
    }

    /// Stderr, once the launcher has exited.
    fn take_stderr(&mut self) -> String {
        std::mem::replace(&mut self.stderr, thread::spawn(String::new))
            .join()
            .unwrap_or_default()
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn shmemrun(args: &[&str]) -> Command {
    let mut cmd = Command::new(SHMEMRUN);
    cmd.args(args);
    cmd
}

/// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) of `pid` so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // After the command: state is field 3, utime 14, stime 15 (1-based over the whole line).
    let get = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    get(14) + get(15)
}

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// Every process's command line on this machine, as text.
fn all_command_lines() -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) {
            out.push((pid, String::from_utf8_lossy(&bytes).replace('\0', " ")));
        }
    }
    out
}

/// The PE script of the secret tests: reports its secret, waits until the test has looked at
/// every command line (the file `go` appears), then exits.
fn secret_script(dir: &Path) -> String {
    format!(
        "echo \"SECRET $SHMEM_PE $SHMEM_JOB_SECRET\"; \
         while [ ! -e {}/go ]; do sleep 0.05; done",
        dir.display()
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shmemrun-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Checks the secret of a job of `n` PEs started with `args`: every PE has the same 256-bit
/// secret, and no command line on the machine (launcher, start commands, PEs) contains it.
fn secret_stays_off_command_lines(name: &str, args: &[&str], n: usize) {
    let dir = scratch(name);
    let script = secret_script(&dir);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["sh", "-c", &script]);
    let job = Launcher::start(shmemrun(&all));
    let mut secrets = Vec::new();
    for _ in 0..n {
        let line = job.line("SECRET ");
        let secret = line.split(' ').nth(1).unwrap_or("").to_string();
        secrets.push(secret);
    }
    let secret = secrets[0].clone();
    assert_eq!(secret.len(), 64, "{secrets:?}");
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit()), "{secret}");
    assert!(secrets.iter().all(|s| *s == secret), "{secrets:?}");
    let launcher = std::fs::read(format!("/proc/{}/cmdline", job.pid())).unwrap();
    assert!(!launcher.is_empty());
    for (pid, cmdline) in all_command_lines() {
        assert!(
            !cmdline.contains(&secret),
            "the job secret is on the command line of process {pid}: {cmdline}"
        );
    }
    std::fs::write(dir.join("go"), "").unwrap();
    let (code, stderr) = job.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_secret_is_in_the_environment_not_on_command_lines() {
    secret_stays_off_command_lines("local", &["-n", "3"], 3);
}

#[test]
fn remote_pes_read_the_secret_from_stdin_not_from_their_command_line() {
    // Two "hosts" that are this machine, through a start command that hands its stdin on.
    secret_stays_off_command_lines(
        "hosts",
        &[
            "--hosts",
            "127.0.0.1:2,localhost:1",
            "--rsh",
            "sh -c \"exec {cmd}\" {host}",
        ],
        3,
    );
}

#[test]
fn a_start_command_that_does_not_pass_stdin_is_reported() {
    let job = Launcher::start(shmemrun(&[
        "--hosts",
        "127.0.0.1",
        "--rsh",
        "sh -c \"exec {cmd} </dev/null\" {host}",
        "true",
    ]));
    let (code, stderr) = job.finish();
    assert_eq!(code, Some(126), "{stderr}");
    assert!(
        stderr.contains("no job secret on standard input"),
        "{stderr}"
    );
    assert!(!stderr.contains("SHMEM_JOB_SECRET="), "{stderr}");
}

/// A job of one shell PE that prints the rendezvous address and sleeps; returns the launcher
/// and the address.
fn sleeping_job(extra: &[&str], secs: u32) -> (Launcher, String) {
    let script = format!("echo \"ADDR $SHMEM_RENDEZVOUS\"; sleep {secs}");
    let mut args = extra.to_vec();
    args.extend(["-n", "1", "sh", "-c", &script]);
    let job = Launcher::start(shmemrun(&args));
    let addr = job.line("ADDR ");
    (job, addr)
}

#[test]
fn a_client_that_knows_the_job_id_but_not_the_secret_gets_nothing() {
    let (job, addr) = sleeping_job(&[], 3);
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // A well-formed hello with a made-up MAC, after the challenge.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    got.extend_from_slice(&buf[..n]);
    let hello = shmem_launch::wire::Msg::Hello {
        version: shmem_launch::wire::PROTOCOL_VERSION,
        job_id: 0,
        pe: 0,
        npes: 1,
        nonce: [0; 32],
        mac: [0; 32],
    };
    s.write_all(&hello.encode()).unwrap();
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("the connection stays open: {e}"),
        }
    }
    // A challenge (37 bytes) and a refusal: nothing about the job.
    let text = String::from_utf8_lossy(&got);
    assert!(got.len() < 120, "{} bytes: {text:?}", got.len());
    assert!(text.contains("connection refused"), "{text:?}");
    let (code, stderr) = job.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("refused a connection from 127.0.0.1:")
            && stderr.contains("authentication failed"),
        "{stderr}"
    );
}

#[test]
fn a_flood_from_two_hostile_connections_costs_the_launcher_little_memory() {
    let (job, addr) = sleeping_job(&[], 4);
    let pid = job.pid();
    let before = status_kib(pid, "VmRSS");
    let floods: Vec<_> = (0..2)
        .map(|_| {
            let addr = addr.clone();
            thread::spawn(move || {
                // A frame that claims 1 GiB, then as much as the launcher takes for 2 s.
                let mut s = TcpStream::connect(&addr).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
                let junk = vec![0x5au8; 1 << 20];
                let mut sent = 0usize;
                let start = Instant::now();
                if s.write_all(&(1u32 << 30).to_le_bytes()).is_ok() {
                    while start.elapsed() < Duration::from_secs(2) && sent < 1 << 30 {
                        match s.write(&junk) {
                            Ok(n) => sent += n,
                            Err(_) => break,
                        }
                    }
                }
                sent
            })
        })
        .collect();
    let sent: Vec<usize> = floods.into_iter().map(|f| f.join().unwrap()).collect();
    let peak = status_kib(pid, "VmHWM");
    eprintln!(
        "flood: two connections sent {:?} bytes; launcher RSS {before} KiB before, peak {peak} KiB",
        sent
    );
    let (code, stderr) = job.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(peak < 64 * 1024, "the launcher's peak RSS was {peak} KiB");
    assert!(
        sent.iter().all(|&s| s < 64 << 20),
        "the launcher kept reading: {sent:?}"
    );
}

#[test]
fn out_of_descriptors_the_launcher_backs_off_and_says_so_once() {
    // shmemrun with 32 descriptors, and 60 connections that never say hello.
    let script = "echo \"ADDR $SHMEM_RENDEZVOUS\"; sleep 4";
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -n 32 && exec \"$@\"", "sh", SHMEMRUN])
        .args(["-n", "1", "sh", "-c", script]);
    let job = Launcher::start(cmd);
    let addr = job.line("ADDR ");
    let pid = job.pid();
    let conns: Vec<TcpStream> = (0..60)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    thread::sleep(Duration::from_millis(300));
    let (t0, c0) = (Instant::now(), cpu_ticks(pid));
    thread::sleep(Duration::from_secs(2));
    let (t1, c1) = (Instant::now(), cpu_ticks(pid));
    let cpu = (c1 - c0) as f64 / ticks_per_second() as f64 / (t1 - t0).as_secs_f64();
    eprintln!(
        "out of descriptors: {} connections open, launcher CPU {:.1}% of a core",
        conns.len(),
        cpu * 100.0
    );
    let (code, stderr) = job.finish();
    drop(conns);
    assert_eq!(code, Some(0), "{stderr}");
    let reports = stderr.matches("cannot accept a connection").count();
    assert_eq!(reports, 1, "{stderr}");
    assert!(stderr.contains("Too many open files"), "{stderr}");
    assert!(
        cpu < 0.10,
        "the launcher used {:.0}% of a core",
        cpu * 100.0
    );
}

#[test]
fn a_100_mb_line_is_forwarded_in_pieces_with_little_memory() {
    let size: usize = 100_000_000;
    let script = format!("head -c {size} /dev/zero | tr '\\0' a; echo; sleep 1; echo END");
    let mut cmd = shmemrun(&["-n", "1", "--prefix", "sh", "-c", &script]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let mut out = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        let (mut a, mut total, mut prefixes) = (0usize, 0usize, 0usize);
        let mut buf = vec![0u8; 1 << 20];
        let mut tail = Vec::new();
        loop {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n;
                    a += buf[..n].iter().filter(|&&b| b == b'a').count();
                    prefixes += buf[..n].windows(7).filter(|w| w == b"[PE 0] ").count();
                    tail.extend_from_slice(&buf[..n]);
                    let keep = tail.len().saturating_sub(64);
                    tail.drain(..keep);
                }
            }
        }
        (a, total, prefixes, tail)
    });
    // Sample while the PE sleeps after its line (the launcher has forwarded it by then).
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() && started.elapsed() < LIMIT {
        peak = peak.max(status_kib(pid, "VmHWM"));
        thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    let (a, total, prefixes, tail) = reader.join().unwrap();
    eprintln!("a {size}-byte line: forwarded {a} bytes of it; launcher peak RSS {peak} KiB");
    assert!(status.success(), "{status}");
    assert_eq!(a, size, "{total} bytes in all");
    assert!(
        String::from_utf8_lossy(&tail).ends_with("[PE 0] END\n"),
        "{tail:?}"
    );
    // The prefix starts the long line (once, not every piece) and the END line. A pause of
    // the writer mid-line (on a loaded machine) cuts the line, its rest labelled anew.
    assert!((2..=4).contains(&prefixes), "{prefixes} prefixes");
    assert!(peak < 32 * 1024, "the launcher's peak RSS was {peak} KiB");
}

#[test]
fn an_absurd_number_of_pes_is_refused_at_once() {
    let started = Instant::now();
    let out = shmemrun(&["-n", "100000", "true"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("100000 PEs on this machine with")
            && stderr.contains("above the limit of 64")
            && stderr.contains("--oversubscribe-limit"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    // Per host with --hosts too.
    let out = shmemrun(&[
        "--hosts",
        "127.0.0.1,localhost",
        "-n",
        "100000",
        "--rsh",
        "sh -c \"exec {cmd}\" {host}",
        "true",
    ])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("50000 PEs on host 127.0.0.1"), "{stderr}");
    // The limit can be raised.
    let out = shmemrun(&["--oversubscribe-limit", "100000", "-n", "3", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn sigint_while_starting_many_pes_stops_promptly() {
    let dir = scratch("sigint-spawn");
    let script = format!("echo $$ > {}/pe$SHMEM_PE; exec sleep 60", dir.display());
    // shmemrun refuses a job its descriptor limit cannot hold (5 per PE): raise the limit where
    // allowed (root), else take as many PEs as it holds.
    let mut lim = libc::rlimit {
        rlim_cur: 600_000,
        rlim_max: 600_000,
    };
    // SAFETY: setrlimit and getrlimit on this process, with structs we own.
    unsafe {
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    let n = (lim.rlim_max.saturating_sub(100) / 5)
        .min(100_000)
        .to_string();
    let mut job = Launcher::start(shmemrun(&[
        "--oversubscribe-limit",
        "1000000",
        "-n",
        &n,
        "sh",
        "-c",
        &script,
    ]));
    // Past a second of starting, so that progress has been reported.
    thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(job.pid() as i32, libc::SIGINT) }, 0);
    let signalled = Instant::now();
    let status = shmem_testkit::wait_with_limit(&mut job.child, job.started, LIMIT, libc::SIGKILL)
        .unwrap_or_else(|how| panic!("shmemrun did not stop: {how}"));
    let took = signalled.elapsed();
    let stderr = job.take_stderr();
    let started = std::fs::read_dir(&dir).unwrap().count();
    eprintln!(
        "SIGINT after 1.5 s of starting: {started} PEs started, launcher gone {took:?} later"
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("shmemrun: started "),
        "no progress: {stderr}"
    );
    assert!(stderr.contains("received SIGINT"), "{stderr}");
    assert!(stderr.contains("stopped starting PEs after"), "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Every PE that was started is gone.
    let pid_in = |path: &std::path::Path| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        // A shell stopped between creating its file and writing its pid leaves it empty; a live
        // one would have written it long before this.
        let pid = match pid_in(&entry.path()) {
            Some(pid) => pid,
            None => {
                thread::sleep(Duration::from_millis(200));
                match pid_in(&entry.path()) {
                    Some(pid) => pid,
                    None => continue,
                }
            }
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        assert!(
            stat.is_empty() || state == Some("Z"),
            "PE process {pid} survived: {stat}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_says_what_is_not_detected_and_how_to_get_it() {
    let out = shmemrun(&["--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for want in [
        "Not detected on one host: a PE stopped with SIGSTOP",
        "--heartbeat-timeout <SECS>",
        "--oversubscribe-limit <N>",
        "--bind <IP>",
        "SHMEM_JOB_SECRET",
        "exits with status 0 without finalizing",
    ] {
        assert!(help.contains(want), "{want:?} missing from --help:\n{help}");
    }
}
