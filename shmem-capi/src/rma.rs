//! Remote memory access: `shmem_TYPE_{put,get,p,g,iput,iget}`, their `_nbi`, `_signal` and
//! `shmem_ctx_` forms, and the sized forms (`shmem_put32`, `shmem_getmem`, ...).

use crate::state::{self, ShmemCtx, dst, src, stride, sym};
use shmem_core::prelude::*;
use shmem_core::{Element, raw};
use std::ffi::{c_int, c_void};

/// `SHMEM_CTX_DEFAULT` as a handle, for the functions without a context argument.
pub(crate) const DEFAULT: ShmemCtx = std::ptr::without_provenance_mut(state::CTX_DEFAULT);

/// `shmem_put`: inline, the one element to a peer mapped here ([`state::fast`],
/// [`raw::Located::is_plain`]: a store); everything else out of line, in [`put_out`].
///
/// # Safety
/// `source` holds `n` readable elements (C's contract).
#[inline(always)]
pub(crate) unsafe fn put<E: Element>(
    op: &'static str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n == 1
        && !source.is_null()
        && let Some(d) = state::fast(c, dest, 1, pe)
        && d.is_plain()
    {
        // SAFETY: per this function's contract.
        return unsafe { d.put(source) };
    }
    // SAFETY: per this function's contract.
    unsafe { put_out(op, c, dest, source, n, pe) }
}

/// [`put`] out of line: the fast path ([`state::fast`]) for the default context, else
/// [`put_general`].
///
/// # Safety
/// As [`put`].
#[inline(never)]
// Rust values through the C ABI, from Rust to Rust: an `extern "C"` function does not
// unwind, so the entry point can jump to it (a tail call) instead of keeping a frame.
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn put_out<E: Element>(
    op: &'static str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n != 0
        && !source.is_null()
        && let Some(d) = state::fast(c, dest, n, pe)
    {
        // SAFETY: per this function's contract.
        return unsafe { d.put(source) };
    }
    // SAFETY: per this function's contract.
    unsafe { put_general(op, c, dest, source, n, pe) }
}

/// `shmem_put` with every check and its message, for any context.
///
/// # Safety
/// As [`put`].
#[inline(never)]
unsafe fn put_general<E: Element>(
    op: &str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let d = sym(op, "dest", dest, n);
    // SAFETY: per this function's contract.
    let s = unsafe { src(op, source, n) };
    c.ctx.put(&d, pe, .., s);
}

/// `shmem_get`: inline, the one element from a peer mapped here in a job without UCX peers
/// ([`raw::Located::is_plain`]: a load); everything else out of line, in [`get_out`].
///
/// # Safety
/// `dest` holds `n` writable elements that nothing else touches during the call.
#[inline(always)]
pub(crate) unsafe fn get<E: Element>(
    op: &'static str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n == 1
        && !dest.is_null()
        && let Some(s) = state::fast(c, source, 1, pe)
        && s.is_plain()
    {
        // SAFETY: per this function's contract.
        return unsafe { s.get(dest) };
    }
    // SAFETY: per this function's contract.
    unsafe { get_out(op, c, dest, source, n, pe) }
}

/// [`get`] out of line: the fast path ([`state::fast`]) for the default context, else
/// [`get_general`].
///
/// # Safety
/// As [`get`].
#[inline(never)]
// Rust values through the C ABI, from Rust to Rust: an `extern "C"` function does not
// unwind, so the entry point can jump to it (a tail call) instead of keeping a frame.
#[allow(improper_ctypes_definitions)]
unsafe extern "C" fn get_out<E: Element>(
    op: &'static str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n != 0
        && !dest.is_null()
        && let Some(s) = state::fast(c, source, n, pe)
    {
        // SAFETY: per this function's contract.
        return unsafe { s.get(dest) };
    }
    // SAFETY: per this function's contract.
    unsafe { get_general(op, c, dest, source, n, pe) }
}

/// `shmem_get` with every check and its message, for any context.
///
/// # Safety
/// As [`get`].
#[inline(never)]
unsafe fn get_general<E: Element>(
    op: &str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let s = sym(op, "source", source, n);
    // SAFETY: per this function's contract.
    let d = unsafe { dst(op, dest, n) };
    c.ctx.get(&s, pe, .., d);
}

