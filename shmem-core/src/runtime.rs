//! The process-wide runtime: UCX resources, the peer table and the symmetric heap.
//!
//! Where does a put to a peer on this node happen? In [`Runtime::put_bytes`]: when the peer's heap
//! is mapped into this process (`ucp_rkey_ptr` succeeded at start-up) it is a `memcpy` into
//! `Peer::direct`; otherwise it is a UCX `ucp_put_nbx` on the peer's endpoint.

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::Allocator;
use crate::statics;
use crate::sync::{self, SyncState};
use shmem_ucx::{Context, ContextParams, Endpoint, MemHandle, RemoteKey, ThreadMode, Worker};
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// The published runtime; null before `init` and after finalize.
static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(ptr::null_mut());
/// Life cycle of the process: one `init`, one finalize.
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
const UNINIT: u8 = 0;
const LIVE: u8 = 1;
const FINALIZED: u8 = 2;

/// Heap alignment of every symmetric object: a cache line, so that objects never share one.
pub(crate) const OBJECT_ALIGN: usize = 64;
const PAGE: usize = 4096;

/// The runtime, or a panic that tells the user to call `init` first.
#[inline]
pub(crate) fn runtime() -> &'static Runtime {
    let p = RUNTIME.load(Ordering::Acquire);
    if p.is_null() {
        not_initialized();
    }
    // SAFETY: a non-null pointer was published by `init` from a leaked Box and stays valid until the
    // `World` is dropped, which unpublishes it before freeing; using symmetric objects concurrently
    // with dropping the `World` is documented as a usage error, as in OpenSHMEM.
    unsafe { &*p }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn not_initialized() -> ! {
    let why = if STATE.load(Ordering::Acquire) == FINALIZED {
        "the World was already dropped (finalized)"
    } else {
        "call shmem_core::init() first"
    };
    panic!("shmem: symmetric memory used before the runtime is initialized: {why}")
}

/// Where each part of the symmetric heap lives, as byte offsets from the heap base. Identical on
/// every PE because every PE runs the same program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeapLayout {
    /// Start of the user heap (`World::alloc`).
    pub(crate) user: usize,
    /// Size of the user heap.
    pub(crate) user_len: usize,
    /// Total mapped bytes.
    pub(crate) total: usize,
}

/// UCX state for a peer reached through the network (or cma/tcp on this node).
struct UcxPeer {
    // Field order is drop order: the rkey goes before its endpoint.
    rkey: RemoteKey,
    ep: Endpoint,
}

/// One PE as seen from this process.
pub(crate) struct Peer {
    /// The peer's heap base mapped into this process, or null when it is not reachable by
    /// load/store (another node, or shared-memory transports disabled).
    direct: *mut u8,
    /// The peer's heap base in its own address space, for UCX.
    remote_base: u64,
    ucx: Option<UcxPeer>,
}

/// Everything `init` sets up. Fields are dropped in declaration order: peers (endpoints, rkeys)
/// before the worker, the heap mapping before the context.
pub(crate) struct Runtime {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    /// Local heap base.
    pub(crate) base: *mut u8,
    pub(crate) layout: HeapLayout,
    peers: Box<[Peer]>,
    /// Each PE's worker address and packed rkey, for the endpoints of contexts.
    wire: Box<[(Vec<u8>, Vec<u8>)]>,
    /// Some peer is reached through UCX: waits must drive UCX progress and quiet must flush.
    any_ucx: bool,
    pub(crate) sync: SyncState,
    /// Team blocks in use and their epoch counters.
    pub(crate) team_slots: crate::team::Slots,
    pub(crate) allocator: Mutex<Allocator>,
    bootstrap: Mutex<Bootstrap>,
    /// The workers of live contexts: every wait progresses them too, because a peer's operation
    /// (or UCX's own wire-up traffic over tcp) may be waiting on any worker of this process.
    ctx_workers: std::sync::RwLock<Vec<Worker>>,
    /// Serves other PEs' operations on this worker while this PE computes.
    progress: Option<ProgressThread>,
    /// Counts this thread's rounds of progress on UCX, so that the progress thread can tell a
    /// PE that is waiting in the library (and progressing by itself) from one that computes.
    progress_rounds: std::sync::Arc<AtomicU64>,
    worker: Worker,
    _mem: MemHandle,
    context: Context,
}

