//! Point-to-point synchronization and signals: shmem4py's `wait_until` and `test` with their
//! `_all`, `_any`, `_some` and `_vector` forms, `signal_fetch`, `signal_wait_until`,
//! `put_signal` and `put_signal_nbi`.
//!
//! The variables are symmetric arrays of 16-, 32- or 64-bit integers (OpenSHMEM's point-to-point
//! types); a signal is a symmetric uint64. A wait tests once with the GIL held and, when it must
//! wait, releases the GIL (the runtime's waits back off, so an oversubscribed node is not spun
//! flat out).

use crate::amo::Num;
use crate::buf::{Buf, buf, same_kind};
use crate::ctx;
use crate::rma::{DETACH_BYTES, gather, sym_at, without_gil};
use crate::state::{self, world};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use shmem_core::prelude::*;
use shmem_core::{WaitWord, raw};

/// The comparison `c`: a `CMP` value (0 to 5, as `SHMEM_CMP_*`), or a string: `"eq"`, `"ne"`,
/// `"gt"`, `"le"`, `"lt"`, `"ge"` (any case) or `"=="`, `"!="`, `">"`, `"<="`, `"<"`, `">="`.
pub(crate) fn parse_cmp(op: &str, c: &Bound<'_, PyAny>) -> PyResult<Cmp> {
    if let Ok(s) = c.cast::<PyString>() {
        let s = s.to_cow()?.to_ascii_lowercase();
        return Ok(match s.as_str() {
            "eq" | "==" => Cmp::Eq,
            "ne" | "!=" => Cmp::Ne,
            "gt" | ">" => Cmp::Gt,
            "le" | "<=" => Cmp::Le,
            "lt" | "<" => Cmp::Lt,
            "ge" | ">=" => Cmp::Ge,
            _ => return Err(bad_cmp(op, &format!("{s:?}"))),
        });
    }
    match c.extract::<i64>() {
        Ok(0) => Ok(Cmp::Eq),
        Ok(1) => Ok(Cmp::Ne),
        Ok(2) => Ok(Cmp::Gt),
        Ok(3) => Ok(Cmp::Le),
        Ok(4) => Ok(Cmp::Lt),
        Ok(5) => Ok(Cmp::Ge),
        Ok(n) => Err(bad_cmp(op, &n.to_string())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{op}: cmp must be a CMP value or a string, not {}",
            c.get_type().name()?
        ))),
    }
}

#[cold]
fn bad_cmp(op: &str, c: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{op}: {c} is not a comparison (CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE, or \
         '==', '!=', '>', '<=', '<', '>=')"
    ))
}

/// The symmetric array of `n` wait variables at `b`, checked for alignment.
fn words<E: WaitWord>(op: &str, what: &str, b: Buf) -> PyResult<SymSlice<'static, E>> {
    let s = sym_at::<E>(op, what, b.ptr, b.len)?;
    if !(b.ptr as usize).is_multiple_of(size_of::<E>()) {
        return Err(PyValueError::new_err(format!(
            "{op}: the {what} at {:p} is not aligned for its {}-byte elements",
            b.ptr,
            size_of::<E>()
        )));
    }
    Ok(s)
}

