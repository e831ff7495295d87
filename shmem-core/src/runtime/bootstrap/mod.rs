//! Start-up: who am I, how many are we, which PEs share my node, and an out-of-band allgather
//! and barrier. Three ways in:
//! - started by `shmemrun` (`SHMEM_RENDEZVOUS` is set): over the connection to the launcher,
//!   with the launch protocol of the `shmem-launch` crate (its
//!   [`client`](shmem_launch::client) and [`watchdog`]; the protocol is
//!   described there);
//! - started by a PMIx launcher (`mpirun`, `prterun`, `srun --mpi=pmix`: `PMIX_NAMESPACE` and
//!   `PMIX_RANK` are set): through PMIx ([`pmix`]);
//! - neither: a singleton, PE 0 of 1 on node 0 of 1, with no I/O at all.
//!
//! Under `shmemrun`, the first collective is the rendezvous: it fails with
//! [`Error::RendezvousTimeout`] when not every PE arrives within `SHMEM_INIT_TIMEOUT`. Later
//! collectives wait as long as it takes, because the launcher tells the waiters when a PE leaves
//! without finalizing (and ends the job when a PE dies). A watchdog thread, on a control
//! connection of its own, ends the PE when the launcher ends the job or is gone.
//!
//! Part of the runtime layer; uses `transport::progress` (to record the CPU binding) and `error`.

#[cfg(feature = "pmix")]
mod pmix;

use std::time::Duration;

use shmem_launch::client::{Client, ClientError, EnvError, LaunchEnv};
use shmem_launch::table::{Locate, Pending, Table};
use shmem_launch::{watchdog, wire};

use crate::error::{Error, Result};

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
    /// Reads the environment set by `shmemrun`, binds this PE to a core where it asks
    /// (`SHMEM_BIND_TO`, `shmemrun --bind-to`), connects to the launcher and starts the
    /// watchdog (which ends the process when the launcher ends the job or is gone). Without
    /// `SHMEM_RENDEZVOUS` the process is a singleton (PE 0 of 1) and nothing is read or
    /// connected.
    pub(crate) fn from_env() -> Result<Bootstrap> {
        let Some(config) = LaunchEnv::from_env().map_err(env_error)? else {
            if pmix_launched() {
                return Bootstrap::from_pmix();
            }
            return Ok(Bootstrap::singleton());
        };
        // First, before the runtime starts a thread (they inherit the binding). A binding that
        // fails leaves the PE where it was: it costs speed, not correctness.
        if let Ok(Some(bound)) = config.bind() {
            crate::transport::progress::set_node_cpus(bound.cpus);
        }
        let bootstrap = Bootstrap::connect(&config)?;
        watchdog::start(
            &config.rendezvous,
            config.job_id,
            &config.secret,
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
    fn connect(c: &LaunchEnv) -> Result<Bootstrap> {
        let client = c.connect().map_err(|e| map_err(e, c.timeout))?;
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

    /// The rendezvous: every PE contributes one blob and gets all of them, indexed by PE, as
    /// a [`Table`] that may be a node-shared, sealed memfd that one PE of this node publishes
    /// for the others (see `shmem_launch::table`), so that the launcher sends it once per host
    /// and the node keeps one copy. Calls `progress` at least every millisecond or so while
    /// waiting.
    ///
    /// Under PMIx the node's lowest rank ([`table_leader`](Self::table_leader)) shares it:
    /// it passes `pending`, the memfd its record names, and the others find that memfd in its
    /// record with `locate` (pid and descriptor).
    ///
    /// The first collective is the rendezvous and fails with [`Error::RendezvousTimeout`] when
    /// not every PE arrives within `SHMEM_INIT_TIMEOUT`. Any collective fails with
    /// [`Error::Bootstrap`] when the launcher connection is lost, when the launcher reports that
    /// a PE left without finalizing, or on a protocol error; after an error every later call
    /// fails the same way.
    pub(crate) fn allgather_table(
        &mut self,
        mine: &[u8],
        pending: Option<Pending>,
        locate: Locate<'_>,
        progress: &mut dyn FnMut(),
    ) -> Result<Table> {
        let timeout = self.timeout;
        match &mut self.link {
            Link::Launcher(c) => c
                .allgather_shared(mine, progress)
                .map_err(|e| map_err(e, timeout)),
            #[cfg(feature = "pmix")]
            Link::Pmix(p) => p.allgather_table(mine, pending, locate, progress),
            Link::Singleton => {
                drop((pending, locate));
                Ok(Table::from_records(vec![mine.to_vec()]))
            }
        }
    }

    /// The PE that shares this node's start-up table through a memfd named in its own record
    /// (under PMIx: the node's lowest rank, when the node has other PEs); `None` where the
    /// launcher arranges the sharing itself, or there is nothing to share.
    pub(crate) fn table_leader(&self) -> Option<usize> {
        match &self.link {
            #[cfg(feature = "pmix")]
            Link::Pmix(p) => p.table_leader(),
            _ => None,
        }
    }

    /// Out-of-band barrier over the launcher connection, progressing while waiting. Errors as
    /// for [`allgather_table`](Self::allgather_table).
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

/// The launcher's environment is unusable: a bad value names the variable as for every other
/// variable of the runtime; a missing one says how to start the program.
fn env_error(e: EnvError) -> Error {
    match e {
        EnvError::Invalid {
            name,
            value,
            reason,
        } => Error::BadEnv {
            name,
            value,
            reason,
        },
        missing @ EnvError::Missing { .. } => Error::Bootstrap(missing.to_string()),
    }
}

fn default_timeout() -> Duration {
    Duration::from_secs_f64(wire::DEFAULT_INIT_TIMEOUT_SECS)
}

#[cfg(test)]
mod tests;