// SAFETY: the raw pointers in `Runtime` and `Peer` point into shared-memory mappings that live as
// long as the runtime; all mutation through them is by explicit copies whose races are the
// program's business exactly as in OpenSHMEM. The UCX worker is created in multi-threaded mode.
unsafe impl Sync for Runtime {}
// SAFETY: as above; nothing in `Runtime` is tied to the creating thread.
unsafe impl Send for Runtime {}

/// Start-up data each PE sends to every other PE.
struct PeerInfo {
    base: u64,
    len: u64,
    statics_sig: u64,
    /// Equal for exactly the PEs on one node (from the launcher or PMIx).
    node: u64,
    worker_addr: Vec<u8>,
    rkey: Vec<u8>,
}

const BLOB_MAGIC: u32 = 0x5348_4d32; // "SHM2"

impl PeerInfo {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(48 + self.worker_addr.len() + self.rkey.len());
        v.extend_from_slice(&BLOB_MAGIC.to_le_bytes());
        v.extend_from_slice(&self.base.to_le_bytes());
        v.extend_from_slice(&self.len.to_le_bytes());
        v.extend_from_slice(&self.statics_sig.to_le_bytes());
        v.extend_from_slice(&self.node.to_le_bytes());
        for part in [&self.worker_addr, &self.rkey] {
            v.extend_from_slice(&(part.len() as u32).to_le_bytes());
            v.extend_from_slice(part);
        }
        v
    }

    fn decode(pe: usize, mut b: &[u8]) -> Result<PeerInfo> {
        let bad = || Error::Bootstrap(format!("malformed start-up record from PE {pe}"));
        let mut take = |n: usize| -> Result<&[u8]> {
            if b.len() < n {
                return Err(bad());
            }
            let (head, tail) = b.split_at(n);
            b = tail;
            Ok(head)
        };
        let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap_or_default());
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
        if u32_of(take(4)?) != BLOB_MAGIC {
            return Err(bad());
        }
        let base = u64_of(take(8)?);
        let len = u64_of(take(8)?);
        let statics_sig = u64_of(take(8)?);
        let node = u64_of(take(8)?);
        let n = u32_of(take(4)?) as usize;
        let worker_addr = take(n)?.to_vec();
        let n = u32_of(take(4)?) as usize;
        let rkey = take(n)?.to_vec();
        Ok(PeerInfo {
            base,
            len,
            statics_sig,
            node,
            worker_addr,
            rkey,
        })
    }
}

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// Claims the process-wide runtime, sets it up and publishes it.
pub(crate) fn init() -> Result<&'static Runtime> {
    if let Err(state) = STATE.compare_exchange(UNINIT, LIVE, Ordering::AcqRel, Ordering::Acquire) {
        return Err(if state == LIVE {
            Error::AlreadyInitialized
        } else {
            Error::Finalized
        });
    }
    match Runtime::start() {
        Ok(rt) => {
            let p = Box::into_raw(Box::new(rt));
            RUNTIME.store(p, Ordering::Release);
            // Waits on a context's worker must keep the main worker moving too (see the hook).
            shmem_ucx::set_wait_hook(Some(progress_main_worker));
            // SAFETY: just published from a live Box; see `runtime()`.
            Ok(unsafe { &*p })
        }
        Err(e) => {
            STATE.store(UNINIT, Ordering::Release);
            Err(e)
        }
    }
}

/// The wait hook: one round of progress on the main worker, if any peer goes through UCX.
fn progress_main_worker() {
    let p = RUNTIME.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: published and live (see `runtime()`).
        unsafe { &*p }.progress();
    }
}