/// `shmem_p`: inline, a peer mapped here ([`raw::Located::is_plain`]: a store); everything
/// else out of line, in [`p_out`].
#[inline(always)]
pub(crate) fn p<E: Element>(op: &'static str, c: ShmemCtx, dest: *mut E, value: E, pe: c_int) {
    match state::fast(c, dest, 1, pe) {
        Some(d) if d.is_plain() => d.p(value),
        _ => p_out(op, c, dest, value, pe),
    }
}

/// [`p`] out of line: the fast path ([`state::fast`]) for the default context, else
/// [`p_general`].
#[inline(never)]
// Rust values through the C ABI, from Rust to Rust: an `extern "C"` function does not
// unwind, so the entry point can jump to it (a tail call) instead of keeping a frame.
#[allow(improper_ctypes_definitions)]
extern "C" fn p_out<E: Element>(op: &'static str, c: ShmemCtx, dest: *mut E, value: E, pe: c_int) {
    match state::fast(c, dest, 1, pe) {
        Some(d) => d.p(value),
        None => p_general(op, c, dest, value, pe),
    }
}

/// `shmem_p` with every check and its message, for any context.
#[inline(never)]
fn p_general<E: Element>(op: &str, c: ShmemCtx, dest: *mut E, value: E, pe: c_int) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    let d = sym(op, "dest", dest, 1);
    c.ctx.p(&d, pe, 0, value);
}

/// `shmem_g`: inline, a peer mapped here in a job without UCX peers
/// ([`raw::Located::is_plain`]: a load); everything else out of line, in [`g_out`].
#[inline(always)]
pub(crate) fn g<E: Element>(op: &'static str, c: ShmemCtx, source: *const E, pe: c_int) -> E {
    match state::fast(c, source, 1, pe) {
        Some(s) if s.is_plain() => s.g(),
        _ => g_out(op, c, source, pe),
    }
}

/// [`g`] out of line: the fast path ([`state::fast`]) for the default context, else
/// [`g_general`].
#[inline(never)]
// Rust values through the C ABI, from Rust to Rust: an `extern "C"` function does not
// unwind, so the entry point can jump to it (a tail call) instead of keeping a frame.
#[allow(improper_ctypes_definitions)]
extern "C" fn g_out<E: Element>(op: &'static str, c: ShmemCtx, source: *const E, pe: c_int) -> E {
    match state::fast(c, source, 1, pe) {
        Some(s) => s.g(),
        None => g_general(op, c, source, pe),
    }
}

/// `shmem_g` with every check and its message, for any context.
#[inline(never)]
fn g_general<E: Element>(op: &str, c: ShmemCtx, source: *const E, pe: c_int) -> E {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    let s = sym(op, "source", source, 1);
    c.ctx.g(&s, pe, 0)
}

/// Elements spanned by `n` elements at stride `s` (`(n - 1) * s + 1`).
fn span(op: &str, n: usize, s: usize) -> usize {
    match (n - 1).checked_mul(s).and_then(|x| x.checked_add(1)) {
        Some(v) => v,
        None => fatal!("{op}: {n} elements at stride {s} overflow the address space"),
    }
}

/// `shmem_iput`.
///
/// # Safety
/// `source` holds the `n` readable elements at stride `sst`.
pub(crate) unsafe fn iput<E: Element>(
    op: &str,
    c: ShmemCtx,
    (dest, tst): (*mut E, isize),
    (source, sst): (*const E, isize),
    n: usize,
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let (tst, sst) = (stride(op, "target", tst), stride(op, "source", sst));
    let d = sym(op, "dest", dest, span(op, n, tst));
    // SAFETY: per this function's contract.
    let s = unsafe { src(op, source, span(op, n, sst)) };
    c.ctx.iput(&d, pe, .., tst, s, sst);
}

/// `shmem_iget`.
///
/// # Safety
/// `dest` holds the `n` writable elements at stride `dst`, and nothing else touches its span
/// during the call.
pub(crate) unsafe fn iget<E: Element>(
    op: &str,
    c: ShmemCtx,
    (dest, dst_stride): (*mut E, isize),
    (source, sst): (*const E, isize),
    n: usize,
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let (dstr, sst) = (stride(op, "target", dst_stride), stride(op, "source", sst));
    let s = sym(op, "source", source, span(op, n, sst));
    // SAFETY: per this function's contract.
    let d = unsafe { dst(op, dest, span(op, n, dstr)) };
    c.ctx.iget(&s, pe, .., sst, d, dstr);
}

