//! Library setup, exit and query routines; ordering (`fence`, `quiet`) and the world-wide
//! synchronization (`barrier_all`, `sync_all`); `shmem_ptr` and the accessibility queries.

use crate::state::{self, ShmemCtx, g, world_pe};
use shmem_core::prelude::*;
use std::ffi::{c_char, c_int, c_void};

/// `shmem_init`: starts the runtime. While it runs, a further call (OpenSHMEM 1.6) only counts:
/// each needs its `shmem_finalize`, and the last one ends the library.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_init() {
    state::initialize(3);
}

/// `shmem_init_thread`: starts the runtime with a thread level; the level provided is the one
/// requested (by the first call, for a further one: OpenSHMEM 1.6, as `shmem_init`). Returns 0.
///
/// # Safety
/// `provided` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    let g = state::initialize(requested);
    if !provided.is_null() {
        // SAFETY: per the C contract.
        unsafe { provided.write(g.level) };
    }
    0
}

/// `shmem_query_thread`: the thread level provided.
///
/// # Safety
/// `provided` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_thread(provided: *mut c_int) {
    let level = g("shmem_query_thread").level;
    if !provided.is_null() {
        // SAFETY: per the C contract.
        unsafe { provided.write(level) };
    }
}

/// `shmem_finalize`: completes this PE's operations and, when it matches the last
/// initialization outstanding, finalizes the runtime (collective).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_finalize() {
    state::finalize();
}

/// `shmem_query_initialized` (1.6): nonzero in `*initialized` between an initialization and
/// the `shmem_finalize` that ends the library, zero before and after. Callable at any time.
///
/// # Safety
/// `initialized` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_query_initialized(initialized: *mut c_int) {
    if !initialized.is_null() {
        // SAFETY: per the C contract.
        unsafe { initialized.write(c_int::from(state::initialized())) };
    }
}

/// `start_pes` (deprecated): `shmem_init`, once (further calls do nothing, as before
/// OpenSHMEM 1.2).
#[unsafe(no_mangle)]
pub extern "C" fn start_pes(_npes: c_int) {
    if !state::initialized() {
        shmem_init();
    }
}

/// Defines the deprecated cache-management routines (OpenSHMEM 1.3 and earlier): no-ops, since
/// every machine this library runs on keeps its caches coherent (as Open MPI's oshmem does).
macro_rules! cache_noops {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty)?);)*) => {$(
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($arg: $ty)?) {
            $(let _ = $arg;)?
        }
    )*};
}

cache_noops! {
    /// `shmem_clear_cache_inv` (deprecated): a no-op.
    shmem_clear_cache_inv();
    /// `shmem_set_cache_inv` (deprecated): a no-op.
    shmem_set_cache_inv();
    /// `shmem_clear_cache_line_inv` (deprecated): a no-op.
    shmem_clear_cache_line_inv(dest: *mut c_void);
    /// `shmem_set_cache_line_inv` (deprecated): a no-op.
    shmem_set_cache_line_inv(dest: *mut c_void);
    /// `shmem_udcflush` (deprecated): a no-op.
    shmem_udcflush();
    /// `shmem_udcflush_line` (deprecated): a no-op.
    shmem_udcflush_line(dest: *mut c_void);
}

/// `shmem_global_exit`: ends every PE of the job with `status`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_global_exit(status: c_int) {
    match state::try_g() {
        Some(g) => g.world.global_exit(status),
        None => std::process::exit(status),
    }
}

/// `shmem_my_pe`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_my_pe() -> c_int {
    g("shmem_my_pe").world.my_pe() as c_int
}

/// `shmem_n_pes`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_n_pes() -> c_int {
    g("shmem_n_pes").world.n_pes() as c_int
}

/// `_my_pe` (deprecated).
#[unsafe(no_mangle)]
pub extern "C" fn _my_pe() -> c_int {
    shmem_my_pe()
}

/// `_num_pes` (deprecated).
#[unsafe(no_mangle)]
pub extern "C" fn _num_pes() -> c_int {
    shmem_n_pes()
}

/// `shmem_pe_accessible`: 1 for every PE of the job.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    let w = g("shmem_pe_accessible").world;
    c_int::from(usize::try_from(pe).is_ok_and(|p| w.pe_accessible(p)))
}

/// `shmem_addr_accessible`: 1 when `addr` is symmetric and `pe` is a PE of the job.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    g("shmem_addr_accessible");
    let symmetric = shmem_core::raw::offset_of(addr.cast(), 1).is_some();
    c_int::from(symmetric && shmem_pe_accessible(pe) == 1)
}

/// `shmem_ptr`: the address of PE `pe`'s copy of `dest` when it is mapped here, else NULL.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    let n = g("shmem_ptr").world.n_pes();
    match usize::try_from(pe) {
        Ok(p) if p < n => peer_ptr(dest, p),
        _ => std::ptr::null_mut(),
    }
}