/// Finalizes: quiet, barrier, close endpoints, release memory. Called once, by `World::drop`.
pub(crate) fn finalize() {
    let p = RUNTIME.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    shmem_ucx::set_wait_hook(None);
    if std::thread::panicking() {
        // This PE is going down; the launcher ends the job. Collective steps could hang and
        // tearing UCX down is pointless: unpublish and leave the mappings to process exit.
        RUNTIME.store(ptr::null_mut(), Ordering::Release);
        STATE.store(FINALIZED, Ordering::Release);
        return;
    }
    {
        // SAFETY: published by `init` and not yet unpublished.
        let rt = unsafe { &*p };
        sync::barrier_all(rt);
    }
    RUNTIME.store(ptr::null_mut(), Ordering::Release);
    STATE.store(FINALIZED, Ordering::Release);
    // SAFETY: `p` came from `Box::into_raw` in `init`, and is unpublished, so this is the only owner.
    let rt = unsafe { Box::from_raw(p) };
    rt.shutdown();
}

impl Runtime {
    fn start() -> Result<Runtime> {
        let mut bootstrap = Bootstrap::from_env()?;
        let my_pe = bootstrap.my_pe();
        let n_pes = bootstrap.n_pes();

        let (statics_len, statics_sig) = statics::layout();
        // The runtime's sync area, then the team blocks, then the statics.
        let statics_at = sync::SYNC_BYTES + crate::team::POOL_BYTES;
        let user = align_up(statics_at + statics_len, PAGE);
        let user_len = align_up(crate::config::heap_size()?, PAGE);
        let total = user + user_len;

        let node = bootstrap.node() as u64;
        let progress_thread = crate::config::progress_thread(bootstrap.spans_nodes())?;
        let context = Context::new(&ContextParams {
            estimated_num_eps: Some(n_pes),
            wakeup: progress_thread,
            ..ContextParams::default()
        })?;
        let worker = context.create_worker(ThreadMode::Multi)?;
        let mem = context.mem_map_alloc(total)?;
        let base = mem.address();
        let layout = HeapLayout {
            user,
            user_len,
            total,
        };

        // Prepare our own memory before any peer learns where it is.
        // SAFETY: the mapping is `total` bytes long and exclusively ours until the rendezvous.
        unsafe { ptr::write_bytes(base, 0, sync::SYNC_BYTES) };
        // The world team's block; the others are cleared when a team takes them.
        // SAFETY: block 0 lies inside the mapping (the pool precedes the statics region).
        unsafe {
            ptr::write_bytes(
                base.add(crate::team::block_offset(0)),
                0,
                crate::team::BLOCK,
            )
        };
        // SAFETY: the statics region lies inside the mapping (layout computed above).
        unsafe { statics::place_all(base.add(statics_at), statics_at) };

        let me = PeerInfo {
            base: base as u64,
            len: total as u64,
            statics_sig,
            node,
            worker_addr: worker.address()?,
            rkey: mem.pack_rkey()?,
        };
        let blobs = bootstrap.allgather(&me.encode(), &mut || {
            worker.progress();
        })?;
        if blobs.len() != n_pes {
            return Err(Error::Bootstrap(format!(
                "rendezvous returned {} records for {n_pes} PEs",
                blobs.len()
            )));
        }

        let mut peers = Vec::with_capacity(n_pes);
        let mut wire = Vec::with_capacity(n_pes);
        for (pe, blob) in blobs.iter().enumerate() {
            let info = PeerInfo::decode(pe, blob)?;
            wire.push((info.worker_addr.clone(), info.rkey.clone()));
            if info.statics_sig != statics_sig {
                return Err(Error::Bootstrap(format!(
                    "PE {pe} has a different set of #[symmetric] statics than PE {my_pe} \
                     (signature {:#x} vs {statics_sig:#x}): every PE must run the same program",
                    info.statics_sig
                )));
            }
            if info.len != total as u64 {
                return Err(Error::Bootstrap(format!(
                    "PE {pe} mapped a {}-byte symmetric heap but PE {my_pe} mapped {total}: \
                     SHMEM_SYMMETRIC_SIZE must be the same on every PE",
                    info.len
                )));
            }
            if pe == my_pe {
                peers.push(Peer {
                    direct: base,
                    remote_base: base as u64,
                    ucx: None,
                });
                continue;
            }
            // SAFETY: both byte strings are the peer's own `Worker::address` and `pack_rkey`
            // output, carried unchanged by the launcher (framed, length-checked) from a PE of the
            // same job, which checked the job id; the same binary means the same UCX.
            let ep = unsafe { worker.connect(&info.worker_addr)? };
            // SAFETY: as above.
            let rkey = unsafe { ep.unpack_rkey(&info.rkey)? };
            // Only PEs of this node are mapped: UCX may well map a PE of another "node" on the
            // same machine (containers, network namespaces), but the job's layout says that
            // traffic goes over the network.
            let direct = match rkey.ptr(info.base) {
                Ok(p) if info.node == node => p,
                Ok(_) => ptr::null_mut(),
                Err(e) if e.is_unreachable() => ptr::null_mut(),
                Err(e) => return Err(e.into()),
            };
            peers.push(Peer {
                direct,
                remote_base: info.base,
                ucx: Some(UcxPeer { rkey, ep }),
            });
        }
        let any_ucx = peers.iter().any(|p| p.direct.is_null());
        sync::set_spin_limit(peers.iter().filter(|p| !p.direct.is_null()).count());

        // Wire up every endpoint while all PEs are here to progress, so that the first real
        // operation does not wait for a peer that is busy computing.
        let mut pending = Vec::new();
        for peer in &peers {
            if let Some(u) = &peer.ucx {
                if let Some(req) = u.ep.flush_start()? {
                    pending.push(req);
                }
            }
        }
        let mut spins = 0;
        while !pending.is_empty() {
            worker.progress();
            let mut still = Vec::with_capacity(pending.len());
            for req in pending {
                if !req.is_done()? {
                    still.push(req);
                }
            }
            pending = still;
            sync::backoff(&mut spins);
        }
        bootstrap.barrier(&mut || {
            worker.progress();
        })?;
        // Every endpoint is wired up: from here on a PE that computes without calling the
        // library still serves the operations that need its progress (atomics over tcp).
        let progress_rounds = std::sync::Arc::new(AtomicU64::new(0));
        let progress = (progress_thread && any_ucx)
            .then(|| ProgressThread::start(worker.clone(), std::sync::Arc::clone(&progress_rounds)))
            .transpose()?;

        Ok(Runtime {
            my_pe,
            n_pes,
            base,
            layout,
            peers: peers.into_boxed_slice(),
            wire: wire.into_boxed_slice(),
            any_ucx,
            sync: SyncState::default(),
            team_slots: crate::team::Slots::default(),
            allocator: Mutex::new(Allocator::new(layout.user_len)),
            bootstrap: Mutex::new(bootstrap),
            ctx_workers: std::sync::RwLock::new(Vec::new()),
            progress,
            progress_rounds,
            worker,
            _mem: mem,
            context,
        })
    }

