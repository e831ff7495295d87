//! `ucp_ep_h`: a connection to a peer worker, with RMA and atomics.

use std::ffi::c_void;
use std::mem;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::request::{Request, complete, ptr_is_ptr, ptr_status};
use crate::rkey::RemoteKey;
use crate::sys;
use crate::worker::WorkerInner;

/// A remote atomic operation (`ucp_atomic_op_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `*remote += value`.
    Add,
    /// `*remote &= value`.
    And,
    /// `*remote |= value`.
    Or,
    /// `*remote ^= value`.
    Xor,
    /// `*remote = value` (fetching only).
    Swap,
    /// `if *remote == compare { *remote = value }` (fetching only).
    Cswap,
}

impl AtomicOp {
    #[inline]
    fn to_sys(self) -> sys::ucp_atomic_op_t {
        match self {
            AtomicOp::Add => sys::UCP_ATOMIC_OP_ADD,
            AtomicOp::And => sys::UCP_ATOMIC_OP_AND,
            AtomicOp::Or => sys::UCP_ATOMIC_OP_OR,
            AtomicOp::Xor => sys::UCP_ATOMIC_OP_XOR,
            AtomicOp::Swap => sys::UCP_ATOMIC_OP_SWAP,
            AtomicOp::Cswap => sys::UCP_ATOMIC_OP_CSWAP,
        }
    }
}

/// Width of the remote word an atomic operates on (UCX supports 32 and 64 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicSize {
    /// A 4-byte word (operands are truncated to their low 32 bits).
    U32,
    /// An 8-byte word.
    U64,
}

/// `ucp_dt_make_contig(size)`: a contiguous datatype of `size`-byte elements.
#[inline]
const fn dt_make_contig(size: usize) -> sys::ucp_datatype_t {
    ((size as sys::ucp_datatype_t) << sys::UCP_DATATYPE_SHIFT)
        | sys::UCP_DATATYPE_CONTIG as sys::ucp_datatype_t
}

/// Owner of the raw endpoint. The [`Endpoint`] and every [`RemoteKey`] unpacked through it
/// hold an `Arc` of this, so the endpoint is closed only after its last key is destroyed
/// (UCX requires `ucp_rkey_destroy` before the endpoint goes away), and the worker (held
/// here) outlives both.
#[derive(Debug)]
pub(crate) struct EpInner {
    /// NULL once closed by [`Endpoint::close`].
    ep: sys::ucp_ep_h,
    worker: Arc<WorkerInner>,
    /// Whether UCX emulates this endpoint's RMA with active messages, and how many lanes it
    /// has, read at the first put (see [`Endpoint::rma_over_am`]).
    lanes: OnceLock<Lanes>,
}

// SAFETY: a `ucp_ep_h` belongs to its worker, not to a thread. It is closed once (the
// handle is swapped for NULL under `&mut self`, in `close_with`), only when no Endpoint or
// RemoteKey shares it any more, and while its worker is alive (`worker`), so whichever
// thread drops the last owner closes a live endpoint of a live worker.
unsafe impl Send for EpInner {}
// SAFETY: `&EpInner` only reads the two handles; calls through them run under the worker's
// lock in thread mode Multi, and other modes carry the promise of the unsafe
// `create_worker_unsynchronized`'s caller (see the Sync impl of WorkerInner).
unsafe impl Sync for EpInner {}

impl EpInner {
    /// Closes the endpoint (`ucp_ep_close_nbx` with `flags`) and waits; NULLs `self.ep`.
    fn close_with(&mut self, flags: u32) -> Result<()> {
        let ep = mem::replace(&mut self.ep, ptr::null_mut());
        if ep.is_null() {
            return Ok(());
        }
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_FLAGS,
            flags,
            ..Default::default()
        };
        // SAFETY: `ep` is live and closed exactly once (it was swapped out for NULL above);
        // no RemoteKey of it is left (we are its only owner); its worker is alive.
        unsafe {
            let ptr = sys::ucp_ep_close_nbx(ep, &param);
            complete(self.worker.raw, ptr, "ucp_ep_close_nbx")
        }
    }
}

impl Drop for EpInner {
    fn drop(&mut self) {
        // An endpoint that was not closed with `Endpoint::close`: force close, which needs
        // no answer from the peer and so cannot hang on a dead one. Errors cannot be
        // reported from Drop.
        let _ = self.close_with(sys::UCP_EP_CLOSE_FLAG_FORCE);
    }
}

