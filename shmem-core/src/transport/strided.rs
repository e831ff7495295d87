//! Strided puts and gets to PEs reached through UCX, packed into active messages: one message
//! per up to [`MAX_MSG`] bytes of elements instead of one UCX operation per element.
//!
//! # Protocol
//! - **Put.** The sender packs the elements after a header `PUT [from, size, count, offset,
//!   stride]` and sends them; the target checks the header against its heap and the data's
//!   length, scatters the elements into its heap, and answers `ACK [from, 1]`. The sender counts
//!   the puts each PE has not acknowledged yet: `quiet` (and `barrier_all`, which starts with
//!   one), `pe_quiet` and `fence` wait until the count is zero, so the data is in place at the
//!   target when they return. A UCX flush alone would not say so: it completes when the message
//!   has left, not when the target's handler has run. The source is copied into the message, so
//!   it may be reused at once. At most [`MAX_UNACKED`] messages to one PE are in flight; a longer
//!   put waits for acks.
//! - **Fence.** `fence` waits for every outstanding ack (strided puts before it are in place
//!   before anything after it is sent) and bumps an epoch; the first strided put to a PE after a
//!   fence flushes the endpoint first, so plain puts before the fence land before it too (UCX's
//!   fence orders only one lane, and active messages may take another than RMA).
//! - **Get.** The requester registers a slot (a token and the destination of every element) and
//!   sends `GET_REQ [from, size, count, offset, stride, token, first]` for runs of at most
//!   [`MAX_MSG`] bytes, at most [`GET_WINDOW`] at a time; the target checks the request against
//!   its heap and answers on the reply endpoint with `GET_RESP [from, size, count, token, first]`
//!   and the packed elements; the requester's handler checks the response against the slot and
//!   scatters it. The blocking get returns when every element has arrived.
//!
//! - **Put with signal.** `SIGNAL [from, offset, len, signal, kind, value]` and `len` data
//!   bytes: the target checks both ranges against its heap, copies the data to `offset`, then
//!   updates the 8-byte word at `signal` (set, add, or raise to at least `value`) with release
//!   ordering, and acknowledges as for a put. One message instead of a put, a flush (a round
//!   trip) and an atomic: `put_signal` to PEs reached through UCX travels this way.
//! - **Flag.** The same message as `FLAG`, which the target does not acknowledge: the
//!   collectives' flags and mailbox messages, whose own protocol says when a slot may be
//!   written again, and which must not cost their receiver a reply on its critical path.
//!   They raise their word (`max`), which keeps it monotonic even if two messages to it were
//!   delivered out of order.
//!
//! Every header field is a little-endian `u64`. A message that fails a check (wrong length,
//! outside the heap, unknown token, an ack nobody waits for) ends this PE with a message naming
//! the PE the message says it came from: a broken or hostile peer cannot make this PE write
//! outside its heap or a destination buffer.
//!
//! # Threads
//! The handlers run inside `ucp_worker_progress` of the main worker, on whichever thread
//! progresses it (the progress thread too). They take only the lock of the slot table, which no
//! thread holds while it progresses UCX, and never wait. Contexts have their own workers with
//! no handler: their `iput`/`iget` take the per-element path.
//!
//! Part of the transport layer; uses `progress` (to wait) and `mem` (the offset space's layout and
//! the signal word update).

use crate::error::Result;
use crate::mem::dataseg::DATA_OFFSET;
use crate::mem::word::SignalKind;
use crate::transport::progress::Progress;
use shmem_ucx::{AmFlags, AmHandler, AmMessage, Endpoint, Worker};
use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most data bytes in one message (a bound on what a request can make a target send, too).
pub(crate) const MAX_MSG: usize = 64 << 10;
/// Most unacknowledged strided put messages to one PE.
const MAX_UNACKED: u64 = 64;
/// Most get requests of one strided get in flight.
const GET_WINDOW: usize = 8;

/// Active message ids (one worker, so any distinct small numbers do).
const AM_PUT: u16 = 0x51;
const AM_ACK: u16 = 0x52;
const AM_GET_REQ: u16 = 0x53;
const AM_GET_RESP: u16 = 0x54;
const AM_SIGNAL: u16 = 0x55;
const AM_FLAG: u16 = 0x56;

