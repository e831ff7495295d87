//! Broadcasts that the members read from the root, in pieces, through memory that every member
//! of the node maps: the root makes its data readable piece by piece and publishes how far it
//! has come; every other member copies each piece into its own `dest` as soon as it is ready.
//! No member writes another's memory (but for the root's copy into one member's `dest`, below),
//! so there is no entry sync, and the data crosses from the root to each member in one copy by
//! that member, all members at once.
//!
//! Every member's memory is mapped here ([`Transport::coll_mapped`]: one node, whatever
//! `UCX_TLS` says). Where the data is read from, chosen by the root (the members learn it from
//! its team block):
//! - **the root's source itself**, where it lies, when it is symmetric (C's symmetric `source`,
//!   or `dest` itself for `dest == source`): it is readable at once, all pieces together;
//! - **the root's `dest`** (a private source): the root copies the source into its own `dest`
//!   piece by piece, which it has to do anyway, and the members copy each piece from there;
//! - **the root's staging area** ([`STAGE`] of its team block, [`STAGE_BYTES`]): for
//!   `broadcast_to_others` of a private source (the root's `dest` must stay as it is) in teams
//!   of three or more up to the area's size, or where some member's heap is not mapped here.
//!   The root copies piece `k` into slot `k % SLOTS` of the area, and reuses a slot only once
//!   every member has read what lay there; the members copy from the slot into their own
//!   `dest`;
//! - **the `dest` of the member after the root** in team order, for larger `broadcast_to_others`
//!   of a private source on the direct path: that member publishes that it has entered (its
//!   [`BCAST_ENTERED`]), the root copies the source into its `dest` piece by piece, and the
//!   others copy each piece from there; that member returns once they all have (the root's
//!   [`BCAST_HOLDER`] names it). In a team of two on the direct path the root puts straight
//!   into the member's `dest` instead (the put tree).
//!
//! Into the staging area the root copies with streaming stores from two readers up on AMD,
//! with cached ones elsewhere (`stage_copy`); into its own `dest` or the holder's, from 64
//! KiB, with the kind of store its own timings of earlier broadcasts found quicker for the
//! members to read ([`stores`](super::stores)).
//!
//! [`Transport::coll_mapped`]: crate::transport::Transport::coll_mapped
//!
//! The words, in the first line of the team blocks (next to
//! [`DOWN_FLAG`](crate::mem::segment::DOWN_FLAG)): the root's [`BCAST_SRC`] (where its data
//! lies, or [`BY_PUTS`]) and [`BCAST_PROGRESS`] (the epoch's tag in the high half, the pieces
//! ready in the low half); every other member's [`BCAST_READING`] (the tag and the pieces it
//! has read, in the staging area's slots only) and [`BCAST_READ`] (the last broadcast it has
//! finished reading, a whole epoch, monotonic: a member that has gone on to later broadcasts
//! still counts as done with this one). The root returns once every member has finished
//! reading, so that its source and `dest` stay unchanged while they are read and the next
//! collective may write them at once; but through the staging area, which holds a copy, it
//! returns as soon as it has made the last piece readable, and its next broadcast here waits,
//! before it touches its words or slots, until every member has finished reading this one
//! (its progress word still names the epoch). Nothing else uses the staging area or those
//! words; a team's destruction and finalize sync first, which the members enter only once
//! they have read. The epochs come from the team's collective
//! counter (`next_epoch(team.coll_epoch())`), taken by every member for every broadcast that
//! enters here, so consecutive broadcasts (from any roots) never take each other's words for
//! their own.
//!
//! Measured with `benches/coll-sweep.sh` (`CASES=broadcast`, root 0, 2 to 8 PEs on this 2-core
//! VM while other jobs ran, so single figures vary by 2x; before: one round, the put tree;
//! after: median of three rounds), us per call, ours from Rust (private source) / from C
//! (`shmem_broadcast64`: symmetric source, the root's `dest` kept), against Open MPI's oshmem
//! in the same run:
//!
//! | path | PEs | size | before Rust / C | after Rust / C | oshmem |
//! |---|---:|---:|---:|---:|---:|
//! | direct | 4 | 4 KiB | 12 / 6.3 | 3.7 / 3.4 | 22 |
//! | direct | 4 | 64 KiB | 25 / 35 | 17 / 13 | 13 |
//! | direct | 4 | 256 KiB | 68 / 50 | 46 / 20 | 31 |
//! | direct | 4 | 1 MiB | 686 / 99 | 205 / 119 | 376 |
//! | direct | 8 | 4 KiB | 90 / 43 | 5.1 / 5.0 | 88 |
//! | direct | 8 | 64 KiB | 61 / 48 | 21 / 11 | 57 |
//! | direct | 8 | 256 KiB | 74 / 91 | 55 / 29 | 150 |
//! | direct | 8 | 1 MiB | 621 / 115 | 258 / 139 | 698 |
//!
//! Side by side in one job (alternating, three rounds), direct path, Rust, 4 PEs: 64 KiB 11.5
//! against the put tree's 22 (oshmem 11.6), 256 KiB 26 against 41 (30). Where the members
//! read lines that the root has just written (a private source), they come from the root's
//! cache (about 5 GB/s on this VM at 2 PEs, against 19 for a copy of clean memory). Pieces of
//! 64 KiB instead of 32 lost at 4 PEs (through the staging area, 1 MiB: 714 us against 464);
//! non-temporal stores into the staging area lost at 2 PEs (1 MiB: 444 against 367).
//!
//! Part of the collectives layer; uses `coll::large`, `coll::fetch`, `coll::team`,
//! `transport`, `mem`.

