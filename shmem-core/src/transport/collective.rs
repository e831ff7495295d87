//! The transport's own collectives, on groups of PEs and their blocks in the team segment:
//! the dissemination sync of a group (every team's `sync` and `barrier`, `barrier_all`, and
//! finalize's barrier, whose flags carry their kind so that neither passes for the other), the
//! small all-reduce used by collective allocation, and what lets a PE waiting in a collective
//! name a member instead of hanging: the finalize announcement (a member finalized) and the
//! entry words (a member entered a different collective: [`Group::enter`]).
//!
//! The sync and the all-reduce are dissemination algorithms over flag words in the team segment
//! (`mem::segment`, `ceil(log2 n)` rounds, each PE signalling one partner per round) that work
//! for any PE count and take direct stores on one node; groups of 3 to 8 PEs of a job on one
//! node sync through their first member instead ([`Group::sync_fan`]).
//!
//! Part of the transport layer (it knows PE numbers, offsets and words, not teams as users see
//! them); uses `slots`, `progress`, `mem` and [`Transport`]'s operations.

use super::Transport;
use super::atomic::AmoOp;
use super::progress::POLLS_PER_PROGRESS;
use super::slots::next_epoch;
use crate::mem::segment::{
    BARRIER_FLAGS, COLL_FLAGS, COLL_PAYLOAD, ENTRIES, ENTRY, FINAL_BIT_PES, FINAL_BITS,
    FINAL_COUNT, PAYLOAD_WORDS, SYNC_ROUNDS, block_offset,
};
use crate::mem::word::SignalKind;
use shmem_ucx::AtomicSize;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a PE waits in a collective after a member announced that it finalizes before it
/// calls the collectives mismatched: long enough for the last flags of a collective that the
/// finalizing PE did complete to arrive, even on an oversubscribed node.
const MISMATCH_GRACE: Duration = Duration::from_millis(500);

/// Set when this PE starts finalizing: its own finalize barrier must not count as a mismatch.
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// A group of PEs as the transport sees it: the world PEs `start, start + stride, ...`
/// (`size` of them), this PE's index among them, and the team block their collectives use.
/// Every team wraps one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Group {
    pub(crate) tp: &'static Transport,
    start: usize,
    stride: usize,
    size: usize,
    my_index: usize,
    slot: usize,
}

impl Group {
    /// Every PE of the job, on block 0.
    pub(crate) fn world(tp: &'static Transport) -> Group {
        Group::new(tp, (0, 1, tp.n_pes), tp.my_pe, 0)
    }

    /// The PEs `start, start + stride, ...` (`size` of them), of which this PE is number
    /// `my_index`, on team block `slot`.
    pub(crate) fn new(
        tp: &'static Transport,
        (start, stride, size): (usize, usize, usize),
        my_index: usize,
        slot: usize,
    ) -> Group {
        Group {
            tp,
            start,
            stride,
            size,
            my_index,
            slot,
        }
    }

    /// This PE's number in the group.
    #[inline]
    pub(crate) fn my_pe(&self) -> usize {
        self.my_index
    }

    /// Number of PEs in the group.
    #[inline]
    pub(crate) fn n_pes(&self) -> usize {
        self.size
    }

    /// The first world PE and the stride between members.
    pub(crate) fn start_stride(&self) -> (usize, usize) {
        (self.start, self.stride)
    }

    /// The team block of the group.
    pub(crate) fn slot(&self) -> usize {
        self.slot
    }

    /// The world PE number of group PE `pe`; panics naming both unless `pe < n_pes()`.
    #[inline]
    #[track_caller]
    pub(crate) fn world_pe(&self, pe: usize) -> usize {
        if pe >= self.size {
            panic!(
                "shmem: team PE {pe} is out of range: the team has {} PEs",
                self.size
            );
        }
        self.start + pe * self.stride
    }

    /// The group number of world PE `world_pe`, if it is a member.
    pub(crate) fn index_of(&self, world_pe: usize) -> Option<usize> {
        let d = world_pe.checked_sub(self.start)?;
        (d % self.stride == 0 && d / self.stride < self.size).then_some(d / self.stride)
    }

    /// Offset of byte `at` of the group's team block.
    #[inline]
    pub(crate) fn block(&self, at: usize) -> usize {
        block_offset(self.slot) + at
    }

