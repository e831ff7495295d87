//! `shmem_rs._native`, the extension module of the Python package `shmem_rs` (built by maturin
//! from `pyproject.toml`): shmem4py's API and PySHMEM's symmetric data objects, natively on
//! `shmem-core`. The Python modules of the package (`python/shmem_rs/`) are the public face;
//! this module holds what they call.
//!
//! Where things are: the runtime's state, the heap table and the exception classes in
//! `state.rs`; NumPy arrays as addresses in `buf.rs`; contexts in `ctx.rs`; RMA in `rma.rs`;
//! the launcher's entry point in `launch.rs`; AMOs in `amo.rs`; waits, tests and signals in
//! `sync.rs`; locks in `lock.rs`; `ptr` and the accessibility queries in `query.rs`; teams in
//! `team.rs`; collectives in `coll.rs`; symmetric data objects (`sdo`) in `sdo.rs`.

mod amo;
mod buf;
mod coll;
mod ctx;
mod launch;
mod lock;
mod query;
mod rma;
mod sdo;
mod state;
mod sync;
mod team;

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
    m.add_function(wrap_pyfunction!(state::view, m)?)?;
    m.add_class::<state::Block>()?;
    m.add_function(wrap_pyfunction!(rma::put, m)?)?;
    m.add_function(wrap_pyfunction!(rma::get, m)?)?;
    m.add_function(wrap_pyfunction!(rma::put_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(rma::get_nbi, m)?)?;
    m.add_function(wrap_pyfunction!(rma::iput, m)?)?;
    m.add_function(wrap_pyfunction!(rma::iget, m)?)?;
    m.add_function(wrap_pyfunction!(rma::quiet, m)?)?;
    m.add_function(wrap_pyfunction!(rma::fence, m)?)?;
    m.add_function(wrap_pyfunction!(launch::launcher_main, m)?)?;
    // Teams and collectives (team.rs, coll.rs); Ctx's methods are in ctx.rs.
    m.add_class::<team::PyTeam>()?;
    m.add("TEAM_WORLD", team::PyTeam::constant(team::TeamRef::World))?;
    m.add("TEAM_SHARED", team::PyTeam::constant(team::TeamRef::Shared))?;
    m.add(
        "TEAM_INVALID",
        team::PyTeam::constant(team::TeamRef::Invalid),
    )?;
    m.add_function(wrap_pyfunction!(team::sync, m)?)?;
    m.add_function(wrap_pyfunction!(coll::broadcast, m)?)?;
    m.add_function(wrap_pyfunction!(coll::collect, m)?)?;
    m.add_function(wrap_pyfunction!(coll::fcollect, m)?)?;
    m.add_function(wrap_pyfunction!(coll::alltoall, m)?)?;
    m.add_function(wrap_pyfunction!(coll::alltoalls, m)?)?;
    m.add_function(wrap_pyfunction!(coll::reduce, m)?)?;
    // Queries, AMOs, point-to-point synchronization, signals and locks.
    m.add("VERSION", shmem_core::VERSION)?;
    m.add("VENDOR_STRING", shmem_core::VENDOR_STRING)?;
    m.add("MAX_NAME_LEN", shmem_core::MAX_NAME_LEN)?;
    for f in [
        wrap_pyfunction!(query::pe_accessible, m)?,
        wrap_pyfunction!(query::addr_accessible, m)?,
        wrap_pyfunction!(query::ptr, m)?,
        wrap_pyfunction!(amo::atomic_set, m)?,
        wrap_pyfunction!(amo::atomic_inc, m)?,
        wrap_pyfunction!(amo::atomic_add, m)?,
        wrap_pyfunction!(amo::atomic_and, m)?,
        wrap_pyfunction!(amo::atomic_or, m)?,
        wrap_pyfunction!(amo::atomic_xor, m)?,
        wrap_pyfunction!(amo::atomic_fetch, m)?,
        wrap_pyfunction!(amo::atomic_swap, m)?,
        wrap_pyfunction!(amo::atomic_compare_swap, m)?,
        wrap_pyfunction!(amo::atomic_fetch_inc, m)?,
        wrap_pyfunction!(amo::atomic_fetch_add, m)?,
        wrap_pyfunction!(amo::atomic_fetch_and, m)?,
        wrap_pyfunction!(amo::atomic_fetch_or, m)?,
        wrap_pyfunction!(amo::atomic_fetch_xor, m)?,
        wrap_pyfunction!(amo::atomic_fetch_nbi, m)?,
        wrap_pyfunction!(amo::atomic_swap_nbi, m)?,
        wrap_pyfunction!(amo::atomic_compare_swap_nbi, m)?,
        wrap_pyfunction!(amo::atomic_fetch_inc_nbi, m)?,
        wrap_pyfunction!(amo::atomic_fetch_add_nbi, m)?,
        wrap_pyfunction!(amo::atomic_fetch_and_nbi, m)?,
        wrap_pyfunction!(amo::atomic_fetch_or_nbi, m)?,
        wrap_pyfunction!(amo::atomic_fetch_xor_nbi, m)?,
        wrap_pyfunction!(amo::atomic_op, m)?,
        wrap_pyfunction!(amo::atomic_fetch_op, m)?,
        wrap_pyfunction!(amo::atomic_fetch_op_nbi, m)?,
        wrap_pyfunction!(sync::wait_until, m)?,
        wrap_pyfunction!(sync::wait_until_all, m)?,
        wrap_pyfunction!(sync::wait_until_any, m)?,
        wrap_pyfunction!(sync::wait_until_some, m)?,
        wrap_pyfunction!(sync::wait_until_all_vector, m)?,
        wrap_pyfunction!(sync::wait_until_any_vector, m)?,
        wrap_pyfunction!(sync::wait_until_some_vector, m)?,
        wrap_pyfunction!(sync::test, m)?,
        wrap_pyfunction!(sync::test_all, m)?,
        wrap_pyfunction!(sync::test_any, m)?,
        wrap_pyfunction!(sync::test_some, m)?,
        wrap_pyfunction!(sync::test_all_vector, m)?,
        wrap_pyfunction!(sync::test_any_vector, m)?,
        wrap_pyfunction!(sync::test_some_vector, m)?,
        wrap_pyfunction!(sync::signal_fetch, m)?,
        wrap_pyfunction!(sync::signal_wait_until, m)?,
        wrap_pyfunction!(sync::put_signal, m)?,
        wrap_pyfunction!(sync::put_signal_nbi, m)?,
        wrap_pyfunction!(lock::set_lock, m)?,
        wrap_pyfunction!(lock::test_lock, m)?,
        wrap_pyfunction!(lock::clear_lock, m)?,
    ] {
        m.add_function(f)?;
    }
    // Symmetric data objects (sdo.rs).
    m.add_class::<sdo::SdoBase>()?;
    Ok(())
}