/// A UCP endpoint (`ucp_ep_h`): a connection from a [`Worker`](crate::Worker) to a peer
/// worker, made by [`Worker::connect`](crate::Worker::connect).
///
/// Keeps its worker alive. Close it with [`close`](Endpoint::close), which flushes and
/// tells the peer; an endpoint that is just dropped is closed in force mode (no
/// flush, no handshake; outstanding operations are cancelled). Remote keys unpacked
/// through the endpoint keep it open: it is closed when the `Endpoint` and all of its
/// [`RemoteKey`]s are gone. `Send + Sync` under the conditions described on
/// [`Worker`](crate::Worker).
///
/// # RMA safety
/// The RMA and atomic methods are `unsafe`: the caller guarantees that
/// `[remote_addr, remote_addr + len)` lies inside the peer region described by `rkey` and
/// that the peer keeps that region mapped until the operation is complete, that `rkey` was
/// unpacked through this endpoint (checked: a key of another endpoint is an
/// `UCS_ERR_INVALID_PARAM` error), and that the local pointer is valid for `len` bytes
/// (for reads, or for writes in the `get` case) for as long as the operation needs it.
#[derive(Debug)]
pub struct Endpoint {
    ep: sys::ucp_ep_h,
    worker: sys::ucp_worker_h,
    inner: Arc<EpInner>,
}

// SAFETY: `ep` and `worker` are copies of the handles owned through `inner` (kept for the
// hot path) and live no longer than it, which keeps the endpoint open and the worker alive;
// so Endpoint is exactly as Send as EpInner.
unsafe impl Send for Endpoint {}
// SAFETY: as for Send, with EpInner's Sync argument: every `&self` method is a UCX call on
// the endpoint or worker, locked by UCX in thread mode Multi (or serialized by the caller
// of the unsafe `create_worker_unsynchronized`).
unsafe impl Sync for Endpoint {}

impl Endpoint {
    pub(crate) fn new(ep: sys::ucp_ep_h, worker: &Arc<WorkerInner>) -> Endpoint {
        Endpoint {
            ep,
            worker: worker.raw,
            inner: Arc::new(EpInner {
                ep,
                worker: Arc::clone(worker),
                lanes: OnceLock::new(),
            }),
        }
    }

    /// Whether UCX carries this endpoint's puts and gets as active messages because no
    /// transport to the peer has remote memory access (tcp): the peer's progress carries
    /// them out, and it answers every put with a completion message. Read once, at the first
    /// call (the first put or flush through the endpoint), from UCX's description of the
    /// endpoint's lanes (`ucp_ep_print_info`, about 20-40 us: lanes, but no `put[..]` protocol
    /// line); `false` where that text says otherwise or cannot be read.
    /// [`Worker::flush`](crate::Worker::flush) and [`flush`](Endpoint::flush) use it.
    pub fn rma_over_am(&self) -> bool {
        self.lanes().rma_over_am
    }

    /// Whether everything this endpoint carries (UCX's emulated puts, gets and atomics, and
    /// active messages) travels on one lane, in the order it was sent: RMA is emulated
    /// ([`rma_over_am`](Endpoint::rma_over_am)) and UCX made a single lane to the peer (tcp on
    /// one device), and the user did not ask for several eager lanes (`UCX_MAX_EAGER_LANES`).
    /// The peer's worker then handles them in that order, so an operation sent after another
    /// needs no flush in between to land after it. Read once, as `rma_over_am`.
    pub fn one_ordered_lane(&self) -> bool {
        let lanes = self.lanes();
        lanes.rma_over_am && lanes.count == 1 && !several_eager_lanes()
    }

    fn lanes(&self) -> Lanes {
        *self.inner.lanes.get_or_init(|| {
            // SAFETY: the endpoint is alive while `self` is; `ucp_ep_print_info` takes the
            // worker's lock, so any thread may call it.
            let info = unsafe { print_info(self.ep) };
            info.map_or(Lanes::UNKNOWN, |info| lanes_of(&info))
        })
    }

