//! Collectives on teams: sync, broadcast, reductions, scans, fcollect, collect, alltoall(s).
//!
//! Algorithms scale with the team size (`ceil(log2 n)` rounds where the data allows):
//! - small messages go through mailbox slots in the team block ([`mailbox`]): binomial-tree
//!   broadcast (up to 1 KiB), recursive-doubling reductions (any size, in 1 KiB chunks; the same
//!   combining order everywhere, so results are bit-identical on every PE), Bruck fcollect and a
//!   direct all-to-all. No member writes another's `dest`, so they need no entry sync;
//! - larger broadcasts, fcollects and all-to-alls write every block straight into its
//!   destination (direct stores on one node). They start with a sync (nobody's `dest` changes
//!   before it has entered) and the all-gathers end with a barrier (every block has arrived);
//! - dissemination sync, Hillis-Steele scans.

mod mailbox;

use mailbox::RawBytes;

use crate::element::Element;
use crate::rma::SymmetricArray;
use crate::runtime::Runtime;
use crate::strided::SignalKind;
use crate::team::{self, CHUNK, DATA_FLAGS, DOWN_FLAG, ROUNDS, SCRATCH, Team, next_epoch};
use std::sync::atomic::Ordering;
use zerocopy::IntoBytes;

/// Dissemination sync over the team's members.
pub(crate) fn team_sync(team: &Team<'_>) {
    let n = team.n_pes();
    if n == 1 {
        return;
    }
    let rt = team.rt;
    let epoch = next_epoch(team.barrier_epoch());
    let me = team.my_pe();
    let (mut dist, mut round) = (1, 0);
    while dist < n {
        let to = team.world_pe((me + dist) % n);
        rt.store_flag(to, team.block(team::BARRIER_FLAGS + round * 8), epoch);
        let f = team::flag(team, rt, team::BARRIER_FLAGS + round * 8);
        crate::sync::wait_in_collective(rt, Some(team), || f.load(Ordering::Acquire) >= epoch);
        dist <<= 1;
        round += 1;
    }
    // Flags sent through UCX must have left before this PE computes again.
    rt.wait_sent();
}

/// Position in a binomial tree rooted at team PE `root`.
pub(crate) struct Tree {
    rel: usize,
    n: usize,
    pub(crate) root: usize,
}

impl Tree {
    fn new(team: &Team<'_>, root: usize) -> Tree {
        let n = team.n_pes();
        Tree {
            rel: (team.my_pe() + n - root) % n,
            n,
            root,
        }
    }
    /// Team PE of relative rank `r`.
    fn pe(&self, r: usize) -> usize {
        (r + self.root) % self.n
    }
    /// `(parent, round)`: the parent and the bit that links us, for every rank but the root.
    fn parent(&self) -> Option<(usize, usize)> {
        (self.rel != 0).then(|| {
            let bit = self.rel.trailing_zeros() as usize;
            (self.pe(self.rel - (1 << bit)), bit)
        })
    }
    /// `(child, round)` pairs, lowest round first.
    fn children(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
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
    let rt = team.rt;
    let peer = rt.peer(team.world_pe(pe));
    // SAFETY: callers pass a live source of `bytes` bytes (and a checked destination range in
    // the heap).
    let data = unsafe { std::slice::from_raw_parts(src, bytes) };
    rt.put_with_signal(
        peer,
        (offset, &[data]),
        (team.block(flag), SignalKind::Max, epoch),
    );
}

fn wait_flag(team: &Team<'_>, rt: &Runtime, flag: usize, epoch: u64) {
    let f = team::flag(team, rt, flag);
    crate::sync::wait_in_collective(rt, Some(team), || f.load(Ordering::Acquire) >= epoch);
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
fn check_fits<E: Element, A: SymmetricArray<E> + ?Sized>(dest: &A, need: usize, op: &str) {
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
    let rt = dest.__runtime();
    rt.check_live();
    // SAFETY: the callers checked `elems <= dest.len()`, so the bytes lie in this PE's mapped
    // heap, which outlives the collective; they are only touched through raw pointers.
    unsafe { RawBytes::new(rt.local(dest.__heap_offset()), elems * size_of::<E>()) }
}

impl Team<'_> {
    /// `shmem_broadcast`: copies `source` (read on team PE `root` only) into elements
    /// `0..source.len()` of `dest` on every member, the root included. Binomial tree.
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
        let rt = self.rt;
        // No member's `dest` is written before that member has entered the broadcast.
        team_sync(self);
        let epoch = next_epoch(self.coll_epoch());
        let bytes = size_of_val(source);
        let at = dest.__heap_offset();
        // Every member sends from its `dest` (registered with UCX, in the heap), except a root
        // that keeps its `dest`, which sends from `source`.
        let from = if tree.rel == 0 && keep_root {
            source.as_ptr().cast::<u8>()
        } else if tree.rel == 0 {
            dest.local_write(0..source.len(), source);
            rt.local(at).cast_const()
        } else {
            wait_flag(self, rt, DOWN_FLAG, epoch);
            rt.local(at).cast_const()
        };
        for (child, _) in tree.children() {
            put_then_flag(self, child, at, from, bytes, DOWN_FLAG, epoch);
        }
        // Puts through UCX must have left this PE before it returns.
        rt.quiet();
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
    #[doc(alias = "shmem_fcollect")]
    #[track_caller]
    pub fn fcollect<E: Element, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
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
        for i in 0..n {
            let pe = (self.my_pe() + i) % n;
            dest.put(
                self.world_pe(pe),
                self.my_pe() * k..(self.my_pe() + 1) * k,
                source,
            );
        }
        self.barrier();
    }

