//! Non-blocking gets in runs. Where UCX emulates RMA (tcp), each `get_nbi` it carries is a
//! request message and a response message, a system call or two on both sides for each: a
//! window of 64 small non-blocking gets costs 64 round trips' worth of system calls however
//! small the gets are. So a small non-blocking get from a PE of the main worker whose endpoint
//! carries everything on one ordered lane joins that PE's *run* instead: gets of one size
//! whose heap offsets step by one stride (consecutive pieces of an array, a column of a
//! matrix), each with a destination of its own wherever it lies. A run travels as one
//! `GET_REQ` (a strided get of up to [`MAX_MSG`] bytes and [`RUN_MAX_GETS`] gets) and its
//! `GET_RESP`, checked and scattered as a strided get's are ([`GetSlot`]).
//!
//! A run goes when the next get from its PE does not continue it, when it is full, before any
//! other operation on its PE (so that the target handles it where the gets were issued), at
//! this PE's next wait or round of progress and when the progress thread looks (like the
//! batches of puts), and at `quiet` and `pe_quiet`, which then wait until every run's elements
//! are written. At most [`PENDING_MAX`] runs are pending (a get that would begin another goes
//! at once) and at most [`IN_FLIGHT_MAX`] bytes of runs (responses and destination pointers)
//! are in flight: a get beyond that waits for them first. `SHMEM_COALESCE=off` turns runs off with the batches.

use super::get::{GetSlot, InFlight, Pending, RunSet};
use super::ledger::{lock, lock_or_skip};
use super::state::{STATE, State, state};
use super::wire::{AM_GET_REQ, MAX_MSG, REQ_WORDS, Run, message, send_failed};
use crate::transport::progress::{self, Progress};
use shmem_ucx::{AmFlags, Endpoint};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest non-blocking get that joins a run, as the largest put that waits in a batch
/// (`COALESCE_MAX`): up to a few KiB a message costs about the same whatever its size. Runs of
/// 32 KiB gets (two per message) moved 0.58 of oshmem's gets per second, UCX's gets 0.89.
pub(crate) const RUN_GET_MAX: usize = 8 << 10;

/// Most gets in one run: with a destination pointer each, a pending run to each of many PEs
/// holds at most 8 KiB of them.
const RUN_MAX_GETS: usize = 1024;

/// Most runs pending at once (one per PE): a get that would begin another goes at once, as a
/// run of its own. Bounds what gets to many PEs in turn hold (and the search for a PE's run).
const PENDING_MAX: usize = 64;

/// Most bytes of runs in flight (sent, not yet completed by a quiet), counting each get's
/// response bytes and its destination pointer: what a stream of non-blocking gets without a
/// quiet can make its target send and this PE hold.
const IN_FLIGHT_MAX: usize = 4 << 20;

/// The bytes a run of `count` gets of `size` bytes counts against [`IN_FLIGHT_MAX`].
fn weight(size: usize, count: usize) -> usize {
    count * (size + size_of::<*mut u8>())
}

/// Lets small non-blocking gets join runs (`on`) or not.
pub(crate) fn set_runs(on: bool) {
    if let Some(s) = STATE.get() {
        s.runs_on.store(on, Ordering::Release);
    }
}

/// Whether a non-blocking get of `len` bytes joins a run (the caller checked that its PE is
/// one of the main worker's and that its endpoint has one ordered lane).
#[inline]
pub(crate) fn runs_take(len: usize) -> bool {
    len <= RUN_GET_MAX
        && STATE
            .get()
            .is_some_and(|s| s.runs_on.load(Ordering::Relaxed))
}

/// Whether some run waits to be sent (one load).
#[inline(always)]
pub(crate) fn runs_pending() -> bool {
    STATE
        .get()
        .is_some_and(|s| s.runs_pending.load(Ordering::Acquire))
}

/// Whether some run waits to be sent or is in flight (one load).
#[inline(always)]
pub(crate) fn runs_active() -> bool {
    STATE
        .get()
        .is_some_and(|s| s.runs_active.load(Ordering::Acquire))
}

/// Publishes `set`'s state after a change (its lock held).
fn publish(st: &State, set: &RunSet) {
    let pending = !set.pending.is_empty();
    st.runs_pending.store(pending, Ordering::Release);
    st.runs_active
        .store(pending || !set.in_flight.is_empty(), Ordering::Release);
    // Waits and the progress thread send what waits (the batches' flag covers both).
    progress::set_batched(pending || st.puts_wait.load(Ordering::Acquire));
}

