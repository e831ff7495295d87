//! The process-wide state of the C API: the `World`, the tables of live teams, contexts, heap
//! blocks and held locks, and the checks that turn C's addresses, PE numbers and handles into
//! the typed API's values (or end the job with a message).

/// `fatal!("fmt", args)`: prints the message prefixed with `shmem: ` and ends the job.
macro_rules! fatal {
    ($($t:tt)*) => { $crate::state::fatal_args(format_args!($($t)*)) };
}

/// `warn!("fmt", args)`: prints the message prefixed with `shmem: ` as one line written whole
/// (one write, so that the warnings of several PEs never mix mid-line).
macro_rules! warn {
    ($($t:tt)*) => { $crate::state::warn_args(format_args!($($t)*)) };
}

use shmem_core::prelude::*;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// C's `shmem_ctx_t`: an opaque pointer, here a small integer id.
pub type ShmemCtx = *mut c_void;
/// C's `shmem_team_t`: an opaque pointer, here a small integer id.
pub type ShmemTeam = *mut c_void;

/// `SHMEM_TEAM_WORLD` as an id (`((shmem_team_t)1)` in `shmem.h`).
pub const TEAM_WORLD: usize = 1;
/// `SHMEM_TEAM_SHARED` as an id.
pub const TEAM_SHARED: usize = 2;
/// `SHMEM_CTX_DEFAULT` as an id.
pub const CTX_DEFAULT: usize = 1;

/// A live team: its `shmem-core` team and the configuration C asked for.
pub(crate) struct TeamEntry {
    pub(crate) team: Team<'static>,
    pub(crate) num_contexts: c_int,
}

// SAFETY: a team's collectives are called, as the C standard requires, by one thread of each
// member at a time; the C program's thread level is its contract. The entry itself is only
// read (its `Team` has interior state used by collectives alone).
unsafe impl Sync for TeamEntry {}
// SAFETY: as above; the entry is created and destroyed by collective calls of the program.
unsafe impl Send for TeamEntry {}

/// A live context, and the world PEs of the team whose PE numbering it uses (`None`: the
/// world's).
pub(crate) struct CtxEntry {
    pub(crate) ctx: Ctx<'static, Shared>,
    pub(crate) team_pes: Option<Box<[usize]>>,
    pub(crate) team_id: usize,
    pub(crate) options: std::ffi::c_long,
}

impl CtxEntry {
    /// The world PE of `pe` in this context's team, checked.
    #[inline]
    #[track_caller]
    pub(crate) fn pe(&self, op: &str, pe: c_int) -> usize {
        match &self.team_pes {
            None => world_pe(op, pe),
            Some(pes) => {
                let n = pes.len();
                match usize::try_from(pe) {
                    Ok(p) if p < n => pes[p],
                    _ => fatal!(
                        "{op}: PE {pe} is out of range: the context's team has {n} PEs (0..{n})"
                    ),
                }
            }
        }
    }
}

/// Everything made by `shmem_init`.
pub(crate) struct Globals {
    pub(crate) world: &'static World,
    world_ptr: *mut World,
    pub(crate) level: c_int,
    pub(crate) default_ctx: &'static CtxEntry,
    pub(crate) team_world: &'static TeamEntry,
    pub(crate) team_shared: &'static TeamEntry,
    /// `n_pes` words of symmetric scratch space (the lengths exchanged by `collect`).
    pub(crate) scratch: SymArray<'static, u64>,
}

// SAFETY: `World` is !Send/!Sync because collectives must be called from one thread in the same
// order on every PE; in C that is the program's contract (its thread level), which the C API
// cannot check. Non-collective operations of the runtime are thread-safe.
unsafe impl Sync for Globals {}
// SAFETY: as above.
unsafe impl Send for Globals {}

static GLOBALS: AtomicPtr<Globals> = AtomicPtr::new(std::ptr::null_mut());
static FINALIZED: AtomicBool = AtomicBool::new(false);
/// Calls of the initialization routines not yet matched by a `shmem_finalize` (OpenSHMEM 1.6
/// lets a program initialize more than once; the last matching finalize ends the library).
static INIT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The tables of live handles, heap blocks and held locks.
pub(crate) struct Tables {
    pub(crate) teams: BTreeMap<usize, &'static TeamEntry>,
    pub(crate) ctxs: BTreeMap<usize, &'static CtxEntry>,
    pub(crate) heap: BTreeMap<usize, SymArray<'static, u8>>,
    pub(crate) locks: BTreeMap<usize, LockGuard<'static>>,
    pub(crate) next_id: usize,
}

