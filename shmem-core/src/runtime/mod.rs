//! **Layer 7, runtime**: the composition root. Start-up ([`start`]) builds the layers below
//! (the transport with its heap mapping, team segment, endpoints and progress; the statics'
//! places; the heap's allocator) from what the launcher or PMIx says ([`bootstrap`]) and what
//! every PE publishes ([`peer_info`]); finalize takes them down. This is the only module that
//! names them all; nothing below names it.
//!
//! The runtime is created once per process and never freed (see the lifetime notes in
//! `transport`): [`init`] hands out `&'static Runtime`, and every operation checks that the
//! `World` still lives before it touches memory.
//!
//! May use every layer below: `adapter`, `coll`, `ops`, `object`, `transport`, `mem` and the
//! base modules. Only `world` and the crate root use it.

mod bootstrap;
pub(crate) mod peer_info;
mod start;

use crate::error::{Error, Result};
use crate::mem::allocator::Allocator;
use crate::transport::Transport;
use crate::transport::collective::{announce_finalize, finalize_barrier};
use bootstrap::Bootstrap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// The runtime of this process, set by the first successful `init` and never freed.
static RUNTIME: OnceLock<Runtime> = OnceLock::new();
/// Life cycle of the process: one `init`, one finalize.
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
const UNINIT: u8 = 0;
const STARTING: u8 = 1;
const LIVE: u8 = 2;
const FINALIZED: u8 = 3;

/// Everything `init` sets up: the transport (PEs, heap mapping, UCX), the heap's allocator and
/// the launcher connection. Objects and operations carry only the narrow handles they need
/// (`&'static Transport`, the allocator), never this.
pub(crate) struct Runtime {
    /// The process's transport (also reachable as `transport::transport()`).
    pub(crate) tp: &'static Transport,
    /// The user heap's allocator: heap arrays reserve and free their blocks in it.
    pub(crate) allocator: Mutex<Allocator>,
    /// The launcher connection; taken (and dropped, which ends PMIx) at finalize.
    bootstrap: Mutex<Option<Bootstrap>>,
}

/// Claims the process-wide runtime, sets it up and publishes it.
pub(crate) fn init() -> Result<&'static Runtime> {
    if let Err(state) =
        STATE.compare_exchange(UNINIT, STARTING, Ordering::AcqRel, Ordering::Acquire)
    {
        return Err(if state == FINALIZED {
            Error::Finalized
        } else {
            Error::AlreadyInitialized
        });
    }
    match start::start() {
        Ok((transport, bootstrap)) => {
            let tp = crate::transport::publish(transport);
            let rt = Runtime {
                tp,
                allocator: Mutex::new(Allocator::new(tp.layout.user_len)),
                bootstrap: Mutex::new(Some(bootstrap)),
            };
            if RUNTIME.set(rt).is_err() {
                // Only one `init` gets past STATE, and a failed one leaves RUNTIME unset.
                unreachable!("the runtime was published twice");
            }
            let Some(rt) = RUNTIME.get() else {
                unreachable!("the runtime was just published");
            };
            STATE.store(LIVE, Ordering::Release);
            // Waits on a context's worker must keep the main worker moving too (see the hook).
            shmem_ucx::set_wait_hook(Some(progress_other_workers));
            Ok(rt)
        }
        Err(e) => {
            STATE.store(UNINIT, Ordering::Release);
            Err(e)
        }
    }
}

/// The wait hook: one round of progress on this process's workers other than `waiting_on`
/// (which the wait progresses itself), if any peer goes through UCX.
fn progress_other_workers(waiting_on: shmem_ucx::sys::ucp_worker_h) {
    if let Some(rt) = RUNTIME.get() {
        rt.tp.progress_except(waiting_on);
    }
}

/// Finalizes: quiet, barrier, close the endpoints of peers reached through UCX, leave the job.
/// Called once, by `World::drop`. Memory stays mapped until the process exits, so handles that
/// outlive the `World` panic instead of touching freed memory.
pub(crate) fn finalize() {
    let Some(rt) = RUNTIME.get() else {
        return;
    };
    if STATE.swap(FINALIZED, Ordering::AcqRel) != LIVE {
        return;
    }
    let tp = rt.tp;
    if std::thread::panicking() {
        shmem_ucx::set_wait_hook(None);
        // This PE is going down; the launcher ends the job. Collective steps could hang and
        // tearing UCX down is pointless.
        tp.abandon();
        return;
    }
    // The routes dropped contexts left for reuse: their endpoints' closes wait for the peers'
    // main workers, so this PE's main worker keeps serving the peers' closes meanwhile (the
    // wait hook), as it does in any wait.
    tp.close_idle_routes();
    shmem_ucx::set_wait_hook(None);
    // A PE still waiting in a collective that this one will never join says so (naming this
    // PE) instead of hanging the job; one waiting in `barrier_all` meets a barrier of another
    // kind and says so at once.
    announce_finalize(tp);
    finalize_barrier(tp);
    // No PE touches another's memory any more: close the endpoints.
    tp.close();
    let worker = tp.progress.worker();
    let bootstrap = rt
        .bootstrap
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(mut bootstrap) = bootstrap {
        // Keep progressing until every PE has closed its endpoints, then say goodbye.
        let _ = bootstrap.barrier(&mut || {
            worker.progress();
        });
        let _ = bootstrap.finalize();
        // Dropping it ends PMIx (PMIx_Finalize) where PMIx started this PE.
    }
    tp.progress.stop_thread();
}

impl Runtime {
    /// Runs `f` with the launcher connection (locked; a poisoned lock is taken over); `None`
    /// after finalize.
    pub(crate) fn with_bootstrap<R>(&self, f: impl FnOnce(&mut Bootstrap) -> R) -> Option<R> {
        let mut guard = self.bootstrap.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_mut().map(f)
    }
}
