//! **Layer 2, transport**: the PEs as this process reaches them, and the bytes that move between
//! them (put, get, atomics, fence, quiet, the runtime's own collectives).
//!
//! Where does a put to a peer on this node happen? In [`Transport::rma`] (`rma.rs`): when the
//! peer's heap is mapped into this process (a PE of this node: start-up mapped its heap's memfd,
//! unless `UCX_TLS` leaves out shared memory) it is a copy into `Peer::direct`; otherwise it is
//! a UCX `ucp_put_nbx` on the peer's endpoint, which the first such operation connects.
//!
//! This layer sits below the OpenSHMEM families: it knows offsets in the symmetric heap, not what
//! lives at them (heap arrays, statics, teams). May use: `mem` and the base modules. Its parts,
//! lowest first:
//! - `progress`: waiting, progress of the UCX workers, the progress thread, liveness;
//! - `slots`: the collectives' per-process state (team blocks in use, epochs);
//! - `am`: the active-message protocol to peers reached through UCX (strided puts and gets
//!   packed in messages, put-with-signal, flags, batches of small puts, and the acknowledgements
//!   that quiet and fence wait for), in parts of its own (`am/mod.rs` lists them);
//! - this file: [`Transport`] and [`Peer`], the offset space and the process's one transport;
//! - `rma` (put, get, their strided and signalled forms, fence, quiet), `atomic` (AMOs),
//!   `route` (a context's own worker and endpoints) and `collective` (the transport's own
//!   collectives: sync of a group of PEs, barrier_all, the allocation all-reduce, the finalize
//!   announcement): each adds methods to [`Transport`].
//!
//! # Offsets
//! One offset space names every byte a peer can reach: `0..SEGMENT` the team segment (the
//! runtime's flags and mailboxes, a `memfd` of its own that every PE of a node maps, whatever
//! `UCX_TLS` says), then the heap (statics and heap arrays), and from `DATA_OFFSET` a C
//! program's data segment. Whether a byte is reached by load and store or through UCX is decided
//! per peer and per range ([`Transport::mapped`]): over `UCX_TLS=tcp,self` on one node the heap
//! goes through UCX while the team segment is still shared memory. A peer whose heap is mapped
//! has its team segment mapped too.
//!
//! # Lifetime
//! The transport is created once per process and never freed (it lives in a `OnceLock`:
//! [`transport`]), and the heap mappings it points into are never unmapped (the process's exit
//! releases them): a handle that outlives the `World` cannot reach freed memory. Every operation
//! checks that the runtime is live (one acquire load) and panics with "used after the World was
//! dropped" when it is not. UCX endpoints and keys of peers reached through the network *are*
//! closed at finalize; operations hold a read lock on a peer's endpoint while they use it, and
//! finalize takes the write lock to close it, so the two cannot overlap.

pub(crate) mod am;
pub(crate) mod atomic;
pub(crate) mod collective;
pub(crate) mod progress;
pub(crate) mod rma;
pub(crate) mod route;
pub(crate) mod slots;

use crate::error::Result;
use crate::mem::dataseg::DATA_OFFSET;
use crate::mem::layout::HeapLayout;
use crate::mem::segment::SEGMENT;
use progress::{Progress, used_after_finalize};
use shmem_ucx::{Context, Endpoint, MemHandle, RemoteKey, Worker};
use slots::Slots;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard};

/// The transport of this process, set by the first successful `init` and never freed.
static TRANSPORT: OnceLock<Transport> = OnceLock::new();

/// The process's transport, or a panic that tells the user to call `init` first. After
/// finalize it is still returned: the operation that uses it then panics with "used after the
/// World was dropped".
#[inline]
#[track_caller]
pub(crate) fn transport() -> &'static Transport {
    match TRANSPORT.get() {
        Some(t) => t,
        None => not_initialized(),
    }
}

/// The transport while it is live, from [`publish`] until [`Transport::close`] or
/// [`Transport::abandon`]; null before and after. One load answers both questions of a fast
/// path ([`try_live_transport`]).
static LIVE: AtomicPtr<Transport> = AtomicPtr::new(ptr::null_mut());

