//! Teams as Python sees them: `shmem.Team` (with `split_strided`, `get_config`, `my_pe`,
//! `n_pes`, `translate_pe`, `create_ctx`, `sync`, `destroy`), `TEAM_WORLD`, `TEAM_SHARED` and
//! `TEAM_INVALID`.
//!
//! A `Team` object holds a handle that `destroy` may change (to `TEAM_INVALID`), as shmem4py's
//! objects do. A team made by a split is an entry leaked for the life of the process: its
//! `shmem-core` team sits behind a mutex, which each collective holds while it runs (with the
//! GIL released); destroying the team drops it (collectively) and leaves the entry marked
//! destroyed, so no handle ever points at freed memory.

use crate::ctx::{self, CtxEntry, PyCtx};
use crate::rma::without_gil;
use crate::state::{self, ShmemError, world};
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use shmem_core::{Team, TeamConfig};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A team: its `shmem-core` team (taken out when destroyed), its members as world PEs, and the
/// shareable contexts made from it (destroyed with it).
pub(crate) struct TeamEntry {
    team: Mutex<Option<Team<'static>>>,
    /// The world PE of each member, in team order (increasing).
    pes: Box<[usize]>,
    /// This PE's number in the team.
    my_pe: usize,
    num_contexts: i64,
    ctxs: Mutex<Vec<&'static CtxEntry>>,
    destroyed: AtomicBool,
}

// SAFETY: `Team` is !Send/!Sync because its collectives must be called in the same order on
// every member, one at a time; here every use of it holds the entry's mutex (so one thread at a
// time), and the order of collectives across PEs is the program's contract, as for the World.
// The other fields are immutable, atomics, or behind mutexes.
unsafe impl Sync for TeamEntry {}
// SAFETY: as above.
unsafe impl Send for TeamEntry {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TeamEntry {
    fn new(team: Team<'static>, num_contexts: i64) -> &'static TeamEntry {
        let pes = (0..team.n_pes()).map(|i| team.world_pe(i)).collect();
        let my_pe = team.my_pe();
        Box::leak(Box::new(TeamEntry {
            team: Mutex::new(Some(team)),
            pes,
            my_pe,
            num_contexts,
            ctxs: Mutex::new(Vec::new()),
            destroyed: AtomicBool::new(false),
        }))
    }

    /// The number of members.
    #[inline]
    pub(crate) fn n_pes(&self) -> usize {
        self.pes.len()
    }

    /// This PE's number in the team.
    #[inline]
    pub(crate) fn my_pe(&self) -> usize {
        self.my_pe
    }

    /// The team number of world PE `pe`, if it is a member.
    fn index_of(&self, pe: usize) -> Option<usize> {
        self.pes.binary_search(&pe).ok()
    }

    /// Runs `f` on the team with the GIL released, holding the team's mutex;
    /// `ShmemError` when the team was destroyed meanwhile.
    pub(crate) fn run<T, R>(
        &'static self,
        py: Python<'_>,
        op: &str,
        value: T,
        f: impl FnOnce(&Team<'static>, T) -> R,
    ) -> PyResult<R> {
        let out = without_gil(py, (self, value, f), |(e, value, f)| {
            let g = lock(&e.team);
            g.as_ref().map(|t| f(t, value))
        });
        out.ok_or_else(|| team_destroyed(op))
    }
}

static WORLD_TEAM: OnceLock<&'static TeamEntry> = OnceLock::new();
static SHARED_TEAM: OnceLock<&'static TeamEntry> = OnceLock::new();

/// Makes `TEAM_WORLD`'s and `TEAM_SHARED`'s entries, from `init` on every PE: across nodes
/// making the node's team takes a collective step, which must not wait for a first use that
/// only some PEs make.
pub(crate) fn at_init(w: &'static shmem_core::World) {
    WORLD_TEAM.get_or_init(|| TeamEntry::new(w.team_world(), 0));
    SHARED_TEAM.get_or_init(|| TeamEntry::new(w.team_shared(), 0));
}

/// What a `Team` object stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum TeamRef {
    Invalid,
    World,
    Shared,
    Made(&'static TeamEntry),
}

impl PartialEq for TeamEntry {
    fn eq(&self, other: &Self) -> bool {
        ptr::eq(self, other)
    }
}
impl Eq for TeamEntry {}
impl std::fmt::Debug for TeamEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TeamEntry({:p})", self)
    }
}

fn sentinel(n: usize) -> *mut TeamEntry {
    ptr::without_provenance_mut(n)
}

impl TeamRef {
    fn handle(self) -> *mut TeamEntry {
        match self {
            TeamRef::Invalid => ptr::null_mut(),
            TeamRef::World => sentinel(1),
            TeamRef::Shared => sentinel(2),
            TeamRef::Made(e) => ptr::from_ref(e).cast_mut(),
        }
    }

