//! In-flight UCX requests and the status-pointer convention of the `*_nbx` calls.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result};
use crate::sys;
use crate::worker::{Worker, WorkerInner};

/// `(uintptr_t)UCS_ERR_LAST`: status pointers at or above this value are error codes.
const ERR_LAST: usize = sys::UCS_ERR_LAST as isize as usize;

/// `UCS_PTR_IS_ERR`: the status pointer carries an error code.
#[inline]
pub(crate) fn ptr_is_err(ptr: sys::ucs_status_ptr_t) -> bool {
    ptr.addr() >= ERR_LAST
}

/// `UCS_PTR_IS_PTR`: the status pointer is a request handle (neither NULL nor an error).
#[inline]
pub(crate) fn ptr_is_ptr(ptr: sys::ucs_status_ptr_t) -> bool {
    ptr.addr().wrapping_sub(1) < ERR_LAST - 1
}

/// `UCS_PTR_STATUS`: `UCS_INPROGRESS` for a request, else the status the pointer encodes
/// (`UCS_OK` for NULL).
#[inline]
pub(crate) fn ptr_status(ptr: sys::ucs_status_ptr_t) -> sys::ucs_status_t {
    if ptr_is_ptr(ptr) {
        sys::UCS_INPROGRESS
    } else {
        // Truncation is the C macro's `(ucs_status_t)(intptr_t)ptr`.
        ptr.addr() as isize as sys::ucs_status_t
    }
}

/// Waits for the result `ptr` of a `*_nbx` call on `worker` and frees its request.
///
/// # Safety
/// `worker` must be a live worker and `ptr` the untouched return value of a `*_nbx` call
/// on it (or on one of its endpoints); buffers the operation uses must stay valid until
/// this returns.
#[inline]
pub(crate) unsafe fn complete(
    worker: sys::ucp_worker_h,
    ptr: sys::ucs_status_ptr_t,
    op: &'static str,
) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    // SAFETY: the caller's contract is the one `complete_slow` needs.
    unsafe { complete_slow(worker, ptr, op) }
}

/// The non-immediate part of [`complete`], kept out of line.
///
/// # Safety
/// As for [`complete`].
#[inline(never)]
unsafe fn complete_slow(
    worker: sys::ucp_worker_h,
    ptr: sys::ucs_status_ptr_t,
    op: &'static str,
) -> Result<()> {
    if !ptr_is_ptr(ptr) {
        return Err(Error::from_status(op, ptr_status(ptr)));
    }
    // SAFETY: `ptr` is a request of `worker` (caller's contract) that nobody else owns;
    // it stays valid until the ucp_request_free below, and progressing the live worker is
    // what completes it.
    let status = unsafe { wait_raw(worker, ptr) };
    // SAFETY: the request is complete and owned here; it is freed exactly once.
    unsafe { sys::ucp_request_free(ptr) };
    crate::error::check(op, status)
}

/// Progresses `worker` until `request` is complete; returns its final status.
///
/// # Safety
/// `request` must be a live, not yet freed request of the live `worker`.
#[inline]
unsafe fn wait_raw(worker: sys::ucp_worker_h, request: *mut c_void) -> sys::ucs_status_t {
    let mut status = sys::UCS_INPROGRESS;
    // SAFETY: both handles are live (caller's contract) while the loop runs.
    unsafe {
        progress_until(worker, || {
            status = sys::ucp_request_check_status(request);
            status != sys::UCS_INPROGRESS
        });
    }
    status
}

/// Progresses `worker` until `done()` holds (looked at before every round), backing off as a
/// blocking wait does: after [`set_idle_spins`] rounds in which nothing moved it yields the CPU
/// now and then ([`set_yield_every`]), and it calls the wait hook between rounds.
///
/// # Safety
/// `worker` must be a live worker.
#[inline]
pub(crate) unsafe fn progress_until(worker: sys::ucp_worker_h, mut done: impl FnMut() -> bool) {
    let mut idle = 0u32;
    while !done() {
        // SAFETY: the worker is live (caller's contract).
        if unsafe { progress_counted(worker) } == 0 {
            // Nothing moved: after a short spin, let the peer this wait depends on have the
            // CPU. Over tcp the operation completes only when the target process runs, and on
            // a node with more processes than cores it may be waiting for this very core
            // (seen: milliseconds per operation, one scheduler time slice each).
            idle += 1;
            let spins = IDLE_SPINS_NOW.load(Ordering::Relaxed);
            if idle > spins && (idle - spins).is_multiple_of(yield_every()) {
                std::thread::yield_now();
            }
        } else {
            idle = 0;
        }
        run_wait_hook(worker);
    }
}