/// Makes `t` the process's transport (once: start-up publishes the transport it made).
pub(crate) fn publish(t: Transport) -> &'static Transport {
    if TRANSPORT.set(t).is_err() {
        // Only one `init` gets this far, and a failed one publishes nothing.
        unreachable!("the transport was published twice");
    }
    let tp = transport();
    LIVE.store(ptr::from_ref(tp).cast_mut(), Ordering::Release);
    // Small puts in a stream may wait in batches where a progress thread sends what a
    // computing PE leaves there (see `am::coalesces`); waits and rounds of progress send
    // them through the live transport.
    progress::set_batch_sender(|| {
        if let Some(tp) = try_live_transport() {
            tp.send_batches(true);
        }
    });
    am::set_coalescing(tp.coalesce && tp.progress.thread_serves_events());
    // Runs need no thread: a quiet sends and completes them.
    am::set_runs(tp.coalesce);
    tp
}

/// The process's transport while it is live (published, and not yet closed or abandoned: what
/// [`Transport::check_live`] checks, in one load), or `None` (before `init`, after finalize),
/// for fast paths that fall back to a general path with its own message.
#[inline(always)]
pub(crate) fn try_live_transport() -> Option<&'static Transport> {
    let p = LIVE.load(Ordering::Acquire);
    // SAFETY: non-null only as the address of the transport in `TRANSPORT`, which is set once
    // and never freed (only shared references are made from it).
    unsafe { p.as_ref() }
}

/// The panic of an operation on symmetric memory before `init`.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn not_initialized() -> ! {
    panic!(
        "shmem: symmetric memory used before the runtime is initialized: call shmem_core::init() \
         first"
    )
}

/// A region of the offset space (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    /// `0..SEGMENT`: the team segment.
    Team,
    /// `SEGMENT..DATA_OFFSET`: statics and heap arrays, offsets counted from the heap
    /// mapping's base (whose first `SEGMENT` bytes stay unused).
    Heap,
    /// `DATA_OFFSET..`: a C program's data segment.
    Data,
}

impl Region {
    /// The region `offset` names, and the offset from that region's base.
    #[inline(always)]
    fn of(offset: usize) -> (Region, usize) {
        match offset.checked_sub(DATA_OFFSET) {
            Some(at) => (Region::Data, at),
            None if offset < SEGMENT => (Region::Team, offset),
            None => (Region::Heap, offset),
        }
    }

    /// The region's name in messages.
    fn name(self) -> &'static str {
        match self {
            Region::Team => "team segment",
            Region::Heap => "heap",
            Region::Data => "data segment",
        }
    }
}

/// UCX state for a peer: its endpoint and the keys of its heap and data segment.
pub(crate) struct UcxPeer {
    // Field order is drop order: the rkeys go before their endpoint.
    pub(crate) rkey: RemoteKey,
    /// The key of the peer's data segment, in jobs that made it symmetric (C programs).
    pub(crate) data_rkey: Option<RemoteKey>,
    /// The key of the peer's team segment.
    pub(crate) team_rkey: RemoteKey,
    pub(crate) ep: Endpoint,
}

/// A peer's UCX link: made at first contact, not at start-up, so that a PE pays for an
/// endpoint (its memory, its wire-up messages, a socket over tcp) only to the PEs it talks to
/// through UCX, and none at all to the PEs of its node that it reaches by load and store.
pub(crate) enum Link {
    /// Not connected yet: the worker to connect from, and where to read what the peer
    /// published.
    Unopened(Worker, Contact),
    /// Connected (boxed: a PE keeps a `Link` for every peer of the job, connected or not).
    Open(Box<UcxPeer>),
    /// Closed at finalize, or never to be used (this PE itself).
    Closed,
}

impl UcxPeer {
    /// Connects `worker` to the PE that published `wire`, with its keys.
    pub(crate) fn connect(worker: &Worker, wire: &Wire) -> shmem_ucx::Result<UcxPeer> {
        // SAFETY: the bytes are the peer's own `Worker::address` and `pack_rkey` output,
        // carried unchanged by the launcher (framed, length-checked) from a PE of the same job,
        // which checked the job id; the same binary means the same UCX.
        let ep = unsafe { worker.connect(&wire.addr)? };
        // SAFETY: as above.
        let rkey = unsafe { ep.unpack_rkey(&wire.rkey)? };
        let data_rkey = match &wire.data_rkey {
            // SAFETY: as above.
            Some(k) => Some(unsafe { ep.unpack_rkey(k)? }),
            None => None,
        };
        // SAFETY: as above.
        let team_rkey = unsafe { ep.unpack_rkey(&wire.team_rkey)? };
        Ok(UcxPeer {
            rkey,
            data_rkey,
            team_rkey,
            ep,
        })
    }