/// Elements spanned by `nblocks` blocks of `bsize` elements, one every `s` elements
/// (`(nblocks - 1) * s + bsize`).
fn block_span(op: &str, (bsize, nblocks): (usize, usize), s: usize) -> usize {
    match (nblocks - 1)
        .checked_mul(s)
        .and_then(|x| x.checked_add(bsize))
    {
        Some(v) => v,
        None => fatal!(
            "{op}: {nblocks} blocks of {bsize} elements at stride {s} overflow the address space"
        ),
    }
}

/// The block strides of `shmem_ibput`/`shmem_ibget`, checked: positive and at least `bsize`.
fn block_strides(op: &str, bsize: usize, (tst, sst): (isize, isize)) -> (usize, usize) {
    let (tst, sst) = (stride(op, "dest", tst), stride(op, "source", sst));
    for (which, s) in [("dest", tst), ("source", sst)] {
        if s < bsize {
            fatal!(
                "{op}: the {which} stride {s} is less than the block size {bsize}; blocks may not \
                 overlap"
            );
        }
    }
    (tst, sst)
}

/// `shmem_ibput` (1.6): `nblocks` blocks of `bsize` elements, the blocks `dst` elements apart at
/// `dest` and `sst` apart at `source`.
///
/// # Safety
/// `source` holds the blocks, readable.
pub(crate) unsafe fn ibput<E: Element>(
    op: &str,
    c: ShmemCtx,
    (dest, tst): (*mut E, isize),
    (source, sst): (*const E, isize),
    (bsize, nblocks): (usize, usize),
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if bsize == 0 || nblocks == 0 {
        return;
    }
    let (tst, sst) = block_strides(op, bsize, (tst, sst));
    let d = sym(op, "dest", dest, block_span(op, (bsize, nblocks), tst));
    // SAFETY: per this function's contract.
    let s = unsafe { src(op, source, block_span(op, (bsize, nblocks), sst)) };
    c.ctx.ibput(&d, pe, .., tst, s, sst, bsize);
}

/// `shmem_ibget` (1.6): as [`ibput`] in the other direction.
///
/// # Safety
/// `dest` holds the blocks, writable, and nothing else touches its span during the call.
pub(crate) unsafe fn ibget<E: Element>(
    op: &str,
    c: ShmemCtx,
    (dest, dst_stride): (*mut E, isize),
    (source, sst): (*const E, isize),
    (bsize, nblocks): (usize, usize),
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if bsize == 0 || nblocks == 0 {
        return;
    }
    let (dstr, sst) = block_strides(op, bsize, (dst_stride, sst));
    let s = sym(op, "source", source, block_span(op, (bsize, nblocks), sst));
    // SAFETY: per this function's contract.
    let d = unsafe { dst(op, dest, block_span(op, (bsize, nblocks), dstr)) };
    c.ctx.ibget(&s, pe, .., sst, d, dstr, bsize);
}

/// `shmem_put_nbi`: on the default context the fast path ([`state::fast`]: a copy to a
/// mapped peer, complete at once), else the general path with every check.
///
/// # Safety
/// `source` holds `n` readable elements that stay unchanged until the next quiet.
pub(crate) unsafe fn put_nbi<E: Element>(
    op: &str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n != 0
        && !source.is_null()
        && let Some(d) = state::fast(c, dest, n, pe)
    {
        // SAFETY: per this function's contract.
        return unsafe { d.put_nbi(source) };
    }
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let d = sym(op, "dest", dest, n);
    // SAFETY: per this function's contract, which is raw::put_nbi's.
    unsafe { raw::put_nbi(Some(&c.ctx), &d, pe, source, n) }
}

