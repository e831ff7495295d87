//! The deprecated active-set collectives (`shmem_barrier`, `shmem_sync`, `shmem_broadcast32`,
//! `shmem_collect64`, `shmem_TYPE_OP_to_all`, ...).
//!
//! An active set (`PE_start`, `2^logPE_stride`, `PE_size`) is called by its members only, so it
//! cannot use teams (made collectively over a parent). Everything here works on the caller's
//! `pSync` array instead: `pSync[0]` counts arrivals on the set's first member, `pSync[1]` is
//! each member's release flag, `pSync[2]` a member's contribution length for `collect`. Every
//! word is back at `SHMEM_SYNC_VALUE` (0) when the call returns.
//!
//! A set of every PE synchronizes with the world's barrier instead, and its broadcast, collect,
//! fcollect, all-to-all and reductions are the world team's (`pSync` then stays as it is; the
//! broadcast leaves the root's `dest` alone, as 1.4 asks). 2 PEs here:
//! fcollect 261-288 ns down to 125-135, alltoall 192 to 125-132, `shmem_long_sum_to_all`
//! 213-324 to 156-227 and `shmem_broadcast64` 172-240 to 148-167 (one exchange through the
//! team segment instead of two barriers around gets).
//!
//! Data moves by gets from the other members' symmetric source between an entry barrier (every
//! source is ready) and an exit barrier (nobody changes its source or `pSync` before everyone
//! has read it); results are written locally after it, so `dest == source` works.

use crate::coll::source_of;
use crate::state::{self, dst, sym};
use shmem_core::prelude::*;
use shmem_core::{ReduceBitwise, ReduceSum};
use std::borrow::Cow;
use std::ffi::{c_int, c_long, c_void};

/// An active set, with the caller's place in it.
struct ActiveSet {
    start: usize,
    stride: usize,
    size: usize,
    me: usize,
}

impl ActiveSet {
    /// Checks the triplet against the job and the caller's membership.
    fn new(op: &str, start: c_int, log_stride: c_int, size: c_int) -> ActiveSet {
        let n = state::g(op).world.n_pes();
        let my_pe = state::g(op).world.my_pe();
        let bad = |why: &str| -> ! {
            fatal!(
                "{op}: active set PE_start {start}, logPE_stride {log_stride}, PE_size {size}: \
                 {why} (the job has {n} PEs)"
            )
        };
        let (Ok(s), Ok(l), Ok(z)) = (
            usize::try_from(start),
            u32::try_from(log_stride),
            usize::try_from(size),
        ) else {
            bad("values must not be negative")
        };
        if z == 0 || l >= 31 {
            bad("PE_size must be positive and logPE_stride below 31")
        }
        let stride = 1usize << l;
        if s + (z - 1) * stride >= n {
            bad("the set reaches past the last PE")
        }
        let d = my_pe.wrapping_sub(s);
        if my_pe < s || !d.is_multiple_of(stride) || d / stride >= z {
            bad(&format!("PE {my_pe} (the caller) is not a member"))
        }
        ActiveSet {
            start: s,
            stride,
            size: z,
            me: d / stride,
        }
    }

    /// Whether the set is every PE of the job (`0, 0, n`).
    fn is_world(&self, op: &str) -> bool {
        self.start == 0 && self.stride == 1 && self.size == state::g(op).world.n_pes()
    }

    /// World PE of member `i`.
    fn pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }

    /// A barrier over the set on `pSync[0..2]` (with a quiet first when `quiet`). A set of
    /// every PE (the common call, `0, 0, n`) takes the world's own barrier instead, through the
    /// runtime's team segment, and leaves `pSync` untouched (2 PEs here: broadcast 262 ns down
    /// to 173-188, alltoall 270 to 192).
    fn barrier(&self, op: &str, psync: *mut c_long, quiet: bool) {
        let w = state::g(op).world;
        if self.is_world(op) {
            if quiet {
                w.barrier_all();
            } else {
                w.sync_all();
            }
            return;
        }
        if quiet {
            w.quiet();
        }
        if self.size == 1 {
            return;
        }
        let ps = sym(op, "pSync", psync.cast_const(), 2);
        let (root, me) = (self.pe(0), self.pe(self.me));
        if self.me == 0 {
            ps.wait_until(0, Cmp::Eq, (self.size - 1) as c_long);
            ps.at(me, 0).set(0);
            for i in 1..self.size {
                ps.at(self.pe(i), 1).set(1);
            }
        } else {
            ps.at(root, 0).add(1);
            ps.wait_until(1, Cmp::Ne, 0);
            ps.at(me, 1).set(0);
        }
    }
}

