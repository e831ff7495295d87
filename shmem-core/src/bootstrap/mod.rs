//! Start-up: who am I, how many are we, which PEs share my node, and an out-of-band allgather
//! and barrier. Three ways in:
//! - started by `shmemrun` (`SHMEM_RENDEZVOUS` is set): over the connection to the launcher,
//!   described below;
//! - started by a PMIx launcher (`mpirun`, `prterun`, `srun --mpi=pmix`: `PMIX_NAMESPACE` and
//!   `PMIX_RANK` are set): through PMIx ([`pmix`]);
//! - neither: a singleton, PE 0 of 1.
//!
//! `shmemrun` starts every PE with `SHMEM_RENDEZVOUS` (the launcher's `host:port`), `SHMEM_PE`,
//! `SHMEM_NPES`, `SHMEM_JOB_ID`, `SHMEM_INIT_TIMEOUT`, `SHMEM_NODE` (the index of the PE's host)
//! and `SHMEM_NNODES` (the number of hosts) in the environment. A program started without the
//! launcher (no `SHMEM_RENDEZVOUS`) is a singleton: PE 0 of 1 on node 0 of 1, with no I/O at all.
//!
//! The protocol is in [`wire`]; the PE's side of the conversation in [`client`]. Both use only
//! `std`, so the launcher binary and the integration tests compile the very same files.
//!
//! Supervision: besides the synchronous connection of [`client`], a PE started by the launcher
//! opens a control connection served by a [`watchdog`] thread. The launcher ends a PE on another
//! host through it ([`wire::Msg::Abort`]), and the PE ends itself when the launcher closes it or,
//! in multi-host jobs, stops sending heartbeats. The watchdog runs from `init` until the process
//! exits, finalize included.
//!
//! Timeouts: the first collective is the rendezvous. If not every PE has said hello to the
//! launcher within `SHMEM_INIT_TIMEOUT` seconds (default 60), the launcher sends the connected
//! PEs an error naming the missing ones, which becomes [`Error::RendezvousTimeout`]; if the
//! launcher stays silent, the PE gives up on its own a few seconds later. Later collectives wait
//! as long as it takes, because the launcher tells the waiters when a PE leaves without
//! finalizing (and ends the job when a PE dies).

pub(crate) mod client;
#[cfg(feature = "pmix")]
mod pmix;
// The launcher's side; the unit tests run it in-process (`shmemrun` uses all of it).
#[cfg(test)]
#[allow(dead_code)]
mod server;
pub(crate) mod watchdog;
// Shared with `shmemrun` and the integration tests; each of them needs only part of it.
#[allow(dead_code)]
pub(crate) mod wire;

use std::ffi::OsString;
use std::time::Duration;

use crate::{Error, Result};
use client::{Client, ClientError};
use wire::{ENV_INIT_TIMEOUT, ENV_JOB_ID, ENV_NNODES, ENV_NODE, ENV_NPES, ENV_PE, ENV_RENDEZVOUS};

/// This process's place in the job and its connection to whatever started it.
#[derive(Debug)]
pub(crate) struct Bootstrap {
    my_pe: usize,
    n_pes: usize,
    node: usize,
    n_nodes: usize,
    timeout: Duration,
    link: Link,
}

/// How the collectives of start-up travel.
#[derive(Debug)]
enum Link {
    Singleton,
    Launcher(Client),
    #[cfg(feature = "pmix")]
    Pmix(pmix::PmixBoot),
}

/// True when a PMIx launcher started this process (its variables are in the environment).
fn pmix_launched() -> bool {
    #[cfg(feature = "pmix")]
    return shmem_pmix::Pmix::launched();
    #[cfg(not(feature = "pmix"))]
    return std::env::var_os("PMIX_NAMESPACE").is_some() && std::env::var_os("PMIX_RANK").is_some();
}

impl Bootstrap {
    /// Reads the environment set by `shmemrun`, connects to the launcher and starts the
    /// watchdog (which ends the process when the launcher ends the job or is gone). Without
    /// `SHMEM_RENDEZVOUS` the process is a singleton (PE 0 of 1) and nothing is read or
    /// connected.
    pub(crate) fn from_env() -> Result<Bootstrap> {
        let Some(config) = Config::from_vars(std::env::var_os)? else {
            if pmix_launched() {
                return Bootstrap::from_pmix();
            }
            return Ok(Bootstrap::singleton());
        };
        let bootstrap = Bootstrap::connect(&config)?;
        watchdog::start(
            &config.rendezvous,
            config.job_id,
            config.pe,
            config.timeout,
            Box::new(watchdog::exit_now),
        )
        .map_err(Error::Bootstrap)?;
        Ok(bootstrap)
    }

