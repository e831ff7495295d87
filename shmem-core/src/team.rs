//! Teams: ordered sets of PEs (`shmem_team_*`), each with its own synchronization block.
//!
//! A team is `size` world PEs `start, start + stride, ...`. Every team owns one block of a
//! fixed pool in the reserved start of the symmetric heap (flags and scratch for its
//! collectives). A split picks the block with a bitwise-or reduction of every parent member's
//! "blocks in use" mask, so all members agree on a block that none of them uses.

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::world::World;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// Number of team blocks (the world team uses block 0).
pub(crate) const TEAM_SLOTS: usize = 64;
/// Rounds of the dissemination and tree algorithms (teams of up to 2^32 PEs).
pub(crate) const ROUNDS: usize = 32;
/// Bytes of scratch per tree round (scans and the mailbox slots move data in chunks of this
/// size).
pub(crate) const CHUNK: usize = 1024;
/// Layout of one team block (byte offsets within the block, each region 64-byte aligned).
pub(crate) const BARRIER_FLAGS: usize = 0;
pub(crate) const DATA_FLAGS: usize = BARRIER_FLAGS + ROUNDS * 8;
pub(crate) const DOWN_FLAG: usize = DATA_FLAGS + ROUNDS * 8;
/// The last eager-broadcast epoch this PE has taken out of its ring (parents read it before
/// reusing a ring slot).
pub(crate) const BCAST_DONE: usize = DOWN_FLAG + 64;
pub(crate) const SCRATCH: usize = BCAST_DONE + 64;
/// A mailbox slot: a 16-byte header (epoch, tag and length) and up to [`CHUNK`] payload bytes,
/// the header sharing its cache line with the first 48 payload bytes.
pub(crate) const SLOT: usize = (16 + CHUNK).next_multiple_of(64);
/// Mailbox slots per parity for the recursive-doubling and Bruck exchanges: one per round, plus
/// the fold and unfold slots of non-power-of-two teams.
pub(crate) const MAIL_ROUNDS: usize = ROUNDS + 2;
/// Two parities of [`MAIL_ROUNDS`] slots.
pub(crate) const MAIL: usize = SCRATCH + ROUNDS * CHUNK;
/// Bytes per parity of the all-to-all mailbox (one slot per sender).
pub(crate) const A2A_BYTES: usize = 16 << 10;
pub(crate) const A2A: usize = MAIL + 2 * MAIL_ROUNDS * SLOT;
/// Slots of the eager-broadcast ring.
pub(crate) const RING: usize = 8;
pub(crate) const BCAST: usize = A2A + 2 * A2A_BYTES;
pub(crate) const BLOCK: usize = BCAST + RING * SLOT;
/// Bytes of the whole pool (placed after the runtime's own sync area).
pub(crate) const POOL_BYTES: usize = TEAM_SLOTS * BLOCK;
/// The team segment: the sync area ([`SYNC_BYTES`](crate::sync::SYNC_BYTES)), then the team
/// blocks, at offsets `0..SEGMENT` of the runtime's offset space (the heap's first `SEGMENT`
/// bytes are left unused). It is a `memfd` of its own that every PE of a node maps, whatever
/// `UCX_TLS` says, so that on one node collectives synchronize and pass their small messages
/// through shared memory (as Open MPI's do) even where the heap is reached through UCX; PEs of
/// other nodes reach it through UCX, where it is registered too.
pub(crate) const SEGMENT: usize = crate::sync::SYNC_BYTES + POOL_BYTES;
const _: () =
    assert!(SCRATCH.is_multiple_of(64) && MAIL.is_multiple_of(64) && BLOCK.is_multiple_of(64));