/// Events (messages received, operations completed) that rounds of progress of this crate
/// have handled so far, on any worker of the process.
static EVENTS: AtomicU64 = AtomicU64::new(0);

/// How many events rounds of progress made by this crate have handled so far, on any worker
/// of this process (every `ucp_worker_progress` call of this crate counts its result here).
#[inline]
pub(crate) fn events() -> u64 {
    EVENTS.load(Ordering::Acquire)
}

/// One round of progress on `worker` (`ucp_worker_progress`), its events counted in
/// [`events`]; returns how many there were.
///
/// # Safety
/// `worker` must be a live worker.
#[inline]
pub(crate) unsafe fn progress_counted(worker: sys::ucp_worker_h) -> u32 {
    // SAFETY: the worker is live (caller's contract).
    let n = unsafe { sys::ucp_worker_progress(worker) };
    if n != 0 {
        EVENTS.fetch_add(u64::from(n), Ordering::AcqRel);
    }
    n
}

/// Rounds of progress without any event before a blocking wait starts yielding its CPU, by
/// default (see [`set_idle_spins`]).
pub const IDLE_SPINS: u32 = 64;

/// Rounds of progress without any event before a blocking wait starts yielding its CPU, as set.
static IDLE_SPINS_NOW: AtomicU32 = AtomicU32::new(IDLE_SPINS);

/// Sets how many rounds of progress in which nothing moved a blocking wait makes before it
/// starts yielding its CPU ([`IDLE_SPINS`], the default, suits a process with a core of its
/// own). On a node with more processes than cores the peer a wait depends on may need this
/// very core, and over tcp every round is a system call or two: 64 of them before the first
/// yield made an all-to-all round of puts and a quiet at 8, 16 and 64 PEs on 2 cores 25-35%
/// slower than 2 did.
pub fn set_idle_spins(rounds: u32) {
    IDLE_SPINS_NOW.store(rounds, Ordering::Relaxed);
}

/// After the idle spins, a blocking wait yields once every this many idle rounds (see
/// [`set_yield_every`]).
static YIELD_EVERY: AtomicU32 = AtomicU32::new(1);

fn yield_every() -> u32 {
    YIELD_EVERY.load(Ordering::Relaxed).max(1)
}

/// Sets how often a blocking wait that has seen nothing for a while gives up its CPU: once
/// every `rounds` idle rounds of progress (1, the default: every round). A process that has a
/// core of its own loses latency to every `sched_yield` (a system call between two looks at
/// the network) and gains nothing from it unless something else on the machine wants the
/// core: it yields now and then. A process on a node with more processes than cores yields
/// every round, because the peer its operation waits for may need this very core.
pub fn set_yield_every(rounds: u32) {
    YIELD_EVERY.store(rounds.max(1), Ordering::Relaxed);
}

/// A wait hook: called with the worker the wait progresses itself (see [`set_wait_hook`]).
pub type WaitHook = fn(sys::ucp_worker_h);

/// The installed wait hook: null for none, else a holder from [`hook_holder`] (leaked, so
/// valid for the rest of the process, and never written after it was made).
static WAIT_HOOK: AtomicPtr<WaitHook> = AtomicPtr::new(ptr::null_mut());

/// Every holder [`hook_holder`] ever made, so that installing the same function again reuses
/// its holder: one small allocation per distinct function, however often hooks are switched.
static HOOK_HOLDERS: Mutex<Vec<&'static WaitHook>> = Mutex::new(Vec::new());