/// Header lengths, in words.
const PUT_WORDS: usize = 5;
const ACK_WORDS: usize = 2;
const REQ_WORDS: usize = 7;
const RESP_WORDS: usize = 5;
const SIGNAL_WORDS: usize = 6;

/// The process's strided-transfer state, set once at start-up before any handler can run.
static STATE: OnceLock<State> = OnceLock::new();

struct State {
    my_pe: usize,
    /// This PE's heap base and length: every incoming write is checked against them.
    base: *mut u8,
    total: usize,
    /// This PE's data segment (C programs), at offset `DATA_OFFSET`, and its length.
    data: (*mut u8, usize),
    /// This PE's team segment, at offsets `0..len` (below the heap's own offsets).
    team: (*mut u8, usize),
    /// Strided put messages sent to each PE and not acknowledged yet.
    unacked: Box<[AtomicU64]>,
    /// Their sum, so that `quiet` looks at one word.
    outstanding: AtomicU64,
    /// Bumped by every fence.
    fence_epoch: AtomicU64,
    /// Per PE: the fence epoch up to which plain puts to it are known to be flushed.
    fenced: Box<[AtomicU64]>,
    /// Strided gets waiting for their data, by token.
    gets: Mutex<HashMap<u64, Arc<GetSlot>>>,
    next_token: AtomicU64,
}

// SAFETY: `base` points to this PE's heap mapping, which lives as long as the process (see
// `transport`); the handlers write into it only by copies within `total` (checked), like any
// remote put. Everything else is atomics or behind the mutex.
unsafe impl Sync for State {}
// SAFETY: as for Sync; nothing is tied to the creating thread.
unsafe impl Send for State {}

/// A strided get in progress: where each element goes, and how many have been claimed by a
/// response (under the table's lock) and written.
struct GetSlot {
    from_pe: usize,
    size: usize,
    dst: Box<[*mut u8]>,
    claimed: AtomicUsize,
    received: AtomicUsize,
}

// SAFETY: the destination pointers are elements of a buffer the requesting thread borrows
// uniquely until the slot is gone (see `get`); a response writes an element only after
// claiming it under the table's lock, and the requester reads the buffer only after seeing all
// claimed elements written (Acquire on `received`).
unsafe impl Send for GetSlot {}
// SAFETY: as for Send.
unsafe impl Sync for GetSlot {}

impl GetSlot {
    /// Whether a response from `from` of `count` elements of `size` bytes for elements
    /// `first..` with `data_len` data bytes matches this request; the element count if so.
    fn fits(&self, from: u64, size: u64, count: u64, first: u64, data_len: usize) -> Option<usize> {
        let (count, first) = (usize::try_from(count).ok()?, usize::try_from(first).ok()?);
        let ok = self.from_pe as u64 == from
            && self.size as u64 == size
            && count > 0
            && count.checked_mul(self.size) == Some(data_len)
            && first
                .checked_add(count)
                .is_some_and(|end| end <= self.dst.len());
        ok.then_some(count)
    }
}

fn state() -> &'static State {
    match STATE.get() {
        Some(s) => s,
        None => unreachable!("strided transfers before start-up registered their handlers"),
    }
}

/// Sets up the state and registers the handlers on the main worker: call once, before the
/// worker is progressed with peers connected.
pub(crate) fn register(
    worker: &Worker,
    my_pe: usize,
    n_pes: usize,
    (base, total): (*mut u8, usize),
    data: (*mut u8, usize),
    team: (*mut u8, usize),
) -> Result<()> {
    let zeros = || (0..n_pes).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
    let fresh = State {
        my_pe,
        base,
        total,
        data,
        team,
        unacked: zeros(),
        outstanding: AtomicU64::new(0),
        fence_epoch: AtomicU64::new(0),
        fenced: zeros(),
        gets: Mutex::new(HashMap::new()),
        next_token: AtomicU64::new(1),
    };
    if STATE.set(fresh).is_err() {
        unreachable!("the runtime starts once per process");
    }
    static PUT: PutHandler = PutHandler;
    static ACK: AckHandler = AckHandler;
    static REQ: GetReqHandler = GetReqHandler;
    static RESP: GetRespHandler = GetRespHandler;
    static SIGNAL: SignalHandler<true> = SignalHandler;
    static FLAG: SignalHandler<false> = SignalHandler;
    worker.set_am_handler(AM_SIGNAL, &SIGNAL)?;
    worker.set_am_handler(AM_FLAG, &FLAG)?;
    worker.set_am_handler(AM_PUT, &PUT)?;
    worker.set_am_handler(AM_ACK, &ACK)?;
    worker.set_am_handler(AM_GET_REQ, &REQ)?;
    worker.set_am_handler(AM_GET_RESP, &RESP)?;
    Ok(())
}