    /// Closes endpoints and leaves the job. The barrier has been passed: no PE touches another's
    /// memory any more.
    fn shutdown(mut self) {
        for peer in self.peers.iter_mut() {
            if let Some(u) = peer.ucx.take() {
                drop(u.rkey);
                // A failed close at exit changes nothing for the user; UCX already logged it.
                let _ = u.ep.close();
            }
        }
        let worker = &self.worker;
        let bootstrap = match self.bootstrap.get_mut() {
            Ok(b) => b,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Keep progressing until every PE has closed its endpoints, then say goodbye.
        let _ = bootstrap.barrier(&mut || {
            worker.progress();
        });
        let _ = bootstrap.finalize();
        if let Some(t) = self.progress.take() {
            t.stop();
        }
    }

    /// A new UCX worker and endpoints from it to every PE, for a context. Peers mapped into this
    /// process stay direct (no endpoint needed); the others get their own endpoint and rkey.
    pub(crate) fn context_route(&self) -> Result<(Worker, Box<[Peer]>, bool)> {
        // Multi-threaded whatever the context's mode: the runtime's waits progress it from
        // whichever thread waits.
        let worker = self.context.create_worker(ThreadMode::Multi)?;
        let mut peers = Vec::with_capacity(self.n_pes);
        for (pe, main) in self.peers.iter().enumerate() {
            if !main.direct.is_null() {
                peers.push(Peer {
                    direct: main.direct,
                    remote_base: main.remote_base,
                    ucx: None,
                });
                continue;
            }
            let (addr, rkey) = &self.wire[pe];
            // SAFETY: the bytes are the peer's own worker address and packed rkey from start-up,
            // unchanged (see `start`).
            let ep = unsafe { worker.connect(addr)? };
            // SAFETY: as above.
            let rkey = unsafe { ep.unpack_rkey(rkey)? };
            peers.push(Peer {
                direct: ptr::null_mut(),
                remote_base: main.remote_base,
                ucx: Some(UcxPeer { rkey, ep }),
            });
        }
        let any_ucx = peers.iter().any(|p| p.direct.is_null());
        if any_ucx {
            match self.ctx_workers.write() {
                Ok(mut w) => w.push(worker.clone()),
                Err(p) => p.into_inner().push(worker.clone()),
            }
        }
        Ok((worker, peers.into_boxed_slice(), any_ucx))
    }

    /// Closes a context's endpoints (they are all idle: the context was quieted) and stops
    /// progressing its worker.
    pub(crate) fn close_route(&self, worker: &Worker, peers: &mut [Peer]) {
        {
            let mut w = match self.ctx_workers.write() {
                Ok(w) => w,
                Err(p) => p.into_inner(),
            };
            w.retain(|x| x.raw() != worker.raw());
        }
        for peer in peers.iter_mut() {
            if let Some(u) = peer.ucx.take() {
                drop(u.rkey);
                let _ = u.ep.close();
            }
        }
    }

    /// The peer `pe`, or a panic naming the PE and the job size.
    #[inline]
    #[track_caller]
    pub(crate) fn peer(&self, pe: usize) -> &Peer {
        match self.peers.get(pe) {
            Some(p) => p,
            None => bad_pe(pe, self.n_pes),
        }
    }

    /// Local address of a heap offset.
    #[inline]
    pub(crate) fn local(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset <= self.layout.total);
        // SAFETY: offsets handed out by the heap and statics layout lie inside the mapping.
        unsafe { self.base.add(offset) }
    }

