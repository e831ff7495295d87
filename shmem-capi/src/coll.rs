//! Team collectives: `shmem_TYPE_{broadcast,collect,fcollect,alltoall,alltoalls}`, their `mem`
//! forms, the reductions `shmem_TYPE_{and,or,xor,max,min,sum,prod}_reduce`, and the scans
//! `shmem_TYPE_sum_{inscan,exscan}` (OpenSHMEM 1.6).
//!
//! The source is handed to the collective as it lies when it does not overlap `dest` (one copy
//! less at large sizes); C's in-place calls (`dest == source`) take the runtime's in-place
//! reductions, and the other overlapping calls copy the source first, so that the runtime never
//! reads memory it is writing.

use crate::state::{ShmemTeam, TeamEntry, src, stride, sym, team_or_invalid};
use shmem_core::prelude::*;
use std::borrow::Cow;
use std::ffi::{c_int, c_void};

/// The team, or `None` for `SHMEM_TEAM_INVALID` (the call then does nothing and returns -1).
/// `n` elements for each member of the team `t`, or the end of the job when that overflows.
fn per_team(op: &str, n: usize, t: &TeamEntry) -> usize {
    let members = t.team.n_pes();
    n.checked_mul(members).unwrap_or_else(|| {
        fatal!("{op}: {n} elements for each of {members} PEs overflow the address space")
    })
}

fn team(op: &str, h: ShmemTeam) -> Option<&'static TeamEntry> {
    team_or_invalid(op, h)
}

/// A copy of C's source buffer.
///
/// # Safety
/// `p` holds `n` readable elements.
unsafe fn copy_of<E: Element>(op: &str, p: *const E, n: usize) -> Vec<E> {
    // SAFETY: per this function's contract.
    unsafe { src(op, p, n) }.to_vec()
}

/// C's source of `n` elements as the collective reads it: the buffer itself when it does not
/// overlap the `dest_bytes` bytes at `dest`, a copy of it otherwise.
///
/// # Safety
/// `p` holds `n` readable elements, which nothing writes while the result lives unless they
/// overlap `dest`.
pub(crate) unsafe fn source_of<'a, E: Element>(
    op: &str,
    p: *const E,
    n: usize,
    (dest, dest_bytes): (*const E, usize),
) -> Cow<'a, [E]> {
    let (s, d) = (p as usize, dest as usize);
    let bytes = n.saturating_mul(size_of::<E>());
    let apart = s.saturating_add(bytes) <= d || d.saturating_add(dest_bytes) <= s;
    if apart {
        // SAFETY: per this function's contract (nothing writes a source apart from `dest`).
        Cow::Borrowed(unsafe { src(op, p, n) })
    } else {
        // SAFETY: per this function's contract.
        Cow::Owned(unsafe { copy_of(op, p, n) })
    }
}

/// The longest symmetric object of `E` that starts at `addr` (for `collect`, whose total length
/// only the collective itself learns). A `dest` outside symmetric memory (NULL, when every
/// member contributes nothing) is an empty object, which the runtime rejects if anything
/// arrives.
fn sym_to_end<E: Element>(op: &str, addr: *const E) -> SymSlice<'static, E> {
    let symmetric = |n: usize| {
        n.checked_mul(size_of::<E>())
            .and_then(|bytes| shmem_core::raw::offset_of(addr.cast(), bytes))
            .is_some()
    };
    if !symmetric(0) {
        let scratch = shmem_core::raw::local_addr(&crate::state::g(op).scratch);
        return sym(op, "dest", scratch.cast::<E>().cast_const(), 0);
    }
    let (mut lo, mut hi) = (0usize, 1usize << 40);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if symmetric(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    sym(op, "dest", addr, lo)
}