    /// Unpacks a peer's packed remote key (`ucp_ep_rkey_unpack`), from
    /// [`MemHandle::pack_rkey`](crate::MemHandle::pack_rkey) on the memory's owner.
    ///
    /// The key keeps this endpoint open until it is dropped. An empty slice is rejected.
    ///
    /// # Safety
    /// `packed` must be the unmodified bytes of a key packed by `pack_rkey` (in this or
    /// another process using the same UCX version). UCX parses the buffer without knowing
    /// its length and trusts its content: other bytes make it read out of bounds (seen
    /// here: a 64 KiB buffer of `0xff` crashes UCX 1.13.1 with SIGSEGV).
    pub unsafe fn unpack_rkey(&self, packed: &[u8]) -> Result<RemoteKey> {
        if packed.is_empty() {
            return Err(Error::with_detail(
                "ucp_ep_rkey_unpack",
                sys::UCS_ERR_INVALID_PARAM,
                "empty packed remote key",
            ));
        }
        let mut rkey: sys::ucp_rkey_h = ptr::null_mut();
        // SAFETY: the endpoint is alive; `packed` is a genuine packed key (caller's
        // contract), read only during the call; `rkey` is a valid out-pointer.
        let status = unsafe { sys::ucp_ep_rkey_unpack(self.ep, packed.as_ptr().cast(), &mut rkey) };
        crate::error::check("ucp_ep_rkey_unpack", status)?;
        Ok(RemoteKey::new(rkey, &self.inner))
    }

    /// Waits until every operation issued on this endpoint is complete, remote completion
    /// included (`ucp_ep_flush_nbx`, then progress until done).
    ///
    /// Where UCX emulates the endpoint's RMA ([`rma_over_am`](Endpoint::rma_over_am): tcp),
    /// this is the flush of the endpoint's whole worker ([`Worker::flush`](crate::Worker::flush)),
    /// which completes the other endpoints' operations too: UCX's endpoint flush always
    /// flushes the tcp lane, a zero-length put and its acknowledgement after the put's own
    /// completion, while the worker's flush waits for that completion and then finds nothing
    /// left. (8 B put + `pe_quiet` between 2 PEs over tcp: 17.6 - 20.7 us with the endpoint's
    /// flush, 9.7 - 11.8 with the worker's, as put + `quiet`.)
    pub fn flush(&self) -> Result<()> {
        if self.rma_over_am() {
            return self.inner.worker.flush();
        }
        let param = sys::ucp_request_param_t::default();
        // SAFETY: endpoint and worker are alive; `param` selects nothing (mask 0); the
        // result goes to `complete` untouched.
        unsafe {
            let ptr = sys::ucp_ep_flush_nbx(self.ep, &param);
            complete(self.worker, ptr, "ucp_ep_flush_nbx")
        }
    }

    /// Starts a flush of this endpoint without waiting: `None` if it completed at once,
    /// else a [`Request`] to poll or [`wait`](Request::wait) on.
    ///
    /// Used at wire-up: start a flush to every peer, then progress until all are done, so
    /// that each connection is established while all peers are progressing.
    pub fn flush_start(&self) -> Result<Option<Request>> {
        let param = sys::ucp_request_param_t::default();
        // SAFETY: endpoint and worker are alive; `param` selects nothing; the result is
        // handed to Request untouched, and the request keeps the worker alive.
        unsafe {
            let ptr = sys::ucp_ep_flush_nbx(self.ep, &param);
            Request::from_status_ptr(&self.inner.worker, ptr, "ucp_ep_flush_nbx")
        }
    }

    /// Closes the endpoint gracefully (`ucp_ep_close_nbx` in flush mode) and waits.
    ///
    /// If [`RemoteKey`]s unpacked through it are still alive, the endpoint cannot be
    /// closed yet: it is flushed, and this returns an `UCS_ERR_BUSY` error; the endpoint
    /// is then force-closed when the last key is dropped. Drop keys first.
    pub fn close(self) -> Result<()> {
        let Endpoint { inner, .. } = self;
        match Arc::try_unwrap(inner) {
            Ok(mut inner) => inner.close_with(0),
            Err(shared) => {
                let flushed = Endpoint {
                    ep: shared.ep,
                    worker: shared.worker.raw,
                    inner: shared,
                }
                .flush();
                flushed?;
                Err(Error::with_detail(
                    "ucp_ep_close_nbx",
                    sys::UCS_ERR_BUSY,
                    "remote keys unpacked through this endpoint are still alive; \
                     it will be force-closed when the last one is dropped",
                ))
            }
        }
    }

    /// Tells the worker that a put through this endpoint is about to start, where UCX emulates
    /// it (see [`Worker::flush`](crate::Worker::flush)).
    #[inline]
    fn note_put(&self) {
        if self.rma_over_am() {
            self.inner.worker.note_am_put();
        }
    }