/// The handle of `SHMEM_TEAM_WORLD`, for the sets that are every PE.
fn world_team() -> crate::state::ShmemTeam {
    std::ptr::without_provenance_mut(crate::state::TEAM_WORLD)
}

/// `shmem_barrier` (deprecated): quiet, then a barrier over the active set.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_barrier(
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    psync: *mut c_long,
) {
    let op = "shmem_barrier";
    ActiveSet::new(op, pe_start, log_pe_stride, pe_size).barrier(op, psync, true);
}

/// `shmem_sync` (deprecated active-set form): a barrier over the active set without the quiet.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_sync(
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    psync: *mut c_long,
) {
    let op = "shmem_sync";
    ActiveSet::new(op, pe_start, log_pe_stride, pe_size).barrier(op, psync, false);
}

/// Active-set broadcast: every member but the root gets the root's source.
///
/// # Safety
/// `dest` holds `n` writable elements.
unsafe fn broadcast<E: Element>(
    op: &str,
    (dest, source, n): (*mut E, *const E, usize),
    root: c_int,
    set: ActiveSet,
    psync: *mut c_long,
) {
    let root = match usize::try_from(root) {
        Ok(r) if r < set.size => r,
        _ => fatal!(
            "{op}: PE_root {root} is not an index of the active set of {}",
            set.size
        ),
    };
    if set.is_world(op) {
        // The world team's broadcast, which leaves the root's `dest` alone as 1.4 asks.
        // SAFETY: per this function's contract, and C's for `source`.
        if let Some((t, d, s)) = unsafe { world_operands(op, (dest, source, n)) } {
            t.broadcast_to_others(&d, &s, root);
        }
        return;
    }
    set.barrier(op, psync, true);
    if n > 0 && set.me != root {
        let s = sym(op, "source", source, n);
        // SAFETY: per this function's contract.
        s.get(set.pe(root), .., unsafe { dst(op, dest, n) });
    }
    set.barrier(op, psync, false);
}

/// Active-set collect (`fixed`: every member contributes `n`).
///
/// # Safety
/// `dest` holds the sum of the members' contributions, writable.
unsafe fn collect<E: Element>(
    op: &str,
    (dest, source, n): (*mut E, *const E, usize),
    fixed: bool,
    set: ActiveSet,
    psync: *mut c_long,
) {
    if set.is_world(op) {
        // SAFETY: forwarded contract (the team forms read `n` elements of `source`).
        unsafe {
            if fixed {
                crate::coll::fcollect(op, world_team(), (dest, source, n));
            } else {
                crate::coll::collect(op, world_team(), (dest, source, n));
            }
        }
        return;
    }
    let ps = sym(op, "pSync", psync.cast_const(), 3);
    let me = set.pe(set.me);
    if !fixed {
        ps.at(me, 2).set(n as c_long);
    }
    set.barrier(op, psync, true);
    let lens: Vec<usize> = (0..set.size)
        .map(|i| {
            if fixed {
                n
            } else {
                ps.at(set.pe(i), 2).fetch() as usize
            }
        })
        .collect();
    let total: usize = lens.iter().sum();
    // SAFETY: per this function's contract.
    let out = unsafe { dst(op, dest, total) };
    let mut at = 0;
    for (i, &len) in lens.iter().enumerate() {
        if len > 0 {
            sym(op, "source", source, len).get(set.pe(i), .., &mut out[at..at + len]);
        }
        at += len;
    }
    set.barrier(op, psync, false);
    if !fixed {
        ps.at(me, 2).set(0);
    }
}

/// Active-set all-to-all: block `me` of member `j`'s source goes to block `j` of `dest`.
///
/// # Safety
/// `dest` holds `n * size` writable elements.
unsafe fn alltoall<E: Element>(
    op: &str,
    (dest, source, n): (*mut E, *const E, usize),
    set: ActiveSet,
    psync: *mut c_long,
) {
    if set.is_world(op) {
        // SAFETY: forwarded contract (`source` holds `n * size` elements).
        unsafe { crate::coll::alltoall(op, world_team(), (dest, source, n)) };
        return;
    }
    set.barrier(op, psync, true);
    if n > 0 {
        // SAFETY: per this function's contract.
        let out = unsafe { dst(op, dest, n * set.size) };
        let s = sym(op, "source", source, n * set.size);
        for j in 0..set.size {
            s.get(
                set.pe(j),
                set.me * n..(set.me + 1) * n,
                &mut out[j * n..(j + 1) * n],
            );
        }
    }
    set.barrier(op, psync, false);
}

