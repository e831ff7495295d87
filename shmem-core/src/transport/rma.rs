//! Put, get and their strided and signalled forms, fence and quiet: the one dispatch between a
//! copy into a peer's mapping and a UCX call, per peer and per region.
//!
//! Part of the transport layer (methods of [`Transport`]); uses `am`, `progress`, `mem`.
//! The direct path is `#[inline(always)]` down to the copy; the UCX half of every operation is
//! out of line, so that a put to a PE on this node compiles to a liveness check, a branch and
//! the copy.

use super::am;
use super::atomic::amo_on;
use super::progress;
use super::{Peer, Transport, UcxPeer, check};
use crate::mem::copy::{copy_bytes, copy_elem};
use crate::mem::word::SignalKind;
use shmem_ucx::{AtomicOp, AtomicSize};
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest put that travels as one of our active messages where UCX emulates RMA
/// (see [`Transport::am_put_target`]): one message's worth. Larger ones are UCX puts. UCX
/// answers every emulated put with a message of its own, ours are acknowledged on request:
/// windows of 16 and 32 KiB puts over tcp, then a quiet, moved 5-8% more puts per second
/// as active messages than as UCX puts (2 PEs, 6 alternating rounds; with 8 KiB here, 0.92 of
/// oshmem's rate, with 64 KiB 0.99-1.05).
const AM_PUT_MAX: usize = am::MAX_MSG;

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

impl Transport {
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
        if len == 0 {
            // Nothing to move; and a run of small gets (`am::runs`) takes none: it divides by
            // the length.
            return;
        }
        self.progress.note_op();
        let u = peer.ucx();
        if dir == Dir::Get
            && completion == Completion::Nbi
            && let Some(pe) = self.run_source(peer, &u, len)
        {
            // After the puts waiting in the PE's batch, as it would have been without it.
            if am::puts_wait() {
                check(am::send_batch_of(&self.progress, &u.ep, pe), "put");
            }
            // SAFETY: per the caller; `local` stays valid until the quiet that completes it.
            let r = unsafe { am::get_nbi(&self.progress, &u.ep, pe, offset, local, len) };
            check(r, "get_nbi");
            return;
        }
        if dir == Dir::Put
            && let Some(pe) = self.am_put_target(peer, &u, len)
        {
            // After the gets waiting in the PE's run (see `am::runs`).
            if am::runs_pending() {
                self.send_runs(Some(pe), false);
            }
            // The put right after a wait goes at once (see `progress::take_waited`).
            let r = if !progress::take_waited() && am::coalesces(pe, len) {
                // SAFETY: per the caller; the source is copied into the batch.
                unsafe { am::put_batched(&self.progress, &u.ep, pe, offset, local, len) }
            } else {
                self.send_batch_before(peer, &u);
                // SAFETY: per the caller; the source is copied into the message before this
                // returns, so either completion holds.
                unsafe {
                    am::put(
                        &self.progress,
                        &u.ep,
                        pe,
                        std::iter::once((offset, local.cast_const())),
                        len,
                    )
                }
            };
            check(r, "put");
            return;
        }
        match dir {
            Dir::Get => self.after_am_puts(peer, &u),
            Dir::Put => self.send_batch_before(peer, &u),
        }
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

    /// The PE to send a put of `len` bytes to `peer` to as an active message
    /// ([`am::put`]), or `None` for a UCX put. Where UCX emulates RMA (tcp) a put is an
    /// active message anyway, and UCX's target answers every one with a message of its own: a
    /// system call on both sides, on the critical path of a put + flag pipeline. Ours are
    /// acknowledged only when the sender needs them complete (quiet, a window of
    /// [`MAX_UNACKED`](am) messages). Up to [`AM_PUT_MAX`] bytes, to a PE of the main
    /// worker (a context's endpoints have no handlers).
    #[inline]
    fn am_put_target(&self, peer: &Peer, u: &UcxPeer, len: usize) -> Option<usize> {
        if !(1..=AM_PUT_MAX).contains(&len) || !u.ep.rma_over_am() {
            return None;
        }
        self.pe_of(peer)
    }

