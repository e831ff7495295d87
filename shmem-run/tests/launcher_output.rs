//! The PEs' output through `shmemrun`, line by line in every mode: PEs on this machine, PEs
//! started by a host agent (`--hosts` with a start command that runs on this machine), PEs
//! started by one start command each (`--launch-agent off`), each with and without `--prefix`.
//!
//! The PEs are this test program, re-run by the launcher with [`ROLE`] set: it writes every line
//! as two `write(2)` calls, its text and then its newline, as Python run unbuffered does, so
//! that lines of different PEs would mix if the launcher passed on anything but whole lines.
//! The program has no libtest harness (`harness = false`), so that a PE writes exactly its own
//! bytes and nothing else; `main` runs the tests in turn (arguments that are not options
//! choose tests by name, as libtest's filters).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use shmem_testkit::{Finished, one_job_at_a_time, start, wait_with_limit};

/// What a PE does (`lines`, `partial`, `prompt`, `fail`); unset in the test process. Every
/// `SHMEM_*` variable reaches the PEs on other hosts too.
const ROLE: &str = "SHMEM_TEST_OUTPUT_ROLE";
/// When the PEs start writing (milliseconds since the epoch), so that they write at once.
const START_AT: &str = "SHMEM_TEST_OUTPUT_START_MS";
/// Lines every PE writes to stdout and to stderr in the `lines` role.
const LINES: usize = 400;
/// Lines every PE writes to stdout before the `fail` role's PE 1 fails.
const FAIL_LINES: usize = 50;
/// No job may take longer than this; a hung launcher fails the test instead of hanging it.
const LIMIT: Duration = Duration::from_secs(60);
/// Runs the start command (and so the host agent) on this machine, as the launcher's own tests
/// of several hosts do.
const HERE_RSH: &str = "sh -c \"exec {cmd}\" {host}";
/// PE counts of the jobs on this machine.
const LOCAL_COUNTS: [usize; 3] = [1, 3, 4];

// ---------------------------------------------------------------------------------------------
// The PE side.

/// Writes all of `bytes` to `fd` with `write(2)` (one call, unless the pipe takes less).
fn write_fd(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes at most `bytes.len()` bytes from `bytes`, a live slice, to one of this
        // process's standard descriptors.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            std::process::exit(9);
        }
        bytes = &bytes[n as usize..];
    }
}

/// Writes `text` and then its newline to `fd`: two `write(2)` calls.
fn write_line_in_two(fd: libc::c_int, text: &str) {
    write_fd(fd, text.as_bytes());
    write_fd(fd, b"\n");
}

/// The `lines` role's line `i` of PE `pe` for stdout (or stderr).
fn line(stderr: bool, pe: usize, i: usize) -> String {
    let stream = if stderr { "err" } else { "out" };
    format!("{stream} pe={pe} i={i} the quick brown fox jumps over the lazy dog")
}

/// The partial last line PE `pe` writes to stdout (or stderr) in the `partial` and `fail`
/// roles.
fn partial(stderr: bool, pe: usize) -> String {
    let stream = if stderr { "err" } else { "out" };
    format!("{stream} partial from PE {pe}")
}

fn wait_for_start() {
    let Some(at) = std::env::var(START_AT)
        .ok()
        .and_then(|v| v.parse::<u128>().ok())
    else {
        return;
    };
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    };
    while now() < at {
        thread::sleep(Duration::from_millis(1));
    }
}

