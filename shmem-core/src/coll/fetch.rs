//! Reading the members' memory in a large collective wherever it lies: by loads where a
//! member's memory is mapped here (this PE's own, its node's PEs on the direct path), by UCX gets
//! into a private buffer where it is not (another host, or `UCX_TLS` without shared memory).
//!
//! [`chunks`] walks a range of elements of every member's memory in chunks and hands each chunk
//! over as one pointer per member, in team order. The gets are pipelined: those of chunk `k + 1`
//! are issued before chunk `k` is handed over, and completed (one flush per member reached
//! through UCX) after it, so that the network moves the next chunk while this PE combines the
//! present one. A chunk is [`FETCH`] bytes per member through UCX (enough to keep a TCP
//! connection busy for longer than one flush's round trip; less with more than 32 such
//! members, [`FETCH_ALL`] in all), [`COMBINE`] where every member is
//! mapped (the reader's buffer stays in the L1 cache).
//!
//! Part of the collectives layer; uses `coll::team`, `transport`.

use super::team::Team;
use crate::element::Element;
use crate::mem::copy::Stores;
use crate::transport::rma::{Completion, Dir};
use crate::transport::{Peer, Transport};
use std::ops::Range;

/// Bytes per member in one chunk where every member is mapped (the reader's buffer stays in the
/// L1 cache).
pub(crate) const COMBINE: usize = 8 << 10;
/// Bytes per member in one chunk where some member is reached through UCX.
pub(crate) const FETCH: usize = 64 << 10;
/// Bytes of one chunk for all the members reached through UCX together: with many of them
/// (128 PEs across hosts) each member's share of a chunk shrinks below [`FETCH`], down to
/// [`COMBINE`], so that the two buffers stay near 2 × 2 MiB per PE instead of growing with the
/// job (127 members × 64 KiB × 2 = 16 MiB).
const FETCH_ALL: usize = 2 << 20;

/// How this PE reads one member's memory.
#[derive(Clone, Copy)]
pub(crate) enum Reach {
    /// By loads, at this address in this process.
    Mapped(*const u8),
    /// By UCX gets from this offset of the member's memory.
    Ucx(&'static Peer, usize),
}

/// How this PE reads team PE `j`'s memory at `offset` (team segment, heap or data segment).
pub(crate) fn reach(team: &Team<'_>, j: usize, offset: usize) -> Reach {
    let tp = team.tp();
    if j == team.my_pe() {
        return Reach::Mapped(tp.local(offset).cast_const());
    }
    let peer = tp.peer(team.world_pe(j));
    match tp.coll_mapped(peer, offset) {
        Some(p) => Reach::Mapped(p.cast_const()),
        None => Reach::Ucx(peer, offset),
    }
}

/// Writes `data` at `offset` (heap or data segment) of team PE `j`'s memory: by a copy where
/// [`reach`] maps it here (this PE's own memory, or a peer of this node, whatever `UCX_TLS`
/// says), else by a UCX put completed at the next quiet. `stores`: the copy's kind of stores.
///
/// # Safety
/// `offset + data.len()` lies inside the member's symmetric memory and nothing else accesses
/// those bytes until the collective's next sync; `data` is not those bytes (nor overlaps them)
/// and stays unchanged until the next quiet.
pub(crate) unsafe fn put(team: &Team<'_>, j: usize, offset: usize, data: &[u8], stores: Stores) {
    match reach(team, j, offset) {
        // SAFETY: per the caller: mapped here, apart from `data`.
        Reach::Mapped(p) => unsafe { stores.copy()(p.cast_mut(), data.as_ptr(), data.len()) },
        // SAFETY: per the caller: in the member's registered memory, `data` kept until the
        // quiet.
        Reach::Ucx(peer, off) => unsafe {
            team.tp().rma(
                peer,
                Dir::Put,
                Completion::Nbi,
                off,
                data.as_ptr().cast_mut(),
                data.len(),
            )
        },
    }
}

/// Completes the gets on `peers` if a panic unwinds past them (UCX failed, or a caller's
/// closure panicked), so that no get writes into a buffer that has been freed.
pub(crate) struct Landing<'a> {
    tp: &'a Transport,
    /// The peers that gets were issued to.
    pub(crate) peers: Vec<&'static Peer>,
}

impl<'a> Landing<'a> {
    /// No gets yet.
    pub(crate) fn new(tp: &'a Transport) -> Landing<'a> {
        Landing {
            tp,
            peers: Vec::new(),
        }
    }

    /// Completes every get issued to the peers.
    #[track_caller]
    pub(crate) fn complete(&self) {
        for p in &self.peers {
            self.tp.complete_gets(p);
        }
    }
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for p in &self.peers {
                // The panic already reports what went wrong; only completion matters here.
                let _ = self.tp.flush_gets(p);
            }
        }
    }
}