    fn singleton() -> Bootstrap {
        Bootstrap {
            my_pe: 0,
            n_pes: 1,
            node: 0,
            n_nodes: 1,
            timeout: default_timeout(),
            link: Link::Singleton,
        }
    }

    /// Start-up through PMIx. The node is named by its lowest rank, and "two nodes" only says
    /// that the job spans more than one (PMIx tells each PE only its own node's ranks).
    #[cfg(feature = "pmix")]
    fn from_pmix() -> Result<Bootstrap> {
        let p = pmix::PmixBoot::start()?;
        Ok(Bootstrap {
            my_pe: p.my_pe(),
            n_pes: p.n_pes(),
            node: p.node_key() as usize,
            n_nodes: if p.spans_nodes() { 2 } else { 1 },
            timeout: default_timeout(),
            link: Link::Pmix(p),
        })
    }

    #[cfg(not(feature = "pmix"))]
    fn from_pmix() -> Result<Bootstrap> {
        Err(Error::Bootstrap(
            "this process was started by a PMIx launcher (PMIX_NAMESPACE and PMIX_RANK are set), \
             but shmem-core was built without its `pmix` feature: enable it, or start the \
             program with shmemrun"
                .into(),
        ))
    }

    /// Connects the synchronous launcher connection (no watchdog: unit tests run many PEs in
    /// one process).
    fn connect(c: &Config) -> Result<Bootstrap> {
        let client = Client::connect(&c.rendezvous, c.job_id, c.pe, c.npes, c.timeout)
            .map_err(|e| map_err(e, c.timeout))?;
        Ok(Bootstrap {
            my_pe: c.pe,
            n_pes: c.npes,
            node: c.node,
            n_nodes: c.nnodes,
            timeout: c.timeout,
            link: Link::Launcher(client),
        })
    }

    /// This PE's number, in `0..n_pes()`.
    pub(crate) fn my_pe(&self) -> usize {
        self.my_pe
    }

    /// The number of PEs in the job.
    pub(crate) fn n_pes(&self) -> usize {
        self.n_pes
    }

    /// This PE's node: equal for exactly the PEs that share a machine and may reach each
    /// other's memory directly; the others are reached through UCX. Under `shmemrun` the index
    /// of the host (`SHMEM_NODE`; 0 for a singleton or when the launcher did not say); under
    /// PMIx the lowest rank of `PMIX_LOCAL_PEERS`.
    pub(crate) fn node(&self) -> usize {
        self.node
    }

    /// The number of hosts (nodes) the job runs on (`SHMEM_NNODES`; 1 for a singleton or when
    /// the launcher did not say; under PMIx 1 or 2, for "more than one").
    pub(crate) fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// True when some PE runs on another node.
    pub(crate) fn spans_nodes(&self) -> bool {
        self.n_nodes() > 1
    }

