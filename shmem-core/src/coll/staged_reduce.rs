//! Staged reductions: where the members' team blocks are mapped here but their heaps are not
//! (one node, `UCX_TLS` without shared memory, such as `tcp,self`), the data of a reduction
//! moves through the members' staging areas ([`STAGE`], shared memory), not through UCX.
//! Open MPI's oshmem does the same on one node whatever `UCX_TLS` says (its collectives go
//! through btl/vader).
//!
//! **Reduction** of `len` elements over `n` members, in chunks of up to [`HALF`] bytes: the
//! staging area is two halves, chunk `c` goes through half `c % 2` of every member's, so that a
//! member may stage chunk `c + 1` while the others still read chunk `c`. With three members or
//! more each chunk is cut into `n` shares at cache lines, and member `q` owns share `q` of
//! every chunk:
//! 1. *Stage*: each member copies the other members' shares of its chunk `c` (from its source,
//!    or from its `dest` in place) to the same places of its half, and raises its `PUB` word.
//! 2. *Combine*: once every member has staged chunk `c`, each member combines its share from
//!    every member's half (its own part from its source), in team order (so every element is
//!    computed once, by one member, and all get the same bits), in pieces that stay in the L1
//!    cache, into its `dest`, copies each piece to the place of its share in its own half
//!    (which nobody else reads in step 2), and raises its `DONE` word.
//! 3. *Gather*: each member copies every other member's finished share of chunk `c` from that
//!    member's half into its `dest` as soon as that member's `DONE` word says so, then raises
//!    its `READ` word.
//!
//! With two members the chunk is not cut: each stages all of its chunk and combines all of it
//! (the two in the same order, so with the same bits), and there is nothing to gather. That
//! reads as much of the other member's fresh lines as steps 2 and 3 would (`B` in all), with
//! one wait per chunk instead of two, and without the copies into the half and out of it.
//!
//! A member stages chunk `c + 1` between steps 2 and 3 of chunk `c`, once every member has
//! raised its `READ` word past chunk `c - 1` (the last chunk that used that half). It returns
//! once every member has read everything (every `READ` word past the last chunk), so that the
//! next collective may write its staging area at once (the rule of [`STAGE`]). The words
//! ([`STAGE_STEP`]) carry the reduction's epoch ([`next_epoch`] of the team's collective
//! epoch) in their high bits and a chunk count in their low [`COUNT_BITS`]; waits back off
//! ([`wait_in_collective`]: eight PEs may share two cores).
//!
//! Memory traffic per member, for `B = len * size_of::<E>()` bytes and `n > 2`: copies
//! `B (n - 1) / n` into its half; reads `B` (its share from every member: `B (n - 1) / n` of
//! it lines just written by other cores) and writes `B / n` into `dest`; copies `B / n` into
//! its half, then the `B (n - 1) / n` of the others' shares into `dest` (lines just written by
//! other cores). With `n = 2`: copies `B` into its half, reads `2 B` (half of it the other
//! member's fresh lines), writes `B`. Nothing goes through UCX; per chunk each member waits
//! for every member's `PUB`, each other member's `DONE` (`n > 2`), and (from the third chunk
//! on) every member's `READ`.
//!
//! Measured on 2 cores (AMD EPYC) with `reduce_sum_f32` of `benches/coll_sweep` (private
//! sources) over `UCX_TLS=tcp,self`, time per call: ours before (the mailbox below `2 MiB / n`
//! bytes and at 2 PEs, [`large`](super::large)'s UCX gets above it), ours staged, and Open MPI's
//! oshmem (its C twin, `benches/coll-sweep.sh`'s tcp settings), run one after another, three
//! rounds, the median of the rounds' medians, the machine otherwise idle. (In a run of the same
//! while another build shared the machine, every time 2-5x these, staged / oshmem was
//! 0.17-0.79.) The mailbox stays below 4 KiB: at 1 KiB staged took 1.0-1.2 us at 2 PEs (mailbox
//! 0.7) and 20 at 4 PEs (mailbox 6-9). What is left at 2 PEs from 1 MiB is memory traffic: 4 MiB
//! took 936 us where a 4 MiB memcpy took 330 in the same job (a memcpy moves `2 B`, this path
//! `5 B`); combining from this PE's own staged copy instead of its source, or chunks of 64 KiB,
//! were no faster.
//!
//! | size per PE | PEs | before (us) | staged (us) | oshmem (us) | before / oshmem | staged / oshmem |
//! |---:|---:|---:|---:|---:|---:|---:|
//! | 4 KiB | 2 | 2.8 | 1.8 | 3.5 | 0.80 | 0.52 |
//! | 16 KiB | 2 | 11.3 | 4.2 | 10.1 | 1.12 | 0.42 |
//! | 64 KiB | 2 | 46.7 | 13.3 | 20.1 | 2.32 | 0.66 |
//! | 256 KiB | 2 | 183.4 | 43.7 | 53.9 | 3.40 | 0.81 |
//! | 1 MiB | 2 | 806.1 | 220.3 | 240.0 | 3.36 | 0.92 |
//! | 4 MiB | 2 | 3585.6 | 953.7 | 923.9 | 3.88 | 1.03 |
//! | 4 KiB | 4 | 19.5 | 14.3 | 19.0 | 1.03 | 0.75 |
//! | 16 KiB | 4 | 68.6 | 14.9 | 33.9 | 2.02 | 0.44 |
//! | 64 KiB | 4 | 278.1 | 29.8 | 63.4 | 4.39 | 0.47 |
//! | 256 KiB | 4 | 1159.1 | 93.7 | 153.1 | 7.57 | 0.61 |
//! | 1 MiB | 4 | 1900.9 | 436.3 | 640.4 | 2.97 | 0.68 |
//! | 4 MiB | 4 | 9159.5 | 1919.6 | 2609.5 | 3.51 | 0.74 |
//! | 4 KiB | 8 | 60.9 | 33.9 | 60.5 | 1.01 | 0.56 |
//! | 16 KiB | 8 | 250.6 | 39.1 | 100.6 | 2.49 | 0.39 |
//! | 64 KiB | 8 | 964.0 | 60.2 | 159.2 | 6.06 | 0.38 |
//! | 256 KiB | 8 | 1832.0 | 241.9 | 395.7 | 4.63 | 0.61 |
//! | 1 MiB | 8 | 4992.5 | 1110.3 | 1309.4 | 3.81 | 0.85 |
//! | 4 MiB | 8 | 20064.7 | 4978.7 | 6383.1 | 3.14 | 0.78 |
//!
//! Part of the collectives layer; uses `coll::large` (its sources and share cuts), `coll::team`,
//! `transport`, `mem`.