    /// Copies `len` bytes from `src` to `offset` in `peer`'s heap; the source may be reused on
    /// return.
    ///
    /// # Safety
    /// `offset + len` lies inside the symmetric heap and `src` is valid for `len` bytes.
    #[inline]
    pub(crate) unsafe fn put_bytes(&self, peer: &Peer, offset: usize, src: *const u8, len: usize) {
        if !peer.direct.is_null() {
            // SAFETY: the caller keeps the range inside the peer's mapped heap; the source is a
            // local buffer that cannot overlap the peer's mapping of a different object.
            unsafe { ptr::copy_nonoverlapping(src, peer.direct.add(offset), len) };
        } else {
            let u = ucx_of(peer);
            // SAFETY: as above, for the peer's registered region described by `u.rkey`.
            let r = unsafe {
                u.ep.put(src, len, peer.remote_base + offset as u64, &u.rkey)
            };
            check(r, "put");
        }
    }

    /// Like [`put_bytes`](Self::put_bytes) but completion is only guaranteed by the next quiet.
    ///
    /// # Safety
    /// As `put_bytes`, and `src` stays valid and unchanged until the next quiet.
    #[inline]
    pub(crate) unsafe fn put_bytes_nbi(
        &self,
        peer: &Peer,
        offset: usize,
        src: *const u8,
        len: usize,
    ) {
        if !peer.direct.is_null() {
            // SAFETY: see `put_bytes`.
            unsafe { ptr::copy_nonoverlapping(src, peer.direct.add(offset), len) };
        } else {
            let u = ucx_of(peer);
            // SAFETY: see `put_bytes`; the caller keeps `src` alive until quiet.
            let r = unsafe {
                u.ep.put_nbi(src, len, peer.remote_base + offset as u64, &u.rkey)
            };
            check(r, "put_nbi");
        }
    }

