//! Teams: ordered sets of PEs (`shmem_team_*`), each with its own synchronization block.
//!
//! A team is `size` world PEs `start, start + stride, ...` (a `transport::collective::Group`)
//! and owns one block of the team segment (flags and scratch for its collectives). Splitting
//! teams is in `split`; their collectives in `mailbox`, `collectives` and `reduce`.
//!
//! Part of the collectives layer, its lowest part; uses `ops` (`shmem_team_ptr`), `object`,
//! `transport`, `mem`.

use crate::element::Element;
use crate::mem::segment::ROUNDS;
use crate::ops::query::{PeerAccess, PeerView};
use crate::transport::Transport;
use crate::transport::collective::{Coll, Entered, Group};
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU64;

/// Team configuration (`shmem_team_config_t`). Contexts are not tied to teams in this runtime,
/// so the only setting is the number of contexts a program intends to create on the team,
/// recorded for [`Team::config`].
///
/// # Examples
///
/// ```
/// use shmem_core::prelude::*;
/// let world = shmem_core::init()?;
/// let config = TeamConfig { num_contexts: 2 };
/// let team = world.team_world().split_strided(0, 1, world.n_pes(), config)?;
/// let team = team.expect("every PE is a member");
/// assert_eq!(team.config(), config);
/// # Ok::<(), shmem_core::Error>(())
/// ```
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
/// A collective writes a member's `dest` only once that member has called it: after a
/// collective returns, a PE may read and write its `dest` until it calls the next one, and
/// collectives may follow each other with no barrier between them (more than OpenSHMEM
/// promises: it asks the program to make every `dest` ready before any PE calls).
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
    /// The members and the team block, as the transport's collectives see them.
    pub(crate) group: Group,
    config: TeamConfig,
    /// What this handle knows of each member's `BCAST_DONE` word, so that an eager broadcast
    /// reads a child's word only once per few ring turns (a stale value only costs a re-read).
    pub(crate) bcast_known: RefCell<Vec<u64>>,
    /// Borrows the `World` for `'w`; tied to the thread that calls its collectives.
    _world: PhantomData<(&'w (), *const ())>,
}

impl fmt::Debug for Team<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, stride) = self.group.start_stride();
        f.debug_struct("Team")
            .field("start", &start)
            .field("stride", &stride)
            .field("size", &self.n_pes())
            .field("my_pe", &self.my_pe())
            .finish()
    }
}

impl<'w> Team<'w> {
    /// The world team (block 0); the caller ties `'w` to the `World`.
    pub(crate) fn world(tp: &'static Transport) -> Team<'w> {
        Team::new(Group::world(tp), TeamConfig::default())
    }

    /// The team of `group`, made with `config`.
    pub(crate) fn new(group: Group, config: TeamConfig) -> Team<'w> {
        Team {
            group,
            config,
            bcast_known: RefCell::new(Vec::new()),
            _world: PhantomData,
        }
    }