    /// The peer's address of `offset` (team segment, heap or data segment) and the key that
    /// reaches it.
    #[inline]
    #[track_caller]
    fn target(&self, peer: &Peer, offset: usize) -> (u64, &RemoteKey) {
        match Region::of(offset) {
            (Region::Team, at) => (peer.team_remote + at as u64, &self.team_rkey),
            (Region::Heap, at) => (peer.remote_base + at as u64, &self.rkey),
            (Region::Data, at) => match &self.data_rkey {
                Some(k) => (peer.data_remote + at as u64, k),
                None => panic!("shmem: data-segment offset {offset:#x} in a job without one"),
            },
        }
    }
}

/// One PE as seen from this process.
pub(crate) struct Peer {
    /// The peer's heap base mapped into this process for puts, gets and atomics, or null when
    /// those go through UCX (another node, or `UCX_TLS` without shared memory). Never unmapped.
    direct: *mut u8,
    /// The peer's heap base mapped into this process for the collectives: `direct`, or where
    /// `UCX_TLS` leaves out shared memory, the mapping of a peer of this node all the same
    /// (null: another node, or the kernel refused). Never unmapped.
    shared: *mut u8,
    /// The peer's heap base in its own address space, for UCX.
    remote_base: u64,
    /// The peer's data segment mapped into this process (null: not mapped, or none), where
    /// `shared` is not null.
    data: *mut u8,
    /// The peer's data segment base in its own address space, for UCX.
    data_remote: u64,
    /// The peer's team segment mapped into this process (null: not mapped: another node, or
    /// the kernel refused). Never null where `direct` is not.
    team: *mut u8,
    /// The peer's team segment base in its own address space, for UCX.
    team_remote: u64,
    /// The endpoint and keys, made at first use. Operations through UCX hold the read lock;
    /// first contact and finalize take the write lock.
    ucx: RwLock<Link>,
}

// SAFETY: `direct` points into a shared-memory mapping that is never unmapped while the process
// runs (see the module docs), and all access through it is by explicit copies and atomics; the
// UCX parts are behind a lock and UCX's workers are multi-threaded.
unsafe impl Send for Peer {}
// SAFETY: as for Send: no `&`/`&mut` to the mapped memory is ever handed out through a `&Peer`.
unsafe impl Sync for Peer {}

impl Peer {
    /// A peer mapped at `direct` (null: not mapped) whose heap starts at `remote_base` in its own
    /// address space, reached through UCX by `link`.
    pub(crate) fn new(direct: *mut u8, remote_base: u64, link: Link) -> Peer {
        Peer {
            direct,
            shared: direct,
            remote_base,
            data: ptr::null_mut(),
            data_remote: 0,
            team: ptr::null_mut(),
            team_remote: 0,
            ucx: RwLock::new(link),
        }
    }

    /// Adds the peer's team segment: mapped here at `mapped` (null when it is not), at `remote`
    /// in the peer's own address space.
    ///
    /// # Panics
    /// If the peer's heap is mapped but its team segment is not (callers reach such a peer
    /// through UCX altogether).
    pub(crate) fn with_team(mut self, mapped: *mut u8, remote: u64) -> Peer {
        assert!(
            self.direct.is_null() || !mapped.is_null(),
            "a peer with a mapped heap has its team segment mapped too"
        );
        self.team = mapped;
        self.team_remote = remote;
        self
    }

    /// Adds the peer's data segment: mapped here at `direct` (null when it is not), at
    /// `remote` in the peer's own address space.
    pub(crate) fn with_data(mut self, direct: *mut u8, remote: u64) -> Peer {
        self.data = direct;
        self.data_remote = remote;
        self
    }

    /// Adds the peer's heap mapped here for the collectives only (`direct` being null: puts,
    /// gets and atomics go through UCX), at `shared`; its data segment, if the job has one, is
    /// the one given to [`with_data`](Self::with_data).
    pub(crate) fn with_shared(mut self, shared: *mut u8) -> Peer {
        debug_assert!(self.direct.is_null() || self.direct == shared);
        if !shared.is_null() {
            self.shared = shared;
        }
        self
    }