    /// Every PE contributes one blob; returns all blobs indexed by PE. Calls `progress` at least
    /// every millisecond or so while waiting.
    ///
    /// The first collective is the rendezvous and fails with [`Error::RendezvousTimeout`] when
    /// not every PE arrives within `SHMEM_INIT_TIMEOUT`. Any collective fails with
    /// [`Error::Bootstrap`] when the launcher connection is lost, when the launcher reports that
    /// a PE left without finalizing, or on a protocol error; after an error every later call
    /// fails the same way.
    pub(crate) fn allgather(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>> {
        let timeout = self.timeout;
        match &mut self.link {
            Link::Singleton => Ok(vec![mine.to_vec()]),
            Link::Launcher(c) => c.allgather(mine, progress).map_err(|e| map_err(e, timeout)),
            #[cfg(feature = "pmix")]
            Link::Pmix(p) => p.allgather(mine, progress),
        }
    }

    /// Out-of-band barrier over the launcher connection, progressing while waiting. Errors as
    /// for [`allgather`](Self::allgather).
    pub(crate) fn barrier(&mut self, progress: &mut dyn FnMut()) -> Result<()> {
        let timeout = self.timeout;
        match &mut self.link {
            Link::Singleton => Ok(()),
            Link::Launcher(c) => c.barrier(progress).map_err(|e| map_err(e, timeout)),
            #[cfg(feature = "pmix")]
            Link::Pmix(p) => p.barrier(progress),
        }
    }

    /// Tells the launcher this PE finalized cleanly, so its exit is expected. Collectives fail
    /// afterwards.
    pub(crate) fn finalize(&mut self) -> Result<()> {
        let timeout = self.timeout;
        match &mut self.link {
            Link::Launcher(c) => c.finalize().map_err(|e| map_err(e, timeout)),
            // PMIx_Finalize runs when the handle is dropped, at process exit.
            _ => Ok(()),
        }
    }
}

impl Bootstrap {
    /// Asks the launcher to end the job with `status` and waits briefly for it to acknowledge
    /// (under PMIx: `PMIx_Abort`); does nothing for a singleton. The caller exits afterwards
    /// either way.
    pub(crate) fn global_exit(&mut self, status: i32) {
        match &mut self.link {
            // Nothing useful can be done about a lost launcher: the caller exits anyway.
            Link::Launcher(c) => {
                let _ = c.global_exit(status, Duration::from_secs(2));
            }
            #[cfg(feature = "pmix")]
            Link::Pmix(p) => p.global_exit(status),
            Link::Singleton => {}
        }
    }
}

fn map_err(e: ClientError, timeout: Duration) -> Error {
    match e {
        ClientError::Timeout(detail) => Error::RendezvousTimeout { timeout, detail },
        ClientError::Failed(text) => Error::Bootstrap(text),
    }
}

fn default_timeout() -> Duration {
    Duration::from_secs_f64(wire::DEFAULT_INIT_TIMEOUT_SECS)
}

/// The launcher's environment, parsed.
#[derive(Debug, Clone, PartialEq)]
struct Config {
    rendezvous: String,
    pe: usize,
    npes: usize,
    job_id: u64,
    timeout: Duration,
    node: usize,
    nnodes: usize,
}

impl Config {
    /// `Ok(None)` when `SHMEM_RENDEZVOUS` is unset (singleton).
    fn from_vars(get: impl Fn(&'static str) -> Option<OsString>) -> Result<Option<Config>> {
        let text = |name: &'static str| -> Result<Option<String>> {
            match get(name) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|v| Error::BadEnv {
                    name,
                    value: v.to_string_lossy().into_owned(),
                    reason: "not valid UTF-8".into(),
                }),
            }
        };
        let required = |name: &'static str| -> Result<String> {
            text(name)?.ok_or_else(|| {
                Error::Bootstrap(format!(
                    "{ENV_RENDEZVOUS} is set but {name} is not: start the program with shmemrun, \
                     or unset {ENV_RENDEZVOUS} to run it as a single PE"
                ))
            })
        };
        let bad = |name: &'static str, value: &str, reason: String| Error::BadEnv {
            name,
            value: value.to_string(),
            reason,
        };
        let Some(rendezvous) = text(ENV_RENDEZVOUS)? else {
            return Ok(None);
        };
        if rendezvous.trim().is_empty() {
            return Err(bad(
                ENV_RENDEZVOUS,
                &rendezvous,
                "expected host:port".into(),
            ));
        }
        let number = |name: &'static str| -> Result<usize> {
            let v = required(name)?;
            v.trim()
                .parse()
                .map_err(|_| bad(name, &v, "expected a non-negative integer".into()))
        };
        let npes = number(ENV_NPES)?;
        if npes == 0 || npes > u32::MAX as usize {
            return Err(bad(
                ENV_NPES,
                &npes.to_string(),
                "must be at least 1".into(),
            ));
        }
        let pe = number(ENV_PE)?;
        if pe >= npes {
            return Err(bad(
                ENV_PE,
                &pe.to_string(),
                format!("must be below {ENV_NPES}={npes}"),
            ));
        }
        let id = required(ENV_JOB_ID)?;
        let job_id = u64::from_str_radix(id.trim(), 16).map_err(|_| {
            bad(
                ENV_JOB_ID,
                &id,
                "expected a hexadecimal 64-bit number".into(),
            )
        })?;
        let timeout = match text(ENV_INIT_TIMEOUT)? {
            None => default_timeout(),
            Some(v) => {
                wire::parse_timeout_secs(&v).map_err(|reason| bad(ENV_INIT_TIMEOUT, &v, reason))?
            }
        };
        // Optional: a launcher that does not know about hosts runs everything on one.
        let optional = |name: &'static str, default: usize| -> Result<usize> {
            match text(name)? {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| bad(name, &v, "expected a non-negative integer".into())),
            }
        };
        let nnodes = optional(ENV_NNODES, 1)?;
        if nnodes == 0 || nnodes > npes {
            return Err(bad(
                ENV_NNODES,
                &nnodes.to_string(),
                format!("must be from 1 to {ENV_NPES}={npes}"),
            ));
        }
        let node = optional(ENV_NODE, 0)?;
        if node >= nnodes {
            return Err(bad(
                ENV_NODE,
                &node.to_string(),
                format!("must be below {ENV_NNODES}={nnodes}"),
            ));
        }
        Ok(Some(Config {
            rendezvous,
            pe,
            npes,
            job_id,
            timeout,
            node,
            nnodes,
        }))
    }
}

#[cfg(test)]
mod tests;