    /// This PE's flag word at byte `at` of the group's block.
    pub(crate) fn flag(&self, at: usize) -> &'static AtomicU64 {
        // SAFETY: team blocks lie in the team segment, mapped for the process's life, 8-byte
        // aligned; peers only touch flag words atomically.
        unsafe { AtomicU64::from_ptr(self.tp.local(self.block(at)).cast()) }
    }

    /// The epochs of the group's syncs.
    pub(crate) fn barrier_epoch(&self) -> &'static AtomicU64 {
        &self.tp.slots.barrier_epoch[self.slot]
    }

    /// The epochs of the group's tree collectives that sync first (large broadcasts, scans).
    pub(crate) fn coll_epoch(&self) -> &'static AtomicU64 {
        &self.tp.slots.coll_epoch[self.slot]
    }

    /// The epochs of the group's all-waiting mailbox exchanges.
    pub(crate) fn mail_epoch(&self) -> &'static AtomicU64 {
        &self.tp.slots.mail_epoch[self.slot]
    }

    /// The epochs of the group's eager broadcasts.
    pub(crate) fn bcast_epoch(&self) -> &'static AtomicU64 {
        &self.tp.slots.bcast_epoch[self.slot]
    }

    /// Dissemination sync over the group's members (`shmem_team_sync`): returns once every
    /// member has entered. Completes no put.
    pub(crate) fn sync(&self) {
        self.sync_as(SyncKind::User);
    }

    /// The dissemination sync, its flags tagged with `kind`: a member that receives a flag of
    /// its own epoch but of another kind knows that its partner entered a different sync (the
    /// finalize's barrier against a user's one) and panics naming both, instead of letting one
    /// pass for the other.
    fn sync_as(&self, kind: SyncKind) {
        let n = self.n_pes();
        if n == 1 {
            return;
        }
        let tp = self.tp;
        let epoch = next_epoch(self.barrier_epoch());
        let mine = kind.flag(epoch);
        let me = self.my_pe();
        if tp.one_node() && (3..=FAN_MAX).contains(&n) {
            self.sync_fan(kind, epoch);
            tp.wait_sent();
            return;
        }
        let (mut dist, mut round) = (1, 0);
        while dist < n {
            let to = self.world_pe((me + dist) % n);
            tp.store_flag(to, self.block(BARRIER_FLAGS + round * 8), mine);
            let f = self.flag(BARRIER_FLAGS + round * 8);
            wait_in_collective(tp, Some(self), || {
                let got = f.load(Ordering::Acquire);
                if got >> SyncKind::BITS == epoch && got != mine {
                    // This round's flags come from team PE `me - dist`.
                    let from = self.world_pe((me + n - dist) % n);
                    sync_mismatch(tp.my_pe, kind, from, SyncKind::of(got));
                }
                // A later epoch: the partner is done with this sync, whatever it does now.
                got >= mine
            });
            dist <<= 1;
            round += 1;
        }
        // Flags sent through UCX must have left before this PE computes again.
        tp.wait_sent();
    }
}

/// Which collective a PE entered, as its team's members compare them: PEs whose entry words
/// hold the same sequence number but different kinds called different collectives, which
/// would wait for each other forever ([`wait_in_collective`] ends the job instead). Variants of
/// one operation share a kind (`broadcast` and `broadcast_to_others`, `collect` and
/// `fcollect`, every reduction), so that only calls that can never meet count as different.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Coll {
    /// `barrier_all`, `sync_all`, a team's `sync` or `barrier`.
    Sync = 1,
    /// A broadcast, of any form.
    Broadcast = 2,
    /// `collect` or `fcollect`.
    Collect = 3,
    /// `alltoall` or `alltoalls`.
    Alltoall = 4,
    /// A reduction, of any operation, through the mailbox.
    Reduce = 5,
    /// A scan (`sum_inscan`, `sum_exscan`).
    Scan = 6,
    /// A collective allocation or free of the symmetric heap.
    Alloc = 7,
    /// A team split or a team's destruction.
    Team = 8,
    /// A reduction that takes `coll::large`'s path: members that passed fewer elements, which
    /// go through the mailbox, are in [`Coll::Reduce`] instead, and a wait names both.
    ReduceLarge = 9,
}

