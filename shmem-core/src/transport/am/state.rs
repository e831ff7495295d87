//! The process's active-message state, set once at start-up (`register`) before any handler can
//! run: this PE's memory as the handlers check it, the [`Ledger`], the batches of puts, the runs
//! of non-blocking gets, the gets in progress and the fence epoch.

use super::batch::BatchSet;
use super::get::{GetSlot, RunSet};
use super::ledger::Ledger;
use super::wire::Regions;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};

/// The process's strided-transfer state, set once at start-up before any handler can run.
pub(super) static STATE: OnceLock<State> = OnceLock::new();

pub(super) struct State {
    pub(super) my_pe: usize,
    /// This PE's heap base and length: every incoming write is checked against them.
    pub(super) base: *mut u8,
    pub(super) total: usize,
    /// This PE's data segment (C programs), at offset `DATA_OFFSET`, and its length.
    pub(super) data: (*mut u8, usize),
    /// This PE's team segment, at offsets `0..len` (below the heap's own offsets).
    pub(super) team: (*mut u8, usize),
    /// Counted messages sent and received, and their acknowledgements.
    pub(super) ledger: Ledger,
    /// Bumped by every fence.
    pub(super) fence_epoch: AtomicU64,
    /// Whether small puts in a stream may wait in batches (see [`coalesces`](super::coalesces)).
    pub(super) coalescing: AtomicBool,
    /// Per PE: the records of the puts waiting to go to it in one `BATCH` message.
    pub(super) batches: Mutex<BatchSet>,
    /// Whether `batches` holds `BATCHED_MAX` bytes or more (set with its lock held; read
    /// without).
    pub(super) batches_full: AtomicBool,
    /// Whether `batches` holds some batch (set with its lock held; read without).
    pub(super) puts_wait: AtomicBool,
    /// Whether small non-blocking gets may join runs (see [`runs`](mod@super::runs)).
    pub(super) runs_on: AtomicBool,
    /// The runs of non-blocking gets, pending and in flight.
    pub(super) runs: Mutex<RunSet>,
    /// Whether some run is pending, and whether some is pending or in flight (set with the
    /// lock of `runs` held; read without).
    pub(super) runs_pending: AtomicBool,
    pub(super) runs_active: AtomicBool,
    /// Strided gets waiting for their data, by token.
    pub(super) gets: Mutex<HashMap<u64, Arc<GetSlot>>>,
    pub(super) next_token: AtomicU64,
}

// SAFETY: `base` points to this PE's heap mapping, which lives as long as the process (see
// `transport`); the handlers write into it only by copies within `total` (checked), like any
// remote put. Everything else is atomics or behind the mutex.
unsafe impl Sync for State {}
// SAFETY: as for Sync; nothing is tied to the creating thread.
unsafe impl Send for State {}

pub(super) fn state() -> &'static State {
    match STATE.get() {
        Some(s) => s,
        None => unreachable!("strided transfers before start-up registered their handlers"),
    }
}

impl State {
    pub(super) fn regions(&self) -> Regions {
        [self.team, (self.base, self.total), self.data]
    }
}
