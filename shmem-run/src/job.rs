//! The main loop: waits on the rendezvous server and the helper threads' events, and decides
//! when the job has failed and how it ends.
//!
//! PEs on this host are children of the launcher: their exit status comes from `waitpid`, they
//! are stopped with SIGTERM then SIGKILL, and `PR_SET_PDEATHSIG` ends them if the launcher dies.
//! Their control connections carry no heartbeats unless `--heartbeat-timeout` asks for them, and
//! are not used to end them: by default a PE stopped in a debugger (or by SIGSTOP) must not end
//! the job, so such a PE is not detected; with heartbeats it is, after the timeout.
//!
//! A PE that said hello (called `init`) and exits with status 0 without finalizing, while the
//! job runs, ends the job at once: its peers may be waiting for it where the launcher cannot
//! see (a `barrier_all` goes PE to PE), and would wait forever.
//!
//! A PE on another host is known through two things: its start command (`--rsh`, a local child
//! whose exit status mirrors the PE's, as ssh does) and its control connection. The job fails
//! when the start command ends badly, when the PE falls silent for the heartbeat timeout (a
//! stopped PE, a host or link that went down), or when its control connection ends before it
//! finalized while its start command keeps running. To end the job the launcher sends every
//! remote PE [`Msg::Abort`](shmem_launch::wire::Msg::Abort) on its control connection, gives the
//! start commands [`ABORT_GRACE`] to end by themselves, then SIGTERM and SIGKILL; before exiting
//! it waits up to [`LINGER`] for the remote PEs to close their control connections.
//!
//! With host agents (the default for `--hosts`), one start command per host runs the host's
//! agent (`agent/`), which starts the host's PEs and reports each one's exit status over its
//! connection ([`Notice::Exited`]); a PE's end is then known from that report, and the agent's
//! start command stands for the host: when it ends, the host's PEs not yet reported are taken
//! as lost. To end the job the launcher sends the aborts as above, and after [`ABORT_GRACE`]
//! tells the agents to end their PEs ([`Server::stop_agents`]) as it signals their start
//! commands.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::children::{self, Status};
use crate::events::{Event, Inbox};
use crate::output::Tail;
use crate::say::{prog, say};
use crate::signals;
use shmem_launch::server::{Notice, Server};
use shmem_launch::wire::{HEARTBEAT_INTERVAL, pe_list};

/// Time between SIGTERM and SIGKILL when the launcher ends the job.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// Time the PEs on other hosts have to act on an abort (their start commands then end by
/// themselves) before the launcher signals the start commands.
const ABORT_GRACE: Duration = Duration::from_secs(1);
/// Time the launcher waits, after the last start command ended, for remote PEs that still answer
/// to close their control connections (they exit on the abort, or on the end of the connection).
const LINGER: Duration = Duration::from_secs(1);
/// Time a remote PE's start command has to end after the PE's control connection ended before
/// the launcher counts the PE as lost.
const LOST_GRACE: Duration = Duration::from_millis(1500);
/// Time a PE that left before finalizing has to turn out to be a crash (whose exit status is
/// the better report) before the launcher ends the job for stranding the others.
const STRANDED_GRACE: Duration = Duration::from_millis(250);
/// Time the connected PEs have to report a rendezvous timeout themselves before the launcher
/// ends the job.
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);
/// Time to wait for the output forwarders after the last PE exited (a grandchild may hold a
/// pipe open).
const OUTPUT_GRACE: Duration = Duration::from_secs(1);
/// Time to wait for the stderr of a start command that failed, for the message.
const TAIL_WAIT: Duration = Duration::from_millis(500);
/// Time a remote PE whose start command exited with 0 has for its finalize to arrive (it travels
/// on another connection than the start command's end) before it counts as an exit without
/// finalizing.
const FINALIZE_GRACE: Duration = Duration::from_millis(200);
/// How often the spawning loop looks at the rendezvous server.
const SPAWN_POLL: Duration = Duration::from_millis(100);