    /// The address of byte `at` of this peer's heap (`data`: of its data segment) in this
    /// process, or null when load and store do not reach the peer (only UCX does): what
    /// [`Transport::mapped`] finds, without its checks, for a caller that knows the region (a
    /// fast path that translated a local address).
    ///
    /// # Safety
    /// `at` lies inside the heap (`data`: the data segment) of this job.
    #[inline(always)]
    pub(crate) unsafe fn direct_in(&self, data: bool, at: usize) -> *mut u8 {
        if self.direct.is_null() {
            return ptr::null_mut();
        }
        let base = if data { self.data } else { self.direct };
        // SAFETY: a mapped peer maps its heap and (in a job with one) its data segment, and
        // `at` lies inside the region (per the caller).
        unsafe { base.add(at) }
    }

    /// The address of `offset` (team segment, heap or data segment) in this peer's mappings.
    ///
    /// # Safety
    /// The range of `offset` is mapped here (`team` for the team segment, `direct` for the heap
    /// and data segment, not null) and `offset` lies inside it.
    #[inline(always)]
    unsafe fn at(&self, offset: usize) -> *mut u8 {
        let (region, at) = Region::of(offset);
        let base = match region {
            Region::Team => self.team,
            Region::Heap => self.direct,
            Region::Data => self.data,
        };
        // SAFETY: per the caller (a job with a data segment maps it with the heap).
        unsafe { base.add(at) }
    }

    /// The peer's UCX endpoint, held for the duration of one operation; connected here at
    /// first contact.
    #[inline]
    #[track_caller]
    fn ucx(&self) -> UcxGuard<'_> {
        loop {
            let guard = self.ucx.read().unwrap_or_else(|p| p.into_inner());
            match &*guard {
                Link::Open(_) => return UcxGuard(guard),
                Link::Closed => used_after_finalize(),
                Link::Unopened(..) => {}
            }
            drop(guard);
            self.open();
        }
    }

    /// The peer's UCX endpoint if it is connected (`None` before first contact and after
    /// finalize): for flushes, which have nothing to do on an endpoint never used.
    #[inline]
    fn ucx_if_open(&self) -> Option<UcxGuard<'_>> {
        let guard = self.ucx.read().unwrap_or_else(|p| p.into_inner());
        matches!(&*guard, Link::Open(_)).then_some(UcxGuard(guard))
    }

    /// First contact: connects the endpoint (unless another thread just did).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn open(&self) {
        let mut link = self.ucx.write().unwrap_or_else(|p| p.into_inner());
        if let Link::Unopened(worker, contact) = &*link {
            let pe = contact.pe;
            let wire = match contact.wire() {
                Ok(w) => w,
                Err(e) => {
                    drop(link);
                    panic!("shmem: connecting to PE {pe}: {e}")
                }
            };
            match UcxPeer::connect(worker, &wire) {
                Ok(u) => *link = Link::Open(Box::new(u)),
                Err(e) => {
                    drop(link);
                    ucx_failed(&format!("connecting to PE {pe}"), e)
                }
            }
        }
    }

    /// Connects the endpoint now (start-up, while every PE progresses) and starts a flush that
    /// completes its wire-up; `None` when there is nothing to wait for.
    pub(crate) fn connect_now(&self) -> Result<Option<shmem_ucx::Request>> {
        let mut link = self.ucx.write().unwrap_or_else(|p| p.into_inner());
        if let Link::Unopened(worker, contact) = &*link {
            *link = Link::Open(Box::new(UcxPeer::connect(worker, &contact.wire()?)?));
        }
        match &*link {
            Link::Open(u) => Ok(u.ep.flush_start()?),
            _ => Ok(None),
        }
    }

    /// Reads what UCX made of the endpoint's lanes (`Endpoint::rma_over_am`), if it is
    /// connected, so that the first operation need not.
    pub(crate) fn read_lanes(&self) {
        if let Some(u) = self.ucx_if_open() {
            u.ep.rma_over_am();
        }
    }

    /// Whether this peer is reached through UCX (its heap is not mapped here).
    pub(crate) fn through_ucx(&self) -> bool {
        self.direct.is_null()
    }

    /// Closes the endpoint (flushing it first) if it was ever connected; from here on the
    /// peer is reached only by load and store, if at all.
    fn close(&self) {
        let taken = std::mem::replace(
            &mut *self.ucx.write().unwrap_or_else(|p| p.into_inner()),
            Link::Closed,
        );
        if let Link::Open(u) = taken {
            let u = *u;
            drop(u.rkey);
            drop(u.data_rkey);
            drop(u.team_rkey);
            // A failed close at exit changes nothing for the user; UCX already logged it.
            let _ = u.ep.close();
        }
    }
}

