//! Atomic memory operations: `shmem_TYPE_atomic_*` for the extended, standard and bitwise type
//! sets, their `shmem_ctx_` and fetching `_nbi` forms (which complete before they return, as the
//! standard allows), and the deprecated names of OpenSHMEM 1.3 (`shmem_long_fadd`, ...).

use crate::rma::DEFAULT;
use crate::state::{self, ShmemCtx, sym};
use shmem_core::prelude::*;
use shmem_core::{AmoBitwise, AmoExtended, AmoStandard, raw};
use std::ffi::c_int;

/// The word one AMO works on: the located word of the fast path, or the checked [`Remote`] of
/// the general path; the AMOs of both, so that each C function writes its operation once.
enum Target<'a, E> {
    Word(raw::LocatedWord<E>),
    Remote(Remote<'a, E>),
}

/// The AMOs of [`Target`] for the types with `$bound`.
macro_rules! target_ops {
    ($bound:ident: $($f:ident($($a:ident),*) -> $r:ty;)*) => {
        impl<E: $bound> Target<'_, E> {
            $(
                #[inline(always)]
                fn $f(self, $($a: E),*) -> $r {
                    match self {
                        Target::Word(w) => w.$f($($a),*),
                        Target::Remote(r) => r.$f($($a),*),
                    }
                }
            )*
        }
    };
}

target_ops!(AmoExtended:
    fetch() -> E;
    set(value) -> ();
    swap(value) -> E;
);
target_ops!(AmoStandard:
    compare_swap(cond, value) -> E;
    fetch_inc() -> E;
    inc() -> ();
    fetch_add(value) -> E;
    add(value) -> ();
);
target_ops!(AmoBitwise:
    fetch_and(value) -> E;
    and(value) -> ();
    fetch_or(value) -> E;
    or(value) -> ();
    fetch_xor(value) -> E;
    xor(value) -> ();
);