    /// The transport the team's members are reached through.
    #[inline]
    pub(crate) fn tp(&self) -> &'static Transport {
        self.group.tp
    }

    /// This PE's number in the team (`shmem_team_my_pe`).
    ///
    /// # Examples
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// // The odd world PEs: world PE 2k + 1 is their PE k.
    /// let odds = world.team_world().split_strided(1, 2, world.n_pes() / 2, Default::default())?;
    /// if let Some(odds) = odds {
    ///     assert_eq!(odds.my_pe(), world.my_pe() / 2);
    /// }
    /// assert_eq!(world.team_world().my_pe(), world.my_pe());
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_my_pe")]
    pub fn my_pe(&self) -> usize {
        self.group.my_pe()
    }

    /// Number of PEs in the team (`shmem_team_n_pes`).
    ///
    /// # Examples
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// assert_eq!(world.team_world().n_pes(), world.n_pes());
    /// // The PEs of this node: at least this one.
    /// assert!((1..=world.n_pes()).contains(&world.team_shared().n_pes()));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_n_pes")]
    pub fn n_pes(&self) -> usize {
        self.group.n_pes()
    }

    /// The configuration the team was made with (`shmem_team_get_config`).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// assert_eq!(world.team_world().config(), TeamConfig::default());
    /// let config = TeamConfig { num_contexts: 4 };
    /// let copy = world.team_world().split_strided(0, 1, world.n_pes(), config)?;
    /// assert_eq!(copy.map(|t| t.config()), Some(config));
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_get_config")]
    pub fn config(&self) -> TeamConfig {
        self.config
    }

    /// The world PE number of team PE `pe`.
    ///
    /// # Panics
    /// If `pe` is not below [`n_pes`](Self::n_pes); the message names both.
    ///
    /// # Examples
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// let n = world.n_pes();
    /// // The upper half of the world PEs.
    /// let upper = world.team_world().split_strided(n / 2, 1, n - n / 2, Default::default())?;
    /// if let Some(upper) = upper {
    ///     assert_eq!(upper.world_pe(0), n / 2);
    ///     assert_eq!(upper.world_pe(upper.my_pe()), world.my_pe());
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn world_pe(&self, pe: usize) -> usize {
        self.group.world_pe(pe)
    }

    /// `shmem_team_translate_pe`: the number in `dest` of this team's PE `pe`, or `None` if
    /// that PE is not a member of `dest` (or `pe` is out of range).
    ///
    /// # Examples
    ///
    /// ```
    /// let world = shmem_core::init()?;
    /// let all = world.team_world();
    /// let n = world.n_pes();
    /// let evens = all.split_strided(0, 2, n.div_ceil(2), Default::default())?;
    /// if let Some(evens) = evens {
    ///     // Team PE 1 of the evens is world PE 2, when there is one.
    ///     assert_eq!(evens.translate_pe(1, &all), (n > 2).then_some(2));
    ///     assert_eq!(all.translate_pe(world.my_pe(), &evens), Some(evens.my_pe()));
    /// }
    /// assert_eq!(all.translate_pe(n, &all), None); // out of range
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_translate_pe")]
    pub fn translate_pe(&self, pe: usize, dest: &Team<'_>) -> Option<usize> {
        if pe >= self.n_pes() {
            return None;
        }
        dest.group.index_of(self.group.world_pe(pe))
    }

    /// Records that this PE enters collective `kind` of the team ([`Group::enter`]).
    pub(crate) fn enter(&self, kind: Coll) -> Entered {
        self.group.enter(kind)
    }

    /// The epochs of the team's tree collectives that sync first.
    pub(crate) fn coll_epoch(&self) -> &'static AtomicU64 {
        self.group.coll_epoch()
    }

    /// The epochs of the team's all-waiting mailbox exchanges.
    pub(crate) fn mail_epoch(&self) -> &'static AtomicU64 {
        self.group.mail_epoch()
    }

    /// The epochs of the team's eager broadcasts.
    pub(crate) fn bcast_epoch(&self) -> &'static AtomicU64 {
        self.group.bcast_epoch()
    }

    /// Offset of byte `at` of this team's block.
    #[inline]
    pub(crate) fn block(&self, at: usize) -> usize {
        self.group.block(at)
    }

    /// This PE's flag word at byte `at` of the team's block.
    pub(crate) fn flag(&self, at: usize) -> &'static AtomicU64 {
        self.group.flag(at)
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
    pub fn ptr<'a, E: Element, A: PeerAccess<E> + ?Sized>(
        &self,
        obj: &'a A,
        pe: usize,
    ) -> Option<PeerView<'a, E>> {
        obj.peer_slice(self.world_pe(pe))
    }

    /// `shmem_team_sync`: waits until every member has arrived (no completion of puts).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// #[symmetric]
    /// static FLAG: [u64; 1] = [0; 1];
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// // A fetching atomic is complete when it returns; a sync completes nothing.
    /// assert_eq!(FLAG.at((team.my_pe() + 1) % team.n_pes(), 0).swap(1), 0);
    /// team.sync(); // every member has arrived, so every swap is done
    /// assert_eq!(FLAG.at(world.my_pe(), 0).fetch(), 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_team_sync")]
    pub fn sync(&self) {
        let _in = self.enter(Coll::Sync);
        self.group.sync();
    }

    /// `shmem_barrier` on the team: completes this PE's puts (quiet), then syncs.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let a = world.alloc::<u32>(1);
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// a.p(team.world_pe((me + 1) % n), 0, me as u32 + 1);
    /// team.barrier(); // completes the put, then syncs
    /// assert_eq!(a.local_get(0), ((me + n - 1) % n) as u32 + 1);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_barrier")]
    pub fn barrier(&self) {
        let _in = self.enter(Coll::Sync);
        self.group.tp.quiet();
        self.group.sync();
    }
}

impl Drop for Team<'_> {
    fn drop(&mut self) {
        let slot = self.group.slot();
        if slot != 0 && !std::thread::panicking() {
            // Nobody may reuse the block while a member still works in it.
            let _in = self.enter(Coll::Team);
            self.group.sync();
            self.group.tp.slots.release(slot);
        }
    }
}

/// Position in a binomial tree rooted at team PE `root`.
pub(crate) struct Tree {
    pub(crate) rel: usize,
    n: usize,
    pub(crate) root: usize,
}

impl Tree {
    pub(crate) fn new(team: &Team<'_>, root: usize) -> Tree {
        let n = team.n_pes();
        Tree {
            rel: (team.my_pe() + n - root) % n,
            n,
            root,
        }
    }
    /// Team PE of relative rank `r`.
    pub(crate) fn pe(&self, r: usize) -> usize {
        (r + self.root) % self.n
    }
    /// `(parent, round)`: the parent and the bit that links us, for every rank but the root.
    pub(crate) fn parent(&self) -> Option<(usize, usize)> {
        (self.rel != 0).then(|| {
            let bit = self.rel.trailing_zeros() as usize;
            (self.pe(self.rel - (1 << bit)), bit)
        })
    }
    /// `(child, round)` pairs, lowest round first.
    pub(crate) fn children(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let limit = if self.rel == 0 {
            usize::BITS as usize
        } else {
            self.rel.trailing_zeros() as usize
        };
        (0..limit.min(ROUNDS))
            .map(|b| (b, self.rel + (1 << b)))
            .take_while(|&(_, c)| c < self.n)
            .map(|(b, c)| (self.pe(c), b))
    }
}
