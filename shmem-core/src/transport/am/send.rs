//! What the initiating PE sends: strided puts packed in runs, puts with signal and flags, and
//! strided gets (requests in runs, at most [`GET_WINDOW`] in flight, then a wait for every
//! element); and the counted send that every acknowledged message goes through, with its window
//! of unacknowledged units and its asks.

use super::get::GetSlot;
use super::ledger::{ASK_EVERY, MAX_UNACKED, lock, units};
use super::quiet::ask;
use super::state::{State, state};
use super::wire::{
    AM_FLAG, AM_GET_REQ, AM_PUT, AM_SIGNAL, MAX_MSG, PUT_WORDS, REQ_WORDS, Run, SIGNAL_WORDS, fits,
    message, send_failed,
};
use crate::mem::word::SignalKind;
use crate::transport::progress::Progress;
use shmem_ucx::{AmFlags, Endpoint};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most get requests of one strided get in flight.
const GET_WINDOW: usize = 8;

/// Strided put to `pe` (reached through `ep`): packs the elements into messages and sends them;
/// returns once every source element is copied (the data is at `pe` after the next quiet).
///
/// # Safety
/// Every `(offset, local)` pair is `size` readable bytes at `local` and `size` bytes at
/// `offset` inside the symmetric heap.
pub(crate) unsafe fn put(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
    elems: impl Iterator<Item = (usize, *const u8)>,
    size: usize,
) -> shmem_ucx::Result<()> {
    debug_assert!(fits(size), "am::put with {size}-byte elements");
    let st = state();
    after_fence(st, ep, pe)?;
    let per_msg = (MAX_MSG / size).max(1);
    let mut run: Option<(Run, Vec<u8>)> = None;
    let mut elems = elems.peekable();
    while let Some((off, src)) = elems.next() {
        if let Some((r, msg)) = run.as_mut()
            && r.takes(off, per_msg)
        {
            r.push(off);
            // SAFETY: `src` is `size` readable bytes (caller's contract).
            msg.extend_from_slice(unsafe { std::slice::from_raw_parts(src, size) });
            continue;
        }
        if let Some(done) = run.take() {
            send_put(progress, st, ep, pe, size, done)?;
        }
        // Room for this run's elements: as many as are left, up to a message's worth (a single
        // put takes what it needs, not a 64 KiB buffer).
        let left = 1 + elems.size_hint().1.unwrap_or(per_msg);
        let mut msg = message(&[0; PUT_WORDS], left.min(per_msg) * size);
        // SAFETY: as above.
        msg.extend_from_slice(unsafe { std::slice::from_raw_parts(src, size) });
        run = Some((
            Run {
                offset: off,
                stride: None,
                count: 1,
            },
            msg,
        ));
    }
    if let Some(done) = run {
        send_put(progress, st, ep, pe, size, done)?;
    }
    Ok(())
}

/// Plain puts to `pe` before a fence must land before a message sent after it: flushes `ep`
/// once per fence and PE, unless it has one ordered lane.
fn after_fence(st: &State, ep: &Endpoint, pe: usize) -> shmem_ucx::Result<()> {
    if ep.one_ordered_lane() {
        // Everything before the fence is handled before this message anyway.
        return Ok(());
    }
    let epoch = st.fence_epoch.load(Ordering::Acquire);
    let c = st.ledger.at(pe);
    if c.fenced.load(Ordering::Relaxed) < epoch {
        ep.flush()?;
        c.fenced.fetch_max(epoch, Ordering::Relaxed);
    }
    Ok(())
}

/// Puts `parts` (back to back, at most [`MAX_MSG`] bytes in all, possibly none) at heap offset
/// `offset` of `pe` (reached through `ep`) and then updates the 8-byte word at heap offset
/// `signal` there as `kind` says, in one message (see the module docs); returns once the bytes
/// are copied into it. Both are in place at the target after the next quiet, except for a
/// `Max` (a collective's flag), which the target does not acknowledge.
pub(crate) fn put_signal(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
    (offset, parts): (usize, &[&[u8]]),
    (signal, kind, value): (usize, SignalKind, u64),
) -> shmem_ucx::Result<()> {
    let st = state();
    after_fence(st, ep, pe)?;
    let len: usize = parts.iter().map(|p| p.len()).sum();
    debug_assert!(len <= MAX_MSG, "am::put_signal of {len} bytes");
    let mut msg = message(
        &[
            st.my_pe as u64,
            offset as u64,
            len as u64,
            signal as u64,
            kind as u64,
            value,
        ],
        len,
    );
    for p in parts {
        msg.extend_from_slice(p);
    }
    if kind == SignalKind::Max {
        return ep.am_send(AM_FLAG, msg, SIGNAL_WORDS * 8, AmFlags::EAGER, send_failed);
    }
    send_counted(progress, st, ep, pe, AM_SIGNAL, msg, SIGNAL_WORDS * 8)
}

