//! Communication contexts as Python sees them: `shmem.Ctx` (with `Ctx.create`, `destroy`,
//! `get_team`, `fence`, `quiet`), `CTX_DEFAULT` and `CTX_INVALID`.
//!
//! A `Ctx` object holds a handle that `destroy` may change (to `CTX_INVALID`), as shmem4py's
//! objects do. A created context is an entry leaked for the life of the process: destroying it
//! quiets it and marks it destroyed (later use through another object naming it raises), so no
//! handle ever points at freed memory.

use crate::state::{self, ShmemError};
use crate::team::{self, TeamRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use shmem_core::{CtxOptions, Shared};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// `CTX_PRIVATE`, `CTX_SERIALIZED`, `CTX_NOSTORE` (OpenSHMEM's values).
pub(crate) const CTX_PRIVATE: i64 = 1;
pub(crate) const CTX_SERIALIZED: i64 = 2;
pub(crate) const CTX_NOSTORE: i64 = 4;

/// A created context and the world PEs of its team (`None`: the world's numbering).
pub(crate) struct CtxEntry {
    pub(crate) ctx: shmem_core::Ctx<'static, Shared>,
    pub(crate) team_pes: Option<Box<[usize]>>,
    pub(crate) destroyed: AtomicBool,
    /// The team it was made from (`Ctx.get_team`).
    pub(crate) team: TeamRef,
    /// The options it was made with (`CTX_*` bits).
    pub(crate) options: i64,
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

    /// Marks the entry destroyed, quieting it first (the GIL released) when this call is the
    /// one that destroys it.
    pub(crate) fn destroy(&'static self, py: Python<'_>) {
        if !self.destroyed.swap(true, Ordering::AcqRel) {
            crate::rma::without_gil(py, self, |c| c.ctx.quiet());
            crate::rma::release_pending();
        }
    }
}

/// What a `Ctx` object stands for.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    Invalid,
    Default,
    Created(&'static CtxEntry),
}

/// The handle value of `CTX_DEFAULT` (never dereferenced; entries are aligned above 1).
fn default_handle() -> *mut CtxEntry {
    ptr::without_provenance_mut(1)
}

impl Which {
    fn handle(self) -> *mut CtxEntry {
        match self {
            Which::Invalid => ptr::null_mut(),
            Which::Default => default_handle(),
            Which::Created(e) => ptr::from_ref(e).cast_mut(),
        }
    }

    fn of(h: *mut CtxEntry) -> Which {
        if h.is_null() {
            Which::Invalid
        } else if h == default_handle() {
            Which::Default
        } else {
            // SAFETY: a handle other than the two sentinels is a `CtxEntry` leaked by
            // `new_entry` (never freed).
            Which::Created(unsafe { &*h })
        }
    }
}

/// A communication context (`shmem.Ctx`): `CTX_DEFAULT`, `CTX_INVALID`, or one made by
/// `Ctx.create` / `Team.create_ctx`. ``Ctx()`` is `CTX_INVALID`; ``Ctx(ctx)`` names the same
/// context as ``ctx``. Destroying it (``destroy``, or the end of a ``with`` block) turns the
/// object into `CTX_INVALID`.
#[pyclass(module = "shmem_rs.shmem", name = "Ctx", frozen, subclass)]
pub(crate) struct PyCtx {
    handle: AtomicPtr<CtxEntry>,
    /// `CTX_DEFAULT` and `CTX_INVALID` themselves: `destroy` leaves them alone.
    fixed: bool,
}

impl PyCtx {
    fn with(which: Which, fixed: bool) -> Self {
        PyCtx {
            handle: AtomicPtr::new(which.handle()),
            fixed,
        }
    }
    /// The module's `CTX_INVALID`.
    pub(crate) fn invalid() -> Self {
        PyCtx::with(Which::Invalid, true)
    }
    /// The module's `CTX_DEFAULT`.
    pub(crate) fn default_ctx() -> Self {
        PyCtx::with(Which::Default, true)
    }
    #[inline]
    pub(crate) fn which(&self) -> Which {
        Which::of(self.handle.load(Ordering::Acquire))
    }
}

/// Makes a context whose PE numbers are those of `team`.
pub(crate) fn new_entry(py: Python<'_>, op: &str, options: i64, team: TeamRef) -> PyResult<PyCtx> {
    let w = state::world(op)?;
    if options & !(CTX_PRIVATE | CTX_SERIALIZED | CTX_NOSTORE) != 0 {
        return Err(PyValueError::new_err(format!(
            "{op}: options {options:#x} are not a combination of CTX_PRIVATE (1), \
             CTX_SERIALIZED (2) and CTX_NOSTORE (4)"
        )));
    }
    let team_pes = team.context_pes(op)?;
    let opts = CtxOptions {
        nostore: options & CTX_NOSTORE != 0,
    };
    let ctx = crate::rma::without_gil(py, w, |w| w.ctx_create::<Shared>(opts))
        .map_err(|e| ShmemError::new_err(format!("{op}: {e}")))?;
    let entry: &'static CtxEntry = Box::leak(Box::new(CtxEntry {
        ctx,
        team_pes,
        destroyed: AtomicBool::new(false),
        team,
        options,
    }));
    team.adopt(entry);
    Ok(PyCtx::with(Which::Created(entry), false))
}

