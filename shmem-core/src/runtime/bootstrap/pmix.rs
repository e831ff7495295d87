//! Start-up under a PMIx launcher (Open MPI's `mpirun`, `prterun`, Slurm's `srun --mpi=pmix`).
//!
//! Rank and size come from PMIx. An allgather is `PMIx_Put` of this PE's blob under a key
//! numbered by the collective, `PMIx_Commit`, a fence that collects the data, then `PMIx_Get`
//! of every PE's blob; a barrier is a fence without data. Fences are non-blocking calls polled
//! with the caller's progress function, so UCX keeps moving while PMIx works. The PEs that share
//! this node are `PMIX_LOCAL_PEERS`; the lowest of them names the node.
//!
//! The rendezvous reads the records once per node: the node's lowest rank reads them all and
//! shares them in a sealed memfd that its own record names (`shmem_launch::table`), and the
//! node's other PEs map it instead of reading n records each.
//!
//! Part of the runtime layer; uses `error` only.

use std::time::Duration;

use crate::error::{Error, Result};
use shmem_launch::table::{Locate, Pending, Table};
use shmem_pmix::Pmix;

/// How long a PE waits for its node's leader to fill the shared table before it reads the
/// records from PMIx itself (the leader reads them all; a slow node takes a while).
const SHARED_TABLE_WAIT: Duration = Duration::from_secs(60);

/// A PMIx-started process: the library handle and what it told us at start-up.
#[derive(Debug)]
pub(crate) struct PmixBoot {
    pmix: Pmix,
    /// The ranks on this node, sorted (this one included).
    local: Vec<u32>,
    /// Collectives done so far, to give each allgather its own key.
    epoch: u64,
}

fn failed(what: &str, e: shmem_pmix::Error) -> Error {
    Error::Bootstrap(format!("PMIx start-up: {what}: {e}"))
}

impl PmixBoot {
    /// `PMIx_Init` and the job's layout. Called only when [`Pmix::launched`] says a PMIx
    /// launcher started this process.
    pub(crate) fn start() -> Result<PmixBoot> {
        let pmix = Pmix::init().map_err(|e| failed("PMIx_Init", e))?;
        let mut local = pmix
            .local_peers()
            .map_err(|e| failed("the PEs of this node (PMIX_LOCAL_PEERS)", e))?;
        local.sort_unstable();
        if local.binary_search(&pmix.rank()).is_err() {
            return Err(Error::Bootstrap(format!(
                "PMIx start-up: PMIX_LOCAL_PEERS {local:?} does not list this process's rank {}",
                pmix.rank()
            )));
        }
        Ok(PmixBoot {
            pmix,
            local,
            epoch: 0,
        })
    }

    pub(crate) fn my_pe(&self) -> usize {
        self.pmix.rank() as usize
    }

    pub(crate) fn n_pes(&self) -> usize {
        self.pmix.size() as usize
    }

    /// The lowest rank on this node: equal for exactly the PEs that share the node.
    pub(crate) fn node_key(&self) -> u64 {
        u64::from(self.local[0])
    }

    /// True when some PE runs on another node.
    pub(crate) fn spans_nodes(&self) -> bool {
        self.local.len() < self.n_pes()
    }

    /// The lowest rank of this node when the node has other PEs: the one that shares the
    /// start-up table with them.
    pub(crate) fn table_leader(&self) -> Option<usize> {
        (self.local.len() > 1).then_some(self.local[0] as usize)
    }

    /// The rendezvous: every PE's record in a [`Table`]. The node's lowest rank reads them
    /// all from PMIx and fills `pending` (the memfd its record names) for the node's other
    /// PEs, which read the leader's record, find the memfd with `locate` (its pid and
    /// descriptor) and wait for it; anything that fails falls back to reading every record
    /// from PMIx.
    pub(crate) fn allgather_table(
        &mut self,
        mine: &[u8],
        pending: Option<Pending>,
        locate: Locate<'_>,
        progress: &mut dyn FnMut(),
    ) -> Result<Table> {
        let key = self.exchange(mine, progress)?;
        let me = self.my_pe();
        match (self.table_leader(), pending) {
            (Some(leader), Some(pending)) if leader == me => {
                let records = self.records(&key)?;
                Ok(pending
                    .fill(self.epoch, &records)
                    .unwrap_or_else(|_| Table::from_records(records)))
            }
            (Some(leader), _) if leader != me => {
                let record = self.record(&key, leader as u32)?;
                if let Some(at) = locate(&record)
                    && let Ok(Some(table)) = Table::wait_shared(
                        at,
                        self.n_pes(),
                        self.epoch,
                        SHARED_TABLE_WAIT,
                        progress,
                    )
                {
                    return Ok(table);
                }
                self.records(&key).map(Table::from_records)
            }
            _ => self.records(&key).map(Table::from_records),
        }
    }

    /// Publishes `mine` under a key of its own for this collective and waits in a fence
    /// that collects everyone's; returns the key.
    fn exchange(&mut self, mine: &[u8], progress: &mut dyn FnMut()) -> Result<String> {
        self.epoch += 1;
        // Keys starting with "pmix" are reserved by PMIx.
        let key = format!("shmem.allgather.{}", self.epoch);
        self.pmix
            .put(&key, mine)
            .map_err(|e| failed("PMIx_Put", e))?;
        self.pmix.commit().map_err(|e| failed("PMIx_Commit", e))?;
        self.pmix
            .fence(true, progress)
            .map_err(|e| failed("PMIx_Fence (collecting data)", e))?;
        Ok(key)
    }

    /// PE `rank`'s blob under `key`.
    fn record(&self, key: &str, rank: u32) -> Result<Vec<u8>> {
        self.pmix
            .get(rank, key)
            .map_err(|e| failed(&format!("PMIx_Get of PE {rank}'s start-up record"), e))
    }

    /// Every PE's blob under `key`, by rank.
    fn records(&self, key: &str) -> Result<Vec<Vec<u8>>> {
        (0..self.pmix.size())
            .map(|rank| self.record(key, rank))
            .collect()
    }

    pub(crate) fn barrier(&mut self, progress: &mut dyn FnMut()) -> Result<()> {
        self.epoch += 1;
        self.pmix
            .fence(false, progress)
            .map_err(|e| failed("PMIx_Fence", e))
    }

    /// `PMIx_Abort` of the whole job with `status`.
    pub(crate) fn global_exit(&mut self, status: i32) {
        // The caller exits either way.
        let _ = self
            .pmix
            .abort(status, &format!("shmem: global_exit({status})"));
    }
}
