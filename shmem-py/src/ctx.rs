//! Communication contexts as Python sees them: `shmem.Ctx`, with `CTX_DEFAULT` and
//! `CTX_INVALID`. A created context is an entry leaked for the life of the process: destroying it
//! marks it destroyed (later use raises), so no handle ever points at freed memory.

use crate::state::{self, ShmemError};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use shmem_core::Shared;
use std::sync::atomic::{AtomicBool, Ordering};

/// A created context and the world PEs of its team (`None`: the world's numbering).
pub(crate) struct CtxEntry {
    pub(crate) ctx: shmem_core::Ctx<'static, Shared>,
    pub(crate) team_pes: Option<Box<[usize]>>,
    pub(crate) destroyed: AtomicBool,
}

// SAFETY: the context is `Shared` (usable from any thread); the entry is only read after it is
// made, but for `destroyed`, an atomic.
unsafe impl Sync for CtxEntry {}
// SAFETY: as above.
unsafe impl Send for CtxEntry {}

impl CtxEntry {
    /// The world PE of `pe` in this context's team, or `IndexError`.
    #[inline]
    pub(crate) fn pe(&self, op: &str, pe: i64, n_world: usize) -> PyResult<usize> {
        match &self.team_pes {
            None => state::check_pe(op, pe, n_world),
            Some(pes) => {
                let p = state::check_pe(op, pe, pes.len())?;
                Ok(pes[p])
            }
        }
    }
}

/// What a `Ctx` object stands for.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    Invalid,
    Default,
    // Made by `Ctx.create` and `Team.create_ctx` (not yet in this module).
    #[allow(dead_code)]
    Created(&'static CtxEntry),
}

/// A communication context (`shmem.Ctx`): `CTX_DEFAULT`, `CTX_INVALID`, or one made by
/// `Ctx.create` / `Team.create_ctx`.
#[pyclass(module = "shmem_rs.shmem", name = "Ctx", frozen, subclass)]
pub(crate) struct PyCtx {
    pub(crate) which: Which,
}

impl PyCtx {
    pub(crate) fn invalid() -> Self {
        PyCtx {
            which: Which::Invalid,
        }
    }
    pub(crate) fn default_ctx() -> Self {
        PyCtx {
            which: Which::Default,
        }
    }
}

#[pymethods]
impl PyCtx {
    /// `Ctx()` and `Ctx(None)` are `CTX_INVALID`; `Ctx(ctx)` is the same context as `ctx`.
    #[new]
    #[pyo3(signature = (ctx = None))]
    fn new(ctx: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match ctx {
            None => Ok(PyCtx::invalid()),
            Some(c) => match c.cast::<PyCtx>() {
                Ok(c) => Ok(PyCtx {
                    which: c.get().which,
                }),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "Ctx: expected a Ctx or None, got {}",
                    c.get_type().name()?
                ))),
            },
        }
    }
}

/// The context `ctx` names for `op`: `None` for the default context (`ctx=None` or
/// `CTX_DEFAULT`), the entry of a created one; `ShmemError` for `CTX_INVALID` or a destroyed
/// context, `TypeError` for anything else.
#[inline]
pub(crate) fn resolve(
    op: &str,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<&'static CtxEntry>> {
    let Some(c) = ctx else { return Ok(None) };
    let Ok(c) = c.cast::<PyCtx>() else {
        return Err(PyTypeError::new_err(format!(
            "{op}: ctx must be a Ctx or None, not {}",
            c.get_type().name()?
        )));
    };
    match c.get().which {
        Which::Default => Ok(None),
        Which::Invalid => Err(ShmemError::new_err(format!(
            "{op}: the context is CTX_INVALID"
        ))),
        Which::Created(e) if e.destroyed.load(Ordering::Acquire) => Err(ShmemError::new_err(
            format!("{op}: the context was destroyed"),
        )),
        Which::Created(e) => Ok(Some(e)),
    }
}