/// `status` (a sequence of ints, nonzero excluding the element) as the mask of excluded
/// elements of `n` variables.
fn mask(op: &str, status: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Option<Vec<bool>>> {
    let Some(status) = status else {
        return Ok(None);
    };
    if status.is_none() {
        return Ok(None);
    }
    let mut m = Vec::with_capacity(n);
    for x in status.try_iter()? {
        if m.len() == n {
            break;
        }
        m.push(x?.is_truthy()?);
    }
    if m.len() < n {
        return Err(PyValueError::new_err(format!(
            "{op}: status has {} elements, fewer than the {n} variables",
            m.len()
        )));
    }
    Ok(Some(m))
}

/// The first `n` of `values` (a sequence of numbers) as `E`s.
fn vector<E: Num>(op: &str, values: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<E>> {
    let mut v = Vec::with_capacity(n);
    for x in values.try_iter()? {
        if v.len() == n {
            break;
        }
        v.push(E::from_py(op, "values", &x?)?);
    }
    if v.len() < n {
        return Err(PyValueError::new_err(format!(
            "{op}: values has {} elements, fewer than the {n} variables",
            v.len()
        )));
    }
    Ok(v)
}

/// Which call of the wait sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Set {
    All,
    Any,
    Some,
}

/// The comparison value(s): one for all, or one per variable.
enum Values<E> {
    One(E),
    Each(Vec<E>),
}

/// The result of a set call as shmem4py has it: `All`: `None` for a wait, a bool for a test;
/// `Any`: an index or `None`; `Some`: a list of indices.
enum Found {
    All(bool),
    Any(Option<usize>),
    Some(Vec<usize>),
}

fn test_set<E: WaitWord>(
    s: &SymSlice<'static, E>,
    set: Set,
    m: Option<&[bool]>,
    c: Cmp,
    v: &Values<E>,
) -> Found {
    match (set, v) {
        (Set::All, Values::One(x)) => Found::All(s.test_all(m, c, *x)),
        (Set::All, Values::Each(x)) => Found::All(s.test_all_vector(m, c, x)),
        (Set::Any, Values::One(x)) => Found::Any(s.test_any(m, c, *x)),
        (Set::Any, Values::Each(x)) => Found::Any(s.test_any_vector(m, c, x)),
        (Set::Some, Values::One(x)) => Found::Some(s.test_some(m, c, *x)),
        (Set::Some, Values::Each(x)) => Found::Some(s.test_some_vector(m, c, x)),
    }
}

fn wait_set<E: WaitWord>(
    s: &SymSlice<'static, E>,
    set: Set,
    m: Option<&[bool]>,
    c: Cmp,
    v: &Values<E>,
) -> Found {
    match (set, v) {
        (Set::All, Values::One(x)) => {
            s.wait_until_all(m, c, *x);
            Found::All(true)
        }
        (Set::All, Values::Each(x)) => {
            s.wait_until_all_vector(m, c, x);
            Found::All(true)
        }
        (Set::Any, Values::One(x)) => Found::Any(s.wait_until_any(m, c, *x)),
        (Set::Any, Values::Each(x)) => Found::Any(s.wait_until_any_vector(m, c, x)),
        (Set::Some, Values::One(x)) => Found::Some(s.wait_until_some(m, c, *x)),
        (Set::Some, Values::Each(x)) => Found::Some(s.wait_until_some_vector(m, c, x)),
    }
}

/// Whether a test's result means the wait is over.
fn satisfied(f: &Found) -> bool {
    match f {
        Found::All(b) => *b,
        Found::Any(i) => i.is_some(),
        Found::Some(v) => !v.is_empty(),
    }
}

/// One call of the sets, typed.
#[allow(clippy::too_many_arguments)]
fn set_typed<E: WaitWord + Num>(
    py: Python<'_>,
    op: &str,
    b: Buf,
    set: Set,
    wait: bool,
    c: Cmp,
    value: Option<&Bound<'_, PyAny>>,
    values: Option<&Bound<'_, PyAny>>,
    status: Option<&Bound<'_, PyAny>>,
) -> PyResult<Found> {
    let n = b.len;
    let v = match (value, values) {
        (Some(x), _) => Values::One(E::from_py(op, "value", x)?),
        (None, Some(xs)) => Values::Each(vector::<E>(op, xs, n)?),
        (None, None) => return Err(PyTypeError::new_err(format!("{op}: no value given"))),
    };
    let m = mask(op, status, n)?;
    if n == 0 {
        return Ok(match set {
            Set::All => Found::All(true),
            Set::Any => Found::Any(None),
            Set::Some => Found::Some(Vec::new()),
        });
    }
    world(op)?;
    let s = words::<E>(op, "ivars", b)?;
    // Excluding every element: nothing to wait for.
    if m.as_ref().is_some_and(|m| m.iter().all(|&x| x)) {
        return Ok(match set {
            Set::All => Found::All(true),
            Set::Any => Found::Any(None),
            Set::Some => Found::Some(Vec::new()),
        });
    }
    let found = test_set(&s, set, m.as_deref(), c, &v);
    if !wait || satisfied(&found) {
        return Ok(found);
    }
    Ok(without_gil(py, (s, m, v), |(s, m, v)| {
        wait_set(&s, set, m.as_deref(), c, &v)
    }))
}

/// Runs `$body` with `$E` the point-to-point type of the array's dtype, or raises `TypeError`.
macro_rules! by_wait_type {
    ($op:expr, $what:expr, $k:expr, $E:ident => $body:expr) => {
        match ($k.kind, $k.size) {
            (b'i', 2) => {
                type $E = i16;
                $body
            }
            (b'u', 2) => {
                type $E = u16;
                $body
            }
            (b'i', 4) => {
                type $E = i32;
                $body
            }
            (b'u', 4) => {
                type $E = u32;
                $body
            }
            (b'i', 8) => {
                type $E = i64;
                $body
            }
            (b'u', 8) => {
                type $E = u64;
                $body
            }
            _ => Err(PyTypeError::new_err(format!(
                "{}: the {} has dtype {}, which point-to-point synchronization does not support \
                 (it takes int16, int32, int64, uint16, uint32 or uint64)",
                $op, $what, $k
            ))),
        }
    };
}

#[allow(clippy::too_many_arguments)]
fn set_call(
    py: Python<'_>,
    op: &str,
    ivars: &Bound<'_, PyAny>,
    set: Set,
    wait: bool,
    cmp: &Bound<'_, PyAny>,
    value: Option<&Bound<'_, PyAny>>,
    values: Option<&Bound<'_, PyAny>>,
    status: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let c = parse_cmp(op, cmp)?;
    let b = buf(op, "ivars", ivars, true)?;
    let found = by_wait_type!(op, "ivars", b.kind, E =>
        set_typed::<E>(py, op, b, set, wait, c, value, values, status))?;
    Ok(match found {
        Found::All(true) if wait => py.None(),
        Found::All(f) => f.into_pyobject(py)?.to_owned().into_any().unbind(),
        Found::Any(Some(i)) => i.into_pyobject(py)?.into_any().unbind(),
        Found::Any(None) => py.None(),
        Found::Some(v) => PyList::new(py, v)?.into_any().unbind(),
    })
}

/// The one variable of `wait_until` and `test`.
fn one_var(op: &str, ivar: &Bound<'_, PyAny>) -> PyResult<Buf> {
    let b = buf(op, "ivar", ivar, true)?;
    if b.len != 1 {
        return Err(PyValueError::new_err(format!(
            "{op}: ivar has {} elements; it must be a symmetric array of exactly one element",
            b.len
        )));
    }
    Ok(b)
}

/// Waits until ``ivar`` (a symmetric array of one integer) satisfies ``ivar cmp value``; the
/// GIL is released while it waits.
#[pyfunction]
pub(crate) fn wait_until(
    py: Python<'_>,
    ivar: &Bound<'_, PyAny>,
    cmp: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let op = "wait_until";
    let c = parse_cmp(op, cmp)?;
    let b = one_var(op, ivar)?;
    by_wait_type!(op, "ivar", b.kind, E => {
        let v = E::from_py(op, "value", value)?;
        world(op)?;
        let s = words::<E>(op, "ivar", b)?;
        if !s.test(0, c, v) {
            without_gil(py, s, |s| s.wait_until(0, c, v));
        }
        Ok(())
    })
}

/// Whether ``ivar`` (a symmetric array of one integer) satisfies ``ivar cmp value`` now.
#[pyfunction]
pub(crate) fn test(
    ivar: &Bound<'_, PyAny>,
    cmp: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let op = "test";
    let c = parse_cmp(op, cmp)?;
    let b = one_var(op, ivar)?;
    by_wait_type!(op, "ivar", b.kind, E => {
        let v = E::from_py(op, "value", value)?;
        world(op)?;
        Ok(words::<E>(op, "ivar", b)?.test(0, c, v))
    })
}

/// Generates the set calls with one comparison value.
macro_rules! set_fns {
    ($($name:ident => $set:ident, $wait:expr, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (ivars, cmp, value, status = None))]
        pub(crate) fn $name(
            py: Python<'_>,
            ivars: &Bound<'_, PyAny>,
            cmp: &Bound<'_, PyAny>,
            value: &Bound<'_, PyAny>,
            status: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            set_call(py, stringify!($name), ivars, Set::$set, $wait, cmp, Some(value), None, status)
        }
    )*};
}

