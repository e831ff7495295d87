//! Strided puts and gets to PEs reached through UCX, packed into active messages: one message
//! per up to [`MAX_MSG`] bytes of elements instead of one UCX operation per element.
//!
//! # Protocol
//! - **Put.** The sender packs the elements after a header `PUT [from, size, count, offset,
//!   stride]` and sends them; the target checks the header against its heap and the data's
//!   length, scatters the elements into its heap and counts the message as received from
//!   `from`. The source is copied into the message, so it may be reused at once.
//! - **Acknowledgements, on request.** The target does not answer each put: over tcp every
//!   answer is a system call on both sides, on the critical path of a put + flag pipeline.
//!   Both sides count what went from one PE to the other in units of the data's bytes plus
//!   [`MSG_UNITS`] per message. When the sender needs its messages complete (`quiet`,
//!   `pe_quiet`, a `fence` that must wait, a full window) it sends `SYNC [from, sent]`, and the
//!   target answers `ACK [from, received]` once it has handled `sent` units from it (at once,
//!   when they arrived in order). Counts are totals since start-up, so a late or repeated ack
//!   changes nothing. A UCX flush alone would not do: it completes when a message has left,
//!   not when the target's handler has run. At most [`MAX_UNACKED`] units to one PE are
//!   unacknowledged (about 4 MiB, or 58,000 puts of 8 bytes: what a target that does not
//!   progress can make its sender hold); every [`ASK_EVERY`] units the sender asks, so that a
//!   long stream of puts seldom waits. Where a quiet found at most two messages sent to a PE
//!   since the last one (put + quiet), the next messages to it carry the ask themselves, as one
//!   more header word (the count to acknowledge once handled): put + quiet is then one message
//!   and its ack, not a put, a `SYNC` and an ack; a run of [`EAGER_UNTIL`] messages without a
//!   quiet (a pipeline) goes back to asks on request.
//! - **Fence.** Where the endpoint carries everything on one ordered lane (UCX's emulated RMA,
//!   atomics and these messages: tcp to one device, see `Endpoint::one_ordered_lane`), messages
//!   are handled at the target in the order they were sent, and a fence needs no round trip.
//!   Elsewhere `fence` asks and waits for every outstanding ack (strided puts before it are in
//!   place before anything after it is sent) and bumps an epoch; the first strided put to such
//!   a PE after a fence flushes the endpoint first, so plain puts before the fence land before
//!   it too (UCX's fence orders only one lane, and active messages may take another than RMA).
//! - **Get.** The requester registers a slot (a token and the destination of every element) and
//!   sends `GET_REQ [from, size, count, offset, stride, token, first]` for runs of at most
//!   [`MAX_MSG`] bytes, at most [`GET_WINDOW`] at a time; the target checks the request against
//!   its heap and answers on the reply endpoint with `GET_RESP [from, size, count, token, first]`
//!   and the packed elements; the requester's handler checks the response against the slot and
//!   scatters it. The blocking get returns when every element has arrived.
//!
//! - **Batch.** Puts of up to [`COALESCE_MAX`] bytes to a PE whose messages arrive in order,
//!   in a stream (see [`coalesces`]), wait in a batch per PE: `BATCH [from]` and records of a
//!   put each (`offset`, `len`, then the bytes padded to a word), at most about [`BATCH_BYTES`].
//!   The target checks every record before it writes any, applies them in order, and counts the
//!   message as a put of its data's length.
//! - **Put with signal.** `SIGNAL [from, offset, len, signal, kind, value]` and `len` data
//!   bytes: the target checks both ranges against its heap, copies the data to `offset`, then
//!   updates the 8-byte word at `signal` (set, add, or raise to at least `value`) with release
//!   ordering, and acknowledges as for a put. One message instead of a put, a flush (a round
//!   trip) and an atomic: `put_signal` to PEs reached through UCX travels this way. Counted and
//!   acknowledged as a put.
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
use crate::transport::progress::{self, Progress};
use shmem_ucx::{AmFlags, AmHandler, AmMessage, Endpoint, Worker};
use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most data bytes in one message (a bound on what a request can make a target send, too).
pub(crate) const MAX_MSG: usize = 64 << 10;
/// What a counted message weighs beside its data bytes, in the units the protocol counts.
const MSG_UNITS: u64 = 64;
/// Most unacknowledged units (data bytes, plus [`MSG_UNITS`] per message) to one PE.
pub(crate) const MAX_UNACKED: u64 = 4 << 20;
/// The sender asks for an acknowledgement after this many units to one PE.
const ASK_EVERY: u64 = MAX_UNACKED / 2;
/// Most get requests of one strided get in flight.
const GET_WINDOW: usize = 8;

/// The units a counted message with `data` bytes weighs (see the module docs).
fn units(data: usize) -> u64 {
    data as u64 + MSG_UNITS
}

/// Active message ids (one worker, so any distinct small numbers do).
const AM_PUT: u16 = 0x51;
const AM_ACK: u16 = 0x52;
const AM_GET_REQ: u16 = 0x53;
const AM_GET_RESP: u16 = 0x54;
const AM_SIGNAL: u16 = 0x55;
const AM_FLAG: u16 = 0x56;
const AM_SYNC: u16 = 0x57;
const AM_BATCH: u16 = 0x58;

/// Header lengths, in words.
const PUT_WORDS: usize = 5;
const ACK_WORDS: usize = 2;
const SYNC_WORDS: usize = 2;
const REQ_WORDS: usize = 7;
const RESP_WORDS: usize = 5;
const SIGNAL_WORDS: usize = 6;
const BATCH_WORDS: usize = 1;

/// Most data bytes of a put that may wait in a batch (see [`coalesces`]).
pub(crate) const COALESCE_MAX: usize = 256;
/// A batch goes out once its records take this many bytes.
const BATCH_BYTES: usize = 4 << 10;
/// A record's header: the target offset and the length, one word each.
const RECORD_HEAD: usize = 16;
/// Most bytes waiting in the batches to all PEs together: past this, puts go at once (after
/// their PE's batch) until a batch is sent. Bounds what a stream of small puts to many PEs
/// holds without a wait: 16 full batches.
const BATCHED_MAX: usize = 16 * BATCH_BYTES;

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
    /// Counted messages sent and received, and their acknowledgements.
    ledger: Ledger,
    /// Bumped by every fence.
    fence_epoch: AtomicU64,
    /// Whether small puts in a stream may wait in batches (see [`coalesces`]).
    coalescing: AtomicBool,
    /// Per PE: the records of the puts waiting to go to it in one `BATCH` message.
    batches: Mutex<BatchSet>,
    /// Whether `batches` holds [`BATCHED_MAX`] bytes or more (set with its lock held; read
    /// without).
    batches_full: AtomicBool,
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
    let fresh = State {
        my_pe,
        base,
        total,
        data,
        team,
        ledger: Ledger::new(n_pes),
        fence_epoch: AtomicU64::new(0),
        coalescing: AtomicBool::new(false),
        batches: Mutex::new(BatchSet::default()),
        batches_full: AtomicBool::new(false),
        gets: Mutex::new(HashMap::new()),
        next_token: AtomicU64::new(1),
    };
    if STATE.set(fresh).is_err() {
        unreachable!("the runtime starts once per process");
    }
    static PUT: PutHandler = PutHandler;
    static ACK: AckHandler = AckHandler;
    static SYNC: SyncHandler = SyncHandler;
    static REQ: GetReqHandler = GetReqHandler;
    static RESP: GetRespHandler = GetRespHandler;
    static SIGNAL: SignalHandler<true> = SignalHandler;
    static FLAG: SignalHandler<false> = SignalHandler;
    static BATCH: BatchHandler = BatchHandler;
    worker.set_am_handler(AM_SIGNAL, &SIGNAL)?;
    worker.set_am_handler(AM_FLAG, &FLAG)?;
    worker.set_am_handler(AM_PUT, &PUT)?;
    worker.set_am_handler(AM_ACK, &ACK)?;
    worker.set_am_handler(AM_SYNC, &SYNC)?;
    worker.set_am_handler(AM_GET_REQ, &REQ)?;
    worker.set_am_handler(AM_GET_RESP, &RESP)?;
    worker.set_am_handler(AM_BATCH, &BATCH)?;
    Ok(())
}