/// `shmem_get_nbi`: on the default context the fast path ([`state::fast`]: a copy from a
/// mapped peer, complete at once), else the general path with every check.
///
/// # Safety
/// `dest` holds `n` writable elements that nothing touches until the next quiet.
pub(crate) unsafe fn get_nbi<E: Element>(
    op: &str,
    c: ShmemCtx,
    dest: *mut E,
    source: *const E,
    n: usize,
    pe: c_int,
) {
    if n != 0
        && !dest.is_null()
        && let Some(s) = state::fast(c, source, n, pe)
    {
        // SAFETY: per this function's contract.
        return unsafe { s.get_nbi(dest) };
    }
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    if n == 0 {
        return;
    }
    let s = sym(op, "source", source, n);
    // SAFETY: per this function's contract, which is raw::get_nbi's.
    unsafe { raw::get_nbi(Some(&c.ctx), &s, pe, dest, n) }
}

/// `shmem_put_signal` (the `_nbi` form completes before it returns, as the standard allows).
///
/// # Safety
/// `source` holds `n` readable elements.
pub(crate) unsafe fn put_signal<E: Element>(
    op: &str,
    c: ShmemCtx,
    (dest, source, n): (*mut E, *const E, usize),
    (sig_addr, signal, sig_op): (*mut u64, u64, c_int),
    pe: c_int,
) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    let sig = sym(op, "sig_addr", sig_addr, 1);
    let sop = match sig_op {
        0 => SignalOp::Set(signal),
        1 => SignalOp::Add(signal),
        _ => fatal!("{op}: sig_op {sig_op} is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD"),
    };
    if n == 0 {
        match sop {
            SignalOp::Set(v) => sig.signal(0).set(pe, v),
            SignalOp::Add(v) => sig.signal(0).add(pe, v),
        }
        return;
    }
    let d = sym(op, "dest", dest, n);
    // SAFETY: per this function's contract.
    let s = unsafe { src(op, source, n) };
    c.ctx.put_signal(&d, pe, .., s, sig.signal(0), sop);
}

/// Generates the block transfers of one type: put, get, their `_nbi` and `_signal` forms, iput,
/// iget, each with its `shmem_ctx_` form. `$pt` is the C pointer's element type (`c_void` for
/// `shmem_putmem`).
macro_rules! rma_block {
    ($t:ty, $pt:ty, $put:ident $cput:ident $get:ident $cget:ident $putn:ident $cputn:ident
     $getn:ident $cgetn:ident $iput:ident $ciput:ident $iget:ident $ciget:ident
     $ps:ident $cps:ident $psn:ident $cpsn:ident) => {
        rma_block!(@pair $t, $pt, $put $cput, put, (dest: *mut $pt, source: *const $pt),
            (dest.cast(), source.cast()));
        rma_block!(@pair $t, $pt, $get $cget, get, (dest: *mut $pt, source: *const $pt),
            (dest.cast(), source.cast()));
        rma_block!(@pair $t, $pt, $putn $cputn, put_nbi, (dest: *mut $pt, source: *const $pt),
            (dest.cast(), source.cast()));
        rma_block!(@pair $t, $pt, $getn $cgetn, get_nbi, (dest: *mut $pt, source: *const $pt),
            (dest.cast(), source.cast()));
        rma_block!(@strided $t, $pt, $iput $ciput, iput);
        rma_block!(@strided $t, $pt, $iget $ciget, iget);
        rma_block!(@signal $t, $pt, $ps $cps);
        rma_block!(@signal $t, $pt, $psn $cpsn);
    };
    (@pair $t:ty, $pt:ty, $name:ident $cname:ident, $f:ident, ($($arg:ident: $at:ty),*),
     ($($pass:expr),*)) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $at,)* nelems: usize, pe: c_int) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe { $f::<$t>(stringify!($name), DEFAULT, $($pass,)* nelems, pe) }
        }

        #[doc = concat!("`", stringify!($cname), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cname(ctx: ShmemCtx, $($arg: $at,)* nelems: usize, pe: c_int) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe { $f::<$t>(stringify!($cname), ctx, $($pass,)* nelems, pe) }
        }
    };
    (@strided $t:ty, $pt:ty, $name:ident $cname:ident, $f:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dest: *mut $pt, source: *const $pt, dst: isize, sst: isize, nelems: usize, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                $f::<$t>(stringify!($name), DEFAULT, (dest.cast(), dst), (source.cast(), sst),
                    nelems, pe)
            }
        }

        #[doc = concat!("`", stringify!($cname), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cname(
            ctx: ShmemCtx, dest: *mut $pt, source: *const $pt, dst: isize, sst: isize,
            nelems: usize, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                $f::<$t>(stringify!($cname), ctx, (dest.cast(), dst), (source.cast(), sst),
                    nelems, pe)
            }
        }
    };
    (@blocked $t:ty, $pt:ty, $name:ident $cname:ident, $f:ident) => {
        #[doc = concat!("`", stringify!($name), "` (OpenSHMEM 1.6).")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dest: *mut $pt, source: *const $pt, dst: isize, sst: isize, bsize: usize,
            nblocks: usize, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                $f::<$t>(stringify!($name), DEFAULT, (dest.cast(), dst), (source.cast(), sst),
                    (bsize, nblocks), pe)
            }
        }

        #[doc = concat!("`", stringify!($cname), "` (OpenSHMEM 1.6).")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cname(
            ctx: ShmemCtx, dest: *mut $pt, source: *const $pt, dst: isize, sst: isize,
            bsize: usize, nblocks: usize, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                $f::<$t>(stringify!($cname), ctx, (dest.cast(), dst), (source.cast(), sst),
                    (bsize, nblocks), pe)
            }
        }
    };
    (@signal $t:ty, $pt:ty, $name:ident $cname:ident) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dest: *mut $pt, source: *const $pt, nelems: usize, sig_addr: *mut u64, signal: u64,
            sig_op: c_int, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                put_signal::<$t>(stringify!($name), DEFAULT,
                    (dest.cast(), source.cast(), nelems), (sig_addr, signal, sig_op), pe)
            }
        }

        #[doc = concat!("`", stringify!($cname), "`.")]
        ///
        /// # Safety
        /// The C standard's contract for the call's buffers.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cname(
            ctx: ShmemCtx, dest: *mut $pt, source: *const $pt, nelems: usize, sig_addr: *mut u64,
            signal: u64, sig_op: c_int, pe: c_int,
        ) {
            // SAFETY: the caller keeps C's contract for the local buffer.
            unsafe {
                put_signal::<$t>(stringify!($cname), ctx,
                    (dest.cast(), source.cast(), nelems), (sig_addr, signal, sig_op), pe)
            }
        }
    };
}