use super::fetch::{self, COMBINE, Reach};
use super::large::{Source, all_mapped, member_word, overlap, share_start};
use super::team::Team;
use crate::element::Element;
use crate::mem::copy::copy_bytes;
use crate::mem::segment::{
    STAGE, STAGE_BYTES, STAGE_DONE, STAGE_LEN, STAGE_PUB, STAGE_READ, STAGE_STEP,
};
use crate::transport::collective::wait_in_collective;
use crate::transport::slots::next_epoch;
use std::sync::atomic::{AtomicU64, Ordering};

/// The smallest reduction (bytes) that takes this path where it applies ([`takes`]): below
/// it the mailbox's exchanges of 1 KiB slots through the same team blocks cost less than three
/// rounds of waits.
pub(crate) const STAGED_MIN: usize = 4 << 10;

/// Bytes of one half of the staging area: the most one chunk takes in every member's.
pub(crate) const HALF: usize = STAGE_BYTES / 2;

/// Whether a reduction of `bytes` bytes into `dest` at `offset` takes this path: the team
/// has more than one member, every member's team block is mapped here and some member's
/// `dest` is not (the same answer on every member: mappings are symmetric), from
/// [`STAGED_MIN`] bytes.
pub(crate) fn takes(team: &Team<'_>, offset: usize, bytes: usize) -> bool {
    team.n_pes() > 1
        && bytes >= STAGED_MIN
        && all_mapped(team, team.block(STAGE_STEP))
        && !all_mapped(team, offset)
}