/// Team PE `j`'s 8-byte word at `offset` of the team block, for every `j` in team order (this
/// PE's own included): atomic loads where the block is mapped, gets (all in flight together)
/// where it is not. The caller has synced with the writers since they wrote.
pub(crate) fn words(team: &Team<'_>, offset: usize) -> Vec<u64> {
    let tp = team.tp();
    let at = team.block(offset);
    let mut out = vec![0u64; team.n_pes()];
    let mut landing = Landing::new(tp);
    for (j, w) in out.iter_mut().enumerate() {
        match reach(team, j, at) {
            Reach::Mapped(p) => {
                // SAFETY: an aligned word of a team block, mapped for the process's life, which
                // members access only atomically.
                *w = unsafe { std::sync::atomic::AtomicU64::from_ptr(p.cast_mut().cast()) }
                    .load(std::sync::atomic::Ordering::Acquire);
            }
            Reach::Ucx(peer, off) => {
                // SAFETY: a word of the peer's team block; `w` is a private word that stays
                // valid and untouched until `landing` completes the get (or unwinds).
                unsafe {
                    tp.rma(
                        peer,
                        Dir::Get,
                        Completion::Nbi,
                        off,
                        (w as *mut u64).cast(),
                        8,
                    )
                };
                landing.peers.push(peer);
            }
        }
    }
    landing.complete();
    out
}

/// Hands `f` the elements `range` of every member's memory, `from[j]` being where team PE `j`'s
/// element 0 lies, chunk by chunk (see the module docs): `f(first, count, sources)` with
/// `sources[j]` pointing at team PE `j`'s element `first`, valid for `count` elements until
/// `f` returns. The caller keeps every member's elements `range` unchanged until this returns
/// (a sync before and after), and `f` writes none of them but, at most, this PE's own.
pub(crate) fn chunks<E: Element>(
    team: &Team<'_>,
    from: &[Reach],
    range: Range<usize>,
    mut f: impl FnMut(usize, usize, &[*const E]),
) {
    if range.is_empty() {
        return;
    }
    let tp = team.tp();
    let size = size_of::<E>();
    let remote: Vec<(usize, &'static Peer, usize)> = from
        .iter()
        .enumerate()
        .filter_map(|(j, r)| match *r {
            Reach::Ucx(peer, off) => Some((j, peer, off)),
            Reach::Mapped(_) => None,
        })
        .collect();
    let chunk = if remote.is_empty() {
        COMBINE
    } else {
        (FETCH_ALL / remote.len()).clamp(COMBINE, FETCH)
    };
    let per = (chunk / size.max(1)).max(1).min(range.len());
    // Two buffers of one chunk per member reached through UCX: one being combined, one
    // being filled.
    let mut bufs = [
        vec![E::new_zeroed(); per * remote.len()],
        vec![E::new_zeroed(); per * remote.len()],
    ];
    let base: [*mut E; 2] = [bufs[0].as_mut_ptr(), bufs[1].as_mut_ptr()];
    let landing = Landing {
        tp,
        peers: remote.iter().map(|&(_, p, _)| p).collect(),
    };
    let issue = |buf: *mut E, first: usize, count: usize| {
        for (k, &(_, peer, off)) in remote.iter().enumerate() {
            // SAFETY: the member's elements `first..first + count` lie in its memory (the
            // caller's range); slot `k` of `buf` holds `per >= count` elements, private, not
            // read or written until `landing` completes the get (or unwinds).
            unsafe {
                tp.rma(
                    peer,
                    Dir::Get,
                    Completion::Nbi,
                    off + first * size,
                    buf.add(k * per).cast(),
                    count * size,
                )
            };
        }
        // Small gets over tcp may wait in runs (`transport::am::runs`): these go now, to
        // arrive while the other buffer is combined.
        tp.send_runs(None, false);
    };
    let mut sources = vec![std::ptr::null::<E>(); from.len()];
    let (mut first, mut count, mut cur) = (range.start, per, 0);
    issue(base[0], first, count);
    landing.complete();
    while count > 0 {
        let next = first + count;
        let next_count = per.min(range.end - next);
        if next_count > 0 {
            issue(base[1 - cur], next, next_count);
        }
        let mut k = 0;
        for (s, r) in sources.iter_mut().zip(from) {
            *s = match *r {
                // SAFETY: `first` lies in the member's elements (the caller's range).
                Reach::Mapped(p) => unsafe { p.cast::<E>().add(first) },
                Reach::Ucx(..) => {
                    k += 1;
                    // SAFETY: slot `k - 1` of the completed buffer.
                    unsafe { base[cur].add((k - 1) * per).cast_const() }
                }
            };
        }
        f(first, count, &sources);
        if next_count > 0 {
            landing.complete();
        }
        (first, count, cur) = (next, next_count, 1 - cur);
    }
    drop(landing);
    drop(bufs);
}
