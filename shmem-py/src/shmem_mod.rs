//! `shmem_rs.shmem`, shmem4py's API: a module made here, natively, when a program first asks for
//! it (`from shmem_rs import shmem`, through the package's `__getattr__`, or `import
//! shmem_rs.shmem`, through the stand-in `shmem.py`). Its own functions are the few that
//! shmem4py defines beyond the calls (`init`, `init_thread`, `info_get_version`, ...); every
//! other name is taken at its first use from where it lives: the native calls, classes and
//! constants from `_native`, the enumerations from `_enums`, the heap's helpers, signals, locks,
//! reductions and compatibility objects from `_api`. Nothing of it is read from a file: a
//! Python module of its size cost every PE 0.4 ms to find, read, unmarshal and run (measured on
//! this project's VM), which was a tenth of what starting the runtime costs. The types are in
//! `shmem.pyi`.

use pyo3::exceptions::{PyAttributeError, PySystemExit};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyFrozenSet, PyModule};

/// The names taken from `shmem_rs._native`.
const NATIVE: &[&str] = &[
    "CTX_DEFAULT",
    "CTX_INVALID",
    "Ctx",
    "FreedError",
    "NotSymmetricError",
    "ShmemError",
    "TEAM_INVALID",
    "TEAM_SHARED",
    "TEAM_WORLD",
    "Team",
    "addr_accessible",
    "alltoall",
    "alltoalls",
    "atomic_add",
    "atomic_and",
    "atomic_compare_swap",
    "atomic_compare_swap_nbi",
    "atomic_fetch",
    "atomic_fetch_add",
    "atomic_fetch_add_nbi",
    "atomic_fetch_and",
    "atomic_fetch_and_nbi",
    "atomic_fetch_inc",
    "atomic_fetch_inc_nbi",
    "atomic_fetch_nbi",
    "atomic_fetch_op",
    "atomic_fetch_op_nbi",
    "atomic_fetch_or",
    "atomic_fetch_or_nbi",
    "atomic_fetch_xor",
    "atomic_fetch_xor_nbi",
    "atomic_inc",
    "atomic_op",
    "atomic_or",
    "atomic_set",
    "atomic_swap",
    "atomic_swap_nbi",
    "atomic_xor",
    "barrier_all",
    "broadcast",
    "clear_lock",
    "collect",
    "fcollect",
    "fence",
    "get",
    "get_nbi",
    "iget",
    "iput",
    "my_pe",
    "n_pes",
    "pe_accessible",
    "put",
    "put_nbi",
    "put_signal",
    "put_signal_nbi",
    "quiet",
    "set_lock",
    "signal_fetch",
    "signal_wait_until",
    "sync",
    "sync_all",
    "test",
    "test_all",
    "test_all_vector",
    "test_any",
    "test_any_vector",
    "test_lock",
    "test_some",
    "test_some_vector",
    "wait_until",
    "wait_until_all",
    "wait_until_all_vector",
    "wait_until_any",
    "wait_until_any_vector",
    "wait_until_some",
    "wait_until_some_vector",
];

/// The names taken from `shmem_rs._enums` (the enumerations and their members).
const ENUMS: &[&str] = &[
    "THREAD",
    "MALLOC",
    "AMO",
    "SIGNAL",
    "CMP",
    "CTX",
    "OP",
    "THREAD_SINGLE",
    "THREAD_FUNNELED",
    "THREAD_SERIALIZED",
    "THREAD_MULTIPLE",
    "MALLOC_ATOMICS_REMOTE",
    "MALLOC_SIGNAL_REMOTE",
    "AMO_SET",
    "AMO_INC",
    "AMO_ADD",
    "AMO_AND",
    "AMO_OR",
    "AMO_XOR",
    "SIGNAL_SET",
    "SIGNAL_ADD",
    "CMP_EQ",
    "CMP_NE",
    "CMP_GT",
    "CMP_LE",
    "CMP_LT",
    "CMP_GE",
    "CTX_PRIVATE",
    "CTX_SERIALIZED",
    "CTX_NOSTORE",
    "OP_AND",
    "OP_OR",
    "OP_XOR",
    "OP_MAX",
    "OP_MIN",
    "OP_SUM",
    "OP_PROD",
];