/// Generates the set calls with one comparison value per variable.
macro_rules! set_vector_fns {
    ($($name:ident => $set:ident, $wait:expr, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (ivars, cmp, values, status = None))]
        pub(crate) fn $name(
            py: Python<'_>,
            ivars: &Bound<'_, PyAny>,
            cmp: &Bound<'_, PyAny>,
            values: &Bound<'_, PyAny>,
            status: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Py<PyAny>> {
            set_call(py, stringify!($name), ivars, Set::$set, $wait, cmp, None, Some(values), status)
        }
    )*};
}

set_fns! {
    wait_until_all => All, true,
        "Waits until every variable of ``ivars`` not excluded by ``status`` satisfies ``cmp value``; returns None.";
    wait_until_any => Any, true,
        "Waits until some variable of ``ivars`` not excluded by ``status`` satisfies ``cmp value``; returns its index (None when every one is excluded).";
    wait_until_some => Some, true,
        "Waits until at least one variable satisfies ``cmp value``; returns the list of indices of those that do.";
    test_all => All, false,
        "Whether every variable of ``ivars`` not excluded by ``status`` satisfies ``cmp value``.";
    test_any => Any, false,
        "The index of a variable of ``ivars`` that satisfies ``cmp value``, or None.";
    test_some => Some, false,
        "The list of indices of the variables of ``ivars`` that satisfy ``cmp value``.";
}

