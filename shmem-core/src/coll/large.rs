//! Large reductions: the data moves once, instead of through rounds of 1 KiB mailbox slots,
//! by loads from the members' memory where it is mapped here (the direct path) and by UCX gets
//! where it is not (other hosts, or `UCX_TLS` without shared memory), member by member
//! ([`fetch`]), so a team of PEs on several hosts loads from its node's members and gets from
//! the others.
//!
//! **Reduction** of `len` elements over `n` members, each member owning the share
//! `lo(me)..lo(me + 1)` of the elements (cut at cache lines):
//! 1. *Contribution*: a member whose source lies in its symmetric memory (C's symmetric
//!    `source`, or `dest` itself for an in-place reduction) contributes it where it lies; a
//!    member with a private source copies the parts the other members need (every share but
//!    its own) into the same places of its own `dest`. It publishes where its contribution lies
//!    (an offset in the [`CONTRIB`] word of its team block), then waits until every member has.
//!    The contribution words of members whose team block is not mapped are read by gets.
//! 2. *Reduce-scatter*: each member combines its share straight from every member's
//!    contribution, in team order (so every element is computed once, by one member, and all
//!    get the same bits), in cache-sized pieces (through a private buffer when its own
//!    contribution is the memory it writes, in place), into its own `dest`. The parts of the
//!    contributions that only UCX reaches come through [`fetch::chunks`]: gets into a private
//!    buffer, [`FETCH`](fetch::FETCH) bytes per member at a time, the next chunk's in flight
//!    while this one is combined.
//! 3. *All-gather*: where every member's `dest` is mapped here (the direct path) and the
//!    reduction is at most [`PUSH_MAX`] bytes times members, each member writes every finished
//!    piece of its share into the other members' `dest` too, while the piece is in its L1
//!    cache (measured at 2 PEs, 1 MiB: 24 us for combining and writing twice, where the
//!    members' copies of each other's shares took 37 more); elsewhere each
//!    member copies the other shares from their owners' `dest` once they are finished (gets,
//!    all in flight together, from members reached through UCX, straight into its own
//!    `dest`). Last, every member waits until every member is done, so that every `dest` and
//!    source stays unchanged until nobody reads or writes it.
//!
//! The members wait for each other through [`REDUCE_STEP`] words in their team blocks where
//! those are mapped (a member raises its word after each step and waits only for the words it
//! needs: a member copies a share as soon as its owner has finished it), through team syncs
//! elsewhere.
//!
//! Memory traffic per member, for `B = len * size_of::<E>()` bytes, every member mapped: reads
//! `B` (its share from every member), writes `B` (its share into every `dest`), and where the
//! members copy the shares instead, reads `B (n - 1) / n` more; a private source adds a copy
//! of `B (n - 1) / n`. Network traffic per member, every other member reached through UCX:
//! receives `B (n - 1) / n` in each of phases 2 and 3 and sends as much (the other members'
//! gets from it), `2 B (n - 1) / n` each way in all, as a ring all-reduce; the gets of phase 2
//! also pass through the private buffer (another `B (n - 1) / n` written and read), those of
//! phase 3 land in `dest`. Three syncs (where the team blocks are not mapped), one round trip
//! for the contribution words, and one flush per chunk.
//!
//! Every store here is a cached one. Streaming stores (for a private source's copy and for
//! the combined shares, pushed or not) cost more on the project's 2-vCPU EPYC, or as much,
//! whether its vCPUs shared a cache or sat apart (`coll_sweep`, `reduce_sum_f32` from private
//! sources, 10 alternating rounds, medians, us per call, cached / streaming / Open MPI's
//! oshmem): together, 2 PEs 1 MiB 40.2 / 172.0 / 140.2, 4 PEs 1 MiB 141.3 / 434.5 / 435.4,
//! 4 MiB 1,465 / 1,739 / 3,219; apart, 2 PEs 1 MiB 75.4 / 145.2 / 150.7, 4 PEs 1 MiB 163.7 /
//! 339.3 / 756.9, 4 MiB 3,212 / 3,162 / 4,377. (A large broadcast's root learns which kind
//! its members read faster, `coll::stores`; here neither state favoured streaming stores.)
//!
//! Large broadcasts, which the members read from the root, are `coll::staged`'s.
//!
//! Part of the collectives layer; uses `coll::fetch`, `coll::team`, `transport`, `mem`.

