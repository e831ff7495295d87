//! Atomic memory operations on one word of a peer: a CPU atomic where the word is mapped here
//! (same node), else `ucp_atomic_op_nbx` (both dispatches together, per peer and per region).
//!
//! Part of the transport layer (methods of [`Transport`]); uses `mem` only. The typed AMOs of
//! the OpenSHMEM families (`ops::amo`) and the transport's own collectives call it.

use super::{Peer, Transport, UcxPeer, ucx_failed};
use shmem_ucx::{AtomicOp, AtomicSize, RemoteKey};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The operation of one AMO.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AmoOp {
    Fetch,
    Set,
    Swap,
    Cswap,
    Add,
    FetchAdd,
    And,
    FetchAnd,
    Or,
    FetchOr,
    Xor,
    FetchXor,
}

impl AmoOp {
    /// Whether the operation returns the old value.
    fn fetches(self) -> bool {
        !matches!(self, AmoOp::Add | AmoOp::And | AmoOp::Or | AmoOp::Xor)
    }
}

impl From<AmoOp> for AtomicOp {
    fn from(op: AmoOp) -> Self {
        use AtomicOp as U;
        match op {
            // A fetch is an add of 0; a set is a swap whose old value is dropped.
            AmoOp::Fetch | AmoOp::Add | AmoOp::FetchAdd => U::Add,
            AmoOp::Set | AmoOp::Swap => U::Swap,
            AmoOp::Cswap => U::Cswap,
            AmoOp::And | AmoOp::FetchAnd => U::And,
            AmoOp::Or | AmoOp::FetchOr => U::Or,
            AmoOp::Xor | AmoOp::FetchXor => U::Xor,
        }
    }
}

impl Transport {
    /// `op` on the word of `size` at `offset` of `peer` with operands `(value, compare)`;
    /// returns the old value (0 for an operation that does not fetch). A CPU atomic when the
    /// word is mapped here (the peer's heap, or the runtime's words in its team segment), a UCX
    /// atomic otherwise. The caller checked that the word lies inside an object, aligned for
    /// `size`.
    #[inline(always)]
    pub(crate) fn atomic(
        &self,
        peer: &Peer,
        offset: usize,
        size: AtomicSize,
        op: AmoOp,
        (value, compare): (u64, u64),
    ) -> u64 {
        let word = self.mapped(peer, offset).unwrap_or(std::ptr::null_mut());
        // SAFETY: `word` is the word's address here (checked by `mapped`), or null.
        unsafe { self.atomic_at(peer, offset, word, size, op, (value, compare)) }
    }

    /// [`atomic`](Self::atomic) for a caller that checked the liveness and the location itself
    /// and found the word's address here, `word` ([`Peer::direct_in`]; null when only UCX
    /// reaches the peer): the same CPU atomic or UCX operation, without the checks.
    ///
    /// # Safety
    /// The runtime is live; `offset` names a word of `size` inside the heap or the data segment
    /// of `peer`, aligned for `size`, and `word` is null or that word's address in this process.
    #[inline(always)]
    pub(crate) unsafe fn atomic_at(
        &self,
        peer: &Peer,
        offset: usize,
        word: *mut u8,
        size: AtomicSize,
        op: AmoOp,
        (value, compare): (u64, u64),
    ) -> u64 {
        if word.is_null() {
            return self.ucx_amo(
                peer,
                offset,
                size,
                (op.into(), op.fetches()),
                (value, compare),
            );
        }
        // A loop polling with atomics (a lock, a counter) drives UCX too.
        self.progress();
        // SAFETY: a checked location mapped here, aligned for `size` (per the caller: objects
        // are 64-byte aligned and words are 4 or 8 bytes); peers only access it atomically or by
        // copies that OpenSHMEM leaves unordered anyway.
        unsafe { cpu_amo(word, size, op, value, compare) }
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
        self.progress.note_op();
        let u = peer.ucx();
        self.after_am_puts(peer, &u);
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
}

/// A CPU atomic on a mapped word; returns the old value.
///
/// # Safety
/// `p` is valid and aligned for a word of `size` and only accessed atomically by others.
#[inline(always)]
unsafe fn cpu_amo(p: *mut u8, size: AtomicSize, op: AmoOp, v: u64, c: u64) -> u64 {
    const O: Ordering = Ordering::SeqCst;
    macro_rules! apply {
        ($a:expr, $t:ty) => {{
            let a = $a;
            let (v, c) = (v as $t, c as $t);
            (match op {
                AmoOp::Fetch => a.load(O),
                AmoOp::Set => {
                    a.store(v, O);
                    0
                }
                AmoOp::Swap => a.swap(v, O),
                AmoOp::Cswap => match a.compare_exchange(c, v, O, O) {
                    Ok(old) | Err(old) => old,
                },
                AmoOp::Add | AmoOp::FetchAdd => a.fetch_add(v, O),
                AmoOp::And | AmoOp::FetchAnd => a.fetch_and(v, O),
                AmoOp::Or | AmoOp::FetchOr => a.fetch_or(v, O),
                AmoOp::Xor | AmoOp::FetchXor => a.fetch_xor(v, O),
            }) as u64
        }};
    }
    match size {
        // SAFETY: the caller guarantees validity and alignment.
        AtomicSize::U32 => apply!(unsafe { AtomicU32::from_ptr(p.cast()) }, u32),
        // SAFETY: as above.
        AtomicSize::U64 => apply!(unsafe { AtomicU64::from_ptr(p.cast()) }, u64),
    }
}

/// An AMO on `addr` through the endpoint `u`.
#[track_caller]
pub(super) fn amo_on(
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
