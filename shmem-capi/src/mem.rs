//! The symmetric heap: `shmem_malloc`, `shmem_calloc`, `shmem_align`, `shmem_realloc`,
//! `shmem_free`, `shmem_malloc_with_hints` and the deprecated `shmalloc` family. Every block is a
//! `SymArray<u8>` kept in a table keyed by its address.
//!
//! Requests that cannot be met return NULL with a warning, as with the other implementations:
//! a size the heap cannot hold, an alignment that is not a power of two, the realloc of an
//! address that is no live block. These calls are collective and every PE passes the same
//! arguments, so every PE returns NULL alike; the argument checks come before any collective
//! step, and a NULL return still synchronizes the PEs (as a successful call does).

use crate::state::{g, tables};
use shmem_core::prelude::*;
use shmem_core::raw;
use std::ffi::{c_long, c_void};

/// Records a new block and returns its address (NULL for a failed allocation).
fn keep(op: &str, block: shmem_core::Result<SymArray<'static, u8>>) -> *mut c_void {
    match block {
        Ok(a) => {
            let addr = raw::local_addr(&a);
            tables().heap.insert(addr as usize, a);
            addr.cast()
        }
        Err(e) => {
            warn!("{op}: {e}; returning NULL");
            std::ptr::null_mut()
        }
    }
}

/// `shmem_malloc`: `size` bytes (zeroed), collectively; NULL for 0 bytes or when the heap is
/// exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    let w = g("shmem_malloc").world;
    if size == 0 {
        w.barrier_all();
        return std::ptr::null_mut();
    }
    keep("shmem_malloc", w.try_alloc::<u8>(size))
}

/// `shmem_calloc`: `count * size` zeroed bytes, collectively.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        Some(b) => shmem_malloc(b),
        None => {
            warn!(
                "shmem_calloc: {count} x {size} bytes is more than the address space; returning NULL"
            );
            g("shmem_calloc").world.barrier_all();
            std::ptr::null_mut()
        }
    }
}

/// `shmem_malloc_with_hints`: hints are accepted and otherwise ignored (every block supports
/// remote atomics and signals).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc_with_hints(size: usize, _hints: c_long) -> *mut c_void {
    shmem_malloc(size)
}

/// `shmem_align`: `size` bytes at an address that is a multiple of `alignment` (a power of two);
/// NULL (with a warning) for an alignment of 0 or one that is not a power of two.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    let op = "shmem_align";
    let w = g(op).world;
    if !alignment.is_power_of_two() {
        warn!("{op}: alignment {alignment} is not a power of two; returning NULL");
        w.barrier_all();
        return std::ptr::null_mut();
    }
    if size == 0 {
        w.barrier_all();
        return std::ptr::null_mut();
    }
    keep(op, w.try_alloc_aligned::<u8>(size, alignment))
}

/// `shmem_free`: frees a block of `shmem_malloc` (collectively); NULL does nothing.
///
/// # Safety
/// No PE uses the block afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_free(ptr: *mut c_void) {
    let op = "shmem_free";
    let w = g(op).world;
    if ptr.is_null() {
        w.barrier_all();
        return;
    }
    let block = tables().heap.remove(&(ptr as usize));
    match block {
        Some(a) => {
            // Puts into the block complete before anybody reuses it.
            w.quiet();
            drop(a)
        }
        None => fatal!("{op}: {ptr:p} is not the address of a live shmem_malloc block"),
    }
}

/// `shmem_realloc`: resizes a block collectively, keeping its contents (it may move). NULL (with
/// a warning, the block unchanged) when the heap cannot hold the new size, and for an address
/// that is not (or no longer) a block of `shmem_malloc`.
///
/// # Safety
/// No PE uses the old address afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    let op = "shmem_realloc";
    g(op);
    if ptr.is_null() {
        return shmem_malloc(size);
    }
    if size == 0 {
        // SAFETY: forwarded contract.
        unsafe { shmem_free(ptr) };
        return std::ptr::null_mut();
    }
    let block = tables().heap.remove(&(ptr as usize));
    let Some(mut a) = block else {
        warn!("{op}: {ptr:p} is not the address of a live shmem_malloc block; returning NULL");
        g(op).world.barrier_all();
        return std::ptr::null_mut();
    };
    let result = a.try_realloc(size);
    let addr = raw::local_addr(&a);
    tables().heap.insert(addr as usize, a);
    match result {
        Ok(()) => addr.cast(),
        Err(e) => {
            warn!("{op}: {e}; returning NULL");
            std::ptr::null_mut()
        }
    }
}

/// `shmalloc` (deprecated): `shmem_malloc`.
#[unsafe(no_mangle)]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    shmem_malloc(size)
}

/// `shfree` (deprecated): `shmem_free`.
///
/// # Safety
/// As [`shmem_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shfree(ptr: *mut c_void) {
    // SAFETY: forwarded contract.
    unsafe { shmem_free(ptr) }
}

/// `shrealloc` (deprecated): `shmem_realloc`.
///
/// # Safety
/// As [`shmem_realloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { shmem_realloc(ptr, size) }
}

/// `shmemalign` (deprecated): `shmem_align`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    shmem_align(alignment, size)
}
