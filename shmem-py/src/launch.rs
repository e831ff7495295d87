//! The launcher inside the package: the console scripts `shmemrun` and `oshrun` that pip
//! installs call [`launcher_main`], which runs `shmem-run` (the same launcher as the Rust
//! build's) in this process and never returns.

use pyo3::prelude::*;
use std::ffi::OsString;

/// Runs the launcher with the command line `args` (`args[0]` is the command's name) and exits
/// the process with the job's status. The caller (`shmem_rs._launch`) sets `SHMEM_AGENT` to the
/// script's own path first, so that hosts started by `--hosts` run the same command as their
/// agent.
#[pyfunction]
pub(crate) fn launcher_main(py: Python<'_>, args: Vec<OsString>) {
    crate::rma::without_gil(py, args, |args| shmem_run::main_with_args(args))
}
