//! The server's round: [`Server::poll`] waits on every socket at once, then `service` accepts,
//! reads and answers everything that is ready, within the input budget.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use super::agents::Agent;
use super::conn::lock;
use super::{BIG_PARTIAL, MAX_BUFFERED, Notice, Server, over_budget};

impl Server {
    /// Waits up to `max_wait` for activity on the sockets or on `wake` (a descriptor the caller
    /// uses to interrupt the wait; the caller drains it), handles it and returns what the caller
    /// should know.
    pub fn poll(&mut self, wake: Option<RawFd>, max_wait: Duration) -> io::Result<Vec<Notice>> {
        // What was sent on virtual connections since the last round goes out now.
        self.flush_agents();
        let mut wait = max_wait;
        if self.timeout_detail.is_none() && !self.all_hello() {
            let deadline = self.started + self.timeout;
            wait = wait.min(deadline.saturating_duration_since(Instant::now()));
        }
        if self.heartbeat.is_some() {
            wait = wait.min(self.next_beat.saturating_duration_since(Instant::now()));
        }
        let accepting = match self.accept_paused_until {
            Some(t) if t > Instant::now() => {
                wait = wait.min(t.saturating_duration_since(Instant::now()));
                false
            }
            _ => true,
        };
        if !self.pending.is_empty() || !self.closing.is_empty() {
            // Wake to close connections that do not say hello in time, and lingering ones.
            wait = wait.min(Duration::from_millis(250));
        }
        let mut fds = Vec::with_capacity(
            self.listeners.len() + 1 + self.pending.len() + 2 * self.slots.len(),
        );
        let mut watch = |fd: RawFd, out: bool| {
            let events = libc::POLLIN | if out { libc::POLLOUT } else { 0 };
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
        };
        if accepting {
            for l in &self.listeners {
                watch(l.as_raw_fd(), false);
            }
        }
        if let Some(fd) = wake {
            watch(fd, false);
        }
        for c in self
            .pending
            .iter()
            .chain(self.closing.iter().map(|(c, _, _)| c))
            .chain(self.agents.iter().flatten().map(|a| &a.conn))
        {
            if let Some(fd) = c.fd() {
                watch(fd, !c.out.is_empty());
            }
        }
        for s in &self.slots {
            for c in [&s.conn, &s.control].into_iter().flatten() {
                if let Some(fd) = c.fd() {
                    watch(fd, !c.out.is_empty());
                }
            }
        }
        // Round up so a sub-millisecond wait does not become a busy loop.
        let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live, exclusively borrowed array of `fds.len()` initialized pollfd
        // structs; poll only writes their `revents` fields.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        self.service();
        Ok(std::mem::take(&mut self.notices))
    }

    /// Accepts, reads and answers everything that is ready, without waiting.
    fn service(&mut self) {
        self.buffered = self
            .pending
            .iter()
            .map(|c| c.frames.buffered())
            .sum::<usize>()
            + self
                .slots
                .iter()
                .flat_map(|s| [&s.conn, &s.control])
                .flatten()
                .map(|c| c.frames.buffered())
                .sum::<usize>()
            + self
                .agents
                .iter()
                .flatten()
                .map(|a| {
                    a.conn.frames.buffered()
                        + a.pipes
                            .values()
                            .map(|p| lock(p).inbound.len())
                            .sum::<usize>()
                })
                .sum::<usize>();
        self.accept_all();
        for node in 0..self.agents.len() {
            self.read_agent(node);
        }
        if self.buffered > MAX_BUFFERED {
            // Relayed bytes count too: the agent holding the most goes.
            let relayed = |a: &Agent| {
                a.pipes
                    .values()
                    .map(|p| lock(p).inbound.len())
                    .sum::<usize>()
            };
            let most = (0..self.agents.len())
                .filter_map(|n| Some((n, relayed(self.agents[n].as_ref()?))))
                .max_by_key(|&(_, bytes)| bytes)
                .filter(|&(_, bytes)| bytes > BIG_PARTIAL)
                .map(|(n, _)| n);
            if let Some(node) = most {
                self.warn(format!("the host agent of node {node}: {}", over_budget()));
                self.drop_agent(node);
            }
        }
        self.read_pending();
        self.linger();
        for pe in 0..self.npes() {
            self.read_pe(pe);
        }
        for pe in 0..self.npes() {
            self.read_control(pe);
        }
        self.heartbeats();
        self.check_timeout();
        self.check_stranded();
        self.flush_agents();
    }
}
