//! Distributed locks: `set_lock`, `test_lock` and `clear_lock` on a lock of `new_lock` (a
//! symmetric 8-byte integer array of one element, zero when free), as OpenSHMEM's `long` locks.
//! The guards this PE holds are kept by the lock's address until `clear_lock`.

use crate::buf::buf;
use crate::rma::{not_symmetric, without_gil};
use crate::state::{ShmemError, world};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use shmem_core::raw;
use shmem_core::{LockGuard, LockRef};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// The locks this PE holds, by address.
struct Held(BTreeMap<usize, LockGuard<'static>>);

// SAFETY: a guard is the runtime's lock word (the transport, which lives until finalize, and an
// offset); it is released by `clear_lock` on whichever thread calls it, as OpenSHMEM's locks
// belong to the PE, not a thread. After finalize `clear_lock` refuses before touching the table.
unsafe impl Send for Held {}

static HELD: Mutex<Held> = Mutex::new(Held(BTreeMap::new()));

fn held() -> MutexGuard<'static, Held> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// The lock of `lock` (a symmetric one-element array of 8-byte integers), and its address.
fn lock_of(op: &str, lock: &Bound<'_, PyAny>) -> PyResult<(LockRef<'static>, usize)> {
    world(op)?;
    let b = buf(op, "lock", lock, false)?;
    if b.kind.size != 8 || !matches!(b.kind.kind, b'i' | b'u') || b.len != 1 {
        return Err(PyTypeError::new_err(format!(
            "{op}: lock must be a lock of new_lock (a symmetric array of one int64), not an \
             array of {} {}",
            b.len, b.kind
        )));
    }
    // SAFETY: the word is a live NumPy array's (held by the caller), used as a lock word through
    // the runtime's atomics only; no Rust reference is made over it.
    match unsafe { raw::lock_at(b.ptr.cast::<i64>()) } {
        Some(l) => Ok((l, b.ptr as usize)),
        None if raw::offset_of(b.ptr, 8).is_none() => Err(not_symmetric(op, "lock", b.ptr, 8)),
        None => Err(PyValueError::new_err(format!(
            "{op}: the lock at {:p} is not 8-byte aligned",
            b.ptr
        ))),
    }
}

/// Waits until this PE holds ``lock`` (the GIL is released while it waits).
#[pyfunction]
pub(crate) fn set_lock(py: Python<'_>, lock: &Bound<'_, PyAny>) -> PyResult<()> {
    let (l, at) = lock_of("set_lock", lock)?;
    let g = match l.try_lock() {
        Some(g) => g,
        None => without_gil(py, l, |l| l.lock()),
    };
    if let Some(old) = held().0.insert(at, g) {
        // Held twice (another thread of this PE queued behind the first): keep both taken.
        std::mem::forget(old);
    }
    Ok(())
}

/// Takes ``lock`` if it is free: returns False when this call took it, True when it was held.
#[pyfunction]
pub(crate) fn test_lock(lock: &Bound<'_, PyAny>) -> PyResult<bool> {
    let (l, at) = lock_of("test_lock", lock)?;
    match l.try_lock() {
        Some(g) => {
            if let Some(old) = held().0.insert(at, g) {
                std::mem::forget(old);
            }
            Ok(false)
        }
        None => Ok(true),
    }
}

/// Releases ``lock``, held by this PE, after a quiet (so that what this PE wrote while holding
/// it is visible to the next holder).
#[pyfunction]
pub(crate) fn clear_lock(py: Python<'_>, lock: &Bound<'_, PyAny>) -> PyResult<()> {
    let op = "clear_lock";
    let (_, at) = lock_of(op, lock)?;
    let g = held().0.remove(&at);
    match g {
        Some(g) => {
            without_gil(py, g, |g| g.unlock());
            Ok(())
        }
        None => Err(ShmemError::new_err(format!(
            "{op}: the lock at {at:#x} is not held by this PE"
        ))),
    }
}