/// A read lock on a peer's endpoint that is known to be open.
struct UcxGuard<'a>(RwLockReadGuard<'a, Link>);

impl std::ops::Deref for UcxGuard<'_> {
    type Target = UcxPeer;
    #[inline]
    fn deref(&self) -> &UcxPeer {
        match &*self.0 {
            Link::Open(u) => u,
            _ => unreachable!("checked when the guard was made"),
        }
    }
}

/// The PEs of the job as this process reaches them. (`pub` only so that the sealed supertrait
/// of the symmetric objects can name it; the module is private.)
pub struct Transport {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    /// Local heap base.
    base: *mut u8,
    pub(crate) layout: HeapLayout,
    /// The address of the statics (`base + layout.statics`, the first byte of symmetric memory in
    /// the heap mapping) and the bytes from there to the end of the heap: a local address is in
    /// the heap when `addr - statics_at < statics_span` (one subtract and one compare, for the
    /// translation of the C API's fast path).
    pub(crate) statics_at: usize,
    pub(crate) statics_span: usize,
    /// This PE's data segment (base, length), in jobs that made it symmetric; (null, 0) else.
    data: (*mut u8, usize),
    /// This PE's team segment (`SEGMENT` bytes), mapped for the process's life.
    team: *mut u8,
    /// Every peer's team segment is mapped here.
    one_node: bool,
    peers: Box<[Peer]>,
    /// Where each PE's worker address and packed keys are, for the endpoints of contexts.
    directory: Arc<Directory>,
    pub(crate) progress: Progress,
    /// `SHMEM_COALESCE`: whether small puts in a stream may wait in batches (where a progress
    /// thread waits for events).
    coalesce: bool,
    /// The collectives' team blocks and epochs.
    pub(crate) slots: Slots,
    /// Contexts with a route of their own, made and not yet closed.
    pub(crate) routes: std::sync::atomic::AtomicUsize,
    /// Routes of dropped contexts, kept for the next ones (see `route.rs`).
    idle_routes: Mutex<Vec<CtxRoute>>,
    context: Context,
    /// The UCX registration of this PE's heap (a memfd mapped for the process's life).
    _mem: MemHandle,
    /// The UCX registration of the data segment.
    _data_mem: Option<MemHandle>,
    /// The UCX registration of the team segment.
    _team_mem: MemHandle,
}

/// Where every PE's UCX details are read at first contact: the start-up table (shared by the
/// PEs of a node where the launcher allows) and the runtime's decoder of its records, so that a
/// PE keeps no per-peer copy of addresses and keys it may never use.
pub(crate) struct Directory {
    /// PE `pe`'s details, decoded from its record.
    wire_of: Box<dyn Fn(usize) -> Result<Wire> + Send + Sync>,
}

impl Directory {
    /// A directory that reads PE `pe`'s details with `wire_of(pe)`.
    pub(crate) fn new(wire_of: Box<dyn Fn(usize) -> Result<Wire> + Send + Sync>) -> Directory {
        Directory { wire_of }
    }
}

/// One peer's entry in the [`Directory`].
pub(crate) struct Contact {
    pub(crate) directory: Arc<Directory>,
    pub(crate) pe: usize,
}

impl Contact {
    /// What the peer published, decoded now.
    fn wire(&self) -> Result<Wire> {
        (self.directory.wire_of)(self.pe)
    }
}