/// Active-set strided all-to-all.
///
/// # Safety
/// `dest` holds the elements its stride selects, writable.
unsafe fn alltoalls<E: Element>(
    op: &str,
    (dest, source): (*mut E, *const E),
    (dst_stride, sst): (isize, isize),
    n: usize,
    set: ActiveSet,
    psync: *mut c_long,
) {
    if set.is_world(op) {
        // SAFETY: forwarded contract (`source` holds the elements its stride selects).
        unsafe { crate::coll::alltoalls(op, world_team(), (dest, source), (dst_stride, sst), n) };
        return;
    }
    set.barrier(op, psync, true);
    if n > 0 {
        let (ds, ss) = (
            state::stride(op, "dest", dst_stride),
            state::stride(op, "source", sst),
        );
        let count = n * set.size;
        // SAFETY: per this function's contract.
        let out = unsafe { dst(op, dest, (count - 1) * ds + 1) };
        let s = sym(op, "source", source, (count - 1) * ss + 1);
        for j in 0..set.size {
            let from = set.me * n * ss;
            let to = j * n * ds;
            s.iget(
                set.pe(j),
                from..from + (n - 1) * ss + 1,
                ss,
                &mut out[to..to + (n - 1) * ds + 1],
                ds,
            );
        }
    }
    set.barrier(op, psync, false);
}

/// Generates the sized active-set collectives for 32- and 64-bit elements.
macro_rules! active_sized {
    ($($bits:tt: $t:ty),*) => { pastey::paste! { $(
        #[doc = concat!("`shmem_broadcast", stringify!($bits), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_broadcast $bits>](
            dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int,
            pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long,
        ) {
            let op = concat!("shmem_broadcast", stringify!($bits));
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            // SAFETY: forwarded C contract.
            unsafe {
                broadcast::<$t>(op, (dest.cast(), source.cast(), nelems), pe_root, set, psync)
            }
        }

        #[doc = concat!("`shmem_collect", stringify!($bits), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_collect $bits>](
            dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int,
            log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long,
        ) {
            let op = concat!("shmem_collect", stringify!($bits));
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            // SAFETY: forwarded C contract.
            unsafe { collect::<$t>(op, (dest.cast(), source.cast(), nelems), false, set, psync) }
        }

        #[doc = concat!("`shmem_fcollect", stringify!($bits), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_fcollect $bits>](
            dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int,
            log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long,
        ) {
            let op = concat!("shmem_fcollect", stringify!($bits));
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            // SAFETY: forwarded C contract.
            unsafe { collect::<$t>(op, (dest.cast(), source.cast(), nelems), true, set, psync) }
        }

        #[doc = concat!("`shmem_alltoall", stringify!($bits), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn [<shmem_alltoall $bits>](
            dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int,
            log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long,
        ) {
            let op = concat!("shmem_alltoall", stringify!($bits));
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            // SAFETY: forwarded C contract.
            unsafe { alltoall::<$t>(op, (dest.cast(), source.cast(), nelems), set, psync) }
        }

        #[doc = concat!("`shmem_alltoalls", stringify!($bits), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn [<shmem_alltoalls $bits>](
            dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize,
            pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long,
        ) {
            let op = concat!("shmem_alltoalls", stringify!($bits));
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            // SAFETY: forwarded C contract.
            unsafe {
                alltoalls::<$t>(op, (dest.cast(), source.cast()), (dst, sst), nelems, set, psync)
            }
        }
    )* } };
}

active_sized!(32: u32, 64: u64);