/// Installs (or, with `None`, removes) a function that every blocking wait of this crate calls
/// between rounds of progress on its own worker, with that worker's handle: the hook progresses
/// the process's *other* workers (progressing the waiting one again would double the cost of a
/// round: over tcp, one more `epoll_wait` between two looks at the network).
///
/// A process with several workers needs it: over transports without remote memory access (tcp),
/// a peer's operation is carried out by *this* process's progress on the worker it targets, so
/// while one worker waits, the others must keep moving too, or two processes waiting on
/// different workers can wait for each other forever.
///
/// The hook is process-wide and may run on any thread that waits, possibly while another
/// thread replaces it (a wait that already loaded the old hook may call it once more). It
/// must not itself wait on a worker of this crate, or the waits nest. Checking for a hook
/// costs a wait round one atomic load; installing one takes a lock.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// static ROUNDS: AtomicU64 = AtomicU64::new(0);
/// fn count_round(_waiting_on: shmem_ucx::sys::ucp_worker_h) {
///     ROUNDS.fetch_add(1, Ordering::Relaxed);
/// }
///
/// shmem_ucx::set_wait_hook(Some(count_round));
/// // ... blocking operations now call `count_round` while they wait ...
/// shmem_ucx::set_wait_hook(None);
/// ```
pub fn set_wait_hook(hook: Option<WaitHook>) {
    let holder = hook.map_or(ptr::null_mut(), |f| {
        ptr::from_ref(hook_holder(f)).cast_mut()
    });
    WAIT_HOOK.store(holder, Ordering::Release);
}

/// A `'static` holder of `f`: the one made for it before, else a new, leaked one.
fn hook_holder(f: WaitHook) -> &'static WaitHook {
    // A poisoned list is still a list of valid holders.
    let mut holders = HOOK_HOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
    // Functions whose code the compiler merged compare equal: calling either is the same.
    if let Some(&known) = holders.iter().find(|&&h| ptr::fn_addr_eq(*h, f)) {
        return known;
    }
    let holder: &'static WaitHook = Box::leak(Box::new(f));
    holders.push(holder);
    holder
}

/// Calls the installed wait hook, if any, for a wait on `worker`.
#[inline]
fn run_wait_hook(worker: sys::ucp_worker_h) {
    let holder = WAIT_HOOK.load(Ordering::Acquire);
    // SAFETY: `WAIT_HOOK` holds null or a pointer made from a `&'static fn()` by
    // `set_wait_hook`; that holder is leaked (never freed) and never written, and the
    // Acquire load pairs with the Release store that published it, so reading it is sound.
    if let Some(hook) = unsafe { holder.as_ref() } {
        hook(worker);
    }
}

/// An in-flight UCX operation, returned where the caller wants to start several operations
/// before waiting for them (e.g. [`Endpoint::flush_start`](crate::Endpoint::flush_start)).
///
/// It keeps its worker alive. Dropping a `Request` gives it back to UCX with
/// `ucp_request_free`; an operation that is still in flight then goes on and completes
/// unobserved (its buffers must stay valid until then; a later
/// [`Worker::flush`] observes it).
#[derive(Debug)]
pub struct Request {
    raw: *mut c_void,
    worker: Arc<WorkerInner>,
}

// SAFETY: a request handle points into its worker's request pool, which UCX does not tie to
// a thread, and `worker` keeps that worker alive, so the request stays valid wherever the
// Request goes; it is freed once, in Drop. Checking it from another thread reads its flags,
// which UCX allows while the worker progresses elsewhere; freeing it takes the worker's
// lock in thread mode Multi (other modes: the promise of the unsafe
// `create_worker_unsynchronized`'s caller). Not Sync: nothing needs to share one.
unsafe impl Send for Request {}

impl Request {
    /// Wraps the result of a `*_nbx` call: `None` if it completed at once, an error, or a
    /// `Request` that owns the returned request.
    ///
    /// # Safety
    /// `ptr` must be the untouched return value of a `*_nbx` call on `worker`.
    pub(crate) unsafe fn from_status_ptr(
        worker: &Arc<WorkerInner>,
        ptr: sys::ucs_status_ptr_t,
        op: &'static str,
    ) -> Result<Option<Request>> {
        if ptr.is_null() {
            Ok(None)
        } else if ptr_is_err(ptr) {
            Err(Error::from_status(op, ptr_status(ptr)))
        } else {
            Ok(Some(Request {
                raw: ptr,
                worker: Arc::clone(worker),
            }))
        }
    }

    /// Whether the operation has completed (`ucp_request_check_status`); `Err` if it
    /// completed with an error. Does not progress the worker: call
    /// [`Worker::progress`] between checks.
    pub fn is_done(&self) -> Result<bool> {
        // SAFETY: `raw` is a live request (freed only in Drop) of a worker kept alive by
        // `self.worker`.
        let status = unsafe { sys::ucp_request_check_status(self.raw) };
        match status {
            sys::UCS_INPROGRESS => Ok(false),
            sys::UCS_OK => Ok(true),
            _ => Err(Error::from_status("ucp_request_check_status", status)),
        }
    }