/// Adds a non-blocking get of `len` bytes from heap offset `offset` of `pe` (reached through
/// `ep`) into `dst` to `pe`'s run, sending the run it ends or fills.
///
/// # Safety
/// `dst` is `len` writable bytes that stay valid, and that nothing else accesses, until the
/// next quiet (or `pe_quiet` of `pe`); `offset + len` lies inside the symmetric heap.
pub(crate) unsafe fn get_nbi(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
    offset: usize,
    dst: *mut u8,
    len: usize,
) -> shmem_ucx::Result<()> {
    debug_assert!((1..=RUN_GET_MAX).contains(&len), "a run of {len}-byte gets");
    let st = state();
    let per_msg = (MAX_MSG / len).clamp(1, RUN_MAX_GETS);
    let mut set = lock(&st.runs);
    let mut joined = false;
    if let Some(i) = set.pending.iter().position(|(p, _)| *p == pe) {
        let p = &mut set.pending[i].1;
        if p.size == len && p.run.takes(offset, per_msg) {
            p.run.push(offset);
            p.dst.push(dst);
            joined = true;
        }
        if !joined || p.run.count >= per_msg {
            let (_, done) = set.pending.swap_remove(i);
            send(st, &mut set, ep, pe, done)?;
        }
    }
    if !joined {
        let run = Run {
            offset,
            stride: None,
            count: 1,
        };
        let p = Pending {
            size: len,
            run,
            dst: vec![dst],
        };
        if per_msg == 1 || set.pending.len() >= PENDING_MAX {
            send(st, &mut set, ep, pe, p)?;
        } else {
            set.pending.push((pe, p));
        }
    }
    publish(st, &set);
    let over = set.bytes > IN_FLIGHT_MAX;
    drop(set);
    if over {
        wait_landed(progress, None);
    }
    Ok(())
}

/// Sends run `p` to `pe` through `ep`: registers its slot (the responses' check), then the
/// request; it is in flight until a quiet completes it.
fn send(
    st: &State,
    set: &mut RunSet,
    ep: &Endpoint,
    pe: usize,
    p: Pending,
) -> shmem_ucx::Result<()> {
    let token = st.next_token.fetch_add(1, Ordering::Relaxed);
    let (size, count) = (p.size, p.run.count);
    let slot = Arc::new(GetSlot {
        from_pe: pe,
        size,
        dst: p.dst.into_boxed_slice(),
        claimed: AtomicUsize::new(0),
        received: AtomicUsize::new(0),
    });
    lock(&st.gets).insert(token, Arc::clone(&slot));
    let req = message(
        &[
            st.my_pe as u64,
            size as u64,
            count as u64,
            p.run.offset as u64,
            p.run.stride.unwrap_or(0) as u64,
            token,
            0,
        ],
        0,
    );
    let sent = ep.am_send(
        AM_GET_REQ,
        req,
        REQ_WORDS * 8,
        AmFlags::REPLY | AmFlags::EAGER,
        send_failed,
    );
    if let Err(e) = sent {
        // Never sent: nothing will answer it (the transfer fails, and with it the job).
        lock(&st.gets).remove(&token);
        return Err(e);
    }
    set.bytes += weight(size, count);
    set.in_flight.push(InFlight { token, pe, slot });
    Ok(())
}

/// The runs, locked: take the pending ones with [`Runs::take`] and send each with
/// [`Runs::send`] before dropping this. `None` when `try_only` and another thread holds them.
pub(crate) fn runs(try_only: bool) -> Option<Runs> {
    lock_or_skip(&STATE.get()?.runs, try_only).map(Runs)
}

/// The locked runs (see [`runs`]). Their state is published when this is dropped, after the
/// runs taken were sent: until then the flags still say that runs wait, so that a quiet on
/// another thread (the progress thread sends runs too) locks them, and so waits for these
/// sends and then for their landing, instead of finding nothing pending or in flight and
/// returning before the data is written.
pub(crate) struct Runs(std::sync::MutexGuard<'static, RunSet>);

impl Runs {
    /// Takes the pending runs to `pe` (all with `None`): (PE, run).
    pub(crate) fn take(&mut self, pe: Option<usize>) -> Vec<(usize, Pending)> {
        let (taken, kept) = std::mem::take(&mut self.0.pending)
            .into_iter()
            .partition(|(p, _)| pe.is_none_or(|want| *p == want));
        self.0.pending = kept;
        taken
    }

    /// Sends a run taken from [`take`](Self::take) to `pe` through `ep`.
    pub(crate) fn send(&mut self, ep: &Endpoint, pe: usize, p: Pending) -> shmem_ucx::Result<()> {
        send(state(), &mut self.0, ep, pe, p)
    }
}

impl Drop for Runs {
    fn drop(&mut self) {
        publish(state(), &self.0);
    }
}

/// Waits until every run in flight to `pe` (to any PE with `None`) has its elements written,
/// then forgets every run that is complete. Runs still pending are not waited for: send them
/// first.
#[track_caller]
pub(crate) fn wait_landed(progress: &Progress, pe: Option<usize>) {
    let Some(st) = STATE.get() else {
        return;
    };
    let awaited: Vec<Arc<GetSlot>> = lock(&st.runs)
        .in_flight
        .iter()
        .filter(|f| pe.is_none_or(|want| f.pe == want))
        .map(|f| Arc::clone(&f.slot))
        .collect();
    if awaited.iter().any(|s| !s.landed()) {
        progress.wait(None, || awaited.iter().all(|s| s.landed()));
    }
    let mut set = lock(&st.runs);
    let mut freed = 0;
    let mut gets = lock(&st.gets);
    set.in_flight.retain(|f| {
        let done = f.slot.landed();
        if done {
            gets.remove(&f.token);
            freed += weight(f.slot.size, f.slot.dst.len());
        }
        !done
    });
    drop(gets);
    set.bytes -= freed;
    publish(st, &set);
}