/// `shmem_TYPE_p` and `shmem_TYPE_g`, which pass an element by value. Not for `long double`,
/// whose x87 calling convention Rust cannot express: `shmem.h` defines those two as inline
/// functions over `shmem_longdouble_put`/`_get`.
macro_rules! rma_elem {
    (longdouble, $t:ty) => {};
    ($name:ident, $t:ty) => {
        pastey::paste! {
            #[doc = concat!("`shmem_", stringify!($name), "_p`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _p>](dest: *mut $t, value: $t, pe: c_int) {
                p(concat!("shmem_", stringify!($name), "_p"), DEFAULT, dest, value, pe)
            }

            #[doc = concat!("`shmem_ctx_", stringify!($name), "_p`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ctx_ $name _p>](
                ctx: ShmemCtx, dest: *mut $t, value: $t, pe: c_int,
            ) {
                p(concat!("shmem_ctx_", stringify!($name), "_p"), ctx, dest, value, pe)
            }

            #[doc = concat!("`shmem_", stringify!($name), "_g`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _g>](source: *const $t, pe: c_int) -> $t {
                g(concat!("shmem_", stringify!($name), "_g"), DEFAULT, source, pe)
            }

            #[doc = concat!("`shmem_ctx_", stringify!($name), "_g`.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ctx_ $name _g>](
                ctx: ShmemCtx, source: *const $t, pe: c_int,
            ) -> $t {
                g(concat!("shmem_ctx_", stringify!($name), "_g"), ctx, source, pe)
            }
        }
    };
}

