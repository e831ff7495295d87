//! `shmem_rs._native`, the extension module of the Python package `shmem_rs` (built by maturin
//! from `pyproject.toml`): shmem4py's API and PySHMEM's symmetric data objects, natively on
//! `shmem-core`. The Python modules of the package (`python/shmem_rs/`) are the public face;
//! this module holds what they call.
//!
//! Where things are: the runtime's state, the heap table and the exception classes in
//! `state.rs`; NumPy arrays as addresses in `buf.rs`; contexts in `ctx.rs`; RMA in `rma.rs`;
//! the launcher's entry point in `launch.rs`; AMOs in `amo.rs`; waits, tests and signals in
//! `sync.rs`; locks in `lock.rs`; `ptr` and the accessibility queries in `query.rs`; teams in
//! `team.rs`; collectives in `coll.rs`; symmetric data objects (`sdo`) in `sdo.rs`; the module
//! `shmem_rs.shmem` in `shmem_mod.rs`.

mod amo;
mod buf;
mod coll;
mod ctx;
mod launch;
mod lock;
mod query;
mod rma;
mod sdo;
mod shmem_mod;
mod state;
mod sync;
mod team;

use pyo3::prelude::*;

/// What `finalize` must drop or forget before the runtime ends.
fn on_finalize() {
    rma::release_pending();
}

/// The names of the module made at their first use (`__getattr__`), and how each is made:
/// `fn a::b` wraps the function `a::b` under its own name; `"NAME" => expr` is any other object.
/// Creating the functions, classes and exceptions all at import cost 0.3 ms per process
/// (measured on this project's VM), which every PE of a job paid before its first call.
macro_rules! lazy_names {
    ($m:ident, $py:ident, $name:ident;
     fns: $($md:ident :: $f:ident),* $(,)?;
     others: $($n:literal => $e:expr),* $(,)?) => {
        /// Every name [`make`] knows, for `__dir__` and `__all__`.
        const NAMES: &[&str] = &[$($n,)* $(stringify!($f),)*];

        /// The object named `name`, new (the caller keeps it in the module), or `None`.
        fn make<'py>($m: &Bound<'py, PyModule>, $name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
            let $py = $m.py();
            Ok(Some(match $name {
                $($n => $e,)*
                $(stringify!($f) => wrap_pyfunction!($md::$f, $m)?.into_any(),)*
                _ => return Ok(None),
            }))
        }
    };
}

lazy_names! {
    m, py, name;
    fns:
        state::init, state::finalize, state::initialized, state::finalized, state::query_thread,
        state::global_exit, state::my_pe, state::n_pes, state::barrier_all, state::sync_all,
        state::alloc, state::free, state::block_len, state::view,
        rma::put, rma::get, rma::put_nbi, rma::get_nbi, rma::iput, rma::iget, rma::quiet,
        rma::fence,
        launch::launcher_main,
        team::sync,
        coll::broadcast, coll::collect, coll::fcollect, coll::alltoall, coll::alltoalls,
        coll::reduce,
        query::pe_accessible, query::addr_accessible, query::ptr,
        amo::atomic_set, amo::atomic_inc, amo::atomic_add, amo::atomic_and, amo::atomic_or,
        amo::atomic_xor, amo::atomic_fetch, amo::atomic_swap, amo::atomic_compare_swap,
        amo::atomic_fetch_inc, amo::atomic_fetch_add, amo::atomic_fetch_and,
        amo::atomic_fetch_or, amo::atomic_fetch_xor, amo::atomic_fetch_nbi,
        amo::atomic_swap_nbi, amo::atomic_compare_swap_nbi, amo::atomic_fetch_inc_nbi,
        amo::atomic_fetch_add_nbi, amo::atomic_fetch_and_nbi, amo::atomic_fetch_or_nbi,
        amo::atomic_fetch_xor_nbi, amo::atomic_op, amo::atomic_fetch_op,
        amo::atomic_fetch_op_nbi,
        sync::wait_until, sync::wait_until_all, sync::wait_until_any, sync::wait_until_some,
        sync::wait_until_all_vector, sync::wait_until_any_vector, sync::wait_until_some_vector,
        sync::test, sync::test_all, sync::test_any, sync::test_some, sync::test_all_vector,
        sync::test_any_vector, sync::test_some_vector, sync::signal_fetch,
        sync::signal_wait_until, sync::put_signal, sync::put_signal_nbi,
        lock::set_lock, lock::test_lock, lock::clear_lock;
    others:
        "ShmemError" => py.get_type::<state::ShmemError>().into_any(),
        "NotSymmetricError" => py.get_type::<state::NotSymmetricError>().into_any(),
        "FreedError" => py.get_type::<state::FreedError>().into_any(),
        "Ctx" => py.get_type::<ctx::PyCtx>().into_any(),
        "CTX_DEFAULT" => Bound::new(py, ctx::PyCtx::default_ctx())?.into_any(),
        "CTX_INVALID" => Bound::new(py, ctx::PyCtx::invalid())?.into_any(),
        "Block" => py.get_type::<state::Block>().into_any(),
        "Team" => py.get_type::<team::PyTeam>().into_any(),
        "TEAM_WORLD" => Bound::new(py, team::PyTeam::constant(team::TeamRef::World))?.into_any(),
        "TEAM_SHARED" => Bound::new(py, team::PyTeam::constant(team::TeamRef::Shared))?.into_any(),
        "TEAM_INVALID" => {
            Bound::new(py, team::PyTeam::constant(team::TeamRef::Invalid))?.into_any()
        },
        "_SdoBase" => py.get_type::<sdo::SdoBase>().into_any(),
        "__all__" => {
            let public = NAMES.iter().chain(EAGER).filter(|n| **n != "__all__");
            pyo3::types::PyList::new(py, public)?.into_any()
        },
}

/// The names made at import (plain values).
const EAGER: &[&str] = &["VERSION", "VENDOR_STRING", "MAX_NAME_LEN"];

/// A name of the module not made yet: made now and kept (PEP 562), so that the next use finds
/// it directly and a constant stays the same object.
#[pyfunction(pass_module)]
fn __getattr__<'py>(m: &Bound<'py, PyModule>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    if let Some(v) = m.dict().get_item(name)? {
        return Ok(v);
    }
    match make(m, name)? {
        Some(v) => {
            m.setattr(name, &v)?;
            Ok(v)
        }
        None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "module 'shmem_rs._native' has no attribute {name:?}"
        ))),
    }
}

/// The module's names, those made at their first use included.
#[pyfunction(pass_module)]
fn __dir__(m: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = m.dict().keys().extract()?;
    names.extend(NAMES.iter().map(|n| n.to_string()));
    names.sort();
    names.dedup();
    Ok(names)
}

/// The module: plain constants, then everything else at its first use (`__getattr__`).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", shmem_core::VERSION)?;
    m.add("VENDOR_STRING", shmem_core::VENDOR_STRING)?;
    m.add("MAX_NAME_LEN", shmem_core::MAX_NAME_LEN)?;
    m.add_function(wrap_pyfunction!(__getattr__, m)?)?;
    m.add_function(wrap_pyfunction!(__dir__, m)?)?;
    m.add_function(wrap_pyfunction!(shmem_mod::_shmem_module, m)?)?;
    // `add` keeps an `__all__` of what it added; the whole list is made at its first use.
    m.dict().del_item("__all__")?;
    Ok(())
}