use super::fetch::{self, COMBINE, Landing, Reach};
use super::mailbox;
use super::team::Team;
use crate::element::Element;
use crate::mem::copy::copy_bytes;
use crate::mem::segment::{CONTRIB, REDUCE_LEN, REDUCE_STEP};
use crate::transport::collective::wait_in_collective;
use crate::transport::rma::{Completion, Dir};
use crate::transport::slots::next_epoch;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Smallest reduction (bytes) that takes this path when every member is mapped here, whatever
/// the team's size: from it on, three steps cost less than the mailbox's exchanges (see
/// [`min_bytes`] for the smaller reductions that take it too).
pub(crate) const REDUCE_MIN: usize = 16 << 10;
/// Smallest reduction (bytes) that takes this path when some member's memory lies on another
/// host, so that the mailbox's slots travel through UCX too. Measured across two
/// network-namespace hosts over tcp, one PE on each: 16 KiB in 0.44 ms (mailbox 0.68), 1 MiB in
/// 2.2 ms (mailbox 45).
pub(crate) const REDUCE_MIN_REMOTE: usize = 16 << 10;

/// The smallest reduction (bytes) of `size`-byte elements into `dest` at `offset` that takes
/// this path, by where the members' memory lies (the same answer on every member: mappings are
/// symmetric, and a team that spans hosts has a member on another host for every member).
///
/// Where every member is mapped here (one node, whatever `UCX_TLS` says): [`REDUCE_MIN`], or
/// less where the mailbox would need more than one exchange
/// ([`mailbox::allreduce_step_bytes`]: up to 16 KiB / n at n <= 8 members, 1 KiB beyond): each
/// exchange waits for every member (for the steps of a recursive doubling beyond 8), where
/// this path's three steps do not grow with the size, and on a node with more PEs than cores
/// every wait is a turn of the scheduler. Measured on the project's 2-vCPU Intel VM
/// (`coll_sweep` with sizes in powers of 2, `reduce_sum_i64` from private sources, 3
/// alternating rounds, medians, us per call, mailbox / this path / Open MPI's oshmem): 2 PEs
/// 4 KiB 2.3 / 2.5 / 4.0, 8 KiB 4.4 / 3.0 / 7.2; 4 PEs 2 KiB 6.2 / 8.9 / 11.2, 4 KiB 12.8 /
/// 9.7 / 21.0, 8 KiB 27.2 / 11.4 / 31.5; 8 PEs 1 KiB 19.3 / 20.6 / 33.9, 2 KiB 35.7 / 16.7 /
/// 37.0, 4 KiB 63.9 / 19.7 / 64.1, 8 KiB 101.9 / 24.9 / 88.6; 16 PEs 1 KiB 47.1 / 69.5 /
/// 150.1, 2 KiB 89.5 / 73.6 / 134.6, 8 KiB 385.6 / 88.4 / 322.4; and at 3, 5 and 6 PEs this
/// path was quicker from the first size that takes two exchanges (3 PEs 8 KiB 11.5 / 6.3, 5
/// PEs 4 KiB 21.7 / 17.9, 6 PEs 4 KiB 27.1 / 19.8) and slower below it. With more PEs to a
/// core (2 rounds, 1 at 128 PEs; the mailbox / this path / oshmem): 32 PEs 2 KiB 195.5 /
/// 191.9 / 442.6, 4 KiB 407.3 / 178.1 / 491.4, 8 KiB 788.0 / 187.7 / 622.2; 64 PEs 2 KiB
/// 558.5 / 359.7 / 1,125.3, 8 KiB 1,945.1 / 487.6 / 1,910.2; 128 PEs 2 KiB 1,388.7 / 1,496.9
/// / 2,757.1, 4 KiB 3,358.4 / 1,684.4 / 3,336.5, 8 KiB 6,384.1 / 1,897.3 / 3,600.9.
pub(crate) fn min_bytes(team: &Team<'_>, offset: usize, size: usize) -> usize {
    if all_mapped(team, offset) {
        REDUCE_MIN.min(mailbox::allreduce_step_bytes(team.n_pes(), size) + 1)
    } else {
        REDUCE_MIN_REMOTE
    }
}

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
        .all(|j| tp.coll_mapped(tp.peer(team.world_pe(j)), offset).is_some())
}