    /// Copies `len` bytes from `offset` in `peer`'s heap to `dst`; complete on return.
    ///
    /// # Safety
    /// `offset + len` lies inside the symmetric heap and `dst` is valid for `len` bytes.
    #[inline]
    pub(crate) unsafe fn get_bytes(&self, peer: &Peer, offset: usize, dst: *mut u8, len: usize) {
        if !peer.direct.is_null() {
            // SAFETY: see `put_bytes`.
            unsafe { ptr::copy_nonoverlapping(peer.direct.add(offset), dst, len) };
        } else {
            let u = ucx_of(peer);
            // SAFETY: see `put_bytes`.
            let r = unsafe {
                u.ep.get(dst, len, peer.remote_base + offset as u64, &u.rkey)
            };
            check(r, "get");
        }
    }

    /// Like [`get_bytes`](Self::get_bytes) but the data is only there after the next quiet.
    ///
    /// # Safety
    /// As `get_bytes`, and `dst` stays valid and unused until the next quiet.
    #[inline]
    pub(crate) unsafe fn get_bytes_nbi(
        &self,
        peer: &Peer,
        offset: usize,
        dst: *mut u8,
        len: usize,
    ) {
        if !peer.direct.is_null() {
            // SAFETY: see `put_bytes`.
            unsafe { ptr::copy_nonoverlapping(peer.direct.add(offset), dst, len) };
        } else {
            let u = ucx_of(peer);
            // SAFETY: see `get_bytes`; the caller keeps `dst` alive until quiet.
            let r = unsafe {
                u.ep.get_nbi(dst, len, peer.remote_base + offset as u64, &u.rkey)
            };
            check(r, "get_nbi");
        }
    }

    /// True when `peer`'s heap is mapped here (load/store reaches it).
    #[inline]
    pub(crate) fn is_direct(&self, peer: &Peer) -> bool {
        !peer.direct.is_null()
    }

    /// Local address of `offset` in a directly mapped peer's heap.
    #[inline]
    pub(crate) fn direct_ptr(&self, peer: &Peer, offset: usize) -> *mut u8 {
        debug_assert!(self.is_direct(peer) && offset < self.layout.total);
        // SAFETY: offsets handed out by the heap and statics layout lie inside the mapping.
        unsafe { peer.direct.add(offset) }
    }

    /// An AMO through UCX on the word at `offset` of `peer` with operands `(value, compare)`;
    /// returns the old value (0 for a non-fetching operation).
    pub(crate) fn ucx_amo(
        &self,
        peer: &Peer,
        offset: usize,
        size: shmem_ucx::AtomicSize,
        (op, fetch): (shmem_ucx::AtomicOp, bool),
        (value, compare): (u64, u64),
    ) -> u64 {
        use shmem_ucx::AtomicOp;
        let u = ucx_of(peer);
        let addr = peer.remote_base + offset as u64;
        // Swap and compare-swap always need the reply buffer in UCX (a `set` is a swap).
        let r = if fetch || matches!(op, AtomicOp::Swap | AtomicOp::Cswap) {
            // SAFETY: the caller checked that the word lies in the peer's heap, aligned.
            unsafe { u.ep.atomic_fetch(op, value, compare, size, addr, &u.rkey) }
        } else {
            // SAFETY: as above.
            unsafe { u.ep.atomic_post(op, value, size, addr, &u.rkey).map(|()| 0) }
        };
        match r {
            Ok(old) => old,
            Err(e) => ucx_failed("atomic", e),
        }
    }

