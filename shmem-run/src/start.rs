//! What both run paths (`local.rs`, `remote.rs`) share while they start the PEs: the
//! rendezvous listener and the address the PEs reach it at, and the progress report.

use std::time::{Duration, Instant};

use shmem_launch::server::Server;

use crate::error::RunError;
use crate::say::say;
use crate::spec::JobSpec;

/// How much longer than the launcher a PE waits for a heartbeat before it gives up, so that the
/// launcher, which can name the silent host, normally speaks first.
pub const PE_HEARTBEAT_SLACK: Duration = Duration::from_secs(1);

/// Binds the rendezvous server to `addr` for `npes` PEs of `job`, or says why not.
pub fn bind(addr: &str, job: &JobSpec<'_>, npes: usize) -> Result<Server, RunError> {
    Server::bind(addr, job.id, job.secret.clone(), npes, job.timeout).map_err(|e| {
        RunError::Setup(format!(
            "cannot listen for the PEs' rendezvous on {addr}: {e}"
        ))
    })
}

/// Tells `server` the host of every PE (`nodes[pe]`), so that start-up tables go once per host.
pub fn set_nodes(server: &mut Server, nodes: Vec<usize>) -> Result<(), RunError> {
    server
        .set_nodes(nodes)
        .map_err(|e| RunError::Setup(format!("placing the PEs on their hosts: {e}")))
}

/// Descriptors the launcher holds per PE at most: the rendezvous and control connections, the
/// PE's stdout and stderr pipes, and for a PE on another host its start command's stdin. A host
/// agent costs no more (its one connection, its start command's three pipes).
const FDS_PER_PE: u64 = 5;
/// Descriptors the launcher holds besides: listeners, the event pipe, the standard streams.
const FDS_BASE: u64 = 16;

/// What holds the launcher's descriptors: the PEs themselves, or one host agent per host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holders {
    /// `n` PEs, each with its connections and pipes.
    Pes(usize),
    /// `n` host agents, each holding one connection for its host's PEs.
    Agents(usize),
}

/// Raises this process's soft limit of open descriptors to the hard limit (as other launchers
/// do: the default soft limit, often 1,024, would stop a job of a few hundred PEs), and refuses
/// a job whose PEs (or host agents) the hard limit cannot hold, before anything starts.
pub fn raise_fd_limit(holders: Holders) -> Result<(), RunError> {
    let (n, what) = match holders {
        Holders::Pes(n) => (n, "PEs"),
        Holders::Agents(n) => (n, "host agents"),
    };
    let need = FDS_BASE + FDS_PER_PE * n as u64;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(()); // Nothing known: the accept loop reports EMFILE if it comes to that.
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we pass.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    if lim.rlim_cur < need {
        let how = match holders {
            Holders::Pes(_) => "its two connections and its output pipes",
            Holders::Agents(_) => "its connection and its start command's pipes",
        };
        return Err(RunError::Usage(format!(
            "a job of {n} {what} needs about {need} open files in shmemrun ({FDS_PER_PE} per \
             {}: {how}), but the limit is {} (`ulimit -Hn`): raise it, or start the job with the \
             cluster's launcher (srun --mpi=pmix, mpirun), whose daemons hold the PEs' \
             connections per host",
            &what[..what.len() - 1],
            lim.rlim_cur
        )));
    }
    Ok(())
}

/// `host:port` for `ip`, with brackets for IPv6.
pub fn host_port(ip: &str, port: u16) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// Tells the user how the start of many PEs goes, once it takes more than a second.
pub struct Progress {
    /// The PEs to start.
    npes: usize,
    /// When the start began.
    started: Instant,
    /// When the next report is due.
    next: Instant,
    /// Whether a report was printed (then the end of the start is reported too).
    shown: bool,
}

impl Progress {
    /// The start of `npes` PEs begins.
    pub fn new(npes: usize) -> Progress {
        let now = Instant::now();
        Progress {
            npes,
            started: now,
            next: now + Duration::from_secs(1),
            shown: false,
        }
    }

    /// `done` PEs have been started.
    pub fn tick(&mut self, done: usize) {
        let now = Instant::now();
        if now >= self.next && done < self.npes {
            self.next = now + Duration::from_secs(1);
            self.shown = true;
            say!(
                "started {done} of {} PEs ({:.0} s)",
                self.npes,
                (now - self.started).as_secs_f64()
            );
        }
    }

    /// The start is over: `done` PEs started.
    pub fn finish(&self, done: usize) {
        if !self.shown {
            return;
        }
        let took = self.started.elapsed().as_secs_f64();
        if done == self.npes {
            say!("started all {done} PEs in {took:.1} s");
        } else {
            say!(
                "stopped starting PEs after {done} of {} ({took:.1} s)",
                self.npes
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_brackets_ipv6_only() {
        assert_eq!(host_port("127.0.0.1", 80), "127.0.0.1:80");
        assert_eq!(host_port("::1", 0), "[::1]:0");
    }
}