/// Whether elements of `size` bytes go packed in messages: at least one fits in a message
/// (and a zero-sized element needs no message at all).
#[inline]
pub(crate) fn fits(size: usize) -> bool {
    (1..=MAX_MSG).contains(&size)
}

/// True when every strided put has been acknowledged.
#[inline]
pub(crate) fn all_acked() -> bool {
    STATE
        .get()
        .is_none_or(|s| s.outstanding.load(Ordering::Acquire) == 0)
}

/// True when every strided put to `pe` has been acknowledged.
pub(crate) fn acked(pe: usize) -> bool {
    STATE.get().is_none_or(|s| {
        s.unacked
            .get(pe)
            .is_none_or(|c| c.load(Ordering::Acquire) == 0)
    })
}

/// Notes a fence: the next strided put to each PE flushes the endpoint first.
pub(crate) fn note_fence() {
    if let Some(s) = STATE.get() {
        s.fence_epoch.fetch_add(1, Ordering::AcqRel);
    }
}

/// Header words as bytes, followed by room for `data` bytes (filled by the caller).
fn message(words: &[u64], data: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(words.len() * 8 + data);
    for w in words {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

/// The header's words, if it has exactly `N`.
fn words<const N: usize>(h: &[u8]) -> Option<[u64; N]> {
    if h.len() != N * 8 {
        return None;
    }
    let mut out = [0u64; N];
    for (w, b) in out.iter_mut().zip(h.chunks_exact(8)) {
        *w = u64::from_le_bytes(b.try_into().ok()?);
    }
    Some(out)
}

/// A send that UCX failed after accepting it: the transfer cannot complete.
fn send_failed(e: shmem_ucx::Error) {
    crate::error::eprint_line(format_args!("shmem: a strided transfer failed in UCX: {e}"));
    std::process::abort();
}

/// A message that fails a check: end this PE, naming the sender.
#[cold]
#[inline(never)]
fn bad_message(st: &State, from: u64, what: std::fmt::Arguments<'_>) -> ! {
    crate::error::eprint_line(format_args!(
        "shmem: PE {} received a malformed strided-transfer message from PE {from}: {what}; \
         ending the job",
        st.my_pe
    ));
    std::process::abort();
}

/// Checks that `count` elements of `size` bytes at `offset`, `stride` bytes apart, lie inside
/// one of this PE's regions (team segment, heap or data segment); returns the address of
/// `offset` and `count * size`.
fn in_heap(
    st: &State,
    size: u64,
    count: u64,
    offset: u64,
    stride: u64,
) -> Option<(*mut u8, usize)> {
    in_regions(
        [st.team, (st.base, st.total), st.data],
        size,
        count,
        offset,
        stride,
    )
}

/// [`in_heap`] for a team segment, a heap and a data segment given as (base, length). Offsets
/// below the team segment's length name its bytes; the heap's own start at that length.
fn in_regions(
    [team, heap, data]: [(*mut u8, usize); 3],
    size: u64,
    count: u64,
    offset: u64,
    stride: u64,
) -> Option<(*mut u8, usize)> {
    let (size, count) = (usize::try_from(size).ok()?, usize::try_from(count).ok()?);
    let (offset, stride) = (usize::try_from(offset).ok()?, usize::try_from(stride).ok()?);
    if size == 0 || count == 0 {
        return None;
    }
    let ((base, total), offset) = match offset.checked_sub(DATA_OFFSET) {
        None if offset < team.1 => (team, offset),
        None => (heap, offset),
        Some(at) => (data, at),
    };
    let end = stride
        .checked_mul(count - 1)?
        .checked_add(offset)?
        .checked_add(size)?;
    (end <= total).then_some(())?;
    // offset < end <= total: inside the region that starts at `base`.
    Some((base.wrapping_add(offset), count.checked_mul(size)?))
}

/// A run of elements whose target offsets are evenly spaced: one message's worth.
struct Run {
    offset: usize,
    stride: Option<usize>,
    count: usize,
}

impl Run {
    /// Whether the element at `off` continues the run.
    fn takes(&self, off: usize, per_msg: usize) -> bool {
        if self.count >= per_msg || off < self.offset {
            return false;
        }
        match self.stride {
            None => true,
            Some(s) => Some(off) == s.checked_mul(self.count).map(|d| self.offset + d),
        }
    }

    fn push(&mut self, off: usize) {
        if self.stride.is_none() {
            self.stride = Some(off - self.offset);
        }
        self.count += 1;
    }
}

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
    debug_assert!(fits(size), "strided::put with {size}-byte elements");
    let st = state();
    after_fence(st, ep, pe)?;
    let per_msg = (MAX_MSG / size).max(1);
    let mut run: Option<(Run, Vec<u8>)> = None;
    for (off, src) in elems {
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
        let mut msg = message(&[0; PUT_WORDS], per_msg * size);
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
/// once per fence and PE.
fn after_fence(st: &State, ep: &Endpoint, pe: usize) -> shmem_ucx::Result<()> {
    let epoch = st.fence_epoch.load(Ordering::Acquire);
    if st.fenced[pe].load(Ordering::Relaxed) < epoch {
        ep.flush()?;
        st.fenced[pe].fetch_max(epoch, Ordering::Relaxed);
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
    debug_assert!(len <= MAX_MSG, "strided::put_signal of {len} bytes");
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
/// [`MAX_UNACKED`] in flight to one PE: waits for acks beyond that).
fn send_counted(
    progress: &Progress,
    st: &State,
    ep: &Endpoint,
    pe: usize,
    id: u16,
    msg: Vec<u8>,
    header_len: usize,
) -> shmem_ucx::Result<()> {
    let unacked = &st.unacked[pe];
    if unacked.load(Ordering::Acquire) >= MAX_UNACKED {
        progress.wait(None, || unacked.load(Ordering::Acquire) < MAX_UNACKED);
    }
    // Counted before it can be acknowledged.
    unacked.fetch_add(1, Ordering::AcqRel);
    st.outstanding.fetch_add(1, Ordering::AcqRel);
    let r = ep.am_send(
        id,
        msg,
        header_len,
        AmFlags::REPLY | AmFlags::EAGER,
        send_failed,
    );
    if r.is_err() {
        // Never sent: nothing will acknowledge it.
        unacked.fetch_sub(1, Ordering::AcqRel);
        st.outstanding.fetch_sub(1, Ordering::AcqRel);
    }
    r
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
    debug_assert!(fits(size), "strided::get with {size}-byte elements");
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The table stays consistent whatever panicked while holding it (single inserts/removes).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct PutHandler;
/// Handles `SIGNAL` (`ACK` true: acknowledged) and `FLAG` messages.
struct SignalHandler<const ACK: bool>;
struct AckHandler;
struct GetReqHandler;
struct GetRespHandler;

impl AmHandler for PutHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let Some([from, size, count, offset, stride]) = words::<PUT_WORDS>(msg.header()) else {
            bad_message(
                st,
                u64::MAX,
                format_args!("put header of {} bytes", msg.header().len()),
            );
        };
        let Some(data) = msg.data() else {
            bad_message(st, from, format_args!("put data not sent eagerly"));
        };
        let Some((at, bytes)) = in_heap(st, size, count, offset, stride) else {
            bad_message(
                st,
                from,
                format_args!(
                    "put of {count} x {size} bytes at heap offset {offset}, stride {stride}, \
                     outside this PE's heap of {} bytes",
                    st.total
                ),
            );
        };
        if bytes != data.len() {
            bad_message(
                st,
                from,
                format_args!("put of {count} x {size} bytes carries {} bytes", data.len()),
            );
        }
        let (size, stride) = (size as usize, stride as usize);
        for (k, elem) in data.chunks_exact(size).enumerate() {
            // SAFETY: k*stride + size lies inside the region `at` starts in (checked by
            // `in_heap`): this PE's heap or data segment; the source is the message.
            unsafe { ptr::copy_nonoverlapping(elem.as_ptr(), at.add(k * stride), size) };
        }
        let ack = message(&[st.my_pe as u64, 1], 0);
        if let Err(e) = msg.reply(AM_ACK, ack, ACK_WORDS * 8, AmFlags::NONE, send_failed) {
            send_failed(e);
        }
    }
}

impl<const ACK: bool> AmHandler for SignalHandler<ACK> {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let Some([from, offset, len, signal, kind, value]) = words::<SIGNAL_WORDS>(msg.header())
        else {
            bad_message(
                st,
                u64::MAX,
                format_args!("put-with-signal header of {} bytes", msg.header().len()),
            );
        };
        let Some(data) = msg.data() else {
            bad_message(
                st,
                from,
                format_args!("put-with-signal data not sent eagerly"),
            );
        };
        if len != data.len() as u64 {
            bad_message(
                st,
                from,
                format_args!("put with signal of {len} bytes carries {}", data.len()),
            );
        }
        let at = if data.is_empty() {
            None
        } else {
            let Some((at, _)) = in_heap(st, len, 1, offset, 0) else {
                bad_message(
                    st,
                    from,
                    format_args!(
                        "put with signal of {len} bytes at heap offset {offset}, outside this \
                         PE's heap of {} bytes",
                        st.total
                    ),
                );
            };
            Some(at)
        };
        let word = in_heap(st, 8, 1, signal, 0)
            .map(|(p, _)| p)
            .filter(|p| (*p as usize).is_multiple_of(8));
        let Some(word) = word else {
            bad_message(
                st,
                from,
                format_args!("signal word at heap offset {signal} is not a word of this PE's heap"),
            );
        };
        if let Some(at) = at {
            // SAFETY: `len` bytes at `at` lie in this PE's heap or data segment (checked by
            // `in_heap`); the source is the message.
            unsafe { ptr::copy_nonoverlapping(data.as_ptr(), at, data.len()) };
        }
        // SAFETY: an aligned word of the heap or data segment (checked above), which PEs
        // update only atomically (signal words and flags).
        let word = unsafe { AtomicU64::from_ptr(word.cast()) };
        match SignalKind::from_wire(kind) {
            Some(k) => k.apply(word, value),
            None => bad_message(st, from, format_args!("unknown signal operation {kind}")),
        }
        if ACK {
            let ack = message(&[st.my_pe as u64, 1], 0);
            if let Err(e) = msg.reply(AM_ACK, ack, ACK_WORDS * 8, AmFlags::NONE, send_failed) {
                send_failed(e);
            }
        }
    }
}

impl AmHandler for AckHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let Some([from, n]) = words::<ACK_WORDS>(msg.header()) else {
            bad_message(
                st,
                u64::MAX,
                format_args!("ack header of {} bytes", msg.header().len()),
            );
        };
        let counter = usize::try_from(from).ok().and_then(|pe| st.unacked.get(pe));
        let took = counter
            .map(|c| c.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(n)));
        if !matches!(took, Some(Ok(_))) {
            bad_message(
                st,
                from,
                format_args!(
                    "acknowledges {n} messages (strided puts, puts with signal) that were not sent to it"
                ),
            );
        }
        st.outstanding.fetch_sub(n, Ordering::AcqRel);
    }
}

