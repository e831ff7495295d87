//! `PMIx_Fence_nb` with a completion flag that the caller polls while driving its own
//! progress.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::error::{Error, Result, check};
use crate::sys;
use crate::value::info_flag;

/// Rounds of waiting that spin briefly after `progress()` before switching to
/// `yield_now` (start-up fences on a busy node can take milliseconds; a PE spinning on a
/// shared core would slow the others down).
const SPIN_ROUNDS: u32 = 100;
/// `spin_loop` hints per spinning round.
const SPINS: u32 = 64;

/// Everything PMIx may look at until the callback runs, in one allocation shared between
/// the waiting thread and the callback (which PMIx runs on its progress thread). PMIx 4.2
/// packs `procs` and `info` before `PMIx_Fence_nb` returns, but nothing here relies on that.
struct Fence {
    done: AtomicBool,
    status: AtomicI32,
    procs: sys::pmix_proc_t,
    info: sys::pmix_info_t,
}

// SAFETY: only the pointer members of the `pmix_value_t` union inside `info` make the
// generated types !Send/!Sync, and this one holds a bool (`info_flag`), no pointer, so
// nothing the Fence points to is shared with it. The callback may therefore take the Arc
// back, and drop the last count, on PMIx's progress thread.
unsafe impl Send for Fence {}
// SAFETY: `procs` and `info` are written before the Fence is shared and only read
// afterwards (by PMIx, on its progress thread); `done` and `status` are atomics, written by
// the callback while the waiting thread reads them. No field is written through `&Fence`
// other than through an atomic.
unsafe impl Sync for Fence {}

/// The `pmix_op_cbfunc_t` given to `PMIx_Fence_nb`.
///
/// # Safety
/// `cbdata` must come from `Arc::into_raw` of a `Fence`, and this must run at most once for it.
unsafe extern "C" fn fence_done(status: sys::pmix_status_t, cbdata: *mut c_void) {
    // SAFETY: `cbdata` holds one strong count of the Arc, handed over by `fence` (this
    // function's contract); taking it back here releases it when `fence` drops its own.
    let fence = unsafe { Arc::from_raw(cbdata.cast_const().cast::<Fence>()) };
    fence.status.store(status, Ordering::Relaxed);
    // Release: the waiter that sees `done` also sees `status`.
    fence.done.store(true, Ordering::Release);
}

/// Runs a fence over all ranks of `me`'s namespace (`me.rank` is ignored), calling
/// `progress` until it completes.
pub(crate) fn run(me: &sys::pmix_proc_t, collect: bool, progress: &mut dyn FnMut()) -> Result<()> {
    let op = || {
        if collect {
            "PMIx_Fence_nb(all ranks, collect data)".to_string()
        } else {
            "PMIx_Fence_nb(all ranks)".to_string()
        }
    };
    let mut procs = *me;
    procs.rank = sys::PMIX_RANK_WILDCARD;
    let fence = Arc::new(Fence {
        done: AtomicBool::new(false),
        status: AtomicI32::new(sys::PMIX_SUCCESS),
        procs,
        info: info_flag(sys::PMIX_COLLECT_DATA, true),
    });
    let (info, ninfo) = if collect {
        (&raw const fence.info, 1)
    } else {
        (std::ptr::null(), 0)
    };
    let cbdata = Arc::into_raw(Arc::clone(&fence));
    // SAFETY: `procs` and `info` point into the Arc'd `Fence`, which stays alive until both
    // this function and the callback are done with it (each holds a strong count), so PMIx
    // may read them whenever it likes. The callback is `fence_done` with that Arc as
    // `cbdata`; PMIx runs it exactly once if, and only if, this returns PMIX_SUCCESS. The
    // Fence holds no pointer to our stack, so a panicking `progress` below cannot leave the
    // callback a dangling pointer.
    let status = unsafe {
        sys::PMIx_Fence_nb(
            &raw const fence.procs,
            1,
            info,
            ninfo,
            Some(fence_done),
            cbdata.cast_mut().cast::<c_void>(),
        )
    };
    if status != sys::PMIX_SUCCESS {
        // SAFETY: PMIx refused the request, so it will never call `fence_done`: the count
        // handed over in `cbdata` is still ours to release, once.
        drop(unsafe { Arc::from_raw(cbdata) });
        // "Done at once, no callback" is a success some PMIx versions report.
        if status == sys::PMIX_OPERATION_SUCCEEDED {
            return Ok(());
        }
        return Err(Error::from_status(op(), status));
    }

    let mut rounds = 0u32;
    while !fence.done.load(Ordering::Acquire) {
        progress();
        if rounds < SPIN_ROUNDS {
            rounds += 1;
            for _ in 0..SPINS {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
    }
    check(fence.status.load(Ordering::Relaxed), || {
        format!("{} completion", op())
    })
}
