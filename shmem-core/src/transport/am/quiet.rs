//! What `quiet`, `pe_quiet` and `fence` ask of the protocol: whether the counted messages sent
//! are acknowledged, asks for acknowledgements (`SYNC`), the PEs sent messages since the last
//! quiet, whether PEs are reached through one ordered lane, and fence epochs.

use super::ledger::ORDERED;
use super::state::STATE;
use super::wire::{AM_SYNC, SYNC_WORDS, message, send_failed};
use shmem_ucx::{AmFlags, Endpoint};
use std::sync::atomic::Ordering;

/// True when every counted message (put, put with signal) has been acknowledged.
#[inline]
pub(crate) fn all_acked() -> bool {
    STATE
        .get()
        .is_none_or(|s| s.ledger.outstanding.load(Ordering::Acquire) == 0)
}

/// True when `pe` has acknowledged the first `count` units this PE sent it.
pub(crate) fn acked_to(pe: usize, count: u64) -> bool {
    STATE.get().is_none_or(|s| {
        s.ledger
            .get(pe)
            .map_or(0, |c| c.acked.load(Ordering::Acquire))
            >= count
    })
}

/// Asks `pe` (reached through `ep`) to acknowledge every message sent to it so far, unless
/// that was asked already, and returns their count in units: wait for [`acked_to`] it.
pub(crate) fn ask(ep: &Endpoint, pe: usize) -> shmem_ucx::Result<u64> {
    let Some(st) = STATE.get() else {
        return Ok(0);
    };
    let Some(c) = st.ledger.get(pe) else {
        // Nothing was sent to it.
        return Ok(0);
    };
    let sent = c.sent.load(Ordering::Acquire);
    if c.acked.load(Ordering::Acquire) >= sent || c.asked.fetch_max(sent, Ordering::AcqRel) >= sent
    {
        return Ok(sent);
    }
    let msg = message(&[st.my_pe as u64, sent], 0);
    ep.am_send(
        AM_SYNC,
        msg,
        SYNC_WORDS * 8,
        AmFlags::REPLY | AmFlags::EAGER,
        send_failed,
    )?;
    Ok(sent)
}

/// A quiet (or `pe_quiet`) completes the messages sent to `pe`: notes how many went since the
/// last, which decides whether the next ask for their acks themselves.
pub(crate) fn note_quiet(pe: usize) {
    if let Some(s) = STATE.get() {
        s.ledger.note_quiet(pe);
    }
}

/// Takes the PEs sent counted messages since they were last taken (each at most once); a PE
/// sent more from here on is listed again.
pub(crate) fn take_listed() -> Vec<usize> {
    STATE
        .get()
        .map_or_else(Vec::new, |s| s.ledger.take_listed())
}

/// Lists `pe` again (a fence that did not need its acknowledgement leaves it to the next
/// quiet).
pub(crate) fn relist(pe: usize) {
    if let Some(s) = STATE.get() {
        s.ledger.list(pe);
    }
}

/// Whether every PE sent counted messages so far is reached through one ordered lane (see
/// [`ordered`]): a fence then has nothing to wait for.
pub(crate) fn all_ordered() -> bool {
    STATE
        .get()
        .is_none_or(|s| !s.ledger.any_unordered.load(Ordering::Acquire))
}

/// Whether messages to `pe` are handled there in the order they were sent, UCX's own
/// operations included (its endpoint has one ordered lane): a fence need not wait for them.
pub(crate) fn ordered(pe: usize) -> bool {
    STATE.get().is_some_and(|s| {
        s.ledger
            .get(pe)
            .is_some_and(|c| c.ordered.load(Ordering::Relaxed) == ORDERED)
    })
}

/// Notes a fence: the next strided put to each PE flushes the endpoint first.
pub(crate) fn note_fence() {
    if let Some(s) = STATE.get() {
        s.fence_epoch.fetch_add(1, Ordering::AcqRel);
    }
}