    /// The PE to add a non-blocking get of `len` bytes from `peer` to a run for ([`am::runs`]),
    /// or `None` for a UCX get: a get of at most 8 KiB (`RUN_GET_MAX` there), from a PE of the
    /// main worker whose endpoint carries everything on one ordered lane (where UCX emulates
    /// RMA: tcp), runs on.
    #[inline]
    fn run_source(&self, peer: &Peer, u: &UcxPeer, len: usize) -> Option<usize> {
        if !am::runs_take(len) || !u.ep.one_ordered_lane() {
            return None;
        }
        self.pe_of(peer)
    }

    /// Sends the runs of non-blocking gets waiting to go to `pe` (to every PE with `None`);
    /// with `try_only`, not if another thread holds them.
    #[track_caller]
    pub(crate) fn send_runs(&self, pe: Option<usize>, try_only: bool) {
        let Some(mut held) = am::runs(try_only) else {
            return;
        };
        for (pe, run) in held.take(pe) {
            // Its endpoint is open (the run began with a get on it).
            let u = self.peers[pe].ucx();
            check(held.send(&u.ep, pe, run), "get_nbi");
        }
    }

    /// Completes the runs of non-blocking gets from `pe` (from every PE with `None`): sends
    /// every run waiting (those to other PEs too, so that a caller completing PE after PE waits
    /// for all of them at once) and waits until every element from `pe` is written.
    #[track_caller]
    pub(crate) fn complete_runs(&self, pe: Option<usize>) {
        if am::runs_active() {
            self.send_runs(None, false);
            am::wait_landed(&self.progress, pe);
        }
    }

    /// Before a UCX get or atomic on `peer`: where messages to it may overtake each other (its
    /// endpoint has several lanes), waits until the puts in active messages sent to it are in
    /// place, so that the operation sees them as it does where one lane carries both. One
    /// branch on a flag otherwise.
    #[inline]
    #[track_caller]
    pub(crate) fn after_am_puts(&self, peer: &Peer, u: &UcxPeer) {
        self.send_batch_before(peer, u);
        if !am::all_ordered()
            && let Some(pe) = self.pe_of(peer)
            && !am::ordered(pe)
        {
            let count = check(am::ask(&u.ep, pe), "get");
            self.wait_local(|| am::acked_to(pe, count));
        }
    }

    /// Before any operation on `peer` but a put that joins its batch: sends the gets waiting
    /// in its run ([`am::runs`]) and the puts waiting in its batch ([`am::coalesces`]), so
    /// that the operation comes after them, as it would have without them. Two loads of flags
    /// when nothing waits.
    #[inline]
    #[track_caller]
    pub(crate) fn send_batch_before(&self, peer: &Peer, u: &UcxPeer) {
        if am::runs_pending()
            && let Some(pe) = self.pe_of(peer)
        {
            self.send_runs(Some(pe), false);
        }
        if progress::batched()
            && let Some(pe) = self.pe_of(peer)
        {
            check(am::send_batch_of(&self.progress, &u.ep, pe), "put");
        }
    }