/// Active-set reduction: every member reduces all members' sources in member order (so every
/// member gets the same bits), then writes its `dest`.
///
/// # Safety
/// `dest` holds `n` writable elements.
unsafe fn to_all<E: Element>(
    op: &str,
    (dest, source, n): (*mut E, *const E, usize),
    set: ActiveSet,
    psync: *mut c_long,
    f: impl Fn(E, E) -> E,
) {
    set.barrier(op, psync, true);
    let mut acc: Vec<E> = Vec::new();
    if n > 0 {
        let s = sym(op, "source", source, n);
        // This PE's own source: the first buffer to get the others' into.
        // SAFETY: the source is `n` readable elements of this PE (C's contract).
        let mut buf: Vec<E> = unsafe { state::src(op, source, n) }.to_vec();
        for i in 0..set.size {
            if i != set.me {
                s.get(set.pe(i), .., &mut buf);
            } else {
                s.local_read(.., &mut buf);
            }
            if i == 0 {
                acc = buf.clone();
            } else {
                for (a, &b) in acc.iter_mut().zip(buf.iter()) {
                    *a = f(*a, b);
                }
            }
        }
    }
    set.barrier(op, psync, false);
    if n > 0 {
        // SAFETY: per this function's contract.
        unsafe { dst(op, dest, n) }.copy_from_slice(&acc);
    }
}

/// What [`world_operands`] gives: the world team, `dest` and the source.
type WorldOperands<E> = (
    &'static Team<'static>,
    SymSlice<'static, E>,
    Cow<'static, [E]>,
);

/// The world team, C's `dest` as a symmetric object of `n` elements and `source` (itself, or
/// a copy where it overlaps `dest`, so that `dest == source` works), for a broadcast or
/// reduction over a set of every PE; `None` when `n` is 0 (nothing to do).
///
/// # Safety
/// `source` holds `n` readable elements.
unsafe fn world_operands<E: Element>(
    op: &str,
    (dest, source, n): (*mut E, *const E, usize),
) -> Option<WorldOperands<E>> {
    if n == 0 {
        return None;
    }
    let d = sym(op, "dest", dest.cast_const(), n);
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, n, (dest, n * size_of::<E>())) };
    Some((&state::g(op).team_world.team, d, s))
}

/// One `shmem_TYPE_OP_to_all`: over a set of every PE the world team's reduction `$method`
/// (the same combination, in the same member order: bit-identical on every PE), else
/// [`to_all`] with `$f`.
macro_rules! to_all_fn {
    ($t:ty, $name:ident, $f:expr, $method:ident) => {
        #[doc = concat!("`", stringify!($name), "` (deprecated).")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            dest: *mut $t,
            source: *const $t,
            nreduce: c_int,
            pe_start: c_int,
            log_pe_stride: c_int,
            pe_size: c_int,
            _pwrk: *mut $t,
            psync: *mut c_long,
        ) {
            let op = stringify!($name);
            let set = ActiveSet::new(op, pe_start, log_pe_stride, pe_size);
            let n = usize::try_from(nreduce)
                .unwrap_or_else(|_| fatal!("{op}: nreduce {nreduce} is negative"));
            if set.is_world(op) {
                // SAFETY: forwarded C contract.
                if let Some((t, d, s)) = unsafe { world_operands(op, (dest, source, n)) } {
                    t.$method(&d, &s);
                }
                return;
            }
            // SAFETY: forwarded C contract.
            unsafe { to_all::<$t>(op, (dest, source, n), set, psync, $f) }
        }
    };
}

/// `and`, `or`, `xor` to_all.
macro_rules! to_all_bitwise {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        to_all_fn!($t, [<shmem_ $name _and_to_all>], <$t as ReduceBitwise>::and, and_reduce);
        to_all_fn!($t, [<shmem_ $name _or_to_all>], <$t as ReduceBitwise>::or, or_reduce);
        to_all_fn!($t, [<shmem_ $name _xor_to_all>], <$t as ReduceBitwise>::xor, xor_reduce);
    )* } };
}

/// `max`, `min` to_all.
macro_rules! to_all_minmax {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        to_all_fn!($t, [<shmem_ $name _max_to_all>], |a: $t, b: $t| if b > a { b } else { a }, max_reduce);
        to_all_fn!($t, [<shmem_ $name _min_to_all>], |a: $t, b: $t| if b < a { b } else { a }, min_reduce);
    )* } };
}

/// `sum`, `prod` to_all.
macro_rules! to_all_sum {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        to_all_fn!($t, [<shmem_ $name _sum_to_all>], <$t as ReduceSum>::sum, sum_reduce);
        to_all_fn!($t, [<shmem_ $name _prod_to_all>], <$t as ReduceSum>::prod, prod_reduce);
    )* } };
}

to_all_bitwise_types!(to_all_bitwise);
to_all_minmax_types!(to_all_minmax);
to_all_sum_types!(to_all_sum);
