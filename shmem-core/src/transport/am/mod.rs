//! The active-message (AM) protocol between PEs reached through UCX: strided puts and gets
//! packed into messages (one message per up to [`MAX_MSG`] bytes of elements instead of one UCX
//! operation per element), puts with signal, the collectives' flags, batches of small puts, and
//! the counts and acknowledgements that tell `quiet` and `fence` when all of it is done. The
//! receiving PE handles each message in an `AmHandler` of its main worker.
//!
//! # Protocol
//! - **Put.** The sender packs the elements after a header `PUT [from, size, count, offset,
//!   stride]` and sends them; the target checks the header against its heap and the data's
//!   length, scatters the elements into its heap and counts the message as received from
//!   `from`. The source is copied into the message, so it may be reused at once.
//! - **Acknowledgements, on request.** The target does not answer each put: over tcp every
//!   answer is a system call on both sides, on the critical path of a put + flag pipeline.
//!   Both sides count what went from one PE to the other in units of the data's bytes plus
//!   `MSG_UNITS` per message. When the sender needs its messages complete (`quiet`,
//!   `pe_quiet`, a `fence` that must wait, a full window) it sends `SYNC [from, sent]`, and the
//!   target answers `ACK [from, received]` once it has handled `sent` units from it (at once,
//!   when they arrived in order). Counts are totals since start-up, so a late or repeated ack
//!   changes nothing. A UCX flush alone would not do: it completes when a message has left,
//!   not when the target's handler has run. At most [`MAX_UNACKED`] units to one PE are
//!   unacknowledged (about 4 MiB, or 58,000 puts of 8 bytes: what a target that does not
//!   progress can make its sender hold); every `ASK_EVERY` units the sender asks, so that a
//!   long stream of puts seldom waits. Where a quiet found at most two messages sent to a PE
//!   since the last one (put + quiet), the next messages to it carry the ask themselves, as one
//!   more header word (the count to acknowledge once handled): put + quiet is then one message
//!   and its ack, not a put, a `SYNC` and an ack; a run of `EAGER_UNTIL` messages without a
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
//!   [`MAX_MSG`] bytes, at most `GET_WINDOW` at a time; the target checks the request against
//!   its heap and answers on the reply endpoint with `GET_RESP [from, size, count, token, first]`
//!   and the packed elements; the requester's handler checks the response against the slot and
//!   scatters it. The blocking get returns when every element has arrived.
//! - **Run.** Small non-blocking gets from one PE whose offsets step by one stride travel as
//!   one `GET_REQ` whose slot holds each get's destination ([`runs`](mod@runs)); a quiet
//!   waits for them.
//!
//! - **Batch.** Puts of up to [`COALESCE_MAX`] bytes to a PE whose messages arrive in order,
//!   in a stream (see [`coalesces`]), wait in a batch per PE: `BATCH [from]` and records of a
//!   put each (`offset`, `len`, then the bytes padded to a word), at most [`MAX_MSG`] bytes.
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
//! # Files, lowest first
//! - `wire`: the message kinds and header layouts, building and splitting messages, and the
//!   checks of incoming ones (each accepted message becomes a plan that writes only what was
//!   checked);
//! - `ledger`: the counts and acknowledgements per PE, the ordering of its lane, in chunks of
//!   PEs; `batch`: the records of the puts waiting in batches; `get`: a get's slot, which its
//!   responses are checked against and written through;
//! - `state`: the process's one [`State`], set at start-up;
//! - `quiet`: what `quiet` and `fence` ask of the protocol (acknowledged yet? `SYNC`, ordered
//!   lanes, fence epochs);
//! - `send`: what the initiating PE sends (strided puts, puts with signal and flags, get
//!   requests) and the counted send with its window;
//! - `coalesce`: when a small put waits in a batch, and when the batches go;
//! - `runs`: the runs of non-blocking gets, when they go and how a quiet completes them;
//! - `handlers`: the receiving PE's `AmHandler`s; `fuzz`: the same checks and writes on memory
//!   of its own, for the fuzz targets ([`FuzzPe`]);
//! - this file: [`register`] (the state and the handlers, at start-up), and the entry points the
//!   rest of the transport calls, re-exported.
//!
//! Part of the transport layer; uses `progress` (to wait) and `mem` (the offset space's layout and
//! the signal word update).
//!
//! [`MAX_UNACKED`]: ledger::MAX_UNACKED
//! [`COALESCE_MAX`]: batch::COALESCE_MAX

mod batch;
mod coalesce;
mod fuzz;
mod get;
mod handlers;
mod ledger;
mod quiet;
mod runs;
mod send;
mod state;
mod wire;

pub use fuzz::FuzzPe;

pub(crate) use coalesce::{
    batches, coalesces, put_batched, puts_wait, send_batch_of, send_taken, set_coalescing,
};
pub(crate) use quiet::{
    acked_to, all_acked, all_ordered, ask, note_fence, note_quiet, ordered, relist, take_listed,
};
pub(crate) use runs::{get_nbi, runs, runs_active, runs_pending, runs_take, set_runs, wait_landed};
pub(crate) use send::{get, put, put_signal};
pub(crate) use wire::{MAX_MSG, fits};

use crate::error::Result;
use batch::BatchSet;
use handlers::{
    AckHandler, BatchHandler, GetReqHandler, GetRespHandler, PutHandler, SignalHandler, SyncHandler,
};
use ledger::Ledger;
use shmem_ucx::Worker;
use state::{STATE, State};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64};
use wire::{AM_ACK, AM_BATCH, AM_FLAG, AM_GET_REQ, AM_GET_RESP, AM_PUT, AM_SIGNAL, AM_SYNC};

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
        puts_wait: AtomicBool::new(false),
        runs_on: AtomicBool::new(false),
        runs: Mutex::new(get::RunSet::default()),
        runs_pending: AtomicBool::new(false),
        runs_active: AtomicBool::new(false),
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