impl Coll {
    /// Every kind, by its number.
    const ALL: [Coll; 9] = [
        Coll::Sync,
        Coll::Broadcast,
        Coll::Collect,
        Coll::Alltoall,
        Coll::Reduce,
        Coll::Scan,
        Coll::Alloc,
        Coll::Team,
        Coll::ReduceLarge,
    ];

    /// The kind numbered `k`, if any.
    fn of(k: u64) -> Option<Coll> {
        Coll::ALL.into_iter().find(|&c| c as u64 == k)
    }

    /// What the kind is called in messages.
    fn name(self) -> &'static str {
        match self {
            Coll::Sync => "a barrier or sync (barrier_all, sync_all, a team's sync or barrier)",
            Coll::Broadcast => "a broadcast",
            Coll::Collect => "a collect or fcollect",
            Coll::Alltoall => "an alltoall or alltoalls",
            Coll::Reduce => "a reduction",
            Coll::Scan => "a scan (sum_inscan, sum_exscan)",
            Coll::Alloc => "a collective allocation or free of the symmetric heap",
            Coll::Team => "a team split or a team's destruction",
            Coll::ReduceLarge => "a reduction",
        }
    }
}

/// A collective this PE has entered; leaving it is dropping this.
pub(crate) struct Entered(&'static AtomicU32);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0
            .store(self.0.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
    }
}

impl Group {
    /// Records that this PE enters collective `kind` of the group: the group's next sequence
    /// number and the kind go into its entry word for that number (in its own team block,
    /// which members read when a wait in a collective goes on too long). Every member enters
    /// the same collectives in the same order, so members agree on the kind of every number,
    /// and a member up to [`ENTRIES`] - 1 collectives ahead still shows its kind of this
    /// PE's number. A collective entered within another of the same team counts as part of
    /// it.
    pub(crate) fn enter(&self, kind: Coll) -> Entered {
        // Collectives of one team are never concurrent (not even from several threads), so
        // plain loads and stores of this PE's counters suffice; a collective entered within
        // another of the same team (an allocation's barrier) only counts the depth. (A
        // thread-local depth cost about 15 ns per barrier from C: libshmem.so reaches its
        // thread-locals through __tls_get_addr.)
        let depth = &self.tp.slots.depth[self.slot];
        let d = depth.load(Ordering::Relaxed);
        if d == 0 {
            let count = &self.tp.slots.entries[self.slot];
            let seq = count.load(Ordering::Relaxed) + 1;
            count.store(seq, Ordering::Relaxed);
            self.flag(entry_word(seq))
                .store(seq << 8 | kind as u64, Ordering::Release);
        }
        depth.store(d + 1, Ordering::Relaxed);
        Entered(depth)
    }
}

impl Group {
    /// The sync of a small group on one node: every member raises its word in member 0's team
    /// block (word `me` of [`BARRIER_FLAGS`]), member 0 waits for them all and raises word 0 of
    /// every member's block. Member 0 leaves first, the moment the last member arrives, where
    /// the dissemination sync lets every member go in an order that depends on who arrived last.
    /// That matters on an oversubscribed node, where a member that leaves waits for the next
    /// collective's senders to be scheduled: a broadcast from member 0 that follows a barrier
    /// (OSU-style timing, `latency --collectives`, 2 cores, alternating runs under load from
    /// other jobs) took 0.54-0.84 us at 4 PEs and 0.07 with this sync, 3.0-4.1 us and 0.08 at 8
    /// PEs; barrier_all itself 3.3-3.8 us against 3.3-3.5 at 4 PEs, 11.0-11.2 against 6.7 at
    /// 8. At 2 PEs the dissemination sync's single round of crossed flags was quicker (0.75 us
    /// against 2.5, medians of 4 runs under heavier load), so groups of 2 keep it.
    ///
    /// Which sync a group takes depends only on its size and whether the job is on one node,
    /// the same on every member (the two use the same words differently).
    fn sync_fan(&self, kind: SyncKind, epoch: u64) {
        let (tp, n, me) = (self.tp, self.n_pes(), self.my_pe());
        let mine = kind.flag(epoch);
        let wait = |at: usize, from: usize| {
            let f = self.flag(BARRIER_FLAGS + at * 8);
            wait_in_collective(tp, Some(self), || {
                let got = f.load(Ordering::Acquire);
                if got >> SyncKind::BITS == epoch && got != mine {
                    sync_mismatch(tp.my_pe, kind, self.world_pe(from), SyncKind::of(got));
                }
                got >= mine
            });
        };
        if me == 0 {
            for i in 1..n {
                wait(i, i);
            }
            for i in 1..n {
                tp.store_flag(self.world_pe(i), self.block(BARRIER_FLAGS), mine);
            }
        } else {
            tp.store_flag(self.world_pe(0), self.block(BARRIER_FLAGS + me * 8), mine);
            wait(0, 0);
        }
    }
}

