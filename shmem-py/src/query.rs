//! Queries: the library's version and vendor, `pe_accessible`, `addr_accessible`, and the
//! address of a peer's copy of a symmetric array for `ptr`.

use crate::buf::buf;
use crate::rma::not_symmetric;
use crate::state::{check_pe, world};
use pyo3::prelude::*;
use shmem_core::prelude::*;
use shmem_core::raw;

/// Whether PE ``pe`` is a PE of the job that this PE can reach (every one is).
#[pyfunction]
pub(crate) fn pe_accessible(pe: i64) -> PyResult<bool> {
    let w = world("pe_accessible")?;
    Ok(usize::try_from(pe).is_ok_and(|p| p < w.n_pes() && w.pe_accessible(p)))
}

/// Whether the array ``addr`` is symmetric (so PE ``pe`` can access it) and ``pe`` reachable.
#[pyfunction]
pub(crate) fn addr_accessible(addr: &Bound<'_, PyAny>, pe: i64) -> PyResult<bool> {
    let op = "addr_accessible";
    world(op)?;
    let b = buf(op, "addr", addr, true)?;
    let bytes = (b.len * b.kind.size).max(1);
    Ok(raw::offset_of(b.ptr, bytes).is_some() && pe_accessible(pe)?)
}

/// The address of PE ``pe``'s copy of the ``nbytes`` symmetric bytes at ``address`` when it is
/// mapped into this process, else None. `IndexError` for a PE out of range,
/// `NotSymmetricError` when the bytes are not symmetric.
#[pyfunction]
pub(crate) fn ptr(address: usize, nbytes: usize, pe: i64) -> PyResult<Option<usize>> {
    let op = "ptr";
    let w = world(op)?;
    let p = check_pe(op, pe, w.n_pes())?;
    let at = address as *mut u8;
    // SAFETY: only the address of the peer's copy is computed; the caller holds the array.
    let s = unsafe { raw::sym::<u8>(at, nbytes.max(1)) }
        .ok_or_else(|| not_symmetric(op, "target", at, nbytes))?;
    Ok(s.peer_slice(p).map(|v| v.as_ptr() as usize))
}