/// The typed RMA functions of every standard RMA type.
macro_rules! rma_typed {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        rma_block!($t, $t,
            [<shmem_ $name _put>] [<shmem_ctx_ $name _put>]
            [<shmem_ $name _get>] [<shmem_ctx_ $name _get>]
            [<shmem_ $name _put_nbi>] [<shmem_ctx_ $name _put_nbi>]
            [<shmem_ $name _get_nbi>] [<shmem_ctx_ $name _get_nbi>]
            [<shmem_ $name _iput>] [<shmem_ctx_ $name _iput>]
            [<shmem_ $name _iget>] [<shmem_ctx_ $name _iget>]
            [<shmem_ $name _put_signal>] [<shmem_ctx_ $name _put_signal>]
            [<shmem_ $name _put_signal_nbi>] [<shmem_ctx_ $name _put_signal_nbi>]);

        rma_block!(@blocked $t, $t, [<shmem_ $name _ibput>] [<shmem_ctx_ $name _ibput>], ibput);
        rma_block!(@blocked $t, $t, [<shmem_ $name _ibget>] [<shmem_ctx_ $name _ibget>], ibget);
        rma_elem!($name, $t);
    )* } };
}

/// The sized RMA functions (`shmem_put32`, `shmem_putmem`, ...).
macro_rules! rma_sized {
    ($($n:tt: $t:ty),* $(,)?) => { pastey::paste! { $(
        rma_block!($t, c_void,
            [<shmem_put $n>] [<shmem_ctx_put $n>]
            [<shmem_get $n>] [<shmem_ctx_get $n>]
            [<shmem_put $n _nbi>] [<shmem_ctx_put $n _nbi>]
            [<shmem_get $n _nbi>] [<shmem_ctx_get $n _nbi>]
            [<shmem_iput $n>] [<shmem_ctx_iput $n>]
            [<shmem_iget $n>] [<shmem_ctx_iget $n>]
            [<shmem_put $n _signal>] [<shmem_ctx_put $n _signal>]
            [<shmem_put $n _signal_nbi>] [<shmem_ctx_put $n _signal_nbi>]);
    )* } };
}

/// The sized blocked strided forms (`shmem_ibput8` .. `shmem_ibput128`; OpenSHMEM 1.6 has no
/// `mem` form of these).
macro_rules! rma_sized_blocked {
    ($($n:tt: $t:ty),* $(,)?) => { pastey::paste! { $(
        rma_block!(@blocked $t, c_void, [<shmem_ibput $n>] [<shmem_ctx_ibput $n>], ibput);
        rma_block!(@blocked $t, c_void, [<shmem_ibget $n>] [<shmem_ctx_ibget $n>], ibget);
    )* } };
}

rma_types!(rma_typed);
sized_types!(rma_sized);
rma_sized_blocked! { 8: u8, 16: u16, 32: u32, 64: u64, 128: [u64; 2] }

/// `shmem_signal_fetch`: this PE's value of the signal word at `sig_addr`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    sym("shmem_signal_fetch", "sig_addr", sig_addr, 1)
        .signal(0)
        .fetch()
}

/// `shmem_signal_add` / `shmem_signal_set` and their context forms (1.6): updates the signal
/// word at `sig_addr` on `pe` without data.
fn signal_update(op: &str, c: ShmemCtx, sig_addr: *mut u64, (add, value): (bool, u64), pe: c_int) {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    let sig = sym(op, "sig_addr", sig_addr, 1);
    if add {
        c.ctx.signal_add(sig.signal(0), pe, value);
    } else {
        c.ctx.signal_set(sig.signal(0), pe, value);
    }
}

/// `shmem_signal_add` (1.6): atomically adds `signal` to the signal word at `sig_addr` on `pe`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_add(sig_addr: *mut u64, signal: u64, pe: c_int) {
    signal_update("shmem_signal_add", DEFAULT, sig_addr, (true, signal), pe);
}

/// `shmem_ctx_signal_add` (1.6).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_signal_add(ctx: ShmemCtx, sig_addr: *mut u64, signal: u64, pe: c_int) {
    signal_update("shmem_ctx_signal_add", ctx, sig_addr, (true, signal), pe);
}

/// `shmem_signal_set` (1.6): atomically writes `signal` into the signal word at `sig_addr` on
/// `pe`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_signal_set(sig_addr: *mut u64, signal: u64, pe: c_int) {
    signal_update("shmem_signal_set", DEFAULT, sig_addr, (false, signal), pe);
}

/// `shmem_ctx_signal_set` (1.6).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_signal_set(ctx: ShmemCtx, sig_addr: *mut u64, signal: u64, pe: c_int) {
    signal_update("shmem_ctx_signal_set", ctx, sig_addr, (false, signal), pe);
}