/// Largest group whose syncs on one node go through member 0 ([`Group::sync_fan`]).
const FAN_MAX: usize = 8;

/// What a group's sync is for, carried in the low bits of every flag it sends (above them, the
/// epoch), so that PEs that entered different syncs of the same epoch notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
enum SyncKind {
    /// A team's sync or barrier, `barrier_all`, `sync_all`, the sync a collective starts with.
    User = 0,
    /// The barrier of finalize.
    Finalize = 1,
}

impl SyncKind {
    /// Low bits of a flag that hold the kind.
    const BITS: u32 = 1;

    /// The flag of this kind's sync of `epoch`. Flags grow with the epoch, so a partner one
    /// sync ahead overwrites a flag with a larger value, never a smaller one.
    fn flag(self, epoch: u64) -> u64 {
        epoch << Self::BITS | self as u64
    }

    /// The kind that sent `flag`.
    fn of(flag: u64) -> SyncKind {
        if flag & ((1 << Self::BITS) - 1) == SyncKind::Finalize as u64 {
            SyncKind::Finalize
        } else {
            SyncKind::User
        }
    }
}

/// `shmem_barrier_all`: quiet, then wait until every PE has arrived.
#[doc(alias = "shmem_barrier_all")]
pub(crate) fn barrier_all(tp: &'static Transport) {
    let _in = Group::world(tp).enter(Coll::Sync);
    tp.quiet();
    Group::world(tp).sync();
}