/// Per-process record of which team blocks are in use, and the epoch counters of each block
/// (they live with the block, not with a `Team` value, so two handles of one team agree).
pub(crate) struct Slots {
    used: AtomicU64,
    pub(crate) barrier_epoch: [AtomicU64; TEAM_SLOTS],
    /// Tree collectives that sync first (large broadcasts, scans).
    pub(crate) coll_epoch: [AtomicU64; TEAM_SLOTS],
    /// Mailbox exchanges in which every member waits for every other (reductions, fcollect,
    /// alltoall): their slots alternate by parity of this counter.
    pub(crate) mail_epoch: [AtomicU64; TEAM_SLOTS],
    /// Eager broadcasts (ring slots, flow-controlled by [`BCAST_DONE`]).
    pub(crate) bcast_epoch: [AtomicU64; TEAM_SLOTS],
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            // Block 0 belongs to the world team.
            used: AtomicU64::new(1),
            barrier_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            coll_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            mail_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
            bcast_epoch: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Slots {
    pub(crate) fn mask(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
    fn take(&self, slot: usize) {
        self.used.fetch_or(1 << slot, Ordering::Relaxed);
        self.barrier_epoch[slot].store(0, Ordering::Relaxed);
        self.coll_epoch[slot].store(0, Ordering::Relaxed);
        self.mail_epoch[slot].store(0, Ordering::Relaxed);
        self.bcast_epoch[slot].store(0, Ordering::Relaxed);
    }
    fn release(&self, slot: usize) {
        self.used.fetch_and(!(1 << slot), Ordering::Relaxed);
    }
}

/// Team configuration (`shmem_team_config_t`). Contexts are not tied to teams in this runtime,
/// so the only setting is the number of contexts a program intends to create on the team,
/// recorded for [`Team::config`].
#[doc(alias = "shmem_team_config_t")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TeamConfig {
    /// `num_contexts`.
    pub num_contexts: usize,
}

/// An ordered set of PEs with its own collectives (`shmem_team_t`).
///
/// PE numbers inside a team run `0..team.n_pes()`; [`Team::world_pe`] and
/// [`Team::translate_pe`] convert. Dropping a team other than the world team destroys it
/// (`shmem_team_destroy`): every member must drop it.
///
/// ```
/// let world = shmem_core::init()?;
/// let all = world.team_world();
/// assert_eq!(all.n_pes(), world.n_pes());
/// // Even-numbered world PEs.
/// let evens = all.split_strided(0, 2, world.n_pes().div_ceil(2), Default::default())?;
/// if world.my_pe() % 2 == 0 {
///     let evens = evens.expect("member");
///     assert_eq!(evens.my_pe(), world.my_pe() / 2);
///     evens.barrier();
/// } else {
///     assert!(evens.is_none());
/// }
/// # Ok::<(), shmem_core::Error>(())
/// ```
#[doc(alias = "shmem_team_t")]
pub struct Team<'w> {
    pub(crate) rt: &'static Runtime,
    start: usize,
    stride: usize,
    size: usize,
    my_index: usize,
    slot: usize,
    config: TeamConfig,
    /// What this handle knows of each member's [`BCAST_DONE`] word, so that an eager broadcast
    /// reads a child's word only once per few ring turns (a stale value only costs a re-read).
    pub(crate) bcast_known: RefCell<Vec<u64>>,
    /// Tied to the thread that calls its collectives.
    _world: PhantomData<(&'w World, *const ())>,
}

impl fmt::Debug for Team<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Team")
            .field("start", &self.start)
            .field("stride", &self.stride)
            .field("size", &self.size)
            .field("my_pe", &self.my_index)
            .finish()
    }
}

