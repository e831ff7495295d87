//! All-to-all of blocks too large for the mailbox's slots, on a team whose members' heaps are
//! all mapped here (one node, shared memory): every member copies each of its blocks straight
//! into its destination (one copy), and the members wait for each other through words of their
//! team blocks instead of two team syncs.
//!
//! Each exchange takes a new mail epoch `e` and the all-to-all area of its parity (as the
//! mailbox's exchanges do, `coll::mailbox`), where every member has a slot per sender:
//! 1. *Entry*: a member stores `e` into the epoch word of its own slot of its own area (a slot
//!    no exchange ever writes or reads: nobody sends to itself), with release ordering: its
//!    `dest` is now free to be written. It copies its own block into its `dest` the first time
//!    no member is ready for a send (or after the sends), so that the members waiting for its
//!    blocks get them first; but on a node with more PEs than CPUs it copies its own block
//!    first: there the members it sends to are mostly not running, and those that are write
//!    into its `dest` meanwhile. Measured on the 2-vCPU EPYC, 4 PEs (`coll_sweep`, 10
//!    alternating rounds, medians, us per call, own block first / after / Open MPI's oshmem):
//!    64 KiB 6.4 / 8.8 / 8.7, 256 KiB 15.1 / 16.0 / 18.5, 1 MiB 47.0 / 56.0 / 43.2 while the
//!    vCPUs share a cache, 7.3 / 9.5 / 7.5, 16.1 / 20.7 / 15.4, 47.1 / 61.6 / 43.2 while
//!    they sit apart; at 2 PEs (one per vCPU) the own block first cost more (256 KiB 6.0
//!    against 5.2, 1 MiB 25.5 against 24.4).
//! 2. *Sends*: it copies block `j` of its source into member `j`'s `dest` as soon as `j`'s entry
//!    word reads `e`, starting with `me + 1`, then `me + 2`, ... (at any moment the members
//!    write into different destinations), and skipping members that have not entered yet for
//!    those that have (on an oversubscribed node one that is not running does not hold up the
//!    others). After each copy it raises the header of its slot in `j`'s area to `e`, with the
//!    block's length (no payload), release ordering.
//! 3. *Arrivals*: it waits for the header of every member's slot in its own area to reach `e`,
//!    and checks the length there (members that passed different lengths, or called the eager
//!    all-to-all, panic, naming both).
//!
//! *Copies*: with cached stores, or with non-temporal ones (`copy_streaming`) where the
//! exchange's data on this node, every member's source and `dest` (`2 n² block` bytes), is
//! more than three quarters of the machine's last-level caches (`outgrows_caches`): then the
//! blocks could not stay in the caches until the next use anyway, and the streaming stores
//! save reading every destination line before it is overwritten. Measured on the project's
//! 2-vCPU EPYC (32 MiB of L3; `coll_sweep`, medians of 7 alternating runs, us per call,
//! streaming / cached / Open MPI's oshmem): 5 PEs at 4 MiB each (40 MiB in all) 651 / 977 /
//! 1,105; 6 PEs 819 / 1,180 / 1,502; 8 PEs 1,130 / 1,798 / 1,523, and with every PE reading
//! its whole `dest` after each call 1,832 / 2,160. Where the data fits (2 PEs at 4 MiB, 16 MiB
//! in all) streaming took almost three times as long as cached stores (305 against 112). At 4
//! PEs and 4 MiB each the data is 32 MiB, the whole L3, and it does not stay there either: in
//! the collective sweep's order (every case from 8 B up), 3 sets of alternating runs, medians,
//! us per call, streaming / cached / oshmem, by the VM's state (`benches/c/c2c.c`'s probe):
//! vCPUs apart 291 / 301 (4 and 2 runs), runs that saw both states 295 / 515 / 362 (2, 4 and
//! 5 runs), vCPUs together 537 / 489 / 632 (7, 7 and 5 runs; there cached stores were 10%
//! quicker). At half that (4 PEs at 2 MiB, 8 PEs at 1 MiB) cached stores stay the quicker: 100
//! against 207 and 108 against 151 us.
//!
//! Below that, from 8 MiB in all (`LEARN_NODE_MIN`) and blocks of 64 KiB (`LEARN_BLOCK_MIN`:
//! each copy is timed), each member stores as its own timings of its copies in earlier
//! exchanges of the class found quicker (`coll::stores`, which learns a broadcast root's stores
//! the same way; a trial of the other kind one call in 32), for the caches that sysfs lists
//! need not be this process's to use: on the project's 2-vCPU Intel VM
//! it lists 300 MiB of L3, the host's, yet streaming stores win from 8 MiB in all. Measured
//! there (`coll_sweep`, 5 alternating runs, medians, us per call, learned / cached / streaming
//! / Open MPI's oshmem): 4 PEs at 1 MiB 130.9 / 142.8 / 115.2 / 151.6, at 4 MiB 492.3 / 602.1
//! / 577.7 / 506.2; 8 PEs 293.9 / 340.0 / 269.2 / 259.2, 932.4 / 1,147.6 / 914.7 / 952.3; and
//! in another set (6 runs, learned / cached / oshmem) 2 PEs at 4 MiB 279.6 / 315.2 / 317.4, 4
//! PEs at 1 MiB 122.9 / 134.1 / 126.5, 4 MiB 486.2 / 583.5 / 483.1, 8 PEs 267.3 / 299.5 /
//! 250.7, 897.5 / 1,048.6 / 892.2. At 4 MiB in all the two kinds were even (2 PEs at 1 MiB,
//! 3 runs: cached 33.4-52.7, streaming 49.7-57.8), and learning there lost (53.8 against
//! 46.1), so smaller exchanges keep cached stores.
//!
//! The cached copies are `copy_block`'s: each block upwards up to the last page boundary at
//! least a page below its end, then the rest top down, so that no upward stream ends at the
//! block's upper edge, where the hardware prefetcher would run on into the next block of the
//! member's `dest`, which another member is writing (wherever this PE has that page mapped:
//! after any earlier collective over the whole of `dest`), and the lines would go back and
//! forth between the two cores. Measured in the collective sweep's order (the reductions
//! before it write the same `dest`), 6 alternating rounds, medians, us per call, upwards only
//! / `copy_block` / oshmem, with the vCPUs apart: 8 PEs at 256 KiB 45.8 / 38.2 / 37.1 (C
//! 42.7 / 38.0), at 1 MiB 128.3 / 107.7 / 111.4 (C 126.6 / 113.5); at 2 PEs 1 MiB 28.1 / 24.9
//! / 24.5; at 4 PEs (10 rounds) within the noise, 1 MiB 52.8 / 52.4 / 46.4 together.
//!
//! *The entry wait's price*, on a node with more PEs than CPUs: a member that enters while
//! another is not running (its core runs a PE that entered before it) waits for that one to
//! run and enter, and that one then waits for it to run again and send. OpenSHMEM lets a C
//! library write every `dest` at once (the program must make them ready before any PE calls),
//! which is what Open MPI's oshmem does; this one does not: a member's `dest` stays its own
//! until it calls (the guarantee that `Team`'s docs state and the tests
//! `dest_stays_until_its_pe_calls_again` and `dest_kept.c` hold every collective to), so a PE
//! may read its result and call again with no barrier. Measured on the project's 2-vCPU Intel VM, 4 PEs
//! (`coll_sweep --only alltoall`, each call after a barrier, 5 alternating runs, medians, us
//! per call), with every member taken as entered (a measurement only: wrong without that
//! barrier) / as it is / oshmem: 16 KiB per PE 4.3 / 5.5 / 5.5, 64 KiB 5.6 / 8.1 / 5.9, 256
//! KiB 14.4 / 17.2 / 14.3, 1 MiB 107 / 124 / 142. Two ways around it lost: the later of two
//! members copying both blocks, its own into the other's `dest` and the other's from that
//! one's symmetric source into its own (C's source), with the block claimed by a
//! compare-and-swap on the slot's epoch word (64 KiB 7.3 against 5.9; 256 KiB 17.0 against
//! 14.5; the claims move the slots' lines between the cores once more per block) or chosen
//! before its entry from the members that had entered (64 KiB 9.2 against 8.1; 256 KiB 22.0
//! against 18.1): the later member's longer turn on its core is what every other one waits
//! for. The plain cached copy instead of `copy_block` lost too (256 KiB 22.3 against 15.5, 1
//! MiB 168 against 125).
//!
//! Slot reuse is the mailbox's: a member finishes `e` only after every member sent its part
//! of `e`, which none does before it finished `e - 1`; so whoever raises a header for `e + 2`
//! knows its reader is done with `e`. A member writes another's `dest` only after that member
//! entered `e`, and it returns once every block of its own `dest` has arrived, so no sync is
//! needed at either end.
//!
//! Teams of up to 256 members take this path (each needs a slot of a cache line at least in the
//! area); larger ones sync and put as elsewhere. On 2 cores, 4 and 8 PEs (OSU timing, old and
//! new binaries alternating, medians of 3 runs under load from other jobs), 16 KiB to 4 MiB per
//! PE took 0.37-0.99 of the time of the sync, puts and barrier it replaces (0.45-0.72 at 16-64
//! KiB); at 2 PEs the two were within the noise.
//!
//! Part of the collectives layer; uses `coll::team`, `coll::mailbox`, `transport`, `mem`.

