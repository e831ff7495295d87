//! A context's own route: a new UCX worker and endpoints from it to every PE reached through
//! UCX (peers mapped into this process stay direct).
//!
//! Part of the transport layer (methods of [`Transport`]); uses `mem` only.

use super::{Peer, Transport, UcxPeer};
use crate::error::Result;
use shmem_ucx::{ThreadMode, Worker};
use std::ptr;

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
                    Peer::new(main.direct, main.remote_base, None)
                        .with_data(main.data, main.data_remote)
                        .with_team(main.team, main.team_remote),
                );
                continue;
            }
            let wire = &self.wire[pe];
            // SAFETY: the bytes are the peer's own worker address and packed rkeys from
            // start-up, unchanged (see `runtime::start`).
            let ep = unsafe { worker.connect(&wire.addr)? };
            // SAFETY: as above.
            let rkey = unsafe { ep.unpack_rkey(&wire.rkey)? };
            let data_rkey = match &wire.data_rkey {
                // SAFETY: as above.
                Some(k) => Some(unsafe { ep.unpack_rkey(k)? }),
                None => None,
            };
            // SAFETY: as above.
            let team_rkey = unsafe { ep.unpack_rkey(&wire.team_rkey)? };
            peers.push(
                Peer::new(
                    ptr::null_mut(),
                    main.remote_base,
                    Some(UcxPeer {
                        rkey,
                        data_rkey,
                        team_rkey,
                        ep,
                    }),
                )
                .with_data(ptr::null_mut(), main.data_remote)
                .with_team(main.team, main.team_remote),
            );
        }
        let any_ucx = peers.iter().any(|p| p.direct.is_null());
        if any_ucx {
            self.progress.add_worker(&worker);
        }
        Ok((worker, peers.into_boxed_slice(), any_ucx))
    }

    /// Closes a context's endpoints (they are all idle: the context was quieted) and stops
    /// progressing its worker.
    pub(crate) fn close_route(&self, worker: &Worker, peers: &[Peer]) {
        self.progress.remove_worker(worker);
        for peer in peers {
            peer.close();
        }
    }
}