/// What a PE published about itself for UCX.
pub(crate) struct Wire {
    /// Its worker address.
    pub(crate) addr: Vec<u8>,
    /// The packed key of its heap.
    pub(crate) rkey: Vec<u8>,
    /// That of its data segment, if it has one.
    pub(crate) data_rkey: Option<Vec<u8>>,
    /// That of its team segment.
    pub(crate) team_rkey: Vec<u8>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("my_pe", &self.my_pe)
            .field("n_pes", &self.n_pes)
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers in `Transport` point into shared-memory mappings that live as long as
// the process; all mutation through them is by explicit copies and atomics whose races are the
// program's business exactly as in OpenSHMEM, and no reference into them is handed out. The UCX
// worker and context are created in multi-threaded mode.
unsafe impl Sync for Transport {}
// SAFETY: as above; nothing in `Transport` is tied to the creating thread.
unsafe impl Send for Transport {}

/// A context's worker, its peers as that worker reaches them, and whether any is reached
/// through UCX (made and kept for reuse in `route.rs`).
pub(crate) type CtxRoute = (Worker, Box<[Peer]>, bool);

/// What start-up hands to [`Transport::new`].
pub(crate) struct TransportParts {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    pub(crate) base: *mut u8,
    pub(crate) layout: HeapLayout,
    pub(crate) data: (*mut u8, usize),
    pub(crate) data_mem: Option<MemHandle>,
    pub(crate) team: *mut u8,
    pub(crate) team_mem: MemHandle,
    pub(crate) peers: Vec<Peer>,
    pub(crate) directory: Arc<Directory>,
    pub(crate) progress_thread: bool,
    /// `SHMEM_COALESCE`: whether small puts in a stream may wait in batches.
    pub(crate) coalesce: bool,
    pub(crate) worker: Worker,
    pub(crate) context: Context,
    pub(crate) mem: MemHandle,
}

impl Transport {
    /// Assembles the transport from what start-up made, and starts the progress thread if asked.
    pub(crate) fn new(p: TransportParts) -> Result<Transport> {
        let any_ucx = p.peers.iter().any(|peer| peer.direct.is_null());
        // The PEs of this node: those whose team segment is mapped here (their heaps too,
        // unless UCX_TLS leaves out shared memory).
        progress::set_spin_limit(p.peers.iter().filter(|x| !x.team.is_null()).count());
        Ok(Transport {
            my_pe: p.my_pe,
            n_pes: p.n_pes,
            base: p.base,
            statics_at: (p.base as usize).wrapping_add(p.layout.statics),
            statics_span: p.layout.total - p.layout.statics,
            layout: p.layout,
            data: p.data,
            team: p.team,
            one_node: p.peers.iter().all(|x| !x.team.is_null()),
            peers: p.peers.into_boxed_slice(),
            directory: p.directory,
            progress: Progress::new(p.worker, any_ucx, p.progress_thread)?,
            coalesce: p.coalesce,
            slots: Slots::default(),
            routes: std::sync::atomic::AtomicUsize::new(0),
            idle_routes: Mutex::new(Vec::new()),
            context: p.context,
            _mem: p.mem,
            _data_mem: p.data_mem,
            _team_mem: p.team_mem,
        })
    }

    /// Panics unless the runtime is live (the `World` has not been dropped).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_live(&self) {
        self.progress.check_live();
    }

    /// Marks the runtime finalized and closes the endpoints of peers reached through UCX (those
    /// mapped directly keep their mappings until the process exits).
    pub(crate) fn close(&self) {
        self.send_batches(false);
        LIVE.store(ptr::null_mut(), Ordering::Release);
        self.progress.end();
        for peer in self.peers.iter() {
            peer.close();
        }
    }

