//! Starting, watching, signalling and reaping the PE processes.
//!
//! Every PE gets a thread blocked in `waitid(WNOWAIT)`: it reports the exit without reaping, so
//! only the main loop reaps and a pid the launcher signals can never have been reused.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::events::{Event, Notifier};
use crate::output::{self, Forward, Tail};
use crate::signals;

/// What a PE's (or its start command's) standard input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// The launcher's own stdin.
    Launcher,
    /// Nothing (`/dev/null`).
    Null,
    /// A pipe that carries `first` (the job secret's line, for a start command) and then,
    /// when `then_launcher`, what the launcher reads on its own stdin.
    Secret {
        /// The first bytes, a line.
        first: String,
        /// Forward the launcher's stdin after it (PE 0's start command).
        then_launcher: bool,
    },
}

/// How to start one PE: the program itself, or for a PE on another host its start command.
#[derive(Debug)]
pub struct Spec<'a> {
    /// The program, resolved through `PATH` as by a shell.
    pub program: &'a OsStr,
    /// Its arguments.
    pub args: &'a [OsString],
    /// Variables added to the launcher's environment.
    pub env: &'a [(OsString, OsString)],
    /// Start every line of its output with `[PE i] ` (its output is forwarded line by line
    /// either way, [`output`]).
    pub prefix: bool,
    /// Keep the last lines of stderr here.
    pub tail: Option<Arc<Tail>>,
    /// This PE's number: the id of its exit event (for a host agent, `job::agent_id`).
    pub pe: usize,
    /// Its standard input.
    pub input: Input,
    /// For a host agent: its output is its PEs' records ([`output::forward_tagged`]), split
    /// per PE as this says (`tail` keeps the agent's own stderr lines).
    pub tagged: Option<output::Tagged>,
}

/// Makes the child `cmd` starts begin with no signal blocked (its parent blocks those it
/// handles) and die with this process (`PR_SET_PDEATHSIG`; this thread forks every child and
/// lives until the process exits); a child whose parent died before that took effect fails to
/// start. For a PE on another host this ends its local start command only; the PE's watchdog
/// sees its control connection close.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // functions may be called: sigemptyset, sigprocmask, prctl and getppid are; creating an
    // io::Error from an errno value does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Starts one PE, its exit watcher and its output forwarders. Returns the pid and the number of
/// output forwarders started.
pub fn spawn(spec: &Spec<'_>, notifier: &Notifier) -> io::Result<(libc::pid_t, usize)> {
    let mut cmd = Command::new(spec.program);
    cmd.args(spec.args);
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(match spec.input {
        Input::Launcher => Stdio::inherit(),
        Input::Null => Stdio::null(),
        Input::Secret { .. } => Stdio::piped(),
    });
    // Always through the launcher, which writes whole lines only (`output`): PEs that shared
    // its stdout and stderr would mix their lines mid-line.
    cmd.stdout(Stdio::piped());
    cmd.stderr(Stdio::piped());
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    if let (
        Some(mut pipe),
        Input::Secret {
            first,
            then_launcher,
        },
    ) = (child.stdin.take(), &spec.input)
    {
        // A pipe holds 64 KiB: this line never blocks. A start command that is already gone
        // (EPIPE; SIGPIPE is ignored in Rust programs) is reported through its exit status.
        let _ = pipe.write_all(first.as_bytes());
        if *then_launcher {
            std::thread::Builder::new()
                .name(format!("stdin-pe{}", spec.pe))
                .spawn(move || {
                    let _ = io::copy(&mut io::stdin().lock(), &mut pipe);
                })?;
        }
    }
    let mut forwarders = 0;
    let how = |to_stderr: bool| Forward {
        pe: spec.pe,
        to_stderr,
        prefix: spec.prefix,
        tail: if to_stderr { spec.tail.clone() } else { None },
    };
    if let Some(t) = &spec.tagged {
        let split = |to_stderr: bool| output::Tagged {
            to_stderr,
            host_tail: if to_stderr { spec.tail.clone() } else { None },
            ..t.clone()
        };
        if let Some(out) = child.stdout.take() {
            output::forward_tagged(split(false), out, notifier.clone())?;
            forwarders += 1;
        }
        if let Some(err) = child.stderr.take() {
            output::forward_tagged(split(true), err, notifier.clone())?;
            forwarders += 1;
        }
    }
    if let Some(out) = child.stdout.take() {
        output::forward(how(false), out, notifier.clone())?;
        forwarders += 1;
    }
    if let Some(err) = child.stderr.take() {
        output::forward(how(true), err, notifier.clone())?;
        forwarders += 1;
    }
    // Dropping `child` neither waits nor kills; the watcher and the main loop take over.
    drop(child);
    watch(spec.pe, pid, notifier.clone())?;
    Ok((pid, forwarders))
}