    /// Fails with `UCS_ERR_INVALID_PARAM` unless `rkey` was unpacked through this endpoint.
    #[inline]
    fn check_rkey(&self, rkey: &RemoteKey, op: &'static str) -> Result<()> {
        if rkey.endpoint_is(&self.inner) {
            Ok(())
        } else {
            Err(Error::with_detail(
                op,
                sys::UCS_ERR_INVALID_PARAM,
                "remote key was unpacked through another endpoint",
            ))
        }
    }

    /// Writes `len` bytes from `local` to `remote_addr` at the peer (`ucp_put_nbx`) and
    /// waits until `local` may be reused (local completion; the data may not be visible
    /// at the peer yet: [`flush`](Endpoint::flush) for that).
    ///
    /// # Safety
    /// See "RMA safety" on [`Endpoint`]: `local` readable for `len` bytes,
    /// `[remote_addr, remote_addr + len)` inside the region of `rkey`.
    #[inline]
    pub unsafe fn put(
        &self,
        local: *const u8,
        len: usize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        self.check_rkey(rkey, "ucp_put_nbx")?;
        self.note_put();
        let param = sys::ucp_request_param_t::default();
        // SAFETY: endpoint, worker and key are alive; the buffers are valid (caller's
        // contract) and `local` is not released before `complete` returns.
        unsafe {
            let ptr = sys::ucp_put_nbx(self.ep, local.cast(), len, remote_addr, rkey.raw(), &param);
            complete(self.worker, ptr, "ucp_put_nbx")
        }
    }

    /// Starts writing `len` bytes from `local` to `remote_addr` at the peer and returns at
    /// once (`ucp_put_nbx`; a returned request is freed at once). Completion is observed
    /// by a later [`Worker::flush`](crate::Worker::flush) or [`Endpoint::flush`].
    ///
    /// # Safety
    /// As for [`put`](Endpoint::put), and `local` must stay valid and unmodified until the
    /// flush that completes the operation has returned.
    #[inline]
    pub unsafe fn put_nbi(
        &self,
        local: *const u8,
        len: usize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        self.check_rkey(rkey, "ucp_put_nbx")?;
        self.note_put();
        let param = sys::ucp_request_param_t::default();
        // SAFETY: as for `put`; the caller keeps `local` alive until a flush.
        let ptr = unsafe {
            sys::ucp_put_nbx(self.ep, local.cast(), len, remote_addr, rkey.raw(), &param)
        };
        // SAFETY: `ptr` is the untouched result of the call above.
        unsafe { release(ptr, "ucp_put_nbx") }
    }

    /// Reads `len` bytes at `remote_addr` at the peer into `local` (`ucp_get_nbx`) and
    /// waits until they have arrived.
    ///
    /// # Safety
    /// See "RMA safety" on [`Endpoint`]: `local` writable for `len` bytes (and not
    /// accessed by others meanwhile), `[remote_addr, remote_addr + len)` inside the region
    /// of `rkey`.
    #[inline]
    pub unsafe fn get(
        &self,
        local: *mut u8,
        len: usize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        self.check_rkey(rkey, "ucp_get_nbx")?;
        let param = sys::ucp_request_param_t::default();
        // SAFETY: as for `put`, with `local` writable; it is filled before `complete`
        // returns.
        unsafe {
            let ptr = sys::ucp_get_nbx(self.ep, local.cast(), len, remote_addr, rkey.raw(), &param);
            complete(self.worker, ptr, "ucp_get_nbx")
        }
    }

    /// Starts reading `len` bytes at `remote_addr` at the peer into `local` and returns at
    /// once (`ucp_get_nbx`; a returned request is freed at once). The data is in `local`
    /// after a later [`Worker::flush`](crate::Worker::flush) or [`Endpoint::flush`].
    ///
    /// # Safety
    /// As for [`get`](Endpoint::get), and `local` must stay valid, and not be accessed,
    /// until the flush that completes the operation has returned.
    #[inline]
    pub unsafe fn get_nbi(
        &self,
        local: *mut u8,
        len: usize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        self.check_rkey(rkey, "ucp_get_nbx")?;
        let param = sys::ucp_request_param_t::default();
        // SAFETY: as for `get`; the caller keeps `local` alive until a flush.
        let ptr = unsafe {
            sys::ucp_get_nbx(self.ep, local.cast(), len, remote_addr, rkey.raw(), &param)
        };
        // SAFETY: `ptr` is the untouched result of the call above.
        unsafe { release(ptr, "ucp_get_nbx") }
    }