/// `shmem_broadcast`.
///
/// # Safety
/// `source` holds `n` readable elements.
pub(crate) unsafe fn broadcast<E: Element>(
    op: &str,
    h: ShmemTeam,
    (dest, source, n): (*mut E, *const E, usize),
    root: c_int,
) -> c_int {
    let Some(t) = team(op, h) else { return -1 };
    let size = t.team.n_pes();
    let root = match usize::try_from(root) {
        Ok(r) if r < size => r,
        _ => fatal!("{op}: PE_root {root} is out of range: the team has {size} PEs"),
    };
    if n == 0 {
        return 0;
    }
    let d = sym(op, "dest", dest, n);
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, n, (dest, d.len() * size_of::<E>())) };
    t.team.broadcast(&d, &s, root);
    0
}

/// `shmem_collect`.
///
/// # Safety
/// `source` holds `n` readable elements.
pub(crate) unsafe fn collect<E: Element>(
    op: &str,
    h: ShmemTeam,
    (dest, source, n): (*mut E, *const E, usize),
) -> c_int {
    let Some(t) = team(op, h) else { return -1 };
    let d = sym_to_end(op, dest);
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, n, (dest, d.len() * size_of::<E>())) };
    t.team.collect(&d, &s);
    0
}

/// `shmem_fcollect`.
///
/// # Safety
/// `source` holds `n` readable elements.
pub(crate) unsafe fn fcollect<E: Element>(
    op: &str,
    h: ShmemTeam,
    (dest, source, n): (*mut E, *const E, usize),
) -> c_int {
    let Some(t) = team(op, h) else { return -1 };
    if n == 0 {
        return 0;
    }
    let d = sym(op, "dest", dest, per_team(op, n, t));
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, n, (dest, d.len() * size_of::<E>())) };
    t.team.fcollect(&d, &s);
    0
}

/// `shmem_alltoall`.
///
/// # Safety
/// `source` holds `n * team size` readable elements.
pub(crate) unsafe fn alltoall<E: Element>(
    op: &str,
    h: ShmemTeam,
    (dest, source, n): (*mut E, *const E, usize),
) -> c_int {
    let Some(t) = team(op, h) else { return -1 };
    if n == 0 {
        return 0;
    }
    let all = per_team(op, n, t);
    let d = sym(op, "dest", dest, all);
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, all, (dest, d.len() * size_of::<E>())) };
    t.team.alltoall(&d, &s);
    0
}

/// `shmem_alltoalls`.
///
/// # Safety
/// `source` holds the elements its stride selects for the whole team.
pub(crate) unsafe fn alltoalls<E: Element>(
    op: &str,
    h: ShmemTeam,
    (dest, source): (*mut E, *const E),
    (dst, sst): (isize, isize),
    n: usize,
) -> c_int {
    let Some(t) = team(op, h) else { return -1 };
    if n == 0 {
        t.team.sync();
        return 0;
    }
    let (dst, sst) = (stride(op, "dest", dst), stride(op, "source", sst));
    let count = per_team(op, n, t);
    let span = |stride: usize| {
        (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(1))
            .unwrap_or_else(|| fatal!("{op}: {count} elements at stride {stride} overflow"))
    };
    let d = sym(op, "dest", dest, span(dst));
    // SAFETY: per this function's contract.
    let s = unsafe { source_of(op, source, span(sst), (dest, d.len() * size_of::<E>())) };
    t.team.alltoalls(&d, dst, &s, sst, n);
    0
}