    /// Marks the runtime finalized without touching UCX (a PE that is going down).
    pub(crate) fn abandon(&self) {
        LIVE.store(ptr::null_mut(), Ordering::Release);
        self.progress.end();
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

    /// The peer `pe`, or `None` when the job has no such PE.
    #[inline(always)]
    pub(crate) fn try_peer(&self, pe: usize) -> Option<&Peer> {
        self.peers.get(pe)
    }

    /// Local address of an offset (team segment, heap or data segment); panics after finalize.
    #[inline]
    #[track_caller]
    pub(crate) fn local(&self, offset: usize) -> *mut u8 {
        self.check_live();
        let (region, at) = Region::of(offset);
        let (base, len) = match region {
            Region::Team => (self.team, SEGMENT),
            Region::Heap => (self.base, self.layout.total),
            Region::Data => self.data,
        };
        assert!(
            at <= len,
            "offset {offset:#x} outside the {} ({len} bytes)",
            region.name()
        );
        // SAFETY: inside the region (checked; one past its end at most), which is mapped for
        // the process's life.
        unsafe { base.add(at) }
    }

    /// This PE's data segment (base, length); (null, 0) in jobs without one.
    pub(crate) fn data_segment(&self) -> (*mut u8, usize) {
        self.data
    }

    /// Whether `offset .. offset + len` lies in the team segment, the heap or the data segment
    /// (in one of them).
    pub(crate) fn in_bounds(&self, offset: usize, len: usize) -> bool {
        let (region, at) = Region::of(offset);
        let limit = match region {
            Region::Team => SEGMENT,
            Region::Heap => self.layout.total,
            Region::Data => self.data.1,
        };
        at.checked_add(len).is_some_and(|end| end <= limit)
    }

    /// The offset of `bytes` bytes at local address `addr` when they lie in this PE's
    /// symmetric memory (the user part of the heap, or the data segment), `None` otherwise: the
    /// inverse of [`local`](Self::local) for a collective that is handed a plain slice.
    pub(crate) fn symmetric_offset(&self, addr: *const u8, bytes: usize) -> Option<usize> {
        let a = addr as usize;
        let past_statics = a.wrapping_sub(self.statics_at);
        if past_statics < self.statics_span {
            return (bytes <= self.statics_span - past_statics).then(|| a - self.base as usize);
        }
        let (data, data_len) = self.data;
        let in_data = a.wrapping_sub(data as usize);
        (in_data < data_len && bytes <= data_len - in_data)
            .then_some(crate::mem::dataseg::DATA_OFFSET + in_data)
    }

    /// Local heap base.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// True when `peer`'s heap is mapped here (load/store reaches it).
    #[inline]
    pub(crate) fn is_direct(&self, peer: &Peer) -> bool {
        !peer.direct.is_null()
    }

    /// Panics after finalize, or for an offset outside every region.
    #[inline]
    #[track_caller]
    fn check_offset(&self, offset: usize) {
        self.check_live();
        assert!(
            self.in_bounds(offset, 1),
            "offset {offset} outside the team segment, the heap and the data segment"
        );
    }

    /// The local address of `offset` in `peer` when load and store reach it (its heap is
    /// mapped here, or `offset` lies in its team segment and that is), `None` when only UCX
    /// does; panics after finalize, or for an offset outside every region.
    #[inline]
    #[track_caller]
    pub(crate) fn mapped(&self, peer: &Peer, offset: usize) -> Option<*mut u8> {
        self.check_offset(offset);
        let region = match Region::of(offset).0 {
            Region::Team => peer.team,
            Region::Heap | Region::Data => peer.direct,
        };
        // SAFETY: the region is mapped (not null) and holds `offset` (checked above; the data
        // segment is mapped with the heap).
        (!region.is_null()).then(|| unsafe { peer.at(offset) })
    }

    /// The local address of `offset` in `peer` for a collective: as [`mapped`](Self::mapped),
    /// but a peer of this node is mapped whatever `UCX_TLS` says (as Open MPI's oshmem moves
    /// its collectives' data through shared memory whatever it says), so that collectives on
    /// one node copy their data once, by loads and stores, while puts, gets and atomics go
    /// through UCX. `None` for another node's PE, or where the kernel refused the mapping;
    /// panics after finalize, or for an offset outside every region.
    #[inline]
    #[track_caller]
    pub(crate) fn coll_mapped(&self, peer: &Peer, offset: usize) -> Option<*mut u8> {
        self.check_offset(offset);
        let (region, at) = Region::of(offset);
        let base = match region {
            Region::Team => peer.team,
            Region::Heap if peer.shared.is_null() => return None,
            Region::Heap => peer.shared,
            Region::Data if peer.shared.is_null() => return None,
            Region::Data => peer.data,
        };
        // SAFETY: the region is mapped (checked: a peer whose heap is mapped here has its data
        // segment mapped too, in a job with one) and holds `offset` (checked above).
        (!base.is_null()).then(|| unsafe { base.add(at) })
    }

    /// Local address of `offset` in a peer that [`mapped`](Self::mapped) reaches there; panics
    /// after finalize, or where it does not.
    #[inline]
    #[track_caller]
    pub(crate) fn direct_ptr(&self, peer: &Peer, offset: usize) -> *mut u8 {
        match self.mapped(peer, offset) {
            Some(p) => p,
            None => panic!("offset {offset} of a peer that is not mapped here"),
        }
    }

    /// The index of `peer` when it is one of the main worker's peers (not a context's).
    fn pe_of(&self, peer: &Peer) -> Option<usize> {
        let at = (peer as *const Peer as usize).wrapping_sub(self.peers.as_ptr() as usize);
        let pe = at / size_of::<Peer>();
        self.peers.get(pe).filter(|p| ptr::eq(*p, peer)).map(|_| pe)
    }

    /// The local 8-byte word at `offset`, which other PEs update atomically.
    #[inline]
    #[track_caller]
    pub(crate) fn local_word(&self, offset: usize) -> &AtomicU64 {
        assert!(
            offset.is_multiple_of(8) && self.in_bounds(offset, 8),
            "heap offset {offset} is not a word of the heap"
        );
        // SAFETY: an aligned word inside the heap (checked; the heap is a whole number of
        // pages), which every PE accesses only atomically (callers pass flag and signal
        // words); the mapping lives as long as `self`.
        unsafe { AtomicU64::from_ptr(self.local(offset).cast()) }
    }

    /// Waits until `done()` holds for local memory that other PEs write, driving UCX
    /// ([`Progress::wait`] without polls).
    #[track_caller]
    pub(crate) fn wait_local(&self, done: impl FnMut() -> bool) {
        self.progress.wait(None, done)
    }

    /// Whether every PE of the job is on this node (their team segments are mapped here).
    pub(crate) fn one_node(&self) -> bool {
        self.one_node
    }

    /// Whether some peer is reached through UCX (reads of mapped memory then owe a round of
    /// progress).
    #[inline(always)]
    pub(crate) fn any_ucx(&self) -> bool {
        self.progress.any_ucx()
    }

    /// Drives UCX once (`shmem_test` and friends make progress without blocking). Every
    /// operation that reads memory which peers may be updating through UCX calls it: gets and
    /// `g` from mapped peers (this PE's own memory included), fetching atomics on them, signal
    /// fetches, tests and waits, so that a loop polling with any of them completes on every
    /// transport. Free when every peer is mapped (one branch on a constant flag).
    #[doc(alias = "shmem_test")]
    #[inline(always)]
    pub(crate) fn progress(&self) {
        self.progress.progress();
    }

    /// One round of progress on this process's workers other than `waiting_on`, whose own wait
    /// progresses it (the UCX wait hook).
    pub(crate) fn progress_except(&self, waiting_on: shmem_ucx::sys::ucp_worker_h) {
        self.progress.progress_except(waiting_on);
    }
}

/// A UCX failure in the middle of a data transfer cannot be handed back to the caller in a
/// meaningful state: it ends this PE (and so the job) with UCX's own message.
#[inline]
#[track_caller]
fn check<T>(r: shmem_ucx::Result<T>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => ucx_failed(what, e),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn ucx_failed(what: &str, e: shmem_ucx::Error) -> ! {
    // A transfer fails in UCX mostly because its target is gone (exited, killed, its host
    // lost). The launcher names that cause, and ends the job (this PE included) within a second
    // of it: give it that second, so that the job's end names the PE that left rather than this
    // PE's consequence of it.
    std::thread::sleep(std::time::Duration::from_secs(1));
    panic!("shmem: {what} failed in UCX: {e}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_pe(pe: usize, n: usize) -> ! {
    panic!("shmem: PE {pe} is out of range: this job has {n} PEs (valid PEs are 0..{n})")
}

#[cfg(test)]
mod tests {
    use super::{Link, Peer};

    /// What a PE keeps for every peer of the job, used or not (the model for 1,000 hosts in
    /// the README counts on it): the addresses and keys are in the node's start-up table, not
    /// here.
    #[test]
    fn a_peer_that_is_never_contacted_costs_a_few_words() {
        let (peer, link) = (size_of::<Peer>(), size_of::<Link>());
        eprintln!("Peer: {peer} bytes, Link: {link} bytes");
        assert!(
            peer <= 112,
            "a Peer grew to {peer} bytes (its Link: {link})"
        );
    }
}