    /// Progresses the worker until the operation completes, then frees the request.
    ///
    /// `worker` must be the worker the request was started on (it is progressed through
    /// the request's own handle to it; passing another is a logic error caught by a debug
    /// assertion).
    pub fn wait(self, worker: &Worker) -> Result<()> {
        debug_assert_eq!(
            worker.raw(),
            self.worker.raw,
            "Request::wait called with a worker other than the request's"
        );
        // SAFETY: `raw` is live until Drop, and its worker is kept alive by `self.worker`.
        let status = unsafe { wait_raw(self.worker.raw, self.raw) };
        crate::error::check("ucp_request_check_status", status)
        // `self` drops here and frees the request.
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        // SAFETY: `raw` is owned by this Request and freed only here; its worker is alive
        // (`self.worker` is dropped after this body). UCX accepts freeing an in-flight
        // request: it is then released when the operation completes.
        unsafe { sys::ucp_request_free(self.raw) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A status pointer with the value `v` (no provenance: it is never dereferenced).
    fn status_ptr(v: usize) -> sys::ucs_status_ptr_t {
        ptr::without_provenance_mut(v)
    }

    #[test]
    fn status_pointer_macros() {
        let null: sys::ucs_status_ptr_t = std::ptr::null_mut();
        assert!(!ptr_is_err(null) && !ptr_is_ptr(null));
        assert_eq!(ptr_status(null), sys::UCS_OK);

        let err = status_ptr(sys::UCS_ERR_UNREACHABLE as isize as usize);
        assert!(ptr_is_err(err) && !ptr_is_ptr(err));
        assert_eq!(ptr_status(err), sys::UCS_ERR_UNREACHABLE);

        let last = status_ptr(ERR_LAST);
        assert!(ptr_is_err(last) && !ptr_is_ptr(last));

        let req = status_ptr(0x1000);
        assert!(!ptr_is_err(req) && ptr_is_ptr(req));
        assert_eq!(ptr_status(req), sys::UCS_INPROGRESS);

        let just_below = status_ptr(ERR_LAST - 1);
        assert!(!ptr_is_err(just_below) && ptr_is_ptr(just_below));
    }

    static CALLS_A: AtomicUsize = AtomicUsize::new(0);
    static CALLS_B: AtomicUsize = AtomicUsize::new(0);
    fn hook_a(_: sys::ucp_worker_h) {
        CALLS_A.fetch_add(1, Ordering::Relaxed);
    }
    fn hook_b(_: sys::ucp_worker_h) {
        CALLS_B.fetch_add(1, Ordering::Relaxed);
    }
    fn run_hook() {
        run_wait_hook(ptr::null_mut());
    }

    /// The only test of this crate's unit tests that touches the process-wide hook.
    #[test]
    fn wait_hook_install_switch_remove() {
        run_hook();
        set_wait_hook(Some(hook_a));
        run_hook();
        run_hook();
        assert_eq!(CALLS_A.load(Ordering::Relaxed), 2);
        set_wait_hook(Some(hook_b));
        run_hook();
        assert_eq!(
            (
                CALLS_A.load(Ordering::Relaxed),
                CALLS_B.load(Ordering::Relaxed)
            ),
            (2, 1)
        );
        set_wait_hook(None);
        run_hook();
        assert_eq!(
            (
                CALLS_A.load(Ordering::Relaxed),
                CALLS_B.load(Ordering::Relaxed)
            ),
            (2, 1)
        );
        // Switching back and forth reuses the holders instead of leaking one per call. A
        // function may show several addresses (a copy per codegen unit; under Miri, a few
        // dozen), each of which gets its own holder once.
        let held = || HOOK_HOLDERS.lock().map(|h| h.len()).unwrap_or(usize::MAX);
        let before = held();
        for _ in 0..300 {
            set_wait_hook(Some(hook_a));
            set_wait_hook(Some(hook_b));
        }
        set_wait_hook(None);
        let grown = held() - before;
        assert!(grown < 150, "600 installs made {grown} holders");
        // Hooks are called from whichever thread waits.
        set_wait_hook(Some(hook_a));
        std::thread::spawn(run_hook).join().expect("hook thread");
        set_wait_hook(None);
        assert_eq!(CALLS_A.load(Ordering::Relaxed), 3);
    }
}