// SAFETY: heap blocks (`SymArray`, !Send because its collective free must stay on the thread that
// owns it) are allocated and freed by the C program's collective calls, on its one calling thread
// at a time (the C standard's requirement); the table only moves them between calls.
unsafe impl Send for Tables {}

static TABLES: Mutex<Tables> = Mutex::new(Tables {
    teams: BTreeMap::new(),
    ctxs: BTreeMap::new(),
    heap: BTreeMap::new(),
    locks: BTreeMap::new(),
    next_id: 3,
});

/// The tables (a panic elsewhere never leaves them half-changed, so poisoning is ignored).
pub(crate) fn tables() -> MutexGuard<'static, Tables> {
    TABLES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Prints `shmem: MESSAGE` as one line written whole (see [`warn!`]).
#[cold]
#[inline(never)]
pub(crate) fn warn_args(msg: std::fmt::Arguments<'_>) {
    shmem_core::raw::eprint_line(format_args!("shmem: {msg}"));
}

/// Prints `shmem: MESSAGE` and ends the job.
#[cold]
#[inline(never)]
pub(crate) fn fatal_args(msg: std::fmt::Arguments<'_>) -> ! {
    warn_args(msg);
    let g = GLOBALS.load(Ordering::Acquire);
    if !g.is_null() {
        // SAFETY: a non-null pointer is a leaked `Globals`, never freed.
        unsafe { &*g }.world.global_exit(1);
    }
    std::process::exit(1)
}

/// The state made by `shmem_init`; ends the job with a message naming `op` before it or after
/// `shmem_finalize`.
#[inline]
pub(crate) fn g(op: &str) -> &'static Globals {
    let p = GLOBALS.load(Ordering::Acquire);
    if p.is_null() {
        not_initialized(op)
    }
    // SAFETY: a non-null pointer is a leaked `Globals`, never freed.
    unsafe { &*p }
}

/// The state, if initialized.
pub(crate) fn try_g() -> Option<&'static Globals> {
    let p = GLOBALS.load(Ordering::Acquire);
    // SAFETY: a non-null pointer is a leaked `Globals`, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

#[cold]
fn not_initialized(op: &str) -> ! {
    if FINALIZED.load(Ordering::Acquire) {
        warn!("{op} called after shmem_finalize");
    } else {
        warn!("{op} called before shmem_init");
    }
    std::process::exit(1)
}

/// Whether the library is initialized: an initialization routine was called and not yet
/// matched by as many `shmem_finalize` calls (`shmem_query_initialized`).
pub(crate) fn initialized() -> bool {
    try_g().is_some()
}

/// Starts the runtime, or counts one more initialization while it runs (matched by one more
/// `shmem_finalize`).
pub(crate) fn initialize(requested: c_int) -> &'static Globals {
    if let Some(g) = try_g() {
        INIT_COUNT.fetch_add(1, Ordering::AcqRel);
        return g;
    }
    if FINALIZED.load(Ordering::Acquire) {
        warn!("shmem_init called after shmem_finalize; the library cannot restart");
        std::process::exit(1);
    }
    shmem_core::raw::enable_data_segment();
    // The scratch words below come on top of SHMEM_SYMMETRIC_SIZE, which stays whole for the
    // program (one shmem_malloc of all of it succeeds, as with the other implementations).
    shmem_core::raw::reserve_heap_per_pe(size_of::<u64>());
    let level = match requested {
        0 => shmem_core::ThreadLevel::Single,
        1 => shmem_core::ThreadLevel::Funneled,
        2 => shmem_core::ThreadLevel::Serialized,
        _ => shmem_core::ThreadLevel::Multiple,
    };
    let world = match shmem_core::init_thread(level) {
        Ok((w, _)) => w,
        Err(e) => {
            warn!("shmem_init failed: {e}");
            std::process::exit(1)
        }
    };
    let world_ptr = Box::into_raw(Box::new(world));
    // SAFETY: just leaked; it is only dropped in place by `finalize`, after which no reference
    // made from it is used (the C program may not call the library after shmem_finalize).
    let world: &'static World = unsafe { &*world_ptr };
    let team_world = Box::leak(Box::new(TeamEntry {
        team: world.team_world(),
        num_contexts: 0,
    }));
    let team_shared = Box::leak(Box::new(TeamEntry {
        team: world.team_shared(),
        num_contexts: 0,
    }));
    let default_ctx = Box::leak(Box::new(CtxEntry {
        ctx: world.ctx_default(),
        team_pes: None,
        team_id: TEAM_WORLD,
        options: 0,
    }));
    let scratch = world.alloc::<u64>(world.n_pes());
    let globals = Box::leak(Box::new(Globals {
        world,
        world_ptr,
        level: requested.clamp(0, 3),
        default_ctx,
        team_world,
        team_shared,
        scratch,
    }));
    {
        let mut t = tables();
        t.teams.insert(TEAM_WORLD, team_world);
        t.teams.insert(TEAM_SHARED, team_shared);
    }
    INIT_COUNT.store(1, Ordering::Release);
    GLOBALS.store(globals, Ordering::Release);
    // A panic (a check of shmem-core, with its message) ends the whole job, not just this PE.
    // Its message is one line written whole, as every message of the library (the default
    // hook writes in pieces, which mix with other PEs' lines); a backtrace, when RUST_BACKTRACE
    // asks for one, follows in the same write.
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        let msg = msg.strip_prefix("shmem: ").unwrap_or(msg);
        let mut text = match info.location() {
            Some(at) => format!("{msg} (panicked at {at})"),
            None => msg.to_owned(),
        };
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            text.push_str(&format!("\nstack backtrace:\n{trace}"));
        }
        warn!("{text}");
        match try_g() {
            Some(g) => g.world.global_exit(1),
            // In shmem_finalize (the World is going): unwinding out of it would abort with two
            // more lines; this PE's exit ends the job all the same.
            None => std::process::exit(1),
        }
    }));
    globals
}