/// Whether elements of `size` bytes go packed in messages: at least one fits in a message
/// (and a zero-sized element needs no message at all).
#[inline]
pub(crate) fn fits(size: usize) -> bool {
    (1..=MAX_MSG).contains(&size)
}

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

/// Header words as bytes, followed by room for `data` bytes (filled by the caller).
fn message(words: &[u64], data: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(words.len() * 8 + data);
    for w in words {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

/// A counted message's header of `n` words, and the count it asks an ack for when the sender
/// added one more word (see "Acknowledgements" in the module docs).
fn split_ask(header: &[u8], n: usize) -> (&[u8], Option<u64>) {
    if header.len() == (n + 1) * 8 {
        let (head, ask) = header.split_at(n * 8);
        (head, words::<1>(ask).map(|[w]| w))
    } else {
        (header, None)
    }
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
/// one of this PE's regions: a team segment, a heap and a data segment given as (base, length).
/// Offsets below the team segment's length name its bytes; the heap's own start at that length,
/// the data segment's at [`DATA_OFFSET`]. Returns the address of `offset` and `count * size`.
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

/// Lets small puts in a stream wait in batches (`on`) or not: only where a progress thread
/// serves this PE while it computes, which sends what waits (see [`coalesces`]).
pub(crate) fn set_coalescing(on: bool) {
    if let Some(s) = STATE.get() {
        s.coalescing.store(on, Ordering::Release);
    }
}

/// Whether a put of `len` bytes to `pe` waits in `pe`'s batch instead of going at once: a put
/// of at most [`COALESCE_MAX`] bytes, to a PE whose endpoint has one ordered lane, in a stream
/// (the PE's messages no longer ask for their own acks: more than [`EAGER_UNTIL`] since the
/// last quiet), with coalescing on and fewer than [`BATCHED_MAX`] bytes waiting in all
/// batches; the caller also sends the first put after a wait at once. A batch goes out as one
/// `BATCH` message when it holds [`BATCH_BYTES`], before any other operation on the PE, at
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

/// The puts waiting in batches, per target PE, and their bytes in all.
#[derive(Default)]
struct BatchSet {
    by_pe: HashMap<usize, Vec<u8>>,
    bytes: usize,
}

impl BatchSet {
    /// Appends a record (a put of `data` to `offset`) to `pe`'s batch; returns the batch, taken
    /// out, once it holds [`BATCH_BYTES`].
    fn append(&mut self, pe: usize, offset: usize, data: &[u8]) -> Option<Vec<u8>> {
        let recs = self
            .by_pe
            .entry(pe)
            .or_insert_with(|| Vec::with_capacity(BATCH_BYTES + RECORD_HEAD + COALESCE_MAX));
        let before = recs.len();
        recs.extend_from_slice(&(offset as u64).to_le_bytes());
        recs.extend_from_slice(&(data.len() as u64).to_le_bytes());
        recs.extend_from_slice(data);
        recs.resize(recs.len().next_multiple_of(8), 0);
        self.bytes += recs.len() - before;
        if recs.len() >= BATCH_BYTES {
            return self.remove(pe);
        }
        None
    }

    /// Takes `pe`'s batch out, if it has one.
    fn remove(&mut self, pe: usize) -> Option<Vec<u8>> {
        let recs = self.by_pe.remove(&pe)?;
        self.bytes -= recs.len();
        Some(recs)
    }

    /// Takes every batch out: (PE, records).
    fn drain(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.bytes = 0;
        self.by_pe.drain().collect()
    }

    /// Whether another put may wait: fewer than [`BATCHED_MAX`] bytes wait now.
    fn has_room(&self) -> bool {
        self.bytes < BATCHED_MAX
    }
}

/// Publishes `set`'s state after a change (its lock held): whether any batch waits (for the
/// progress thread) and whether another put may wait (for [`coalesces`], without the lock).
fn publish(st: &State, set: &BatchSet) {
    st.batches_full.store(!set.has_room(), Ordering::Relaxed);
    progress::set_batched(!set.by_pe.is_empty());
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
    publish(st, &set);
    if let Some(recs) = full {
        // Sent while the lock is held: no batch to `pe` can overtake it.
        send_batch(progress, st, ep, pe, recs)?;
    }
    Ok(())
}

/// Sends `pe`'s batch, if it has one, through `ep`.
pub(crate) fn send_batch_of(
    progress: &Progress,
    ep: &Endpoint,
    pe: usize,
) -> shmem_ucx::Result<()> {
    let st = state();
    let mut set = lock(&st.batches);
    if let Some(recs) = set.remove(pe) {
        publish(st, &set);
        send_batch(progress, st, ep, pe, recs)?;
    }
    Ok(())
}

/// The batches waiting to go, locked: take them with [`Batches::take`] and send each with
/// [`send_taken`] before dropping this. `None` when `try_only` and another thread holds them
/// (it is sending them, or this thread is, further up).
pub(crate) fn batches(try_only: bool) -> Option<Batches> {
    let st = STATE.get()?;
    let guard = if try_only {
        match st.batches.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    } else {
        lock(&st.batches)
    };
    Some(Batches(guard))
}

/// The locked batches (see [`batches`]).
pub(crate) struct Batches(std::sync::MutexGuard<'static, BatchSet>);

impl Batches {
    /// Takes every batch: (PE, records).
    pub(crate) fn take(&mut self) -> Vec<(usize, Vec<u8>)> {
        let all = self.0.drain();
        publish(state(), &self.0);
        all
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
    recs: Vec<u8>,
) -> shmem_ucx::Result<()> {
    let mut msg = message(&[st.my_pe as u64], recs.len());
    msg.extend_from_slice(&recs);
    send_counted(progress, st, ep, pe, AM_BATCH, msg, BATCH_WORDS * 8)
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
fn send_counted(
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

/// A quiet that finds at most this many messages sent to a PE since the one before makes the
/// next messages to it ask for their ack themselves ([`Ledger::eager`]) ...
const EAGER_AFTER_QUIET_OF: u32 = 2;
/// ... until this many in a row go without a quiet.
const EAGER_UNTIL: u32 = 4;
/// Only messages of at most this many data bytes ask for their ack themselves (the ask is one
/// more header word, inserted before the data).
const EAGER_MAX_DATA: usize = 8 << 10;

/// [`Ledger::ordered`]: not known yet, one ordered lane, or not.
const LANE_UNKNOWN: u8 = 0;
const ORDERED: u8 = 1;
const UNORDERED: u8 = 2;

/// PEs per chunk of [`Ledger`] counts: a chunk is allocated when this PE first sends to, or
/// hears from, one of its PEs.
const CHUNK: usize = 256;

/// The counts of the acknowledgement protocol with one PE (see the module docs). Totals since
/// start-up: they only grow.
struct Counts {
    /// Sender side: units sent to the PE, the count it acknowledged, the count a `SYNC` asked
    /// it about.
    sent: AtomicU64,
    acked: AtomicU64,
    asked: AtomicU64,
    /// Receiver side: units handled from the PE, and the count a `SYNC` from it waits for
    /// (0: none).
    received: AtomicU64,
    wanted: AtomicU64,
    /// Messages sent since the last quiet that asked the PE, and whether each message asks
    /// for its own ack (the PE's puts are mostly followed by a quiet: put + quiet is then one
    /// message and its ack, as UCX's emulated put is, instead of a put, a `SYNC` and an ack).
    since_quiet: AtomicU32,
    eager: AtomicBool,
    /// Whether the PE is on [`Ledger::listed`].
    on_list: AtomicBool,
    /// Whether its endpoint has one ordered lane (`LANE_UNKNOWN` before the first message).
    ordered: AtomicU8,
    /// The fence epoch up to which plain puts to the PE are known to be flushed (see
    /// `after_fence`).
    fenced: AtomicU64,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            received: AtomicU64::new(0),
            wanted: AtomicU64::new(0),
            since_quiet: AtomicU32::new(0),
            // The first messages to a PE ask (a put + quiet round's first contact is then one
            // message to each PE, not a put and a `SYNC`); a pipeline turns it off after
            // `EAGER_UNTIL` of them.
            eager: AtomicBool::new(true),
            on_list: AtomicBool::new(false),
            ordered: AtomicU8::new(LANE_UNKNOWN),
            fenced: AtomicU64::new(0),
        }
    }
}

/// The protocol's [`Counts`] for every PE of the job, in chunks of [`CHUNK`] PEs allocated at
/// first contact: a PE pays 24 B per 256 PEs of the job at start-up, and 56 B for each PE of
/// a chunk it talks to (a job of 128,000 PEs: 12 KB, where counts for all would take 7 MB).
struct Ledger {
    n_pes: usize,
    chunks: Box<[OnceLock<Box<[Counts]>>]>,
    /// Sent and not acknowledged, all PEs together, so that `quiet` looks at one word.
    outstanding: AtomicU64,
    /// PEs sent messages since they were last taken off `listed` (at most once each).
    listed: Mutex<Vec<usize>>,
    /// Whether some PE's endpoint was found not to have one ordered lane.
    any_unordered: AtomicBool,
}

impl Ledger {
    fn new(n_pes: usize) -> Ledger {
        Ledger {
            n_pes,
            chunks: (0..n_pes.div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
            outstanding: AtomicU64::new(0),
            listed: Mutex::new(Vec::new()),
            any_unordered: AtomicBool::new(false),
        }
    }

    /// `pe`'s counts, if this PE has been in contact with its chunk (none: all zero).
    fn get(&self, pe: usize) -> Option<&Counts> {
        self.chunks.get(pe / CHUNK)?.get()?.get(pe % CHUNK)
    }

    /// `pe`'s counts, allocating its chunk at first contact.
    ///
    /// # Panics
    /// If `pe` is not a PE of the job (callers check what a peer sent).
    fn at(&self, pe: usize) -> &Counts {
        assert!(
            pe < self.n_pes,
            "shmem: PE {pe} is not a PE of this job of {} PEs",
            self.n_pes
        );
        let chunk = self.chunks[pe / CHUNK].get_or_init(|| {
            let len = CHUNK.min(self.n_pes - pe / CHUNK * CHUNK);
            (0..len).map(|_| Counts::new()).collect()
        });
        &chunk[pe % CHUNK]
    }

    /// Chunks allocated so far.
    #[cfg(test)]
    fn chunks_in_use(&self) -> usize {
        self.chunks.iter().filter(|c| c.get().is_some()).count()
    }

    /// Units sent to `pe` and not acknowledged yet.
    fn unacked(&self, pe: usize) -> u64 {
        self.get(pe).map_or(0, |c| {
            let acked = c.acked.load(Ordering::Acquire);
            c.sent.load(Ordering::Acquire).saturating_sub(acked)
        })
    }

    /// Counts a message of `weight` units to `pe` and lists it; returns the new total.
    fn count_sent(&self, pe: usize, weight: u64) -> u64 {
        self.outstanding.fetch_add(weight, Ordering::AcqRel);
        let sent = self.at(pe).sent.fetch_add(weight, Ordering::AcqRel) + weight;
        self.list(pe);
        sent
    }

    /// Whether the next message to `pe`, with `data` bytes, asks for its own ack (see
    /// [`Counts::eager`]); counts it as sent since the last quiet.
    fn eager_ask(&self, pe: usize, data: usize) -> bool {
        let c = self.at(pe);
        let since = c.since_quiet.fetch_add(1, Ordering::Relaxed) + 1;
        if !c.eager.load(Ordering::Relaxed) {
            return false;
        }
        if since > EAGER_UNTIL {
            // A stream without quiets (a pipeline): acks on request only.
            c.eager.store(false, Ordering::Relaxed);
            return false;
        }
        data <= EAGER_MAX_DATA
    }

    /// A quiet asks `pe`: if few messages went to it since the last one, the next ask for
    /// their acks themselves.
    fn note_quiet(&self, pe: usize) {
        if let Some(c) = self.get(pe) {
            let since = c.since_quiet.swap(0, Ordering::Relaxed);
            c.eager
                .store(since <= EAGER_AFTER_QUIET_OF, Ordering::Relaxed);
        }
    }

    fn list(&self, pe: usize) {
        if !self.at(pe).on_list.swap(true, Ordering::AcqRel) {
            lock(&self.listed).push(pe);
        }
    }

    fn take_listed(&self) -> Vec<usize> {
        let taken = std::mem::take(&mut *lock(&self.listed));
        // Off the list before anyone asks them: a message sent from here on lists its PE
        // again, so no quiet can miss it.
        for &pe in &taken {
            self.at(pe).on_list.store(false, Ordering::Release);
        }
        taken
    }

    /// Records whether `pe`'s endpoint has one ordered lane, at the first message to it.
    fn note_lane(&self, pe: usize, ep: &Endpoint) {
        let c = self.at(pe);
        if c.ordered.load(Ordering::Relaxed) == LANE_UNKNOWN {
            let o = if ep.one_ordered_lane() {
                ORDERED
            } else {
                self.any_unordered.store(true, Ordering::Release);
                UNORDERED
            };
            c.ordered.store(o, Ordering::Relaxed);
        }
    }

    /// Checks an `ACK [from, count]` and records it.
    fn take_ack(&self, header: &[u8]) -> std::result::Result<(), Refusal> {
        let Some([from, n]) = words::<ACK_WORDS>(header) else {
            return refuse(u64::MAX, format!("ack header of {} bytes", header.len()));
        };
        let Some(pe) = usize::try_from(from).ok().filter(|&pe| pe < self.n_pes) else {
            return refuse(
                from,
                "acknowledges messages, but is not a PE of this job".into(),
            );
        };
        let sent = self.get(pe).map_or(0, |c| c.sent.load(Ordering::Acquire));
        if n > sent {
            return refuse(
                from,
                format!(
                    "acknowledges {n} units of puts and puts with signal, but {sent} were sent to it"
                ),
            );
        }
        if n == 0 {
            return Ok(());
        }
        let before = self.at(pe).acked.fetch_max(n, Ordering::AcqRel);
        if n > before {
            // What this ack adds is part of the total: this cannot go below zero.
            self.outstanding.fetch_sub(n - before, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Counts a message with `data` bytes handled from `from` (a PE of the job: checked by the
    /// caller); the count to acknowledge if a `SYNC` waits for it.
    fn note_received(&self, from: usize, data: usize) -> Option<u64> {
        let c = self.at(from);
        let got = c.received.fetch_add(units(data), Ordering::AcqRel) + units(data);
        let want = c.wanted.load(Ordering::Acquire);
        (want != 0
            && got >= want
            && c.wanted
                .compare_exchange(want, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok())
        .then_some(got)
    }

    /// Checks a `SYNC [from, count]`: the count to acknowledge now, or `None` when messages
    /// it covers are still to come (the ack goes out with the last of them).
    fn take_sync(&self, header: &[u8]) -> std::result::Result<(usize, Option<u64>), Refusal> {
        let Some([from, n]) = words::<SYNC_WORDS>(header) else {
            return refuse(u64::MAX, format!("sync header of {} bytes", header.len()));
        };
        let Some(pe) = usize::try_from(from).ok().filter(|&pe| pe < self.n_pes) else {
            return refuse(from, "asks for an ack, but is not a PE of this job".into());
        };
        Ok((pe, self.sync(pe, n)))
    }

    /// `pe` asks for an ack once `n` units from it are handled: the count to acknowledge now,
    /// or `None` when some are still to come (the ack goes out with the last of them).
    fn sync(&self, pe: usize, n: u64) -> Option<u64> {
        let c = self.at(pe);
        let got = c.received.load(Ordering::Acquire);
        if got >= n {
            return Some(got);
        }
        c.wanted.fetch_max(n, Ordering::AcqRel);
        // Handlers of one worker do not run at once, but check again all the same.
        let got = c.received.load(Ordering::Acquire);
        let now = got >= n
            && c.wanted
                .compare_exchange(n, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        now.then_some(got)
    }

    /// Counts a checked put or put with signal of `data` bytes from `from` (a PE of the job)
    /// that asks for an ack once `ask` units are handled, if it does: the count to
    /// acknowledge, if any is due.
    fn receive_counted(&self, from: usize, data: usize, ask: Option<u64>) -> Option<u64> {
        let due = self.note_received(from, data);
        let asked = ask.and_then(|n| self.sync(from, n));
        due.max(asked)
    }

    /// The PE a counted message says it came from, checked to be one of the job's.
    fn sender(&self, from: u64) -> std::result::Result<usize, Refusal> {
        match usize::try_from(from) {
            Ok(pe) if pe < self.n_pes => Ok(pe),
            _ => refuse(
                from,
                format!("a put from PE {from}, in a job of {} PEs", self.n_pes),
            ),
        }
    }
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
struct SyncHandler;
struct BatchHandler;
struct GetReqHandler;
struct GetRespHandler;

/// This PE's memory as the handlers see it: team segment, heap and data segment, each as
/// (base, length) (see [`in_regions`]).
type Regions = [(*mut u8, usize); 3];

impl State {
    fn regions(&self) -> Regions {
        [self.team, (self.base, self.total), self.data]
    }
}

/// Why a message was refused: the PE it says it came from (`u64::MAX` when its header could
/// not be read) and what is wrong with it.
#[derive(Debug)]
struct Refusal {
    from: u64,
    what: String,
}

fn refuse<T>(from: u64, what: String) -> std::result::Result<T, Refusal> {
    Err(Refusal { from, what })
}

/// A checked `PUT`: `data` scattered as elements of `size` bytes, `stride` bytes apart, from
/// `at`.
struct PutPlan<'a> {
    from: u64,
    at: *mut u8,
    size: usize,
    stride: usize,
    data: &'a [u8],
}

/// Checks a `PUT` message against this PE's memory.
fn check_put<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<PutPlan<'a>, Refusal> {
    let Some([from, size, count, offset, stride]) = words::<PUT_WORDS>(header) else {
        return refuse(u64::MAX, format!("put header of {} bytes", header.len()));
    };
    let Some(data) = data else {
        return refuse(from, "put data not sent eagerly".into());
    };
    let Some((at, bytes)) = in_regions(regions, size, count, offset, stride) else {
        return refuse(
            from,
            format!(
                "put of {count} x {size} bytes at heap offset {offset}, stride {stride}, \
                 outside this PE's heap of {} bytes",
                regions[1].1
            ),
        );
    };
    if bytes != data.len() {
        return refuse(
            from,
            format!("put of {count} x {size} bytes carries {} bytes", data.len()),
        );
    }
    // Both fit in usize (checked by `in_regions`).
    Ok(PutPlan {
        from,
        at,
        size: size as usize,
        stride: stride as usize,
        data,
    })
}

impl PutPlan<'_> {
    /// Writes the elements.
    ///
    /// # Safety
    /// The plan comes from [`check_put`] with regions that are live, writable memory.
    unsafe fn apply(&self) {
        for (k, elem) in self.data.chunks_exact(self.size).enumerate() {
            // SAFETY: k*stride + size lies inside the region `at` starts in (checked by
            // `in_regions`; caller's contract); the source is the message.
            unsafe {
                ptr::copy_nonoverlapping(elem.as_ptr(), self.at.add(k * self.stride), self.size)
            };
        }
    }
}

/// Checks a `BATCH [from]` message: its data is records of a put each (`offset`, `len`, then
/// `len` bytes padded to a word), every one inside this PE's memory, filling the data exactly.
/// Returns the sender and the records.
fn check_batch<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<(u64, &'a [u8]), Refusal> {
    let Some([from]) = words::<BATCH_WORDS>(header) else {
        return refuse(u64::MAX, format!("batch header of {} bytes", header.len()));
    };
    let Some(data) = data else {
        return refuse(from, "batch data not sent eagerly".into());
    };
    records(regions, from, data, |_, _| {})?;
    Ok((from, data))
}

/// Walks the records of a batch from `from`, calling `each(at, bytes)` for every one that
/// checks; refuses at the first that does not.
fn records<'a>(
    regions: Regions,
    from: u64,
    data: &'a [u8],
    mut each: impl FnMut(*mut u8, &'a [u8]),
) -> std::result::Result<(), Refusal> {
    let (mut rest, mut k) = (data, 0usize);
    while !rest.is_empty() {
        let Some((head, tail)) = rest.split_at_checked(RECORD_HEAD) else {
            return refuse(
                from,
                format!(
                    "batch record {k}: {} bytes left, less than a header",
                    rest.len()
                ),
            );
        };
        let Some([offset, len]) = words::<2>(head) else {
            unreachable!("a record header is two words");
        };
        let room = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_next_multiple_of(8))
            .filter(|&r| r <= tail.len());
        let Some(room) = room else {
            return refuse(
                from,
                format!(
                    "batch record {k} of {len} bytes, with {} bytes left",
                    tail.len()
                ),
            );
        };
        let Some((at, n)) = in_regions(regions, len, 1, offset, 0) else {
            return refuse(
                from,
                format!(
                    "batch record {k}: put of {len} bytes at heap offset {offset}, outside this \
                     PE's heap of {} bytes",
                    regions[1].1
                ),
            );
        };
        each(at, &tail[..n]);
        rest = &tail[room..];
        k += 1;
    }
    Ok(())
}

/// Writes the records of a batch that [`check_batch`] accepted.
///
/// # Safety
/// `regions` are live, writable memory, the same that `data` was checked against.
unsafe fn apply_batch(regions: Regions, data: &[u8]) {
    let _ = records(regions, 0, data, |at, bytes| {
        // SAFETY: `bytes.len()` bytes at `at` lie inside one region (checked by `in_regions`;
        // caller's contract); the source is the message.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) }
    });
}

/// A checked `SIGNAL` or `FLAG`: `data` copied to `at` (none when empty), then the word at
/// `word` updated.
struct SignalPlan<'a> {
    from: u64,
    at: Option<*mut u8>,
    data: &'a [u8],
    word: *mut u8,
    kind: SignalKind,
    value: u64,
}

/// Checks a `SIGNAL` or `FLAG` message against this PE's memory (every check before anything
/// is written).
fn check_signal<'a>(
    regions: Regions,
    header: &[u8],
    data: Option<&'a [u8]>,
) -> std::result::Result<SignalPlan<'a>, Refusal> {
    let Some([from, offset, len, signal, kind, value]) = words::<SIGNAL_WORDS>(header) else {
        return refuse(
            u64::MAX,
            format!("put-with-signal header of {} bytes", header.len()),
        );
    };
    let Some(data) = data else {
        return refuse(from, "put-with-signal data not sent eagerly".into());
    };
    if len != data.len() as u64 {
        return refuse(
            from,
            format!("put with signal of {len} bytes carries {}", data.len()),
        );
    }
    let at = if data.is_empty() {
        None
    } else {
        let Some((at, _)) = in_regions(regions, len, 1, offset, 0) else {
            return refuse(
                from,
                format!(
                    "put with signal of {len} bytes at heap offset {offset}, outside this \
                     PE's heap of {} bytes",
                    regions[1].1
                ),
            );
        };
        Some(at)
    };
    let word = in_regions(regions, 8, 1, signal, 0)
        .map(|(p, _)| p)
        .filter(|p| (*p as usize).is_multiple_of(8));
    let Some(word) = word else {
        return refuse(
            from,
            format!("signal word at heap offset {signal} is not a word of this PE's heap"),
        );
    };
    let Some(kind) = SignalKind::from_wire(kind) else {
        return refuse(from, format!("unknown signal operation {kind}"));
    };
    Ok(SignalPlan {
        from,
        at,
        data,
        word,
        kind,
        value,
    })
}

impl SignalPlan<'_> {
    /// Copies the data, then updates the signal word.
    ///
    /// # Safety
    /// The plan comes from [`check_signal`] with regions that are live, writable memory whose
    /// 8-byte words are accessed only atomically where they are signal words.
    unsafe fn apply(&self) {
        if let Some(at) = self.at {
            // SAFETY: `data.len()` bytes at `at` lie in one region (checked by `in_regions`;
            // caller's contract); the source is the message.
            unsafe { ptr::copy_nonoverlapping(self.data.as_ptr(), at, self.data.len()) };
        }
        // SAFETY: an aligned word of a region (checked), which PEs update only atomically
        // (signal words and flags).
        let word = unsafe { AtomicU64::from_ptr(self.word.cast()) };
        self.kind.apply(word, self.value);
    }
}

/// A checked `GET_REQ`: the response's header words and where its elements are read.
struct GetReqPlan {
    head: [u64; RESP_WORDS],
    at: *const u8,
    size: usize,
    count: usize,
    stride: usize,
    bytes: usize,
}

/// Checks a `GET_REQ` message against this PE's memory; `my_pe` goes in the response.
fn check_get_req(
    regions: Regions,
    my_pe: usize,
    header: &[u8],
) -> std::result::Result<GetReqPlan, Refusal> {
    let Some([from, size, count, offset, stride, token, first]) = words::<REQ_WORDS>(header) else {
        return refuse(
            u64::MAX,
            format!("get request header of {} bytes", header.len()),
        );
    };
    let found = in_regions(regions, size, count, offset, stride);
    let Some((at, bytes)) = found.filter(|&(_, b)| b <= MAX_MSG.max(size as usize)) else {
        return refuse(
            from,
            format!(
                "get of {count} x {size} bytes at heap offset {offset}, stride {stride}: \
                 outside this PE's heap of {} bytes or over {MAX_MSG} bytes",
                regions[1].1
            ),
        );
    };
    // All three fit in usize (checked by `in_regions`).
    Ok(GetReqPlan {
        head: [my_pe as u64, size, count, token, first],
        at,
        size: size as usize,
        count: count as usize,
        stride: stride as usize,
        bytes,
    })
}

impl GetReqPlan {
    /// The response: its header words, then the elements.
    ///
    /// # Safety
    /// The plan comes from [`check_get_req`] with regions that are live, readable memory.
    unsafe fn response(&self) -> Vec<u8> {
        let mut resp = message(&self.head, self.bytes);
        for k in 0..self.count {
            // SAFETY: inside one region (checked by `in_regions`; caller's contract); a plain
            // read of bytes that others may write concurrently, as any get.
            let elem =
                unsafe { std::slice::from_raw_parts(self.at.add(k * self.stride), self.size) };
            resp.extend_from_slice(elem);
        }
        resp
    }
}

/// A `GET_RESP` header: `[from, size, count, token, first]`.
fn get_resp_header(header: &[u8]) -> std::result::Result<[u64; RESP_WORDS], Refusal> {
    words::<RESP_WORDS>(header).ok_or_else(|| Refusal {
        from: u64::MAX,
        what: format!("get response header of {} bytes", header.len()),
    })
}

impl GetSlot {
    /// Claims the elements of a response (`head` from [`get_resp_header`], `data_len` data
    /// bytes) for this slot: the number of elements, or the refusal when it does not match the
    /// request or claims elements already claimed.
    fn claim(
        &self,
        head: [u64; RESP_WORDS],
        data_len: usize,
    ) -> std::result::Result<usize, Refusal> {
        let [from, size, count, token, first] = head;
        let claimed = self.fits(from, size, count, first, data_len).filter(|&n| {
            self.claimed
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                    c.checked_add(n).filter(|&e| e <= self.dst.len())
                })
                .is_ok()
        });
        claimed.ok_or_else(|| Refusal {
            from,
            what: format!(
                "get response of {count} x {size} bytes ({data_len} data bytes) for elements \
                 {first}.. of request {token}, which asked PE {} for {} x {} bytes",
                self.from_pe,
                self.dst.len(),
                self.size
            ),
        })
    }

    /// Writes the `count` claimed elements of a response starting at element `first`.
    ///
    /// # Safety
    /// [`claim`](Self::claim) accepted the response (`first` is its header's), and the
    /// destinations are live until the slot is unregistered.
    unsafe fn write(&self, first: u64, data: &[u8], count: usize) {
        let first = first as usize;
        for (k, elem) in data.chunks_exact(self.size).enumerate() {
            // SAFETY: element first + k < dst.len() (checked by `claim`), a `size`-byte element
            // of the requester's buffer, live (caller's contract).
            unsafe { ptr::copy_nonoverlapping(elem.as_ptr(), self.dst[first + k], self.size) };
        }
        self.received.fetch_add(count, Ordering::AcqRel);
    }
}

/// Ends this PE over a refused message.
fn refused(st: &State, r: Refusal) -> ! {
    bad_message(st, r.from, format_args!("{}", r.what))
}

/// Acknowledges the first `count` messages from the sender of `msg`.
fn reply_ack(st: &State, msg: &AmMessage<'_>, count: u64) {
    let ack = message(&[st.my_pe as u64, count], 0);
    if let Err(e) = msg.reply(AM_ACK, ack, ACK_WORDS * 8, AmFlags::NONE, send_failed) {
        send_failed(e);
    }
}

impl AmHandler for PutHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let (header, ask) = split_ask(msg.header(), PUT_WORDS);
        let (from, plan) = check_put(st.regions(), header, msg.data())
            .and_then(|p| Ok((st.ledger.sender(p.from)?, p)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        unsafe { plan.apply() };
        if let Some(n) = st.ledger.receive_counted(from, plan.data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl AmHandler for BatchHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let regions = st.regions();
        let (header, ask) = split_ask(msg.header(), BATCH_WORDS);
        let (from, data) = check_batch(regions, header, msg.data())
            .and_then(|(f, d)| Ok((st.ledger.sender(f)?, d)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        unsafe { apply_batch(regions, data) };
        if let Some(n) = st.ledger.receive_counted(from, data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl<const ACK: bool> AmHandler for SignalHandler<ACK> {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let (header, ask) = if ACK {
            split_ask(msg.header(), SIGNAL_WORDS)
        } else {
            (msg.header(), None)
        };
        let (from, plan) = check_signal(st.regions(), header, msg.data())
            .and_then(|p| Ok((if ACK { st.ledger.sender(p.from)? } else { 0 }, p)))
            .unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process and
        // whose signal words PEs update only atomically.
        unsafe { plan.apply() };
        if ACK && let Some(n) = st.ledger.receive_counted(from, plan.data.len(), ask) {
            reply_ack(st, msg, n);
        }
    }
}

impl AmHandler for AckHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        if let Err(r) = st.ledger.take_ack(msg.header()) {
            refused(st, r);
        }
    }
}

impl AmHandler for SyncHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        match st.ledger.take_sync(msg.header()) {
            Ok((_, Some(n))) => reply_ack(st, msg, n),
            Ok((_, None)) => {}
            Err(r) => refused(st, r),
        }
    }
}

impl AmHandler for GetReqHandler {
    fn receive(&self, msg: &AmMessage<'_>) {
        let st = state();
        let plan =
            check_get_req(st.regions(), st.my_pe, msg.header()).unwrap_or_else(|r| refused(st, r));
        // SAFETY: checked against this PE's regions, which live as long as the process.
        let resp = unsafe { plan.response() };
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
        let head = get_resp_header(msg.header()).unwrap_or_else(|r| refused(st, r));
        let [from, _, _, token, first] = head;
        let Some(data) = msg.data() else {
            bad_message(st, from, format_args!("get response not sent eagerly"));
        };
        // Claim the elements under the table's lock, so that the requester, once it has removed
        // the slot, knows no other response will write into its buffer.
        let (slot, count) = {
            let gets = lock(&st.gets);
            let Some(slot) = gets.get(&token) else {
                drop(gets);
                bad_message(
                    st,
                    from,
                    format_args!("get response for unknown request {token}"),
                );
            };
            match slot.claim(head, data.len()) {
                Ok(n) => (Arc::clone(slot), n),
                Err(r) => {
                    drop(gets);
                    refused(st, r);
                }
            }
        };
        // SAFETY: claimed above; the requester waits for this write before it unregisters the
        // slot and releases its buffer.
        unsafe { slot.write(first, data, count) };
    }
}

/// A receiving PE for the fuzz targets: the checks and writes of the handlers above, applied to
/// memory of its own instead of a running job's. Not part of the API.
#[doc(hidden)]
pub struct FuzzPe {
    my_pe: usize,
    /// Team segment, heap and data segment (8-byte aligned).
    mem: [Vec<u64>; 3],
    /// The acknowledgement counts, as a running PE keeps them.
    ledger: Ledger,
    /// The one strided get in progress, with token 1: its slot and its destination buffer.
    get: Option<(GetSlot, Vec<u8>)>,
}

impl FuzzPe {
    /// A PE `my_pe` of `n_pes` with a team segment, heap and data segment of these many 8-byte
    /// words (the heap's offsets start after the team segment's, the data segment's at
    /// [`DATA_OFFSET`]).
    pub fn new(my_pe: usize, n_pes: usize, words: [usize; 3]) -> FuzzPe {
        FuzzPe {
            my_pe,
            mem: words.map(|n| vec![0u64; n]),
            ledger: Ledger::new(n_pes),
            get: None,
        }
    }

    /// The offset at which the data segment starts.
    pub const DATA_OFFSET: u64 = DATA_OFFSET as u64;

    /// The bytes of the team segment, heap and data segment.
    pub fn memory(&self) -> [&[u8]; 3] {
        self.mem.each_ref().map(|m| {
            // SAFETY: a live Vec<u64>'s bytes, read as bytes (any bit pattern is a u8).
            unsafe { std::slice::from_raw_parts(m.as_ptr().cast::<u8>(), m.len() * 8) }
        })
    }

    fn regions(&mut self) -> Regions {
        self.mem
            .each_mut()
            .map(|m| (m.as_mut_ptr().cast::<u8>(), m.len() * 8))
    }

    /// Counts a message of `data` bytes sent to `pe` (ignored past the job's PEs).
    pub fn sent(&mut self, pe: usize, data: usize) {
        if pe < self.ledger.n_pes {
            self.ledger.count_sent(pe, units(data));
        }
    }

    /// Units sent to `pe` and not acknowledged yet (0 past the job's PEs).
    pub fn unacked(&self, pe: usize) -> u64 {
        if pe < self.ledger.n_pes {
            self.ledger.unacked(pe)
        } else {
            0
        }
    }

    /// Starts a strided get (token 1) of `count` elements of `size` bytes (at least 1, as
    /// `get` requires) from `pe`, replacing the one in progress.
    pub fn start_get(&mut self, pe: usize, size: usize, count: usize) {
        let size = size.max(1);
        let mut buf = vec![0u8; size.saturating_mul(count)];
        let base = buf.as_mut_ptr();
        let dst = (0..count).map(|k| base.wrapping_add(k * size)).collect();
        let slot = GetSlot {
            from_pe: pe,
            size,
            dst,
            claimed: AtomicUsize::new(0),
            received: AtomicUsize::new(0),
        };
        self.get = Some((slot, buf));
    }

    /// The destination buffer of the get in progress, and whether every element arrived.
    pub fn got(&self) -> Option<(&[u8], bool)> {
        let (slot, buf) = self.get.as_ref()?;
        Some((buf, slot.received.load(Ordering::Acquire) == slot.dst.len()))
    }

    /// Delivers active message `id` (the ids are 0x51 put, 0x52 ack, 0x53 get request, 0x54 get
    /// response, 0x55 signal, 0x56 flag, 0x57 sync, 0x58 batch) with `header` and `data`
    /// (`None`: not sent eagerly). Returns the reply the handler would send (an ack, a get
    /// response), or the message that would end this PE.
    pub fn receive(
        &mut self,
        id: u16,
        header: &[u8],
        data: Option<&[u8]>,
    ) -> std::result::Result<Option<Vec<u8>>, String> {
        let regions = self.regions();
        let me = self.my_pe as u64;
        let ack = |n: Option<u64>| n.map(|n| message(&[me, n], 0));
        let ledger = &self.ledger;
        let r = match id {
            AM_PUT => {
                let (header, ask) = split_ask(header, PUT_WORDS);
                check_put(regions, header, data)
                    .and_then(|p| Ok((ledger.sender(p.from)?, p)))
                    .map(|(from, p)| {
                        // SAFETY: checked against this PE's own buffers.
                        unsafe { p.apply() };
                        ack(ledger.receive_counted(from, p.data.len(), ask))
                    })
            }
            AM_BATCH => {
                let (header, ask) = split_ask(header, BATCH_WORDS);
                check_batch(regions, header, data)
                    .and_then(|(f, d)| Ok((ledger.sender(f)?, d)))
                    .map(|(from, d)| {
                        // SAFETY: checked against this PE's own buffers.
                        unsafe { apply_batch(regions, d) };
                        ack(ledger.receive_counted(from, d.len(), ask))
                    })
            }
            AM_SIGNAL | AM_FLAG => {
                let (header, ask) = if id == AM_SIGNAL {
                    split_ask(header, SIGNAL_WORDS)
                } else {
                    (header, None)
                };
                check_signal(regions, header, data)
                    .and_then(|p| {
                        let from = if id == AM_SIGNAL {
                            Some(ledger.sender(p.from)?)
                        } else {
                            None
                        };
                        Ok((from, p))
                    })
                    .map(|(from, p)| {
                        // SAFETY: checked against this PE's own buffers, which nothing else
                        // accesses.
                        unsafe { p.apply() };
                        ack(from.and_then(|f| ledger.receive_counted(f, p.data.len(), ask)))
                    })
            }
            AM_ACK => ledger.take_ack(header).map(|()| None),
            AM_SYNC => ledger.take_sync(header).map(|(_, n)| ack(n)),
            AM_GET_REQ => check_get_req(regions, self.my_pe, header).map(|p| {
                // SAFETY: checked against this PE's own buffers.
                Some(unsafe { p.response() })
            }),
            AM_GET_RESP => get_resp_header(header).and_then(|head| {
                let [from, _, _, token, first] = head;
                let data = data.ok_or_else(|| Refusal {
                    from,
                    what: "get response not sent eagerly".into(),
                })?;
                let slot = match &self.get {
                    Some((slot, _)) if token == 1 => slot,
                    _ => return refuse(from, format!("get response for unknown request {token}")),
                };
                let n = slot.claim(head, data.len())?;
                // SAFETY: claimed; the destinations point into `self.get`'s buffer, live.
                unsafe { slot.write(first, data, n) };
                Ok(None)
            }),
            _ => return Err(format!("no handler for active message {id:#x}")),
        };
        r.map_err(|r| format!("from PE {}: {}", r.from, r.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_bounds_are_checked_without_overflow() {
        let heap = ptr::without_provenance_mut::<u8>(0x1000);
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
        let (heap, data) = (
            ptr::without_provenance_mut::<u8>(0x1000),
            ptr::without_provenance_mut::<u8>(0x9000),
        );
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
        let (team, heap) = (
            ptr::without_provenance_mut::<u8>(0x5000),
            ptr::without_provenance_mut::<u8>(0x1000),
        );
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

    fn header(ws: &[u64]) -> Vec<u8> {
        message(ws, 0)
    }

    #[test]
    fn a_receiving_pe_applies_checked_messages_and_refused_ones_write_nothing() {
        // Team segment of 2 words (offsets 0..16), heap of 16 words (offsets 16..128), data
        // segment of 4 words.
        let mut pe = FuzzPe::new(1, 4, [2, 16, 4]);
        let data: Vec<u8> = (1..=24).collect();
        // A put of 3 x 8 bytes, 16 apart, at heap offset 32; not acknowledged by itself.
        let reply = pe.receive(AM_PUT, &header(&[2, 8, 3, 32, 16]), Some(&data));
        assert_eq!(reply, Ok(None));
        let heap = pe.memory()[1].to_vec();
        assert_eq!(&heap[32..40], &data[..8]);
        assert_eq!(&heap[48..56], &data[8..16]);
        assert_eq!(&heap[64..72], &data[16..]);
        // The same elements read back by a get request.
        let resp = pe
            .receive(AM_GET_REQ, &header(&[2, 8, 3, 32, 16, 5, 0]), None)
            .expect("in the heap")
            .expect("a response");
        assert_eq!(resp, [message(&[1, 8, 3, 5, 0], 0), data.clone()].concat());
        // Into the team and data segments.
        pe.receive(AM_PUT, &header(&[2, 8, 1, 8, 0]), Some(&data[..8]))
            .expect("in the team segment");
        assert_eq!(&pe.memory()[0][8..], &data[..8]);
        let at = DATA_OFFSET as u64 + 24;
        pe.receive(AM_PUT, &header(&[2, 8, 1, at, 0]), Some(&data[..8]))
            .expect("in the data segment");
        assert_eq!(&pe.memory()[2][24..], &data[..8]);
        // A put with signal, then a flag (neither acknowledged by itself).
        let reply = pe.receive(AM_SIGNAL, &header(&[0, 80, 4, 120, 1, 5]), Some(&data[..4]));
        assert_eq!(reply, Ok(None));
        assert_eq!(&pe.memory()[1][80..84], &data[..4]);
        assert_eq!(
            pe.receive(AM_FLAG, &header(&[0, 0, 0, 120, 2, 3]), Some(&[])),
            Ok(None)
        );
        assert_eq!(pe.memory()[1][120], 5, "max(5, 3)");

        let before: Vec<Vec<u8>> = pe.memory().iter().map(|m| m.to_vec()).collect();
        let refused = [
            (AM_PUT, header(&[2, 8, 3, 112, 16]), Some(&data[..])),
            (AM_PUT, header(&[2, 8, 3, 32, 16]), Some(&data[..23])),
            (AM_PUT, header(&[2, 8, 3, 32, 16]), None),
            (AM_PUT, header(&[2, 8, 3, 32]), Some(&data[..])),
            (AM_PUT, header(&[2, 8, 2, 8, 8]), Some(&data[..16])),
            // Data in the heap, but an unknown signal operation: nothing is written.
            (AM_SIGNAL, header(&[0, 80, 4, 120, 9, 5]), Some(&data[..4])),
            (AM_SIGNAL, header(&[0, 80, 4, 121, 1, 5]), Some(&data[..4])),
            (AM_SIGNAL, header(&[0, 80, 5, 120, 1, 5]), Some(&data[..4])),
            (AM_GET_REQ, header(&[2, 8, 3, 112, 16, 5, 0]), None),
            (AM_ACK, header(&[2, 1]), None),
            (AM_ACK, header(&[9, 1]), None),
            (AM_SYNC, header(&[4, 1]), None),
            (AM_SYNC, header(&[2]), None),
            // A put that names a sender outside the job writes nothing.
            (AM_PUT, header(&[4, 8, 1, 32, 0]), Some(&data[..8])),
            (AM_GET_RESP, header(&[2, 8, 1, 1, 0]), Some(&data[..8])),
        ];
        for (id, h, d) in refused {
            let e = pe.receive(id, &h, d).expect_err("refused");
            assert!(e.starts_with("from PE "), "{e}");
            assert_eq!(pe.memory().map(|m| m.to_vec()).to_vec(), before, "{e}");
        }
        // Acks say how many of the messages sent were handled, never more than were sent; a
        // late (smaller) one changes nothing.
        pe.sent(2, 8);
        pe.sent(2, 8);
        let two = 2 * units(8);
        assert_eq!(pe.unacked(2), two);
        assert_eq!(pe.receive(AM_ACK, &header(&[2, two]), None), Ok(None));
        assert_eq!(pe.unacked(2), 0);
        assert_eq!(pe.receive(AM_ACK, &header(&[2, units(8)]), None), Ok(None));
        assert_eq!(pe.unacked(2), 0);
        assert!(pe.receive(AM_ACK, &header(&[2, two + 1]), None).is_err());
        // A strided get's responses fill its buffer, each element once.
        pe.start_get(3, 4, 3);
        let resp = header(&[3, 4, 2, 1, 1]);
        assert_eq!(pe.receive(AM_GET_RESP, &resp, Some(&data[..8])), Ok(None));
        assert!(
            pe.receive(AM_GET_RESP, &resp, Some(&data[..8])).is_err(),
            "claimed twice"
        );
        assert_eq!(
            pe.receive(AM_GET_RESP, &header(&[3, 4, 1, 1, 0]), Some(&data[8..12])),
            Ok(None)
        );
        let (buf, done) = pe.got().expect("a get");
        assert!(done);
        assert_eq!(buf, [&data[8..12], &data[..8]].concat());
    }

    /// Records of a batch: (offset, bytes) each.
    fn batch(recs: &[(u64, &[u8])]) -> Vec<u8> {
        let mut v = Vec::new();
        for (off, bytes) in recs {
            v.extend_from_slice(&off.to_le_bytes());
            v.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            v.extend_from_slice(bytes);
            v.resize(v.len().next_multiple_of(8), 0);
        }
        v
    }

    #[test]
    fn a_batch_writes_its_records_in_order_and_counts_as_one_message() {
        let mut pe = FuzzPe::new(0, 3, [0, 4, 0]);
        let data = batch(&[(0, &[1; 8]), (8, &[2, 3, 4]), (0, &[5; 8]), (30, &[6, 7])]);
        assert_eq!(pe.receive(AM_BATCH, &header(&[1]), Some(&data)), Ok(None));
        let heap = pe.memory()[1];
        assert_eq!(&heap[0..8], &[5; 8], "the later record wins");
        assert_eq!(&heap[8..12], &[2, 3, 4, 0]);
        assert_eq!(&heap[28..32], &[0, 0, 6, 7]);
        // One message of data.len() units: a sync for it is answered at once, and a batch
        // that asks is answered by itself.
        let one = units(data.len());
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, one]), None),
            Ok(Some(message(&[0, one], 0)))
        );
        let two = one + units(data.len());
        assert_eq!(
            pe.receive(AM_BATCH, &header(&[1, two]), Some(&data)),
            Ok(Some(message(&[0, two], 0)))
        );
    }

    #[test]
    fn batches_are_sent_when_full_and_bounded_across_pes() {
        let mut set = BatchSet::default();
        // The records the sender appends are the ones a receiver parses.
        assert_eq!(set.append(3, 40, &[1, 2, 3]), None);
        assert_eq!(set.append(3, 0, &[4; 8]), None);
        assert_eq!(
            set.remove(3),
            Some(batch(&[(40, &[1, 2, 3]), (0, &[4; 8])]))
        );
        assert_eq!((set.bytes, set.remove(3)), (0, None));
        // One PE's batch is taken out once it reaches BATCH_BYTES: 15 records of 256 B + 16.
        let data = [7u8; COALESCE_MAX];
        let per = RECORD_HEAD + COALESCE_MAX;
        for i in 1..BATCH_BYTES.div_ceil(per) {
            assert_eq!(set.append(1, 0, &data), None, "record {i}");
            assert_eq!(set.bytes, i * per);
        }
        let full = set.append(1, 0, &data).expect("a full batch");
        assert_eq!(
            (full.len(), set.bytes),
            (BATCH_BYTES.div_ceil(per) * per, 0)
        );
        // Across PEs: room until BATCHED_MAX bytes wait, none from there until one goes.
        let mut pe = 0;
        while set.has_room() {
            for _ in 0..BATCH_BYTES / per - 1 {
                assert_eq!(set.append(pe, 8, &data), None);
            }
            pe += 1;
        }
        assert_eq!(pe, BATCHED_MAX.div_ceil((BATCH_BYTES / per - 1) * per));
        assert!(set.bytes >= BATCHED_MAX && set.bytes < BATCHED_MAX + BATCH_BYTES);
        let one = set.remove(0).expect("PE 0's batch");
        assert!(
            set.has_room(),
            "{} bytes wait after {}",
            set.bytes,
            one.len()
        );
        let rest = set.drain();
        assert_eq!((rest.len(), set.bytes, set.has_room()), (pe - 1, 0, true));
    }

    #[test]
    fn a_batch_with_a_bad_record_is_refused_whole() {
        let mut pe = FuzzPe::new(0, 2, [0, 4, 0]);
        let good = batch(&[(0, &[9; 8])]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            // The second record ends past the heap.
            (
                [good.clone(), batch(&[(30, &[1; 3])])].concat(),
                "outside this PE's heap",
            ),
            // A record longer than what is left of the message.
            (
                [
                    &good[..],
                    &8u64.to_le_bytes(),
                    &64u64.to_le_bytes(),
                    &[0; 8],
                ]
                .concat(),
                "bytes left",
            ),
            // A few bytes that are not a record header.
            ([&good[..], &[0; 12]].concat(), "less than a header"),
            // A record of no bytes.
            (batch(&[(0, &[])]), "outside this PE's heap"),
        ];
        for (data, want) in cases {
            let got = pe.receive(AM_BATCH, &header(&[1]), Some(&data));
            assert!(
                got.as_ref().is_err_and(|e| e.contains(want)),
                "{want}: {got:?}"
            );
            assert_eq!(
                pe.memory()[1],
                &[0; 32][..],
                "{want}: a refused batch wrote"
            );
        }
        // From outside the job, or with a header of the wrong length.
        assert!(pe.receive(AM_BATCH, &header(&[2]), Some(&good)).is_err());
        assert!(
            pe.receive(AM_BATCH, &header(&[1, 2, 3]), Some(&good))
                .is_err()
        );
        assert!(pe.receive(AM_BATCH, &header(&[1]), None).is_err());
        assert_eq!(pe.memory()[1], &[0; 32][..]);
    }

    #[test]
    fn counts_are_allocated_per_chunk_at_first_contact() {
        // A job of 100,000 PEs: nothing per PE until one is contacted.
        let n = 100_000;
        let l = Ledger::new(n);
        assert_eq!(l.chunks_in_use(), 0);
        assert_eq!(l.unacked(99_999), 0);
        assert!(l.get(5).is_none(), "a read allocates nothing");
        assert_eq!(l.chunks_in_use(), 0);
        // Sending to PE 5 and hearing from the last PE take two chunks (the last one short).
        assert_eq!(l.count_sent(5, units(8)), units(8));
        assert_eq!(l.note_received(n - 1, 8), None);
        assert_eq!(l.chunks_in_use(), 2);
        assert_eq!(l.unacked(5), units(8));
        assert_eq!(l.get(6).map(|c| c.sent.load(Ordering::Relaxed)), Some(0));
        // An ack from a PE never sent to is refused without allocating; one of 0 is harmless.
        let refused = l.take_ack(&header(&[CHUNK as u64 * 3, 1]));
        assert!(refused.is_err_and(|r| r.what.contains("but 0 were sent")));
        assert!(l.take_ack(&header(&[CHUNK as u64 * 3, 0])).is_ok());
        assert!(
            l.take_ack(&header(&[n as u64, 0])).is_err(),
            "PE {n} is outside the job"
        );
        assert_eq!(l.chunks_in_use(), 2);
        assert!(l.take_ack(&header(&[5, units(8)])).is_ok());
        assert_eq!(l.unacked(5), 0);
        assert_eq!(l.outstanding.load(Ordering::Relaxed), 0);
        // What a chunk costs, and what start-up costs for the whole job.
        assert_eq!(std::mem::size_of::<Counts>(), 56);
        assert!(std::mem::size_of_val(&*l.chunks) <= n.div_ceil(CHUNK) * 24);
    }

    #[test]
    fn a_sync_is_answered_once_the_messages_it_counts_are_handled() {
        let mut pe = FuzzPe::new(0, 3, [0, 8, 0]);
        let word = 7u64.to_le_bytes();
        let put = |pe: &mut FuzzPe, from: u64| {
            pe.receive(AM_PUT, &header(&[from, 8, 1, 0, 0]), Some(&word))
        };
        let (one, two) = (units(8), 2 * units(8));
        // Two puts from PE 1, then its sync for both: answered at once with the count.
        assert_eq!(put(&mut pe, 1), Ok(None));
        assert_eq!(put(&mut pe, 1), Ok(None));
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, two]), None),
            Ok(Some(message(&[0, two], 0)))
        );
        // A sync that overtook its puts (several lanes) is answered by the last of them.
        assert_eq!(pe.receive(AM_SYNC, &header(&[2, two]), None), Ok(None));
        assert_eq!(put(&mut pe, 2), Ok(None));
        assert_eq!(put(&mut pe, 2), Ok(Some(message(&[0, two], 0))));
        assert_eq!(put(&mut pe, 2), Ok(None), "answered once");
        // A put with signal counts as a put; a flag does not.
        let signal = header(&[1, 16, 0, 8, 1, 1]);
        assert_eq!(pe.receive(AM_SIGNAL, &signal, Some(&[])), Ok(None));
        let flag = header(&[1, 16, 0, 8, 2, 1]);
        assert_eq!(pe.receive(AM_FLAG, &flag, Some(&[])), Ok(None));
        let all = two + units(0);
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, all]), None),
            Ok(Some(message(&[0, all], 0)))
        );
        // A sync for what was answered already is answered again (repeats are harmless).
        assert_eq!(
            pe.receive(AM_SYNC, &header(&[1, one]), None),
            Ok(Some(message(&[0, all], 0)))
        );
        // A put that asks for its own ack (one more header word: the count to acknowledge).
        let asking = header(&[1, 8, 1, 0, 0, all + one]);
        assert_eq!(
            pe.receive(AM_PUT, &asking, Some(&word)),
            Ok(Some(message(&[0, all + one], 0)))
        );
        // One that overtook an earlier put: answered by that put.
        let asking = header(&[1, 8, 1, 0, 0, all + 3 * one]);
        assert_eq!(pe.receive(AM_PUT, &asking, Some(&word)), Ok(None));
        assert_eq!(put(&mut pe, 1), Ok(Some(message(&[0, all + 3 * one], 0))));
        // A put with signal may ask too; a flag's extra word is refused.
        let asking = header(&[1, 16, 0, 8, 1, 1, all + 3 * one + units(0)]);
        assert_eq!(
            pe.receive(AM_SIGNAL, &asking, Some(&[])),
            Ok(Some(message(&[0, all + 3 * one + units(0)], 0)))
        );
        let flag = header(&[1, 16, 0, 8, 2, 1, 5]);
        assert!(pe.receive(AM_FLAG, &flag, Some(&[])).is_err());
        assert_eq!(pe.memory()[1][..8], word);
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