    /// `shmem_collect`: concatenates every member's `source` (lengths may differ) in team
    /// order into `dest` on every member; returns the total number of elements.
    #[doc(alias = "shmem_collect")]
    #[track_caller]
    pub fn collect<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
    ) -> usize {
        let n = self.n_pes();
        let me = self.my_pe();
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
        for i in 0..n {
            let pe = (me + i) % n;
            dest.put(self.world_pe(pe), before..before + source.len(), source);
        }
        self.barrier();
        total
    }

    /// `shmem_alltoall`: block `j` (of `source.len() / n` elements) of this PE's `source` goes
    /// to block `my_pe` of `dest` on team PE `j`.
    #[doc(alias = "shmem_alltoall")]
    #[track_caller]
    pub fn alltoall<E: Element, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        let n = self.n_pes();
        if !source.len().is_multiple_of(n) {
            panic!(
                "shmem: alltoall: the source has {} elements, not a multiple of the {n} team PEs",
                source.len()
            );
        }
        let k = source.len() / n;
        check_fits(dest, n * k, "alltoall");
        let block = k * size_of::<E>();
        if mailbox::alltoall_fits(n, block) {
            let out = own_bytes(dest, n * k);
            mailbox::alltoall(self, out, source.as_bytes(), block, "alltoall");
            return;
        }
        let me = self.my_pe();
        // No member's `dest` is written before that member has entered.
        team_sync(self);
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
        check_fits(dest, (n * nelems - 1) * dst + 1, "alltoalls");
        let me = self.my_pe();
        team_sync(self);
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

/// All-reduce of one `u64` over the team with a commutative, associative `op`.
pub(crate) fn allreduce_u64(team: &Team<'_>, v: u64, op: fn(u64, u64) -> u64) -> u64 {
    let mut out = [v];
    mailbox::allreduce(team, &mut out, op, "team split");
    out[0]
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
    let rt = team.rt;
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
                wait_flag(team, rt, DATA_FLAGS + round * 8, epoch);
                let slot = rt.local(team.block(SCRATCH + round * CHUNK)).cast::<E>();
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
            team_sync(team);
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

/// Element types with the OpenSHMEM `sum` and `prod` reductions: the integer types, `f32`,
/// `f64` and the complex types ([`Complex32`](crate::Complex32),
/// [`Complex64`](crate::Complex64)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no sum or product reductions in OpenSHMEM",
    note = "sum and prod reductions exist for the integer types, f32, f64, Complex32 and Complex64"
)]
pub trait ReduceSum: Element {
    /// `a + b` (wrapping for integers).
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    fn prod(a: Self, b: Self) -> Self;
}

/// Element types with all the OpenSHMEM arithmetic reductions (`sum`, `prod`, `max`, `min`):
/// the ordered ones, integers and `f32`, `f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no max or min reductions in OpenSHMEM",
    note = "max and min reductions exist for the integer types and f32, f64"
)]
pub trait ReduceArith: ReduceSum + PartialOrd {}

/// Element types with the OpenSHMEM bitwise reductions (`and`, `or`, `xor`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no bitwise reductions in OpenSHMEM",
    note = "and, or and xor reductions exist for the integer types"
)]
pub trait ReduceBitwise: Element {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
}

macro_rules! reduce_ints {
    ($($t:ty)*) => {$(
        impl ReduceSum for $t {
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
        }
        impl ReduceArith for $t {}
        impl ReduceBitwise for $t {
            fn and(a: Self, b: Self) -> Self { a & b }
            fn or(a: Self, b: Self) -> Self { a | b }
            fn xor(a: Self, b: Self) -> Self { a ^ b }
        }
    )*};
}
reduce_ints!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

macro_rules! reduce_floats {
    ($($t:ty)*) => {$(
        impl ReduceSum for $t {
            fn sum(a: Self, b: Self) -> Self { a + b }
            fn prod(a: Self, b: Self) -> Self { a * b }
        }
        impl ReduceArith for $t {}
    )*};
}
reduce_floats!(f32 f64);

