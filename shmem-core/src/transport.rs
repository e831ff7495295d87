//! The transport layer: the PEs as this process reaches them, and the bytes that move between
//! them (put, get, atomics, fence, quiet).
//!
//! Where does a put to a peer on this node happen? In [`Transport::rma`]: when the peer's heap is
//! mapped into this process (`ucp_rkey_ptr` succeeded at start-up) it is a copy into
//! `Peer::direct`; otherwise it is a UCX `ucp_put_nbx` on the peer's endpoint.
//!
//! This layer sits below the OpenSHMEM families: it knows offsets in the symmetric heap, not what
//! lives at them (heap arrays, statics, teams).
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
//! The transport is created once per process and never freed, and the heap mappings it points
//! into are never unmapped (the process's exit releases them): a handle that outlives the `World`
//! cannot reach freed memory. Every operation checks that the runtime is live (one acquire load)
//! and panics with "used after the World was dropped" when it is not. UCX endpoints and keys of
//! peers reached through the network *are* closed at finalize; operations hold a read lock on a
//! peer's endpoint while they use it, and finalize takes the write lock to close it, so the two
//! cannot overlap.

use crate::copy::{copy_bytes, copy_elem};
use crate::dataseg::DATA_OFFSET;
use crate::error::Result;
use crate::layout::HeapLayout;
use crate::progress::{self, Progress};
use crate::strided::{self, SignalKind};
use crate::team::SEGMENT;
use shmem_ucx::{
    AtomicOp, AtomicSize, Context, Endpoint, MemHandle, RemoteKey, ThreadMode, Worker,
};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

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

impl UcxPeer {
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
    /// The peer's heap base mapped into this process, or null when it is not reachable by
    /// load/store (another node, or shared-memory transports disabled). Never unmapped.
    direct: *mut u8,
    /// The peer's heap base in its own address space, for UCX.
    remote_base: u64,
    /// The peer's data segment mapped into this process (null: not mapped, or none).
    data: *mut u8,
    /// The peer's data segment base in its own address space, for UCX.
    data_remote: u64,
    /// The peer's team segment mapped into this process (null: not mapped: another node, or
    /// the kernel refused). Never null where `direct` is not.
    team: *mut u8,
    /// The peer's team segment base in its own address space, for UCX.
    team_remote: u64,
    /// The endpoint and key; `None` once closed. Operations through UCX hold the read lock.
    /// For a directly mapped peer the key owns the mapping: it is kept for the process's life.
    ucx: RwLock<Option<UcxPeer>>,
}

// SAFETY: `direct` points into a shared-memory mapping that is never unmapped while the process
// runs (see the module docs), and all access through it is by explicit copies and atomics; the
// UCX parts are behind a lock and UCX's workers are multi-threaded.
unsafe impl Send for Peer {}
// SAFETY: as for Send: no `&`/`&mut` to the mapped memory is ever handed out through a `&Peer`.
unsafe impl Sync for Peer {}

impl Peer {
    /// A peer mapped at `direct` (null: not mapped) whose heap starts at `remote_base` in its own
    /// address space.
    pub(crate) fn new(direct: *mut u8, remote_base: u64, ucx: Option<UcxPeer>) -> Peer {
        Peer {
            direct,
            remote_base,
            data: ptr::null_mut(),
            data_remote: 0,
            team: ptr::null_mut(),
            team_remote: 0,
            ucx: RwLock::new(ucx),
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

    /// The peer's UCX endpoint, held for the duration of one operation.
    #[inline]
    #[track_caller]
    fn ucx(&self) -> UcxGuard<'_> {
        let guard = self.ucx.read().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            used_after_finalize();
        }
        UcxGuard(guard)
    }

    /// Closes the endpoint (flushing it first) unless the peer is mapped directly.
    fn close(&self) {
        if !self.direct.is_null() {
            return;
        }
        let taken = self.ucx.write().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(u) = taken {
            drop(u.rkey);
            drop(u.data_rkey);
            drop(u.team_rkey);
            // A failed close at exit changes nothing for the user; UCX already logged it.
            let _ = u.ep.close();
        }
    }
}

/// A read lock on a peer's endpoint that is known to be open.
struct UcxGuard<'a>(RwLockReadGuard<'a, Option<UcxPeer>>);