    /// Completes outstanding UCX operations to `peer` (no-op for direct peers).
    pub(crate) fn flush_peer(&self, peer: &Peer) {
        if let Some(u) = &peer.ucx {
            if peer.direct.is_null() {
                check(u.ep.flush(), "flush");
            }
        }
    }

    /// Stores `value` into the 8-byte word at `offset` on `pe` so that a waiter sees it together
    /// with everything this PE wrote to `pe` before (release ordering).
    pub(crate) fn store_flag(&self, pe: usize, offset: usize, value: u64) {
        let peer = self.peer(pe);
        if !peer.direct.is_null() {
            // SAFETY: flag offsets lie in the sync area, 8-byte aligned; peers only touch these
            // words atomically.
            let flag = unsafe { &*(peer.direct.add(offset) as *const AtomicU64) };
            flag.store(value, Ordering::Release);
        } else {
            let bytes = value.to_ne_bytes();
            // SAFETY: the sync area lies inside the heap; `bytes` lives across the blocking put.
            unsafe { self.put_bytes(peer, offset, bytes.as_ptr(), 8) };
        }
    }

    /// Waits until the local 8-byte word at `offset` is at least `value`, progressing UCX and
    /// backing off so that oversubscribed PEs keep moving.
    pub(crate) fn wait_flag_ge(&self, offset: usize, value: u64) {
        // SAFETY: flag offsets lie in the sync area, 8-byte aligned, only accessed atomically.
        let flag = unsafe { &*(self.local(offset) as *const AtomicU64) };
        self.wait_local(|| flag.load(Ordering::Acquire) >= value);
    }

    /// Waits until `done()` holds for local memory that other PEs write: spins briefly, then
    /// yields between checks, driving UCX so that transfers carried by this PE's progress land.
    pub(crate) fn wait_local(&self, mut done: impl FnMut() -> bool) {
        let mut spins = 0;
        while !done() {
            self.progress();
            sync::backoff(&mut spins);
        }
    }

    /// Updates the signal word at `offset` on `peer` after the data put before it to the same PE
    /// has been delivered (`shmem_put_signal`'s ordering).
    pub(crate) fn signal_update(&self, peer: &Peer, offset: usize, add: bool, value: u64) {
        use shmem_ucx::{AtomicOp, AtomicSize};
        if !peer.direct.is_null() {
            // SAFETY: the signal word lies in the peer's mapped heap, 8-byte aligned (checked by
            // the caller); Release orders the data copies before it.
            let word = unsafe { AtomicU64::from_ptr(peer.direct.add(offset).cast()) };
            if add {
                word.fetch_add(value, Ordering::Release);
            } else {
                word.store(value, Ordering::Release);
            }
        } else {
            // The data must be at the target before the signal: complete it, then update.
            self.flush_peer(peer);
            let op = if add { AtomicOp::Add } else { AtomicOp::Swap };
            self.ucx_amo(peer, offset, AtomicSize::U64, (op, false), (value, 0));
        }
    }

    /// Drives UCX once (`shmem_test` and friends make progress without blocking).
    #[inline]
    pub(crate) fn progress(&self) {
        if self.any_ucx {
            if self.progress.is_some() {
                self.progress_rounds.fetch_add(1, Ordering::Relaxed);
            }
            self.worker.progress();
            if let Ok(workers) = self.ctx_workers.try_read() {
                for w in workers.iter() {
                    w.progress();
                }
            }
        }
    }

    /// OpenSHMEM fence: puts to each PE are delivered in order across the fence.
    pub(crate) fn fence(&self) {
        std::sync::atomic::fence(Ordering::Release);
        if self.any_ucx {
            check(self.worker.fence(), "fence");
        }
    }

