//! `shmem_rs._native`, the extension module of the Python package `shmem_rs` (built by maturin
//! from `pyproject.toml`): shmem4py's API and PySHMEM's symmetric data objects, natively on
//! `shmem-core`. The Python modules of the package (`python/shmem_rs/`) are the public face;
//! this module holds what they call.
//!
//! Where things are: the runtime's state, the heap table and the exception classes in
//! `state.rs`; NumPy arrays as addresses in `buf.rs`; contexts in `ctx.rs`; RMA in `rma.rs`;
//! the launcher's entry point in `launch.rs`.

mod buf;
mod ctx;
mod launch;
mod rma;
mod sdo;
mod state;

use pyo3::prelude::*;

/// What `finalize` must drop or forget before the runtime ends.
fn on_finalize() {
    rma::release_pending();
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ShmemError", py.get_type::<state::ShmemError>())?;
    m.add(
        "NotSymmetricError",
        py.get_type::<state::NotSymmetricError>(),
    )?;
    m.add("FreedError", py.get_type::<state::FreedError>())?;
    m.add_class::<ctx::PyCtx>()?;
    m.add("CTX_DEFAULT", ctx::PyCtx::default_ctx())?;
    m.add("CTX_INVALID", ctx::PyCtx::invalid())?;
    m.add_function(wrap_pyfunction!(state::init, m)?)?;
    m.add_function(wrap_pyfunction!(state::finalize, m)?)?;
    m.add_function(wrap_pyfunction!(state::initialized, m)?)?;
    m.add_function(wrap_pyfunction!(state::finalized, m)?)?;
    m.add_function(wrap_pyfunction!(state::query_thread, m)?)?;
    m.add_function(wrap_pyfunction!(state::global_exit, m)?)?;
    m.add_function(wrap_pyfunction!(state::my_pe, m)?)?;
    m.add_function(wrap_pyfunction!(state::n_pes, m)?)?;
    m.add_function(wrap_pyfunction!(state::barrier_all, m)?)?;
    m.add_function(wrap_pyfunction!(state::sync_all, m)?)?;
    m.add_function(wrap_pyfunction!(state::alloc, m)?)?;
    m.add_function(wrap_pyfunction!(state::free, m)?)?;
    m.add_function(wrap_pyfunction!(state::block_len, m)?)?;
    m.add_function(wrap_pyfunction!(rma::put, m)?)?;
    m.add_function(wrap_pyfunction!(rma::get, m)?)?;
    m.add_function(wrap_pyfunction!(rma::put_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(rma::get_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(rma::iput, m)?)?;
    m.add_function(wrap_pyfunction!(rma::iget, m)?)?;
    m.add_function(wrap_pyfunction!(rma::quiet, m)?)?;
    m.add_function(wrap_pyfunction!(rma::fence, m)?)?;
    m.add_function(wrap_pyfunction!(launch::launcher_main, m)?)?;
    // Symmetric data objects (sdo.rs).
    m.add_class::<sdo::SdoBase>()?;
    Ok(())
}
