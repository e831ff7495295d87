//! Collectives on teams: sync, broadcast, reductions, scans, fcollect, collect, alltoall(s).
//!
//! Algorithms scale with the team size (`ceil(log2 n)` rounds where the data allows):
//! - small messages go through mailbox slots in the team block ([`mailbox`]): binomial-tree
//!   broadcast (up to 1 KiB), recursive-doubling reductions (any size, in 1 KiB chunks; the same
//!   combining order everywhere, so results are bit-identical on every PE), Bruck fcollect, a
//!   direct all-to-all (and strided: packed, exchanged, stored at the stride), and on teams of
//!   up to 8 a collect in one exchange of counts with data of up to 256 bytes. No member
//!   writes another's `dest`, so they need no entry sync;
//! - larger broadcasts, fcollects and all-to-alls write every block straight into its
//!   destination (direct stores on one node). They start with a sync (nobody's `dest` changes
//!   before it has entered) and the all-gathers end with a barrier (every block has arrived),
//!   except all-to-alls whose members are all mapped here, which wait for each other through
//!   words of their team blocks instead ([`alltoall`]);
//!   broadcasts from [`staged::STAGED_MIN`] bytes (teams of two: from [`staged::PAIR_MIN`])
//!   are read by the members from the root instead, in pieces, where every member is mapped
//!   here ([`staged`]);
//! - dissemination sync, Hillis-Steele scans.
//!
//! "Mapped here" is [`Transport::coll_mapped`](crate::transport::Transport::coll_mapped): on
//! one node the collectives move their data by loads and stores whatever `UCX_TLS` says (as
//! Open MPI's oshmem moves its collectives' data through shared memory whatever it says),
//! while puts, gets and atomics follow `UCX_TLS`.
//!
//! Part of the collectives layer; uses `coll::team`, `coll::mailbox`, `ops::rma`, `transport`,
//! `mem`.

use super::alltoall;
use super::fetch;
use super::large::overlap;
use super::mailbox::{self, Part, RawBytes};
use super::staged;
use super::team::{Team, Tree};
use crate::element::Element;
use crate::mem::copy::{Stores, copy_bytes, outgrows_caches};
use crate::mem::segment::{CHUNK, DATA_FLAGS, DOWN_FLAG, SCRATCH};
use crate::mem::word::SignalKind;
use crate::ops::rma::SymmetricArray;
use crate::transport::collective::{Coll, wait_in_collective};
use crate::transport::slots::next_epoch;
use std::sync::atomic::{AtomicU64, Ordering};
use zerocopy::IntoBytes;

/// The largest all-to-all block (bytes per pair) that goes through the mailbox where the
/// members' `dest`s are all mapped here (one node, shared memory); larger ones go straight
/// into the `dest`s (`coll::alltoall`). The mailbox's two copies (into the receiver's slot,
/// then out of it) move each line between the cores twice, the direct path's one copy once,
/// at the price of waiting for each member's entry; that price is worth paying from about
/// here. Measured on this project's 2-vCPU Intel VM (`coll_sweep`, 3 alternating runs,
/// medians, ns per call, mailbox / direct), 2 PEs: blocks of 256 B 380 / 453, 512 B 459 /
/// 448, 768 B 624 / 462, 1 KiB 602 / 452, 2 KiB 865 / 504 (Open MPI's oshmem 592); 8 PEs:
/// 512 B 7,227 / 12,507, 1 KiB 9,960 / 7,321. Elsewhere (members not all mapped here) every
/// block that fits the mailbox's slots takes it.
const A2A_EAGER_MAX: usize = 512;

