//! The main loop: waits on the rendezvous server and the helper threads' events, and decides
//! when the job has failed and how it ends.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::children::{self, Status};
use crate::events::{Event, Inbox};
use crate::server::{Notice, Server};
use crate::signals;

/// Time between SIGTERM and SIGKILL when the launcher ends the job.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// Time a PE that left before finalizing has to turn out to be a crash (whose exit status is
/// the better report) before the launcher ends the job for stranding the others.
const STRANDED_GRACE: Duration = Duration::from_millis(250);
/// Time the connected PEs have to report a rendezvous timeout themselves before the launcher
/// ends the job.
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);
/// Time to wait for the output forwarders after the last PE exited (a grandchild may hold a
/// pipe open).
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// One PE process.
#[derive(Debug)]
struct Pe {
    pid: libc::pid_t,
    reaped: bool,
}

/// The state of a running job.
#[derive(Debug)]
pub struct Job {
    server: Server,
    server_broken: bool,
    inbox: Inbox,
    pes: Vec<Pe>,
    /// Output forwarders that have not finished.
    outputs: usize,
    /// The launcher's exit code once the job has failed.
    failure: Option<i32>,
    /// When to SIGKILL the PEs that survived SIGTERM.
    kill_at: Option<Instant>,
    /// When to end the job because a PE left while others wait.
    stranded_at: Option<Instant>,
    /// When to end the job after a rendezvous timeout.
    timeout_at: Option<Instant>,
}

impl Job {
    /// A job whose PEs are added with [`Job::add`] as they start.
    pub fn new(server: Server, inbox: Inbox) -> Job {
        Job {
            server,
            server_broken: false,
            inbox,
            pes: Vec::new(),
            outputs: 0,
            failure: None,
            kill_at: None,
            stranded_at: None,
            timeout_at: None,
        }
    }

    /// Records the next PE (PE number = number of PEs added before).
    pub fn add(&mut self, pid: libc::pid_t, outputs: usize) {
        self.pes.push(Pe { pid, reaped: false });
        self.outputs += outputs;
    }

    fn running(&self) -> usize {
        self.pes.iter().filter(|p| !p.reaped).count()
    }

    /// Ends the job with exit code `code`: SIGTERM now, SIGKILL a little later.
    pub fn fail(&mut self, code: i32) {
        if self.failure.is_some() {
            return;
        }
        self.failure = Some(code);
        self.stranded_at = None;
        self.timeout_at = None;
        self.signal_all(libc::SIGTERM);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    fn signal_all(&self, sig: libc::c_int) {
        for pe in self.pes.iter().filter(|p| !p.reaped) {
            children::kill(pe.pid, sig);
        }
    }

    /// "; terminating 3 other PEs", or nothing when none is left.
    fn terminating(&self, other: bool) -> String {
        match self.running() {
            0 => String::new(),
            n => format!(
                "; terminating {n} {}PE{}",
                if other { "other " } else { "" },
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// Runs until every PE has been reaped; returns the launcher's exit code.
    pub fn run(mut self) -> i32 {
        while self.running() > 0 {
            let wait = [self.kill_at, self.stranded_at, self.timeout_at]
                .into_iter()
                .flatten()
                .min()
                .map_or(Duration::from_secs(1), |t| {
                    t.saturating_duration_since(Instant::now())
                })
                .min(Duration::from_secs(1));
            self.wait(wait);
            self.check_deadlines();
        }
        self.drain_output();
        self.failure.unwrap_or(0)
    }

    /// Waits up to `wait` for anything to happen and handles it.
    fn wait(&mut self, wait: Duration) {
        if self.server_broken {
            if let Ok(ev) = self.inbox.rx.recv_timeout(wait) {
                self.event(ev);
            }
        } else {
            match self.server.poll(Some(self.inbox.wake.as_raw_fd()), wait) {
                Ok(notices) => self.notices(notices),
                Err(e) => {
                    eprintln!(
                        "shmemrun: the rendezvous server failed: {e}{}",
                        self.terminating(false)
                    );
                    self.server_broken = true;
                    self.fail(1);
                }
            }
        }
        self.inbox.drain_wake();
        while let Ok(ev) = self.inbox.rx.try_recv() {
            self.event(ev);
        }
    }

    fn notices(&mut self, notices: Vec<Notice>) {
        for n in notices {
            match n {
                Notice::Warning(w) => eprintln!("shmemrun: {w}"),
                Notice::RendezvousTimeout { detail } => {
                    eprintln!("shmemrun: {detail}");
                    if self.failure.is_none() {
                        self.timeout_at = Some(Instant::now() + TIMEOUT_GRACE);
                    }
                }
                Notice::GlobalExit { pe, status } => {
                    if self.failure.is_none() {
                        eprintln!(
                            "shmemrun: PE {pe} called global_exit({status}){}",
                            self.terminating(false)
                        );
                        self.fail(status);
                    }
                }
                Notice::Stranded => {
                    if self.failure.is_none() && self.stranded_at.is_none() {
                        self.stranded_at = Some(Instant::now() + STRANDED_GRACE);
                    }
                }
            }
        }
    }

    fn event(&mut self, ev: Event) {
        match ev {
            Event::Exited(pe) => self.exited(pe),
            Event::Signal(sig) => {
                let name = signals::name(sig).unwrap_or("a signal");
                if self.failure.is_none() {
                    eprintln!("shmemrun: received {name}{}", self.terminating(false));
                    self.fail(128 + sig);
                } else if self.running() > 0 {
                    eprintln!("shmemrun: received {name} again; killing the PEs");
                    self.signal_all(libc::SIGKILL);
                    self.kill_at = None;
                }
            }
            Event::OutputDone => self.outputs = self.outputs.saturating_sub(1),
        }
    }

    fn exited(&mut self, pe: usize) {
        let Some(p) = self.pes.get_mut(pe) else {
            return;
        };
        if p.reaped {
            return;
        }
        let pid = p.pid;
        let status = children::reap(pid);
        p.reaped = true;
        let notices = self.server.pe_exited(pe);
        self.notices(notices);
        let (code, how) = match status {
            Ok(s) if s.success() => return,
            Ok(s @ Status::Exited(_)) | Ok(s @ Status::Signaled { .. }) => (s.code(), s.describe()),
            Err(e) => (1, format!("could not be waited for ({e})")),
        };
        if self.failure.is_none() {
            eprintln!(
                "shmemrun: PE {pe} (pid {pid}) {how}{}",
                self.terminating(true)
            );
            self.fail(code);
        }
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        if self.kill_at.is_some_and(|t| now >= t) {
            self.kill_at = None;
            self.signal_all(libc::SIGKILL);
        }
        if self.stranded_at.is_some_and(|t| now >= t) {
            self.stranded_at = None;
            let detail = self
                .server
                .stranded()
                .unwrap_or_else(|| "a PE left before finalizing while others wait".into());
            eprintln!("shmemrun: {detail}{}", self.terminating(false));
            self.server.abort(&detail);
            self.fail(1);
        }
        if self.timeout_at.is_some_and(|t| now >= t) {
            self.timeout_at = None;
            eprintln!("shmemrun: the rendezvous failed{}", self.terminating(false));
            self.fail(1);
        }
    }

    /// Lets the forwarders print what the PEs wrote last.
    fn drain_output(&mut self) {
        let until = Instant::now() + OUTPUT_GRACE;
        while self.outputs > 0 {
            let left = until.saturating_duration_since(Instant::now());
            match self.inbox.rx.recv_timeout(left) {
                Ok(Event::OutputDone) => self.outputs -= 1,
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
}