/// `shmem_finalize`: quiet; then, unless it matches an initialization other than the last
/// one outstanding, destroy the contexts, leak what would need collective steps to drop
/// (teams, heap blocks), and finalize the runtime.
pub(crate) fn finalize() {
    let Some(g) = try_g() else { return };
    g.world.quiet();
    if INIT_COUNT.fetch_sub(1, Ordering::AcqRel) > 1 {
        return;
    }
    {
        let mut t = tables();
        for (_, c) in std::mem::take(&mut t.ctxs) {
            // SAFETY: every context entry was leaked from a Box by ctx_create; the C program may
            // not use its handles after shmem_finalize.
            drop(unsafe { Box::from_raw(std::ptr::from_ref(c).cast_mut()) });
        }
        // Dropping a team or a heap block is collective; the runtime's finalize frees them all.
        std::mem::take(&mut t.teams);
        for (_, a) in std::mem::take(&mut t.heap) {
            std::mem::forget(a);
        }
        for (_, l) in std::mem::take(&mut t.locks) {
            std::mem::forget(l);
        }
    }
    GLOBALS.store(std::ptr::null_mut(), Ordering::Release);
    FINALIZED.store(true, Ordering::Release);
    let world_ptr = g.world_ptr;
    // The scratch array must not be freed collectively after the World is gone.
    // SAFETY: `g` is leaked and never used again after GLOBALS was cleared; reading the array
    // out of it to forget it leaves nothing that would drop it twice.
    std::mem::forget(unsafe { std::ptr::read(&g.scratch) });
    // SAFETY: `world_ptr` came from Box::into_raw in `initialize`; it is dropped once, in place
    // (its memory stays allocated, so leaked references to it are never dangling), and the C
    // program may not call the library after shmem_finalize.
    unsafe { std::ptr::drop_in_place(world_ptr) };
}

/// The world PE `pe`, checked against the job.
#[inline]
#[track_caller]
pub(crate) fn world_pe(op: &str, pe: c_int) -> usize {
    let n = g(op).world.n_pes();
    match usize::try_from(pe) {
        Ok(p) if p < n => p,
        _ => fatal!("{op}: PE {pe} is out of range: the job has {n} PEs (0..{n})"),
    }
}

/// The context behind a C handle (`SHMEM_CTX_DEFAULT` or a live one).
#[inline]
pub(crate) fn ctx(op: &str, h: ShmemCtx) -> &'static CtxEntry {
    let id = h as usize;
    if id == CTX_DEFAULT {
        return g(op).default_ctx;
    }
    lookup_ctx(op, h)
}

#[inline(never)]
fn lookup_ctx(op: &str, h: ShmemCtx) -> &'static CtxEntry {
    g(op);
    match tables().ctxs.get(&(h as usize)) {
        Some(c) => c,
        None if h.is_null() => fatal!("{op}: the context is SHMEM_CTX_INVALID"),
        None => fatal!("{op}: {h:p} is not a live context (never created, or destroyed)"),
    }
}

