//! A context's own route: a new UCX worker and endpoints from it to every PE reached through
//! UCX (peers mapped into this process stay direct).
//!
//! Part of the transport layer (methods of [`Transport`]); uses `mem` only.

use super::{Contact, Link, Peer, Transport};
use crate::error::Result;
use shmem_ucx::{ThreadMode, Worker};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Transport {
    /// A new UCX worker and endpoints from it to every PE, for a context. Peers mapped into this
    /// process stay direct (no endpoint needed); the others get their own endpoint and rkey.
    pub(crate) fn context_route(&self) -> Result<(Worker, Box<[Peer]>, bool)> {
        self.check_live();
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

    /// Closes a context's endpoints (they are all idle: the context was quieted) and stops
    /// progressing its worker.
    pub(crate) fn close_route(&self, worker: &Worker, peers: &[Peer]) {
        self.progress.remove_worker(worker);
        self.routes.fetch_sub(1, Ordering::Relaxed);
        for peer in peers {
            peer.close();
        }
    }
}
