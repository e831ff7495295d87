//! Start-up under a PMIx launcher (Open MPI's `mpirun`, `prterun`, Slurm's `srun --mpi=pmix`).
//!
//! Rank and size come from PMIx. An allgather is `PMIx_Put` of this PE's blob under a key
//! numbered by the collective, `PMIx_Commit`, a fence that collects the data, then `PMIx_Get`
//! of every PE's blob; a barrier is a fence without data. Fences are non-blocking calls polled
//! with the caller's progress function, so UCX keeps moving while PMIx works. The PEs that share
//! this node are `PMIX_LOCAL_PEERS`; the lowest of them names the node.
//!
//! Part of the runtime layer; uses `error` only.

use crate::error::{Error, Result};
use shmem_pmix::Pmix;

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

    pub(crate) fn allgather(
        &mut self,
        mine: &[u8],
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<Vec<u8>>> {
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
        (0..self.pmix.size())
            .map(|rank| {
                self.pmix
                    .get(rank, &key)
                    .map_err(|e| failed(&format!("PMIx_Get of PE {rank}'s start-up record"), e))
            })
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