/// Runs `f` on element `addr` of PE `pe` through context `c`: inline, an aligned element with
/// the default context on a peer mapped here in a job without UCX peers ([`state::fast`],
/// [`raw::LocatedWord::is_plain`]: one CPU atomic); everything else out of line, in
/// [`amo_out`]. `inline` and `out` are the same operation (the macros below write it once for
/// both): two closures, so that the inline one has one caller and is inlined.
#[inline(always)]
fn amo<E: AmoExtended, R>(
    op: &'static &'static str,
    c: ShmemCtx,
    addr: *const E,
    pe: c_int,
    (inline, out): (
        impl FnOnce(Target<'_, E>) -> R,
        impl FnOnce(Target<'_, E>) -> R,
    ),
) -> R {
    match state::fast(c, addr, 1, pe).and_then(|l| l.word()) {
        Some(w) if w.is_plain() => inline(Target::Word(w)),
        _ => amo_out(op, c, addr, pe, out),
    }
}

/// [`amo`] out of line: the located word ([`state::fast`]) for an aligned element with the
/// default context, else [`amo_general`].
#[inline(never)]
// Rust values through the C ABI, from Rust to Rust: an `extern "C"` function does not
// unwind, so the entry point can jump to it (a tail call) instead of keeping a frame.
#[allow(improper_ctypes_definitions)]
extern "C" fn amo_out<E: AmoExtended, R>(
    op: &'static &'static str,
    c: ShmemCtx,
    addr: *const E,
    pe: c_int,
    f: impl FnOnce(Target<'_, E>) -> R,
) -> R {
    match state::fast(c, addr, 1, pe).and_then(|l| l.word()) {
        Some(w) => f(Target::Word(w)),
        None => amo_general(op, c, addr, pe, f),
    }
}

/// [`amo`] with every check and its message, for any context.
#[inline(never)]
fn amo_general<E: Element, R>(
    op: &'static str,
    c: ShmemCtx,
    addr: *const E,
    pe: c_int,
    f: impl FnOnce(Target<'_, E>) -> R,
) -> R {
    let c = state::ctx(op, c);
    let pe = c.pe(op, pe);
    let s = sym(op, "dest", addr, 1);
    if !(addr as usize).is_multiple_of(align_of::<E>()) {
        fatal!(
            "{op}: dest {addr:p} is not aligned for a {}-byte atomic",
            size_of::<E>()
        );
    }
    f(Target::Remote(c.ctx.at(&s, pe, 0)))
}

/// Stores the result of a fetching `_nbi` atomic.
///
/// # Safety
/// `fetch` is writable for one `E`.
#[inline]
unsafe fn store<E>(op: &str, fetch: *mut E, value: E) {
    if fetch.is_null() {
        fatal!("{op}: fetch is NULL");
    }
    // SAFETY: per this function's contract.
    unsafe { fetch.write(value) }
}

/// Generates one AMO in its plain and `shmem_ctx_` forms, and for fetching ones the two `_nbi`
/// forms. `|r, (args)| body` computes the result from the `Remote` `r`.
macro_rules! amo_fn {
    // A fetching AMO: `T name(dest, args.., pe)` plus `void name_nbi(fetch, dest, args.., pe)`.
    (fetch $t:ty, $name:ident $cname:ident $nbi:ident $cnbi:ident,
     |$r:ident $(, $arg:ident)*| $body:expr) => {
        amo_fn!(fetch $t, $name $cname, |$r $(, $arg)*| $body);

        #[doc = concat!("`", stringify!($nbi), "`.")]
        ///
        /// # Safety
        /// `fetch` is writable for one element.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nbi(fetch: *mut $t, dest: *mut $t, $($arg: $t,)* pe: c_int) {
            let v = amo(&stringify!($nbi), DEFAULT, dest, pe, (move |$r| $body, move |$r| $body));
            // SAFETY: the caller passes a writable `fetch`.
            unsafe { store(stringify!($nbi), fetch, v) }
        }

        #[doc = concat!("`", stringify!($cnbi), "`.")]
        ///
        /// # Safety
        /// `fetch` is writable for one element.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cnbi(
            ctx: ShmemCtx, fetch: *mut $t, dest: *mut $t, $($arg: $t,)* pe: c_int,
        ) {
            let v = amo(&stringify!($cnbi), ctx, dest, pe, (move |$r| $body, move |$r| $body));
            // SAFETY: the caller passes a writable `fetch`.
            unsafe { store(stringify!($cnbi), fetch, v) }
        }
    };
    (fetch $t:ty, $name:ident $cname:ident, |$r:ident $(, $arg:ident)*| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(dest: *mut $t, $($arg: $t,)* pe: c_int) -> $t {
            amo(&stringify!($name), DEFAULT, dest, pe, (move |$r| $body, move |$r| $body))
        }

        #[doc = concat!("`", stringify!($cname), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $cname(ctx: ShmemCtx, dest: *mut $t, $($arg: $t,)* pe: c_int) -> $t {
            amo(&stringify!($cname), ctx, dest, pe, (move |$r| $body, move |$r| $body))
        }
    };
    (void $t:ty, $name:ident $cname:ident, |$r:ident $(, $arg:ident)*| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(dest: *mut $t, $($arg: $t,)* pe: c_int) {
            amo(&stringify!($name), DEFAULT, dest, pe, (move |$r| $body, move |$r| $body))
        }

        #[doc = concat!("`", stringify!($cname), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $cname(ctx: ShmemCtx, dest: *mut $t, $($arg: $t,)* pe: c_int) {
            amo(&stringify!($cname), ctx, dest, pe, (move |$r| $body, move |$r| $body))
        }
    };
}

/// fetch, set, swap.
macro_rules! amo_extended {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        const _: () = { fn is<E: AmoExtended>() {} let _ = is::<$t>; };
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch>] [<shmem_ctx_ $name _atomic_fetch>]
            [<shmem_ $name _atomic_fetch_nbi>] [<shmem_ctx_ $name _atomic_fetch_nbi>],
            |r| r.fetch());
        amo_fn!(void $t, [<shmem_ $name _atomic_set>] [<shmem_ctx_ $name _atomic_set>],
            |r, value| r.set(value));
        amo_fn!(fetch $t, [<shmem_ $name _atomic_swap>] [<shmem_ctx_ $name _atomic_swap>]
            [<shmem_ $name _atomic_swap_nbi>] [<shmem_ctx_ $name _atomic_swap_nbi>],
            |r, value| r.swap(value));
    )* } };
}