impl AmHandler for GetReqHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let Some([from, size, count, offset, stride, token, first]) =
            words::<REQ_WORDS>(msg.header())
        else {
            bad_message(
                st,
                u64::MAX,
                format_args!("get request header of {} bytes", msg.header().len()),
            );
        };
        let found = in_heap(st, size, count, offset, stride);
        let Some((at, bytes)) = found.filter(|&(_, b)| b <= MAX_MSG.max(size as usize)) else {
            bad_message(
                st,
                from,
                format_args!(
                    "get of {count} x {size} bytes at heap offset {offset}, stride {stride}: \
                     outside this PE's heap of {} bytes or over {MAX_MSG} bytes",
                    st.total
                ),
            );
        };
        let mut resp = message(&[st.my_pe as u64, size, count, token, first], bytes);
        let (size, stride) = (size as usize, stride as usize);
        for k in 0..count as usize {
            // SAFETY: inside this PE's heap or data segment (checked by `in_heap`); a plain
            // read of bytes that others may write concurrently, as any get.
            let elem = unsafe { std::slice::from_raw_parts(at.add(k * stride), size) };
            resp.extend_from_slice(elem);
        }
        if let Err(e) = msg.reply(
            AM_GET_RESP,
            resp,
            RESP_WORDS * 8,
            AmFlags::EAGER,
            send_failed,
        ) {
            send_failed(e);
        }
    }
}