    fn of(h: *mut TeamEntry) -> TeamRef {
        if h.is_null() {
            TeamRef::Invalid
        } else if h == sentinel(1) {
            TeamRef::World
        } else if h == sentinel(2) {
            TeamRef::Shared
        } else {
            // SAFETY: a handle other than the sentinels is a `TeamEntry` leaked by
            // `TeamEntry::new` (never freed).
            TeamRef::Made(unsafe { &*h })
        }
    }

    /// The live entry, or `ShmemError` (the runtime is down, the team is invalid or destroyed).
    pub(crate) fn entry(self, op: &str) -> PyResult<&'static TeamEntry> {
        let w = world(op)?;
        let e = match self {
            TeamRef::Invalid => {
                return Err(ShmemError::new_err(format!(
                    "{op}: the team is TEAM_INVALID"
                )));
            }
            TeamRef::World => *WORLD_TEAM.get_or_init(|| TeamEntry::new(w.team_world(), 0)),
            // Made by `at_init` (collectively across nodes); here only after a finalize.
            TeamRef::Shared => *SHARED_TEAM.get_or_init(|| TeamEntry::new(w.team_shared(), 0)),
            TeamRef::Made(e) => e,
        };
        if e.destroyed.load(Ordering::Acquire) {
            return Err(team_destroyed(op));
        }
        Ok(e)
    }

    /// The world PEs a context made on this team numbers PEs by (`None`: the world's own).
    pub(crate) fn context_pes(self, op: &str) -> PyResult<Option<Box<[usize]>>> {
        match self {
            TeamRef::World => {
                world(op)?;
                Ok(None)
            }
            t => Ok(Some(t.entry(op)?.pes.clone())),
        }
    }

    /// Records a context made from this team (a shareable one is destroyed with the team).
    pub(crate) fn adopt(self, c: &'static CtxEntry) {
        if let TeamRef::Made(e) = self {
            let mut v = lock(&e.ctxs);
            v.retain(|c| !c.destroyed.load(Ordering::Acquire));
            v.push(c);
        }
    }
}

#[cold]
fn team_destroyed(op: &str) -> PyErr {
    ShmemError::new_err(format!("{op}: the team was destroyed"))
}