impl std::ops::Deref for UcxGuard<'_> {
    type Target = UcxPeer;
    #[inline]
    fn deref(&self) -> &UcxPeer {
        match &*self.0 {
            Some(u) => u,
            None => unreachable!("checked when the guard was made"),
        }
    }
}

/// Direction of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    /// Local to remote.
    Put,
    /// Remote to local.
    Get,
}

/// When a transfer is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Completion {
    /// On return (a put's source may be reused; a get's destination holds the data).
    Blocking,
    /// At the next quiet.
    Nbi,
}

/// The PEs of the job as this process reaches them. (`pub` only so that the sealed supertrait
/// of the symmetric objects can name it; the module is private.)
pub struct Transport {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    /// Local heap base.
    base: *mut u8,
    pub(crate) layout: HeapLayout,
    /// This PE's data segment (base, length), in jobs that made it symmetric; (null, 0) else.
    data: (*mut u8, usize),
    /// This PE's team segment (`SEGMENT` bytes), mapped for the process's life.
    team: *mut u8,
    /// Every peer's team segment is mapped here.
    one_node: bool,
    peers: Box<[Peer]>,
    /// Each PE's worker address and packed rkeys (heap, data segment), for the endpoints of
    /// contexts.
    wire: Box<[Wire]>,
    /// False once the `World` was dropped.
    live: AtomicBool,
    pub(crate) progress: Progress,
    context: Context,
    /// Owns this PE's heap mapping (never unmapped: see the module docs).
    _mem: MemHandle,
    /// The UCX registration of the data segment.
    _data_mem: Option<MemHandle>,
    /// The UCX registration of the team segment.
    _team_mem: MemHandle,
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
    pub(crate) wire: Vec<Wire>,
    pub(crate) progress_thread: bool,
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
            layout: p.layout,
            data: p.data,
            team: p.team,
            one_node: p.peers.iter().all(|x| !x.team.is_null()),
            peers: p.peers.into_boxed_slice(),
            wire: p.wire.into_boxed_slice(),
            live: AtomicBool::new(true),
            progress: Progress::new(p.worker, any_ucx, p.progress_thread)?,
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
        if !self.live.load(Ordering::Acquire) {
            used_after_finalize();
        }
    }

    /// Marks the runtime finalized and closes the endpoints of peers reached through UCX (those
    /// mapped directly keep their mappings until the process exits).
    pub(crate) fn close(&self) {
        self.live.store(false, Ordering::Release);
        for peer in self.peers.iter() {
            peer.close();
        }
    }

    /// Marks the runtime finalized without touching UCX (a PE that is going down).
    pub(crate) fn abandon(&self) {
        self.live.store(false, Ordering::Release);
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

    /// Local heap base.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// True when `peer`'s heap is mapped here (load/store reaches it).
    #[inline]
    pub(crate) fn is_direct(&self, peer: &Peer) -> bool {
        !peer.direct.is_null()
    }

    /// The local address of `offset` in `peer` when load and store reach it (its heap is
    /// mapped here, or `offset` lies in its team segment and that is), `None` when only UCX
    /// does; panics after finalize, or for an offset outside every region.
    #[inline]
    #[track_caller]
    pub(crate) fn mapped(&self, peer: &Peer, offset: usize) -> Option<*mut u8> {
        self.check_live();
        assert!(
            self.in_bounds(offset, 1),
            "offset {offset} outside the team segment, the heap and the data segment"
        );
        let region = match Region::of(offset).0 {
            Region::Team => peer.team,
            Region::Heap | Region::Data => peer.direct,
        };
        // SAFETY: the region is mapped (not null) and holds `offset` (checked above; the data
        // segment is mapped with the heap).
        (!region.is_null()).then(|| unsafe { peer.at(offset) })
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

    /// The one put/get dispatch: moves `len` bytes between `local` and `offset` in `peer`'s heap,
    /// by a copy when the peer is mapped here, else through UCX.
    ///
    /// # Safety
    /// `offset + len` lies inside the symmetric heap; `local` is valid for `len` bytes (reads for
    /// a put, writes for a get) and not inside the peer's mapping of the same bytes; with
    /// [`Completion::Nbi`] it stays valid (and, for a put, unchanged) until the next quiet.
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn rma(
        &self,
        peer: &Peer,
        dir: Dir,
        completion: Completion,
        offset: usize,
        local: *mut u8,
        len: usize,
    ) {
        self.check_live();
        if !peer.direct.is_null() {
            if dir == Dir::Get {
                // A loop that polls memory with gets (its own included) must also let UCX carry
                // out what peers reached through it send here (free in a direct-only job).
                self.progress();
            }
            // SAFETY: the caller keeps the range inside the peer's mapped heap and `local` valid
            // and disjoint from it.
            unsafe {
                let remote = peer.at(offset);
                match dir {
                    Dir::Put => copy_bytes(remote, local, len),
                    Dir::Get => copy_bytes(local, remote, len),
                }
            }
            return;
        }
        // SAFETY: forwarded contract.
        unsafe { self.rma_ucx(peer, dir, completion, offset, local, len) }
    }

    /// The UCX half of [`rma`](Self::rma), out of line so that the direct path stays a copy.
    ///
    /// # Safety
    /// As [`rma`](Self::rma).
    #[inline(never)]
    #[track_caller]
    unsafe fn rma_ucx(
        &self,
        peer: &Peer,
        dir: Dir,
        completion: Completion,
        offset: usize,
        local: *mut u8,
        len: usize,
    ) {
        let u = peer.ucx();
        let (addr, rkey) = u.target(peer, offset);
        // SAFETY: per the caller, for the peer's registered region described by `rkey`; the
        // caller keeps `local` alive until completion.
        let (r, what) = unsafe {
            match (dir, completion) {
                (Dir::Put, Completion::Blocking) => (u.ep.put(local, len, addr, rkey), "put"),
                (Dir::Put, Completion::Nbi) => (u.ep.put_nbi(local, len, addr, rkey), "put_nbi"),
                (Dir::Get, Completion::Blocking) => (u.ep.get(local, len, addr, rkey), "get"),
                (Dir::Get, Completion::Nbi) => (u.ep.get_nbi(local, len, addr, rkey), "get_nbi"),
            }
        };
        check(r, what);
    }

    /// Copies `len` bytes from `src` to `offset` in `peer`'s heap; `src` may be reused on return.
    ///
    /// # Safety
    /// As [`rma`](Self::rma).
    #[inline]
    #[track_caller]
    pub(crate) unsafe fn put_bytes(&self, peer: &Peer, offset: usize, src: *const u8, len: usize) {
        // SAFETY: forwarded contract; a put only reads `src`.
        unsafe {
            self.rma(
                peer,
                Dir::Put,
                Completion::Blocking,
                offset,
                src.cast_mut(),
                len,
            )
        }
    }

    /// Copies `len` bytes from `offset` in `peer`'s heap to `dst`; complete on return.
    ///
    /// # Safety
    /// As [`rma`](Self::rma).
    #[inline]
    #[track_caller]
    pub(crate) unsafe fn get_bytes(&self, peer: &Peer, offset: usize, dst: *mut u8, len: usize) {
        // SAFETY: forwarded contract.
        unsafe { self.rma(peer, Dir::Get, Completion::Blocking, offset, dst, len) }
    }

    /// Puts `size` bytes to each `(offset, local)` pair of `peer`'s heap (a strided put); the
    /// sources may be reused on return. Checks liveness once; through UCX the elements travel
    /// packed in a few messages and are in place at the target after the next quiet
    /// ([`put_elems_ucx`](Self::put_elems_ucx)).
    ///
    /// # Safety
    /// As [`rma`](Self::rma) for each pair, with blocking completion.
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn put_elems(
        &self,
        peer: &Peer,
        elems: impl Iterator<Item = (usize, *const u8)>,
        size: usize,
    ) {
        self.check_live();
        if !peer.direct.is_null() {
            for (offset, local) in elems {
                // SAFETY: per the caller.
                unsafe { copy_elem(peer.at(offset), local, size) };
            }
            return;
        }
        // SAFETY: forwarded contract.
        unsafe { self.put_elems_ucx(peer, elems, size) }
    }

    /// The UCX half of [`put_elems`](Self::put_elems): two or more elements to a PE of the
    /// main worker travel packed in active messages ([`strided::put`]), complete at the next
    /// quiet; a single element, or elements too large for one message (or empty ones), are
    /// blocking puts.
    ///
    /// # Safety
    /// As [`put_elems`](Self::put_elems).
    #[inline(never)]
    #[track_caller]
    unsafe fn put_elems_ucx(
        &self,
        peer: &Peer,
        mut elems: impl Iterator<Item = (usize, *const u8)>,
        size: usize,
    ) {
        let u = peer.ucx();
        let put_one = |(offset, local): (usize, *const u8)| {
            let (addr, rkey) = u.target(peer, offset);
            // SAFETY: per the caller; a blocking put reads `local` before it returns.
            check(unsafe { u.ep.put(local, size, addr, rkey) }, "put");
        };
        let Some(first) = elems.next() else {
            return;
        };
        let pe = self.pe_of(peer);
        match (elems.next(), pe) {
            (Some(second), Some(pe)) if strided::fits(size) => {
                let all = std::iter::once(first)
                    .chain(std::iter::once(second))
                    .chain(elems);
                // SAFETY: per the caller.
                check(unsafe { strided::put(self, &u.ep, pe, all, size) }, "iput");
            }
            (second, _) => {
                put_one(first);
                second.into_iter().chain(elems).for_each(put_one);
            }
        }
    }

    /// The index of `peer` when it is one of the main worker's peers (not a context's).
    fn pe_of(&self, peer: &Peer) -> Option<usize> {
        let at = (peer as *const Peer as usize).wrapping_sub(self.peers.as_ptr() as usize);
        let pe = at / size_of::<Peer>();
        self.peers.get(pe).filter(|p| ptr::eq(*p, peer)).map(|_| pe)
    }

    /// Gets `size` bytes from each `(offset, local)` pair of `peer`'s heap (a strided get);
    /// complete on return. Through UCX the elements come packed in a few messages, all under
    /// one hold of the endpoint, and nothing can write into a destination any more once this
    /// returns or unwinds ([`get_elems_ucx`]).
    ///
    /// # Safety
    /// As [`rma`](Self::rma) for each pair, with blocking completion.
    #[inline(always)]
    #[track_caller]
    pub(crate) unsafe fn get_elems(
        &self,
        peer: &Peer,
        elems: impl Iterator<Item = (usize, *mut u8)>,
        size: usize,
    ) {
        self.check_live();
        if !peer.direct.is_null() {
            // As in `rma`: a polling get drives UCX too.
            self.progress();
            for (offset, local) in elems {
                // SAFETY: per the caller.
                unsafe { copy_elem(local, peer.at(offset), size) };
            }
            return;
        }
        // SAFETY: forwarded contract.
        unsafe { get_elems_ucx(self, peer, elems, size) }
    }

    /// An AMO through UCX on the word at `offset` of `peer` with operands `(value, compare)`;
    /// returns the old value (0 for a non-fetching operation).
    #[track_caller]
    pub(crate) fn ucx_amo(
        &self,
        peer: &Peer,
        offset: usize,
        size: AtomicSize,
        (op, fetch): (AtomicOp, bool),
        (value, compare): (u64, u64),
    ) -> u64 {
        self.check_live();
        let u = peer.ucx();
        if op == AtomicOp::Add && !fetch && self.pe_of(peer).is_some() {
            // A non-fetching add to a PE of the main worker: started as a fetching one whose
            // reply completes it (the next quiet waits for it), so that its remote completion
            // needs no flush exchange of its own (`Endpoint::atomic_add_nbi`).
            let (addr, rkey) = u.target(peer, offset);
            // SAFETY: the caller checked that the word lies in the peer's heap, aligned.
            if let Err(e) = unsafe { u.ep.atomic_add_nbi(value, size, addr, rkey) } {
                ucx_failed("atomic", e);
            }
            return 0;
        }
        amo_on(
            &u,
            u.target(peer, offset),
            size,
            (op, fetch),
            (value, compare),
        )
    }

    /// Completes outstanding UCX operations to `peer` (no-op for direct peers).
    #[track_caller]
    pub(crate) fn flush_peer(&self, peer: &Peer) {
        if peer.direct.is_null() {
            // Strided puts are complete when their target has acknowledged them (and adds
            // when their replies are in: those are counted for the process only).
            if let Some(pe) = self.pe_of(peer) {
                self.wait_local(|| strided::acked(pe) && shmem_ucx::atomics_in_flight() == 0);
            }
            check(peer.ucx().ep.flush(), "flush");
        }
    }

    /// Stores `value` into the 8-byte word at `offset` on `pe` so that a waiter sees it together
    /// with everything this PE wrote to `pe` before (release ordering).
    #[track_caller]
    pub(crate) fn store_flag(&self, pe: usize, offset: usize, value: u64) {
        let peer = self.peer(pe);
        if let Some(p) = self.mapped(peer, offset) {
            // SAFETY: flag offsets lie in the team segment, 8-byte aligned; peers only touch
            // these words atomically.
            let flag = unsafe { AtomicU64::from_ptr(p.cast()) };
            flag.store(value, Ordering::Release);
        } else {
            self.put_with_signal(peer, (offset, &[]), (offset, SignalKind::Max, value));
        }
    }

    /// Copies `parts` (back to back, possibly none) to offset `offset` of `peer` and then
    /// updates the 8-byte word at offset `signal` there as `kind` says (release ordering:
    /// whoever sees the word's new value sees the bytes). Where the word is mapped here, copies
    /// (or, for bytes only UCX reaches, blocking puts and a flush) and an atomic; to a PE of the
    /// main worker, one active message (`strided::put_signal`); through a context's endpoint,
    /// or over [`strided::MAX_MSG`] bytes, blocking puts, a flush and a UCX atomic (`Max` there
    /// is a plain swap, which only one writer per word makes safe). The caller keeps the bytes
    /// inside one region (team segment, heap or data segment) and the word aligned.
    #[track_caller]
    pub(crate) fn put_with_signal(
        &self,
        peer: &Peer,
        (offset, parts): (usize, &[&[u8]]),
        (signal, kind, value): (usize, SignalKind, u64),
    ) {
        self.check_live();
        let len: usize = parts.iter().map(|p| p.len()).sum();
        match self.mapped(peer, signal) {
            Some(word) if len == 0 || self.mapped(peer, offset).is_some() => {
                let mut at = offset;
                for p in parts {
                    // SAFETY: the caller keeps the range inside one region of the peer, which
                    // is mapped here (checked above); `p` is a local slice, disjoint from it.
                    unsafe { copy_bytes(peer.at(at), p.as_ptr(), p.len()) };
                    at += p.len();
                }
                // SAFETY: the word is mapped here, 8-byte aligned (the caller's contract).
                unsafe { update_word(word, kind, value) };
            }
            word => {
                // Some of it only UCX reaches (the word too, or a heap reached through UCX
                // under a mapped team segment: UCX_TLS without shared memory).
                if let Some(pe) = self.pe_of(peer)
                    && len <= strided::MAX_MSG
                {
                    let u = peer.ucx();
                    check(
                        strided::put_signal(
                            self,
                            &u.ep,
                            pe,
                            (offset, parts),
                            (signal, kind, value),
                        ),
                        "put_signal",
                    );
                    return;
                }
                let mut at = offset;
                for p in parts {
                    // SAFETY: as above, in the peer's registered memory; blocking puts.
                    unsafe { self.put_bytes(peer, at, p.as_ptr(), p.len()) };
                    at += p.len();
                }
                match word {
                    Some(word) => {
                        // The bytes are delivered before the mapped word changes.
                        self.flush_peer(peer);
                        // SAFETY: as above.
                        unsafe { update_word(word, kind, value) };
                    }
                    None => self.signal_update(peer, signal, kind == SignalKind::Add, value),
                }
            }
        }
    }

    /// Waits until every active message this process sent has left it (UCX finishes a send
    /// that it could not complete at once inside this PE's progress): a PE about to compute
    /// for a while calls it after sending flags that others wait for.
    #[track_caller]
    pub(crate) fn wait_sent(&self) {
        if self.progress.any_ucx() && shmem_ucx::am_sends_in_flight() != 0 {
            self.wait_local(|| shmem_ucx::am_sends_in_flight() == 0);
        }
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

    /// Waits until `done()` holds for local memory that other PEs write: spins briefly, then
    /// yields between checks, driving UCX so that transfers carried by this PE's progress land.
    #[track_caller]
    pub(crate) fn wait_local(&self, done: impl FnMut() -> bool) {
        self.wait_local_polling(None, done)
    }

    /// [`wait_local`](Self::wait_local), or with `polls` (`Some(n)`) a wait for a condition that
    /// the PEs of this node fulfil through shared memory (a collective's flags on one node): it
    /// looks at `done()` `n` more times before its first round of UCX progress and once more
    /// between later rounds (over tcp a round is a system call, during which an arrived flag
    /// waits to be seen; see [`POLLS_PER_PROGRESS`](progress::POLLS_PER_PROGRESS)), and a
    /// condition that already holds returns at once, without progress. That is safe for collectives: they
    /// progress whenever they do wait, and a PE whose peers need its progress is one they keep
    /// waiting. (A condition that needs this PE's UCX progress, as a quiet does, takes `None`.)
    #[track_caller]
    pub(crate) fn wait_local_polling(&self, polls: Option<u32>, mut done: impl FnMut() -> bool) {
        if polls.is_none() {
            // Progress even when the condition already holds: a program that polls with waits
            // or tests must keep the operations that peers aim at this PE moving.
            self.progress.progress();
        }
        let mut spins = 0;
        let mut window = polls.unwrap_or(0);
        while !done() {
            self.check_live();
            if self.progress.any_ucx() {
                for _ in 0..window {
                    std::hint::spin_loop();
                    if done() {
                        return;
                    }
                }
                window = window.min(1);
            }
            self.progress.progress();
            progress::backoff(&mut spins);
        }
    }

    /// Whether every PE of the job is on this node (their team segments are mapped here).
    pub(crate) fn one_node(&self) -> bool {
        self.one_node
    }

    /// Updates the signal word at `offset` on `peer` after the data put before it to the same PE
    /// has been delivered (`shmem_put_signal`'s ordering).
    #[track_caller]
    pub(crate) fn signal_update(&self, peer: &Peer, offset: usize, add: bool, value: u64) {
        self.check_live();
        if let Some(p) = self.mapped(peer, offset) {
            // Data that went through UCX (a word in the team segment of a peer whose heap is
            // not mapped) is delivered first.
            self.flush_peer(peer);
            let kind = if add {
                SignalKind::Add
            } else {
                SignalKind::Set
            };
            // SAFETY: the signal word is mapped here, 8-byte aligned (checked by the caller);
            // Release orders the data copies before it.
            unsafe { update_word(p, kind, value) };
        } else {
            let u = peer.ucx();
            // The data must be at the target before the signal: complete it, then update.
            check(u.ep.flush(), "flush");
            let op = if add { AtomicOp::Add } else { AtomicOp::Swap };
            amo_on(
                &u,
                u.target(peer, offset),
                AtomicSize::U64,
                (op, false),
                (value, 0),
            );
        }
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

    /// OpenSHMEM fence: puts to each PE are delivered in order across the fence.
    #[track_caller]
    pub(crate) fn fence(&self) {
        self.check_live();
        std::sync::atomic::fence(Ordering::Release);
        if self.progress.any_ucx() {
            // Strided puts before the fence are in place before anything after it is sent, and
            // the next strided put to a PE flushes the plain puts before it (see `strided`).
            strided::note_fence();
            self.wait_local(strided::all_acked);
            check(self.progress.worker().fence(), "fence");
        }
    }

    /// OpenSHMEM quiet: every put, get and non-blocking operation issued so far is complete.
    #[track_caller]
    pub(crate) fn quiet(&self) {
        self.check_live();
        if self.progress.any_ucx() {
            // Strided puts are complete when their targets have acknowledged them, adds when
            // their replies are in; the rest when the worker's flush completes (whose wait
            // progresses the worker). With none of the former outstanding, no round of progress
            // before the flush: over tcp it is a system call, 1-2% of a put + quiet.
            let idle = || strided::all_acked() && shmem_ucx::atomics_in_flight() == 0;
            if !idle() {
                self.wait_local(idle);
            }
            check(self.progress.worker().flush(), "quiet");
        }
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    /// A new UCX worker and endpoints from it to every PE, for a context. Peers mapped into this
    /// process stay direct (no endpoint needed); the others get their own endpoint and rkey.
    pub(crate) fn context_route(&self) -> Result<(Worker, Box<[Peer]>, bool)> {
        self.check_live();
        // Multi-threaded whatever the context's mode: the runtime's waits progress it from
        // whichever thread waits.
        let worker = self.context.create_worker(ThreadMode::Multi)?;
        // The new worker's shared-memory queues, before its address is used.
        crate::private_shm::restrict_sysv_segments();
        let mut peers = Vec::with_capacity(self.n_pes);
        for (pe, main) in self.peers.iter().enumerate() {
            if !main.direct.is_null() {
                peers.push(
                    Peer::new(main.direct, main.remote_base, None)
                        .with_data(main.data, main.data_remote)
                        .with_team(main.team, main.team_remote),
                );
                continue;
            }
            let wire = &self.wire[pe];
            // SAFETY: the bytes are the peer's own worker address and packed rkeys from
            // start-up, unchanged (see `runtime::start`).
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
            peers.push(
                Peer::new(
                    ptr::null_mut(),
                    main.remote_base,
                    Some(UcxPeer {
                        rkey,
                        data_rkey,
                        team_rkey,
                        ep,
                    }),
                )
                .with_data(ptr::null_mut(), main.data_remote)
                .with_team(main.team, main.team_remote),
            );
        }
        let any_ucx = peers.iter().any(|p| p.direct.is_null());
        if any_ucx {
            self.progress.add_worker(&worker);
        }
        Ok((worker, peers.into_boxed_slice(), any_ucx))
    }

    /// Closes a context's endpoints (they are all idle: the context was quieted) and stops
    /// progressing its worker.
    pub(crate) fn close_route(&self, worker: &Worker, peers: &[Peer]) {
        self.progress.remove_worker(worker);
        for peer in peers {
            peer.close();
        }
    }
}

/// Updates the mapped signal word at `word` as `kind` says, with release ordering (whoever sees
/// the new value sees what this thread wrote or delivered before).
///
/// # Safety
/// `word` is an 8-byte aligned word of a live mapping that every PE accesses atomically.
unsafe fn update_word(word: *mut u8, kind: SignalKind, value: u64) {
    // SAFETY: per the caller.
    kind.apply(unsafe { AtomicU64::from_ptr(word.cast()) }, value);
}

/// The UCX half of [`Transport::get_elems`]: two or more elements from a PE of the main worker
/// are requested and answered in packed active messages ([`strided::get`]); a single element,
/// or elements too large for one message, are gets issued back to back and completed by one
/// flush.
///
/// # Safety
/// As [`Transport::get_elems`].
#[inline(never)]
#[track_caller]
unsafe fn get_elems_ucx(
    rt: &Transport,
    peer: &Peer,
    mut elems: impl Iterator<Item = (usize, *mut u8)>,
    size: usize,
) {
    /// Completes the endpoint's gets when dropped during a panic.
    struct FlushOnDrop<'a>(&'a UcxPeer);
    impl Drop for FlushOnDrop<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                // The error (if any) is already being reported; only completion matters.
                let _ = self.0.ep.flush();
            }
        }
    }
    let u = peer.ucx();
    let Some(first) = elems.next() else {
        return;
    };
    let second = elems.next();
    if let (Some(second), Some(pe)) = (second, rt.pe_of(peer))
        && strided::fits(size)
    {
        let all = std::iter::once(first)
            .chain(std::iter::once(second))
            .chain(elems);
        // SAFETY: per the caller; `strided::get` returns (or unwinds) only once no response
        // can write into a destination any more.
        check(unsafe { strided::get(rt, &u.ep, pe, all, size) }, "iget");
        return;
    }
    let flush = FlushOnDrop(&u);
    for (offset, local) in std::iter::once(first).chain(second).chain(elems) {
        let (addr, rkey) = u.target(peer, offset);
        // SAFETY: per the caller; `local` stays valid until the flush below (or the one in
        // `FlushOnDrop` on unwinding).
        check(unsafe { u.ep.get_nbi(local, size, addr, rkey) }, "get_nbi");
    }
    check(u.ep.flush(), "flush");
    drop(flush);
}

/// An AMO on `addr` through the endpoint `u`.
#[track_caller]
fn amo_on(
    u: &UcxPeer,
    (addr, rkey): (u64, &RemoteKey),
    size: AtomicSize,
    (op, fetch): (AtomicOp, bool),
    (value, compare): (u64, u64),
) -> u64 {
    // Swap and compare-swap always need the reply buffer in UCX (a `set` is a swap).
    let r = if fetch || matches!(op, AtomicOp::Swap | AtomicOp::Cswap) {
        // SAFETY: the caller checked that the word lies in the peer's heap, aligned.
        unsafe { u.ep.atomic_fetch(op, value, compare, size, addr, rkey) }
    } else {
        // SAFETY: as above.
        unsafe { u.ep.atomic_post(op, value, size, addr, rkey).map(|()| 0) }
    };
    match r {
        Ok(old) => old,
        Err(e) => ucx_failed("atomic", e),
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

/// The panic of every operation on a handle that outlived the `World`.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn used_after_finalize() -> ! {
    panic!(
        "shmem: used after the World was dropped: symmetric memory and the handles made from it \
         can be used only while the World returned by shmem_core::init() lives"
    )
}