/// A PE on another host, as the launcher sees it.
#[derive(Debug)]
pub struct Remote {
    /// The host's name.
    pub host: String,
    /// The host's node number.
    pub node: usize,
    /// The start command, for messages.
    pub command: String,
    /// The last lines of the start command's stderr.
    pub tail: Arc<Tail>,
}

/// The id of the exit event of the start command of the host agent of `node` (PEs' events
/// carry their PE number).
pub fn agent_id(node: usize) -> usize {
    AGENT_IDS + node
}

/// The first id of the agents' exit events, beyond every PE number.
const AGENT_IDS: usize = usize::MAX / 2;

/// The start command of a host agent, as the launcher sees it.
#[derive(Debug)]
pub struct AgentProc {
    /// The start command's pid.
    pub pid: libc::pid_t,
    /// The host's name.
    pub host: String,
    /// The host's PEs.
    pub pes: std::ops::Range<usize>,
    /// The start command, for messages.
    pub command: String,
    /// The last lines the agent (or its start command) wrote to stderr itself.
    pub tail: Arc<Tail>,
    /// Reaped.
    pub reaped: bool,
}

/// One PE process (for a remote PE: its start command; none, pid 0, when a host agent runs it).
#[derive(Debug)]
struct Pe {
    pid: libc::pid_t,
    reaped: bool,
    remote: Option<Remote>,
}

/// The state of a running job.
#[derive(Debug)]
pub struct Job {
    server: Server,
    server_broken: bool,
    inbox: Inbox,
    pes: Vec<Pe>,
    /// The host agents' start commands, by node (none without agents).
    agents: Vec<AgentProc>,
    /// Output forwarders that have not finished.
    outputs: usize,
    /// The launcher's exit code once the job has failed.
    failure: Option<i32>,
    /// When to SIGTERM the remote PEs' start commands after an abort.
    term_at: Option<Instant>,
    /// When to SIGKILL the PEs that survived SIGTERM.
    kill_at: Option<Instant>,
    /// When to end the job because a PE left while others wait.
    stranded_at: Option<Instant>,
    /// When to end the job after a rendezvous timeout.
    timeout_at: Option<Instant>,
    /// Remote PEs whose control connection ended: when to give up on them, and why it ended.
    lost: Vec<(usize, Instant, String)>,
    /// The heartbeat timeout when the server sends heartbeats, for messages.
    heartbeat_timeout: Option<Duration>,
    /// PEs run on other hosts (through start commands).
    remote: bool,
    /// Remote PEs whose start command exited with 0 before their finalize was seen: when to
    /// decide.
    unfinalized: Vec<(usize, Instant)>,
    /// When the spawning loop last polled the server.
    polled_at: Instant,
    /// The memory cgroup's out-of-memory kills, to name them when a PE dies by SIGKILL.
    oom: crate::oom::OomWatch,
}

impl Job {
    /// A job whose PEs are added with [`Job::add`] as they start. `heartbeat_timeout` is set
    /// when the server sends heartbeats (always for a multi-host job, `remote`).
    pub fn new(
        server: Server,
        inbox: Inbox,
        heartbeat_timeout: Option<Duration>,
        remote: bool,
    ) -> Job {
        Job {
            server,
            server_broken: false,
            inbox,
            pes: Vec::new(),
            agents: Vec::new(),
            outputs: 0,
            failure: None,
            term_at: None,
            kill_at: None,
            stranded_at: None,
            timeout_at: None,
            lost: Vec::new(),
            heartbeat_timeout,
            remote,
            unfinalized: Vec::new(),
            polled_at: Instant::now(),
            oom: crate::oom::OomWatch::start(),
        }
    }