/// The PE program.
fn pe(role: &str) {
    let pe: usize = std::env::var("SHMEM_PE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::process::exit(8));
    match role {
        "lines" => {
            wait_for_start();
            for i in 0..LINES {
                write_line_in_two(1, &line(false, pe, i));
                write_line_in_two(2, &line(true, pe, i));
            }
        }
        "partial" => {
            write_fd(1, partial(false, pe).as_bytes());
            write_fd(2, partial(true, pe).as_bytes());
            thread::sleep(Duration::from_millis(300));
        }
        "prompt" => {
            if pe == 0 {
                write_fd(1, b"name? ");
                let mut name = String::new();
                let _ = std::io::stdin().read_line(&mut name);
                write_fd(1, format!("hello {}\n", name.trim()).as_bytes());
            }
        }
        "fail" => {
            wait_for_start();
            for i in 0..FAIL_LINES {
                write_line_in_two(1, &line(false, pe, i));
            }
            write_fd(1, partial(false, pe).as_bytes());
            write_fd(2, partial(true, pe).as_bytes());
            if pe == 1 {
                thread::sleep(Duration::from_millis(300));
                std::process::exit(3);
            }
            // The launcher ends the others.
            thread::sleep(Duration::from_secs(30));
        }
        _ => std::process::exit(7),
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Where the job's PEs run.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `shmemrun -n N` on this machine.
    Local(usize),
    /// Two "hosts" (both this machine), a host agent each: 2 + 1 PEs.
    Agents,
    /// Two "hosts" (both this machine), a start command per PE: 2 + 2 PEs.
    NoAgents,
}

impl Mode {
    fn npes(self) -> usize {
        match self {
            Mode::Local(n) => n,
            Mode::Agents => 3,
            Mode::NoAgents => 4,
        }
    }

    /// Every mode, with the local PE counts.
    fn all() -> Vec<Mode> {
        let mut modes: Vec<Mode> = LOCAL_COUNTS.iter().map(|&n| Mode::Local(n)).collect();
        modes.extend([Mode::Agents, Mode::NoAgents]);
        modes
    }
}

/// `shmemrun` running this program as the PEs of a job in `mode`, in `role`.
fn launcher(mode: Mode, prefix: bool, role: &str) -> Command {
    let exe = std::env::current_exe().expect("the test program's path");
    let mut cmd = Command::new(shmem_testkit::shmemrun());
    match mode {
        Mode::Local(n) => {
            cmd.args(["-n", &n.to_string()]);
        }
        Mode::Agents => {
            cmd.args(["--hosts", "127.0.0.1:2,localhost:1", "--rsh", HERE_RSH]);
        }
        Mode::NoAgents => {
            cmd.args(["--hosts", "127.0.0.1:2,localhost:2", "--rsh", HERE_RSH]);
            cmd.args(["--launch-agent", "off"]);
        }
    }
    if prefix {
        cmd.arg("--prefix");
    }
    cmd.arg(exe)
        .env(ROLE, role)
        .env_remove("SHMEM_INIT_TIMEOUT")
        .stdin(Stdio::null());
    let start_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
        + 700;
    cmd.env(START_AT, start_ms.to_string());
    cmd
}

fn run(cmd: Command) -> Finished {
    let _one = one_job_at_a_time();
    start(cmd).finish(LIMIT)
}

/// `[PE pe] ` with `prefix`, else nothing.
fn label(prefix: bool, pe: usize) -> String {
    if prefix {
        format!("[PE {pe}] ")
    } else {
        String::new()
    }
}

/// Takes every one of `pieces` out of `text`, asserting that each is there exactly once.
fn take_out(text: &str, pieces: &[String], what: &str) -> String {
    let mut rest = text.to_string();
    for p in pieces {
        assert_eq!(
            rest.matches(p.as_str()).count(),
            1,
            "{what}: {p:?} is not there exactly once:\n{text}"
        );
        rest = rest.replacen(p.as_str(), "", 1);
    }
    rest
}

/// Asserts that `text` is exactly the lines `want` (each whole, with its newline), in any
/// order between PEs; `pe_of` gives a line's PE, whose lines must keep their order.
fn assert_whole_lines(text: &str, want: &[String], what: &str) {
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{what}: the last line has no newline:\n{text}"
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for l in want {
        *counts.entry(l.as_str()).or_default() += 1;
    }
    let mut broken = Vec::new();
    for l in text.lines() {
        match counts.get_mut(l) {
            Some(c) if *c > 0 => *c -= 1,
            _ => broken.push(l),
        }
    }
    let missing: Vec<&str> = counts
        .iter()
        .filter(|(_, c)| **c > 0)
        .map(|(l, _)| *l)
        .collect();
    assert!(
        broken.is_empty() && missing.is_empty(),
        "{what}: {} of {} lines came out whole; {} lines that are no line written: {:?}; \
         {} lines missing: {:?}",
        want.len() - missing.len(),
        want.len(),
        broken.len(),
        &broken[..broken.len().min(5)],
        missing.len(),
        &missing[..missing.len().min(5)],
    );
    assert_eq!(text.lines().count(), want.len(), "{what}");
}

/// Every line comes out whole, although every PE writes its text and its newline with two
/// calls; with `--prefix` every line has its label; stdout and stderr stay apart; every PE's
/// lines keep their order.
fn lines_written_in_two_calls_come_out_whole() {
    for mode in Mode::all() {
        for prefix in [false, true] {
            let what = format!("{mode:?}, prefix {prefix}");
            let r = run(launcher(mode, prefix, "lines"));
            assert_eq!(r.code(), Some(0), "{what}: {r:?}");
            for stderr in [false, true] {
                let text = if stderr { &r.stderr } else { &r.stdout };
                let want: Vec<String> = (0..mode.npes())
                    .flat_map(|pe| {
                        (0..LINES)
                            .map(move |i| format!("{}{}", label(prefix, pe), line(stderr, pe, i)))
                    })
                    .collect();
                let what = format!("{what}, {}", if stderr { "stderr" } else { "stdout" });
                assert_whole_lines(text, &want, &what);
                for pe in 0..mode.npes() {
                    let mine = format!(
                        "{}{} pe={pe} ",
                        label(prefix, pe),
                        if stderr { "err" } else { "out" }
                    );
                    let order: Vec<usize> = text
                        .lines()
                        .filter_map(|l| l.strip_prefix(&mine))
                        .filter_map(|l| l.strip_prefix("i=")?.split(' ').next()?.parse().ok())
                        .collect();
                    assert_eq!(
                        order,
                        (0..LINES).collect::<Vec<_>>(),
                        "{what}: PE {pe}'s order"
                    );
                }
            }
        }
    }
}

/// A last line without a newline, after which the PE sleeps and exits, comes out intact: as it
/// is without `--prefix` (no newline added), labelled and ended with `--prefix`.
fn a_partial_last_line_comes_out_intact() {
    for mode in Mode::all() {
        for prefix in [false, true] {
            let what = format!("{mode:?}, prefix {prefix}");
            let r = run(launcher(mode, prefix, "partial"));
            assert_eq!(r.code(), Some(0), "{what}: {r:?}");
            for stderr in [false, true] {
                let text = if stderr { &r.stderr } else { &r.stdout };
                let pieces: Vec<String> = (0..mode.npes())
                    .map(|pe| {
                        let ended = if prefix { "\n" } else { "" };
                        format!("{}{}{ended}", label(prefix, pe), partial(stderr, pe))
                    })
                    .collect();
                let what = format!("{what}, {}", if stderr { "stderr" } else { "stdout" });
                let rest = take_out(text, &pieces, &what);
                assert_eq!(rest, "", "{what}: more than the PEs wrote:\n{text}");
            }
        }
    }
}

/// A prompt without a newline shows while the PE waits for its answer (it is not held back for
/// the rest of its line), and the answer reaches PE 0. With `--prefix` the prompt and the rest
/// of its line are labelled lines each.
fn a_prompt_shows_before_its_line_ends() {
    for mode in [Mode::Local(1), Mode::Local(3), Mode::Agents, Mode::NoAgents] {
        for prefix in [false, true] {
            let what = format!("{mode:?}, prefix {prefix}");
            let mut cmd = launcher(mode, prefix, "prompt");
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let _one = one_job_at_a_time();
            let started = Instant::now();
            let mut child = cmd.spawn().expect("shmemrun starts");
            let mut stdout = child.stdout.take().expect("piped");
            let mut stderr = child.stderr.take().expect("piped");
            let (tx, rx) = mpsc::channel::<Vec<u8>>();
            let reader = thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stdout.read(&mut buf) {
                    if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
            let errors = thread::spawn(move || {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                text
            });
            // With labels, the prompt (cut by the pause) is a labelled line of its own, the
            // rest of its line the next.
            let ended = if prefix { "\n" } else { "" };
            let prompt = format!("{}name? {ended}", label(prefix, 0));
            let mut got = Vec::new();
            while got != prompt.as_bytes() {
                let left = Duration::from_secs(20).saturating_sub(started.elapsed());
                match rx.recv_timeout(left) {
                    Ok(bytes) => got.extend(bytes),
                    Err(_) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        panic!(
                            "{what}: the prompt did not come while the PE waited; got {:?}",
                            String::from_utf8_lossy(&got)
                        );
                    }
                }
            }
            {
                let mut stdin = child.stdin.take().expect("piped");
                stdin.write_all(b"bob\n").expect("shmemrun reads stdin");
            }
            let status = wait_with_limit(&mut child, started, LIMIT, libc::SIGINT)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            reader.join().expect("the reader ends");
            got.extend(rx.try_iter().flatten());
            let errors = errors.join().expect("the stderr reader ends");
            assert!(status.success(), "{what}: {status}\n{errors}");
            assert_eq!(
                String::from_utf8_lossy(&got),
                format!("{prompt}{}hello bob\n", label(prefix, 0)),
                "{what}: {errors}"
            );
        }
    }
}

/// A PE that fails ends the job; what every PE wrote before, its last partial lines too, still
/// comes out, whole.
fn output_written_before_a_failure_comes_out() {
    for mode in [Mode::Local(3), Mode::Local(4), Mode::Agents, Mode::NoAgents] {
        for prefix in [false, true] {
            let what = format!("{mode:?}, prefix {prefix}");
            let r = run(launcher(mode, prefix, "fail"));
            assert_eq!(r.code(), Some(3), "{what}: {r:?}");
            let ended = if prefix { "\n" } else { "" };
            let pieces = |stderr: bool| -> Vec<String> {
                (0..mode.npes())
                    .map(|pe| format!("{}{}{ended}", label(prefix, pe), partial(stderr, pe)))
                    .collect()
            };
            let rest = take_out(&r.stdout, &pieces(false), &format!("{what}, stdout"));
            let want: Vec<String> = (0..mode.npes())
                .flat_map(|pe| {
                    (0..FAIL_LINES)
                        .map(move |i| format!("{}{}", label(prefix, pe), line(false, pe, i)))
                })
                .collect();
            assert_whole_lines(&rest, &want, &format!("{what}, stdout"));
            // stderr: the partial lines, and the launcher's message (which may quote one of
            // them: the last lines of a PE's stderr on another host).
            for p in pieces(true) {
                assert!(
                    r.stderr.contains(&p),
                    "{what}: {p:?} missing:\n{}",
                    r.stderr
                );
            }
            assert!(
                r.stderr.contains("exited with status 3"),
                "{what}: {}",
                r.stderr
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The runner.

/// The tests, by name.
const TESTS: &[(&str, fn())] = &[
    (
        "lines_written_in_two_calls_come_out_whole",
        lines_written_in_two_calls_come_out_whole,
    ),
    (
        "a_partial_last_line_comes_out_intact",
        a_partial_last_line_comes_out_intact,
    ),
    (
        "a_prompt_shows_before_its_line_ends",
        a_prompt_shows_before_its_line_ends,
    ),
    (
        "output_written_before_a_failure_comes_out",
        output_written_before_a_failure_comes_out,
    ),
];

/// libtest's options that take a value (as the next argument).
const OPTIONS_WITH_VALUES: &[&str] = &[
    "--test-threads",
    "--skip",
    "--logfile",
    "--format",
    "--color",
    "-Z",
    "--shuffle-seed",
    "--report-time",
];

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        pe(&role);
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let mut list = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--list" {
            list = true;
        } else if a == "--skip" {
            skips.extend(it.next().cloned());
        } else if OPTIONS_WITH_VALUES.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') {
            filters.push(a.clone());
        }
    }
    let chosen: Vec<&(&str, fn())> = TESTS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .filter(|(name, _)| !skips.iter().any(|s| name.contains(s.as_str())))
        .collect();
    if list {
        for (name, _) in &chosen {
            println!("{name}: test");
        }
        return;
    }
    println!("\nrunning {} tests", chosen.len());
    let all = Instant::now();
    for (name, test) in &chosen {
        print!("test {name} ... ");
        let _ = std::io::stdout().flush();
        let t = Instant::now();
        // A failing test panics: the program exits with 101, as libtest's does.
        test();
        println!("ok ({:.1} s)", t.elapsed().as_secs_f64());
    }
    println!(
        "\ntest result: ok. {} passed; 0 failed; {} filtered out; finished in {:.2}s\n",
        chosen.len(),
        TESTS.len() - chosen.len(),
        all.elapsed().as_secs_f64()
    );
}