/// Sends one packed run of a strided put, counting it as unacknowledged.
fn send_put(
    progress: &Progress,
    st: &State,
    ep: &Endpoint,
    pe: usize,
    size: usize,
    (run, mut msg): (Run, Vec<u8>),
) -> shmem_ucx::Result<()> {
    let head = [
        st.my_pe as u64,
        size as u64,
        run.count as u64,
        run.offset as u64,
        run.stride.unwrap_or(0) as u64,
    ];
    for (i, w) in head.iter().enumerate() {
        msg[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    send_counted(progress, st, ep, pe, AM_PUT, msg, PUT_WORDS * 8)
}

/// Sends message `id` to `pe`, counted as unacknowledged until the target's `ACK` (at most
/// [`MAX_UNACKED`] units in flight to one PE: asks and waits for acks beyond that; asks every
/// [`ASK_EVERY`] units).
pub(super) fn send_counted(
    progress: &Progress,
    st: &State,
    ep: &Endpoint,
    pe: usize,
    id: u16,
    msg: Vec<u8>,
    header_len: usize,
) -> shmem_ucx::Result<()> {
    let l = &st.ledger;
    l.note_lane(pe, ep);
    let data = msg.len() - header_len;
    let weight = units(data);
    if l.unacked(pe) + weight > MAX_UNACKED {
        ask(ep, pe)?;
        progress.wait(None, || l.unacked(pe) + weight <= MAX_UNACKED);
    }
    let eager = l.eager_ask(pe, data);
    // Counted before it can be acknowledged.
    let sent = l.count_sent(pe, weight);
    let (mut msg, mut header_len) = (msg, header_len);
    if eager {
        // The ask goes as one more header word: the count to acknowledge once handled.
        msg.splice(header_len..header_len, sent.to_le_bytes());
        header_len += 8;
        l.at(pe).asked.fetch_max(sent, Ordering::AcqRel);
    }
    let r = ep.am_send(
        id,
        msg,
        header_len,
        AmFlags::REPLY | AmFlags::EAGER,
        send_failed,
    );
    if r.is_err() {
        // Never sent: nothing will acknowledge it (the transfer fails, and with it the job).
        l.at(pe).sent.fetch_sub(weight, Ordering::AcqRel);
        l.outstanding.fetch_sub(weight, Ordering::AcqRel);
        return r;
    }
    // (Another thread's message may have asked beyond `sent` already.)
    if sent.saturating_sub(l.at(pe).asked.load(Ordering::Acquire)) >= ASK_EVERY {
        ask(ep, pe)?;
    }
    Ok(())
}

/// Strided get from `pe` (reached through `ep`): requests the elements in runs and waits until
/// every one has been written to its destination.
///
/// # Safety
/// Every `(offset, local)` pair is `size` writable bytes at `local`, which nothing else
/// accesses until this returns, and `size` bytes at `offset` inside the symmetric heap.
pub(crate) unsafe fn get(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
    elems: impl Iterator<Item = (usize, *mut u8)>,
    size: usize,
) -> shmem_ucx::Result<()> {
    debug_assert!(fits(size), "am::get with {size}-byte elements");
    let st = state();
    let (offsets, dst): (Vec<usize>, Vec<*mut u8>) = elems.unzip();
    let total = dst.len();
    if total == 0 {
        return Ok(());
    }
    let token = st.next_token.fetch_add(1, Ordering::Relaxed);
    let slot = Arc::new(GetSlot {
        from_pe: pe,
        size,
        dst: dst.into_boxed_slice(),
        claimed: AtomicUsize::new(0),
        received: AtomicUsize::new(0),
    });
    // Removes the slot however this ends, and waits for a response that is being written.
    struct Unregister<'a>(&'a State, u64, &'a GetSlot);
    impl Drop for Unregister<'_> {
        fn drop(&mut self) {
            let gone = lock(&self.0.gets).remove(&self.1);
            drop(gone);
            // No response claims elements any more; let a claimed one finish writing.
            while self.2.received.load(Ordering::Acquire) != self.2.claimed.load(Ordering::Acquire)
            {
                std::thread::yield_now();
            }
        }
    }
    lock(&st.gets).insert(token, Arc::clone(&slot));
    let _unregister = Unregister(st, token, &slot);

    let per_msg = (MAX_MSG / size).max(1);
    let window = GET_WINDOW * per_msg;
    let mut first = 0;
    while first < total {
        let mut run = Run {
            offset: offsets[first],
            stride: None,
            count: 1,
        };
        while first + run.count < total && run.takes(offsets[first + run.count], per_msg) {
            run.push(offsets[first + run.count]);
        }
        let issued = first + run.count;
        if issued - slot.received.load(Ordering::Acquire) > window {
            progress.wait(None, || {
                issued - slot.received.load(Ordering::Acquire) <= window
            });
        }
        let req = message(
            &[
                st.my_pe as u64,
                size as u64,
                run.count as u64,
                run.offset as u64,
                run.stride.unwrap_or(0) as u64,
                token,
                first as u64,
            ],
            0,
        );
        ep.am_send(
            AM_GET_REQ,
            req,
            REQ_WORDS * 8,
            AmFlags::REPLY | AmFlags::EAGER,
            send_failed,
        )?;
        first = issued;
    }
    progress.wait(None, || slot.received.load(Ordering::Acquire) == total);
    Ok(())
}
