//! The host's PEs: starting them (with the job's variables, their pipes, and death with the
//! agent), reaping them and reporting their ends, and ending them (SIGTERM, then SIGKILL).

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::Instant;

use shmem_launch::wire::{self, Msg};

use crate::children;

use super::forward::{OutPipe, ReadFd, emit, set_nonblocking};
use super::{Agent, KILL_GRACE};

/// One PE process.
pub(super) struct Pe {
    pid: libc::pid_t,
    reaped: bool,
    /// Its stdout and stderr, while open, with the bytes of an unfinished line.
    pub(super) pipes: Vec<OutPipe>,
}

impl Agent {
    /// Starts the PE of local rank `rank`; a PE that cannot start is reported as exited with
    /// 127 or 126, as a shell would, after its message.
    pub(super) fn spawn(
        &mut self,
        program: &OsString,
        args: &[OsString],
        rank: usize,
        rendezvous: &str,
    ) {
        let pe = self.first_pe + rank;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env(wire::ENV_RENDEZVOUS, rendezvous)
            .env(wire::ENV_PE, pe.to_string())
            .env(wire::ENV_LOCAL_RANK, rank.to_string())
            .env(wire::ENV_JOB_SECRET, self.secret.to_hex())
            .envs(self.threads.clone())
            .stdin(if pe == 0 {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Die with the agent.
        children::die_with_parent(&mut cmd);
        match cmd.spawn() {
            Ok(mut child) => {
                let mut pipes = Vec::new();
                let out = child.stdout.take().map(|p| Box::new(p) as Box<dyn ReadFd>);
                let err = child.stderr.take().map(|p| Box::new(p) as Box<dyn ReadFd>);
                for (fd, to_stderr) in [(out, false), (err, true)] {
                    if let Some(fd) = fd {
                        set_nonblocking(fd.as_raw_fd(), true);
                        pipes.push(OutPipe::new(fd, to_stderr));
                    }
                }
                self.pes.push(Pe {
                    pid: child.id() as libc::pid_t,
                    reaped: false,
                    pipes,
                });
            }
            Err(e) => {
                let text = format!(
                    "shmemrun: cannot run {}: {}",
                    program.to_string_lossy(),
                    children::os_message(&e)
                );
                emit(&mut self.sinks, pe, true, text.as_bytes(), true, true);
                let code = children::spawn_code(&e);
                self.pes.push(Pe {
                    pid: 0,
                    reaped: true,
                    pipes: Vec::new(),
                });
                self.exited(pe, 0, (code & 0xff) << 8);
            }
        }
    }

    /// Reports that PE `pe` ended with the wait status `status`.
    fn exited(&mut self, pe: usize, pid: u32, status: i32) {
        if self.status == 0 {
            let s = decode_status(status);
            self.status = s.code();
        }
        self.send_up(&Msg::Exited {
            pe: pe as u32,
            pid,
            status,
        });
    }

    pub(super) fn all_reaped(&self) -> bool {
        self.pes.iter().all(|p| p.reaped)
    }

    pub(super) fn signal_all(&self, sig: libc::c_int) {
        for p in self.pes.iter().filter(|p| !p.reaped && p.pid > 0) {
            children::kill(p.pid, sig);
        }
    }

    /// Ends the PEs: SIGTERM now, SIGKILL after [`KILL_GRACE`].
    pub(super) fn stop(&mut self) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        self.signal_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    /// Reaps the PEs that exited, and reports them once their connections are relayed.
    pub(super) fn reap(&mut self) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: `status` is a valid, writable int for the duration of the call.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            let Some(i) = self.pes.iter().position(|p| p.pid == pid && !p.reaped) else {
                continue;
            };
            self.pes[i].reaped = true;
            let pe = self.first_pe + i;
            // What it wrote to the agent before exiting goes first (a finalize).
            let ids: Vec<u32> = self
                .locals
                .iter()
                .filter(|(_, l)| l.pe == Some(pe))
                .map(|(&id, _)| id)
                .collect();
            for id in ids {
                self.read_local(id, true);
            }
            self.exited(pe, pid as u32, status);
        }
    }
}

/// A raw wait status as a [`children::Status`].
pub fn decode_status(status: i32) -> children::Status {
    if libc::WIFSIGNALED(status) {
        children::Status::Signaled {
            sig: libc::WTERMSIG(status),
            core: libc::WCOREDUMP(status),
        }
    } else {
        children::Status::Exited(libc::WEXITSTATUS(status))
    }
}
