//! Internal synchronization: the barrier and the small all-reduce used by collective allocation.
//!
//! Both are dissemination algorithms over flag words in the first pages of the symmetric heap
//! (`ceil(log2 n)` rounds, each PE signalling one partner per round), so they work for any PE count
//! and take direct stores on one node.

use crate::runtime::Runtime;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Rounds needed for up to 2^64 PEs.
const MAX_ROUNDS: usize = 64;
/// Barrier flags: one u64 per round.
const BARRIER_FLAGS: usize = 0;
/// Collective flags: two parities, one u64 per round each.
const COLL_FLAGS: usize = BARRIER_FLAGS + MAX_ROUNDS * 8;
/// Collective payloads: two parities, one [u64; 4] per round each.
const COLL_PAYLOAD: usize = COLL_FLAGS + 2 * MAX_ROUNDS * 8;
const PAYLOAD_WORDS: usize = 4;
/// Bytes reserved at the start of the heap for synchronization (page multiple).
pub(crate) const SYNC_BYTES: usize = 8192;
const _: () = assert!(COLL_PAYLOAD + 2 * MAX_ROUNDS * PAYLOAD_WORDS * 8 <= SYNC_BYTES);

/// Epoch counters: every PE calls the same collectives in the same order, so the counters agree.
#[derive(Default)]
pub(crate) struct SyncState {
    barrier_epoch: AtomicU64,
    coll_epoch: AtomicU64,
}

/// Checks a wait makes by spinning before it starts to yield the CPU.
static SPIN_LIMIT: AtomicU32 = AtomicU32::new(SPINS_WITH_OWN_CORE);
/// When every PE of this node can have a CPU of its own: the awaited PE is running, and the
/// next few checks will likely see its write.
const SPINS_WITH_OWN_CORE: u32 = 64;
/// When this node's PEs outnumber its CPUs: the awaited PE may well be waiting for this CPU, and
/// each `pause` (tens of ns) only delays it.
const SPINS_OVERSUBSCRIBED: u32 = 2;

/// Sets how long waits spin, from the number of PEs on this node and the CPUs this process may
/// run on.
pub(crate) fn set_spin_limit(local_pes: usize) {
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let limit = if local_pes > cpus {
        SPINS_OVERSUBSCRIBED
    } else {
        SPINS_WITH_OWN_CORE
    };
    SPIN_LIMIT.store(limit, Ordering::Relaxed);
}

/// Spin briefly, then yield: with 16 PEs on 2 cores a pure spin would starve the PE being waited
/// for.
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    if *spins < SPIN_LIMIT.load(Ordering::Relaxed) {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// `shmem_barrier_all`: quiet, then wait until every PE has arrived.
pub(crate) fn barrier_all(rt: &Runtime) {
    rt.quiet();
    let n = rt.n_pes;
    if n == 1 {
        return;
    }
    let epoch = rt.sync.barrier_epoch.fetch_add(1, Ordering::Relaxed) + 1;
    let mut dist = 1;
    let mut round = 0;
    while dist < n {
        let to = (rt.my_pe + dist) % n;
        let flag = BARRIER_FLAGS + round * 8;
        rt.store_flag(to, flag, epoch);
        rt.wait_flag_ge(flag, epoch);
        dist <<= 1;
        round += 1;
    }
    // Flags sent through UCX must have left this PE before it goes off to compute.
    rt.quiet();
}

/// Minimum and maximum of one value over all PEs, with the lowest PE holding each.
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
    let epoch = rt.sync.coll_epoch.fetch_add(1, Ordering::Relaxed) + 1;
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
        let peer = rt.peer(to);
        // SAFETY: the payload slot lies in the sync area; `words` outlives the blocking put.
        unsafe { rt.put_bytes(peer, payload, words.as_ptr().cast(), PAYLOAD_WORDS * 8) };
        // The payload must land before the flag that announces it.
        rt.flush_peer(peer);
        rt.store_flag(to, flag, epoch);
        rt.wait_flag_ge(flag, epoch);
        let mut got = [0u64; PAYLOAD_WORDS];
        for (i, w) in got.iter_mut().enumerate() {
            // SAFETY: in the sync area, aligned; written before the flag we acquired above.
            let word = unsafe { &*(rt.local(payload + i * 8) as *const AtomicU64) };
            *w = word.load(Ordering::Relaxed);
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