/// Copies `bytes` bytes from `src` to `offset` on team PE `pe` and raises its flag at
/// `flag` (team block offset) to `epoch`, in that order.
fn put_then_flag(
    team: &Team<'_>,
    pe: usize,
    offset: usize,
    src: *const u8,
    bytes: usize,
    flag: usize,
    epoch: u64,
) {
    let tp = team.tp();
    let peer = tp.peer(team.world_pe(pe));
    // SAFETY: callers pass a live source of `bytes` bytes (and a checked destination range in
    // the heap).
    let data = unsafe { std::slice::from_raw_parts(src, bytes) };
    if let (Some(to), Some(word)) = (
        tp.coll_mapped(peer, offset),
        tp.coll_mapped(peer, team.block(flag)),
    ) {
        // A peer of this node (whatever UCX_TLS says): a copy, then the flag.
        // SAFETY: the member's checked destination range, mapped here, which it does not
        // touch before the flag says the data is there; `data` is this PE's own memory.
        unsafe { copy_bytes(to, data.as_ptr(), bytes) };
        // SAFETY: an aligned word of the member's mapped team block, accessed atomically.
        SignalKind::Max.apply(unsafe { AtomicU64::from_ptr(word.cast()) }, epoch);
        return;
    }
    tp.put_with_signal(
        peer,
        (offset, &[data]),
        (team.block(flag), SignalKind::Max, epoch),
    );
}

fn wait_flag(team: &Team<'_>, flag: usize, epoch: u64) {
    let f = team.flag(flag);
    wait_in_collective(team.tp(), Some(&team.group), || {
        f.load(Ordering::Acquire) >= epoch
    });
}

#[track_caller]
fn check_root(team: &Team<'_>, root: usize, op: &str) {
    if root >= team.n_pes() {
        panic!(
            "shmem: {op}: root {root} is out of range: the team has {} PEs",
            team.n_pes()
        );
    }
}

#[track_caller]
pub(crate) fn check_fits<E: Element, A: SymmetricArray<E> + ?Sized>(
    dest: &A,
    need: usize,
    op: &str,
) {
    if dest.len() < need {
        panic!(
            "shmem: {op}: the destination has {} elements but {need} are needed",
            dest.len()
        );
    }
}

/// This PE's own copy of the first `elems` elements of `dest`, for a collective to assemble its
/// result in through raw pointers (another thread may use `dest`'s safe methods meanwhile, so no
/// reference to it is ever made).
#[track_caller]
fn own_bytes<E: Element, A: SymmetricArray<E> + ?Sized>(dest: &A, elems: usize) -> RawBytes<'_> {
    debug_assert!(elems <= dest.len());
    let tp = dest.__transport();
    tp.check_live();
    // SAFETY: the callers checked `elems <= dest.len()`, so the bytes lie in this PE's mapped
    // heap, which outlives the collective; they are only touched through raw pointers.
    unsafe { RawBytes::new(tp.local(dest.__heap_offset()), elems * size_of::<E>()) }
}

