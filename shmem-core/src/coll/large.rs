//! Large reductions on the direct path: every member's symmetric memory is
//! mapped here, so the data moves once, by loads from the peers' memory, instead of through
//! rounds of 1 KiB mailbox slots.
//!
//! **Reduction** of `len` elements over `n` members, each member owning the share
//! `lo(me)..lo(me + 1)` of the elements (cut at cache lines):
//! 1. *Contribution*: a member whose source lies in its symmetric memory (C's symmetric
//!    `source`, or `dest` itself for an in-place reduction) contributes it where it lies; a
//!    member with a private source copies the parts the other members need (every share but
//!    its own) into the same places of its own `dest`. It publishes where its contribution lies
//!    (an offset in the [`CONTRIB`] word of its team block), then the team syncs.
//! 2. *Reduce-scatter*: each member combines its share straight from every member's
//!    contribution, in team order (so every element is computed once, by one member, and all
//!    get the same bits), in cache-sized pieces through a private buffer (so that its own
//!    contribution may be the memory it writes), into its own `dest`; then the team syncs.
//! 3. *All-gather*: each member copies the other shares from their owners' `dest`; a last sync
//!    keeps every `dest` and source unchanged until nobody reads them.
//!
//! Memory traffic per member, for `B = len * size_of::<E>()` bytes: reads `B` (its share from
//! every member) + `B (n - 1) / n` (the other shares), writes `B / n` + `B (n - 1) / n` = `B`;
//! a private source adds a copy of `B (n - 1) / n`.
//!
//! Part of the collectives layer; uses `coll::team`, `transport`, `mem`.

use super::team::Team;
use crate::element::Element;
use crate::mem::copy::copy_bytes;
use crate::mem::segment::CONTRIB;
use std::sync::atomic::{AtomicU64, Ordering};

/// Smallest reduction (bytes) that takes the direct path: below it the mailbox's one exchange
/// costs less than three syncs.
pub(crate) const REDUCE_MIN: usize = 16 << 10;
/// Bytes a member combines at a time (its buffer stays in the L1 cache).
const COMBINE: usize = 8 << 10;

/// Where this PE's part of a reduction comes from.
pub(crate) enum Source<'s, E> {
    /// A slice (private memory, or symmetric memory apart from `dest`).
    Slice(&'s [E]),
    /// `dest` itself (an in-place reduction).
    InPlace,
}

/// Whether every member's symmetric memory at `offset` (its region) is mapped here.
pub(crate) fn all_mapped(team: &Team<'_>, offset: usize) -> bool {
    let tp = team.tp();
    let me = team.my_pe();
    (0..team.n_pes())
        .filter(|&j| j != me)
        .all(|j| tp.mapped(tp.peer(team.world_pe(j)), offset).is_some())
}

/// The first element of member `q`'s share of `len` elements (`q == n`: `len`), cut at
/// cache lines.
fn share_start<E>(len: usize, n: usize, q: usize) -> usize {
    if q >= n {
        return len;
    }
    let unit = (64 / size_of::<E>().max(1)).max(1);
    (q * len / n) / unit * unit
}

/// The address, in this process, of team PE `j`'s memory at `offset`.
fn peer_ptr(team: &Team<'_>, j: usize, offset: usize) -> *mut u8 {
    let tp = team.tp();
    if j == team.my_pe() {
        return tp.local(offset);
    }
    tp.direct_ptr(tp.peer(team.world_pe(j)), offset)
}

/// The [`CONTRIB`] word of team PE `j`.
fn contrib_of(team: &Team<'_>, j: usize) -> usize {
    let p = peer_ptr(team, j, team.block(CONTRIB));
    // SAFETY: an aligned word of a team block, mapped for the process's life, which members
    // access only atomically.
    unsafe { AtomicU64::from_ptr(p.cast()) }.load(Ordering::Acquire) as usize
}

/// Publishes this PE's contribution offset in its [`CONTRIB`] word.
fn publish(team: &Team<'_>, offset: usize) {
    team.tp()
        .local_word(team.block(CONTRIB))
        .store(offset as u64, Ordering::Release);
}