use super::mailbox::{self, Part, Tag};
use super::stores::Choice;
use super::team::Team;
use crate::mem::copy::{Stores, outgrows_caches};
use crate::transport::collective::wait_in_collective;
use crate::transport::progress::oversubscribed;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The smallest exchange (every member's source and `dest` on this node together, bytes) whose
/// stores are chosen by measurement, up to where it outgrows the caches; below, cached stores
/// (see the module docs).
const LEARN_NODE_MIN: usize = 8 << 20;
/// The smallest block (bytes) whose exchange learns its stores: each copy is timed, and two
/// clock reads (about 50 ns) cost little only beside a copy of some microseconds. Smaller
/// blocks (many members) keep the rule by size alone (streaming where the data outgrows the
/// caches).
const LEARN_BLOCK_MIN: usize = 64 << 10;

/// The time this PE's copies of one exchange took, where it learns which stores to use
/// (`None` where it does not: nothing is timed).
struct Clock(Option<Duration>);

impl Clock {
    /// Runs `f`, adding its time where the clock is on.
    fn time(&mut self, f: impl FnOnce()) {
        let Some(spent) = &mut self.0 else {
            return f();
        };
        let start = Instant::now();
        f();
        *spent += start.elapsed();
    }
}

/// A member's pointers for one exchange: its entry word, this PE's slot in its area and where
/// this PE's block goes in its `dest`.
struct Member {
    pe: usize,
    entry: *mut u8,
    slot: *mut u8,
    dest: *mut u8,
}

/// Sends block `j` of `source` (`block` bytes each) to block `my_pe` of `dest` (at heap or data
/// segment offset `dest`) on every member `j`, and receives block `j` of member `j`'s source in
/// block `j` of its own `dest`, as described in the module docs. Returns false, having done
/// nothing, unless every member's memory and team block are mapped here (the same answer on
/// every member). The caller checked that `dest` holds `n * block` bytes.
pub(crate) fn alltoall(
    team: &Team<'_>,
    dest: usize,
    source: Part<'_>,
    block: usize,
    what: &str,
) -> bool {
    let tp = team.tp();
    let (n, me) = (team.n_pes(), team.my_pe());
    debug_assert_eq!(source.len(), n * block);
    // Every member's memory and team block must be mapped (mappings are symmetric, so every
    // member decides alike), and every member needs a slot of its own (a cache line at least:
    // teams of up to 256); only then is a mail epoch taken.
    let direct = mailbox::a2a_stride(n) >= 64
        && (0..n).all(|j| {
            let p = tp.peer(team.world_pe(j));
            tp.coll_mapped(p, dest).is_some() && tp.coll_mapped(p, team.block(0)).is_some()
        });
    if !direct {
        return false;
    }
    // Where the members' sources and `dest`s together outgrow the caches, the copies stream
    // (non-temporal stores); from `LEARN_NODE_MIN` below that (blocks of `LEARN_BLOCK_MIN`
    // and more), as this process's timings of its own copies found quicker; below, cached (see
    // the module docs).
    let node = (2 * n * n).saturating_mul(block);
    let outgrows = outgrows_caches(node);
    let learn = node >= LEARN_NODE_MIN && block >= LEARN_BLOCK_MIN && !outgrows;
    let choice = learn.then(|| Choice::alltoall(n, n * block));
    let stores = choice
        .as_ref()
        .map_or(Stores::streaming_if(outgrows), Choice::stores);
    let copy = stores.block_copy();
    let mut clock = Clock(learn.then_some(Duration::ZERO));
    let (area, stride, epoch) = mailbox::a2a_round(team);
    let mut members = Vec::with_capacity(n - 1);
    for i in 1..n {
        let j = (me + i) % n;
        let p = tp.peer(team.world_pe(j));
        let at = |off: usize| {
            tp.coll_mapped(p, off)
                .unwrap_or_else(|| unreachable!("checked above: member {j} is mapped"))
        };
        members.push(Member {
            pe: j,
            entry: at(team.block(area + j * stride)),
            slot: at(team.block(area + me * stride)),
            dest: at(dest + me * block),
        });
    }
    // 1. Entry: this PE's `dest` may be written from here on.
    tp.local_word(team.block(area + me * stride))
        .store(epoch, Ordering::Release);
    // This PE's own block: first on an oversubscribed node, else while no member is ready
    // for a send (or after the sends).
    let mut own = Some(source.sub(me * block..(me + 1) * block));
    let copy_own = |own: &mut Option<Part<'_>>, clock: &mut Clock| {
        if let Some(mine) = own.take() {
            // SAFETY: the caller checked that `dest` holds `n` blocks, in this PE's mapped
            // memory; `source` is another buffer (a private slice, C's source, which may not
            // overlap `dest`, or a symmetric source apart from it).
            clock.time(|| unsafe { copy(tp.local(dest + me * block), mine.as_ptr(), block) });
        }
    };
    if oversubscribed() {
        copy_own(&mut own, &mut clock);
    }
    // 2. Sends, to whichever member has entered, in order from me + 1 on.
    let entered = |m: &Member| {
        // SAFETY: the epoch word of a slot in the member's mapped team block, accessed
        // atomically by everyone.
        unsafe { AtomicU64::from_ptr(m.entry.cast()) }.load(Ordering::Acquire) >= epoch
    };
    let mut pending = members.len();
    let mut done = vec![false; members.len()];
    while pending > 0 {
        let mut sent = false;
        for (m, d) in members.iter().zip(done.iter_mut()) {
            if *d || !entered(m) {
                continue;
            }
            let part = source.sub(m.pe * block..(m.pe + 1) * block);
            // SAFETY: the member's `dest` is as long as this PE's (symmetric), mapped here, and
            // it has entered this exchange (acquired above), so nothing else reads or writes
            // the block meanwhile.
            clock.time(|| unsafe { copy(m.dest, part.as_ptr(), block) });
            // SAFETY: its slot for this PE is free for `epoch` (module docs).
            unsafe { mailbox::post_header(m.slot, epoch, Tag::AllToAll, block) };
            *d = true;
            pending -= 1;
            sent = true;
        }
        if !sent && own.is_some() {
            copy_own(&mut own, &mut clock);
        } else if !sent {
            wait_in_collective(tp, Some(&team.group), || {
                // Also looks at what has arrived: a member that took another path (the lengths
                // differ) panics here instead of waiting for an entry that never comes.
                for m in &members {
                    mailbox::arrived(
                        team,
                        area + m.pe * stride,
                        epoch,
                        (Tag::AllToAll, block),
                        m.pe,
                        what,
                    );
                }
                members.iter().zip(&done).any(|(m, &d)| !d && entered(m))
            });
        }
    }
    copy_own(&mut own, &mut clock);
    // 3. Arrivals, from me - 1 down.
    for m in members.iter().rev() {
        let slot = area + m.pe * stride;
        let expect = (Tag::AllToAll, block);
        wait_in_collective(tp, Some(&team.group), || {
            mailbox::arrived(team, slot, epoch, expect, m.pe, what)
        });
    }
    if let (Some(choice), Clock(Some(spent))) = (choice, clock) {
        choice.finish_after(spent);
    }
    true
}