/// The team `obj` names (a `Team`, else `TypeError`).
pub(crate) fn team_ref(op: &str, obj: &Bound<'_, PyAny>) -> PyResult<TeamRef> {
    match obj.cast::<PyTeam>() {
        Ok(t) => Ok(t.get().which()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{op}: team must be a Team or None, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// The live team of a collective's `team` argument (`None`: the world team).
pub(crate) fn team_arg(op: &str, team: Option<&Bound<'_, PyAny>>) -> PyResult<&'static TeamEntry> {
    match team {
        None => TeamRef::World.entry(op),
        Some(t) => team_ref(op, t)?.entry(op),
    }
}

/// A team of PEs (`shmem.Team`): `TEAM_WORLD`, `TEAM_SHARED`, `TEAM_INVALID`, or one made by
/// `split_strided`. ``Team()`` is `TEAM_INVALID`; ``Team(team)`` names the same team as
/// ``team``. Destroying it (``destroy``, or the end of a ``with`` block) turns the object into
/// `TEAM_INVALID`.
#[pyclass(module = "shmem_rs.shmem", name = "Team", frozen, subclass)]
pub(crate) struct PyTeam {
    handle: AtomicPtr<TeamEntry>,
    /// `TEAM_WORLD`, `TEAM_SHARED` and `TEAM_INVALID` themselves: `destroy` leaves them alone.
    fixed: bool,
}

impl PyTeam {
    pub(crate) fn of(t: TeamRef) -> PyTeam {
        PyTeam {
            handle: AtomicPtr::new(t.handle()),
            fixed: false,
        }
    }
    /// One of the module's constants.
    pub(crate) fn constant(t: TeamRef) -> PyTeam {
        PyTeam {
            handle: AtomicPtr::new(t.handle()),
            fixed: true,
        }
    }
    #[inline]
    pub(crate) fn which(&self) -> TeamRef {
        TeamRef::of(self.handle.load(Ordering::Acquire))
    }
}

/// `len(range(start, stop, step))`.
fn range_len(op: &str, start: i64, stop: i64, step: i64) -> PyResult<i64> {
    let (lo, hi, step) = match step {
        0 => {
            return Err(PyValueError::new_err(format!(
                "{op}: the stride must not be zero"
            )));
        }
        s if s > 0 => (start as i128, stop as i128, s as i128),
        s => (stop as i128, start as i128, -(s as i128)),
    };
    Ok(if hi > lo {
        ((hi - lo + step - 1) / step) as i64
    } else {
        0
    })
}

/// The `num_contexts` of shmem4py's `config` mapping and keyword arguments.
fn num_contexts(
    op: &str,
    config: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<i64> {
    let mut n = 0i64;
    let mut take = |key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>| -> PyResult<()> {
        let name: String = key.extract()?;
        if name.to_lowercase() != "num_contexts" {
            return Err(PyAttributeError::new_err(format!(
                "{op}: unknown team configuration parameter {name:?} (known: num_contexts)"
            )));
        }
        n = value.extract::<i64>()?;
        if n < 0 {
            return Err(PyValueError::new_err(format!(
                "{op}: num_contexts {n} is negative"
            )));
        }
        Ok(())
    };
    if let Some(c) = config {
        let items = c.call_method0("items")?;
        for kv in items.try_iter()? {
            let kv = kv?;
            take(&kv.get_item(0)?, &kv.get_item(1)?)?;
        }
    }
    if let Some(k) = kwargs {
        for (key, value) in k.iter() {
            take(&key, &value)?;
        }
    }
    Ok(n)
}

#[pymethods]
impl PyTeam {
    /// `Team()` and `Team(None)` are `TEAM_INVALID`; `Team(team)` is the same team as `team`.
    #[new]
    #[pyo3(signature = (team = None))]
    fn new(team: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match team {
            None => Ok(PyTeam::of(TeamRef::Invalid)),
            Some(t) => match t.cast::<PyTeam>() {
                Ok(t) => Ok(PyTeam::of(t.get().which())),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "Team: expected a Team or None, got {}",
                    t.get_type().name()?
                ))),
            },
        }
    }

    /// Destroy the team (collective over its members) and the shareable contexts made from it;
    /// the object becomes `TEAM_INVALID`. `TEAM_WORLD`, `TEAM_SHARED` and `TEAM_INVALID`
    /// themselves are left alone.
    fn destroy(&self, py: Python<'_>) -> PyResult<()> {
        if self.fixed {
            return Ok(());
        }
        let old = TeamRef::of(self.handle.swap(ptr::null_mut(), Ordering::AcqRel));
        let TeamRef::Made(e) = old else {
            return Ok(());
        };
        if e.destroyed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let ctxs = std::mem::take(&mut *lock(&e.ctxs));
        for c in ctxs {
            if c.options & ctx::CTX_PRIVATE == 0 {
                c.destroy(py);
            }
        }
        // Dropping the team is collective over it (it syncs before its block is reused).
        without_gil(py, e, |e| drop(lock(&e.team).take()));
        Ok(())
    }

    /// Return a new team of this team's PEs ``start, start + stride, ...`` (``size`` of them;
    /// default: as many as fit). Collective over this team. ``config`` (a mapping) and keyword
    /// arguments set the new team's configuration: ``num_contexts``. PEs outside the new team
    /// get `TEAM_INVALID`, as do all when ``size`` is 0. `RuntimeError` when the PEs fall
    /// outside this team or no team can be made.
    #[pyo3(signature = (start = 0, stride = 1, size = None, config = None, **kwargs))]
    fn split_strided(
        &self,
        py: Python<'_>,
        start: i64,
        stride: i64,
        size: Option<i64>,
        config: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTeam> {
        const OP: &str = "Team.split_strided";
        let parent = self.which().entry(OP)?;
        let size = match size {
            Some(s) => s,
            None => range_len(OP, start, parent.n_pes() as i64, stride)?,
        };
        let nc = if config.is_some() || kwargs.is_some() {
            num_contexts(OP, config, kwargs)?
        } else {
            0
        };
        // One PE needs no stride (C programs pass 0).
        let stride = if size == 1 && stride <= 0 { 1 } else { stride };
        let (Ok(ustart), Ok(ustride), Ok(usize_)) = (
            usize::try_from(start),
            usize::try_from(stride),
            usize::try_from(size),
        ) else {
            return Err(ShmemError::new_err(format!(
                "{OP}: start {start}, stride {stride} and size {size} must not be negative"
            )));
        };
        let cfg = TeamConfig {
            num_contexts: nc as usize,
        };
        let made = parent.run(py, OP, (), |t, ()| {
            t.split_strided(ustart, ustride, usize_, cfg)
        })?;
        match made {
            Ok(Some(t)) => Ok(PyTeam::of(TeamRef::Made(TeamEntry::new(t, nc)))),
            Ok(None) => Ok(PyTeam::of(TeamRef::Invalid)),
            Err(e) => Err(ShmemError::new_err(format!("{OP}: {e}"))),
        }
    }

    /// Return the team's configuration: ``{'num_contexts': n}``.
    fn get_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let n = match self.which() {
            TeamRef::Made(e) => e.num_contexts,
            _ => 0,
        };
        let d = PyDict::new(py);
        d.set_item("num_contexts", n)?;
        Ok(d)
    }

    /// Return this PE's number in the team. `RuntimeError` for `TEAM_INVALID`.
    fn my_pe(&self) -> PyResult<usize> {
        Ok(self.which().entry("Team.my_pe")?.my_pe())
    }

    /// Return the number of PEs in the team. `RuntimeError` for `TEAM_INVALID`.
    fn n_pes(&self) -> PyResult<usize> {
        Ok(self.which().entry("Team.n_pes")?.n_pes())
    }

    /// Return the number in ``team`` (default: the world team) of this team's PE ``pe``
    /// (default: this PE). `RuntimeError` when that PE is not a member of ``team``, or ``pe``
    /// is not a PE of this team.
    #[pyo3(signature = (pe = None, team = None))]
    fn translate_pe(&self, pe: Option<i64>, team: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
        const OP: &str = "Team.translate_pe";
        let src = self.which().entry(OP)?;
        let dest = team_arg(OP, team)?;
        let pe = pe.unwrap_or(src.my_pe() as i64);
        let p = usize::try_from(pe)
            .ok()
            .filter(|&p| p < src.n_pes())
            .ok_or_else(|| {
                ShmemError::new_err(format!(
                    "{OP}: PE {pe} is not a PE of the team (0..{})",
                    src.n_pes()
                ))
            })?;
        dest.index_of(src.pes[p]).ok_or_else(|| {
            ShmemError::new_err(format!(
                "{OP}: team PE {pe} (world PE {}) is not a member of the destination team",
                src.pes[p]
            ))
        })
    }

    /// Return a new communication context whose PE numbers are this team's, made with
    /// ``options`` (a bitwise OR of `CTX` members, or 0).
    #[pyo3(signature = (options = 0))]
    fn create_ctx(&self, py: Python<'_>, options: i64) -> PyResult<PyCtx> {
        const OP: &str = "Team.create_ctx";
        let t = self.which();
        t.entry(OP)?;
        ctx::new_entry(py, OP, options, t)
    }

    /// Wait until every member of the team has arrived (no completion of puts; the GIL is
    /// released).
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        const OP: &str = "Team.sync";
        self.which().entry(OP)?.run(py, OP, (), |t, ()| t.sync())
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        match other.cast::<PyTeam>() {
            Ok(o) => bool_obj(py, self.which() == o.get().which()),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __ne__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        match other.cast::<PyTeam>() {
            Ok(o) => bool_obj(py, self.which() != o.get().which()),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __bool__(&self) -> bool {
        self.which() != TeamRef::Invalid
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.destroy(py)
    }

    fn __repr__(&self) -> String {
        match self.which() {
            TeamRef::Invalid => "Team(TEAM_INVALID)".into(),
            TeamRef::World => "Team(TEAM_WORLD)".into(),
            TeamRef::Shared => "Team(TEAM_SHARED)".into(),
            TeamRef::Made(e) => {
                let d = if e.destroyed.load(Ordering::Acquire) {
                    ", destroyed"
                } else {
                    ""
                };
                format!("Team(world PEs {:?}{d})", &e.pes[..])
            }
        }
    }
}

/// `True` or `False` as a Python object.
pub(crate) fn bool_obj(py: Python<'_>, b: bool) -> Py<PyAny> {
    pyo3::types::PyBool::new(py, b)
        .to_owned()
        .into_any()
        .unbind()
}

/// `shmem.sync(team=None)`: waits until every member of ``team`` (default: every PE) arrives.
#[pyfunction]
#[pyo3(signature = (team = None))]
pub(crate) fn sync(py: Python<'_>, team: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match team {
        None => state::sync_all(py),
        Some(_) => team_arg("sync", team)?.run(py, "sync", (), |t, ()| t.sync()),
    }
}