impl AmHandler for GetRespHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let Some([from, size, count, token, first]) = words::<RESP_WORDS>(msg.header()) else {
            bad_message(
                st,
                u64::MAX,
                format_args!("get response header of {} bytes", msg.header().len()),
            );
        };
        let Some(data) = msg.data() else {
            bad_message(st, from, format_args!("get response not sent eagerly"));
        };
        // Claim the elements under the table's lock, so that the requester, once it has removed
        // the slot, knows no other response will write into its buffer.
        let slot = {
            let gets = lock(&st.gets);
            let Some(slot) = gets.get(&token) else {
                drop(gets);
                bad_message(
                    st,
                    from,
                    format_args!("get response for unknown request {token}"),
                );
            };
            let claimed = slot
                .fits(from, size, count, first, data.len())
                .is_some_and(|n| {
                    slot.claimed
                        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                            c.checked_add(n).filter(|&e| e <= slot.dst.len())
                        })
                        .is_ok()
                });
            if !claimed {
                let want = (slot.from_pe, slot.size, slot.dst.len());
                drop(gets);
                bad_message(
                    st,
                    from,
                    format_args!(
                        "get response of {count} x {size} bytes ({} data bytes) for elements \
                         {first}.. of request {token}, which asked PE {} for {} x {} bytes",
                        data.len(),
                        want.0,
                        want.2,
                        want.1
                    ),
                );
            }
            Arc::clone(slot)
        };
        let first = first as usize;
        for (k, elem) in data.chunks_exact(slot.size).enumerate() {
            // SAFETY: element first + k < dst.len() (checked), a `size`-byte element of the
            // requester's buffer, which lives until the slot is unregistered; the claim above
            // makes the requester wait for this write before it returns.
            unsafe { ptr::copy_nonoverlapping(elem.as_ptr(), slot.dst[first + k], slot.size) };
        }
        slot.received.fetch_add(count as usize, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_bounds_are_checked_without_overflow() {
        let heap = 0x1000 as *mut u8;
        let in_heap = |total, size, count, offset, stride| {
            in_regions(
                [(ptr::null_mut(), 0), (heap, total), (ptr::null_mut(), 0)],
                size,
                count,
                offset,
                stride,
            )
            .map(|(at, bytes)| (at as usize - heap as usize, bytes))
        };
        assert_eq!(in_heap(100, 8, 3, 0, 16), Some((0, 24)));
        assert_eq!(in_heap(100, 8, 3, 8, 16), Some((8, 24)));
        assert_eq!(in_heap(40, 8, 3, 0, 16), Some((0, 24)));
        assert_eq!(in_heap(39, 8, 3, 0, 16), None);
        assert_eq!(in_heap(100, 0, 3, 0, 16), None);
        assert_eq!(in_heap(100, 8, 0, 0, 16), None);
        assert_eq!(in_heap(100, 8, 2, u64::MAX - 4, 1), None);
        assert_eq!(in_heap(100, 8, u64::MAX, 0, u64::MAX), None);
        assert_eq!(in_heap(100, u64::MAX, 1, 0, 0), None);
        assert_eq!(in_heap(usize::MAX, 1 << 40, 1 << 40, 0, 1 << 40), None);
    }

    #[test]
    fn data_segment_offsets_are_checked_against_the_segment() {
        let (heap, data) = (0x1000 as *mut u8, 0x9000 as *mut u8);
        let at = |size, count, offset: usize, stride| {
            in_regions(
                [(ptr::null_mut(), 0), (heap, 100), (data, 64)],
                size,
                count,
                offset as u64,
                stride,
            )
            .map(|(p, bytes)| (p as usize, bytes))
        };
        assert_eq!(at(8, 2, DATA_OFFSET + 8, 16), Some((0x9008, 16)));
        assert_eq!(at(8, 4, DATA_OFFSET, 16), Some((0x9000, 32)));
        assert_eq!(at(8, 4, DATA_OFFSET + 16, 16), None, "past the segment");
        assert_eq!(
            at(8, 1, DATA_OFFSET - 8, 0),
            None,
            "between heap and segment"
        );
        // A job without a data segment accepts no offset in it.
        assert_eq!(
            in_regions(
                [(ptr::null_mut(), 0), (heap, 100), (ptr::null_mut(), 0)],
                8,
                1,
                DATA_OFFSET as u64,
                0
            ),
            None
        );
    }

    #[test]
    fn team_segment_offsets_are_checked_against_the_segment() {
        // Offsets 0..32 name the team segment, 32.. the heap (whose first 32 bytes are unused).
        let (team, heap) = (0x5000 as *mut u8, 0x1000 as *mut u8);
        let at = |size, count, offset: usize, stride| {
            in_regions(
                [(team, 32), (heap, 100), (ptr::null_mut(), 0)],
                size,
                count,
                offset as u64,
                stride,
            )
            .map(|(p, bytes)| (p as usize, bytes))
        };
        assert_eq!(at(8, 1, 0, 0), Some((0x5000, 8)));
        assert_eq!(at(8, 2, 8, 16), Some((0x5008, 16)));
        assert_eq!(at(8, 4, 0, 8), Some((0x5000, 32)));
        assert_eq!(
            at(8, 1, 32, 0),
            Some((0x1020, 8)),
            "the heap's first offset"
        );
        assert_eq!(at(8, 2, 16, 16), None, "from the segment into the heap");
        assert_eq!(at(8, 1, 28, 0), None, "straddling the segment's end");
        assert_eq!(at(8, 1, 96, 0), None, "past the heap");
    }

    #[test]
    fn get_responses_must_match_their_request() {
        let slot = GetSlot {
            from_pe: 3,
            size: 8,
            dst: vec![ptr::null_mut(); 10].into_boxed_slice(),
            claimed: AtomicUsize::new(0),
            received: AtomicUsize::new(0),
        };
        assert_eq!(slot.fits(3, 8, 4, 6, 32), Some(4));
        assert_eq!(slot.fits(3, 8, 10, 0, 80), Some(10));
        assert_eq!(slot.fits(2, 8, 4, 6, 32), None, "another PE");
        assert_eq!(slot.fits(3, 4, 4, 6, 16), None, "another element size");
        assert_eq!(slot.fits(3, 8, 4, 7, 32), None, "past the destination");
        assert_eq!(slot.fits(3, 8, 4, 6, 33), None, "wrong data length");
        assert_eq!(slot.fits(3, 8, 0, 0, 0), None, "empty");
        assert_eq!(slot.fits(3, 8, 1, u64::MAX, 8), None, "overflowing index");
        assert_eq!(slot.fits(3, 8, u64::MAX, 0, 8), None, "overflowing count");
        assert!(!fits(0) && fits(1) && fits(MAX_MSG) && !fits(MAX_MSG + 1));
    }

    #[test]
    fn headers_round_trip_and_lengths_are_exact() {
        let m = message(&[1, 2, 3, 4, 5], 0);
        assert_eq!(words::<5>(&m), Some([1, 2, 3, 4, 5]));
        assert_eq!(words::<4>(&m), None);
        assert_eq!(words::<5>(&m[..39]), None);
    }

    #[test]
    fn runs_split_at_breaks_in_the_stride_and_at_the_size_cap() {
        let mut r = Run {
            offset: 100,
            stride: None,
            count: 1,
        };
        assert!(!r.takes(99, 10));
        assert!(r.takes(116, 10));
        r.push(116);
        assert!(r.takes(132, 10));
        assert!(!r.takes(133, 10));
        r.push(132);
        assert!(!r.takes(148, 3));
    }
}