/// The names taken from `shmem_rs._api` (defined in Python).
const API: &[&str] = &[
    "alloc",
    "free",
    "fromalloc",
    "new_array",
    "del_array",
    "array",
    "empty",
    "zeros",
    "ones",
    "full",
    "ptr",
    "new_signal",
    "del_signal",
    "new_lock",
    "del_lock",
    "Lock",
    "lib",
    "reduce",
    "and_reduce",
    "or_reduce",
    "xor_reduce",
    "max_reduce",
    "min_reduce",
    "sum_reduce",
    "prod_reduce",
    "_getbuffer",
];

/// The module, made once.
static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The module's text (its `__doc__`).
const DOC: &str = "OpenSHMEM for Python on shmem-rs, with shmem4py's API.

``from shmem_rs import shmem`` in place of ``from shmem4py import shmem``: the same functions,
classes, enumerations and constants, with the same signatures, defaults and results, over
NumPy arrays on the symmetric heap. The calls are native; the enumerations, the allocation
helpers and the compatibility objects (``ffi``, ``lib``) are Python, taken at their first use.

Bad input raises on the PE that made the call, which goes on; nothing is transferred:
``IndexError`` for a PE out of range, ``NotSymmetricError`` (a ``ValueError``) for an array
that must be symmetric and is not, ``TypeError`` for a dtype the operation does not take,
``ValueError`` for sizes. Importing this module starts the runtime, as ``shmem_rs.rc`` says
(``rc.initialize``, ``rc.threads``, ``rc.thread_level``, ``rc.finalize``; the environment's
``SHMEM4PY_RC_<NAME>`` or ``SHMEM_RS_RC_<NAME>`` override them).
";

/// `shmem_rs.shmem`, made at the first call (the package registers it and starts the runtime).
#[pyfunction]
pub(crate) fn _shmem_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let m = MODULE.get_or_try_init(py, || -> PyResult<Py<PyModule>> {
        let m = PyModule::new(py, "shmem_rs.shmem")?;
        m.setattr("__doc__", DOC)?;
        let (major, minor) = shmem_core::VERSION;
        m.setattr("MAJOR_VERSION", major)?;
        m.setattr("MINOR_VERSION", minor)?;
        m.setattr("VENDOR_STRING", shmem_core::VENDOR_STRING)?;
        for f in [
            wrap_pyfunction!(info_get_version, &m)?,
            wrap_pyfunction!(info_get_name, &m)?,
            wrap_pyfunction!(init, &m)?,
            wrap_pyfunction!(finalize, &m)?,
            wrap_pyfunction!(global_exit, &m)?,
            wrap_pyfunction!(init_thread, &m)?,
            wrap_pyfunction!(query_thread, &m)?,
            wrap_pyfunction!(pcontrol, &m)?,
            wrap_pyfunction!(getattr_, &m)?,
            wrap_pyfunction!(dir_, &m)?,
        ] {
            m.setattr(f.getattr("__name__")?.extract::<String>()?.as_str(), f)?;
        }
        Ok(m.unbind())
    })?;
    Ok(m.bind(py).clone())
}

/// Return the major and minor version of the library implementation.
#[pyfunction]
fn info_get_version() -> (u32, u32) {
    shmem_core::VERSION
}

/// Return the name string of the library implementation.
#[pyfunction]
fn info_get_name() -> &'static str {
    shmem_core::VENDOR_STRING
}

/// The package's `init` (`shmem_rs.init`: it registers the finalize at exit) with `level`.
fn package_init(py: Python<'_>, level: i32) -> PyResult<i32> {
    py.import("shmem_rs")?
        .getattr("init")?
        .call1((level,))?
        .extract()
}