    /// A non-fetching atomic (`ucp_atomic_op_nbx` without reply buffer) on the word at
    /// `remote_addr`; waits for local completion (UCX 1.13 reads the operand until then).
    /// Only `Add`, `And`, `Or` and `Xor`: `Swap` and `Cswap` are `UCS_ERR_INVALID_PARAM`
    /// (use [`atomic_fetch`](Endpoint::atomic_fetch)). For `U32`, `value` is truncated.
    ///
    /// # Safety
    /// See "RMA safety" on [`Endpoint`]: `remote_addr` is a naturally aligned word of
    /// `size` inside the region of `rkey`.
    #[inline]
    pub unsafe fn atomic_post(
        &self,
        op: AtomicOp,
        value: u64,
        size: AtomicSize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        if matches!(op, AtomicOp::Swap | AtomicOp::Cswap) {
            return Err(Error::with_detail(
                "ucp_atomic_op_nbx",
                sys::UCS_ERR_INVALID_PARAM,
                "swap and compare-swap need a reply buffer: use atomic_fetch",
            ));
        }
        self.check_rkey(rkey, "ucp_atomic_op_nbx")?;
        // SAFETY: forwarded contract.
        unsafe {
            match size {
                AtomicSize::U32 => self.amo_post(op.to_sys(), value as u32, remote_addr, rkey),
                AtomicSize::U64 => self.amo_post(op.to_sys(), value, remote_addr, rkey),
            }
        }
    }