set_vector_fns! {
    wait_until_all_vector => All, true,
        "`wait_until_all` with one comparison value per variable (``values[i]``).";
    wait_until_any_vector => Any, true,
        "`wait_until_any` with one comparison value per variable (``values[i]``).";
    wait_until_some_vector => Some, true,
        "`wait_until_some` with one comparison value per variable (``values[i]``).";
    test_all_vector => All, false,
        "`test_all` with one comparison value per variable (``values[i]``).";
    test_any_vector => Any, false,
        "`test_any` with one comparison value per variable (``values[i]``).";
    test_some_vector => Some, false,
        "`test_some` with one comparison value per variable (``values[i]``).";
}

// --- signals

/// The signal word of `signal` (a symmetric uint64 array; its first element).
fn signal_word(op: &str, signal: &Bound<'_, PyAny>) -> PyResult<SymSlice<'static, u64>> {
    let b = buf(op, "signal", signal, true)?;
    if b.kind.size != 8 || !matches!(b.kind.kind, b'u' | b'i') || b.len == 0 {
        return Err(PyTypeError::new_err(format!(
            "{op}: signal must be a signal of new_signal (a symmetric uint64 array), not an \
             array of {} {}",
            b.len, b.kind
        )));
    }
    world(op)?;
    words::<u64>(op, "signal", Buf { len: 1, ..b })
}

/// This PE's value of the signal ``signal``.
#[pyfunction]
pub(crate) fn signal_fetch(signal: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(signal_word("signal_fetch", signal)?.signal(0).fetch())
}

/// Waits until this PE's signal satisfies ``signal cmp value`` and returns its value; the GIL
/// is released while it waits.
#[pyfunction]
pub(crate) fn signal_wait_until(
    py: Python<'_>,
    signal: &Bound<'_, PyAny>,
    cmp: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    let op = "signal_wait_until";
    let c = parse_cmp(op, cmp)?;
    let s = signal_word(op, signal)?;
    let v = u64::from_py(op, "value", value)?;
    let now = s.signal(0).fetch();
    if c.holds(now, v) {
        return Ok(now);
    }
    Ok(without_gil(py, s, |s| s.signal(0).wait_until(c, v)))
}

/// `put_signal` and `put_signal_nbi` (which completes before it returns, as OpenSHMEM allows).
#[allow(clippy::too_many_arguments)]
fn put_signal_impl(
    py: Python<'_>,
    op: &str,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    signal: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    sigop: &Bound<'_, PyAny>,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let t = buf(op, "target", target, false)?;
    let s = buf(op, "source", source, true)?;
    same_kind(op, t.kind, s.kind)?;
    let n = match size {
        None => t.len.min(s.len),
        Some(k) if k <= t.len && k <= s.len => k,
        Some(k) => {
            return Err(PyValueError::new_err(format!(
                "{op}: size {k} is more than the target ({} elements) or the source ({} \
                 elements) holds",
                t.len, s.len
            )));
        }
    };
    let v = u64::from_py(op, "value", value)?;
    let sop = match sigop.extract::<i64>() {
        Ok(0) => SignalOp::Set(v),
        Ok(1) => SignalOp::Add(v),
        _ => {
            return Err(PyValueError::new_err(format!(
                "{op}: sigop {} is neither SIGNAL_SET (0) nor SIGNAL_ADD (1)",
                sigop.repr()?
            )));
        }
    };
    let sig = signal_word(op, signal)?;
    let w = world(op)?;
    let c = ctx::resolve(op, ctx)?;
    let wpe = match c {
        None => state::check_pe(op, pe, w.n_pes())?,
        Some(c) => c.pe(op, pe, w.n_pes())?,
    };
    let bytes = n * t.kind.size;
    if bytes == 0 {
        match sop {
            SignalOp::Set(v) => sig.signal(0).set(wpe, v),
            SignalOp::Add(v) => sig.signal(0).add(wpe, v),
        }
        return Ok(());
    }
    let d = sym_at::<u8>(op, "target", t.ptr, bytes)?;
    // The source is copied (it may be written by another thread meanwhile).
    let data = gather::<u8>(s.ptr, 1, bytes);
    // SAFETY: checked above (symmetric; `wpe` is a PE of the job).
    let plain = unsafe { raw::locate::<u8>(t.ptr, 1, wpe) }.is_some_and(|l| l.is_plain());
    let run =
        move |(d, sig, data): (SymSlice<'static, u8>, SymSlice<'static, u64>, Vec<u8>)| match c {
            None => d.put_signal(wpe, .., &data, sig.signal(0), sop),
            Some(c) => c.ctx.put_signal(&d, wpe, .., &data, sig.signal(0), sop),
        };
    if plain && c.is_none() && bytes < DETACH_BYTES {
        run((d, sig, data));
    } else {
        without_gil(py, (d, sig, data), run);
    }
    Ok(())
}

/// Copies ``source`` to ``target`` on PE ``pe``, then updates ``signal`` there with ``value``
/// (``sigop``: SIGNAL_SET or SIGNAL_ADD); the signal is updated after the data is delivered.
#[pyfunction]
#[pyo3(signature = (target, source, pe, signal, value, sigop, size = None, ctx = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    signal: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    sigop: &Bound<'_, PyAny>,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let op = "put_signal";
    put_signal_impl(py, op, target, source, pe, signal, value, sigop, size, ctx)
}

/// `put_signal`, non-blocking: complete at the next `quiet` (here already on return).
#[pyfunction]
#[pyo3(signature = (target, source, pe, signal, value, sigop, size = None, ctx = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal_nbi(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    pe: i64,
    signal: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    sigop: &Bound<'_, PyAny>,
    size: Option<usize>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let op = "put_signal_nbi";
    put_signal_impl(py, op, target, source, pe, signal, value, sigop, size, ctx)
}