    /// While the PEs are being started: handles what happened meanwhile (signals, exits, and
    /// every [`SPAWN_POLL`] the rendezvous server) without waiting; true when the job has
    /// failed and no more PEs should be started.
    pub fn interrupted(&mut self) -> bool {
        if self.polled_at.elapsed() >= SPAWN_POLL {
            self.polled_at = Instant::now();
            self.wait(Duration::ZERO);
        } else {
            while let Ok(ev) = self.inbox.rx.try_recv() {
                self.event(ev);
            }
        }
        self.failure.is_some()
    }

    /// The number of PEs added so far.
    pub fn started(&self) -> usize {
        self.pes.len()
    }

    /// Records the next PE (PE number = number of PEs added before); `remote` for a PE started
    /// on another host through its start command `pid`.
    pub fn add(&mut self, pid: libc::pid_t, outputs: usize, remote: Option<Remote>) {
        self.pes.push(Pe {
            pid,
            reaped: false,
            remote,
        });
        self.outputs += outputs;
    }

    /// Records the start command of the next host agent (node = number of agents added
    /// before); its PEs must have been added.
    pub fn add_agent(&mut self, agent: AgentProc, outputs: usize) {
        if agent.reaped {
            // It never ran: neither do its PEs.
            for pe in agent.pes.clone() {
                if let Some(p) = self.pes.get_mut(pe) {
                    p.reaped = true;
                }
            }
        }
        self.agents.push(agent);
        self.outputs += outputs;
    }

    fn running(&self) -> usize {
        self.pes.iter().filter(|p| !p.reaped).count()
            + self.agents.iter().filter(|a| !a.reaped).count()
    }

    fn multi_host(&self) -> bool {
        self.remote
    }

    /// Prints `shmemrun: {what}; terminating N [other] PEs` and ends the job with `code`.
    pub fn end(&mut self, code: i32, what: &str, other: bool) {
        if self.failure.is_some() {
            return;
        }
        say!("{what}{}", self.terminating(other));
        self.fail(code, what);
    }

    /// Ends the job with exit code `code` because of `why`: PEs on this host get SIGTERM now and
    /// SIGKILL a little later; PEs on other hosts get an abort on their control connection.
    pub fn fail(&mut self, code: i32, why: &str) {
        if self.failure.is_some() {
            return;
        }
        self.failure = Some(code);
        self.stranded_at = None;
        self.timeout_at = None;
        self.lost.clear();
        self.unfinalized.clear();
        if self.multi_host() {
            self.server.abort_all(code, why);
            self.term_at = Some(Instant::now() + ABORT_GRACE);
        } else {
            self.signal_all(libc::SIGTERM);
            self.kill_at = Some(Instant::now() + KILL_GRACE);
        }
    }

    fn signal_all(&self, sig: libc::c_int) {
        for pe in self.pes.iter().filter(|p| !p.reaped && p.pid > 0) {
            children::kill(pe.pid, sig);
        }
        for a in self.agents.iter().filter(|a| !a.reaped) {
            children::kill(a.pid, sig);
        }
    }