/// The data-movement collectives of one type (`$pt`: the C pointer's element type).
macro_rules! coll_fns {
    ($t:ty, $pt:ty, $bcast:ident $collect:ident $fcollect:ident $a2a:ident $a2as:ident) => {
        #[doc = concat!("`", stringify!($bcast), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $bcast(
            team: ShmemTeam, dest: *mut $pt, source: *const $pt, nelems: usize, pe_root: c_int,
        ) -> c_int {
            // SAFETY: forwarded C contract.
            unsafe {
                broadcast::<$t>(stringify!($bcast), team, (dest.cast(), source.cast(), nelems),
                    pe_root)
            }
        }

        coll_fns!(@plain $t, $pt, $collect collect);
        coll_fns!(@plain $t, $pt, $fcollect fcollect);
        coll_fns!(@plain $t, $pt, $a2a alltoall);

        #[doc = concat!("`", stringify!($a2as), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $a2as(
            team: ShmemTeam, dest: *mut $pt, source: *const $pt, dst: isize, sst: isize,
            nelems: usize,
        ) -> c_int {
            // SAFETY: forwarded C contract.
            unsafe {
                alltoalls::<$t>(stringify!($a2as), team, (dest.cast(), source.cast()), (dst, sst),
                    nelems)
            }
        }
    };
    (@plain $t:ty, $pt:ty, $name:ident $f:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            team: ShmemTeam, dest: *mut $pt, source: *const $pt, nelems: usize,
        ) -> c_int {
            // SAFETY: forwarded C contract.
            unsafe { $f::<$t>(stringify!($name), team, (dest.cast(), source.cast(), nelems)) }
        }
    };
}

/// The typed data-movement collectives.
macro_rules! coll_typed {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        coll_fns!($t, $t, [<shmem_ $name _broadcast>] [<shmem_ $name _collect>]
            [<shmem_ $name _fcollect>] [<shmem_ $name _alltoall>] [<shmem_ $name _alltoalls>]);
    )* } };
}

rma_types!(coll_typed);
coll_fns!(u8, c_void, shmem_broadcastmem shmem_collectmem shmem_fcollectmem shmem_alltoallmem
    shmem_alltoallsmem);

/// One team reduction.
macro_rules! reduce_fn {
    ($t:ty, $name:ident, $method:ident $(, $in_place:ident)?) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// `source` holds `nreduce` readable elements.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            team: ShmemTeam,
            dest: *mut $t,
            source: *const $t,
            nreduce: usize,
        ) -> c_int {
            let op = stringify!($name);
            let Some(t) = team_or_invalid(op, team) else {
                return -1;
            };
            if nreduce == 0 {
                return 0;
            }
            let d = sym(op, "dest", dest, nreduce);
            $(
                if std::ptr::eq(dest.cast_const(), source) {
                    t.team.$in_place(&d);
                    return 0;
                }
            )?
            // SAFETY: per the C contract.
            let s = unsafe { source_of(op, source, nreduce, (dest, nreduce * size_of::<$t>())) };
            t.team.$method(&d, &s);
            0
        }
    };
}

/// `and`, `or`, `xor` reductions.
macro_rules! reduce_bitwise {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        reduce_fn!($t, [<shmem_ $name _and_reduce>], and_reduce, and_reduce_in_place);
        reduce_fn!($t, [<shmem_ $name _or_reduce>], or_reduce, or_reduce_in_place);
        reduce_fn!($t, [<shmem_ $name _xor_reduce>], xor_reduce, xor_reduce_in_place);
    )* } };
}

/// `max`, `min` reductions.
macro_rules! reduce_minmax {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        reduce_fn!($t, [<shmem_ $name _max_reduce>], max_reduce, max_reduce_in_place);
        reduce_fn!($t, [<shmem_ $name _min_reduce>], min_reduce, min_reduce_in_place);
    )* } };
}

/// `sum`, `prod` reductions.
macro_rules! reduce_sum {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        reduce_fn!($t, [<shmem_ $name _sum_reduce>], sum_reduce, sum_reduce_in_place);
        reduce_fn!($t, [<shmem_ $name _prod_reduce>], prod_reduce, prod_reduce_in_place);
    )* } };
}

/// The scans (OpenSHMEM 1.6): `sum_inscan` and `sum_exscan`, over the types of `sum`.
macro_rules! scan_sum {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        reduce_fn!($t, [<shmem_ $name _sum_inscan>], sum_inscan);
        reduce_fn!($t, [<shmem_ $name _sum_exscan>], sum_exscan);
    )* } };
}

reduce_bitwise_types!(reduce_bitwise);
reduce_minmax_types!(reduce_minmax);
reduce_sum_types!(reduce_sum);
reduce_sum_types!(scan_sum);