/// Which of a member's three progress words ([`STAGE_STEP`]).
#[derive(Clone, Copy)]
enum Step {
    /// Chunks staged (step 1 done).
    Pub,
    /// Chunks whose share is combined (step 2 done).
    Done,
    /// Chunks read completely (step 3 done).
    Read,
}

/// Bits of a progress word that count chunks (above them, the reduction's epoch): enough for
/// reductions of up to 2 TiB, and epochs that no job exhausts.
const COUNT_BITS: u32 = 24;

/// The members' progress words in one reduction: member `j`'s word of a [`Step`] is
/// `epoch << COUNT_BITS | k` once it has done that step for `k` chunks of the reduction of
/// that epoch. A word only grows: a member in a later reduction has a larger one (it entered
/// that reduction only once everybody had finished this one).
struct Progress<'t, 'w> {
    team: &'t Team<'w>,
    /// Per member: its [`STAGE_PUB`], [`STAGE_DONE`] and [`STAGE_READ`] words.
    words: Vec<[&'static AtomicU64; 3]>,
    /// `epoch << COUNT_BITS`.
    base: u64,
}

impl<'t, 'w> Progress<'t, 'w> {
    /// The words of a new reduction; the caller checked that every team block is mapped.
    fn new(team: &'t Team<'w>) -> Progress<'t, 'w> {
        let words = (0..team.n_pes())
            .map(|j| [STAGE_PUB, STAGE_DONE, STAGE_READ].map(|at| member_word(team, j, at)))
            .collect();
        Progress {
            team,
            words,
            base: next_epoch(team.coll_epoch()) << COUNT_BITS,
        }
    }

    /// Whether word value `v` says `k` chunks or more in this reduction, or a later one.
    fn reached(&self, v: u64, k: u64) -> bool {
        v >= self.base + k
    }

    /// This PE has done `step` for `k` chunks.
    fn raise(&self, step: Step, k: u64) {
        self.words[self.team.my_pe()][step as usize].store(self.base + k, Ordering::Release);
    }

    /// Waits until member `j` has done `step` for `k` chunks.
    fn wait(&self, j: usize, step: Step, k: u64) {
        let w = self.words[j][step as usize];
        if !self.reached(w.load(Ordering::Acquire), k) {
            wait_in_collective(self.team.tp(), Some(&self.team.group), || {
                self.reached(w.load(Ordering::Acquire), k)
            });
        }
    }