/// compare_swap, fetch_inc, inc, fetch_add, add.
macro_rules! amo_standard {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        const _: () = { fn is<E: AmoStandard>() {} let _ = is::<$t>; };
        amo_fn!(fetch $t,
            [<shmem_ $name _atomic_compare_swap>] [<shmem_ctx_ $name _atomic_compare_swap>]
            [<shmem_ $name _atomic_compare_swap_nbi>]
            [<shmem_ctx_ $name _atomic_compare_swap_nbi>],
            |r, cond, value| r.compare_swap(cond, value));
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch_inc>] [<shmem_ctx_ $name _atomic_fetch_inc>]
            [<shmem_ $name _atomic_fetch_inc_nbi>] [<shmem_ctx_ $name _atomic_fetch_inc_nbi>],
            |r| r.fetch_inc());
        amo_fn!(void $t, [<shmem_ $name _atomic_inc>] [<shmem_ctx_ $name _atomic_inc>],
            |r| r.inc());
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch_add>] [<shmem_ctx_ $name _atomic_fetch_add>]
            [<shmem_ $name _atomic_fetch_add_nbi>] [<shmem_ctx_ $name _atomic_fetch_add_nbi>],
            |r, value| r.fetch_add(value));
        amo_fn!(void $t, [<shmem_ $name _atomic_add>] [<shmem_ctx_ $name _atomic_add>],
            |r, value| r.add(value));
    )* } };
}

/// fetch_and, and, fetch_or, or, fetch_xor, xor.
macro_rules! amo_bitwise {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        const _: () = { fn is<E: AmoBitwise>() {} let _ = is::<$t>; };
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch_and>] [<shmem_ctx_ $name _atomic_fetch_and>]
            [<shmem_ $name _atomic_fetch_and_nbi>] [<shmem_ctx_ $name _atomic_fetch_and_nbi>],
            |r, value| r.fetch_and(value));
        amo_fn!(void $t, [<shmem_ $name _atomic_and>] [<shmem_ctx_ $name _atomic_and>],
            |r, value| r.and(value));
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch_or>] [<shmem_ctx_ $name _atomic_fetch_or>]
            [<shmem_ $name _atomic_fetch_or_nbi>] [<shmem_ctx_ $name _atomic_fetch_or_nbi>],
            |r, value| r.fetch_or(value));
        amo_fn!(void $t, [<shmem_ $name _atomic_or>] [<shmem_ctx_ $name _atomic_or>],
            |r, value| r.or(value));
        amo_fn!(fetch $t, [<shmem_ $name _atomic_fetch_xor>] [<shmem_ctx_ $name _atomic_fetch_xor>]
            [<shmem_ $name _atomic_fetch_xor_nbi>] [<shmem_ctx_ $name _atomic_fetch_xor_nbi>],
            |r, value| r.fetch_xor(value));
        amo_fn!(void $t, [<shmem_ $name _atomic_xor>] [<shmem_ctx_ $name _atomic_xor>],
            |r, value| r.xor(value));
    )* } };
}

/// A deprecated name without a context form.
macro_rules! amo_old {
    (fetch $t:ty, $name:ident, |$r:ident $(, $arg:ident)*| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "` (deprecated).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(dest: *mut $t, $($arg: $t,)* pe: c_int) -> $t {
            amo(&stringify!($name), DEFAULT, dest, pe, (move |$r| $body, move |$r| $body))
        }
    };
    (void $t:ty, $name:ident, |$r:ident $(, $arg:ident)*| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "` (deprecated).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(dest: *mut $t, $($arg: $t,)* pe: c_int) {
            amo(&stringify!($name), DEFAULT, dest, pe, (move |$r| $body, move |$r| $body))
        }
    };
}

/// `shmem_TYPE_fetch`, `_set`, `_swap` (deprecated).
macro_rules! amo_old_extended {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        amo_old!(fetch $t, [<shmem_ $name _fetch>], |r| r.fetch());
        amo_old!(void $t, [<shmem_ $name _set>], |r, value| r.set(value));
        amo_old!(fetch $t, [<shmem_ $name _swap>], |r, value| r.swap(value));
    )* } };
}

/// `shmem_TYPE_cswap`, `_finc`, `_inc`, `_fadd`, `_add` (deprecated).
macro_rules! amo_old_standard {
    ($($name:ident: $t:ty),* $(,)?) => { pastey::paste! { $(
        amo_old!(fetch $t, [<shmem_ $name _cswap>], |r, cond, value| r.compare_swap(cond, value));
        amo_old!(fetch $t, [<shmem_ $name _finc>], |r| r.fetch_inc());
        amo_old!(void $t, [<shmem_ $name _inc>], |r| r.inc());
        amo_old!(fetch $t, [<shmem_ $name _fadd>], |r, value| r.fetch_add(value));
        amo_old!(void $t, [<shmem_ $name _add>], |r, value| r.add(value));
    )* } };
}

amo_extended_types!(amo_extended);
amo_standard_types!(amo_standard);
amo_bitwise_types!(amo_bitwise);
amo_deprecated_extended_types!(amo_old_extended);
amo_deprecated_standard_types!(amo_old_standard);
