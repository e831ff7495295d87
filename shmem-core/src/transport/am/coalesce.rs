//! Coalescing: when a small put to a PE waits in that PE's batch instead of going at once
//! ([`coalesces`]), and when the batches go (full, before another operation on the PE, at a
//! wait, progress, quiet or barrier, or when the progress thread looks), each as one `BATCH`
//! message counted as a put.

use super::batch::{BatchSet, COALESCE_MAX, HEADER_ROOM};
use super::ledger::{ORDERED, lock, lock_or_skip};
use super::send::send_counted;
use super::state::{STATE, State, state};
use super::wire::AM_BATCH;
use crate::transport::progress::{self, Progress};
use shmem_ucx::Endpoint;
use std::sync::atomic::Ordering;

/// Lets small puts in a stream wait in batches (`on`) or not: only where a progress thread
/// serves this PE while it computes, which sends what waits (see [`coalesces`]).
pub(crate) fn set_coalescing(on: bool) {
    if let Some(s) = STATE.get() {
        s.coalescing.store(on, Ordering::Release);
    }
}

/// Whether a put of `len` bytes to `pe` waits in `pe`'s batch instead of going at once: a put
/// of at most [`COALESCE_MAX`] bytes, to a PE whose endpoint has one ordered lane, in a stream
/// (the PE's messages no longer ask for their own acks: more than `EAGER_UNTIL` since the
/// last quiet), with coalescing on and fewer than `BATCHED_MAX` bytes waiting in all
/// batches; the caller also sends the first put after a wait at once. A batch goes out as one
/// `BATCH` message when it holds `BATCH_BYTES`, before any other operation on the PE, at
/// this PE's next wait, progress, quiet or barrier, and otherwise when the progress thread next
/// looks (while the PE computes).
/// Over an emulated transport each message is a system call or two on both sides: a put +
/// fence stream then costs a copy per put instead.
pub(crate) fn coalesces(pe: usize, len: usize) -> bool {
    let Some(st) = STATE.get() else {
        return false;
    };
    len <= COALESCE_MAX
        && st.coalescing.load(Ordering::Relaxed)
        && !st.batches_full.load(Ordering::Relaxed)
        && st.ledger.get(pe).is_some_and(|c| {
            c.ordered.load(Ordering::Relaxed) == ORDERED && !c.eager.load(Ordering::Relaxed)
        })
}

/// Whether some put waits in a batch (one load).
#[inline(always)]
pub(crate) fn puts_wait() -> bool {
    STATE
        .get()
        .is_some_and(|s| s.puts_wait.load(Ordering::Acquire))
}

/// Publishes `set`'s state after a change (its lock held): whether any batch waits (for the
/// progress thread) and whether another put may wait (for [`coalesces`], without the lock).
fn publish(st: &State, set: &BatchSet) {
    st.batches_full.store(!set.has_room(), Ordering::Relaxed);
    let puts = !set.by_pe.is_empty();
    st.puts_wait.store(puts, Ordering::Release);
    // The flag also covers the runs of non-blocking gets (`runs`).
    progress::set_batched(puts || st.runs_pending.load(Ordering::Acquire));
}

/// Appends a put of `len` bytes from `src` to heap offset `offset` of `pe` to `pe`'s batch
/// (the caller checked [`coalesces`]), and sends the batch through `ep` once it is full. The
/// source is copied before this returns.
///
/// # Safety
/// `src` is `len` readable bytes.
pub(crate) unsafe fn put_batched(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
    offset: usize,
    src: *const u8,
    len: usize,
) -> shmem_ucx::Result<()> {
    let st = state();
    let mut set = lock(&st.batches);
    // SAFETY: `len` readable bytes (caller's contract).
    let full = set.append(pe, offset, unsafe { std::slice::from_raw_parts(src, len) });
    st.ledger.at(pe).since_quiet.fetch_add(1, Ordering::Relaxed);
    let Some(recs) = full else {
        publish(st, &set);
        return Ok(());
    };
    // Sent while the lock is held: no batch to `pe` can overtake it; published after (see
    // `send_batch_of`).
    let sent = send_batch(progress, st, ep, pe, recs);
    publish(st, &set);
    sent
}

/// Sends `pe`'s batch, if it has one, through `ep`.
pub(crate) fn send_batch_of(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
) -> shmem_ucx::Result<()> {
    let st = state();
    let mut set = lock(&st.batches);
    let Some(recs) = set.remove(pe) else {
        return Ok(());
    };
    // Published once the batch is sent: until then the flags say that puts wait, so that an
    // operation on `pe` from another thread (the progress thread sends batches too) locks
    // them, and so waits for this send, instead of going first.
    let sent = send_batch(progress, st, ep, pe, recs);
    publish(st, &set);
    sent
}

/// The batches waiting to go, locked: take them with [`Batches::take`] and send each with
/// [`send_taken`] before dropping this. `None` when `try_only` and another thread holds them
/// (it is sending them, or this thread is, further up).
pub(crate) fn batches(try_only: bool) -> Option<Batches> {
    lock_or_skip(&STATE.get()?.batches, try_only).map(Batches)
}

/// The locked batches (see [`batches`]). Their state is published when this is dropped,
/// after the batches taken were sent: until then the flags still say that puts wait, so that
/// an operation on their PEs from another thread locks them (and so waits for the sends)
/// instead of overtaking them. (Seen: a put of 8,193 B, which does not wait in a batch,
/// landed before the put of 8,192 B just before it, which the progress thread was sending.)
pub(crate) struct Batches(std::sync::MutexGuard<'static, BatchSet>);

impl Batches {
    /// Takes every batch: (PE, records).
    pub(crate) fn take(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.0.drain()
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        publish(state(), &self.0);
    }
}

/// Sends records taken from [`Batches::take`] to `pe` through `ep`, while the [`Batches`] they
/// came from is held.
pub(crate) fn send_taken(
    progress: &Progress,
    _held: &Batches,
    ep: &Endpoint,
    pe: usize,
    recs: Vec<u8>,
) -> shmem_ucx::Result<()> {
    send_batch(progress, state(), ep, pe, recs)
}

fn send_batch(
    progress: &Progress,
    st: &State,
    ep: &Endpoint,
    pe: usize,
    mut msg: Vec<u8>,
) -> shmem_ucx::Result<()> {
    // The batch left room for the header (`BatchSet`): the message is the batch itself.
    msg[..HEADER_ROOM].copy_from_slice(&(st.my_pe as u64).to_le_bytes());
    send_counted(progress, st, ep, pe, AM_BATCH, msg, HEADER_ROOM)
}