/// The first element of member `q`'s share of `len` elements (`q == n`: `len`), cut at
/// cache lines.
pub(crate) fn share_start<E>(len: usize, n: usize, q: usize) -> usize {
    if q >= n {
        return len;
    }
    let unit = (64 / size_of::<E>().max(1)).max(1);
    (q * len / n) / unit * unit
}

/// Publishes this PE's contribution offset in its [`CONTRIB`] word.
fn publish(team: &Team<'_>, offset: usize, bytes: usize) {
    let tp = team.tp();
    tp.local_word(team.block(REDUCE_LEN))
        .store(bytes as u64, Ordering::Relaxed);
    tp.local_word(team.block(CONTRIB))
        .store(offset as u64, Ordering::Release);
}

/// Panics, naming both lengths, where some member reduces another number of bytes than this
/// PE (`bytes`); the members' [`REDUCE_LEN`] words are published (step 1 reached).
#[track_caller]
fn check_lengths(team: &Team<'_>, bytes: usize, what: &str) {
    let me = team.my_pe();
    for (j, theirs) in fetch::words(team, REDUCE_LEN).into_iter().enumerate() {
        if theirs != bytes as u64 {
            panic!(
                "shmem: {what}: team PE {j} reduces {theirs} bytes while team PE {me} reduces \
                 {bytes}: every member must pass the same number of elements"
            );
        }
    }
}

/// The largest reduction (bytes per member times members) whose members write their shares
/// into every member's `dest` on the direct path (see the module docs). Beyond it the
/// members' `dest`s and sources outgrow the caches, and each member copying the shares into
/// its own `dest` costs less: measured on 2 cores, C's symmetric sources, 4 PEs of 4 MiB: 1273
/// us writing, 716 copying; 3 PEs of 4 MiB: 1786 and 1296; but 2 PEs of 4 MiB: 102 and 146,
/// 4 PEs of 1 MiB: 71 and 116, 2 PEs of 1 MiB: 25 and 53.
const PUSH_MAX: usize = 8 << 20;

/// Whether `a..a + len` and `b..b + len` overlap.
pub(crate) fn overlap(a: usize, b: usize, len: usize) -> bool {
    a < b + len && b < a + len
}

