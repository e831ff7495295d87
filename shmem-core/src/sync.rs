//! Internal synchronization: `barrier_all` (a quiet and the world team's sync) and the small
//! all-reduce used by collective allocation, a dissemination algorithm over flag words in the
//! team segment (`crate::team::SEGMENT`, `ceil(log2 n)` rounds, each PE signalling one partner per
//! round) that works for any PE count and takes direct stores on one node.

use crate::amo::Remote;
use crate::runtime::Runtime;
use crate::strided::SignalKind;
use crate::team::Team;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Rounds needed for up to 2^64 PEs.
const MAX_ROUNDS: usize = 64;
/// Collective flags: two parities, one u64 per round each.
const COLL_FLAGS: usize = 0;
/// Collective payloads: two parities, one [u64; 4] per round each.
const COLL_PAYLOAD: usize = COLL_FLAGS + 2 * MAX_ROUNDS * 8;
const PAYLOAD_WORDS: usize = 4;
/// Bytes at the start of the team segment for synchronization (page multiple).
pub(crate) const SYNC_BYTES: usize = 8192;
/// Finalize announcements: how many PEs announced, then one bit per PE.
const FINAL_COUNT: usize = COLL_PAYLOAD + 2 * MAX_ROUNDS * PAYLOAD_WORDS * 8;
const FINAL_BITS: usize = FINAL_COUNT + 8;
/// PEs with a bit (the others are counted only).
const FINAL_BIT_PES: usize = (SYNC_BYTES - FINAL_BITS) * 8;
const _: () = assert!(FINAL_BITS < SYNC_BYTES);

/// How long a PE waits in a collective after a member announced that it finalizes before it
/// calls the collectives mismatched: long enough for the last flags of a collective that the
/// finalizing PE did complete to arrive, even on an oversubscribed node.
const MISMATCH_GRACE: Duration = Duration::from_millis(500);

/// Set when this PE starts finalizing: its own finalize barrier must not count as a mismatch.
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Epoch counters: every PE calls the same collectives in the same order, so the counters agree.
#[derive(Default)]
pub(crate) struct SyncState {
    coll_epoch: AtomicU64,
}

/// `shmem_barrier_all`: quiet, then wait until every PE has arrived.
#[doc(alias = "shmem_barrier_all")]
pub(crate) fn barrier_all(rt: &'static Runtime) {
    rt.quiet();
    crate::collectives::team_sync(&crate::team::Team::world(rt));
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
pub(crate) fn allreduce_minmax(rt: &Runtime, value: u64) -> MinMax {
    let me = rt.my_pe as u64;
    let mut acc = MinMax {
        min: value,
        min_pe: me,
        max: value,
        max_pe: me,
    };
    let n = rt.n_pes;
    if n == 1 {
        return acc;
    }
    rt.quiet();
    let epoch = crate::team::next_epoch(&rt.sync.coll_epoch);
    // A partner can be at most one collective ahead, so two alternating slot sets suffice.
    let parity = (epoch & 1) as usize;
    let mut dist = 1;
    let mut round = 0;
    while dist < n {
        let to = (rt.my_pe + dist) % n;
        let slot = parity * MAX_ROUNDS + round;
        let flag = COLL_FLAGS + slot * 8;
        let payload = COLL_PAYLOAD + slot * PAYLOAD_WORDS * 8;
        let words = [acc.min, acc.min_pe, acc.max, acc.max_pe];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        // The payload, then the flag that announces it (both in the team segment).
        rt.put_with_signal(
            rt.peer(to),
            (payload, &[&bytes]),
            (flag, SignalKind::Max, epoch),
        );
        let word = rt.local_word(flag);
        wait_in_collective(rt, None, || word.load(Ordering::Acquire) >= epoch);
        let mut got = [0u64; PAYLOAD_WORDS];
        for (i, w) in got.iter_mut().enumerate() {
            // In the sync area, aligned; written before the flag we acquired above.
            *w = rt.local_word(payload + i * 8).load(Ordering::Relaxed);
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
    rt.quiet();
    acc
}

/// Tells every other PE that this one is finalizing (a count and this PE's bit in their sync
/// areas), so that a PE waiting in a collective this one will never join can say so instead of
/// hanging ([`wait_in_collective`]). Called by finalize before its barrier.
pub(crate) fn announce_finalize(rt: &'static Runtime) {
    FINALIZING.store(true, Ordering::Release);
    let me = rt.my_pe;
    for pe in (0..rt.n_pes).filter(|&pe| pe != me) {
        let peer = rt.peer(pe);
        // Words of the sync area, aligned; peers update them only atomically.
        Remote::<u64>::new(rt, peer, FINAL_COUNT).add(1);
        if me < FINAL_BIT_PES {
            Remote::<u64>::new(rt, peer, FINAL_BITS + me / 64 * 8).or(1 << (me % 64));
        }
    }
}

/// The lowest PE of `team` (`None`: every PE) that announced it finalizes, if any.
fn finalized_member(rt: &Runtime, team: Option<&Team<'_>>) -> Option<usize> {
    (0..rt.n_pes.min(FINAL_BIT_PES))
        .filter(|&pe| team.is_none_or(|t| t.index_of(pe).is_some()))
        .find(|&pe| {
            let word = rt.local_word(FINAL_BITS + pe / 64 * 8);
            word.load(Ordering::Acquire) & (1 << (pe % 64)) != 0
        })
}

/// Waits in a collective of `team` (`None`: all PEs) until `done()`, as `wait_local`; if a
/// member has announced that it finalizes and the wait goes on for [`MISMATCH_GRACE`] more,
/// the PEs called different collectives (that member returned from `main` while this one waits
/// here), and this PE panics naming it, which ends the job instead of hanging it.
#[track_caller]
pub(crate) fn wait_in_collective(
    rt: &Runtime,
    team: Option<&Team<'_>>,
    mut done: impl FnMut() -> bool,
) {
    let announced = rt.local_word(FINAL_COUNT);
    let mut since: Option<Instant> = None;
    // On one node every flag and message of a collective comes through shared memory: look
    // for it between rounds of UCX progress too.
    let polls = rt.one_node().then_some(crate::progress::POLLS_PER_PROGRESS);
    rt.wait_local_polling(polls, || {
        if done() {
            return true;
        }
        if announced.load(Ordering::Relaxed) != 0 && !FINALIZING.load(Ordering::Relaxed) {
            let t = *since.get_or_insert_with(Instant::now);
            if t.elapsed() >= MISMATCH_GRACE
                && let Some(pe) = finalized_member(rt, team)
            {
                mismatch(rt.my_pe, pe);
            }
        }
        false
    });
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