    /// A fetching atomic (`ucp_atomic_op_nbx` with reply buffer) on the word at
    /// `remote_addr`; waits, and returns the word's previous value (zero-extended for
    /// `U32`). `compare` is used by `Cswap` only (`value` is stored if the word equals
    /// `compare`). For `U32`, `value` and `compare` are truncated.
    ///
    /// Fetching `And`, `Or` and `Xor` are carried out as a compare-and-swap loop: UCX
    /// 1.13.1's own versions compute `old OP old` instead of `old OP value` over the
    /// self, sysv and posix transports (see the `fetching_bitwise_ops` test).
    ///
    /// # Safety
    /// See "RMA safety" on [`Endpoint`]: `remote_addr` is a naturally aligned word of
    /// `size` inside the region of `rkey`.
    #[inline]
    pub unsafe fn atomic_fetch(
        &self,
        op: AtomicOp,
        value: u64,
        compare: u64,
        size: AtomicSize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<u64> {
        self.check_rkey(rkey, "ucp_atomic_op_nbx")?;
        // SAFETY: forwarded contract (the caller's, for every arm).
        unsafe {
            match op {
                // ucp_atomic_op_nbx's CSWAP reads the compare value from `buffer` and the
                // new value from the reply buffer, which then receives the old value
                // (ucp.h, "Atomic Operations Semantic": Result=Y; if (X==Y) then Y=Z,
                // with X=buffer, Z=reply_buffer).
                AtomicOp::Cswap => self.fetch_sized(
                    sys::UCP_ATOMIC_OP_CSWAP,
                    compare,
                    value,
                    size,
                    remote_addr,
                    rkey,
                ),
                AtomicOp::Add | AtomicOp::Swap => {
                    self.fetch_sized(op.to_sys(), value, 0, size, remote_addr, rkey)
                }
                AtomicOp::And => self.fetch_by_cswap(|old| old & value, size, remote_addr, rkey),
                AtomicOp::Or => self.fetch_by_cswap(|old| old | value, size, remote_addr, rkey),
                AtomicOp::Xor => self.fetch_by_cswap(|old| old ^ value, size, remote_addr, rkey),
            }
        }
    }

    /// Fetching atomic of the given width with `buffer = operand` and the reply buffer
    /// initialized to `reply`; returns the reply buffer's final value, zero-extended.
    ///
    /// # Safety
    /// As for [`atomic_fetch`](Endpoint::atomic_fetch).
    #[inline]
    unsafe fn fetch_sized(
        &self,
        opcode: sys::ucp_atomic_op_t,
        operand: u64,
        reply: u64,
        size: AtomicSize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<u64> {
        // SAFETY: forwarded contract.
        unsafe {
            match size {
                AtomicSize::U32 => self
                    .amo_fetch(opcode, operand as u32, reply as u32, remote_addr, rkey)
                    .map(u64::from),
                AtomicSize::U64 => self.amo_fetch(opcode, operand, reply, remote_addr, rkey),
            }
        }
    }

    /// `old = *remote; *remote = update(old); old` as a compare-and-swap loop. The first
    /// guess is 0, so a word that holds 0 takes one round trip, others usually two.
    ///
    /// # Safety
    /// As for [`atomic_fetch`](Endpoint::atomic_fetch).
    #[inline(never)]
    unsafe fn fetch_by_cswap(
        &self,
        update: impl Fn(u64) -> u64,
        size: AtomicSize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<u64> {
        let mask = match size {
            AtomicSize::U32 => u64::from(u32::MAX),
            AtomicSize::U64 => u64::MAX,
        };
        let mut guess = 0u64;
        loop {
            let new = update(guess) & mask;
            // SAFETY: forwarded contract.
            let seen = unsafe {
                self.fetch_sized(
                    sys::UCP_ATOMIC_OP_CSWAP,
                    guess,
                    new,
                    size,
                    remote_addr,
                    rkey,
                )?
            };
            if seen == guess {
                return Ok(seen);
            }
            guess = seen;
        }
    }

    /// Non-fetching atomic of width `T` (u32 or u64).
    ///
    /// # Safety
    /// As for [`atomic_post`](Endpoint::atomic_post).
    #[inline]
    unsafe fn amo_post<T: Copy>(
        &self,
        opcode: sys::ucp_atomic_op_t,
        operand: T,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE,
            datatype: dt_make_contig(mem::size_of::<T>()),
            ..Default::default()
        };
        // SAFETY: endpoint, worker and key are alive; the remote word is valid (caller's
        // contract); `operand` lives on this frame until `complete` has returned, as UCX
        // 1.13 requires for non-fetching atomics; count is 1 as UCX requires.
        unsafe {
            let ptr = sys::ucp_atomic_op_nbx(
                self.ep,
                opcode,
                (&raw const operand).cast::<c_void>(),
                1,
                remote_addr,
                rkey.raw(),
                &param,
            );
            complete(self.worker, ptr, "ucp_atomic_op_nbx")
        }
    }

    /// Fetching atomic of width `T` (u32 or u64): returns the reply buffer's final value.
    ///
    /// # Safety
    /// As for [`atomic_fetch`](Endpoint::atomic_fetch).
    #[inline]
    unsafe fn amo_fetch<T: Copy>(
        &self,
        opcode: sys::ucp_atomic_op_t,
        operand: T,
        reply: T,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<T> {
        let mut reply = reply;
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER,
            datatype: dt_make_contig(mem::size_of::<T>()),
            reply_buffer: (&raw mut reply).cast::<c_void>(),
            ..Default::default()
        };
        // SAFETY: as for `amo_post`; `reply` also lives on this frame, is not touched by us
        // until `complete` has returned, and is written by UCX only until then.
        unsafe {
            let ptr = sys::ucp_atomic_op_nbx(
                self.ep,
                opcode,
                (&raw const operand).cast::<c_void>(),
                1,
                remote_addr,
                rkey.raw(),
                &param,
            );
            complete(self.worker, ptr, "ucp_atomic_op_nbx")?;
        }
        Ok(reply)
    }

    /// Starts an atomic add of `value` to the word at `remote_addr` and returns at once. UCX
    /// carries it out as a fetching add whose reply (discarded) completes it: until then it
    /// counts in [`atomics_in_flight`], and the process's waits complete it. Over transports
    /// where a non-fetching atomic is complete at the target only after a flush (tcp: the flush
    /// sends a zero-length put and waits for its acknowledgement, a second exchange after the
    /// atomic's own), the reply alone says the add is done; where atomics are native (RDMA),
    /// the fetching form costs the same.
    ///
    /// # Safety
    /// See "RMA safety" on [`Endpoint`]: `remote_addr` is a naturally aligned word of `size`
    /// inside the region of `rkey`.
    pub unsafe fn atomic_add_nbi(
        &self,
        value: u64,
        size: AtomicSize,
        remote_addr: u64,
        rkey: &RemoteKey,
    ) -> Result<()> {
        self.check_rkey(rkey, "ucp_atomic_op_nbx")?;
        // Operand and reply buffer, owned by the operation until it completes.
        let words = Box::into_raw(Box::new([value, 0u64]));
        let bytes = match size {
            AtomicSize::U32 => 4,
            AtomicSize::U64 => 8,
        };
        let param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE
                | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER
                | sys::UCP_OP_ATTR_FIELD_CALLBACK
                | sys::UCP_OP_ATTR_FIELD_USER_DATA,
            datatype: dt_make_contig(bytes),
            // The box's second word.
            reply_buffer: words.cast::<u64>().wrapping_add(1).cast::<c_void>(),
            cb: sys::ucp_request_param_t__bindgen_ty_1 {
                send: Some(atomic_done),
            },
            user_data: words.cast(),
            ..Default::default()
        };
        // Counted before UCX may complete it (on another thread that progresses the worker).
        ATOMICS_IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        // SAFETY: endpoint, worker and key are alive; the remote word is valid (caller's
        // contract). The operand (the box's first word, little-endian, so its low half for
        // `U32`) and the reply buffer stay allocated until the operation is done: freed below
        // if it completed (or failed) at once, else by `atomic_done`, which UCX calls exactly
        // once for a returned request.
        let ptr = unsafe {
            sys::ucp_atomic_op_nbx(
                self.ep,
                sys::UCP_ATOMIC_OP_ADD,
                words.cast::<c_void>(),
                1,
                remote_addr,
                rkey.raw(),
                &param,
            )
        };
        if ptr_is_ptr(ptr) {
            return Ok(());
        }
        ATOMICS_IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
        // SAFETY: no request exists, so the callback will not run: the box is ours again.
        drop(unsafe { Box::from_raw(words) });
        if ptr.is_null() {
            Ok(())
        } else {
            Err(Error::from_status("ucp_atomic_op_nbx", ptr_status(ptr)))
        }
    }

    /// The raw `ucp_ep_h`, valid while this `Endpoint` lives.
    #[inline]
    pub fn raw(&self) -> sys::ucp_ep_h {
        self.ep
    }
}

/// Atomics started by [`Endpoint::atomic_add_nbi`] that have not completed yet.
static ATOMICS_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// How many atomics started by [`Endpoint::atomic_add_nbi`] in this process have not
/// completed yet; a quiet waits (progressing) until this is zero.
pub fn atomics_in_flight() -> usize {
    ATOMICS_IN_FLIGHT.load(Ordering::Acquire)
}

/// Completion callback of [`Endpoint::atomic_add_nbi`]: frees the operand and reply buffer
/// and the request. A failure is a failed transfer: the process cannot go on.
unsafe extern "C" fn atomic_done(
    request: *mut c_void,
    status: sys::ucs_status_t,
    user: *mut c_void,
) {
    // SAFETY: `user` is the box leaked by `atomic_add_nbi` for exactly this request; UCX calls
    // this callback once per request.
    drop(unsafe { Box::from_raw(user.cast::<[u64; 2]>()) });
    // SAFETY: the completed request this callback is for, owned by nobody else.
    unsafe { sys::ucp_request_free(request) };
    if status != sys::UCS_OK {
        // One write of the whole line, so that it does not mix with other PEs' messages.
        let line = format!(
            "shmem-ucx: an atomic add failed in UCX: {}\n",
            Error::from_status("ucp_atomic_op_nbx", status)
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        std::process::abort();
    }
    ATOMICS_IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
}

/// For the `*_nbi` calls: maps an error to `Err` and gives a returned request back to UCX
/// at once (the operation goes on; a flush observes its completion).
///
/// # Safety
/// `ptr` must be the untouched result of a `*_nbx` call, not used afterwards.
#[inline]
unsafe fn release(ptr: sys::ucs_status_ptr_t, op: &'static str) -> Result<()> {
    if ptr.is_null() {
        Ok(())
    } else if ptr_is_ptr(ptr) {
        // SAFETY: `ptr` is a request owned by nobody else (caller's contract); UCX frees
        // it when the operation completes.
        unsafe { sys::ucp_request_free(ptr) };
        Ok(())
    } else {
        Err(Error::from_status(op, ptr_status(ptr)))
    }
}

/// UCX's description of endpoint `ep` (`ucp_ep_print_info`), or `None` if it could not be
/// captured.
///
/// # Safety
/// `ep` must be a live endpoint of a live worker.
unsafe fn print_info(ep: sys::ucp_ep_h) -> Option<String> {
    let mut buf: *mut libc::c_char = ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: both out-pointers are valid; the stream owns `buf` until fclose.
    let stream = unsafe { libc::open_memstream(&mut buf, &mut size) };
    if stream.is_null() {
        return None;
    }
    // SAFETY: `ep` is live (caller's contract); `stream` is an open stream, the same C
    // `FILE` that the bindings declare.
    unsafe { sys::ucp_ep_print_info(ep, stream.cast()) };
    // SAFETY: `stream` is open and closed once; afterwards `buf` holds the NUL-terminated
    // text (or is null) and belongs to us.
    let closed = unsafe { libc::fclose(stream) };
    if buf.is_null() {
        return None;
    }
    let text = (closed == 0).then(|| {
        // SAFETY: after a successful fclose, `buf` is the stream's NUL-terminated text.
        let c = unsafe { std::ffi::CStr::from_ptr(buf) };
        c.to_string_lossy().into_owned()
    });
    // SAFETY: `buf` was allocated by open_memstream with malloc and is freed once.
    unsafe { libc::free(buf.cast()) };
    text
}

/// What UCX's description of an endpoint says about its lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lanes {
    /// RMA is emulated with active messages: the text lists lanes but no RMA protocol line
    /// (`put[lane]: ...`, `get[lane]: ...`), which UCX prints for each lane that does remote
    /// memory access.
    rma_over_am: bool,
    /// How many lanes it lists.
    count: usize,
}

impl Lanes {
    /// Nothing could be read: RMA taken as native, lanes unknown.
    const UNKNOWN: Lanes = Lanes {
        rma_over_am: false,
        count: 0,
    };
}

/// Reads UCX's description of an endpoint (`ucp_ep_print_info`).
fn lanes_of(info: &str) -> Lanes {
    let mut count = 0;
    let mut rma = false;
    for line in info.lines() {
        let text = line.trim_start_matches(['#', ' ', '\t']);
        if text.starts_with("lane[") {
            count += 1;
        } else if ["put[", "get[", "put:", "get:"]
            .iter()
            .any(|p| text.starts_with(p))
        {
            rma = true;
        }
    }
    Lanes {
        rma_over_am: count > 0 && !rma,
        count,
    }
}

/// Whether the user asked UCX for more than one eager lane (`UCX_MAX_EAGER_LANES` above 1):
/// multi-fragment messages may then be spread over several lanes.
fn several_eager_lanes() -> bool {
    static SEVERAL: OnceLock<bool> = OnceLock::new();
    *SEVERAL.get_or_init(|| {
        std::env::var("UCX_MAX_EAGER_LANES")
            .ok()
            .is_some_and(|v| v.trim().parse::<u32>().map_or(true, |n| n > 1))
    })
}

#[cfg(test)]
mod tests {
    use super::lanes_of;

