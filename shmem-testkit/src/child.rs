//! Children with a time limit: start a process with its output captured, wait for it at most
//! so long, and stop it (and fail the test with its output) when it runs over.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// How long a child that ran over its limit has, after its stop signal, before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How long the output of a child that has exited may stay open (held by a process it started)
/// before the test fails.
const OUTPUT_GRACE: Duration = Duration::from_secs(10);

/// One job at a time in a test process: the machine may have 2 cores, and jobs run up to 8
/// PEs. Hold the guard while the job runs.
pub fn one_job_at_a_time() -> MutexGuard<'static, ()> {
    static JOBS: Mutex<()> = Mutex::new(());
    // A test that panicked while holding the lock leaves nothing to repair.
    JOBS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A child process started by [`start`], its stdout and stderr being collected.
#[derive(Debug)]
pub struct Running {
    child: Child,
    what: String,
    started: Instant,
    stop_signal: libc::c_int,
    stdout: Receiver<Vec<u8>>,
    stderr: Receiver<Vec<u8>>,
}

/// What a finished child left behind.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its stdout (invalid UTF-8 replaced).
    pub stdout: String,
    /// Its stderr (invalid UTF-8 replaced).
    pub stderr: String,
    /// From just before it started until its exit was seen.
    pub elapsed: Duration,
}

impl Finished {
    /// The exit code; `None` when a signal ended it.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// As a [`std::process::Output`].
    pub fn into_output(self) -> Output {
        Output {
            status: self.status,
            stdout: self.stdout.into_bytes(),
            stderr: self.stderr.into_bytes(),
        }
    }
}

/// Collects a pipe on a thread; the bytes arrive on the channel at the end of the stream.
fn drain(mut pipe: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

/// Starts `cmd` with its stdout and stderr captured (stdin as `cmd` says); panics naming the
/// command when it cannot start. A child that overruns the limit given to
/// [`Running::finish`] gets SIGINT (which makes `shmemrun` end every PE of its job); see
/// [`Running::stop_with`].
pub fn start(mut cmd: Command) -> Running {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // functions may be called: signal(2) is one; creating an io::Error from errno does not
    // allocate.
    unsafe {
        cmd.pre_exec(|| {
            // Tests started in the background by a shell without job control (`nohup cargo
            // test &`, a script's `&`) inherit SIGINT ignored, and an ignored signal stays
            // ignored across exec: the stop signal would not reach a child that does not set
            // its own handler. It gets the default action back.
            if libc::signal(libc::SIGINT, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let what = format!("{cmd:?}");
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    Running {
        child,
        what,
        started,
        stop_signal: libc::SIGINT,
        stdout,
        stderr,
    }
}

/// Runs `cmd` to completion with its output captured; after `limit` it is stopped with SIGINT
/// (`shmemrun` then ends every PE of its job) and the test fails with its output. Returns the
/// output and how long it ran.
pub fn run_with_limit(cmd: Command, limit: Duration) -> (Output, Duration) {
    let done = start(cmd).finish(limit);
    let elapsed = done.elapsed;
    (done.into_output(), elapsed)
}

impl Running {
    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// When it was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The child's stdin, when the command had `Stdio::piped()` for it (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Stop the child with `signal` instead of SIGINT when it runs over its limit (SIGKILL
    /// follows if it is still there 10 s later).
    pub fn stop_with(mut self, signal: libc::c_int) -> Running {
        self.stop_signal = signal;
        self
    }

    /// Sends `signal` to the child.
    pub fn signal(&self, signal: libc::c_int) -> io::Result<()> {
        signal_child(&self.child, signal)
    }

    /// Waits for the child to exit, at most until `limit` after it started, and collects its
    /// output. Past the limit the child is stopped (see [`stop_with`](Self::stop_with)) and
    /// this panics with its output; it panics too when the child exits but its output stays
    /// open for 10 s (a process it started still holds it).
    pub fn finish(mut self, limit: Duration) -> Finished {
        let waited = wait_with_limit(&mut self.child, self.started, limit, self.stop_signal);
        let elapsed = self.started.elapsed();
        let status = match waited {
            Ok(status) => status,
            Err(how) => {
                let (stdout, stderr) = self.output(Duration::from_secs(2));
                panic!(
                    "{} did not finish within {limit:?}; {how}\n--- stdout\n{}\n--- stderr\n{}",
                    self.what,
                    stdout.unwrap_or_else(|| "(still open)".into()),
                    stderr.unwrap_or_else(|| "(still open)".into()),
                );
            }
        };
        match self.output(OUTPUT_GRACE) {
            (Some(stdout), Some(stderr)) => Finished {
                status,
                stdout,
                stderr,
                elapsed,
            },
            (stdout, stderr) => panic!(
                "{} exited ({status}) but its output was still open {OUTPUT_GRACE:?} later: a \
                 process it started holds it\n--- stdout\n{}\n--- stderr\n{}",
                self.what,
                stdout.unwrap_or_else(|| "(still open)".into()),
                stderr.unwrap_or_else(|| "(still open)".into()),
            ),
        }
    }

    /// The output collected so far, waiting up to `wait` for the ends of the streams.
    fn output(&self, wait: Duration) -> (Option<String>, Option<String>) {
        let until = Instant::now() + wait;
        let take = |rx: &Receiver<Vec<u8>>| {
            rx.recv_timeout(until.saturating_duration_since(Instant::now()))
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        (take(&self.stdout), take(&self.stderr))
    }
}

/// Sends `signal` to `child`, which must not have been waited for successfully.
fn signal_child(child: &Child, signal: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| io::Error::other("the child's pid does not fit pid_t"))?;
    // SAFETY: kill(2) on our own child, which has not been reaped (the caller holds it and has
    // not seen it exit), so the pid is still its own; no memory is involved.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Waits for `child` to exit, at most until `limit` after `started`. Past the limit it sends
/// `stop_signal` (SIGINT makes `shmemrun` end every PE of its job), SIGKILL 10 s later if the
/// child is still there, reaps it, and returns `Err` saying so. For a child whose output the
/// caller reads itself; [`start`] and [`Running::finish`] do all of it.
pub fn wait_with_limit(
    child: &mut Child,
    started: Instant,
    limit: Duration,
    stop_signal: libc::c_int,
) -> Result<ExitStatus, String> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() < limit => thread::sleep(Duration::from_millis(5)),
            Ok(None) => break,
            Err(e) => return Err(format!("waiting for it failed: {e}")),
        }
    }
    if let Err(e) = signal_child(child, stop_signal) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("signal {stop_signal} failed ({e}); killed"));
    }
    let sent = Instant::now();
    while sent.elapsed() < STOP_GRACE {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("stopped with signal {stop_signal}: {status}"));
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(format!(
        "signal {stop_signal} did not stop it within {STOP_GRACE:?}; killed"
    ))
}

impl Drop for Running {
    /// A test that fails before [`Running::finish`] leaves no child behind (SIGKILL; `shmemrun`'s
    /// local PEs die with it).
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_finishes_in_time_leaves_its_output() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let done = start(cmd).finish(Duration::from_secs(30));
        assert_eq!(done.code(), Some(3));
        assert_eq!(
            (done.stdout.as_str(), done.stderr.as_str()),
            ("out\n", "err\n")
        );
    }

    #[test]
    #[should_panic(expected = "did not finish within 200ms; stopped with signal 2")]
    fn a_child_that_overruns_is_stopped_and_fails_the_test() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo started; exec sleep 30"]);
        start(cmd).finish(Duration::from_millis(200));
    }
}