/// The barrier of finalize: `barrier_all` with flags of their own kind, so that it meets only
/// the other PEs' finalize; a PE in `barrier_all` (or any sync of all PEs) that meets it, or
/// that it meets, ends the job naming the PE that finalized.
pub(crate) fn finalize_barrier(tp: &'static Transport) {
    tp.quiet();
    Group::world(tp).sync_as(SyncKind::Finalize);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MinMax {
    pub(crate) min: u64,
    pub(crate) min_pe: u64,
    pub(crate) max: u64,
    pub(crate) max_pe: u64,
}

impl MinMax {
    fn combine(self, o: MinMax) -> MinMax {
        let (min, min_pe) = (self.min, self.min_pe).min((o.min, o.min_pe));
        // Largest value, lowest PE among equals.
        let (max, max_pe) = if o.max > self.max || (o.max == self.max && o.max_pe < self.max_pe) {
            (o.max, o.max_pe)
        } else {
            (self.max, self.max_pe)
        };
        MinMax {
            min,
            min_pe,
            max,
            max_pe,
        }
    }
}

/// All-reduce of (min, max) over every PE; also a barrier. Min and max are idempotent, so the
/// dissemination pattern's overlapping contributions for non-power-of-two counts do no harm.
pub(crate) fn allreduce_minmax(tp: &Transport, value: u64) -> MinMax {
    let me = tp.my_pe as u64;
    let mut acc = MinMax {
        min: value,
        min_pe: me,
        max: value,
        max_pe: me,
    };
    let n = tp.n_pes;
    if n == 1 {
        return acc;
    }
    tp.quiet();
    let epoch = next_epoch(&tp.slots.sync_epoch);
    // A partner can be at most one collective ahead, so two alternating slot sets suffice.
    let parity = (epoch & 1) as usize;
    let mut dist = 1;
    let mut round = 0;
    while dist < n {
        let to = (tp.my_pe + dist) % n;
        let slot = parity * SYNC_ROUNDS + round;
        let flag = COLL_FLAGS + slot * 8;
        let payload = COLL_PAYLOAD + slot * PAYLOAD_WORDS * 8;
        let words = [acc.min, acc.min_pe, acc.max, acc.max_pe];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        // The payload, then the flag that announces it (both in the team segment).
        tp.put_with_signal(
            tp.peer(to),
            (payload, &[&bytes]),
            (flag, SignalKind::Max, epoch),
        );
        let word = tp.local_word(flag);
        wait_in_collective(tp, None, || word.load(Ordering::Acquire) >= epoch);
        let mut got = [0u64; PAYLOAD_WORDS];
        for (i, w) in got.iter_mut().enumerate() {
            // In the sync area, aligned; written before the flag we acquired above.
            *w = tp.local_word(payload + i * 8).load(Ordering::Relaxed);
        }
        acc = acc.combine(MinMax {
            min: got[0],
            min_pe: got[1],
            max: got[2],
            max_pe: got[3],
        });
        dist <<= 1;
        round += 1;
    }
    tp.quiet();
    acc
}

/// Tells every other PE that this one is finalizing (a count and this PE's bit in their sync
/// areas), so that a PE waiting in a collective this one will never join can say so instead of
/// hanging ([`wait_in_collective`]). Called by finalize before its barrier.
pub(crate) fn announce_finalize(tp: &Transport) {
    FINALIZING.store(true, Ordering::Release);
    let me = tp.my_pe;
    for pe in (0..tp.n_pes).filter(|&pe| pe != me) {
        let peer = tp.peer(pe);
        // Words of the sync area, aligned; peers update them only atomically.
        tp.atomic(peer, FINAL_COUNT, AtomicSize::U64, AmoOp::Add, (1, 1));
        if me < FINAL_BIT_PES {
            let bit = 1 << (me % 64);
            let word = FINAL_BITS + me / 64 * 8;
            tp.atomic(peer, word, AtomicSize::U64, AmoOp::Or, (bit, bit));
        }
    }
}

/// The lowest PE of `team` (`None`: every PE) that announced it finalizes, if any.
fn finalized_member(tp: &Transport, team: Option<&Group>) -> Option<usize> {
    (0..tp.n_pes.min(FINAL_BIT_PES))
        .filter(|&pe| team.is_none_or(|t| t.index_of(pe).is_some()))
        .find(|&pe| {
            let word = tp.local_word(FINAL_BITS + pe / 64 * 8);
            word.load(Ordering::Acquire) & (1 << (pe % 64)) != 0
        })
}

/// The word of a team block that holds the entry of sequence number `seq`.
fn entry_word(seq: u64) -> usize {
    ENTRY + (seq % ENTRIES as u64) as usize * 8
}

/// The first member of `team` (`None`: all PEs) whose entry word for this PE's last sequence
/// number on the team holds another kind, among the members whose team block is mapped here:
/// `(its world PE, its kind, this PE's kind, the sequence number)`.
fn entered_elsewhere(tp: &Transport, team: Option<&Group>) -> Option<(usize, Coll, Coll, u64)> {
    let (start, stride, size, me, slot) = match team {
        Some(g) => (g.start, g.stride, g.size, g.my_index, g.slot),
        None => (0, 1, tp.n_pes, tp.my_pe, 0),
    };
    let seq = tp.slots.entries[slot].load(Ordering::Relaxed);
    let at = block_offset(slot) + entry_word(seq);
    let mine = tp.local_word(at).load(Ordering::Acquire);
    let kind = Coll::of(mine & 0xff).filter(|_| mine >> 8 == seq)?;
    (0..size).filter(|&j| j != me).find_map(|j| {
        let pe = start + j * stride;
        let p = tp.mapped(tp.peer(pe), at)?;
        // SAFETY: a word of the member's team block, mapped for the process's life and 8-byte
        // aligned; members write it only atomically.
        let theirs = unsafe { AtomicU64::from_ptr(p.cast()) }.load(Ordering::Acquire);
        let other = Coll::of(theirs & 0xff)?;
        (theirs >> 8 == seq && other != kind).then_some((pe, other, kind, seq))
    })
}

/// Polls of a collective's wait between two looks at the clock (and, past
/// [`MISMATCH_GRACE`], at the members' entry and finalize words).
const POLLS_PER_LOOK: u32 = 256;

/// Waits in a collective of `team` (`None`: all PEs) until `done()`, as `wait_local`. The PEs
/// may have called different collectives, which would wait for each other forever; this PE
/// then panics naming the member, which ends the job instead of hanging it, when
/// - a member has announced that it finalizes (it returned from `main` while this PE waits
///   here) and the wait goes on for [`MISMATCH_GRACE`] more, or
/// - the wait has gone on for [`MISMATCH_GRACE`] and a member's entry word
///   ([`Group::enter`]) shows it in another collective of the same sequence number (members
///   whose team block is mapped here: those of this node).
#[track_caller]
pub(crate) fn wait_in_collective(
    tp: &Transport,
    team: Option<&Group>,
    mut done: impl FnMut() -> bool,
) {
    let announced = tp.local_word(FINAL_COUNT);
    let mut since: Option<Instant> = None;
    let mut waiting: Option<Instant> = None;
    let mut polls_left = POLLS_PER_LOOK;
    // On one node every flag and message of a collective comes through shared memory: look
    // for it between rounds of UCX progress too.
    let polls = tp.one_node().then_some(POLLS_PER_PROGRESS);
    tp.progress.wait(polls, || {
        if done() {
            return true;
        }
        if FINALIZING.load(Ordering::Relaxed) {
            return false;
        }
        if announced.load(Ordering::Relaxed) != 0 {
            // The grace counts from the announcement: the flags a finalizing member sent
            // before it may still be on their way.
            let t = *since.get_or_insert_with(Instant::now);
            if t.elapsed() >= MISMATCH_GRACE
                && let Some(pe) = finalized_member(tp, team)
            {
                mismatch(tp.my_pe, pe);
            }
        }
        polls_left -= 1;
        if polls_left == 0 {
            polls_left = POLLS_PER_LOOK;
            let t = *waiting.get_or_insert_with(Instant::now);
            if t.elapsed() >= MISMATCH_GRACE
                && let Some((pe, theirs, mine, seq)) = entered_elsewhere(tp, team)
            {
                different_collectives(tp.my_pe, mine, pe, theirs, seq);
            }
        }
        false
    });
}

/// PE `me`, in collective `mine`, found PE `pe` in collective `theirs` of the same sequence
/// number `seq` of their team.
#[cold]
#[inline(never)]
#[track_caller]
fn different_collectives(me: usize, mine: Coll, pe: usize, theirs: Coll, seq: u64) -> ! {
    let path = |c: Coll| {
        if c == Coll::ReduceLarge {
            "more bytes than one exchange of the mailbox holds"
        } else {
            "bytes that the mailbox takes in one exchange"
        }
    };
    if matches!(mine, Coll::Reduce | Coll::ReduceLarge)
        && matches!(theirs, Coll::Reduce | Coll::ReduceLarge)
    {
        panic!(
            "shmem: members passed different lengths to a reduction: PE {me} reduces {} while \
             PE {pe} reduces {} (collective number {seq} of their team on both); every member \
             must pass the same number of elements",
            path(mine),
            path(theirs)
        )
    }
    panic!(
        "shmem: PEs called different collectives: PE {me} waits in {} while PE {pe} is in {} \
         (collective number {seq} of their team on both); every PE must call the same \
         collectives in the same order",
        mine.name(),
        theirs.name()
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn mismatch(me: usize, pe: usize) -> ! {
    panic!(
        "shmem: PE {pe} finalized (its World was dropped: it returned from main or called \
         shmem_finalize) while PE {me} waits for it in a collective operation; every PE must \
         call the same collectives in the same order"
    )
}

/// PE `me`, in a sync of kind `mine`, received the flag of the same epoch of a sync of kind
/// `theirs` from PE `from`. Only a finalize meeting a user's sync gives two kinds.
#[cold]
#[inline(never)]
#[track_caller]
fn sync_mismatch(me: usize, mine: SyncKind, from: usize, theirs: SyncKind) -> ! {
    let (finalized, waiting) = match (mine, theirs) {
        (SyncKind::Finalize, _) => (me, from),
        _ => (from, me),
    };
    panic!(
        "shmem: PE {finalized} finalized (its World was dropped: it returned from main or called \
         shmem_finalize) while PE {waiting} waits for it in a barrier of all PEs (barrier_all, \
         sync_all or a collective of the world team); every PE must call the same collectives \
         in the same order"
    )
}