impl World {
    /// The team of all PEs (`SHMEM_TEAM_WORLD`).
    #[doc(alias = "SHMEM_TEAM_WORLD")]
    pub fn team_world(&self) -> Team<'_> {
        Team::world(self.rt)
    }

    /// The PEs that share this node's memory with this PE (`SHMEM_TEAM_SHARED`): those whose
    /// heap is mapped here. Collective over the world team (every PE calls it). They must form an
    /// arithmetic progression of world PEs, as they do when `shmemrun` starts the job.
    ///
    /// # Panics
    /// If the node's PEs are not evenly spaced in the world numbering.
    #[doc(alias = "SHMEM_TEAM_SHARED")]
    pub fn team_shared(&self) -> Team<'_> {
        let rt = self.rt;
        let local: Vec<usize> = (0..rt.n_pes)
            .filter(|&pe| rt.is_direct(rt.peer(pe)))
            .collect();
        let (start, stride) = match local.as_slice() {
            [first, second, ..] => (*first, second - first),
            _ => (rt.my_pe, 1),
        };
        for (i, &pe) in local.iter().enumerate() {
            assert_eq!(
                pe,
                start + i * stride,
                "shmem: the PEs of this node {local:?} are not evenly spaced"
            );
        }
        if local.len() == rt.n_pes {
            return self.team_world();
        }
        // Teams of different nodes are disjoint, so they can share one block number.
        let Some(slot) = self.team_world().agree_on_slot_for(|_| true) else {
            panic!(
                "shmem: team_shared: no free team block: all {TEAM_SLOTS} are in use; drop teams \
                 that are no longer needed"
            )
        };
        Team::new(
            rt,
            start,
            stride,
            local.len(),
            (rt.my_pe - start) / stride,
            slot,
            TeamConfig::default(),
        )
    }
}

impl<'w> Team<'w> {
    /// The world team (block 0).
    pub(crate) fn world(rt: &'static Runtime) -> Team<'w> {
        Team::new(rt, 0, 1, rt.n_pes, rt.my_pe, 0, TeamConfig::default())
    }

    fn new(
        rt: &'static Runtime,
        start: usize,
        stride: usize,
        size: usize,
        my_index: usize,
        slot: usize,
        config: TeamConfig,
    ) -> Team<'w> {
        Team {
            rt,
            start,
            stride,
            size,
            my_index,
            slot,
            config,
            bcast_known: RefCell::new(Vec::new()),
            _world: PhantomData,
        }
    }

    /// This PE's number in the team (`shmem_team_my_pe`).
    #[doc(alias = "shmem_team_my_pe")]
    pub fn my_pe(&self) -> usize {
        self.my_index
    }

    /// Number of PEs in the team (`shmem_team_n_pes`).
    #[doc(alias = "shmem_team_n_pes")]
    pub fn n_pes(&self) -> usize {
        self.size
    }

    /// The configuration the team was made with (`shmem_team_get_config`).
    #[doc(alias = "shmem_team_get_config")]
    pub fn config(&self) -> TeamConfig {
        self.config
    }

    /// The world PE number of team PE `pe`.
    ///
    /// # Panics
    /// If `pe` is not below [`n_pes`](Self::n_pes); the message names both.
    #[track_caller]
    pub fn world_pe(&self, pe: usize) -> usize {
        if pe >= self.size {
            panic!(
                "shmem: team PE {pe} is out of range: the team has {} PEs",
                self.size
            );
        }
        self.start + pe * self.stride
    }

    /// `shmem_team_translate_pe`: the number in `dest` of this team's PE `pe`, or `None` if
    /// that PE is not a member of `dest` (or `pe` is out of range).
    #[doc(alias = "shmem_team_translate_pe")]
    pub fn translate_pe(&self, pe: usize, dest: &Team<'_>) -> Option<usize> {
        if pe >= self.size {
            return None;
        }
        dest.index_of(self.start + pe * self.stride)
    }

    /// The team number of world PE `world_pe`, if it is a member.
    pub(crate) fn index_of(&self, world_pe: usize) -> Option<usize> {
        let d = world_pe.checked_sub(self.start)?;
        (d % self.stride == 0 && d / self.stride < self.size).then_some(d / self.stride)
    }

    pub(crate) fn barrier_epoch(&self) -> &AtomicU64 {
        &self.rt.team_slots.barrier_epoch[self.slot]
    }

    pub(crate) fn coll_epoch(&self) -> &AtomicU64 {
        &self.rt.team_slots.coll_epoch[self.slot]
    }

    pub(crate) fn mail_epoch(&self) -> &AtomicU64 {
        &self.rt.team_slots.mail_epoch[self.slot]
    }

    pub(crate) fn bcast_epoch(&self) -> &AtomicU64 {
        &self.rt.team_slots.bcast_epoch[self.slot]
    }

    /// Heap offset of byte `at` of this team's block.
    #[inline]
    pub(crate) fn block(&self, at: usize) -> usize {
        block_offset(self.slot) + at
    }

