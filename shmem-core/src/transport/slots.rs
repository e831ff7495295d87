//! The per-process state of the collectives: which team blocks of the team segment are in use,
//! and the epoch counters of each block and of the sync area. Every PE calls the same
//! collectives in the same order, so the counters agree across PEs; they live with the block,
//! not with a team handle, so two handles of one team agree too.
//!
//! Part of the transport layer, below [`Transport`](super::Transport), which holds one; uses
//! `mem::segment` only.

use crate::mem::segment::TEAM_SLOTS;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Team blocks in use and the epoch counters of every block and of the sync area.
pub(crate) struct Slots {
    used: AtomicU64,
    /// Blocks that have served a team (one bit each): the others are still as the fresh
    /// segment left them, all zeros.
    served: AtomicU64,
    /// The sync area's all-reduce (collective allocation).
    pub(crate) sync_epoch: AtomicU64,
    /// Dissemination syncs of each block.
    pub(crate) barrier_epoch: [AtomicU64; TEAM_SLOTS],
    /// Tree collectives that sync first (large broadcasts, scans).
    pub(crate) coll_epoch: [AtomicU64; TEAM_SLOTS],
    /// Mailbox exchanges in which every member waits for every other (reductions, fcollect,
    /// alltoall): their slots alternate by parity of this counter.
    pub(crate) mail_epoch: [AtomicU64; TEAM_SLOTS],
    /// Eager broadcasts (ring slots, flow-controlled by `segment::BCAST_DONE`).
    pub(crate) bcast_epoch: [AtomicU64; TEAM_SLOTS],
    /// How many collectives this PE has entered on each block's team (`transport::collective`'s
    /// entry words).
    pub(crate) entries: [AtomicU64; TEAM_SLOTS],
    /// How deep this PE is in collectives it entered on each block's team (only the outermost
    /// one takes a sequence number).
    pub(crate) depth: [AtomicU32; TEAM_SLOTS],
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            // Block 0 belongs to the world team.
            used: AtomicU64::new(1),
            served: AtomicU64::new(1),
            sync_epoch: AtomicU64::new(0),
            barrier_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            coll_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            mail_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            bcast_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            entries: std::array::from_fn(|_| AtomicU64::new(0)),
            depth: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }
}

impl Slots {
    /// The blocks in use, one bit each.
    pub(crate) fn mask(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Marks block `slot` used, its epochs starting from zero; returns whether it served a team
    /// before (else it is still all zeros, and clearing it would only commit its pages).
    pub(crate) fn take(&self, slot: usize) -> bool {
        self.used.fetch_or(1 << slot, Ordering::Relaxed);
        let served = self.served.fetch_or(1 << slot, Ordering::Relaxed) & (1 << slot) != 0;
        self.barrier_epoch[slot].store(0, Ordering::Relaxed);
        self.coll_epoch[slot].store(0, Ordering::Relaxed);
        self.mail_epoch[slot].store(0, Ordering::Relaxed);
        self.bcast_epoch[slot].store(0, Ordering::Relaxed);
        self.entries[slot].store(0, Ordering::Relaxed);
        self.depth[slot].store(0, Ordering::Relaxed);
        served
    }

    /// Marks block `slot` free.
    pub(crate) fn release(&self, slot: usize) {
        self.used.fetch_and(!(1 << slot), Ordering::Relaxed);
    }
}

/// The next value of an epoch counter (every member calls the same collectives in the same
/// order, so the counters agree).
pub(crate) fn next_epoch(c: &AtomicU64) -> u64 {
    c.fetch_add(1, Ordering::Relaxed) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_needs_clearing_only_after_it_served_a_team() {
        let s = Slots::default();
        // The world team's block has served from the start.
        assert!(s.take(0));
        assert!(!s.take(5), "a block never used is still zeros");
        s.release(5);
        assert!(s.take(5), "a released block served a team");
        assert_eq!(s.mask(), 1 | 1 << 5);
    }
}