    /// "; terminating 3 other PEs", or nothing when none is left.
    fn terminating(&self, other: bool) -> String {
        match self.pes.iter().filter(|p| !p.reaped).count() {
            0 => String::new(),
            n => format!(
                "; terminating {n} {}PE{}",
                if other { "other " } else { "" },
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// "PE 3 on host b (pid 4567 there)", or "PE 3 (pid 123)" for a PE on this host.
    fn who(&self, pe: usize) -> String {
        match &self.pes[pe].remote {
            Some(r) => match self.server.pid(pe) {
                Some(pid) => format!("PE {pe} on host {} (pid {pid} there)", r.host),
                None => format!("PE {pe} on host {}", r.host),
            },
            None => format!("PE {pe} (pid {})", self.pes[pe].pid),
        }
    }

    /// Runs until every PE has been reaped; returns the launcher's exit code.
    pub fn run(mut self) -> i32 {
        let mut linger_until = None;
        loop {
            if self.running() == 0 {
                // Remote PEs may still be acting on the abort; their control connections close
                // when they are gone (silent ones will not: no use waiting for them). Nothing
                // of the kind on this host: waitpid said it all.
                if !self.multi_host() || self.server.controls_alive(3 * HEARTBEAT_INTERVAL) == 0 {
                    break;
                }
                let until = *linger_until.get_or_insert_with(|| Instant::now() + LINGER);
                if Instant::now() >= until {
                    break;
                }
            }
            let wait = [
                self.term_at,
                self.kill_at,
                self.stranded_at,
                self.timeout_at,
                linger_until,
            ]
            .into_iter()
            .chain(self.lost.iter().map(|l| Some(l.1)))
            .chain(self.unfinalized.iter().map(|u| Some(u.1)))
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
                    self.server_broken = true;
                    self.end(1, &format!("the rendezvous server failed: {e}"), false);
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
                Notice::Warning(w) => say!("{w}"),
                Notice::RendezvousTimeout { detail } => {
                    say!("{detail}");
                    if self.failure.is_none() {
                        self.timeout_at = Some(Instant::now() + TIMEOUT_GRACE);
                    }
                }
                Notice::GlobalExit { pe, status } => {
                    self.end(
                        status,
                        &format!("PE {pe} called global_exit({status})"),
                        false,
                    );
                }
                Notice::Stranded => {
                    if self.failure.is_none() && self.stranded_at.is_none() {
                        self.stranded_at = Some(Instant::now() + STRANDED_GRACE);
                    }
                }
                Notice::Silent { pe, silent_for } => self.silent(pe, silent_for),
                Notice::Exited { pe, status, .. } => {
                    let remote = self.pes.get(pe).is_some_and(|p| p.pid == 0);
                    if remote && !self.pes[pe].reaped {
                        self.pes[pe].reaped = true;
                        self.ended(pe, Ok(crate::agent::decode_status(status)));
                    }
                }
                Notice::ControlLost { pe, why } => {
                    let remote = self.pes.get(pe).is_some_and(|p| p.remote.is_some());
                    if remote && self.failure.is_none() {
                        self.lost.push((pe, Instant::now() + LOST_GRACE, why));
                    }
                }
            }
        }
    }

    /// PE `pe` sent nothing for `silent_for`: names its host when all of the host's PEs are
    /// silent too (a host or link that went down), else the PE (stopped, hung).
    fn silent(&mut self, pe: usize, silent_for: Duration) {
        if self.failure.is_some() || self.pes.get(pe).is_none_or(|p| p.reaped) {
            return;
        }
        let timeout = self.heartbeat_timeout.map_or(String::new(), |t| {
            format!(" (heartbeat timeout {} s)", t.as_secs_f64())
        });
        let Some(r) = self.pes[pe].remote.as_ref() else {
            // On this host: stopped (SIGSTOP, a debugger) or hung with its watchdog.
            let what = format!(
                "{} stopped answering: no heartbeat for {:.1} s{timeout}; is it stopped?",
                self.who(pe),
                silent_for.as_secs_f64()
            );
            return self.end(1, &what, false);
        };
        let node = r.node;
        let host = r.host.clone();
        // PEs of one host fall silent within a heartbeat interval or two of each other.
        let nearly = silent_for.saturating_sub(2 * HEARTBEAT_INTERVAL);
        let on_host: Vec<usize> = (0..self.pes.len())
            .filter(|&p| self.pes[p].remote.as_ref().is_some_and(|r| r.node == node))
            .collect();
        let silent: Vec<usize> = on_host
            .iter()
            .copied()
            .filter(|&p| self.server.silence(p).is_some_and(|s| s >= nearly))
            .collect();
        let what = if silent.len() == on_host.len() && on_host.len() > 1 {
            format!(
                "host {host} (PEs {}) stopped answering: no heartbeat for {:.1} s{timeout}",
                pe_list(&silent),
                silent_for.as_secs_f64()
            )
        } else {
            format!(
                "{} stopped answering: no heartbeat for {:.1} s{timeout}",
                self.who(pe),
                silent_for.as_secs_f64()
            )
        };
        self.end(1, &what, false);
    }

    fn event(&mut self, ev: Event) {
        match ev {
            Event::Exited(id) if id >= AGENT_IDS => self.agent_exited(id - AGENT_IDS),
            Event::Exited(pe) => self.exited(pe),
            Event::Signal(sig) => {
                let name = signals::name(sig).unwrap_or("a signal");
                if self.failure.is_none() {
                    self.end(128 + sig, &format!("received {name}"), false);
                } else if self.running() > 0 {
                    say!("received {name} again; killing the PEs");
                    self.signal_all(libc::SIGKILL);
                    self.term_at = None;
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
        self.ended(pe, status);
    }

    /// The start command of the host agent of `node` ended: the host's PEs that it did not
    /// report are lost.
    fn agent_exited(&mut self, node: usize) {
        let Some(a) = self.agents.get_mut(node) else {
            return;
        };
        if a.reaped {
            return;
        }
        a.reaped = true;
        let status = children::reap(a.pid);
        let pes = a.pes.clone();
        if self.failure.is_none() {
            // What the agent reported before it exited is on its connection.
            let notices = self.server.drain_agent(node, LINGER);
            self.notices(notices);
        }
        let left: Vec<usize> = pes.clone().filter(|&p| !self.pes[p].reaped).collect();
        for &p in &left {
            self.pes[p].reaped = true;
        }
        if self.failure.is_some() || left.is_empty() {
            return;
        }
        let (code, how) = match status {
            Ok(s) if s.success() => (1, s.describe()),
            Ok(s) => (s.code(), s.describe()),
            Err(e) => (1, format!("could not be waited for ({e})")),
        };
        let a = &self.agents[node];
        let (host, command, tail) = (a.host.clone(), a.command.clone(), Arc::clone(&a.tail));
        let who = format!(
            "the host agent for PE{} {} on host {host}",
            if pes.len() == 1 { "" } else { "s" },
            pe_list(&pes.collect::<Vec<_>>())
        );
        let pes_there = format!(
            "PE{} {} on host {host}",
            if left.len() == 1 { "" } else { "s" },
            pe_list(&left)
        );
        let what = if self.server.agent_reached(node) {
            format!("{who} {how} while {pes_there} ran")
        } else if code == 127 {
            format!(
                "{pes_there} {how} before reaching the launcher (their host agent's start \
                 command; is shmemrun installed at the same path there? --agent-path PATH \
                 names it, --launch-agent off starts the PEs without it)"
            )
        } else {
            format!(
                "{pes_there} {how} before reaching the launcher (their host agent's start command)"
            )
        };
        let p = prog();
        let mut details = format!("\n{p}:   start command: {command}");
        let lines = tail.lines(TAIL_WAIT);
        if lines.is_empty() {
            details.push_str(&format!("\n{p}:   it wrote nothing on stderr"));
        } else {
            details.push_str(&format!("\n{p}:   the last lines of its stderr:"));
            for line in &lines {
                details.push_str(&format!("\n{p}:   | "));
                details.push_str(line);
            }
        }
        say!("{what}{}{details}", self.terminating(true));
        self.fail(code, &what);
    }

    /// PE `pe` ended with `status` (reaped here, or reported by its host agent).
    fn ended(&mut self, pe: usize, status: std::io::Result<Status>) {
        if self.failure.is_some() {
            // The job is ending: nothing to decide, and with many PEs the server's bookkeeping
            // per exit would slow the end down.
            return;
        }
        self.lost.retain(|l| l.0 != pe);
        let notices = self.server.pe_exited(pe);
        self.notices(notices);
        let (code, how) = match status {
            Ok(s) if s.success() => {
                if self.failure.is_none()
                    && self.server.said_hello(pe)
                    && !self.server.finalized(pe)
                {
                    if self.pes[pe].remote.is_some() {
                        self.unfinalized.push((pe, Instant::now() + FINALIZE_GRACE));
                    } else {
                        self.exited_unfinalized(pe);
                    }
                }
                return;
            }
            // The launcher sent no signal yet (the job has not failed): name what most often
            // sends a SIGKILL to a PE of this host.
            Ok(s @ Status::Signaled { sig, .. })
                if sig == libc::SIGKILL && self.pes[pe].remote.is_none() =>
            {
                (s.code(), s.describe() + &self.oom.explain_sigkill())
            }
            Ok(s @ Status::Exited(_)) | Ok(s @ Status::Signaled { .. }) => (s.code(), s.describe()),
            Err(e) => (1, format!("could not be waited for ({e})")),
        };
        if self.failure.is_some() {
            return;
        }
        match &self.pes[pe].remote {
            Some(r) if !self.server.reached(pe) => {
                // The start command failed, or the program ended before `init`: what it wrote
                // on stderr says which.
                let what = format!(
                    "PE {pe} on host {} {how} before reaching the launcher",
                    r.host
                );
                let p = prog();
                let mut details = format!("\n{p}:   start command: {}", r.command);
                let tail = r.tail.lines(TAIL_WAIT);
                if tail.is_empty() {
                    details.push_str(&format!("\n{p}:   it wrote nothing on stderr"));
                } else {
                    details.push_str(&format!("\n{p}:   the last lines of its stderr:"));
                    for line in &tail {
                        details.push_str(&format!("\n{p}:   | "));
                        details.push_str(line);
                    }
                }
                say!("{what}{}{details}", self.terminating(true));
                self.fail(code, &what);
            }
            _ => {
                let what = format!("{} {how}", self.who(pe));
                self.end(code, &what, true);
            }
        }
    }

    /// PE `pe` said hello and exited with status 0 without finalizing: its peers may wait for it
    /// forever (in a barrier that does not go through the launcher), so the job ends.
    fn exited_unfinalized(&mut self, pe: usize) {
        if self.failure.is_some() || self.server.finalized(pe) {
            return;
        }
        // Taken in what arrived meanwhile (a remote PE's finalize).
        let notices = self.server.pe_exited(pe);
        self.notices(notices);
        if self.failure.is_some() || self.server.finalized(pe) {
            return;
        }
        let detail = self.server.stranded_now().unwrap_or_else(|| {
            format!(
                "{} exited with status 0 without finalizing (it called init but never \
                 finalized: drop the World, or return from main, before exiting)",
                self.who(pe)
            )
        });
        self.server.abort(&detail);
        self.end(1, &detail, true);
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        while let Some(i) = self.unfinalized.iter().position(|u| now >= u.1) {
            let (pe, _) = self.unfinalized.remove(i);
            self.exited_unfinalized(pe);
        }
        if self.term_at.is_some_and(|t| now >= t) {
            self.term_at = None;
            if let Some(code) = self.failure {
                self.server.stop_agents(code);
            }
            if self.running() > 0 {
                self.signal_all(libc::SIGTERM);
                self.kill_at = Some(now + KILL_GRACE);
            }
        }
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
            self.server.abort(&detail);
            self.end(1, &detail, false);
        }
        if self.timeout_at.is_some_and(|t| now >= t) {
            self.timeout_at = None;
            self.end(1, "the rendezvous failed", false);
        }
        if let Some(i) = self.lost.iter().position(|l| now >= l.1) {
            let (pe, _, why) = self.lost.remove(i);
            if !self.pes[pe].reaped && !self.server.finalized(pe) {
                let what = format!(
                    "{} lost its control connection ({why}) while its start command kept \
                     running for {} s",
                    self.who(pe),
                    LOST_GRACE.as_secs_f64()
                );
                self.end(1, &what, false);
            }
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