    fn rma_emulated(info: &str) -> bool {
        lanes_of(info).rma_over_am
    }

    #[test]
    fn lanes_without_rma_protocols_are_emulated() {
        // UCX 1.13.1, `UCX_TLS=tcp`.
        let tcp = "#\n# UCP endpoint \n#\n#               peer: <no debug data>\n\
#                 lane[0]:  0:tcp/lo.0 md[0]                -> md[0]/tcp/sysdev[255] am am_bw#0 wireup\n\
#\n#                  rma_bw: mds #\n#\n";
        assert!(rma_emulated(tcp));
        assert_eq!(lanes_of(tcp).count, 1);
        // `UCX_TLS=sm`: RMA on both lanes.
        let sm = "#\n# UCP endpoint \n#\n\
#                 lane[0]:  0:sysv/memory.0 md[0]           -> md[0]/sysv/sysdev[255] amo#0 am am_bw#0\n\
#                 lane[1]:  1:posix/memory.0 md[1]          -> md[1]/posix/sysdev[255] amo#1\n\
#\n#                  put[0]: 0..<short>..4294967296..<bcopy>..(inf)\n\
#                  get[0]: 0..<bcopy>..(inf)\n#                  rma_bw: mds #\n";
        assert!(!rma_emulated(sm));
        assert_eq!(lanes_of(sm).count, 2);
        // A protocol line without a lane index (another UCX version's format): not emulated.
        assert!(!rma_emulated(
            "#  lane[0]:  0:rc_mlx5/mlx5_0:1.0 md[0] -> md[0]/ib rma_bw#0\n#  put: 0..<short>..(inf)\n"
        ));
        // Text without lanes says nothing: not emulated.
        assert!(!rma_emulated(""));
        assert!(!rma_emulated("# UCP endpoint\n"));
    }
}