    /// Sends every batch of puts waiting to go; with `try_only`, not if another thread is
    /// sending them (or this one, further up the stack).
    #[track_caller]
    pub(crate) fn send_batches(&self, try_only: bool) {
        // The runs of non-blocking gets first: a put batched after a get goes after it.
        if am::runs_pending() {
            self.send_runs(None, try_only);
        }
        if !progress::batched() {
            return;
        }
        let Some(mut held) = am::batches(try_only) else {
            return;
        };
        for (pe, recs) in held.take() {
            // Its endpoint is open (the batch began after a message to it); not dropped
            // silently if it were not.
            let u = self.peers[pe].ucx();
            check(
                am::send_taken(&self.progress, &held, &u.ep, pe, recs),
                "put",
            );
        }
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
    /// main worker travel packed in active messages ([`am::put`]), complete at the next
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
        self.send_batch_before(peer, &u);
        let put_one = |(offset, local): (usize, *const u8)| {
            let (addr, rkey) = u.target(peer, offset);
            // SAFETY: per the caller; a blocking put reads `local` before it returns.
            check(unsafe { u.ep.put(local, size, addr, rkey) }, "put");
        };
        let Some(first) = elems.next() else {
            return;
        };
        let pe = self.pe_of(peer);
        let second = elems.next();
        let packed =
            am::fits(size) && (second.is_some() || self.am_put_target(peer, &u, size).is_some());
        match (second, pe) {
            (second, Some(pe)) if packed => {
                let all = std::iter::once(first).chain(second).chain(elems);
                // SAFETY: per the caller.
                check(
                    unsafe { am::put(&self.progress, &u.ep, pe, all, size) },
                    "iput",
                );
            }
            (second, _) => {
                put_one(first);
                second.into_iter().chain(elems).for_each(put_one);
            }
        }
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

    /// Completes the gets started on `peer`'s endpoint with [`Completion::Nbi`] (and whatever
    /// else is in flight on it): the runs of such gets ([`complete_runs`](Self::complete_runs),
    /// which ends the PE on a UCX failure as every transfer does), then one flush of the
    /// endpoint, without the acknowledgement of puts in active messages that
    /// [`flush_peer`](Self::flush_peer) also waits for (a get already came after them:
    /// `after_am_puts`). `Err` only when the flush fails; nothing to do for a peer never
    /// contacted.
    pub(crate) fn flush_gets(&self, peer: &Peer) -> shmem_ucx::Result<()> {
        if let Some(pe) = self.pe_of(peer) {
            self.complete_runs(Some(pe));
        }
        match peer.ucx_if_open() {
            Some(u) => u.ep.flush(),
            None => Ok(()),
        }
    }

    /// [`flush_gets`](Self::flush_gets), ending the PE on a UCX failure as every transfer does.
    #[track_caller]
    pub(crate) fn complete_gets(&self, peer: &Peer) {
        check(self.flush_gets(peer), "get_nbi");
    }

    /// Completes outstanding UCX operations to `peer` (no-op for direct peers).
    #[track_caller]
    pub(crate) fn flush_peer(&self, peer: &Peer) {
        if peer.direct.is_null() {
            // Puts in active messages are complete when their target has acknowledged them
            // (and adds when their replies are in: those are counted for the process only).
            if let Some(pe) = self.pe_of(peer) {
                self.complete_runs(Some(pe));
                am::note_quiet(pe);
                let asked = peer.ucx_if_open().map(|u| {
                    self.send_batch_before(peer, &u);
                    am::ask(&u.ep, pe)
                });
                let count = asked.map_or(0, |r| check(r, "pe_quiet"));
                self.wait_local(|| am::acked_to(pe, count) && shmem_ucx::atomics_in_flight() == 0);
            }
            if let Some(u) = peer.ucx_if_open() {
                check(u.ep.flush(), "flush");
            }
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
    /// main worker, one active message (`am::put_signal`); through a context's endpoint,
    /// or over [`am::MAX_MSG`] bytes, blocking puts, a flush and a UCX atomic (`Max` there
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
                    && len <= am::MAX_MSG
                {
                    let u = peer.ucx();
                    self.send_batch_before(peer, &u);
                    check(
                        am::put_signal(
                            &self.progress,
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
        self.send_batches(false);
        if self.progress.any_ucx() && shmem_ucx::am_sends_in_flight() != 0 {
            self.wait_local(|| shmem_ucx::am_sends_in_flight() == 0);
        }
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
            self.send_batch_before(peer, &u);
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

    /// OpenSHMEM fence: puts to each PE are delivered in order across the fence.
    #[track_caller]
    pub(crate) fn fence(&self) {
        self.check_live();
        std::sync::atomic::fence(Ordering::Release);
        if self.progress.any_ucx() {
            // Puts in active messages before the fence are in place before anything after it
            // is sent, and the next such put to a PE flushes the plain puts before it (see
            // `strided`), except to PEs whose endpoint carries everything on one ordered lane
            // (tcp): there the target handles them in order anyway. With nothing to wait for,
            // no round of progress: over tcp it is a system call or two per fence (an
            // epoll_wait and often a recvfrom), which a put + fence pipeline pays on every row.
            am::note_fence();
            if !am::all_acked() && !am::all_ordered() {
                self.settle_am_puts(true);
            }
            check(self.progress.worker().fence(), "fence");
        }
    }

    /// Asks every PE sent puts in active messages since the last time for their
    /// acknowledgement and waits for it; for a fence (`for_fence`), only PEs whose messages
    /// may overtake each other (the others stay listed for the next quiet).
    #[track_caller]
    fn settle_am_puts(&self, for_fence: bool) {
        let mut waits = Vec::new();
        for pe in am::take_listed() {
            if for_fence && am::ordered(pe) {
                am::relist(pe);
                continue;
            }
            if !for_fence {
                am::note_quiet(pe);
            }
            if let Some(u) = self.peers[pe].ucx_if_open() {
                waits.push((pe, check(am::ask(&u.ep, pe), "quiet")));
            }
        }
        if !waits.is_empty() {
            self.wait_local(|| waits.iter().all(|&(pe, n)| am::acked_to(pe, n)));
        }
    }

    /// OpenSHMEM quiet: every put, get and non-blocking operation issued so far is complete.
    #[track_caller]
    pub(crate) fn quiet(&self) {
        self.check_live();
        if self.progress.any_ucx() {
            self.quiet_ucx();
        }
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    /// The UCX half of [`Transport::quiet`], a function of its own: inline, its registers made
    /// the direct path's quiet save and restore two more. Measured with
    /// `ALIGN=1 benches/compare-revs.sh d5a8c7f 16` (a commit from before the runs of gets
    /// made this half larger), `put + quiet` of 8 B from Rust took 1.036-1.047 of that
    /// commit's time inline and 0.945-0.972 outlined.
    #[inline(never)]
    #[track_caller]
    fn quiet_ucx(&self) {
        // Puts in active messages are complete when their targets have acknowledged them, adds
        // when their replies are in; the rest when the worker's flush completes (whose wait
        // progresses the worker). With none of the former outstanding, no round of progress
        // before the flush: over tcp it is a system call, 1-2% of a put + quiet.
        self.send_batches(false);
        self.complete_runs(None);
        if !am::all_acked() {
            self.settle_am_puts(false);
        }
        if shmem_ucx::atomics_in_flight() != 0 {
            self.wait_local(|| shmem_ucx::atomics_in_flight() == 0);
        }
        check(self.progress.worker().flush(), "quiet");
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
/// are requested and answered in packed active messages ([`am::get`]); a single element,
/// or elements too large for one message, are gets issued back to back and completed by one
/// flush.
///
/// # Safety
/// As [`Transport::get_elems`].
#[inline(never)]
#[track_caller]
unsafe fn get_elems_ucx(
    tp: &Transport,
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
    tp.after_am_puts(peer, &u);
    let second = elems.next();
    if let (Some(second), Some(pe)) = (second, tp.pe_of(peer))
        && am::fits(size)
    {
        let all = std::iter::once(first)
            .chain(std::iter::once(second))
            .chain(elems);
        // SAFETY: per the caller; `am::get` returns (or unwinds) only once no response
        // can write into a destination any more.
        check(
            unsafe { am::get(&tp.progress, &u.ep, pe, all, size) },
            "iget",
        );
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