impl Team<'_> {
    /// `shmem_broadcast`: copies `source` (read on team PE `root` only) into elements
    /// `0..source.len()` of `dest` on every member, the root included. A binomial tree of
    /// puts, or, for larger broadcasts where the team blocks are mapped, every member reading
    /// the root's data in pieces (see the module docs).
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let dest = world.alloc::<u32>(3);
    /// let src = if team.my_pe() == 0 { [7, 8, 9] } else { [0; 3] };
    /// team.broadcast(&dest, &src, 0);
    /// assert_eq!(dest.local_get(2), 9);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_broadcast")]
    #[track_caller]
    pub fn broadcast<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        root: usize,
    ) {
        let _in = self.enter(Coll::Broadcast);
        self.broadcast_from(dest, source, root, false, "broadcast");
    }

    /// [`broadcast`](Self::broadcast), except that the root's `dest` is left as it is: only
    /// the other members receive `source`. This is OpenSHMEM 1.4's `shmem_broadcast32/64`
    /// over an active set, which this runtime's C API serves with it when the set is every PE.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let dest = world.alloc::<u32>(3);
    /// dest.local_write(0..3, &[1, 1, 1]);
    /// team.barrier();
    /// let src = if team.my_pe() == 0 { [7, 8, 9] } else { [0; 3] };
    /// team.broadcast_to_others(&dest, &src, 0);
    /// let want = if team.my_pe() == 0 { 1 } else { 9 };
    /// assert_eq!(dest.local_get(2), want);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[track_caller]
    pub fn broadcast_to_others<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        root: usize,
    ) {
        let _in = self.enter(Coll::Broadcast);
        self.broadcast_from(dest, source, root, true, "broadcast_to_others");
    }

    /// [`broadcast`](Self::broadcast), the root's `dest` left as it is when `keep_root`.
    #[track_caller]
    fn broadcast_from<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        root: usize,
        keep_root: bool,
        what: &str,
    ) {
        check_root(self, root, what);
        check_fits(dest, source.len(), what);
        let tree = Tree::new(self, root);
        if size_of_val(source) <= CHUNK {
            let out = own_bytes(dest, source.len());
            mailbox::broadcast(self, out, source.as_bytes(), &tree, keep_root, what);
            return;
        }
        if staged::broadcast(
            self,
            dest.__heap_offset(),
            source.as_bytes(),
            root,
            keep_root,
        ) {
            return;
        }
        let tp = self.tp();
        // No member's `dest` is written before that member has entered the broadcast.
        self.sync();
        let epoch = next_epoch(self.coll_epoch());
        let bytes = size_of_val(source);
        let at = dest.__heap_offset();
        // Every member sends from its `dest` (registered with UCX, in the heap), except a root
        // that keeps its `dest`, which sends from `source`.
        let from = if tree.rel == 0 && keep_root {
            source.as_ptr().cast::<u8>()
        } else if tree.rel == 0 {
            let (to, src) = (tp.local(at), source.as_ptr().cast::<u8>());
            if src.cast_mut() != to {
                if overlap(src as usize, to as usize, bytes) {
                    // SAFETY: `to` holds `bytes` bytes of this PE's `dest` (checked to fit
                    // above) and `src` is `source`; they overlap (a source inside `dest`, which
                    // only unsafe code can make), which `copy` allows.
                    unsafe { std::ptr::copy(src, to, bytes) };
                } else {
                    dest.local_write(0..source.len(), source);
                }
            }
            to.cast_const()
        } else {
            wait_flag(self, DOWN_FLAG, epoch);
            tp.local(at).cast_const()
        };
        for (child, _) in tree.children() {
            put_then_flag(self, child, at, from, bytes, DOWN_FLAG, epoch);
        }
        // Puts through UCX must have left this PE before it returns.
        tp.quiet();
    }

    /// [`broadcast`](Self::broadcast) in place: the root's own copy of `dest` (all of it; use
    /// [`slice`](crate::SymmetricArray::slice) for part of an array) is the source, as C's
    /// `dest == source`.
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let a = world.alloc::<u32>(3);
    /// if team.my_pe() == 0 {
    ///     a.local_write(.., &[7, 8, 9]);
    /// }
    /// team.broadcast_in_place(&a, 0);
    /// assert_eq!(a.local_get(2), 9);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_broadcast")]
    #[track_caller]
    pub fn broadcast_in_place<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        root: usize,
    ) {
        let _in = self.enter(Coll::Broadcast);
        check_root(self, root, "broadcast_in_place");
        let source = if self.my_pe() == root {
            own_copy(dest)
        } else {
            vec![E::new_zeroed(); dest.len()]
        };
        self.broadcast(dest, &source, root);
    }

    /// `shmem_fcollect`: concatenates every member's `source` (all the same length) in team
    /// order into `dest` on every member.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// let all = world.alloc::<u32>(2 * n);
    /// team.fcollect(&all, &[me as u32, 10 * me as u32]); // two elements from each member
    /// let mut got = vec![0; 2 * n];
    /// all.local_read(.., &mut got);
    /// let want: Vec<u32> = (0..n as u32).flat_map(|p| [p, 10 * p]).collect();
    /// assert_eq!(got, want);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_fcollect")]
    #[track_caller]
    pub fn fcollect<E: Element, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        let _in = self.enter(Coll::Collect);
        let n = self.n_pes();
        let k = source.len();
        check_fits(dest, n * k, "fcollect");
        if mailbox::allgather_fits(n, size_of_val(source)) {
            let out = own_bytes(dest, n * k);
            mailbox::allgather(self, out, source.as_bytes(), "fcollect");
            return;
        }
        // The maxima of k and !k give both the largest and the smallest k, and every member has
        // entered once they are known.
        let mut span = [k as u64, !(k as u64)];
        mailbox::allreduce(self, &mut span, u64::max, "fcollect");
        if span[0] != !span[1] {
            panic!(
                "shmem: fcollect: members contribute between {} and {} elements; fcollect needs \
                 the same number everywhere (use collect)",
                !span[1], span[0]
            );
        }
        self.put_to_all(dest, self.my_pe() * k, source, n * k);
        self.barrier();
    }

    /// Writes `source` at element `first` of `dest` on every member (the all-gathers' data
    /// moves), starting with the next member; completed by the caller's barrier. `total`:
    /// the elements every member's `dest` receives. Where the members' `dest`s and sources
    /// together (`(n + 1) total` elements) are more than three quarters of the machine's
    /// last-level caches (`outgrows_caches`), the copies into mapped members stream
    /// (non-temporal stores, `copy_streaming`: the lines could not stay cached anyway, and are
    /// not read before they are overwritten).
    /// Measured on the 2-vCPU EPYC (32 MiB of L3), `fcollect`, ms per call, medians of 5
    /// alternating runs, streaming / cached: 4 PEs at 4 MiB each 2.88 / 3.90, 8 PEs at 1 MiB
    /// 2.77 / 3.68, at 4 MiB 11.3 / 15.3 (`collect` alike); 5 PEs at 1 MiB (30 MiB of a 32
    /// MiB L3), 4 alternating runs each, in the collective sweep's order: 581-877 us against
    /// 652-939.
    fn put_to_all<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        first: usize,
        source: &[E],
        total: usize,
    ) {
        let (n, me) = (self.n_pes(), self.my_pe());
        let bytes = source.as_bytes();
        let at = dest.__heap_offset() + first * size_of::<E>();
        let stores = Stores::streaming_if(outgrows_caches(
            (n + 1).saturating_mul(total).saturating_mul(size_of::<E>()),
        ));
        for i in 1..n {
            // SAFETY: the callers checked that `dest` holds `first + source.len()` elements on
            // every member (symmetric); no member touches that block of its `dest` until the
            // barrier that ends the collective, by which the puts are complete; `source` is
            // borrowed until then, and is not another member's memory.
            unsafe { fetch::put(self, (me + i) % n, at, bytes, stores) };
        }
        let own = self.tp().local(at);
        // SAFETY: this PE's block of its own `dest` (checked to fit); a source overlapping
        // it (C's in-place forms) is moved as memmove would.
        unsafe { std::ptr::copy(bytes.as_ptr(), own, bytes.len()) };
    }

    /// `shmem_collect`: concatenates every member's `source` (lengths may differ) in team
    /// order into `dest` on every member; returns the total number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// // Member p contributes p + 1 copies of p.
    /// let dest = world.alloc::<u16>(n * (n + 1) / 2);
    /// let total = team.collect(&dest, &vec![me as u16; me + 1]);
    /// assert_eq!(total, n * (n + 1) / 2);
    /// assert_eq!(dest.local_get(total - 1), (n - 1) as u16);
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_collect")]
    #[track_caller]
    pub fn collect<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
    ) -> usize {
        let _in = self.enter(Coll::Collect);
        let n = self.n_pes();
        let me = self.my_pe();
        // (Zero-sized elements, such as `[u8; 0]`, have no count to divide out: the path below.)
        if n > 1 && n <= mailbox::FLAT_MAX && size_of::<E>() > 0 {
            // One exchange: counts, and the data that fits a slot with them.
            let got = mailbox::collect(
                self,
                source.as_bytes(),
                size_of::<E>(),
                |total| {
                    check_fits(dest, total, "collect");
                    own_bytes(dest, total)
                },
                "collect",
            );
            if !got.all_inline {
                if !got.mine_inline {
                    self.put_to_all(dest, got.before, source, got.total);
                }
                self.barrier();
            }
            return got.total;
        }
        let k = source.len() as u64;
        // Every member's length (which also tells that every member has entered).
        let (before, total) = if mailbox::allgather_fits(n, 8) {
            let mut lens = vec![0u64; n];
            mailbox::allgather(
                self,
                RawBytes::from_mut(lens.as_mut_bytes()),
                k.as_bytes(),
                "collect",
            );
            let before: u64 = lens[..me].iter().sum();
            (before as usize, lens.iter().sum::<u64>() as usize)
        } else {
            let before = self.exscan_u64(k) as usize;
            let mut total = [k];
            mailbox::allreduce(self, &mut total, u64::wrapping_add, "collect");
            (before, total[0] as usize)
        };
        check_fits(dest, total, "collect");
        self.put_to_all(dest, before, source, total);
        self.barrier();
        total
    }

    /// `shmem_alltoall`: block `j` (of `source.len() / n` elements) of this PE's `source` goes
    /// to block `my_pe` of `dest` on team PE `j`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// // Block j (one element) goes to member j: "from me to j".
    /// let source: Vec<u64> = (0..n).map(|j| (100 * me + j) as u64).collect();
    /// let dest = world.alloc::<u64>(n);
    /// team.alltoall(&dest, &source);
    /// // Block p of dest came from member p, addressed to me.
    /// for p in 0..n {
    ///     assert_eq!(dest.local_get(p), (100 * p + me) as u64);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_alltoall")]
    #[track_caller]
    pub fn alltoall<E: Element, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        let _in = self.enter(Coll::Alltoall);
        let k = self.alltoall_block(dest, source.len(), "alltoall");
        self.alltoall_of(dest, source.as_bytes().into(), k, "alltoall", || {
            self.alltoall_by_puts(dest, source, k)
        });
    }

    /// [`alltoall`](Self::alltoall) from a symmetric array: block `j` (of `source.len() / n`
    /// elements) of this PE's copy of `source` goes to block `my_pe` of `dest` on team PE `j`.
    /// On one node the blocks are copied from where they lie, with no private copy of the
    /// source first: this is C's `shmem_alltoall` (whose source is symmetric), and what a
    /// transpose with symmetric buffers wants (from Python, `shmem.alltoall`). A `source` that
    /// overlaps `dest` is copied first, as [`alltoall`](Self::alltoall) would be given it.
    ///
    /// `source` should not change until the call returns (OpenSHMEM's rule for the source of a
    /// collective). If a put from another PE changes it meanwhile, the blocks carry whichever
    /// bytes were read: the data is wrong, nothing worse (it is only read through raw
    /// pointers, never borrowed).
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// // Two elements per member, "from me to j", in symmetric memory.
    /// let source = world.alloc::<u64>(2 * n);
    /// for j in 0..n {
    ///     source.local_write(2 * j..2 * j + 2, &[(100 * me + j) as u64, 7]);
    /// }
    /// let dest = world.alloc::<u64>(2 * n);
    /// team.alltoall_symmetric(&dest, &source);
    /// for p in 0..n {
    ///     assert_eq!(dest.local_get(2 * p), (100 * p + me) as u64);
    ///     assert_eq!(dest.local_get(2 * p + 1), 7);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_alltoall")]
    #[track_caller]
    pub fn alltoall_symmetric<E, A, S>(&self, dest: &A, source: &S)
    where
        E: Element,
        A: SymmetricArray<E> + ?Sized,
        S: SymmetricArray<E> + ?Sized,
    {
        let _in = self.enter(Coll::Alltoall);
        let k = self.alltoall_block(dest, source.len(), "alltoall_symmetric");
        let n = self.n_pes();
        let private = || {
            let mut copy = vec![E::new_zeroed(); n * k];
            source.local_read(.., &mut copy);
            copy
        };
        let tp = self.tp();
        let bytes = n * k * size_of::<E>();
        let (from, to) = (
            tp.local(source.__heap_offset()),
            tp.local(dest.__heap_offset()),
        );
        // A source that overlaps `dest` is copied first.
        let copy = overlap(from as usize, to as usize, bytes).then(private);
        let src = match &copy {
            Some(c) => c.as_bytes().into(),
            // SAFETY: this PE's copy of the `n * k` elements of `source` (its length), in the
            // mapped heap, which outlives the call; read only through raw pointers (a peer's
            // put may change them meanwhile), and apart from `dest` (checked above).
            None => unsafe { Part::new(from.cast_const(), bytes) },
        };
        self.alltoall_of(dest, src, k, "alltoall_symmetric", || match &copy {
            Some(c) => self.alltoall_by_puts(dest, c, k),
            None => self.alltoall_by_puts(dest, &private(), k),
        });
    }

    /// The elements per block of an all-to-all of a source of `len` elements into `dest`:
    /// panics, naming the values, unless `len` is a multiple of the team's size and `dest`
    /// holds the result.
    #[track_caller]
    fn alltoall_block<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        len: usize,
        what: &str,
    ) -> usize {
        let n = self.n_pes();
        if !len.is_multiple_of(n) {
            panic!(
                "shmem: {what}: the source has {len} elements, not a multiple of the {n} team PEs"
            );
        }
        check_fits(dest, len, what);
        len / n
    }

    /// The all-to-all of `source` (`n` blocks of `k` elements) into `dest`: through the
    /// mailbox, or straight into the members' `dest` where all are mapped here, or else
    /// `by_puts`.
    #[track_caller]
    fn alltoall_of<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: Part<'_>,
        k: usize,
        what: &str,
        by_puts: impl FnOnce(),
    ) {
        let n = self.n_pes();
        let block = k * size_of::<E>();
        let fits = mailbox::alltoall_fits(n, block);
        let mailbox = || mailbox::alltoall(self, own_bytes(dest, n * k), source, block, what);
        if fits && block <= A2A_EAGER_MAX {
            return mailbox();
        }
        if alltoall::alltoall(self, dest.__heap_offset(), source, block, what) {
            return;
        }
        if fits {
            mailbox();
        } else {
            by_puts();
        }
    }

    /// The all-to-all of a private `source` by puts, between two syncs (members not all
    /// mapped here).
    #[track_caller]
    fn alltoall_by_puts<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        k: usize,
    ) {
        let (n, me) = (self.n_pes(), self.my_pe());
        // No member's `dest` is written before that member has entered.
        self.sync();
        for i in 0..n {
            let j = (me + i) % n;
            dest.put(
                self.world_pe(j),
                me * k..(me + 1) * k,
                &source[j * k..(j + 1) * k],
            );
        }
        self.barrier();
    }

    /// `shmem_alltoalls`: strided all-to-all. For each team PE `j` and `i in 0..nelems`,
    /// `source[(j * nelems + i) * sst]` goes to `dest[(me * nelems + i) * dst]` on PE `j`.
    ///
    /// # Examples
    ///
    /// ```
    /// use shmem_core::prelude::*;
    /// let world = shmem_core::init()?;
    /// let team = world.team_world();
    /// let (me, n) = (team.my_pe(), team.n_pes());
    /// // One element per member, taken from every other source element and placed at every
    /// // third destination element.
    /// let source: Vec<i32> = (0..n).flat_map(|j| [(10 * me + j) as i32, -1]).collect();
    /// let dest = world.alloc::<i32>(3 * n);
    /// team.alltoalls(&dest, 3, &source, 2, 1);
    /// for p in 0..n {
    ///     assert_eq!(dest.local_get(3 * p), (10 * p + me) as i32);
    /// }
    /// # Ok::<(), shmem_core::Error>(())
    /// ```
    #[doc(alias = "shmem_alltoalls")]
    #[track_caller]
    pub fn alltoalls<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        dst: usize,
        source: &[E],
        sst: usize,
        nelems: usize,
    ) {
        let _in = self.enter(Coll::Alltoall);
        let n = self.n_pes();
        if dst == 0 || sst == 0 {
            panic!("shmem: alltoalls: strides must be positive (dst {dst}, sst {sst})");
        }
        if nelems == 0 {
            self.barrier();
            return;
        }
        let need_src = ((n * nelems - 1) * sst) + 1;
        if source.len() < need_src {
            panic!(
                "shmem: alltoalls: the source has {} elements but {need_src} are needed",
                source.len()
            );
        }
        let span = (n * nelems - 1) * dst + 1;
        check_fits(dest, span, "alltoalls");
        let block = nelems * size_of::<E>();
        if mailbox::alltoall_fits(n, block) {
            // Small blocks: packed here, exchanged through the mailbox in one step (no entry
            // sync, no barrier: nobody writes another member's `dest`), then stored at their
            // stride into this PE's `dest`.
            let packed: Vec<E> = (0..n * nelems).map(|k| source[k * sst]).collect();
            let mut got = vec![E::new_zeroed(); n * nelems];
            let out = RawBytes::from_mut(got.as_mut_bytes());
            mailbox::alltoall(self, out, packed.as_bytes().into(), block, "alltoalls");
            own_bytes(dest, span).write_strided(&got, dst);
            return;
        }
        let me = self.my_pe();
        self.sync();
        for i in 0..n {
            let j = (me + i) % n;
            let first_src = j * nelems * sst;
            let first_dst = me * nelems * dst;
            let span = (nelems - 1) * dst + 1;
            let src = &source[first_src..first_src + (nelems - 1) * sst + 1];
            dest.iput(self.world_pe(j), first_dst..first_dst + span, dst, src, sst);
        }
        self.barrier();
    }

    /// Exclusive prefix sum of one `u64` over the team (internal, for collect).
    fn exscan_u64(&self, v: u64) -> u64 {
        let mut out = [0u64];
        scan_chunks::<u64>(self, &[v], &mut out, |a, b| a.wrapping_add(b), false);
        out[0]
    }
}

