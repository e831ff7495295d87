//! Making teams: the node's team (`SHMEM_TEAM_SHARED`) and splits of a team
//! (`shmem_team_split_strided`, `shmem_team_split_2d`).
//!
//! A split picks the new team's block with a bitwise-or reduction of every parent member's
//! "blocks in use" mask, so all members agree on a block that none of them uses.
//!
//! Part of the collectives layer; uses `coll::team`, `coll::mailbox` (the reduction),
//! `transport`, `mem`.

use super::mailbox::allreduce_u64;
use super::team::{Team, TeamConfig};
use crate::error::{Error, Result};
use crate::mem::segment::{BLOCK_CLEARED, TEAM_SLOTS, block_offset};
use crate::transport::Transport;
use crate::transport::collective::{Coll, Group};

impl<'w> Team<'w> {
    /// The team of the PEs whose heap is mapped here (`World::team_shared`, which says what it
    /// asks of them); the caller ties `'w` to the `World`.
    pub(crate) fn shared(tp: &'static Transport) -> Team<'w> {
        let local: Vec<usize> = (0..tp.n_pes)
            .filter(|&pe| tp.is_direct(tp.peer(pe)))
            .collect();
        let (start, stride) = match local.as_slice() {
            [first, second, ..] => (*first, second - first),
            _ => (tp.my_pe, 1),
        };
        for (i, &pe) in local.iter().enumerate() {
            assert_eq!(
                pe,
                start + i * stride,
                "shmem: the PEs of this node {local:?} are not evenly spaced"
            );
        }
        if local.len() == tp.n_pes {
            return Team::world(tp);
        }
        // Teams of different nodes are disjoint, so they can share one block number.
        let Some(slot) = Team::world(tp).agree_on_slot_for(|_| true) else {
            panic!(
                "shmem: team_shared: no free team block: all {TEAM_SLOTS} are in use; drop teams \
                 that are no longer needed"
            )
        };
        let group = Group::new(
            tp,
            (start, stride, local.len()),
            (tp.my_pe - start) / stride,
            slot,
        );
        Team::new(group, TeamConfig::default())
    }

    /// `shmem_team_split_strided`: the members of this team numbered `start, start + stride,
    /// ...` (`size` of them, team numbering) form a new team. Collective over this team: every
    /// member calls it with the same arguments; members of the new team get `Ok(Some(team))`,
    /// the others `Ok(None)` (C's `SHMEM_TEAM_INVALID`). A `size` of 0 makes no team: `Ok(None)`
    /// everywhere, without communication.
    ///
    /// # Errors
    /// [`Error::Team`], on every member alike, when the PEs fall outside this
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
        let _in = self.enter(Coll::Team);
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
        if last.is_none_or(|l| l >= self.n_pes()) {
            return Err(Error::Team {
                op: op(),
                reason: format!(
                    "selects PEs outside the parent team of {} PEs (team numbering 0..{})",
                    self.n_pes(),
                    self.n_pes()
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
        let me = self.my_pe();
        let member =
            me >= start && (me - start).is_multiple_of(stride) && (me - start) / stride < size;
        if !member {
            return Ok(None);
        }
        let (first, step) = self.group.start_stride();
        let group = Group::new(
            self.tp(),
            (first + start * step, step * stride, size),
            (me - start) / stride,
            slot,
        );
        Ok(Some(Team::new(group, config)))
    }

    /// `shmem_team_split_2d`: arranges this team's PEs in rows of `xrange` (the last row may be
    /// shorter; an `xrange` above the team's size is one row) and returns `(row team, column
    /// team)` for this PE. Collective over this team.
    ///
    /// # Errors
    /// [`Error::Team`], on every member alike, when `xrange` is 0 or the
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
        let _in = self.enter(Coll::Team);
        if xrange == 0 {
            return Err(Error::Team {
                op: format!("split_2d(xrange {xrange})"),
                reason: "xrange must be positive".into(),
            });
        }
        let xrange = xrange.min(self.n_pes());
        let rows = self.n_pes().div_ceil(xrange);
        let (my_row, my_col) = (self.my_pe() / xrange, self.my_pe() % xrange);
        // Every member takes part in every split (collective), keeping the team it belongs to.
        // A failed split fails on every member alike, so all return together.
        let mut row_team = None;
        for r in 0..rows {
            let len = xrange.min(self.n_pes() - r * xrange);
            let t = self.split_strided(r * xrange, 1, len, xconfig)?;
            if r == my_row {
                row_team = t;
            }
        }
        let mut col_team = None;
        for c in 0..xrange {
            let len = (self.n_pes() - c).div_ceil(xrange);
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
        let tp = self.tp();
        let mine = if selected(self.my_pe()) {
            tp.slots.mask()
        } else {
            0
        };
        let used = allreduce_u64(self, mine, |a, b| a | b);
        let slot = (0..TEAM_SLOTS).find(|s| used & (1 << s) == 0)?;
        if selected(self.my_pe()) {
            // A block that served another team before starts from zero again (its flags and
            // mailbox headers; its staging area holds only data, written before it is read). A
            // block never used is still all zeros: clearing it would commit its pages for
            // nothing (about 290 KiB per PE for the node team every start made).
            if tp.slots.take(slot) {
                // SAFETY: the block lies in this PE's reserved sync area; no member of the new
                // team writes it before the sync below.
                unsafe { std::ptr::write_bytes(tp.local(block_offset(slot)), 0, BLOCK_CLEARED) };
            }
        }
        // Nobody signals into the new block before every member has reset it.
        self.sync();
        Some(slot)
    }
}