fn max_of<E: PartialOrd>(a: E, b: E) -> E {
    if b > a { b } else { a }
}

fn min_of<E: PartialOrd>(a: E, b: E) -> E {
    if b < a { b } else { a }
}

macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident, $in_place:ident: $tr:ident => $op:expr;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
            self.reduce_into(dest, source, $op, stringify!($name));
        }

        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") in place: ")]
        /// the source is this PE's own copy of `dest` (all of it; use
        /// [`slice`](crate::SymmetricArray::slice) for part of an array), as C's
        /// `dest == source`.
        #[track_caller]
        pub fn $in_place<E: $tr, A: SymmetricArray<E> + ?Sized>(&self, dest: &A) {
            let source = own_copy(dest);
            self.reduce_into(dest, &source, $op, stringify!($in_place));
        }
    )*};
}

/// This PE's own copy of `dest`, as the source of an in-place collective.
#[track_caller]
fn own_copy<E: Element, A: SymmetricArray<E> + ?Sized>(dest: &A) -> Vec<E> {
    let mut v = vec![E::new_zeroed(); dest.len()];
    dest.local_read(.., &mut v);
    v
}

impl Team<'_> {
    /// Reduces element-wise over the members, result in `dest[..source.len()]` on every member.
    #[track_caller]
    fn reduce_into<E: Element, A: SymmetricArray<E> + ?Sized>(
        &self,
        dest: &A,
        source: &[E],
        op: fn(E, E) -> E,
        name: &str,
    ) {
        check_fits(dest, source.len(), name);
        let mut out = source.to_vec();
        mailbox::allreduce(self, &mut out, op, name);
        dest.local_write(0..out.len(), &out);
    }

    reductions! {
        /// `shmem_sum_reduce`: element-wise sum over the team into `dest` on every member.
        ///
        /// ```
        /// use shmem_core::prelude::*;
        /// let world = shmem_core::init()?;
        /// let team = world.team_world();
        /// let total = world.alloc::<u64>(1);
        /// team.sum_reduce(&total, &[team.my_pe() as u64 + 1]);
        /// let n = team.n_pes() as u64;
        /// assert_eq!(total.local_get(0), n * (n + 1) / 2);
        /// # Ok::<(), shmem_core::Error>(())
        /// ```
        #[doc(alias = "shmem_sum_reduce")]
        sum_reduce, sum_reduce_in_place: ReduceSum => E::sum;
        /// `shmem_prod_reduce`: element-wise product.
        #[doc(alias = "shmem_prod_reduce")]
        prod_reduce, prod_reduce_in_place: ReduceSum => E::prod;
        /// `shmem_max_reduce`: element-wise maximum.
        #[doc(alias = "shmem_max_reduce")]
        max_reduce, max_reduce_in_place: ReduceArith => max_of;
        /// `shmem_min_reduce`: element-wise minimum.
        #[doc(alias = "shmem_min_reduce")]
        min_reduce, min_reduce_in_place: ReduceArith => min_of;
        /// `shmem_and_reduce`: element-wise bitwise and.
        #[doc(alias = "shmem_and_reduce")]
        and_reduce, and_reduce_in_place: ReduceBitwise => E::and;
        /// `shmem_or_reduce`: element-wise bitwise or.
        #[doc(alias = "shmem_or_reduce")]
        or_reduce, or_reduce_in_place: ReduceBitwise => E::or;
        /// `shmem_xor_reduce`: element-wise bitwise xor.
        #[doc(alias = "shmem_xor_reduce")]
        xor_reduce, xor_reduce_in_place: ReduceBitwise => E::xor;
    }

    /// `shmem_sum_inscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..=p`.
    #[doc(alias = "shmem_sum_inscan")]
    #[track_caller]
    pub fn sum_inscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        check_fits(dest, source.len(), "sum_inscan");
        let mut out = source.to_vec();
        scan_chunks(self, source, &mut out, E::sum, true);
        dest.local_write(0..out.len(), &out);
    }

    /// `shmem_sum_exscan` (1.6): `dest[i]` on team PE `p` is the sum of `source[i]` over PEs
    /// `0..p` (zero on PE 0).
    #[doc(alias = "shmem_sum_exscan")]
    #[track_caller]
    pub fn sum_exscan<E: ReduceSum, A: SymmetricArray<E> + ?Sized>(&self, dest: &A, source: &[E]) {
        check_fits(dest, source.len(), "sum_exscan");
        let mut out = source.to_vec();
        scan_chunks(self, source, &mut out, E::sum, false);
        dest.local_write(0..out.len(), &out);
    }
}