/// Whether `a..a + len` and `b..b + len` overlap.
fn overlap(a: usize, b: usize, len: usize) -> bool {
    a < b + len && b < a + len
}

/// Reduces `len` elements over the team into `dest` at offset `at` of this PE (see the module
/// docs); the caller checked [`all_mapped`] for `at`, that `dest` holds `len` elements and
/// that the team has more than one member.
pub(crate) fn reduce<E: Element>(
    team: &Team<'_>,
    at: usize,
    source: Source<'_, E>,
    len: usize,
    op: impl Fn(E, E) -> E,
) {
    let tp = team.tp();
    let (n, me) = (team.n_pes(), team.my_pe());
    let size = size_of::<E>();
    let bytes = len * size;
    let out = tp.local(at).cast::<E>();
    let mine = |q: usize| share_start::<E>(len, n, q)..share_start::<E>(len, n, q + 1);
    // Where this PE's own share comes from, and where the others read its contribution.
    let private_copy;
    let (own, contrib): (*const E, usize) = match source {
        Source::InPlace => (out.cast_const(), at),
        Source::Slice(s) => {
            debug_assert_eq!(s.len(), len);
            match tp.symmetric_offset(s.as_ptr().cast(), bytes) {
                Some(o) if !overlap(o, at, bytes) => (s.as_ptr(), o),
                found => {
                    // A private source (or, never through safe code, one overlapping `dest`):
                    // the other members' shares go to their places in `dest`.
                    let s: &[E] = if found.is_some() {
                        private_copy = s.to_vec();
                        &private_copy
                    } else {
                        s
                    };
                    for q in (0..n).filter(|&q| q != me) {
                        let r = mine(q);
                        // SAFETY: `r` lies in `dest` (len elements) and in `s`; `s` is not
                        // `dest` (a private buffer, or a copy of one that overlapped it).
                        unsafe {
                            copy_bytes(
                                out.add(r.start).cast(),
                                s.as_ptr().add(r.start).cast(),
                                r.len() * size,
                            )
                        };
                    }
                    (s.as_ptr(), at)
                }
            }
        }
    };
    publish(team, contrib);
    // Every contribution is in place and published.
    team.sync();
    let sources: Vec<*const E> = (0..n)
        .map(|j| {
            if j == me {
                own
            } else {
                peer_ptr(team, j, contrib_of(team, j)).cast_const().cast()
            }
        })
        .collect();
    let r = mine(me);
    let per = (COMBINE / size).max(1);
    let mut acc: Vec<E> = Vec::with_capacity(per.min(r.len()));
    let mut i = r.start;
    while i < r.end {
        let c = per.min(r.end - i);
        acc.clear();
        // SAFETY: every member's contribution holds `len` elements, unchanged until the
        // next sync (each member writes only its own share of its `dest`, which only this
        // member reads, and which this loop reads into `acc` before writing it).
        let first = unsafe { std::slice::from_raw_parts(sources[0].add(i), c) };
        acc.extend_from_slice(first);
        for s in &sources[1..] {
            // SAFETY: as above.
            let theirs = unsafe { std::slice::from_raw_parts(s.add(i), c) };
            for (a, &b) in acc.iter_mut().zip(theirs) {
                *a = op(*a, b);
            }
        }
        // SAFETY: this PE's share of its `dest`; `acc` is a private buffer.
        unsafe { copy_bytes(out.add(i).cast(), acc.as_ptr().cast(), c * size) };
        i += c;
    }
    // Every share is complete.
    team.sync();
    for k in 1..n {
        let q = (me + k) % n;
        let r = mine(q);
        let theirs = peer_ptr(team, q, at).cast::<E>();
        // SAFETY: member `q`'s finished share of its `dest`, unchanged until the last sync,
        // into the same range of this PE's `dest`, which nobody else reads now.
        unsafe {
            copy_bytes(
                out.add(r.start).cast(),
                theirs.add(r.start).cast(),
                r.len() * size,
            )
        };
    }
    // Nobody reads this PE's `dest` or source any more.
    team.sync();
}