/// World PE `pe`'s copy of the byte at `dest`, when mapped here.
pub(crate) fn peer_ptr(dest: *const c_void, pe: usize) -> *mut c_void {
    // SAFETY: only the address of the peer's copy is computed; C keeps `dest` symmetric.
    match unsafe { shmem_core::raw::sym::<u8>(dest.cast(), 1) } {
        Some(s) => s
            .peer_slice(pe)
            .map_or(std::ptr::null_mut(), |v| v.as_ptr().cast()),
        None => std::ptr::null_mut(),
    }
}

/// `shmem_info_get_version`: [`shmem_core::VERSION`], 1.6.
///
/// # Safety
/// Both pointers are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    let (ma, mi) = shmem_core::VERSION;
    // SAFETY: per the C contract.
    unsafe {
        major.write(ma as c_int);
        minor.write(mi as c_int);
    }
}

/// `shmem_info_get_name`: copies `SHMEM_VENDOR_STRING` (NUL-terminated) into `name`.
///
/// # Safety
/// `name` is writable for `SHMEM_MAX_NAME_LEN` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_info_get_name(name: *mut c_char) {
    let s = shmem_core::VENDOR_STRING.as_bytes();
    let n = s.len().min(shmem_core::MAX_NAME_LEN - 1);
    // SAFETY: `name` holds SHMEM_MAX_NAME_LEN bytes (C contract); `n + 1` fits.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), name.cast::<u8>(), n);
        name.add(n).write(0);
    }
}

/// `shmem_barrier_all`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_barrier_all() {
    g("shmem_barrier_all").world.barrier_all();
}

/// `shmem_sync_all`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_sync_all() {
    g("shmem_sync_all").world.sync_all();
}

/// `shmem_quiet`: inline, one fence where that is all it takes
/// ([`shmem_core::raw::quiet_if_plain`]); everything else out of line, in [`quiet_out`].
#[unsafe(no_mangle)]
pub extern "C" fn shmem_quiet() {
    if !shmem_core::raw::quiet_if_plain() {
        quiet_out();
    }
}

/// [`shmem_quiet`] out of line, with its checks (an `extern "C"` function, which does not
/// unwind: the entry point jumps to it).
#[inline(never)]
extern "C" fn quiet_out() {
    g("shmem_quiet").world.quiet();
}

/// `shmem_fence`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_fence() {
    g("shmem_fence").world.fence();
}

/// `shmem_ctx_quiet`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_quiet(ctx: ShmemCtx) {
    state::ctx("shmem_ctx_quiet", ctx).ctx.quiet();
}

/// `shmem_ctx_fence`.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_fence(ctx: ShmemCtx) {
    state::ctx("shmem_ctx_fence", ctx).ctx.fence();
}

/// `shmem_pe_quiet` (1.6): completes this PE's operations to the `npes` PEs in `target_pes`.
///
/// # Safety
/// `target_pes` holds `npes` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_pe_quiet(target_pes: *const c_int, npes: usize) {
    let op = "shmem_pe_quiet";
    // SAFETY: per the C contract.
    let pes = unsafe { state::src(op, target_pes, npes) };
    let pes: Vec<usize> = pes.iter().map(|&p| world_pe(op, p)).collect();
    g(op).world.pe_quiet(&pes);
}

/// `shmem_ctx_pe_quiet` (1.6): completes the operations of context `ctx` to the `npes` PEs in
/// `target_pes` (PE numbers of the context's team).
///
/// # Safety
/// `target_pes` holds `npes` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_pe_quiet(ctx: ShmemCtx, target_pes: *const c_int, npes: usize) {
    let op = "shmem_ctx_pe_quiet";
    let c = state::ctx(op, ctx);
    // SAFETY: per the C contract.
    let pes = unsafe { state::src(op, target_pes, npes) };
    let pes: Vec<usize> = pes.iter().map(|&p| c.pe(op, p)).collect();
    c.ctx.pe_quiet(&pes);
}

/// `shmem_ctx_session_start` (1.6): a hint that the program is about to issue a batch of
/// operations on `ctx`. The library needs none (small puts and atomics are not held back), so
/// it checks the context and otherwise does nothing; `SHMEM_CTX_INVALID` does nothing, as the
/// standard says.
///
/// # Safety
/// `config` is NULL or points to a `shmem_ctx_session_config_t` (it is not read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_ctx_session_start(
    ctx: ShmemCtx,
    _options: std::ffi::c_long,
    _config: *const c_void,
    _config_mask: std::ffi::c_long,
) {
    if !ctx.is_null() {
        state::ctx("shmem_ctx_session_start", ctx);
    }
}

/// `shmem_ctx_session_stop` (1.6): ends a session on `ctx` (nothing to undo: see
/// [`shmem_ctx_session_start`]).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ctx_session_stop(ctx: ShmemCtx) {
    if !ctx.is_null() {
        state::ctx("shmem_ctx_session_stop", ctx);
    }
}

/// `shmemx_wtime`: seconds since an arbitrary point, as a double.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_wtime() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}