use super::fetch::{self, Reach};
use super::large::{all_mapped, member_word, overlap};
use super::stores::Choice;
use super::team::Team;
use crate::mem::copy::{Stores, copy_bytes, readers_prefer_streaming};
use crate::mem::segment::{
    BCAST_ENTERED, BCAST_HOLDER, BCAST_LEN, BCAST_PROGRESS, BCAST_READ, BCAST_READING, BCAST_SRC,
    CHUNK, STAGE, STAGE_BYTES,
};
use crate::transport::collective::wait_in_collective;
use crate::transport::slots::next_epoch;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the largest piece (what the root makes readable, and a member copies, between two
/// looks at the words), and of a slot of the staging area.
pub(crate) const PIECE: usize = 32 << 10;
/// Slots of [`PIECE`] bytes in the staging area.
const SLOTS: usize = STAGE_BYTES / PIECE;
const _: () = assert!(SLOTS >= 2 && STAGE_BYTES.is_multiple_of(PIECE));

/// The smallest broadcast (bytes) that the members read from the root where every member's team
/// block is mapped here, except in teams of two on the direct path ([`PAIR_MIN`]): every
/// broadcast that the mailbox does not take (more than [`CHUNK`] bytes). Over `UCX_TLS`
/// without shared memory the put tree's alternative sends every byte through UCX; on the
/// direct path, in teams of 3 to 8, the put tree's rounds, one after the other, cost more than
/// the members' copies all at once, from 4 KiB (private sources, 8 PEs: 3.6 us against 23;
/// 4 PEs: 3.0 against 15; 3 PEs 16 KiB: 2.8 against 7.0).
pub(crate) const STAGED_MIN: usize = CHUNK + 1;
/// The smallest broadcast (bytes) that the members read from the root on the direct path in a
/// team of two. Below it the put tree wins: the member's loads of what the root has just
/// written come from the root's L2 cache, slowly (symmetric sources, 64 KiB: 8.9 us against
/// 2.6; 256 KiB: 28 against 9.6; private ones, 256 KiB: 20 against 14), where the root's
/// stores into the other's `dest` stay in its own cache. From 1 MiB the pieces pass through
/// the L3 cache and this path wins (symmetric, 1 MiB: 32 us against 43; 4 MiB: 124 against
/// 369; private, 1 MiB: 72 against 116; 4 MiB: 369 against 624).
pub(crate) const PAIR_MIN: usize = 512 << 10;
/// [`BCAST_SRC`] when the root chose the put tree: every member returns `false`.
const BY_PUTS: u64 = u64::MAX;

/// The bytes of each piece of a broadcast of `bytes`: an eighth of it, from 4 KiB up to
/// [`PIECE`] (a slot of the staging area holds one), so that the members start early.
/// Measured on this project's 2-vCPU Intel VM (`coll_sweep --only broadcast`, private source,
/// us per call, 3 runs each, against 32 KiB pieces): 8 PEs, 16 KiB 1.6-1.8 against 2.3-2.4,
/// 64 KiB 5.5-5.6 against 7.5-7.6; 4 PEs, 64 KiB 7.6-7.7 against 7.3-7.9.
fn piece_of(bytes: usize) -> usize {
    (bytes / 8).next_multiple_of(64).clamp(4096, PIECE)
}

/// The high half of the progress words: the epoch's low 32 bits.
fn tag(epoch: u64) -> u64 {
    (epoch & 0xffff_ffff) << 32
}

/// Whether a broadcast of `bytes` bytes into `dest` at offset `at` enters [`broadcast`] on this
/// team (the same answer on every member: mappings are symmetric); `Some(direct)` when it
/// does, `direct` telling whether every member's heap is mapped here.
fn enters(team: &Team<'_>, at: usize, bytes: usize) -> Option<bool> {
    let n = team.n_pes();
    if n < 2 || !all_mapped(team, team.block(BCAST_SRC)) {
        return None;
    }
    let direct = all_mapped(team, at);
    let min = if direct && n == 2 {
        PAIR_MIN
    } else {
        STAGED_MIN
    };
    (bytes >= min).then_some(direct)
}

/// Where the root's data is read from.
enum Place {
    /// The put tree instead.
    Puts,
    /// This offset of the root's memory (its symmetric source), readable at once.
    Ready(usize),
    /// The root's `dest`, piece by piece as the root copies the source into it.
    Dest,
    /// The root's staging area, slot by slot.
    Stage,
    /// The `dest` of this member (the one after the root in team order), which the root fills
    /// with its private source piece by piece, once that member has entered (and checked the
    /// length); that member returns once every other member has read it. For
    /// `broadcast_to_others` of a private source larger than the staging area, in teams of
    /// three or more on the direct path. Measured on this project's 2-vCPU Intel VM
    /// (`coll_sweep`, two runs each, us per call, against the staging area): 4 PEs, 4 MiB
    /// 552-586 against 644-646; 8 PEs, 1 MiB 220-225 against 239-243, 4 MiB 951-972 against
    /// 1114-1166. Below that the staging area wins (the root first waits for that member to
    /// enter): 8 PEs, 256 KiB 42-44 against 23-24; 4 PEs, 16 KiB 7.3-7.7 against 4.0.
    Holder(usize),
}

/// Broadcasts `source` (read on team PE `root` only) into `dest` at offset `at` of every member
/// (the root's too unless `keep_root`), the members reading the root's data (see the module
/// docs). Returns `false`, on every member alike, where the caller's put tree must do it
/// instead: some member's team block is not mapped here, the broadcast is too small for this
/// path, or the root's source overlaps its `dest` (never through safe code). The caller
/// checked that `dest` holds `source.len()` bytes on every member.
pub(crate) fn broadcast(
    team: &Team<'_>,
    at: usize,
    source: &[u8],
    root: usize,
    keep_root: bool,
) -> bool {
    let bytes = source.len();
    let Some(direct) = enters(team, at, bytes) else {
        return false;
    };
    let epoch = next_epoch(team.coll_epoch());
    if team.my_pe() == root {
        let place = choose(team, at, source, keep_root, direct);
        send(team, at, source, keep_root, epoch, place)
    } else {
        receive(team, at, bytes, root, epoch)
    }
}

/// The member after `root` in team order: the one whose `dest` a root that keeps its own fills
/// ([`Place::Holder`]).
fn follower(root: usize, n: usize) -> usize {
    (root + 1) % n
}

/// The root's choice of where the members read (see the module docs).
fn choose(team: &Team<'_>, at: usize, source: &[u8], keep_root: bool, direct: bool) -> Place {
    if !direct {
        return Place::Stage;
    }
    let bytes = source.len();
    match team
        .tp()
        .symmetric_offset(source.as_ptr(), bytes)
        .filter(|&o| all_mapped(team, o))
    {
        // Symmetric memory: `dest` itself (nothing to copy), or apart from it, or any where
        // the root's `dest` is not written.
        Some(o) if o == at || keep_root || !overlap(o, at, bytes) => Place::Ready(o),
        // Overlapping `dest`, which safe code cannot pass: as before, the put tree.
        Some(_) => Place::Puts,
        // A pair whose root keeps its `dest` (`broadcast_to_others`): the put tree is one copy,
        // the root's, from its source straight into the member's `dest`; the staging area is
        // two, the root's into a slot and the member's out of it (from the root's cache).
        // Measured on this project's 2-vCPU Intel VM (`coll_sweep`, private source, two runs
        // each, us per call): 1 MiB 44-45 against 69-91 through the staging area, 4 MiB
        // 320-344 against 398-423. In teams of 3 and more the put tree lost (4 PEs, 64 KiB:
        // 12.1-12.7 against 9.8-10.2; 8 PEs, 1 MiB: 317-335 against 253-270).
        None if keep_root && team.n_pes() == 2 => Place::Puts,
        // Larger teams: through the staging area where it holds the whole broadcast; beyond,
        // its slots, which the root reuses only once every member has read them, would keep
        // the members in step with the slowest, so the root copies straight into the `dest` of
        // the member after it, which the others read (see [`Place::Holder`]).
        None if keep_root && bytes > STAGE_BYTES => {
            Place::Holder(follower(team.my_pe(), team.n_pes()))
        }
        None if keep_root => Place::Stage,
        None => Place::Dest,
    }
}

/// The root's part: publishes where its data lies, makes it readable piece by piece, and
/// returns once every member has read it all, or through the staging area at once (`false`
/// where it chose the put tree).
fn send(
    team: &Team<'_>,
    at: usize,
    source: &[u8],
    keep_root: bool,
    epoch: u64,
    place: Place,
) -> bool {
    let tp = team.tp();
    let (n, me) = (team.n_pes(), team.my_pe());
    let bytes = source.len();
    let tag = tag(epoch);
    let piece = piece_of(bytes);
    let pieces = bytes.div_ceil(piece);
    let progress = team.flag(BCAST_PROGRESS);
    let src_word = team.flag(BCAST_SRC);
    let out = tp.local(at);
    let others: Vec<usize> = (0..n).filter(|&j| j != me).collect();
    // A previous broadcast from this root through its staging area returned before its
    // members had read it all: its words and slots stay as they are until they have.
    wait_staged_read(team, &others, epoch);
    // Where the members read, as an offset of this PE's memory; the words are published
    // before any piece is ready (the members read BCAST_SRC after seeing this epoch's tag).
    let from = match place {
        Place::Puts => BY_PUTS,
        Place::Ready(o) => o as u64,
        Place::Dest | Place::Holder(_) => at as u64,
        Place::Stage => team.block(STAGE) as u64,
    };
    src_word.store(from, Ordering::Relaxed);
    let holder = match place {
        Place::Holder(h) => h,
        _ => me,
    };
    team.flag(BCAST_HOLDER)
        .store(holder as u64, Ordering::Relaxed);
    team.flag(BCAST_LEN).store(bytes as u64, Ordering::Relaxed);
    match place {
        Place::Puts => {
            progress.store(tag, Ordering::Release);
            return false;
        }
        Place::Ready(o) => {
            progress.store(tag | pieces as u64, Ordering::Release);
            if !keep_root && o != at {
                // SAFETY: `dest` holds `bytes` bytes (the caller checked), apart from the
                // source (`choose`); the members only read this PE's memory.
                unsafe { copy_bytes(out, source.as_ptr(), bytes) };
            }
        }
        Place::Dest | Place::Holder(_) => {
            progress.store(tag, Ordering::Release);
            let into = match place {
                Place::Holder(h) => {
                    let entered = member_word(team, h, BCAST_ENTERED);
                    let ready = || entered.load(Ordering::Acquire) >= epoch;
                    if !ready() {
                        wait_in_collective(tp, Some(&team.group), ready);
                    }
                    match fetch::reach(team, h, at) {
                        Reach::Mapped(p) => p.cast_mut(),
                        Reach::Ucx(..) => {
                            unreachable!("`Place::Holder` is chosen only where `dest` is mapped")
                        }
                    }
                }
                _ => out,
            };
            // Cached or streaming stores, as this PE's timings of earlier broadcasts found
            // quicker for the members to read (`coll::stores`); timed from the first store
            // to the last member's read.
            let choice = Choice::new(n, bytes);
            let copy = choice.stores().copy();
            for k in 0..pieces {
                let r = k * piece..((k + 1) * piece).min(bytes);
                // SAFETY: piece `k` of `source` (private memory) into the same range of this
                // PE's `dest` or of the holder's (`bytes` bytes, checked by every member; the
                // holder's mapped here, and left alone by the holder, which has entered this
                // broadcast, until every member has read it), which the members read only once
                // this piece is published below. `copy` is `copy_bytes` or `copy_streaming`,
                // one contract (the latter's store fence orders its bytes before the release).
                unsafe { copy(into.add(r.start), source.as_ptr().add(r.start), r.len()) };
                progress.store(tag | (k + 1) as u64, Ordering::Release);
            }
            wait_read(team, others.iter().copied(), epoch);
            choice.finish();
            return true;
        }
        Place::Stage => {
            let stage = tp.local(team.block(STAGE));
            let into_stage = stage_copy(n);
            let reading: Vec<(&AtomicU64, &AtomicU64)> = others
                .iter()
                .map(|&j| {
                    (
                        member_word(team, j, BCAST_READING),
                        member_word(team, j, BCAST_READ),
                    )
                })
                .collect();
            progress.store(tag, Ordering::Release);
            for k in 0..pieces {
                if k >= SLOTS {
                    // The slot's previous piece has been read by every member (or a member
                    // has finished this broadcast, and maybe gone on to later ones).
                    let need = (k - SLOTS + 1) as u64;
                    let done = |(now, read): &(&AtomicU64, &AtomicU64)| {
                        let v = now.load(Ordering::Acquire);
                        (v & !0xffff_ffff == tag && v & 0xffff_ffff >= need)
                            || read.load(Ordering::Acquire) >= epoch
                    };
                    if !reading.iter().all(done) {
                        wait_in_collective(tp, Some(&team.group), || reading.iter().all(done));
                    }
                }
                let r = k * piece..((k + 1) * piece).min(bytes);
                // SAFETY: slot `k % SLOTS` of this PE's staging area (`PIECE` bytes, in its
                // mapped team block), which no member reads any more (checked above) and no
                // other collective uses before this one returns; piece `k` of the source.
                unsafe {
                    into_stage(
                        stage.add((k % SLOTS) * PIECE),
                        source.as_ptr().add(r.start),
                        r.len(),
                    )
                };
                progress.store(tag | (k + 1) as u64, Ordering::Release);
                if !keep_root && source.as_ptr() != out.cast_const() {
                    // SAFETY: this PE's `dest` (`bytes` bytes, checked by the caller), which
                    // nobody else reads here (the members read the staging area); the source
                    // is private, apart from `dest`, or `dest` itself (not copied: the data is
                    // there already; a source overlapping `dest` only in part is never passed
                    // by safe code, and the put tree's copy would be as wrong).
                    unsafe { copy_bytes(out.add(r.start), source.as_ptr().add(r.start), r.len()) };
                }
            }
            // The source is copied and nobody reads this PE's `dest`: the root returns at once,
            // and its next broadcast through here waits for the members (`wait_staged_read`).
            return true;
        }
    }
    wait_read(team, others.iter().copied(), epoch);
    true
}

/// How the root copies its source into its staging area in a team of `n`: on AMD
/// ([`readers_prefer_streaming`]) with streaming stores from three members (two readers) up,
/// so that the members read the pieces from memory rather than from the root's own cache,
/// which serves lines it has just written slowly (and several times more slowly again where
/// the reader runs on another die of the processor); with cached stores in a pair (one reader,
/// whose reads then cost less) and on other processors.
///
/// Measured on the project's 2-vCPU EPYC (`coll_sweep --only broadcast`, private source,
/// `broadcast_to_others`, 40 alternating rounds, medians, us per call, streaming / cached /
/// Open MPI's oshmem). The host moves the vCPUs: a cache line's round trip between them
/// (`benches/c/c2c.c`) takes about 105 ns most of the time, and about 540 ns for stretches of
/// seconds (4-5 rounds of the 40):
/// - 105 ns: 3 PEs 64 KiB 5.0 / 5.8 / 13.0, 256 KiB 14.5 / 21.6 / 29.9; 4 PEs 4.7 / 6.2 /
///   10.0, 17.4 / 22.7 / 34.0; 8 PEs 3.7 / 6.2 / 20.9, 13.4 / 22.9 / 57.1;
/// - 540 ns: 3 PEs 8.5 / 24.0 / 17.2, 21.4 / 93.2 / 64.4; 4 PEs 8.5 / 24.4 / 13.9, 22.2 /
///   94.3 / 52.3; 8 PEs 6.6 / 24.7 / 28.1, 17.3 / 76.7 / 105.2.
///
/// On the project's 2-vCPU Intel VM cached stores are the quicker at every team size
/// (`coll_sweep --only broadcast`, 3 alternating runs, medians, us per call, cached /
/// streaming / Open MPI's oshmem): 3 PEs 16 KiB 2.0 / 2.7 / 4.8, 64 KiB 7.0 / 8.0 / 9.3, 256
/// KiB 16.7 / 24.6 / 24.9; 4 PEs 1.6 / 2.8 / 3.0, 7.2 / 6.5 / 6.1 (8 rounds: 5.7 / 8.1 /
/// 7.2), 18.1 / 26.5 / 28.2; 8 PEs 1.7 / 2.8 / 15.0, 5.6 / 7.6 / 15.9, 17.3 / 28.4 / 62.4.
/// Cached stores followed by `cldemote` of every line written (which that VM's CPU has: a hint
/// to move the lines out to the shared cache, where the readers would find them sooner) lost
/// there (4 alternating runs, medians, us per call, cached / with `cldemote`): 4 PEs 64 KiB
/// 8.0 / 9.0, 256 KiB 22.3 / 29.9; 8 PEs (3 runs) 64 KiB 6.2 / 10.1, 256 KiB 18.1 / 30.0.
///
/// Larger broadcasts (through the holder's `dest`), and those that the members read from the
/// root's own `dest`, store as the root's timings of earlier ones found quicker
/// (`coll::stores`): there cached stores win by up to three times while the vCPUs sit
/// together, streaming ones by as much while they sit apart.
fn stage_copy(n: usize) -> unsafe fn(*mut u8, *const u8, usize) {
    Stores::streaming_if(n >= 3 && readers_prefer_streaming()).copy()
}

/// Waits until the [`BCAST_READ`] word of every team PE in `members` has reached `epoch`.
fn wait_read(team: &Team<'_>, members: impl Iterator<Item = usize>, epoch: u64) {
    let read: Vec<&AtomicU64> = members.map(|j| member_word(team, j, BCAST_READ)).collect();
    let all_read = || read.iter().all(|w| w.load(Ordering::Acquire) >= epoch);
    if !all_read() {
        wait_in_collective(team.tp(), Some(&team.group), all_read);
    }
}

/// Waits, on a root about to publish the broadcast of `epoch`, until every member of `others`
/// has finished reading this PE's previous broadcast if that one went through its staging area
/// (whose root returns without waiting for its members): its progress word's tag names that
/// broadcast's epoch (the latest before `epoch` with those low 32 bits).
fn wait_staged_read(team: &Team<'_>, others: &[usize], epoch: u64) {
    // Zero until this PE's first broadcast here as root (the block starts cleared); after it,
    // the low half holds one piece at least.
    let word = team.flag(BCAST_PROGRESS).load(Ordering::Relaxed);
    let staged = team.flag(BCAST_SRC).load(Ordering::Relaxed) == team.block(STAGE) as u64;
    // 2^32 collectives later (`back` 0) every member is long done with it.
    let back = (epoch as u32).wrapping_sub((word >> 32) as u32);
    if word == 0 || !staged || back == 0 {
        return;
    }
    wait_read(team, others.iter().copied(), epoch - u64::from(back));
}

/// A member's part: copies the root's data, piece by piece as it becomes ready, into this PE's
/// `dest` at `at` (`bytes` bytes), then says so in its [`BCAST_READ`] word (`false` where the
/// root chose the put tree).
fn receive(team: &Team<'_>, at: usize, bytes: usize, root: usize, epoch: u64) -> bool {
    let tp = team.tp();
    let tag = tag(epoch);
    let piece = piece_of(bytes);
    let pieces = bytes.div_ceil(piece);
    let progress = member_word(team, root, BCAST_PROGRESS);
    let ready = |k: usize| {
        let v = progress.load(Ordering::Acquire);
        v & !0xffff_ffff == tag && v & 0xffff_ffff >= k as u64
    };
    if !ready(0) {
        wait_in_collective(tp, Some(&team.group), || ready(0));
    }
    let src = member_word(team, root, BCAST_SRC).load(Ordering::Relaxed);
    if src == BY_PUTS {
        return false;
    }
    let theirs = member_word(team, root, BCAST_LEN).load(Ordering::Relaxed);
    if theirs != bytes as u64 {
        panic!(
            "shmem: broadcast: the root (team PE {root}) sends {theirs} bytes while team PE {} \
             receives {bytes}: every member must pass the same number of elements",
            team.my_pe()
        );
    }
    let out = tp.local(at);
    let holder = member_word(team, root, BCAST_HOLDER).load(Ordering::Relaxed) as usize;
    let me = team.my_pe();
    if holder == me {
        // The root fills this PE's `dest` (`Place::Holder`), from now on: the lengths match
        // (checked above). The others read it from here, so it stays as it is until they all
        // have.
        team.flag(BCAST_ENTERED).store(epoch, Ordering::Release);
        if !ready(pieces) {
            wait_in_collective(tp, Some(&team.group), || ready(pieces));
        }
        let others = (0..team.n_pes()).filter(|&j| j != root && j != me);
        wait_read(team, others, epoch);
        team.flag(BCAST_READ).store(epoch, Ordering::Release);
        return true;
    }
    let staged = holder == root && src as usize == team.block(STAGE);
    let from = match fetch::reach(team, holder, src as usize) {
        Reach::Mapped(p) => p,
        Reach::Ucx(..) => unreachable!("the root publishes only memory mapped by every member"),
    };
    let reading = team.flag(BCAST_READING);
    for k in 0..pieces {
        if !ready(k + 1) {
            wait_in_collective(tp, Some(&team.group), || ready(k + 1));
        }
        let r = k * piece..((k + 1) * piece).min(bytes);
        let there = if staged { (k % SLOTS) * PIECE } else { r.start };
        // SAFETY: piece `k` of the root's published data (mapped here: its symmetric source,
        // its `dest` or a slot of its staging area; ready, and unchanged until this PE says
        // it has read it below) into this PE's `dest` (`bytes` bytes, checked by the
        // caller), which nobody else touches during the broadcast.
        unsafe { copy_bytes(out.add(r.start), from.add(there), r.len()) };
        if staged {
            reading.store(tag | (k + 1) as u64, Ordering::Release);
        }
    }
    team.flag(BCAST_READ).store(epoch, Ordering::Release);
    true
}