    /// OpenSHMEM quiet: every put, get and non-blocking operation issued so far is complete.
    pub(crate) fn quiet(&self) {
        if self.any_ucx {
            check(self.worker.flush(), "quiet");
        }
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// A thread that progresses the main worker while this PE computes: operations that need this
/// PE's progress, such as atomics emulated over tcp, then complete without waiting for the PE to
/// call the library.
///
/// While the PE itself waits in the library it progresses the worker on its own, and a second
/// thread woken by every event would only contend for the worker (over tcp between two hosts it
/// tripled put latency; waking every 200 µs to look still cost 30%). So the thread watches the
/// PE's count of progress rounds: while it moves, the thread naps, each nap twice as long as the
/// last from [`ProgressThread::MIN_NAP`] up to [`ProgressThread::MAX_NAP`]; once it stands still
/// (the PE computes), the thread serves events as they come (`ucp_worker_arm` and the worker's
/// event fd), looking at the count again at least every `MAX_NAP`. An operation on a PE that has
/// just started to compute thus waits at most about `MAX_NAP`.
struct ProgressThread {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    worker: Worker,
    handle: std::thread::JoinHandle<()>,
}

impl ProgressThread {
    /// The first nap after the PE was seen progressing by itself.
    const MIN_NAP: std::time::Duration = std::time::Duration::from_micros(100);
    /// The longest nap, and the longest event wait between looks at the PE's count.
    const MAX_NAP: std::time::Duration = std::time::Duration::from_millis(5);

    fn start(worker: Worker, rounds: std::sync::Arc<AtomicU64>) -> Result<ProgressThread> {
        use std::sync::atomic::AtomicBool;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (w, s) = (worker.clone(), std::sync::Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("shmem-progress".into())
            .spawn(move || {
                let mut event_wait = true;
                let mut seen = rounds.load(Ordering::Relaxed);
                let mut nap = Self::MIN_NAP;
                while !s.load(Ordering::Acquire) {
                    let now = rounds.load(Ordering::Relaxed);
                    if now != seen {
                        // The PE progresses by itself.
                        seen = now;
                        std::thread::sleep(nap);
                        nap = (nap * 2).min(Self::MAX_NAP);
                        continue;
                    }
                    nap = Self::MIN_NAP;
                    while w.progress() != 0 {}
                    if event_wait {
                        if let Err(e) = w.wait_for_events(Self::MAX_NAP) {
                            eprintln!("shmem: progress thread: {e}; polling instead");
                            event_wait = false;
                        }
                    } else {
                        std::thread::sleep(Self::MIN_NAP);
                    }
                }
            })
            .map_err(|e| Error::Bootstrap(format!("cannot start the progress thread: {e}")))?;
        Ok(ProgressThread {
            stop,
            worker,
            handle,
        })
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        // A failed signal only delays the exit by the thread's short wait.
        let _ = self.worker.signal();
        let _ = self.handle.join();
    }
}

#[inline]
fn ucx_of(peer: &Peer) -> &UcxPeer {
    match &peer.ucx {
        Some(u) => u,
        None => unreachable!("a peer without a direct mapping always has a UCX endpoint"),
    }
}

/// A UCX failure in the middle of a data transfer cannot be handed back to the caller in a
/// meaningful state: it ends this PE (and so the job) with UCX's own message.
#[inline]
#[track_caller]
fn check(r: shmem_ucx::Result<()>, what: &str) {
    if let Err(e) = r {
        ucx_failed(what, e)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn ucx_failed(what: &str, e: shmem_ucx::Error) -> ! {
    panic!("shmem: {what} failed in UCX: {e}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_pe(pe: usize, n: usize) -> ! {
    panic!("shmem: PE {pe} is out of range: this job has {n} PEs (valid PEs are 0..{n})")
}

// helper: bootstrap access
impl Runtime {
    /// Runs `f` with the launcher connection (locked; a poisoned lock is taken over).
    pub(crate) fn with_bootstrap<R>(&self, f: impl FnOnce(&mut Bootstrap) -> R) -> R {
        let mut guard = self.bootstrap.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}
