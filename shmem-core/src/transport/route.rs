//! A context's own route: a new UCX worker and endpoints from it to every PE reached through
//! UCX (peers mapped into this process stay direct). A destroyed context's route is kept, idle
//! and quiet, for the next context ([`IDLE_ROUTES`] of them): making a worker and connecting
//! endpoints costs 1-2 ms per peer over tcp, and a connection closed by one side is not all
//! given back by the other (a soak that made and dropped a context every round grew each PE's
//! private memory by about 1.6 KiB per context over tcp, without end). An idle route's worker
//! is still progressed by every wait, like a live context's: the peers' workers keep endpoints
//! to it, and their flushes (a `quiet`, a barrier) wait for it to answer.
//!
//! Part of the transport layer (methods of [`Transport`]); uses `mem` only.

use super::{Contact, CtxRoute, Link, Peer, Transport};
use crate::error::Result;
use shmem_ucx::ThreadMode;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Idle routes kept for reuse; a context dropped while this many wait is closed for good. Each
/// costs every wait one more round of an idle worker (a system call over tcp).
pub(crate) const IDLE_ROUTES: usize = 8;

impl Transport {
    /// A UCX worker and endpoints from it to every PE, for a context: an idle one if a dropped
    /// context left one, else a new one. Peers mapped into this process stay direct (no
    /// endpoint needed); the others get their own endpoint and rkey (at first contact).
    pub(crate) fn context_route(&self) -> Result<CtxRoute> {
        self.check_live();
        let idle = self
            .idle_routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        if let Some(route) = idle {
            // Its worker was progressed all along.
            self.routes.fetch_add(1, Ordering::Relaxed);
            return Ok(route);
        }
        // Multi-threaded whatever the context's mode: the runtime's waits progress it from
        // whichever thread waits.
        let worker = self.context.create_worker(ThreadMode::Multi)?;
        // The new worker's shared-memory queues, before its address is used.
        crate::mem::private_shm::restrict_sysv_segments();
        let mut peers = Vec::with_capacity(self.n_pes);
        for (pe, main) in self.peers.iter().enumerate() {
            if !main.direct.is_null() {
                peers.push(
                    Peer::new(main.direct, main.remote_base, Link::Closed)
                        .with_data(main.data, main.data_remote)
                        .with_team(main.team, main.team_remote),
                );
                continue;
            }
            // Connected at first contact, like the main worker's endpoints.
            peers.push(
                Peer::new(
                    ptr::null_mut(),
                    main.remote_base,
                    Link::Unopened(
                        worker.clone(),
                        Contact {
                            directory: Arc::clone(&self.directory),
                            pe,
                        },
                    ),
                )
                .with_data(ptr::null_mut(), main.data_remote)
                .with_team(main.team, main.team_remote),
            );
        }
        let any_ucx = peers.iter().any(|p| p.direct.is_null());
        self.routes.fetch_add(1, Ordering::Relaxed);
        if any_ucx {
            self.progress.add_worker(&worker);
        }
        Ok((worker, peers.into_boxed_slice(), any_ucx))
    }

    /// Takes back a dropped context's route (it was quieted: nothing is in flight) and keeps
    /// it for the next context, its worker still progressed; or, when [`IDLE_ROUTES`] already
    /// wait, stops progressing it and closes its endpoints.
    pub(crate) fn retire_route(&self, route: CtxRoute) {
        self.routes.fetch_sub(1, Ordering::Relaxed);
        let mut idle = self.idle_routes.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_ROUTES {
            idle.push(route);
        } else {
            drop(idle);
            self.close_route(route);
        }
    }

    /// Closes the idle routes' endpoints and workers (at finalize).
    pub(crate) fn close_idle_routes(&self) {
        let idle = std::mem::take(&mut *self.idle_routes.lock().unwrap_or_else(|p| p.into_inner()));
        idle.into_iter().for_each(|r| self.close_route(r));
    }

    /// Stops progressing a route's worker and closes its endpoints, then the worker.
    fn close_route(&self, (worker, peers, _): CtxRoute) {
        self.progress.remove_worker(&worker);
        for peer in peers.iter() {
            peer.close();
        }
        // Endpoints before their worker.
        drop(peers);
        drop(worker);
    }
}