/// `shmem_rs._enums.THREAD(level)`.
fn thread(py: Python<'_>, level: i32) -> PyResult<Bound<'_, PyAny>> {
    py.import("shmem_rs._enums")?
        .getattr("THREAD")?
        .call1((level,))
}

/// Start the runtime (nothing when it runs). Collective.
///
/// Every PE calls this routine, or `init_thread`, before any other OpenSHMEM routine (importing
/// this module does it, unless ``rc.initialize`` is false), and `finalize` at the end (done at
/// exit unless ``rc.finalize`` is false). The rendezvous releases the GIL while it waits.
#[pyfunction]
fn init(py: Python<'_>) -> PyResult<()> {
    package_init(py, 3).map(drop)
}

/// End the runtime: complete this PE's operations, meet every PE, release the resources.
///
/// Collective. Only the OpenSHMEM part of the program ends: the process goes on, but may make
/// no OpenSHMEM call after it (the runtime cannot restart). Nothing when it does not run.
#[pyfunction]
fn finalize(py: Python<'_>) {
    crate::state::finalize(py)
}

/// End the whole program, every PE, with ``status``. Any PE can call it.
///
/// Args:
///     status: The exit status of the program.
#[pyfunction]
#[pyo3(signature = (status = 0))]
fn global_exit(status: i32) -> PyResult<()> {
    crate::state::global_exit(status)?;
    Err(PySystemExit::new_err(status))
}

/// Start the runtime with the thread level ``requested`` and return the level provided.
///
/// Either `init` or `init_thread` starts the program.
///
/// Args:
///     requested: The thread level the program needs (a `THREAD`; default
///         ``THREAD_MULTIPLE``).
///
/// Returns:
///     The thread level provided (the one requested).
#[pyfunction]
#[pyo3(signature = (requested = 3))]
fn init_thread(py: Python<'_>, requested: i32) -> PyResult<Bound<'_, PyAny>> {
    let level = package_init(py, requested)?;
    thread(py, level)
}

/// Return the thread level the runtime provides.
#[pyfunction]
fn query_thread(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    thread(py, crate::state::query_thread()?)
}

/// Set the profiling level (0: off, 1: on, 2 and above: detailed).
///
/// The runtime has no profiling interface to control: the call checks ``level`` and returns.
///
/// Args:
///     level: The profiling level.
#[pyfunction]
#[pyo3(signature = (level = 1))]
fn pcontrol(level: i64) {
    let _ = level;
}

/// The names not made with the module, at their first use: the native calls, classes and
/// constants (``shmem_rs._native``), the enumerations and their constants (``CMP``,
/// ``CMP_EQ``, ..., from ``shmem_rs._enums``), the heap's helpers, ``ptr``, signals, locks, the
/// reductions and the compatibility objects (``shmem_rs._api``), and ``ffi``, a ``cffi.FFI()``
/// made when first asked for (cffi is needed only then).
#[pyfunction(pass_module)]
#[pyo3(name = "__getattr__")]
fn getattr_<'py>(m: &Bound<'py, PyModule>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = m.py();
    let from = |module: &str| py.import(module)?.getattr(name);
    let value = if NATIVE.contains(&name) {
        from("shmem_rs._native")?
    } else if ENUMS.contains(&name) {
        from("shmem_rs._enums")?
    } else if API.contains(&name) {
        from("shmem_rs._api")?
    } else if name == "ffi" {
        return py.import("shmem_rs._api")?.getattr("_ffi")?.call0();
    } else if let Some(names) = [("_NATIVE", NATIVE), ("_ENUMS", ENUMS), ("_API", API)]
        .iter()
        .find_map(|(n, names)| (*n == name).then_some(names))
    {
        PyFrozenSet::new(py, names.iter())?.into_any()
    } else {
        return Err(PyAttributeError::new_err(format!(
            "module 'shmem_rs.shmem' has no attribute {name:?}"
        )));
    };
    m.setattr(name, &value)?;
    Ok(value)
}

/// The module's names, those taken at first use included.
#[pyfunction(pass_module)]
#[pyo3(name = "__dir__")]
fn dir_(m: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = m.dict().keys().extract()?;
    names.extend(NATIVE.iter().chain(ENUMS).chain(API).map(|n| n.to_string()));
    names.push("ffi".to_string());
    names.sort();
    names.dedup();
    Ok(names)
}