/// The fast path of small operations: `n` elements at `addr` on world PE `pe` when `h` is
/// `SHMEM_CTX_DEFAULT` and nothing is unusual (see [`shmem_core::raw::locate`]); `None` sends
/// the caller to its general path, which checks everything in the standard order and names
/// what is wrong. No lookup: the default context is the world's, its PEs the world's, its
/// operations the runtime's own ([`shmem_core::raw::Located`]).
#[inline(always)]
pub(crate) fn fast<E: shmem_core::Element>(
    h: ShmemCtx,
    addr: *const E,
    n: usize,
    pe: c_int,
) -> Option<shmem_core::raw::Located<E>> {
    if h as usize != CTX_DEFAULT {
        return None;
    }
    // A negative PE becomes 2^31 or more, which no job has (`locate` rejects it): one compare
    // for both bounds.
    let pe = pe as u32 as usize;
    // SAFETY: as in `sym`: C names symmetric objects by address, and OpenSHMEM asks the C
    // program to keep the objects it passes allocated (and symmetric) while it uses them.
    unsafe { shmem_core::raw::locate(addr, n, pe) }
}

/// The team behind a C handle, or `None` for `SHMEM_TEAM_INVALID`; an unknown handle ends the
/// job.
pub(crate) fn team_or_invalid(op: &str, h: ShmemTeam) -> Option<&'static TeamEntry> {
    let gl = g(op);
    match h as usize {
        0 => None,
        TEAM_WORLD => Some(gl.team_world),
        TEAM_SHARED => Some(gl.team_shared),
        id => match tables().teams.get(&id) {
            Some(t) => Some(t),
            None => fatal!("{op}: {h:p} is not a live team (never created, or destroyed)"),
        },
    }
}

/// `n` elements of `E` at `addr` as a symmetric object, or the end of the job naming the call.
#[inline]
pub(crate) fn sym<E: shmem_core::Element>(
    op: &str,
    what: &str,
    addr: *const E,
    n: usize,
) -> SymSlice<'static, E> {
    // SAFETY: C names symmetric objects by address, and OpenSHMEM asks the C program to keep
    // the objects it passes allocated (and symmetric) while it uses them; C has no references.
    match unsafe { shmem_core::raw::sym(addr, n) } {
        Some(s) => s,
        None => not_symmetric(op, what, addr.cast(), n.saturating_mul(size_of::<E>())),
    }
}

#[cold]
#[inline(never)]
fn not_symmetric(op: &str, what: &str, addr: *const u8, bytes: usize) -> ! {
    fatal!(
        "{op}: {what} {addr:p} ({bytes} bytes) is not symmetric: it is neither in the symmetric \
         heap (shmem_malloc) nor a global or static variable"
    )
}

/// The C buffer `p` of `n` elements as a slice.
///
/// # Safety
/// `p` points to `n` readable elements that nothing writes while the slice lives (the C
/// standard's contract for source buffers).
#[inline]
pub(crate) unsafe fn src<'a, E>(op: &str, p: *const E, n: usize) -> &'a [E] {
    if n == 0 {
        return &[];
    }
    if p.is_null() {
        fatal!("{op}: the local buffer is NULL but {n} elements were asked for");
    }
    // SAFETY: per the caller.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// The C buffer `p` of `n` elements as a mutable slice.
///
/// # Safety
/// `p` points to `n` writable elements that nothing else reads or writes while the slice lives.
#[inline]
#[allow(clippy::mut_from_ref)]
pub(crate) unsafe fn dst<'a, E>(op: &str, p: *mut E, n: usize) -> &'a mut [E] {
    if n == 0 {
        return &mut [];
    }
    if p.is_null() {
        fatal!("{op}: the local buffer is NULL but {n} elements were asked for");
    }
    // SAFETY: per the caller.
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

/// C's `SHMEM_CMP_*` as a [`Cmp`].
#[inline]
pub(crate) fn cmp(op: &str, c: c_int) -> Cmp {
    match c {
        0 => Cmp::Eq,
        1 => Cmp::Ne,
        2 => Cmp::Gt,
        3 => Cmp::Le,
        4 => Cmp::Lt,
        5 => Cmp::Ge,
        _ => fatal!("{op}: {c} is not a comparison (SHMEM_CMP_EQ, _NE, _GT, _LE, _LT, _GE)"),
    }
}

/// A C stride (`ptrdiff_t`), which must be positive.
#[inline]
pub(crate) fn stride(op: &str, which: &str, s: isize) -> usize {
    match usize::try_from(s) {
        Ok(v) if v > 0 => v,
        _ => fatal!("{op}: the {which} stride is {s}; strides must be positive"),
    }
}