/// Hillis-Steele scan of `source` into `out` (inclusive or exclusive; exclusive leaves PE 0's
/// `out` at zero bits).
pub(crate) fn scan_chunks<E: Element>(
    team: &Team<'_>,
    source: &[E],
    out: &mut [E],
    op: impl Fn(E, E) -> E,
    inclusive: bool,
) {
    let tp = team.tp();
    let n = team.n_pes();
    let me = team.my_pe();
    let per = (CHUNK / size_of::<E>()).max(1);
    for (c, chunk) in source.chunks(per).enumerate() {
        // `acc` is the inclusive prefix of PEs max(0, me - 2^k + 1) ..= me after round k.
        let mut acc: Vec<E> = chunk.to_vec();
        let mut excl: Option<Vec<E>> = None;
        let (mut dist, mut round) = (1, 0);
        while dist < n {
            let epoch = next_epoch(team.coll_epoch());
            if me + dist < n {
                put_then_flag(
                    team,
                    me + dist,
                    team.block(SCRATCH + round * CHUNK),
                    acc.as_ptr().cast(),
                    size_of_val(acc.as_slice()),
                    DATA_FLAGS + round * 8,
                    epoch,
                );
            }
            if me >= dist {
                wait_flag(team, DATA_FLAGS + round * 8, epoch);
                let slot = tp.local(team.block(SCRATCH + round * CHUNK)).cast::<E>();
                let mut left: Vec<E> = (0..acc.len())
                    // SAFETY: the sender wrote `acc.len()` elements before raising the flag.
                    .map(|i| unsafe { slot.add(i).read_volatile() })
                    .collect();
                // Exclusive prefix: combine what lies strictly left of this PE.
                excl = Some(match excl.take() {
                    None => left.clone(),
                    Some(e) => left.iter().zip(&e).map(|(&l, &x)| op(l, x)).collect(),
                });
                for (a, l) in acc.iter_mut().zip(left.drain(..)) {
                    *a = op(l, *a);
                }
            }
            // Nobody overwrites a scratch slot before its reader has used it.
            team.sync();
            dist <<= 1;
            round += 1;
        }
        let dst = &mut out[c * per..c * per + chunk.len()];
        if inclusive {
            dst.copy_from_slice(&acc);
        } else if let Some(e) = excl {
            dst.copy_from_slice(&e);
        } else {
            for d in dst.iter_mut() {
                *d = E::new_zeroed();
            }
        }
    }
}

/// This PE's own copy of `dest`, as the source of an in-place collective.
#[track_caller]
pub(crate) fn own_copy<E: Element, A: SymmetricArray<E> + ?Sized>(dest: &A) -> Vec<E> {
    let mut v = vec![E::new_zeroed(); dest.len()];
    dest.local_read(.., &mut v);
    v
}