#[pymethods]
impl PyCtx {
    /// `Ctx()` and `Ctx(None)` are `CTX_INVALID`; `Ctx(ctx)` is the same context as `ctx`.
    #[new]
    #[pyo3(signature = (ctx = None))]
    fn new(ctx: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match ctx {
            None => Ok(PyCtx::with(Which::Invalid, false)),
            Some(c) => match c.cast::<PyCtx>() {
                Ok(c) => Ok(PyCtx::with(c.get().which(), false)),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "Ctx: expected a Ctx or None, got {}",
                    c.get_type().name()?
                ))),
            },
        }
    }

    /// Return a new communication context, made on ``team`` (default: the world team) with
    /// ``options`` (a bitwise OR of `CTX` members, or 0). PE numbers given to operations on
    /// it are those of the team. `RuntimeError` for an invalid or destroyed team.
    #[staticmethod]
    #[pyo3(signature = (options = 0, team = None))]
    fn create(py: Python<'_>, options: i64, team: Option<&Bound<'_, PyAny>>) -> PyResult<PyCtx> {
        const OP: &str = "Ctx.create";
        let t = match team {
            None => TeamRef::World,
            Some(t) => team::team_ref(OP, t)?,
        };
        new_entry(py, OP, options, t)
    }

    /// Destroy the communication context (after completing its operations); the object
    /// becomes `CTX_INVALID`. `CTX_DEFAULT` and `CTX_INVALID` themselves are left alone.
    fn destroy(&self, py: Python<'_>) {
        if self.fixed {
            return;
        }
        let old = Which::of(self.handle.swap(ptr::null_mut(), Ordering::AcqRel));
        if let Which::Created(e) = old {
            e.destroy(py);
        }
    }

    /// Return the team the context was made from (`TEAM_WORLD` for `CTX_DEFAULT`).
    /// `RuntimeError` for `CTX_INVALID` or a destroyed context.
    fn get_team(&self) -> PyResult<team::PyTeam> {
        const OP: &str = "Ctx.get_team";
        state::world(OP)?;
        match self.which() {
            Which::Invalid => Err(invalid(OP)),
            Which::Default => Ok(team::PyTeam::of(TeamRef::World)),
            Which::Created(e) if e.destroyed.load(Ordering::Acquire) => Err(destroyed(OP)),
            Which::Created(e) => Ok(team::PyTeam::of(e.team)),
        }
    }

    /// Order this PE's puts on this context: those to a PE before the fence are delivered
    /// before those to it after the fence.
    fn fence(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::rma::fence(Some(slf.as_any()))
    }

    /// Wait for completion of this PE's operations on this context (the GIL released).
    fn quiet(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::rma::quiet(slf.py(), Some(slf.as_any()))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        match other.cast::<PyCtx>() {
            Ok(o) => team::bool_obj(py, self.which().handle() == o.get().which().handle()),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __ne__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        match other.cast::<PyCtx>() {
            Ok(o) => team::bool_obj(py, self.which().handle() != o.get().which().handle()),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __bool__(&self) -> bool {
        !matches!(self.which(), Which::Invalid)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.destroy(py);
    }

    fn __repr__(&self) -> String {
        match self.which() {
            Which::Invalid => "Ctx(CTX_INVALID)".into(),
            Which::Default => "Ctx(CTX_DEFAULT)".into(),
            Which::Created(e) => {
                let state = if e.destroyed.load(Ordering::Acquire) {
                    ", destroyed"
                } else {
                    ""
                };
                format!("Ctx({:p}, options={}{state})", e, e.options)
            }
        }
    }
}

#[cold]
fn invalid(op: &str) -> PyErr {
    ShmemError::new_err(format!("{op}: the context is CTX_INVALID"))
}

#[cold]
fn destroyed(op: &str) -> PyErr {
    ShmemError::new_err(format!("{op}: the context was destroyed"))
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
    match c.get().which() {
        Which::Default => Ok(None),
        Which::Invalid => Err(invalid(op)),
        Which::Created(e) if e.destroyed.load(Ordering::Acquire) => Err(destroyed(op)),
        Which::Created(e) => Ok(Some(e)),
    }
}