    /// `shmem_team_split_strided`: the members of this team numbered `start, start + stride,
    /// ...` (`size` of them, team numbering) form a new team. Collective over this team: every
    /// member calls it with the same arguments; members of the new team get `Ok(Some(team))`,
    /// the others `Ok(None)` (C's `SHMEM_TEAM_INVALID`). A `size` of 0 makes no team: `Ok(None)`
    /// everywhere, without communication.
    ///
    /// # Errors
    /// [`Error::Team`](crate::Error::Team), on every member alike, when the PEs fall outside this
    /// team, the stride is 0 with `size > 1`, or every team block is in use (the message says
    /// how many exist; dropping teams frees them).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let all = world.team_world();
    /// let me_alone = all.split_strided(all.my_pe(), 1, 1, TeamConfig::default())?;
    /// assert_eq!(me_alone.map(|t| t.n_pes()), Some(1));
    /// assert!(all.split_strided(0, 1, 0, TeamConfig::default())?.is_none());
    /// assert!(all.split_strided(0, 1, all.n_pes() + 1, TeamConfig::default()).is_err());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_split_strided")]
    #[track_caller]
    pub fn split_strided(
        &self,
        start: usize,
        stride: usize,
        size: usize,
        config: TeamConfig,
    ) -> Result<Option<Team<'w>>> {
        let op = || format!("split_strided(start {start}, stride {stride}, size {size})");
        if size == 0 {
            return Ok(None);
        }
        let last = (size - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(start));
        if stride == 0 && size > 1 {
            return Err(Error::Team {
                op: op(),
                reason: "the stride is 0 but more than one PE is asked for".into(),
            });
        }
        if last.is_none_or(|l| l >= self.size) {
            return Err(Error::Team {
                op: op(),
                reason: format!(
                    "selects PEs outside the parent team of {} PEs (team numbering 0..{})",
                    self.size, self.size
                ),
            });
        }
        let stride = stride.max(1);
        let slot = self
            .agree_on_slot_for(|idx| {
                idx >= start
                    && (idx - start).is_multiple_of(stride)
                    && (idx - start) / stride < size
            })
            .ok_or_else(|| Error::Team {
                op: op(),
                reason: format!(
                    "no free team block: all {TEAM_SLOTS} are in use; drop teams that are no \
                     longer needed"
                ),
            })?;
        let me = self.my_index;
        let member =
            me >= start && (me - start).is_multiple_of(stride) && (me - start) / stride < size;
        if !member {
            return Ok(None);
        }
        Ok(Some(Team::new(
            self.rt,
            self.start + start * self.stride,
            self.stride * stride,
            size,
            (me - start) / stride,
            slot,
            config,
        )))
    }

    /// `shmem_team_split_2d`: arranges this team's PEs in rows of `xrange` (the last row may be
    /// shorter; an `xrange` above the team's size is one row) and returns `(row team, column
    /// team)` for this PE. Collective over this team.
    ///
    /// # Errors
    /// [`Error::Team`](crate::Error::Team), on every member alike, when `xrange` is 0 or the
    /// team blocks run out (the teams made before are released).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let (row, col) = world.team_world().split_2d(1, TeamConfig::default(), TeamConfig::default())?;
    /// assert_eq!((row.n_pes(), col.n_pes()), (1, world.n_pes()));
    /// assert!(world.team_world().split_2d(0, TeamConfig::default(), TeamConfig::default()).is_err());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_split_2d")]
    #[track_caller]
    pub fn split_2d(
        &self,
        xrange: usize,
        xconfig: TeamConfig,
        yconfig: TeamConfig,
    ) -> Result<(Team<'w>, Team<'w>)> {
        if xrange == 0 {
            return Err(Error::Team {
                op: format!("split_2d(xrange {xrange})"),
                reason: "xrange must be positive".into(),
            });
        }
        let xrange = xrange.min(self.size);
        let rows = self.size.div_ceil(xrange);
        let (my_row, my_col) = (self.my_index / xrange, self.my_index % xrange);
        // Every member takes part in every split (collective), keeping the team it belongs to.
        // A failed split fails on every member alike, so all return together.
        let mut row_team = None;
        for r in 0..rows {
            let len = xrange.min(self.size - r * xrange);
            let t = self.split_strided(r * xrange, 1, len, xconfig)?;
            if r == my_row {
                row_team = t;
            }
        }
        let mut col_team = None;
        for c in 0..xrange {
            let len = (self.size - c).div_ceil(xrange);
            let t = self.split_strided(c, xrange, len, yconfig)?;
            if c == my_col {
                col_team = t;
            }
        }
        match (row_team, col_team) {
            (Some(r), Some(c)) => Ok((r, c)),
            _ => unreachable!("every PE belongs to one row and one column"),
        }
    }

    /// Agrees with the other members on a free block for a team of the members selected by
    /// `selected` (team numbering); they mark it used.
    /// `None` (on every member alike) when all blocks are in use.
    fn agree_on_slot_for(&self, selected: impl Fn(usize) -> bool) -> Option<usize> {
        let mine = if selected(self.my_index) {
            self.rt.team_slots.mask()
        } else {
            0
        };
        let used = crate::collectives::allreduce_u64(self, mine, |a, b| a | b);
        let slot = (0..TEAM_SLOTS).find(|s| used & (1 << s) == 0)?;
        if selected(self.my_index) {
            self.rt.team_slots.take(slot);
            // A block may have served another team before: its flags and mailbox headers start
            // from zero again.
            // SAFETY: the block lies in this PE's reserved sync area; no member of the new team
            // writes it before the sync below.
            unsafe { std::ptr::write_bytes(self.rt.local(block_offset(slot)), 0, BLOCK) };
        }
        // Nobody signals into the new block before every member has reset it.
        crate::collectives::team_sync(self);
        Some(slot)
    }

    /// `shmem_team_ptr`: team PE `pe`'s copy of `obj` as a local view when it is mapped into this
    /// process (same node), `None` otherwise.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let a = world.alloc::<u32>(4);
    /// // This PE's own copy is always mapped.
    /// assert_eq!(team.ptr(&a, team.my_pe()).map(|v| v.len()), Some(4));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_ptr")]
    #[track_caller]
    pub fn ptr<'a, E: crate::Element, A: crate::query::PeerAccess<E> + ?Sized>(
        &self,
        obj: &'a A,
        pe: usize,
    ) -> Option<crate::query::PeerView<'a, E>> {
        obj.peer_slice(self.world_pe(pe))
    }

    /// `shmem_team_sync`: waits until every member has arrived (no completion of puts).
    #[doc(alias = "shmem_team_sync")]
    pub fn sync(&self) {
        crate::collectives::team_sync(self);
    }

    /// `shmem_barrier` on the team: completes this PE's puts (quiet), then syncs.
    #[doc(alias = "shmem_barrier")]
    pub fn barrier(&self) {
        self.rt.quiet();
        crate::collectives::team_sync(self);
    }
}

impl Drop for Team<'_> {
    fn drop(&mut self) {
        if self.slot != 0 && !std::thread::panicking() {
            // Nobody may reuse the block while a member still works in it.
            crate::collectives::team_sync(self);
            self.rt.team_slots.release(self.slot);
        }
    }
}

/// The next value of an epoch counter (every member calls the same collectives in the same
/// order, so the counters agree).
pub(crate) fn next_epoch(c: &AtomicU64) -> u64 {
    c.fetch_add(1, Ordering::Relaxed) + 1
}

/// Offset of team block `slot` (in the team segment).
pub(crate) fn block_offset(slot: usize) -> usize {
    crate::sync::SYNC_BYTES + slot * BLOCK
}

/// Local flag word of this team's block.
pub(crate) fn flag<'a>(team: &Team<'_>, rt: &'a Runtime, at: usize) -> &'a AtomicU64 {
    // SAFETY: team blocks lie in the team segment, mapped for the process's life, 8-byte
    // aligned; peers only touch flag words atomically.
    unsafe { AtomicU64::from_ptr(rt.local(team.block(at)).cast()) }
}