/// Reduces `len` elements over the team into `dest` at offset `at` of this PE (see the module
/// docs); the caller checked that `dest` holds `len` elements and that the team has more than
/// one member. Members that pass different lengths panic, naming both (`what`: the operation).
#[track_caller]
pub(crate) fn reduce<E: Element>(
    team: &Team<'_>,
    at: usize,
    source: Source<'_, E>,
    len: usize,
    op: impl Fn(E, E) -> E,
    what: &str,
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
    publish(team, contrib, bytes);
    let steps = Steps::new(team);
    // Every contribution is in place and published.
    steps.all_reach(1);
    check_lengths(team, bytes, what);
    let from: Vec<Reach> = fetch::words(team, CONTRIB)
        .into_iter()
        .enumerate()
        .map(|(j, c)| {
            if j == me {
                Reach::Mapped(own.cast())
            } else {
                fetch::reach(team, j, c as usize)
            }
        })
        .collect();
    let piece = (COMBINE / size).max(1);
    let mut acc: Vec<E> = Vec::with_capacity(piece);
    // Whether this PE's share of `dest` is none of the sources (it is only in place), so that
    // the combination can go straight into it.
    let straight = own != out.cast_const();
    // Where every member's `dest` is mapped here, this PE writes its finished share into all
    // of them (each piece while it is in the L1 cache) instead of every member copying it.
    let push: Vec<*mut E> = if n * bytes <= PUSH_MAX && all_mapped(team, at) {
        (0..n)
            .filter(|&q| q != me)
            .filter_map(|q| match fetch::reach(team, q, at) {
                Reach::Mapped(p) => Some(p.cast_mut().cast::<E>()),
                Reach::Ucx(..) => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    fetch::chunks::<E>(team, &from, mine(me), |first, count, sources| {
        // In pieces that stay in the L1 cache (a chunk read through UCX is larger).
        let mut done = 0;
        while done < count {
            let c = piece.min(count - done);
            let here = first + done;
            if straight {
                // SAFETY: this PE's share of its `dest`, which nobody else touches before this
                // PE's next step and which is none of `sources`; `sources` as below.
                let (to, s0, s1) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(out.add(here), c),
                        std::slice::from_raw_parts(sources[0].add(done), c),
                        std::slice::from_raw_parts(sources[1].add(done), c),
                    )
                };
                for ((t, &a), &b) in to.iter_mut().zip(s0).zip(s1) {
                    *t = op(a, b);
                }
                for s in &sources[2..] {
                    // SAFETY: as above.
                    let theirs = unsafe { std::slice::from_raw_parts(s.add(done), c) };
                    for (t, &b) in to.iter_mut().zip(theirs) {
                        *t = op(*t, b);
                    }
                }
            } else {
                acc.clear();
                // SAFETY: `chunks` hands over `count` elements of every member's contribution,
                // unchanged until this PE's last step (each member writes only its own share of
                // the members' `dest`s, which in the contributions only it reads, a piece of
                // every contribution before it writes that piece).
                let first_src = unsafe { std::slice::from_raw_parts(sources[0].add(done), c) };
                acc.extend_from_slice(first_src);
                for s in &sources[1..] {
                    // SAFETY: as above.
                    let theirs = unsafe { std::slice::from_raw_parts(s.add(done), c) };
                    for (a, &b) in acc.iter_mut().zip(theirs) {
                        *a = op(*a, b);
                    }
                }
                // SAFETY: this PE's share of its `dest`; `acc` is a private buffer.
                unsafe { copy_bytes(out.add(here).cast(), acc.as_ptr().cast(), c * size) };
            }
            for &d in &push {
                // SAFETY: the same elements of another member's `dest` (mapped here, `len`
                // elements), which nobody else touches before this PE's last step (what
                // the member contributed there, if anything, was read above); this PE's
                // finished piece, which nobody writes.
                unsafe { copy_bytes(d.add(here).cast(), out.add(here).cast(), c * size) };
            }
            done += c;
        }
    });
    if push.is_empty() {
        // This PE's share is complete.
        steps.reach(2);
        all_gather::<E>(team, at, len, mine, &steps);
    } else {
        // Every share is in every `dest`, and nobody reads this PE's memory any more.
        steps.all_reach(3);
    }
}

/// The points where the members of a reduction wait for each other: where every member's team
/// block is mapped here, each member raises its [`REDUCE_STEP`] word (`3 epoch + k` after its
/// step `k`), and a member waits only for the words it needs, as it needs them; elsewhere
/// every step is a team sync.
struct Steps<'t, 'w> {
    team: &'t Team<'w>,
    /// The team's words, `None` where some member's block is not mapped.
    words: Option<Vec<&'static AtomicU64>>,
    /// `3 epoch`.
    base: u64,
}

impl<'t, 'w> Steps<'t, 'w> {
    /// The steps of a new reduction (the same choice on every member: mappings are symmetric).
    fn new(team: &'t Team<'w>) -> Steps<'t, 'w> {
        if !all_mapped(team, team.block(REDUCE_STEP)) {
            return Steps {
                team,
                words: None,
                base: 0,
            };
        }
        let words = (0..team.n_pes())
            .map(|j| member_word(team, j, REDUCE_STEP))
            .collect();
        Steps {
            team,
            words: Some(words),
            base: 3 * next_epoch(team.coll_epoch()),
        }
    }

    /// This PE has done step `k` (1, 2 or 3); with syncs, every member has.
    fn reach(&self, k: u64) {
        match &self.words {
            Some(w) => w[self.team.my_pe()].store(self.base + k, Ordering::Release),
            None => self.team.sync(),
        }
    }

    /// Waits until member `j` has done step `k` (with syncs: done by [`reach`](Self::reach)).
    fn wait(&self, j: usize, k: u64) {
        if let Some(w) = &self.words {
            let w = w[j];
            let want = self.base + k;
            if w.load(Ordering::Acquire) < want {
                wait_in_collective(self.team.tp(), Some(&self.team.group), || {
                    w.load(Ordering::Acquire) >= want
                });
            }
        }
    }

    /// This PE has done step `k`; waits until every member has.
    fn all_reach(&self, k: u64) {
        self.reach(k);
        for j in 0..self.team.n_pes() {
            self.wait(j, k);
        }
    }
}

/// Phase 3 of [`reduce`] where some member's `dest` is not mapped here: copies every other
/// member's share (`mine(q)` of `len` elements), once it is finished, from its `dest` at `at`
/// into the same range of this PE's `dest`: gets (issued first, all in flight together) from
/// members reached through UCX, copies from the mapped ones meanwhile; then waits for every
/// member (`steps`), so that nobody's `dest` changes while another reads it.
fn all_gather<E: Element>(
    team: &Team<'_>,
    at: usize,
    len: usize,
    mine: impl Fn(usize) -> Range<usize>,
    steps: &Steps<'_, '_>,
) {
    let tp = team.tp();
    let (n, me) = (team.n_pes(), team.my_pe());
    let size = size_of::<E>();
    let out = tp.local(at).cast::<E>();
    debug_assert!(mine(n - 1).end == len);
    let others = (1..n).map(|k| (me + k) % n);
    let mut landing = Landing::new(tp);
    // A member's share is empty where the team has more members than the reduction has cache
    // lines (more than 256 members at 16 KiB): nothing to copy from it.
    let others = others.filter(|&q| !mine(q).is_empty());
    for q in others.clone() {
        let r = mine(q);
        if let Reach::Ucx(peer, off) = fetch::reach(team, q, at) {
            steps.wait(q, 2);
            // SAFETY: member `q`'s finished share of its `dest`, unchanged until the sync
            // below, into the same range of this PE's `dest` (symmetric memory; the others
            // read only this PE's own share of it now), completed below before anything
            // reads it.
            unsafe {
                tp.rma(
                    peer,
                    Dir::Get,
                    Completion::Nbi,
                    off + r.start * size,
                    out.add(r.start).cast(),
                    r.len() * size,
                )
            };
            landing.peers.push(peer);
        }
    }
    // Small gets over tcp may wait in runs (`transport::am::runs`): these go now, to arrive
    // while the mapped shares are copied.
    tp.send_runs(None, false);
    for q in others {
        if let Reach::Mapped(theirs) = fetch::reach(team, q, at) {
            steps.wait(q, 2);
            let r = mine(q);
            // SAFETY: as above, by a copy from the member's mapped `dest`.
            unsafe {
                copy_bytes(
                    out.add(r.start).cast(),
                    theirs.cast::<E>().add(r.start).cast(),
                    r.len() * size,
                )
            };
        }
    }
    landing.complete();
    // Nobody reads this PE's `dest` or source any more.
    steps.all_reach(3);
}

/// Team PE `j`'s word at byte `at` of its team block, mapped here (the caller checked).
pub(crate) fn member_word(team: &Team<'_>, j: usize, at: usize) -> &'static AtomicU64 {
    let p = match fetch::reach(team, j, team.block(at)) {
        Reach::Mapped(p) => p,
        Reach::Ucx(..) => unreachable!("the caller checked that every team block is mapped"),
    };
    // SAFETY: an aligned word of a team block, mapped for the process's life, which members
    // access only atomically.
    unsafe { AtomicU64::from_ptr(p.cast_mut().cast()) }
}