    /// Waits until every member has done `step` for `k` chunks.
    fn wait_all(&self, step: Step, k: u64) {
        for j in 0..self.team.n_pes() {
            self.wait(j, step, k);
        }
    }
}

/// Reduces `len` elements over the team into `dest` at offset `at` of this PE through the
/// members' staging areas (see the module docs), for the operation `name` (in the message of
/// members that pass different lengths); the caller checked that `dest` holds `len` elements
/// and that [`takes`] holds.
#[track_caller]
pub(crate) fn reduce<E: Element>(
    team: &Team<'_>,
    at: usize,
    source: Source<'_, E>,
    len: usize,
    op: impl Fn(E, E) -> E,
    name: &str,
) {
    let tp = team.tp();
    let (n, me) = (team.n_pes(), team.my_pe());
    let size = size_of::<E>();
    let bytes = len * size;
    let out = tp.local(at).cast::<E>();
    let private_copy;
    let src: *const E = match source {
        Source::InPlace => out.cast_const(),
        Source::Slice(s) => {
            debug_assert_eq!(s.len(), len);
            match tp.symmetric_offset(s.as_ptr().cast(), bytes) {
                // Never through safe code: a source overlapping `dest`, which this PE writes
                // chunk by chunk while it reads the source.
                Some(o) if overlap(o, at, bytes) => {
                    private_copy = s.to_vec();
                    private_copy.as_ptr()
                }
                _ => s.as_ptr(),
            }
        }
    };
    // Every member's staging area, this PE's own included.
    let stage: Vec<*mut E> = (0..n)
        .map(|j| match fetch::reach(team, j, team.block(STAGE)) {
            Reach::Mapped(p) => p.cast_mut().cast::<E>(),
            Reach::Ucx(..) => unreachable!("`takes` checked that every team block is mapped"),
        })
        .collect();
    let unit = (64 / size.max(1)).max(1);
    let chunk = (HALF / size.max(1) / unit * unit).max(unit);
    let chunks = len.div_ceil(chunk);
    assert!(
        chunks < 1 << COUNT_BITS,
        "shmem: {name}: {bytes} bytes is more than a staged reduction takes"
    );
    // Chunk `c`'s elements, its half's first element, and share `q` of it (relative to both).
    let range = |c: usize| c * chunk..((c + 1) * chunk).min(len);
    let half = |c: usize| (c % 2) * (HALF / size.max(1));
    // With two members each combines the whole chunk (see the module docs); with more, its
    // share of it.
    let split = n > 2;
    let share = |c: usize, q: usize| {
        let l = range(c).len();
        if split {
            share_start::<E>(l, n, q)..share_start::<E>(l, n, q + 1)
        } else {
            0..l
        }
    };
    let progress = Progress::new(team);
    let stage_chunk = |c: usize| {
        let r = range(c);
        // What the other members read of this PE's chunk: all of it (unsplit), or every share
        // but this PE's own.
        let parts = if split {
            let mine = share(c, me);
            [0..mine.start, mine.end..r.len()]
        } else {
            [0..r.len(), 0..0]
        };
        for s in parts.into_iter().filter(|s| !s.is_empty()) {
            // SAFETY: elements `s` of chunk `c` lie in the source (`len` elements) and in this
            // PE's half `c % 2` (at most `HALF` bytes), which nobody reads until this PE raises
            // its `PUB` word and nobody reads any more (every `READ` word is past the chunk
            // that used the half before, checked by the caller). The source is not the
            // staging area (symmetric memory or a private buffer).
            unsafe {
                copy_bytes(
                    stage[me].add(half(c) + s.start).cast(),
                    src.add(r.start + s.start).cast(),
                    s.len() * size,
                )
            };
        }
        progress.raise(Step::Pub, c as u64 + 1);
    };
    let piece = (COMBINE / size.max(1)).max(1);
    let mut acc: Vec<E> = Vec::with_capacity(piece);
    let in_place = src == out.cast_const();
    // Published with the first chunk.
    team.flag(STAGE_LEN).store(bytes as u64, Ordering::Relaxed);
    stage_chunk(0);
    for c in 0..chunks {
        let r = range(c);
        let h = half(c);
        let mine = share(c, me);
        progress.wait_all(Step::Pub, c as u64 + 1);
        if c == 0 {
            check_lengths(team, bytes, name);
        }
        // Step 2: this PE's share, in pieces that stay in the L1 cache.
        let mut done = mine.start;
        while done < mine.end {
            let p = piece.min(mine.end - done);
            let from = |j: usize| -> &[E] {
                let at = if j == me {
                    src.wrapping_add(r.start + done)
                } else {
                    stage[j].wrapping_add(h + done).cast_const()
                };
                // SAFETY: `p` elements of this PE's share of chunk `c`: in member `j`'s half
                // (staged, and unchanged until this PE raises its `READ` word for the chunk),
                // or in this PE's source, which this PE writes (in place) only below, after
                // reading, or (in place on member 0) not at all while the slice lives.
                unsafe { std::slice::from_raw_parts(at, p) }
            };
            // SAFETY: this PE's share of chunk `c` in its `dest` (`len` elements), which nobody
            // else touches; no slice of it lives while this one does (`from(me)` is taken
            // only where it is not `dest`, or before this is made).
            let to = || unsafe { std::slice::from_raw_parts_mut(out.add(r.start + done), p) };
            if !in_place {
                // Straight into `dest`, which is none of the sources.
                let to = to();
                for ((t, &a), &b) in to.iter_mut().zip(from(0)).zip(from(1)) {
                    *t = op(a, b);
                }
                for j in 2..n {
                    for (t, &b) in to.iter_mut().zip(from(j)) {
                        *t = op(*t, b);
                    }
                }
            } else if me == 0 {
                // In place on member 0: `dest` holds the first operand already.
                let to = to();
                for j in 1..n {
                    for (t, &b) in to.iter_mut().zip(from(j)) {
                        *t = op(*t, b);
                    }
                }
            } else {
                // In place elsewhere: through a private buffer, `dest` being one operand.
                acc.clear();
                acc.extend_from_slice(from(0));
                for j in 1..n {
                    for (a, &b) in acc.iter_mut().zip(from(j)) {
                        *a = op(*a, b);
                    }
                }
                to().copy_from_slice(&acc);
            }
            if split {
                // SAFETY: this PE's share of chunk `c` in its own half, which nobody else reads
                // before this PE raises its `DONE` word; from this PE's `dest` (not the stage).
                unsafe {
                    copy_bytes(
                        stage[me].add(h + done).cast(),
                        out.add(r.start + done).cast(),
                        p * size,
                    )
                };
            }
            done += p;
        }
        if split {
            progress.raise(Step::Done, c as u64 + 1);
        }
        // Stage the next chunk while the others finish this one, once every member has read
        // the chunk before this one, which used the same half.
        if c + 1 < chunks {
            if c >= 1 {
                progress.wait_all(Step::Read, c as u64);
            }
            stage_chunk(c + 1);
        }
        // Step 3: the others' shares.
        for q in (1..n).map(|k| (me + k) % n).filter(|_| split) {
            progress.wait(q, Step::Done, c as u64 + 1);
            let s = share(c, q);
            // SAFETY: member `q`'s finished share of chunk `c` in its half (unchanged until
            // this PE raises its `READ` word for the chunk) into the same elements of this
            // PE's `dest`, which nobody else touches.
            unsafe {
                copy_bytes(
                    out.add(r.start + s.start).cast(),
                    stage[q].add(h + s.start).cast(),
                    s.len() * size,
                )
            };
        }
        progress.raise(Step::Read, c as u64 + 1);
    }
    // Nobody reads this PE's staging area any more.
    progress.wait_all(Step::Read, chunks as u64);
}

/// Panics, naming the member, where a member of the team reduces another number of bytes than
/// this PE's `bytes` (every member has published its [`STAGE_LEN`] with its first chunk, and
/// none has left the reduction: that takes this PE's last `READ`).
#[track_caller]
fn check_lengths(team: &Team<'_>, bytes: usize, name: &str) {
    let me = team.my_pe();
    for j in (0..team.n_pes()).filter(|&j| j != me) {
        let theirs = member_word(team, j, STAGE_LEN).load(Ordering::Relaxed);
        if theirs != bytes as u64 {
            mismatch(name, j, theirs, me, bytes);
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(name: &str, j: usize, theirs: u64, me: usize, bytes: usize) -> ! {
    panic!(
        "shmem: {name}: team PE {j} contributes {theirs} bytes while team PE {me} contributes \
         {bytes}: every member must pass the same number of elements"
    )
}