/// The text of an I/O error without Rust's " (os error N)" suffix.
pub fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The exit code for a program or start command that cannot be started.
pub fn spawn_code(e: &io::Error) -> i32 {
    match e.kind() {
        io::ErrorKind::NotFound => 127,
        io::ErrorKind::PermissionDenied => 126,
        _ if e.raw_os_error() == Some(libc::ENOEXEC) => 126,
        _ => 1,
    }
}

/// Starts the thread that reports when `pid` exits, without reaping it.
fn watch(pe: usize, pid: libc::pid_t, notifier: Notifier) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("wait-pe{pe}"))
        .spawn(move || {
            loop {
                // SAFETY: siginfo_t is plain data for which all-zero bytes are a valid value.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
                let rc = unsafe {
                    libc::waitid(
                        libc::P_PID,
                        pid as libc::id_t,
                        &mut info,
                        libc::WEXITED | libc::WNOWAIT,
                    )
                };
                if rc == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            notifier.send(Event::Exited(pe));
        })?;
    Ok(())
}

/// How a PE ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled {
        /// The signal.
        sig: i32,
        /// Whether it dumped core.
        core: bool,
    },
}

impl Status {
    /// Whether it exited with status 0.
    pub fn success(self) -> bool {
        self == Status::Exited(0)
    }

    /// The launcher's exit code for this status: the code, or 128 + the signal.
    pub fn code(self) -> i32 {
        match self {
            Status::Exited(c) => c,
            Status::Signaled { sig, .. } => 128 + sig,
        }
    }

    /// `"exited with status 101 (Rust panic)"`, `"was killed by signal 11 (SIGSEGV)"`.
    pub fn describe(self) -> String {
        match self {
            Status::Exited(101) => "exited with status 101 (Rust panic)".into(),
            Status::Exited(c) => format!("exited with status {c}"),
            Status::Signaled { sig, core } => format!(
                "was killed by {}{}",
                signals::describe(sig),
                if core { ", core dumped" } else { "" }
            ),
        }
    }
}

/// Reaps `pid`, which has exited (its watcher said so).
pub fn reap(pid: libc::pid_t) -> io::Result<Status> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid, writable int for the duration of the call.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(if libc::WIFSIGNALED(status) {
                Status::Signaled {
                    sig: libc::WTERMSIG(status),
                    core: libc::WCOREDUMP(status),
                }
            } else {
                Status::Exited(libc::WEXITSTATUS(status))
            });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Sends `sig` to `pid`, which the caller has not reaped yet.
pub fn kill(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; the pid is an unreaped child of ours, so
    // it cannot name an unrelated process.
    unsafe {
        libc::kill(pid, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_cannot_start_exits_like_a_shell_says_it() {
        let not_found = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(spawn_code(&not_found), 127);
        assert_eq!(os_message(&not_found), "No such file or directory");
        assert_eq!(spawn_code(&io::Error::from_raw_os_error(libc::EACCES)), 126);
        assert_eq!(
            spawn_code(&io::Error::from_raw_os_error(libc::ENOEXEC)),
            126
        );
        assert_eq!(spawn_code(&io::Error::from_raw_os_error(libc::E2BIG)), 1);
        assert_eq!(os_message(&io::Error::other("plain")), "plain");
    }
}
